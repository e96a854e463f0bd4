// The quantization family: QUANTIZE (float32 -> int8/uint8/int16) and DEQUANTIZE (int8/uint8/
// int16 -> float32), with TFLite's reference arithmetic: q = clamp(round(x / scale) +
// zero_point) with the division in float32 and round half away from zero; x = scale * (q -
// zero_point). QUANTIZE between integer types is TFLite's requantize (kernel core, or a host
// loop for an int32 output).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/quantize.h"
#include "op_kernel.h"

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

template <template <typename> class K>
absl::StatusOr<KernelPtr> Make(const LowerContext& ctx, DType int_type, const Tensor& q) {
  MICA_ASSIGN_OR_RETURN(AffineParams p, MakeParams(ctx, q));
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

// TFLite's reference MultiplyByQuantizedMultiplier (double rounding), for the host-only
// int32-output requantize below (the kernel core has no int32 output).
int32_t HostMbqm(int32_t x, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  int32_t high;
  if (a == multiplier && a == std::numeric_limits<int32_t>::min()) {
    high = std::numeric_limits<int32_t>::max();
  } else {
    const int64_t ab = static_cast<int64_t>(a) * multiplier;
    const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    high = static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
  }
  const int32_t mask = static_cast<int32_t>((int64_t{1} << right) - 1);
  const int32_t rem = high & mask;
  const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + (rem > threshold ? 1 : 0);
}

// QUANTIZE int8/int16 -> int32 (TFLite Micro's reference Requantize with an int32 output).
template <typename In>
class RequantizeToInt32Kernel : public OpKernel {
 public:
  kernels::RequantizeParams p;
  int64_t n = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const In* x = ctx.In<In>(in);
    int32_t* y = ctx.Out<int32_t>(out);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(HostMbqm(x[i] - p.input_zero_point,
                                                      p.output.multiplier, p.output.shift)) +
                        p.output_zero_point;
      y[i] = static_cast<int32_t>(std::min<int64_t>(
          std::max<int64_t>(v, std::numeric_limits<int32_t>::min()),
          std::numeric_limits<int32_t>::max()));
    }
    return absl::OkStatus();
  }
};

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
  auto is = [](const Tensor& t, DType d) { return t.dtype == d; };
  if (is(x, DType::kInt8) && is(y, DType::kInt8)) {
    return MakeUnary<int8_t, int8_t>(ctx, "Requantize", [p](int32_t n, const int8_t* i, int8_t* o) {
      return kernels::Requantize(p, n, i, o);
    });
  }
  if (is(x, DType::kInt8) && is(y, DType::kInt16)) {
    return MakeUnary<int8_t, int16_t>(ctx, "Requantize",
                                      [p](int32_t n, const int8_t* i, int16_t* o) {
                                        return kernels::Requantize(p, n, i, o);
                                      });
  }
  if (is(x, DType::kInt16) && is(y, DType::kInt8)) {
    return MakeUnary<int16_t, int8_t>(ctx, "Requantize",
                                      [p](int32_t n, const int16_t* i, int8_t* o) {
                                        return kernels::Requantize(p, n, i, o);
                                      });
  }
  if (is(x, DType::kInt16) && is(y, DType::kInt16)) {
    return MakeUnary<int16_t, int16_t>(ctx, "Requantize",
                                       [p](int32_t n, const int16_t* i, int16_t* o) {
                                         return kernels::Requantize(p, n, i, o);
                                       });
  }
  if ((is(x, DType::kInt8) || is(x, DType::kInt16)) && is(y, DType::kInt32)) {
    auto fill = [&](auto k) -> KernelPtr {
      k->p = p;
      k->n = x.num_elements();
      k->in = ctx.in_index(0);
      k->out = ctx.out_index(0);
      return KernelPtr(std::move(k));
    };
    if (is(x, DType::kInt8)) return fill(std::make_unique<RequantizeToInt32Kernel<int8_t>>());
    return fill(std::make_unique<RequantizeToInt32Kernel<int16_t>>());
  }
  return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
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
