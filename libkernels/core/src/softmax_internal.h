// Variant bodies of the softmax ops.
#ifndef MICA_KERNELS_SOFTMAX_INTERNAL_H_
#define MICA_KERNELS_SOFTMAX_INTERNAL_H_

#include <cstdint>

#include "internal/fixedpoint.h"
#include "mica/kernels/softmax.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus SoftmaxScalar(const SoftmaxParams&, int32_t, int32_t, const int8_t*, int8_t*);
KernelStatus SoftmaxInt8ToInt16Scalar(const SoftmaxParams&, int32_t, int32_t, const int8_t*,
                                      int16_t*);
KernelStatus Softmax16Scalar(const Softmax16Params&, int32_t, int32_t, const int16_t*,
                             int16_t*);
KernelStatus SoftmaxMve(const SoftmaxParams&, int32_t, int32_t, const int8_t*, int8_t*);
KernelStatus SoftmaxInt8ToInt16Mve(const SoftmaxParams&, int32_t, int32_t, const int8_t*,
                                   int16_t*);

// What every int8-input body shares: the checks, and the reciprocal of a row's sum of exps.
constexpr int kSoftmaxScaledDiffIntegerBits = 5;
constexpr int kSoftmaxAccumulationIntegerBits = 12;

// (Internal linkage: as external inline functions they change how GCC inlines the scalar
// body's row loop, ~2 % more instructions on the Cortex-M4.)
namespace {

inline bool ValidSoftmaxParams(const SoftmaxParams& p) {
  return p.input_beta_left_shift >= 0 && p.input_beta_left_shift <= 31 && p.diff_min <= 0;
}

template <typename InT, typename OutT>
KernelStatus CheckSoftmaxRows(int32_t rows, int32_t depth, const InT* in, const OutT* out) {
  if (rows < 0 || depth < 0) return KernelStatus::kArgError;
  if (rows == 0 || depth == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  return KernelStatus::kOk;
}

}  // namespace

// 1 / sum_of_exps (Q12) as a Q0 scale and the exponent of the output's rounding shift.
struct SoftmaxRowScale {
  int32_t scale;
  int exponent;
};
template <typename OutT>
inline SoftmaxRowScale SoftmaxScaleOf(int32_t sum_of_exps) {
  // Reciprocal of the sum: normalise to [1, 2), then 1 / (1 + x).
  const int headroom_plus_one = fp::CountLeadingZeros32(static_cast<uint32_t>(sum_of_exps));
  const int num_bits_over_unit = kSoftmaxAccumulationIntegerBits - headroom_plus_one;
  const int32_t shifted_sum_minus_one = static_cast<int32_t>(
      (static_cast<uint32_t>(sum_of_exps) << headroom_plus_one) - (uint32_t{1} << 31));
  return {fp::OneOverOnePlusXForXIn01(shifted_sum_minus_one),
          num_bits_over_unit + 31 - static_cast<int>(sizeof(OutT) * 8)};
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_SOFTMAX_INTERNAL_H_
