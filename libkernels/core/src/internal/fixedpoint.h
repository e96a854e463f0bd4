// Q-format fixed-point helpers for the transcendental kernels (softmax, logistic, tanh).
//
// These follow the arithmetic of gemmlowp's fixedpoint library, which TFLite's reference int8
// softmax / logistic / tanh use, operation by operation, so the results match bit for bit.
// A value is a raw int32 with an implied number of integer bits I (Q(I).(31-I)); the integer
// bit counts are tracked by the caller in template parameters.
#ifndef MICA_KERNELS_INTERNAL_FIXEDPOINT_H_
#define MICA_KERNELS_INTERNAL_FIXEDPOINT_H_

#include <cstdint>
#include <limits>

#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace fp {

constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// Wrapping add / sub / negate (gemmlowp's raw int32 operators; callers stay in range).
inline int32_t Add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t Sub(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - static_cast<uint32_t>(b));
}
inline int32_t Neg(int32_t a) { return static_cast<int32_t>(0u - static_cast<uint32_t>(a)); }

// Product of Q(I1) and Q(I2) values is Q(I1+I2): the rounding doubling high multiply.
inline int32_t Mul(int32_t a, int32_t b) { return SaturatingRoundingDoublingHighMul(a, b); }

// Raw value of 1.0 in Q(I): saturated for I == 0.
template <int I>
constexpr int32_t One() {
  return I == 0 ? kInt32Max : static_cast<int32_t>(int64_t{1} << (31 - I));
}

// Multiplies by 2^exponent with rounding (negative exponent) or saturation (positive).
template <int Exponent>
inline int32_t SaturatingRoundingMultiplyByPOT(int32_t x) {
  if (Exponent == 0) return x;
  if (Exponent < 0) return RoundingDivideByPOT(x, Exponent < 0 ? -Exponent : 0);
  constexpr int kE = Exponent > 0 ? Exponent : 0;
  constexpr int32_t kPosThreshold = kInt32Max >> kE;
  constexpr int32_t kNegThreshold = -(kInt32Max >> kE) - 1;  // == kInt32Min >> kE
  if (x > kPosThreshold) return kInt32Max;
  if (x < kNegThreshold) return kInt32Min;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << kE);
}

// Changes a Q(From) raw value to Q(To).
template <int From, int To>
inline int32_t Rescale(int32_t x) {
  return SaturatingRoundingMultiplyByPOT<From - To>(x);
}

// (a + b) / 2 rounded half away from zero, without overflow.
inline int32_t RoundingHalfSum(int32_t a, int32_t b) {
  const int64_t sum = static_cast<int64_t>(a) + static_cast<int64_t>(b);
  const int64_t sign = sum >= 0 ? 1 : -1;
  return static_cast<int32_t>((sum + sign) / 2);
}

// exp(a) for a in [-1/4, 0), Q0 in and out: Taylor expansion around -1/8.
inline int32_t ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(int32_t a) {
  constexpr int32_t kConstantTerm = 1895147668;   // exp(-1/8) in Q0
  constexpr int32_t kConstant1Over3 = 715827883;  // 1/3 in Q0
  const int32_t x = Add(a, int32_t{1} << 28);     // a + 1/8
  const int32_t x2 = Mul(x, x);
  const int32_t x3 = Mul(x2, x);
  const int32_t x4 = Mul(x2, x2);
  const int32_t x4_over_4 = SaturatingRoundingMultiplyByPOT<-2>(x4);
  const int32_t poly =
      SaturatingRoundingMultiplyByPOT<-1>(Add(Mul(Add(x4_over_4, x3), kConstant1Over3), x2));
  return Add(kConstantTerm, Mul(kConstantTerm, Add(x, poly)));
}

