// The quantization family: QUANTIZE (float32 -> int8/uint8/int16) and DEQUANTIZE (int8/uint8/
// int16 -> float32), with TFLite's reference arithmetic: q = clamp(round(x / scale) +
// zero_point) with the division in float32 and round half away from zero; x = scale * (q -
// zero_point). QUANTIZE between integer types is TFLite's requantize (kernel core).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/quantize.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

// Per-element parameters: channel c = (i / inner) % channels.
struct AffineParams {
  std::vector<float> scale;
  std::vector<int32_t> zero_point;
  int64_t inner = 1, channels = 1;
};

absl::StatusOr<AffineParams> MakeParams(const LowerContext& ctx, const Tensor& q) {
  if (q.quant.empty()) return ctx.Invalid("tensor '", q.name, "' has no quantization");
  AffineParams p;
  p.scale = q.quant.scale;
  for (int64_t z : q.quant.zero_point) p.zero_point.push_back(static_cast<int32_t>(z));
  if (p.zero_point.empty()) p.zero_point.push_back(0);
  if (q.quant.per_channel()) {
    const int rank = static_cast<int>(q.shape.size());
    const int axis = q.quant.axis;
    if (axis < 0 || axis >= rank || q.shape[axis] != static_cast<int32_t>(p.scale.size())) {
      return ctx.Invalid("per-channel quantization of '", q.name, "' does not match its shape");
    }
    p.channels = q.shape[axis];
    for (int d = axis + 1; d < rank; ++d) p.inner *= q.shape[d];
    if (p.zero_point.size() == 1) p.zero_point.assign(p.scale.size(), p.zero_point[0]);
  }
  for (float s : p.scale) {
    if (!(s > 0.f) || !std::isfinite(s)) return ctx.Invalid("scale of '", q.name, "' must be > 0");
  }
  return p;
}

template <typename T>
class QuantizeKernel : public OpKernel {
 public:
  AffineParams p;
  int64_t count = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    T* y = ctx.Out<T>(out);
    constexpr int32_t lo = std::numeric_limits<T>::min();
    constexpr int32_t hi = std::numeric_limits<T>::max();
    for (int64_t i = 0; i < count; ++i) {
      const int64_t c = p.channels > 1 ? (i / p.inner) % p.channels : 0;
      const float r = std::round(x[i] / p.scale[c]);
      // Out-of-range values saturate (the cast of a huge float is undefined otherwise).
      int64_t v = r >= 2147483647.f ? int64_t{2147483647}
                  : r <= -2147483648.f ? int64_t{-2147483648}
                  : std::isnan(r) ? 0 : static_cast<int64_t>(static_cast<int32_t>(r));
      v += p.zero_point[c];
      y[i] = static_cast<T>(std::min<int64_t>(std::max<int64_t>(v, lo), hi));
    }
    return absl::OkStatus();
  }
};

template <typename T>
class DequantizeKernel : public OpKernel {
 public:
  AffineParams p;
  int64_t count = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const T* x = ctx.In<T>(in);
    float* y = ctx.Out<float>(out);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t c = p.channels > 1 ? (i / p.inner) % p.channels : 0;
      y[i] = static_cast<float>(static_cast<double>(p.scale[c]) *
                                (static_cast<int32_t>(x[i]) - p.zero_point[c]));
    }
    return absl::OkStatus();
  }
};

// Per-tensor int8 / int16 conversions (every real model's): the kernel core's Quantize /
// Dequantize, which the device runtime calls too. Per-channel and uint8 stay on the loops above.
class AffineCoreKernel : public OpKernel {
 public:
  bool quantize = true, i16 = false;
  kernels::AffineQuant q;
  int32_t count = 0, in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    kernels::KernelStatus s;
    if (quantize) {
      s = i16 ? kernels::Quantize16(q, count, ctx.In<float>(in), ctx.Out<int16_t>(out))
              : kernels::Quantize(q, count, ctx.In<float>(in), ctx.Out<int8_t>(out));
    } else {
      s = i16 ? kernels::Dequantize16(q, count, ctx.In<int16_t>(in), ctx.Out<float>(out))
              : kernels::Dequantize(q, count, ctx.In<int8_t>(in), ctx.Out<float>(out));
    }
    return KernelError(s, quantize ? "Quantize" : "Dequantize");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = quantize ? device::PlanOp::kQuantize : device::PlanOp::kDequantize;
    w.SetParams(device::AffineOpParams{q, count});
    w.tensors = {in, out};
    return true;
  }
};

