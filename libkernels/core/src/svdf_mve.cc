// SVDF, MVE (Helium) body: the feature matmul with VMLADAVA.S8 on raw int8 lanes, four filters
// per pass, the input zero point folded in exactly (mod 2^32) from the weight sums
// (sum w (x - zp) = sum w x - zp sum w); the time matmul with VMLADAVA.S16 (int16 state) or
// .S8 (int8 state) and the state zero point folded in the same way.
#include "internal/mve_helpers.h"
#include "svdf_internal.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int32_t MinusScaled(int32_t dot, int32_t zp, int32_t wsum) {
  return mve::AddScaled(dot, -zp, wsum);
}

struct MveDots {
  static void Feature(const int8_t* x, const int8_t* wf, int32_t n_filter, int32_t n_input,
                      int32_t zp, int32_t* acc) {
    int32_t f = 0;
    for (; f + 4 <= n_filter; f += 4) {
      const int8_t* w0 = wf + static_cast<int64_t>(f) * n_input;
      int32_t dot[4] = {0, 0, 0, 0}, wsum[4] = {0, 0, 0, 0};
      mve::DotS8x4(x, w0, w0 + n_input, w0 + 2 * n_input, w0 + 3 * n_input, n_input, dot, wsum);
      const int32x4_t a = vmlaq_n_s32(vld1q_s32(dot), vld1q_s32(wsum), -zp);
      vst1q_s32(acc + f, a);
    }
    for (; f < n_filter; ++f) {
      int32_t dot = 0, wsum = 0;
      mve::DotS8(x, wf + static_cast<int64_t>(f) * n_input, n_input, &dot, &wsum);
      acc[f] = MinusScaled(dot, zp, wsum);
    }
  }

  static int32_t Time(const int16_t* w, const int16_t* s, int32_t n, int32_t zp) {
    int32_t dot = 0, wsum = 0;
    for (int32_t i = n >> 3; i > 0; --i) {
      const int16x8_t wv = vld1q_s16(w);
      dot = vmladavaq_s16(dot, wv, vld1q_s16(s));
      wsum = vaddvaq_s16(wsum, wv);
      w += 8, s += 8;
    }
    if ((n & 7) != 0) {
      const mve_pred16_t pr = vctp16q(static_cast<uint32_t>(n & 7));
      const int16x8_t wv = vldrhq_z_s16(w, pr);
      dot = vmladavaq_s16(dot, wv, vldrhq_z_s16(s, pr));
      wsum = vaddvaq_s16(wsum, wv);
    }
    return MinusScaled(dot, zp, wsum);
  }

  static int32_t Time(const int8_t* w, const int8_t* s, int32_t n, int32_t zp) {
    int32_t dot = 0, wsum = 0;
    mve::DotS8(s, w, n, &dot, &wsum);
    return MinusScaled(dot, zp, wsum);
  }
};

}  // namespace

KernelStatus SvdfMve(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                     const int16_t* wt, const int32_t* bias, int16_t* state, int8_t* output,
                     Scratch scratch) {
  return SvdfStep<int16_t, MveDots>(p, input, wf, wt, bias, state, output, scratch);
}
KernelStatus SvdfInt8StateMve(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                              const int8_t* wt, const int32_t* bias, int8_t* state,
                              int8_t* output, Scratch scratch) {
  return SvdfStep<int8_t, MveDots>(p, input, wf, wt, bias, state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
