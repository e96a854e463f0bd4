// Reference fixed-point requantization (TFLite's default double rounding and its int64 16x8
// path), written independently of the kernel core for tests: plain 64-bit arithmetic with
// explicit rounding rules, no shared code with libkernels/core/src/internal/requantize.h.
#ifndef MICA_TESTING_REFERENCE_FIXED_POINT_REF_H_
#define MICA_TESTING_REFERENCE_FIXED_POINT_REF_H_

#include <algorithm>
#include <cstdint>

namespace mica {
namespace testing {

// floor(a / 2^e) for any sign.
inline int64_t RefFloorShift(int64_t a, int e) {
  const int64_t d = int64_t{1} << e;
  int64_t q = a / d;
  if (a % d != 0 && a < 0) --q;
  return q;
}

// TFLite MultiplyByQuantizedMultiplier(int32, int32, int), double rounding:
//   1. x is shifted left by max(shift, 0), wrapping to int32;
//   2. high = round_half_away_from_zero(x * m / 2^31), with the single saturating case
//      x == m == INT32_MIN -> INT32_MAX (the nudge: +2^30 for a non-negative product,
//      1 - 2^30 for a negative one, then truncation toward zero);
//   3. result = round_half_away_from_zero(high / 2^max(-shift, 0)).
inline int32_t RefMultiplyByQuantizedMultiplier(int32_t x, int32_t m, int shift) {
  const int left = std::max(shift, 0), right = std::max(-shift, 0);
  const int32_t xs = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  int32_t high;
  if (xs == INT32_MIN && m == INT32_MIN) {
    high = INT32_MAX;
  } else {
    const int64_t ab = static_cast<int64_t>(xs) * m;
    const int64_t nudged = ab + (ab >= 0 ? (int64_t{1} << 30) : 1 - (int64_t{1} << 30));
    high = static_cast<int32_t>(nudged / (int64_t{1} << 31));  // truncates toward zero
  }
  if (right == 0) return high;
  const int64_t half = int64_t{1} << (right - 1);
  const int64_t mag = high < 0 ? -static_cast<int64_t>(high) : high;
  const int64_t q = (mag + half) >> right;
  return static_cast<int32_t>(high < 0 ? -q : q);
}

// TFLite MultiplyByQuantizedMultiplier(int64, int32, int) (16x8 kernels): the multiplier is
// rounded to Q15 (saturating at 0x7FFF), then floor((x * m15 + 2^(s-1)) / 2^s), s = 15 - shift.
inline int32_t RefMultiplyByQuantizedMultiplier64(int64_t x, int32_t m, int shift) {
  const int64_t m15 = m < 0x7FFF0000 ? (int64_t{m} + 32768) / 65536 : 0x7FFF;
  const int s = 15 - shift;
  return static_cast<int32_t>(RefFloorShift(x * m15 + (int64_t{1} << (s - 1)), s));
}

inline int32_t RefClamp(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(v, lo), hi));
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_REFERENCE_FIXED_POINT_REF_H_
