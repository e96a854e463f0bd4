// Fixed-point arithmetic shared by every kernel variant: TFLite's reference int8 rounding.
//
// TFLite's default ("double rounding") requantization multiplies by a Q31 multiplier with a
// rounding doubling high multiply, then divides by a power of two rounding half away from zero.
// Every variant must produce exactly these values; SIMD bodies may reorganise the work but not
// the rounding.
#ifndef MICA_KERNELS_INTERNAL_REQUANTIZE_H_
#define MICA_KERNELS_INTERNAL_REQUANTIZE_H_

#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
#include <arm_acle.h>
#endif

namespace mica {
namespace kernels {
namespace internal {

// Returns the high 32 bits of 2*a*b, rounded to nearest; saturates the one overflow case
// (a == b == INT32_MIN).
inline int32_t SaturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) {
    return std::numeric_limits<int32_t>::max();
  }
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // Division (not a shift) truncates toward zero, which the nudge above relies on.
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

// Returns x / 2^exponent rounded to nearest, ties away from zero. exponent in [0, 31].
inline int32_t RoundingDivideByPOT(int32_t x, int exponent) {
  // 32-bit arithmetic (1u << 31 is defined): a 64-bit variable shift costs a Cortex-M several
  // instructions.
  const int32_t mask = static_cast<int32_t>((uint32_t{1} << exponent) - 1u);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// Returns round(x * multiplier * 2^(shift - 31)) the way TFLite's reference kernels do.
// shift > 0 is a left shift applied before the multiply.
inline int32_t MultiplyByQuantizedMultiplier(int32_t x, int32_t multiplier, int32_t shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left_shift);
  return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(shifted, multiplier), right_shift);
}

// MultiplyByQuantizedMultiplier for multiplier >= 0, with fewer instructions (one 64-bit
// multiply and shift): TFLite's nudge-and-truncate equals floor((x * m + 2^30) / 2^31) for every
// product of either sign, and its one saturating case needs multiplier == INT32_MIN.
inline int32_t MultiplyByQuantizedMultiplierNonNeg(int32_t x, int32_t multiplier, int32_t shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left_shift);
  const int32_t high = static_cast<int32_t>(
      (static_cast<int64_t>(shifted) * multiplier + (int64_t{1} << 30)) >> 31);
  return RoundingDivideByPOT(high, right_shift);
}

// MultiplyByQuantizedMultiplier for a bounded accumulator (|x| <= kBoundedAccMax), a
// multiplier >= 0 and a right shift of at least one (shift in [-31, -1]), in about half the
// instructions: the rounding doubling high multiply is floor((2x * m + 2^31) / 2^32), the high
// word of the product 2x * m plus the top bit of its low word (2x cannot overflow), and
// RoundingDivideByPOT(v, e) is floor((v + 2^(e-1) - [v < 0]) / 2^e), which cannot overflow as
// |v| <= 2^29 + 1. Callers check the bounds once per call (BoundedRequantOk).
constexpr int64_t kBoundedAccMax = int64_t{1} << 29;
inline int32_t MultiplyByQuantizedMultiplierBounded(int32_t x, int32_t multiplier,
                                                    int32_t shift) {
  const int64_t product = int64_t{x * 2} * multiplier;
  const int32_t high = static_cast<int32_t>(static_cast<uint64_t>(product) >> 32) +
                       static_cast<int32_t>(static_cast<uint32_t>(product) >> 31);
  const int32_t nudge = int32_t{1} << ~shift;  // 2^(e - 1), e = -shift
  return (high + nudge + (high >> 31)) >> -shift;
}

// Whether MultiplyByQuantizedMultiplierBounded applies to a call: the `shifts` shifts all in
// [-31, -1] and every accumulator at most kBoundedAccMax in magnitude, the accumulators being a
// bias (one of `biases`; `bias` may be null) plus `taps` products of an int8 weight (|w| <= 128)
// and an int8 input plus `input_offset`. O(biases + shifts).
// Out of line: once per call, and inlined it changes how GCC allocates registers in the
// kernel loops around it.
__attribute__((noinline)) inline bool BoundedRequantOk(int64_t taps, int32_t input_offset,
                                                       const int32_t* bias, int32_t biases,
                                                       const int32_t* shift, int32_t shifts) {
  for (int32_t c = 0; c < shifts; ++c) {
    if (shift[c] > -1 || shift[c] < -31) return false;
  }
  if (taps > kBoundedAccMax) return false;
  const int64_t x_max =
      input_offset >= 0 ? 127 + int64_t{input_offset} : 128 - int64_t{input_offset};
  const int64_t room = kBoundedAccMax - taps * 128 * x_max;  // what the bias may add
  if (room < 0) return false;
  // |b| <= room for every bias as one unsigned comparison, b + room in [0, 2 room] (room <=
  // 2^29, so neither side wraps past 2^32): a few instructions per output channel, which a
  // fully connected layer pays per output.
  const uint32_t r = static_cast<uint32_t>(room);
  for (int32_t c = 0; bias != nullptr && c < biases; ++c) {
    if (static_cast<uint32_t>(bias[c]) + r > 2 * r) return false;
  }
  return true;
}

