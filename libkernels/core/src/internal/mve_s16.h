// Helpers for the MVE (Helium) 16x8 bodies (int16 activations, int8 weights): dot products
// of int16 inputs with int8 weights widened on load (VLDRB.S16), accumulated exactly in 64
// bits by VMLALDAVA.S16 as TFLite's int64 accumulator; tails use VCTP predication with zeroing
// loads. Compiled only when MICA_KERNELS_BUILD_MVE.
#ifndef MICA_KERNELS_INTERNAL_MVE_S16_H_
#define MICA_KERNELS_INTERNAL_MVE_S16_H_

#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_MVE
#include <arm_mve.h>

#include <cstdint>

namespace mica {
namespace kernels {
namespace internal {
namespace mve {

// Eight int8 weights widened to int16, plus `w_off` when kOffset (|w + w_off| <= 383).
template <bool kOffset>
inline int16x8_t WeightsS16(const int8_t* w, int16_t w_off) {
  const int16x8_t v = vldrbq_s16(w);
  return kOffset ? vaddq_n_s16(v, w_off) : v;
}
template <bool kOffset>
inline int16x8_t WeightsS16(const int8_t* w, int16_t w_off, mve_pred16_t p) {
  const int16x8_t v = vldrbq_z_s16(w, p);
  return kOffset ? vaddq_m_n_s16(v, v, w_off, p) : v;
}

// acc[r] += sum_i x[i] * (w_r[i] + w_off) for two weight rows, i < n (one input load per
// eight products of each row).
template <bool kOffset>
inline void DotS16S8x2(const int16_t* x, const int8_t* w0, const int8_t* w1, int32_t n,
                       int16_t w_off, int64_t* acc0, int64_t* acc1) {
  int64_t a0 = *acc0, a1 = *acc1;
  for (int32_t i = n >> 3; i > 0; --i) {
    const int16x8_t xv = vld1q_s16(x);
    a0 = vmlaldavaq_s16(a0, xv, WeightsS16<kOffset>(w0, w_off));
    a1 = vmlaldavaq_s16(a1, xv, WeightsS16<kOffset>(w1, w_off));
    x += 8, w0 += 8, w1 += 8;
  }
  if ((n & 7) != 0) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n & 7));
    const int16x8_t xv = vldrhq_z_s16(x, p);  // zero lanes contribute nothing
    a0 = vmlaldavaq_s16(a0, xv, WeightsS16<kOffset>(w0, w_off, p));
    a1 = vmlaldavaq_s16(a1, xv, WeightsS16<kOffset>(w1, w_off, p));
  }
  *acc0 = a0;
  *acc1 = a1;
}

// acc += sum_i x[i] * (w[i] + w_off), i < n.
template <bool kOffset>
inline int64_t DotS16S8(const int16_t* x, const int8_t* w, int32_t n, int16_t w_off,
                        int64_t acc) {
  for (int32_t i = n >> 3; i > 0; --i) {
    acc = vmlaldavaq_s16(acc, vld1q_s16(x), WeightsS16<kOffset>(w, w_off));
    x += 8, w += 8;
  }
  if ((n & 7) != 0) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n & 7));
    acc = vmlaldavaq_s16(acc, vldrhq_z_s16(x, p), WeightsS16<kOffset>(w, w_off, p));
  }
  return acc;
}

}  // namespace mve
}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
#endif  // MICA_KERNELS_INTERNAL_MVE_S16_H_
