// Per-element arithmetic of the elementwise ops (shared by every variant) and the variant
// bodies' declarations.
#ifndef MICA_KERNELS_ELEMENTWISE_INTERNAL_H_
#define MICA_KERNELS_ELEMENTWISE_INTERNAL_H_

#include <climits>
#include <cstdint>

#include "internal/requantize.h"
#include "mica/kernels/elementwise.h"

namespace mica {
namespace kernels {
namespace internal {

// Valid AddParams: left_shift in [0, 24], input/output shifts <= 0 and >= -31.
inline bool ValidAddParams(const AddParams& p, int32_t lo, int32_t hi) {
  return p.left_shift >= 0 && p.left_shift <= 24 && p.input1.shift <= 0 &&
         p.input1.shift >= -31 && p.input2.shift <= 0 && p.input2.shift >= -31 &&
         p.output.shift <= 0 && p.output.shift >= -31 && p.activation.min <= p.activation.max &&
         p.activation.min >= lo && p.activation.max <= hi;
}

inline bool ValidMulParams(const MulParams& p, int32_t lo, int32_t hi) {
  return p.output.shift <= 31 && p.output.shift >= -31 && p.activation.min <= p.activation.max &&
         p.activation.min >= lo && p.activation.max <= hi;
}

// x * 2^shift in int32, wrapping like TFLite's int32 arithmetic does in practice.
inline int32_t ShiftLeftWrap(int32_t x, int shift) {
  return static_cast<int32_t>(static_cast<uint32_t>(x) << shift);
}

// MultiplyByQuantizedMultiplier with the high multiply written as one multiply-accumulate and
// an arithmetic shift: floor((x * m + 2^30) / 2^31) equals TFLite's nudge-and-truncate
// rounding for every product (ties go up either way); only -1 * -1 saturates. Same results as
// internal::MultiplyByQuantizedMultiplier, fewer instructions on 32-bit cores (SMLAL + shifts).
inline int32_t FastMbqm(int32_t x, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0;
  const int right = shift > 0 ? 0 : -shift;
  const int32_t xs = ShiftLeftWrap(x, left);
  int32_t high;
  if (xs == INT32_MIN && multiplier == INT32_MIN) {
    high = INT32_MAX;
  } else {
    high = static_cast<int32_t>((static_cast<int64_t>(xs) * multiplier + (int64_t{1} << 30)) >> 31);
  }
  return RoundingDivideByPOT(high, right);
}

// One ADD (sign = +1) or SUB (sign = -1) element, TFLite's general quantized path.
template <int kSign>
inline int32_t AddSubElement(const AddParams& p, int32_t a, int32_t b) {
  const int32_t shifted1 = ShiftLeftWrap(a + p.input1_offset, p.left_shift);
  const int32_t shifted2 = ShiftLeftWrap(b + p.input2_offset, p.left_shift);
  const int32_t scaled1 = FastMbqm(shifted1, p.input1.multiplier,
                                                        p.input1.shift);
  const int32_t scaled2 = FastMbqm(shifted2, p.input2.multiplier,
                                                        p.input2.shift);
  const int32_t raw = kSign > 0 ? scaled1 + scaled2 : scaled1 - scaled2;
  const int32_t out =
      FastMbqm(raw, p.output.multiplier, p.output.shift) + p.output_offset;
  return Clamp(out, p.activation.min, p.activation.max);
}

inline int32_t MulElement(const MulParams& p, int32_t a, int32_t b) {
  const int32_t prod = static_cast<int32_t>(static_cast<uint32_t>(a + p.input1_offset) *
                                           static_cast<uint32_t>(b + p.input2_offset));
  const int32_t out =
      FastMbqm(prod, p.output.multiplier, p.output.shift) + p.output_offset;
  return Clamp(out, p.activation.min, p.activation.max);
}

inline int32_t SquaredDifferenceElement(const AddParams& p, int32_t a, int32_t b) {
  const int32_t shifted1 = ShiftLeftWrap(a + p.input1_offset, p.left_shift);
  const int32_t shifted2 = ShiftLeftWrap(b + p.input2_offset, p.left_shift);
  const int32_t scaled1 = FastMbqm(shifted1, p.input1.multiplier,
                                                        p.input1.shift);
  const int32_t scaled2 = FastMbqm(shifted2, p.input2.multiplier,
                                                        p.input2.shift);
  const int32_t diff = scaled1 - scaled2;
  // int32 product as TFLite computes it (wraps modulo 2^32 for extreme int16 inputs).
  const int32_t sq = static_cast<int32_t>(static_cast<uint32_t>(diff) * static_cast<uint32_t>(diff));
  const int32_t out =
      FastMbqm(sq, p.output.multiplier, p.output.shift) + p.output_offset;
  return Clamp(out, p.activation.min, p.activation.max);
}

// Variant bodies.
KernelStatus AddScalar(const AddParams&, const Shape&, const int8_t*, const Shape&,
                       const int8_t*, const Shape&, int8_t*);
KernelStatus Add16Scalar(const AddParams&, const Shape&, const int16_t*, const Shape&,
                         const int16_t*, const Shape&, int16_t*);
KernelStatus SubScalar(const AddParams&, const Shape&, const int8_t*, const Shape&,
                       const int8_t*, const Shape&, int8_t*);
KernelStatus Sub16Scalar(const AddParams&, const Shape&, const int16_t*, const Shape&,
                         const int16_t*, const Shape&, int16_t*);
KernelStatus MulScalar(const MulParams&, const Shape&, const int8_t*, const Shape&,
                       const int8_t*, const Shape&, int8_t*);
KernelStatus Mul16Scalar(const MulParams&, const Shape&, const int16_t*, const Shape&,
                         const int16_t*, const Shape&, int16_t*);
KernelStatus AddDsp(const AddParams&, const Shape&, const int8_t*, const Shape&, const int8_t*,
                    const Shape&, int8_t*);
KernelStatus MulDsp(const MulParams&, const Shape&, const int8_t*, const Shape&, const int8_t*,
                    const Shape&, int8_t*);
KernelStatus AddMve(const AddParams&, const Shape&, const int8_t*, const Shape&, const int8_t*,
                    const Shape&, int8_t*);
KernelStatus MulMve(const MulParams&, const Shape&, const int8_t*, const Shape&, const int8_t*,
                    const Shape&, int8_t*);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ELEMENTWISE_INTERNAL_H_
