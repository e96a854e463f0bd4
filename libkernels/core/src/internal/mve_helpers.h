// Helpers for the MVE (Helium) bodies; compiled only when MICA_KERNELS_BUILD_MVE.
//
// The int8 dot products use the offset identity sum w * (x + off) = sum w * x + off * sum w,
// which holds exactly modulo 2^32, so VMLADAVA.S8 / VADDVA.S8 on raw int8 lanes give TFLite's
// int32 accumulator bit for bit. Tails use VCTP predication with zeroing loads.
#ifndef MICA_KERNELS_INTERNAL_MVE_HELPERS_H_
#define MICA_KERNELS_INTERNAL_MVE_HELPERS_H_

#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_MVE
#include <arm_mve.h>

#include <cstdint>

namespace mica {
namespace kernels {
namespace internal {
namespace mve {

// *dot += sum x[i] * w[i];  *wsum += sum w[i]   for i < n. Whole vectors unpredicated, then
// one predicated tail (GCC keeps such loops in registers; a predicated main loop it spills).
inline void DotS8(const int8_t* x, const int8_t* w, int32_t n, int32_t* dot, int32_t* wsum) {
  int32_t d = *dot, s = *wsum;
  for (int32_t i = n >> 4; i > 0; --i) {
    const int8x16_t wv = vld1q_s8(w);
    d = vmladavaq_s8(d, vld1q_s8(x), wv);
    s = vaddvaq_s8(s, wv);
    x += 16, w += 16;
  }
  if ((n & 15) != 0) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n & 15));
    const int8x16_t wv = vldrbq_z_s8(w, p);
    d = vmladavaq_s8(d, vldrbq_z_s8(x, p), wv);
    s = vaddvaq_s8(s, wv);
  }
  *dot = d;
  *wsum = s;
}

// Four weight rows against one input run: dot[r] += x . w_r, wsum[r] += sum w_r.
inline void DotS8x4(const int8_t* x, const int8_t* w0, const int8_t* w1, const int8_t* w2,
                    const int8_t* w3, int32_t n, int32_t dot[4], int32_t wsum[4]) {
  int32_t d0 = dot[0], d1 = dot[1], d2 = dot[2], d3 = dot[3];
  int32_t s0 = wsum[0], s1 = wsum[1], s2 = wsum[2], s3 = wsum[3];
  for (int32_t i = n >> 4; i > 0; --i) {
    const int8x16_t xv = vld1q_s8(x);
    const int8x16_t a = vld1q_s8(w0), b = vld1q_s8(w1), c = vld1q_s8(w2), e = vld1q_s8(w3);
    d0 = vmladavaq_s8(d0, xv, a);
    d1 = vmladavaq_s8(d1, xv, b);
    d2 = vmladavaq_s8(d2, xv, c);
    d3 = vmladavaq_s8(d3, xv, e);
    s0 = vaddvaq_s8(s0, a);
    s1 = vaddvaq_s8(s1, b);
    s2 = vaddvaq_s8(s2, c);
    s3 = vaddvaq_s8(s3, e);
    x += 16, w0 += 16, w1 += 16, w2 += 16, w3 += 16;
  }
  if ((n & 15) != 0) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n & 15));
    const int8x16_t xv = vldrbq_z_s8(x, p);
    const int8x16_t a = vldrbq_z_s8(w0, p), b = vldrbq_z_s8(w1, p);
    const int8x16_t c = vldrbq_z_s8(w2, p), e = vldrbq_z_s8(w3, p);
    d0 = vmladavaq_s8(d0, xv, a);
    d1 = vmladavaq_s8(d1, xv, b);
    d2 = vmladavaq_s8(d2, xv, c);
    d3 = vmladavaq_s8(d3, xv, e);
    s0 = vaddvaq_s8(s0, a);
    s1 = vaddvaq_s8(s1, b);
    s2 = vaddvaq_s8(s2, c);
    s3 = vaddvaq_s8(s3, e);
  }
  dot[0] = d0, dot[1] = d1, dot[2] = d2, dot[3] = d3;
  wsum[0] = s0, wsum[1] = s1, wsum[2] = s2, wsum[3] = s3;
}

// Sum of n int8 values.
inline int32_t SumS8(const int8_t* x, int32_t n) {
  int32_t s = 0;
  for (int32_t i = n >> 4; i > 0; --i, x += 16) s = vaddvaq_s8(s, vld1q_s8(x));
  if ((n & 15) != 0) s = vaddvaq_s8(s, vldrbq_z_s8(x, vctp8q(static_cast<uint32_t>(n & 15))));
  return s;
}

// TFLite's MultiplyByQuantizedMultiplier (double rounding) on four lanes. VQRDMULH is
// SaturatingRoundingDoublingHighMul exactly; adding -1 (saturating) to negative lanes before
// the rounding shift VRSHL turns its round-half-up into RoundingDivideByPOT's half away from
// zero (gemmlowp's vector formulation). The left shift wraps, as the scalar code's does.
inline int32x4_t MulQuant(int32x4_t x, int32_t mult, int32_t shift) {
  if (shift > 0) x = vshlq_r_s32(x, shift);
  x = vqrdmulhq_n_s32(x, mult);
  if (shift < 0) x = vrshlq_n_s32(vqaddq_s32(x, vshrq_n_s32(x, 31)), shift);
  return x;
}

// The same with a multiplier and shift per lane.
inline int32x4_t MulQuantLanes(int32x4_t x, int32x4_t mult, int32x4_t shift) {
  const int32x4_t zero = vdupq_n_s32(0);
  const int32x4_t right = vminq_s32(shift, zero);  // -(right shift), <= 0
  x = vshlq_s32(x, vmaxq_s32(shift, zero));
  x = vqrdmulhq_s32(x, mult);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, right), 31);  // -1 iff x < 0 and right < 0
  return vrshlq_s32(vqaddq_s32(x, fixup), right);
}

// + offset, clamped to [lo, hi].
inline int32x4_t OffsetClamp(int32x4_t x, int32_t offset, int32_t lo, int32_t hi) {
  x = vaddq_n_s32(x, offset);
  return vminq_s32(vmaxq_s32(x, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

// acc (mod 2^32) of off * sum, without signed-overflow UB.
inline int32_t AddScaled(int32_t acc, int32_t off, int32_t sum) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) +
                              static_cast<uint32_t>(off) * static_cast<uint32_t>(sum));
}

}  // namespace mve
}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
#endif  // MICA_KERNELS_INTERNAL_MVE_HELPERS_H_