template <template <typename> class K>
absl::StatusOr<KernelPtr> Make(const LowerContext& ctx, DType int_type, const Tensor& q) {
  MICA_ASSIGN_OR_RETURN(AffineParams p, MakeParams(ctx, q));
  const int64_t count = ctx.input(0).num_elements();
  if (p.channels == 1 && (int_type == DType::kInt8 || int_type == DType::kInt16) &&
      p.zero_point[0] >= -65536 && p.zero_point[0] <= 65536 &&
      p.scale[0] < std::numeric_limits<float>::max() && count < (int64_t{1} << 31)) {
    auto k = std::make_unique<AffineCoreKernel>();
    k->quantize = std::is_same_v<K<int8_t>, QuantizeKernel<int8_t>>;
    k->i16 = int_type == DType::kInt16;
    k->q = {p.scale[0], p.zero_point[0]};
    k->count = static_cast<int32_t>(count);
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  auto fill = [&](auto k) -> KernelPtr {
    k->p = p;
    k->count = ctx.input(0).num_elements();
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  };
  switch (int_type) {
    case DType::kInt8: return fill(std::make_unique<K<int8_t>>());
    case DType::kUInt8: return fill(std::make_unique<K<uint8_t>>());
    case DType::kInt16: return fill(std::make_unique<K<int16_t>>());
    default:
      return ctx.Unimplemented("float32 <-> ", DT(int_type), " is not supported");
  }
}

absl::StatusOr<KernelPtr> LowerFloatConversion(const LowerContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  if (in.num_elements() != out.num_elements()) return ctx.Invalid("output size differs");
  if (in.dtype == DType::kFloat32 && out.dtype == DType::kFloat32) {
    return ctx.Unimplemented("float32 -> float32");
  }
  if (in.dtype == DType::kFloat32) return Make<QuantizeKernel>(ctx, out.dtype, out);
  if (out.dtype == DType::kFloat32) return Make<DequantizeKernel>(ctx, in.dtype, in);
  return ctx.Unimplemented("not a float conversion");
}

// ---- requantize -------------------------------------------------------------------------------

template <typename In, typename Out>
class RequantizeKernel : public OpKernel {
 public:
  kernels::RequantizeParams p;
  int32_t n = 0, in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(kernels::Requantize(p, n, ctx.In<In>(in), ctx.Out<Out>(out)),
                       "Requantize");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kRequantize;
    w.SetParams(device::RequantizeOpParams{p, n});
    w.tensors = {in, out};
    return true;
  }
};

template <typename In, typename Out>
KernelPtr MakeRequantize(const LowerContext& ctx, const kernels::RequantizeParams& p) {
  auto k = std::make_unique<RequantizeKernel<In, Out>>();
  k->p = p;
  k->n = static_cast<int32_t>(ctx.input(0).num_elements());
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

// The integer pairs TFLite Micro's QUANTIZE runs, with its multiplier rule:
// QuantizeMultiplier(double(s_in) / double(s_out)).
absl::StatusOr<KernelPtr> LowerRequantize(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  if (x.num_elements() != y.num_elements()) return ctx.Invalid("output size differs");
  kernels::RequantizeParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_zero_point = ZeroPoint(y);
  p.output = Multiplier(static_cast<double>(Scale(x)) / static_cast<double>(Scale(y)));
  using D = DType;
  const D from = x.dtype, to = y.dtype;
  if (from == D::kInt8 && to == D::kInt8) return MakeRequantize<int8_t, int8_t>(ctx, p);
  if (from == D::kInt8 && to == D::kUInt8) return MakeRequantize<int8_t, uint8_t>(ctx, p);
  if (from == D::kInt8 && to == D::kInt16) return MakeRequantize<int8_t, int16_t>(ctx, p);
  if (from == D::kInt8 && to == D::kInt32) return MakeRequantize<int8_t, int32_t>(ctx, p);
  if (from == D::kUInt8 && to == D::kInt8) return MakeRequantize<uint8_t, int8_t>(ctx, p);
  if (from == D::kInt16 && to == D::kInt8) return MakeRequantize<int16_t, int8_t>(ctx, p);
  if (from == D::kInt16 && to == D::kInt16) return MakeRequantize<int16_t, int16_t>(ctx, p);
  if (from == D::kInt16 && to == D::kInt32) return MakeRequantize<int16_t, int32_t>(ctx, p);
  if (from == D::kInt32 && to == D::kInt8) return MakeRequantize<int32_t, int8_t>(ctx, p);
  if (from == D::kInt32 && to == D::kInt16) return MakeRequantize<int32_t, int16_t>(ctx, p);
  return ctx.Unimplemented(DT(from), " -> ", DT(to),
                           " (TFLite Micro's QUANTIZE has no such integer pair either)");
}

}  // namespace

absl::StatusOr<KernelPtr> LowerQuantization(const LowerContext& ctx) {
  const bool float_side =
      ctx.input(0).dtype == DType::kFloat32 || ctx.output(0).dtype == DType::kFloat32;
  if (float_side) return LowerFloatConversion(ctx);
  // Integer to integer: QUANTIZE requantizes; DEQUANTIZE has no integer output.
  if (ctx.op.kind == OpKind::kQuantize) return LowerRequantize(ctx);
  return NoKernel(ctx, /*fp32=*/false);
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
