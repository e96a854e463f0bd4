// SVDF, DSP body: the feature matmul four inputs at a time for two filters per pass (SXTAB16
// input minus its zero point, SXTB16 weights, SMLAD), the time matmul two memory slots per
// SMLAD (int16 state: the raw lanes, the zero point folded in from the weight sum; int8 state:
// widened minus the zero point).
#include "internal/dsp_intrinsics.h"
#include "svdf_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct DspDots {
  static void Feature(const int8_t* x, const int8_t* wf, int32_t n_filter, int32_t n_input,
                      int32_t zp, int32_t* acc) {
    const uint32_t off2 = dsp::Pack16(-zp, -zp);
    for (int32_t f = 0; f < n_filter; f += 2) {
      const bool pair = f + 1 < n_filter;
      const int8_t* w0 = wf + static_cast<int64_t>(f) * n_input;
      const int8_t* w1 = pair ? w0 + n_input : w0;
      int32_t a0 = 0, a1 = 0;
      int32_t i = 0;
      for (; i + 4 <= n_input; i += 4) {
        uint32_t xe, xo;
        dsp::Widen4(dsp::Load32(x + i), off2, &xe, &xo);
        const uint32_t v0 = dsp::Load32(w0 + i), v1 = dsp::Load32(w1 + i);
        a0 = dsp::Smlad(xe, dsp::Sxtb16(v0), a0);
        a0 = dsp::Smlad(xo, dsp::Sxtb16Ror8(v0), a0);
        a1 = dsp::Smlad(xe, dsp::Sxtb16(v1), a1);
        a1 = dsp::Smlad(xo, dsp::Sxtb16Ror8(v1), a1);
      }
      for (; i < n_input; ++i) {
        a0 += w0[i] * (x[i] - zp);
        a1 += w1[i] * (x[i] - zp);
      }
      acc[f] = a0;
      if (pair) acc[f + 1] = a1;
    }
  }

  // sum w (s - zp) = sum w s - zp sum w (mod 2^32): SMLAD on the raw int16 pairs (it wraps as
  // the scalar uint32 sum does), the weight sum only when zp != 0.
  static int32_t Time(const int16_t* w, const int16_t* s, int32_t n, int32_t zp) {
    int32_t acc = 0, wsum = 0;
    int32_t m = 0;
    if (zp == 0) {
      for (; m + 2 <= n; m += 2) acc = dsp::Smlad(dsp::Load32(w + m), dsp::Load32(s + m), acc);
    } else {
      const uint32_t ones = dsp::Pack16(1, 1);
      for (; m + 2 <= n; m += 2) {
        const uint32_t wv = dsp::Load32(w + m);
        acc = dsp::Smlad(wv, dsp::Load32(s + m), acc);
        wsum = dsp::Smlad(wv, ones, wsum);
      }
    }
    uint32_t total = static_cast<uint32_t>(acc) - static_cast<uint32_t>(zp) *
                                                      static_cast<uint32_t>(wsum);
    for (; m < n; ++m) total += static_cast<uint32_t>(w[m] * (s[m] - zp));
    return static_cast<int32_t>(total);
  }

  static int32_t Time(const int8_t* w, const int8_t* s, int32_t n, int32_t zp) {
    const uint32_t off2 = dsp::Pack16(-zp, -zp);
    int32_t acc = 0;
    int32_t m = 0;
    for (; m + 4 <= n; m += 4) acc = dsp::Dot4(dsp::Load32(s + m), dsp::Load32(w + m), off2, acc);
    uint32_t total = static_cast<uint32_t>(acc);
    for (; m < n; ++m) total += static_cast<uint32_t>(w[m] * (s[m] - zp));
    return static_cast<int32_t>(total);
  }
};

}  // namespace

KernelStatus SvdfDsp(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                     const int16_t* wt, const int32_t* bias, int16_t* state, int8_t* output,
                     Scratch scratch) {
  return SvdfStep<int16_t, DspDots>(p, input, wf, wt, bias, state, output, scratch);
}
KernelStatus SvdfInt8StateDsp(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                              const int8_t* wt, const int32_t* bias, int8_t* state,
                              int8_t* output, Scratch scratch) {
  return SvdfStep<int8_t, DspDots>(p, input, wf, wt, bias, state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
