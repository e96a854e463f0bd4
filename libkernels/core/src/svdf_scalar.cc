// SVDF, scalar body: TFLite Micro's integer reference loops for the two dot products.
#include "svdf_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct ScalarDots {
  static void Feature(const int8_t* x, const int8_t* wf, int32_t n_filter, int32_t n_input,
                      int32_t zp, int32_t* acc) {
    for (int32_t f = 0; f < n_filter; ++f) {
      const int8_t* w = wf + static_cast<int64_t>(f) * n_input;
      int32_t a = 0;
      for (int32_t i = 0; i < n_input; ++i) a += w[i] * (x[i] - zp);
      acc[f] = a;
    }
  }
  // int32 accumulation as TFLite does; wraps (rather than being undefined) on overflow.
  template <typename StateT>
  static int32_t Time(const StateT* w, const StateT* s, int32_t n, int32_t zp) {
    uint32_t acc = 0;
    for (int32_t m = 0; m < n; ++m) acc += static_cast<uint32_t>(w[m] * (s[m] - zp));
    return static_cast<int32_t>(acc);
  }
};

}  // namespace

KernelStatus SvdfScalar(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                        const int16_t* wt, const int32_t* bias, int16_t* state, int8_t* output,
                        Scratch scratch) {
  return SvdfStep<int16_t, ScalarDots>(p, input, wf, wt, bias, state, output, scratch);
}
KernelStatus SvdfInt8StateScalar(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                                 const int8_t* wt, const int32_t* bias, int8_t* state,
                                 int8_t* output, Scratch scratch) {
  return SvdfStep<int8_t, ScalarDots>(p, input, wf, wt, bias, state, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
