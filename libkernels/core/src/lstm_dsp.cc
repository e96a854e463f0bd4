// LSTM, DSP body: the gates' matrix-vector products four inputs at a time for two weight rows
// per call (SXTAB16 input minus its zero point, SXTB16 weights, SMLAD).
#include "internal/dsp_intrinsics.h"
#include "lstm_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct DspDots {
  static constexpr int32_t kRows = 2;
  static void Rows(const int8_t* w, int32_t n, const int8_t* x, int32_t zp, int32_t rows,
                   int32_t* acc) {
    const uint32_t off2 = dsp::Pack16(-zp, -zp);
    const bool pair = rows > 1;
    const int8_t* w0 = w;
    const int8_t* w1 = pair ? w0 + n : w0;
    int32_t a0 = 0, a1 = 0;
    int32_t i = 0;
    for (; i + 4 <= n; i += 4) {
      uint32_t xe, xo;
      dsp::Widen4(dsp::Load32(x + i), off2, &xe, &xo);
      const uint32_t v0 = dsp::Load32(w0 + i), v1 = dsp::Load32(w1 + i);
      a0 = dsp::Smlad(xe, dsp::Sxtb16(v0), a0);
      a0 = dsp::Smlad(xo, dsp::Sxtb16Ror8(v0), a0);
      a1 = dsp::Smlad(xe, dsp::Sxtb16(v1), a1);
      a1 = dsp::Smlad(xo, dsp::Sxtb16Ror8(v1), a1);
    }
    for (; i < n; ++i) {
      a0 += w0[i] * (x[i] - zp);
      a1 += w1[i] * (x[i] - zp);
    }
    acc[0] = a0;
    if (pair) acc[1] = a1;
  }
};

}  // namespace

KernelStatus LstmDsp(const LstmParams& p, const int8_t* input, int8_t* hidden_state,
                     int16_t* cell_state, int8_t* output, Scratch scratch) {
  return LstmRun<DspDots>(p, input, hidden_state, cell_state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