// exp(a) for a <= 0 given in Q(I); result in Q0.
template <int I>
inline int32_t ExpOnNegativeValues(int32_t a) {
  constexpr int kFractionalBits = 31 - I;
  constexpr int32_t kOneQuarter = static_cast<int32_t>(int64_t{1} << (kFractionalBits - 2));
  constexpr int32_t kMask = kOneQuarter - 1;
  const int32_t a_mod_quarter_minus_one_quarter = Sub(a & kMask, kOneQuarter);
  int32_t result = ExpOnIntervalBetweenNegativeOneQuarterAnd0Excl(
      Rescale<I, 0>(a_mod_quarter_minus_one_quarter));
  const int32_t remainder = Sub(a_mod_quarter_minus_one_quarter, a);
  // Barrel shifter: multiply by exp(-2^k) for every set bit k of the remainder.
  struct Step {
    int exponent;
    int32_t multiplier;
  };
  constexpr Step kSteps[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084},
                             {1, 290630308},   {2, 39332535},    {3, 720401},
                             {4, 242}};
  for (const Step& s : kSteps) {
    if (I > s.exponent) {
      const int shift = kFractionalBits + s.exponent;
      if (remainder & static_cast<int32_t>(uint32_t{1} << shift)) {
        result = Mul(result, s.multiplier);
      }
    }
  }
  if (I > 5) {
    constexpr int kClampB = I > 5 ? 36 - I : 0;
    constexpr int32_t kClamp = -static_cast<int32_t>(int64_t{1} << kClampB);  // -32.0 in Q(I)
    if (a < kClamp) result = 0;
  }
  if (a == 0) result = One<0>();
  return result;
}

// Newton-Raphson iteration for 1 / half_denominator, in Q2 (shared by the two helpers below).
inline int32_t NewtonReciprocalQ2(int32_t half_denominator) {
  constexpr int32_t kConstant48Over17 = 1515870810;      // Q2
  constexpr int32_t kConstantNeg32Over17 = -1010580540;  // Q2
  int32_t x = Add(kConstant48Over17, Mul(half_denominator, kConstantNeg32Over17));
  for (int i = 0; i < 3; ++i) {
    const int32_t half_denominator_times_x = Mul(half_denominator, x);        // Q2
    const int32_t one_minus = Sub(One<2>(), half_denominator_times_x);       // Q2
    x = Add(x, Rescale<4, 2>(Mul(x, one_minus)));                            // Q4 -> Q2
  }
  return x;
}

// 1 / (1 + a) for a in [0, 1), Q0 in and out.
inline int32_t OneOverOnePlusXForXIn01(int32_t a) {
  const int32_t half_denominator = RoundingHalfSum(a, One<0>());
  const int32_t x = NewtonReciprocalQ2(half_denominator);
  // x / 2 as Q1 (same raw), then Q1 -> Q0.
  return Rescale<1, 0>(x);
}

// (1 - a) / (1 + a) for a in [0, 1), Q0 in and out.
inline int32_t OneMinusXOverOnePlusXForXIn01(int32_t a) {
  const int32_t half_denominator = RoundingHalfSum(a, One<0>());
  const int32_t x = NewtonReciprocalQ2(half_denominator);
  return Rescale<2, 0>(Sub(x, One<2>()));
}

// logistic(a) for a in Q(I); result in Q0.
template <int I>
inline int32_t Logistic(int32_t a) {
  if (a == 0) return int32_t{1} << 30;  // 0.5
  const bool positive = a > 0;
  const int32_t abs_a = positive ? a : Neg(a);
  // exp(-|a|), then 1 / (1 + exp(-|a|)).
  const int32_t result_if_positive = OneOverOnePlusXForXIn01(ExpOnNegativeValues<I>(Neg(abs_a)));
  return positive ? result_if_positive : Sub(One<0>(), result_if_positive);
}

// tanh(a) for a in Q(I); result in Q0.
template <int I>
inline int32_t Tanh(int32_t a) {
  if (a == 0) return 0;
  const bool negative = a < 0;
  const int32_t n = negative ? a : Neg(a);  // -|a|
  // exp(2n) with the raw value reinterpreted as Q(I+1), then (1 - e) / (1 + e) = -tanh(n).
  const int32_t t = OneMinusXOverOnePlusXForXIn01(ExpOnNegativeValues<I + 1>(n));
  return negative ? Neg(t) : t;
}

// Count of leading zero bits of a 32-bit value (32 for 0).
inline int CountLeadingZeros32(uint32_t x) {
  if (x == 0) return 32;
  int n = 0;
  while ((x & 0x80000000u) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
}

}  // namespace fp
}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_FIXEDPOINT_H_
