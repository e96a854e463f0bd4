// Per-element arithmetic of the elementwise ops (shared by every variant) and the variant
// bodies' declarations.
#ifndef MICA_KERNELS_ELEMENTWISE_INTERNAL_H_
#define MICA_KERNELS_ELEMENTWISE_INTERNAL_H_

#include <climits>
#include <cstdint>

#include "internal/broadcast.h"
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

// The outer loop every MINIMUM / MAXIMUM body shares: validates like BinaryElementwise, then
// merges the output's innermost dimensions while each input walks them either contiguously or
// not at all (a broadcast input), and calls `row(a, b, b_one, out, n)` once per run of n
// output elements: out[i] = op(a[i], b_one ? b[0] : b[i]). A run where only input 1 is
// broadcast is passed with the inputs swapped (MINIMUM and MAXIMUM commute). A body differs
// only in its row function.
template <typename T, typename Row>
inline KernelStatus BinaryRows(const Shape& s1, const T* in1, const Shape& s2, const T* in2,
                               const Shape& so, T* out, Row row) {
  BroadcastPlan plan;
  if (!PlanBroadcast(s1, s2, so, &plan)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  // Innermost dimensions [k, kMaxRank) form one run of `len` elements per input walked
  // contiguously (c1/c2) or held (stride 0).
  int k = kMaxRank;
  int64_t len = 1;
  bool c1 = true, z1 = true, c2 = true, z2 = true;
  while (k > 0) {
    const int j = k - 1;
    if (plan.dims[j] != 1) {
      const bool nc1 = c1 && plan.stride1[j] == len, nz1 = z1 && plan.stride1[j] == 0;
      const bool nc2 = c2 && plan.stride2[j] == len, nz2 = z2 && plan.stride2[j] == 0;
      if (!(nc1 || nz1) || !(nc2 || nz2) || len * plan.dims[j] > INT32_MAX) break;
      c1 = nc1, z1 = nz1, c2 = nc2, z2 = nz2;
      len *= plan.dims[j];
    }
    k = j;
  }
  const int32_t run = static_cast<int32_t>(len);
  // A run of one element, or one that neither input walks, uses input 1 as the walker.
  const bool swap = z1 && !z2;
  int32_t idx[kMaxRank] = {};
  int64_t o = 0;
  while (true) {
    int64_t a = 0, b = 0;
    for (int j = 0; j < k; ++j) a += idx[j] * plan.stride1[j], b += idx[j] * plan.stride2[j];
    if (swap) {
      row(in2 + b, in1 + a, true, out + o, run);
    } else {
      row(in1 + a, in2 + b, z2 && run > 1, out + o, run);
    }
    o += run;
    int j = k - 1;
    while (j >= 0 && ++idx[j] == plan.dims[j]) idx[j--] = 0;
    if (j < 0) break;
  }
  return KernelStatus::kOk;
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

// MINIMUM / MAXIMUM bodies (BinaryRows with a row function per ISA).
#define MICA_KERNELS_MINMAX_BODIES(isa)                                                         \
  KernelStatus Minimum##isa(const Shape&, const int8_t*, const Shape&, const int8_t*,            \
                            const Shape&, int8_t*);                                             \
  KernelStatus Maximum##isa(const Shape&, const int8_t*, const Shape&, const int8_t*,            \
                            const Shape&, int8_t*);                                             \
  KernelStatus Minimum16##isa(const Shape&, const int16_t*, const Shape&, const int16_t*,        \
                              const Shape&, int16_t*);                                          \
  KernelStatus Maximum16##isa(const Shape&, const int16_t*, const Shape&, const int16_t*,        \
                              const Shape&, int16_t*);
MICA_KERNELS_MINMAX_BODIES(Scalar)
MICA_KERNELS_MINMAX_BODIES(Dsp)
MICA_KERNELS_MINMAX_BODIES(Mve)
#undef MICA_KERNELS_MINMAX_BODIES

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ELEMENTWISE_INTERNAL_H_
