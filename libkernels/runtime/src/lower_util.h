// Private: helpers shared by the lowering families (conv_like.cc, elementwise.cc, pooling.cc,
// softmax_reduce.cc, recurrent.cc, quantize_ops.cc): quantization parameters, dtype checks,
// TFLite's window geometry and the small kernel wrappers more than one family uses.
#ifndef MICA_RUNTIME_LOWER_UTIL_H_
#define MICA_RUNTIME_LOWER_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/kernels/activations.h"
#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {

// The body of `isa` in `list`, else the best body below it, else `fallback` (the public entry).
template <typename Fn>
Fn PickVariant(const kernels::VariantList<Fn>& list, kernels::Isa isa, Fn fallback) {
  Fn best = nullptr;
  for (const auto& v : list) {
    if (static_cast<int>(v.isa) <= static_cast<int>(isa)) best = v.fn;
  }
  return best != nullptr ? best : fallback;
}

// ---- quantization parameters ----------------------------------------------------------------

float Scale(const Tensor& t);
int32_t ZeroPoint(const Tensor& t);
// TFLite's QuantizeMultiplier of `real`.
kernels::Requant Multiplier(double real);
// TFLite's CalculateActivationRangeQuantized for `out`'s dtype, scale and zero point.
absl::StatusOr<kernels::ActivationRange> QuantizedActivationRange(const LowerContext& ctx,
                                                                  Activation a,
                                                                  const Tensor& out);
// The radius of TFLite's CalculateInputRadius (softmax, logistic, tanh).
int32_t InputRadius(int integer_bits, int left_shift);
absl::Status KernelError(kernels::KernelStatus s, const char* kernel);
absl::Status RequireQuantized(const LowerContext& ctx, const Tensor& t);
absl::StatusOr<kernels::Shape> ToShape(const LowerContext& ctx, const std::vector<int32_t>& s);

// ---- float32 ----------------------------------------------------------------------------------

// Largest rank of the float32 broadcasting and reduction loops.
constexpr int kHostMaxRank = 8;

// Unimplemented unless `t` is float32 (mixed-type operators are not supported).
absl::Status RequireFloat(const LowerContext& ctx, const Tensor& t);
// RequireFloat on every present input and every output.
absl::Status RequireAllFloat(const LowerContext& ctx);
inline float Clampf(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

// ---- shared by several families ---------------------------------------------------------------

// The fused activation of an elementwise operator (none when it has no ElementwiseAttrs).
Activation FusedActivation(const Operator& op);

// TFLite's SAME / VALID window over an H x W input (mica/kernels/padding.h): output size and
// top/left padding per axis.
struct SpatialWindow {
  int32_t out_h = 0, out_w = 0, pad_h = 0, pad_w = 0;
};
SpatialWindow WindowOf(Padding padding, int32_t in_h, int32_t in_w, int32_t k_h, int32_t k_w,
                       int32_t stride_h, int32_t stride_w, int32_t dilation_h,
                       int32_t dilation_w);

// NHWC geometry of the float32 window kernels (convolutions, pooling).
struct FloatGeom {
  int32_t n = 1, in_h = 1, in_w = 1, in_c = 1;
  int32_t out_h = 1, out_w = 1, out_c = 1;
  int32_t k_h = 1, k_w = 1;
  int32_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int32_t pad_h = 0, pad_w = 0;
  float act_lo = 0, act_hi = 0;
};

// A unary integer kernel over `n` elements: a lambda bound at lowering time (activations,
// requantize).
template <typename In, typename Out>
class UnaryKernel : public OpKernel {
 public:
  std::function<kernels::KernelStatus(int32_t, const In*, Out*)> fn;
  const char* name = "";
  int32_t n = 0, in = 0, out = 0;
  // The device record the bound kernel-core call is (MakeUnaryForPlan); kCount: none.
  device::PlanOp plan_code = device::PlanOp::kCount;
  std::vector<uint8_t> plan_params;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(n, ctx.In<In>(in), ctx.Out<Out>(out)), name);
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    if (plan_code == device::PlanOp::kCount) return false;
    w.code = plan_code;
    w.params = plan_params;
    w.tensors = {in, out};
    return true;
  }
};

// Kernel parameters as a plan stores them: member by member into zeroed bytes, so padding
// (HardSwishParams has some) is zero and plans are reproducible.
template <typename P>
void AssignPlanParams(P* dst, const P& src) {
  *dst = src;
}
inline void AssignPlanParams(kernels::HardSwishParams* dst, const kernels::HardSwishParams& src) {
  dst->input_zero_point = src.input_zero_point;
  dst->output_zero_point = src.output_zero_point;
  dst->reluish_multiplier_fixedpoint_int16 = src.reluish_multiplier_fixedpoint_int16;
  dst->reluish_multiplier_exponent = src.reluish_multiplier_exponent;
  dst->output_multiplier_fixedpoint_int16 = src.output_multiplier_fixedpoint_int16;
  dst->output_multiplier_exponent = src.output_multiplier_exponent;
}

template <typename In, typename Out, typename F>
KernelPtr MakeUnary(const LowerContext& ctx, const char* name, F f) {
  auto k = std::make_unique<UnaryKernel<In, Out>>();
  k->fn = f;
  k->name = name;
  k->n = static_cast<int32_t>(ctx.input(0).num_elements());
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

// MakeUnary for a kernel-core call the device runtime has too: `f` must call the entry of
// `code` (or one of its variants) with `p`; the plan records `p` and the element count.
template <typename In, typename Out, typename P, typename F>
KernelPtr MakeUnaryForPlan(const LowerContext& ctx, const char* name, device::PlanOp code,
                           const P& p, F f) {
  auto k = std::make_unique<UnaryKernel<In, Out>>();
  k->fn = f;
  k->name = name;
  k->n = static_cast<int32_t>(ctx.input(0).num_elements());
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  std::vector<uint8_t> bytes(sizeof(device::UnaryOpParams<P>), 0);
  auto* d = reinterpret_cast<device::UnaryOpParams<P>*>(bytes.data());
  AssignPlanParams(&d->p, p);
  d->count = k->n;
  k->plan_code = code;
  k->plan_params = std::move(bytes);
  return KernelPtr(std::move(k));
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_LOWER_UTIL_H_