// The int64 overload TFLite's 16x8 kernels (conv, depthwise, fully connected) use: the Q31
// multiplier is reduced to Q15 (rounded, saturated to 0x7FFF), then one rounding right shift
// by 15 - shift (half rounds up). Valid for multiplier >= 0, shift in [-31, 14].
inline int32_t MultiplyByQuantizedMultiplier64(int64_t x, int32_t multiplier, int32_t shift) {
  const int32_t reduced = multiplier < 0x7FFF0000 ? ((multiplier + (1 << 15)) >> 16) : 0x7FFF;
  const int total_shift = 15 - shift;
  const int64_t round = int64_t{1} << (total_shift - 1);
  // Arithmetic right shift of a negative value (GCC/Clang, and C++20): floor division.
  return static_cast<int32_t>((x * reduced + round) >> total_shift);
}

// Clamps to [lo, hi].
// Adds an output zero point to a requantized value in two's-complement arithmetic: for every
// value a real model produces it is the plain int32 sum TFLite Micro computes; for a hostile
// file whose multiplier drives the value to the int32 limits it wraps instead of being
// undefined behaviour, and the clamp that follows keeps the output in its type's range.
inline int32_t AddZeroPoint(int32_t v, int32_t zero_point) {
  return static_cast<int32_t>(static_cast<uint32_t>(v) + static_cast<uint32_t>(zero_point));
}

inline int32_t Clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// How a call requantizes its int8 outputs, decided once per call (Requant8ModeOf):
//   kRequantGeneric    MultiplyByQuantizedMultiplierNonNeg, clamp to [lo, hi];
//   kRequantBounded    MultiplyByQuantizedMultiplierBounded (BoundedRequantOk holds), clamp;
//   kRequantBoundedFull the same with [lo, hi] = [-128, 127]: the clamp is one SSAT on Arm.
enum RequantMode { kRequantGeneric, kRequantBounded, kRequantBoundedFull };

inline RequantMode Requant8ModeOf(bool bounded, int32_t lo, int32_t hi) {
  if (!bounded) return kRequantGeneric;
  return lo == -128 && hi == 127 ? kRequantBoundedFull : kRequantBounded;
}

// Calls fn(std::integral_constant<int, mode>{}): one instantiation of a body per mode.
template <typename Fn>
inline void WithRequantMode(RequantMode mode, Fn&& fn) {
  switch (mode) {
    case kRequantBoundedFull:
      fn(std::integral_constant<int, kRequantBoundedFull>{});
      break;
    case kRequantBounded:
      fn(std::integral_constant<int, kRequantBounded>{});
      break;
    default:
      fn(std::integral_constant<int, kRequantGeneric>{});
      break;
  }
}

// acc requantized, plus the output zero point, clamped to [lo, hi], as int8 (mode as above).
template <int kMode>
inline int8_t RequantInt8(int32_t acc, int32_t multiplier, int32_t shift, int32_t out_off,
                       int32_t lo, int32_t hi) {
  const int32_t r = kMode == kRequantGeneric
                        ? MultiplyByQuantizedMultiplierNonNeg(acc, multiplier, shift)
                        : MultiplyByQuantizedMultiplierBounded(acc, multiplier, shift);
  const int32_t v = AddZeroPoint(r, out_off);
  if (kMode == kRequantBoundedFull) {
#if defined(__ARM_FEATURE_SAT) && __ARM_FEATURE_SAT
    return static_cast<int8_t>(__ssat(v, 8));
#else
    return static_cast<int8_t>(v < -128 ? -128 : (v > 127 ? 127 : v));
#endif
  }
  return static_cast<int8_t>(v < lo ? lo : (v > hi ? hi : v));
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_REQUANTIZE_H_
