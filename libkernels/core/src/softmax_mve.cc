// Softmax (int8 input), MVE (Helium) body: the row maximum with VMAXV over sixteen lanes, then
// gemmlowp's fixed-point exp (ExpOnNegativeValues, Q5 in, Q0 out) on four int32 lanes at once:
// VQRDMULH is SaturatingRoundingDoublingHighMul exactly, VQSHL the saturating left shift, a
// rounding shift of the value minus one on negative lanes RoundingDivideByPOT, and the barrel
// shifter's conditional multiplies are VPSEL selects. Lanes below diff_min (or past the row)
// are left out of the sum by predication and give the type's minimum.
#include "internal/mve_helpers.h"
#include "softmax_internal.h"

#if MICA_KERNELS_BUILD_MVE

#include <limits>

namespace mica {
namespace kernels {
namespace internal {
namespace {

// RoundingDivideByPOT by a constant exponent (gemmlowp's vector form, see mve::MulQuant).
template <int E>
inline int32x4_t RoundingDivideByPOTv(int32x4_t x) {
  return vrshrq_n_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), E);
}

// exp(a) for a in [-1/4, 0), Q0 (fp::ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl).
inline int32x4_t ExpOnIntervalv(int32x4_t a) {
  constexpr int32_t kConstantTerm = 1895147668;
  constexpr int32_t kConstant1Over3 = 715827883;
  const int32x4_t x = vaddq_n_s32(a, int32_t{1} << 28);
  const int32x4_t x2 = vqrdmulhq_s32(x, x);
  const int32x4_t x3 = vqrdmulhq_s32(x2, x);
  const int32x4_t x4 = vqrdmulhq_s32(x2, x2);
  const int32x4_t x4_over_4 = RoundingDivideByPOTv<2>(x4);
  const int32x4_t poly = RoundingDivideByPOTv<1>(
      vaddq_s32(vqrdmulhq_n_s32(vaddq_s32(x4_over_4, x3), kConstant1Over3), x2));
  return vaddq_n_s32(vqrdmulhq_n_s32(vaddq_s32(x, poly), kConstantTerm), kConstantTerm);
}

// exp(a) for a <= 0 in Q5, result in Q0 (fp::ExpOnNegativeValues<5>).
inline int32x4_t ExpOnNegativeValuesQ5(int32x4_t a) {
  constexpr int kFractionalBits = 31 - kSoftmaxScaledDiffIntegerBits;
  constexpr int32_t kOneQuarter = int32_t{1} << (kFractionalBits - 2);
  const int32x4_t a_mod_quarter_minus_one_quarter =
      vsubq_n_s32(vandq_s32(a, vdupq_n_s32(kOneQuarter - 1)), kOneQuarter);
  int32x4_t result =
      ExpOnIntervalv(vqshlq_n_s32(a_mod_quarter_minus_one_quarter, kSoftmaxScaledDiffIntegerBits));
  const int32x4_t remainder = vsubq_s32(a_mod_quarter_minus_one_quarter, a);
  struct Step {
    int exponent;
    int32_t multiplier;
  };
  constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084},
                             {1, 290630308},   {2, 39332535},    {3, 720401},
                             {4, 242}};
  for (const Step& s : kSteps) {
    const int32_t bit = static_cast<int32_t>(uint32_t{1} << (kFractionalBits + s.exponent));
    // (vcmpneq_n_s32 against 0 makes GCC 12 fail with an internal compiler error.)
    const mve_pred16_t set =
        vcmpneq_s32(vandq_s32(remainder, vdupq_n_s32(bit)), vdupq_n_s32(0));
    result = vpselq_s32(vqrdmulhq_n_s32(result, s.multiplier), result, set);
  }
  return vpselq_s32(vdupq_n_s32(fp::kInt32Max), result, vcmpeqq_n_s32(a, 0));
}

template <typename OutT>
inline void Store(OutT* out, int32x4_t v, mve_pred16_t p);
template <>
inline void Store<int8_t>(int8_t* out, int32x4_t v, mve_pred16_t p) {
  vstrbq_p_s32(out, v, p);
}
template <>
inline void Store<int16_t>(int16_t* out, int32x4_t v, mve_pred16_t p) {
  vstrhq_p_s32(out, v, p);
}

