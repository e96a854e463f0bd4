// LSTM, MVE (Helium) body: the gates' matrix-vector products with VMLADAVA.S8 on raw int8
// lanes, four weight rows per pass, the zero point folded in exactly (mod 2^32) from the row
// sums: sum w (x - zp) = sum w x - zp sum w.
#include "internal/mve_helpers.h"
#include "lstm_internal.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct MveDots {
  static constexpr int32_t kRows = 4;
  static void Rows(const int8_t* w, int32_t n, const int8_t* x, int32_t zp, int32_t rows,
                   int32_t* acc) {
    if (rows == 4) {
      int32_t dot[4] = {0, 0, 0, 0}, wsum[4] = {0, 0, 0, 0};
      mve::DotS8x4(x, w, w + n, w + 2 * n, w + 3 * n, n, dot, wsum);
      vst1q_s32(acc, vmlaq_n_s32(vld1q_s32(dot), vld1q_s32(wsum), -zp));
      return;
    }
    for (int32_t r = 0; r < rows; ++r, w += n) {
      int32_t dot = 0, wsum = 0;
      mve::DotS8(x, w, n, &dot, &wsum);
      acc[r] = mve::AddScaled(dot, -zp, wsum);
    }
  }
};

}  // namespace

KernelStatus LstmMve(const LstmParams& p, const int8_t* input, int8_t* hidden_state,
                     int16_t* cell_state, int8_t* output, Scratch scratch) {
  return LstmRun<MveDots>(p, input, hidden_state, cell_state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
