// Scalar bodies of softmax: TFLite's fixed-point int8 path and LUT-based int16 path.
#include <limits>

#include "internal/fixedpoint.h"
#include "internal/requantize.h"
#include "softmax_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

constexpr int kScaledDiffIntegerBits = kSoftmaxScaledDiffIntegerBits;
constexpr int kAccumulationIntegerBits = kSoftmaxAccumulationIntegerBits;

// Rescaled input difference (Q5) of an element `diff` (<= 0) below the row maximum.
inline int32_t ScaledDiff(const SoftmaxParams& p, int32_t diff) {
  // MultiplyByQuantizedMultiplierGreaterThanOne: x * 2^left_shift, then the high multiply.
  return SaturatingRoundingDoublingHighMul(
      static_cast<int32_t>(static_cast<uint32_t>(diff) << p.input_beta_left_shift),
      p.input_beta_multiplier);
}

template <typename OutT>
void SoftmaxRows(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* input,
                 OutT* output) {
  constexpr int32_t kOutMin = std::numeric_limits<OutT>::min();
  constexpr int32_t kOutMax = std::numeric_limits<OutT>::max();
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* in = input + static_cast<int64_t>(r) * depth;
    OutT* out = output + static_cast<int64_t>(r) * depth;
    int32_t max_in_row = -128;
    for (int32_t c = 0; c < depth; ++c) max_in_row = in[c] > max_in_row ? in[c] : max_in_row;

    int32_t sum_of_exps = 0;  // Q12
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p.diff_min) {
        const int32_t e = fp::ExpOnNegativeValues<kScaledDiffIntegerBits>(ScaledDiff(p, diff));
        sum_of_exps = fp::Add(sum_of_exps, fp::Rescale<0, kAccumulationIntegerBits>(e));
      }
    }
    const SoftmaxRowScale row_scale = SoftmaxScaleOf<OutT>(sum_of_exps);
    const int32_t shifted_scale = row_scale.scale;
    const int exponent = row_scale.exponent;
    if (exponent > 31) {
      // A sum of 2^28 or more (512+ elements near the row's maximum, int8 output): every
      // product below is under 2^31, so dividing it by 2^32 or more rounds to 0 and each output
      // is the minimum (TFLite's reference would shift an int32 by 32 or more here).
      for (int32_t c = 0; c < depth; ++c) out[c] = static_cast<OutT>(kOutMin);
      continue;
    }

    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      if (diff >= p.diff_min) {
        const int32_t e = fp::ExpOnNegativeValues<kScaledDiffIntegerBits>(ScaledDiff(p, diff));
        const int32_t unsat = RoundingDivideByPOT(fp::Mul(shifted_scale, e), exponent);
        out[c] = static_cast<OutT>(Clamp(unsat + kOutMin, kOutMin, kOutMax));
      } else {
        out[c] = static_cast<OutT>(kOutMin);
      }
    }
  }
}

}  // namespace

KernelStatus SoftmaxScalar(const SoftmaxParams& p, int32_t rows, int32_t depth,
                           const int8_t* input, int8_t* output) {
  if (!ValidSoftmaxParams(p)) return KernelStatus::kArgError;
  const KernelStatus st = CheckSoftmaxRows(rows, depth, input, output);
  if (st != KernelStatus::kOk || rows == 0 || depth == 0) return st;
  SoftmaxRows(p, rows, depth, input, output);
  return KernelStatus::kOk;
}

KernelStatus SoftmaxInt8ToInt16Scalar(const SoftmaxParams& p, int32_t rows, int32_t depth,
                                      const int8_t* input, int16_t* output) {
  if (!ValidSoftmaxParams(p)) return KernelStatus::kArgError;
  const KernelStatus st = CheckSoftmaxRows(rows, depth, input, output);
  if (st != KernelStatus::kOk || rows == 0 || depth == 0) return st;
  SoftmaxRows(p, rows, depth, input, output);
  return KernelStatus::kOk;
}

KernelStatus Softmax16Scalar(const Softmax16Params& p, int32_t rows, int32_t depth,
                             const int16_t* input, int16_t* output) {
  if (p.exp_lut == nullptr || p.one_over_one_plus_x_lut == nullptr ||
      p.input_left_shift > 31 || p.input_left_shift < -31) {
    return KernelStatus::kArgError;
  }
  const KernelStatus st = CheckSoftmaxRows(rows, depth, input, output);
  if (st != KernelStatus::kOk || rows == 0 || depth == 0) return st;
  for (int32_t r = 0; r < rows; ++r) {
    const int16_t* in = input + static_cast<int64_t>(r) * depth;
    int16_t* out = output + static_cast<int64_t>(r) * depth;
    int32_t max_in_row = -32768;
    for (int32_t c = 0; c < depth; ++c) max_in_row = in[c] > max_in_row ? in[c] : max_in_row;
    // exp(diff) per element (Q0.15), cached in the output, and their sum (Q16.15).
    int32_t sum_of_exps = 0;
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t diff = in[c] - max_in_row;
      const int32_t scaled =
          MultiplyByQuantizedMultiplier(diff, p.input_multiplier, p.input_left_shift);
      const int32_t sym = Clamp(scaled + 32767, -32768, 32767);
      out[c] = Int16LutLookup(static_cast<int16_t>(sym), p.exp_lut);
      sum_of_exps += out[c];
    }
    const int headroom_plus_one = fp::CountLeadingZeros32(static_cast<uint32_t>(sum_of_exps));
    const int32_t shifted_sum = static_cast<int32_t>(
        ((static_cast<int64_t>(sum_of_exps) << (headroom_plus_one - 1)) + (1 << 13)) >> 14);
    const int32_t sym_shifted_sum = shifted_sum + (-((1 << 15) + (1 << 16)));
    const int16_t reciprocal =
        Int16LutLookup(static_cast<int16_t>(Clamp(sym_shifted_sum, -32768, 32767)),
                       p.one_over_one_plus_x_lut);
    const int right_shift = 31 - headroom_plus_one;
    const int64_t round = int64_t{1} << (right_shift - 1);
    for (int32_t c = 0; c < depth; ++c) {
      const int32_t result = static_cast<int32_t>(
          (static_cast<int64_t>(out[c]) * reciprocal + round) >> right_shift);
      out[c] = static_cast<int16_t>(Clamp(result, 0, 32767));
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
