// LSTM, scalar body: TFLite Micro's integer reference loops for the gates' matrix-vector
// products.
#include "lstm_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct ScalarDots {
  static constexpr int32_t kRows = 1;
  static void Rows(const int8_t* w, int32_t n, const int8_t* x, int32_t zp, int32_t /*rows*/,
                   int32_t* acc) {
    int32_t a = 0;
    for (int32_t i = 0; i < n; ++i) a += w[i] * (x[i] - zp);
    acc[0] = a;
  }
};

}  // namespace

KernelStatus LstmScalar(const LstmParams& p, const int8_t* input, int8_t* hidden_state,
                        int16_t* cell_state, int8_t* output, Scratch scratch) {
  return LstmRun<ScalarDots>(p, input, hidden_state, cell_state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
