// Private: helpers shared by the integer lowering files.
#ifndef MICA_RUNTIME_INTEGER_COMMON_H_
#define MICA_RUNTIME_INTEGER_COMMON_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"
#include "op_kernel.h"

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

float Scale(const Tensor& t);
int32_t ZeroPoint(const Tensor& t);
// TFLite's QuantizeMultiplier of `real`.
kernels::Requant Multiplier(double real);
// TFLite's CalculateActivationRangeQuantized for `out`'s dtype, scale and zero point.
absl::StatusOr<kernels::ActivationRange> QuantizedActivationRange(const LowerContext& ctx,
                                                                  Activation a,
                                                                  const Tensor& out);
absl::Status KernelError(kernels::KernelStatus s, const char* kernel);
absl::Status RequireQuantized(const LowerContext& ctx, const Tensor& t);
absl::StatusOr<kernels::Shape> ToShape(const LowerContext& ctx, const std::vector<int32_t>& s);

// Fully connected, transpose conv, batch matmul, reductions, SVDF, LSTM. Returns NotFound for
// kinds it does not handle.
absl::StatusOr<KernelPtr> LowerIntegerMore(const LowerContext& ctx);

}  // namespace internal
}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_INTEGER_COMMON_H_
