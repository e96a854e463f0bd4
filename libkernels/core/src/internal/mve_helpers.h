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

// *dot += sum x[i] * w[i];  *wsum += sum w[i]   for i < n.
inline void DotS8(const int8_t* x, const int8_t* w, int32_t n, int32_t* dot, int32_t* wsum) {
  int32_t d = *dot, s = *wsum;
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, p);
    const int8x16_t wv = vldrbq_z_s8(w + i, p);
    d = vmladavaq_s8(d, xv, wv);
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
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    const int8x16_t xv = vldrbq_z_s8(x + i, p);
    const int8x16_t a = vldrbq_z_s8(w0 + i, p);
    const int8x16_t b = vldrbq_z_s8(w1 + i, p);
    const int8x16_t c = vldrbq_z_s8(w2 + i, p);
    const int8x16_t e = vldrbq_z_s8(w3 + i, p);
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
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n - i));
    s = vaddvaq_s8(s, vldrbq_z_s8(x + i, p));
  }
  return s;
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