template <typename OutT>
void SoftmaxRowsMve(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* input,
                    OutT* output) {
  constexpr int32_t kOutMin = std::numeric_limits<OutT>::min();
  constexpr int32_t kOutMax = std::numeric_limits<OutT>::max();
  const int32_t left_shift = p.input_beta_left_shift, beta = p.input_beta_multiplier;
  const int32_t diff_min = p.diff_min;
  for (int32_t r = 0; r < rows; ++r) {
    const int8_t* in = input + static_cast<int64_t>(r) * depth;
    OutT* out = output + static_cast<int64_t>(r) * depth;
    int8_t max8 = -128;
    int32_t c = 0;
    for (; c + 16 <= depth; c += 16) max8 = vmaxvq_s8(max8, vld1q_s8(in + c));
    if (c < depth) {
      const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(depth - c));
      max8 = vmaxvq_p_s8(max8, vldrbq_z_s8(in + c, pr), pr);
    }
    const int32_t max_in_row = max8;

    // Sum of exps (Q12): the lanes at or above diff_min.
    int32_t sum_of_exps = 0;
    for (c = 0; c < depth; c += 4) {
      const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(depth - c));
      const int32x4_t diff = vsubq_n_s32(vldrbq_z_s32(in + c, pr), max_in_row);
      const mve_pred16_t valid = static_cast<mve_pred16_t>(pr & vcmpgeq_n_s32(diff, diff_min));
      const int32x4_t e =
          ExpOnNegativeValuesQ5(vqrdmulhq_n_s32(vshlq_r_s32(diff, left_shift), beta));
      sum_of_exps = vaddvaq_p_s32(sum_of_exps, RoundingDivideByPOTv<12>(e), valid);
    }
    const SoftmaxRowScale row_scale = SoftmaxScaleOf<OutT>(sum_of_exps);
    // The products are >= 0, so the rounding right shift needs no negative-lane fixup. A sum
    // of 2^28 or more (512+ elements near the maximum, int8 output) asks for a shift of 32 or
    // more: every product is below 2^31, so it rounds to 0 and each output is the minimum, as
    // in the scalar body.
    const int32_t exponent = row_scale.exponent;
    const bool wide_shift = exponent > 31;
    for (c = 0; c < depth; c += 4) {
      const mve_pred16_t pr = vctp32q(static_cast<uint32_t>(depth - c));
      const int32x4_t diff = vsubq_n_s32(vldrbq_z_s32(in + c, pr), max_in_row);
      const mve_pred16_t valid = vcmpgeq_n_s32(diff, diff_min);
      const int32x4_t e =
          ExpOnNegativeValuesQ5(vqrdmulhq_n_s32(vshlq_r_s32(diff, left_shift), beta));
      const int32x4_t prod = vqrdmulhq_n_s32(e, row_scale.scale);
      const int32x4_t unsat = wide_shift ? vdupq_n_s32(0) : vrshlq_n_s32(prod, -exponent);
      int32x4_t v = vaddq_n_s32(unsat, kOutMin);
      v = vminq_s32(vmaxq_s32(v, vdupq_n_s32(kOutMin)), vdupq_n_s32(kOutMax));
      Store(out + c, vpselq_s32(v, vdupq_n_s32(kOutMin), valid), pr);
    }
  }
}

}  // namespace

KernelStatus SoftmaxMve(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* input,
                        int8_t* output) {
  if (!ValidSoftmaxParams(p)) return KernelStatus::kArgError;
  const KernelStatus st = CheckSoftmaxRows(rows, depth, input, output);
  if (st != KernelStatus::kOk || rows == 0 || depth == 0) return st;
  SoftmaxRowsMve(p, rows, depth, input, output);
  return KernelStatus::kOk;
}

KernelStatus SoftmaxInt8ToInt16Mve(const SoftmaxParams& p, int32_t rows, int32_t depth,
                                   const int8_t* input, int16_t* output) {
  if (!ValidSoftmaxParams(p)) return KernelStatus::kArgError;
  const KernelStatus st = CheckSoftmaxRows(rows, depth, input, output);
  if (st != KernelStatus::kOk || rows == 0 || depth == 0) return st;
  SoftmaxRowsMve(p, rows, depth, input, output);
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
