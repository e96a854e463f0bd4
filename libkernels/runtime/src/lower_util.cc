// Helpers shared by the lowering families (see lower_util.h).
#include "lower_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/padding.h"
#include "mica/quant/multiplier.h"

namespace mica {
namespace runtime {
namespace internal {

using kernels::ActivationRange;
using kernels::KernelStatus;

float Scale(const Tensor& t) { return t.quant.scale.empty() ? 0.f : t.quant.scale[0]; }
int32_t ZeroPoint(const Tensor& t) {
  return t.quant.zero_point.empty() ? 0 : static_cast<int32_t>(t.quant.zero_point[0]);
}

kernels::Requant Multiplier(double real) {
  const quant::FixedPointMultiplier m = quant::QuantizeMultiplier(real);
  return kernels::Requant{m.multiplier, m.shift};
}

absl::StatusOr<ActivationRange> QuantizedActivationRange(const LowerContext& ctx, Activation a,
                                                         const Tensor& out) {
  int32_t qmin = -128, qmax = 127;
  if (out.dtype == DType::kInt16) {
    qmin = -32768;
    qmax = 32767;
  } else if (out.dtype == DType::kUInt8) {
    qmin = 0;
    qmax = 255;
  }
  const float scale = Scale(out);
  const int32_t zp = ZeroPoint(out);
  if (a != Activation::kNone && (!(scale > 0.f) || !std::isfinite(scale))) {
    return ctx.Invalid("output '", out.name, "' has a non-positive or non-finite scale");
  }
  // In double and clamped to the dtype's range before the cast: a tiny scale or a huge zero
  // point must not overflow an int (fuzz_run finding: NaN cast to int).
  auto q = [&](float f) -> int32_t {
    const double v = static_cast<double>(zp) + std::round(static_cast<double>(f) / scale);
    if (!(v > qmin)) return qmin;
    if (v > qmax) return qmax;
    return static_cast<int32_t>(v);
  };
  ActivationRange r{qmin, qmax};
  switch (a) {
    case Activation::kNone: break;
    case Activation::kRelu: r.min = std::max(qmin, q(0.f)); break;
    case Activation::kRelu6:
      r.min = std::max(qmin, q(0.f));
      r.max = std::min(qmax, q(6.f));
      break;
    case Activation::kReluN1To1:
      r.min = std::max(qmin, q(-1.f));
      r.max = std::min(qmax, q(1.f));
      break;
    default:
      return ctx.Unimplemented("fused activation ", std::string(ActivationName(a)),
                               " on a quantized operator");
  }
  return r;
}

absl::Status KernelError(KernelStatus s, const char* kernel) {
  if (s == KernelStatus::kOk) return absl::OkStatus();
  if (s == KernelStatus::kNoImpl) {
    return absl::UnimplementedError(absl::StrCat(kernel, ": no body for these parameters"));
  }
  return absl::InternalError(absl::StrCat(
      kernel, " kernel rejected its arguments: inconsistent shapes or parameters, or scratch "
              "memory too small (the lowering's checks let through a case the kernel refuses)"));
}

absl::Status RequireQuantized(const LowerContext& ctx, const Tensor& t) {
  if (t.quant.empty()) return ctx.Invalid("tensor '", t.name, "' is not quantized");
  if (!(Scale(t) > 0.f) || !std::isfinite(Scale(t))) {
    return ctx.Invalid("tensor '", t.name, "' has a non-positive scale");
  }
  return absl::OkStatus();
}

absl::StatusOr<kernels::Shape> ToShape(const LowerContext& ctx, const std::vector<int32_t>& s) {
  if (s.size() > static_cast<size_t>(kernels::kMaxRank)) {
    return ctx.Unimplemented("rank ", s.size(), " (kernels take up to ", kernels::kMaxRank, ")");
  }
  kernels::Shape out;
  out.rank = static_cast<int32_t>(s.size());
  for (size_t i = 0; i < s.size(); ++i) out.dims[i] = s[i];
  return out;
}

int32_t InputRadius(int integer_bits, int left_shift) {
  const double max_input_rescaled = 1.0 * ((1 << integer_bits) - 1) *
                                    static_cast<double>(int64_t{1} << (31 - integer_bits)) /
                                    static_cast<double>(int64_t{1} << left_shift);
  return static_cast<int32_t>(std::floor(max_input_rescaled));
}

absl::Status RequireFloat(const LowerContext& ctx, const Tensor& t) {
  if (t.dtype != DType::kFloat32) {
    return ctx.Unimplemented("tensor '", t.name, "' is ", DT(t.dtype),
                             " in a float32 operator (mixed-type operators are not supported)");
  }
  return absl::OkStatus();
}

absl::Status RequireAllFloat(const LowerContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i)) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(i)));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(i)));
  return absl::OkStatus();
}

Activation FusedActivation(const Operator& op) {
  if (std::holds_alternative<ElementwiseAttrs>(op.attrs)) {
    return op.Attrs<ElementwiseAttrs>().activation;
  }
  return Activation::kNone;
}

SpatialWindow WindowOf(Padding padding, int32_t in_h, int32_t in_w, int32_t k_h, int32_t k_w,
                       int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                       int32_t dilation_w) {
  const bool same = padding == Padding::kSame;
  SpatialWindow w;
  w.out_h = kernels::PaddedOutputSize(same, in_h, k_h, stride_h, dilation_h);
  w.out_w = kernels::PaddedOutputSize(same, in_w, k_w, stride_w, dilation_w);
  w.pad_h = kernels::PaddingBefore(same, in_h, k_h, stride_h, dilation_h, w.out_h);
  w.pad_w = kernels::PaddingBefore(same, in_w, k_w, stride_w, dilation_w, w.out_w);
  return w;
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
