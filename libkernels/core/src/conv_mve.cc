// Conv, MVE (Helium) body: one group with dilation_w 1 (which covers 1x1, 1xN and the usual
// KxK convolutions) reads each kernel row's in-bounds taps as one contiguous int8 run and
// accumulates four output channels per pass with VMLADAVA.S8, folding the input offset in via
// the weight sums. Grouped or horizontally dilated convolutions use the scalar body.
#include "conv_internal.h"
#include "internal/mve_helpers.h"
#include "internal/requantize.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int8_t Finish(int32_t dot, int32_t wsum, const int32_t* bias, int32_t oc,
                     const PerChannelRequant& q, const ConvParams& p) {
  int32_t acc = mve::AddScaled(dot, p.input_offset, wsum);
  if (bias != nullptr) acc += bias[oc];
  const int32_t v =
      MultiplyByQuantizedMultiplier(acc, q.multiplier[oc], q.shift[oc]) + p.output_offset;
  return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
}

void ConvRuns(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
              const int8_t* filter, const int32_t* bias, int8_t* out) {
  const int32_t in_h = p.input.h, in_w = p.input.w, c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w, out_c = p.output.c;
  const ptrdiff_t k_total = static_cast<ptrdiff_t>(k_h) * k_w * c;
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int8_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, k_h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, 1, in_w, &kx_lo, &kx_hi);
        const int32_t run = (kx_hi - kx_lo) * c;
        int32_t oc = 0;
        for (; oc + 4 <= out_c; oc += 4) {
          const int8_t* f = filter + oc * k_total;
          int32_t dot[4] = {0, 0, 0, 0}, wsum[4] = {0, 0, 0, 0};
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int8_t* x =
                image + (static_cast<ptrdiff_t>(y0 + ky * p.dilation.h) * in_w + x0 + kx_lo) * c;
            const int8_t* f0 = f + (ky * k_w + kx_lo) * c;
            mve::DotS8x4(x, f0, f0 + k_total, f0 + 2 * k_total, f0 + 3 * k_total, run, dot, wsum);
          }
          for (int r = 0; r < 4; ++r) *out++ = Finish(dot[r], wsum[r], bias, oc + r, q, p);
        }
        for (; oc < out_c; ++oc) {
          const int8_t* f = filter + oc * k_total;
          int32_t dot = 0, wsum = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int8_t* x =
                image + (static_cast<ptrdiff_t>(y0 + ky * p.dilation.h) * in_w + x0 + kx_lo) * c;
            mve::DotS8(x, f + (ky * k_w + kx_lo) * c, run, &dot, &wsum);
          }
          *out++ = Finish(dot, wsum, bias, oc, q, p);
        }
      }
    }
  }
}

}  // namespace

KernelStatus ConvMve(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    ConvScratchBytes(params, Isa::kMve), false);
  if (st != KernelStatus::kOk) return st;
  if (params.input.c != params.filter.c || params.dilation.w != 1) {
    return ConvScalar(params, quant, input, filter, bias, output, scratch);
  }
  ConvRuns(params, quant, input, filter, bias, output);
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
