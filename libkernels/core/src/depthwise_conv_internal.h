// Private: the variant bodies of DepthwiseConv/DepthwiseConv16x8, the outer-loop walker they
// share (ForEachDepthwisePixel) and their argument check.
#ifndef MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_
#define MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "internal/checks.h"
#include "internal/window.h"
#include "mica/kernels/depthwise_conv.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus DepthwiseConvScalar(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                                 const int8_t* input, const int8_t* filter, const int32_t* bias,
                                 int8_t* output, Scratch scratch);
KernelStatus DepthwiseConvDsp(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);
KernelStatus DepthwiseConvMve(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);
KernelStatus DepthwiseConv16x8Scalar(const DepthwiseConvParams& params,
                                     const PerChannelRequant& quant, const int16_t* input,
                                     const int8_t* filter, const int64_t* bias, int16_t* output,
                                     Scratch scratch);

KernelStatus DepthwiseConv16x8Dsp(const DepthwiseConvParams& params,
                                  const PerChannelRequant& quant, const int16_t* input,
                                  const int8_t* filter, const int64_t* bias, int16_t* output,
                                  Scratch scratch);
KernelStatus DepthwiseConv16x8Mve(const DepthwiseConvParams& params,
                                  const PerChannelRequant& quant, const int16_t* input,
                                  const int8_t* filter, const int64_t* bias, int16_t* output,
                                  Scratch scratch);

// The 16x8 SIMD bodies sum each channel's products in int32 before adding the int64 bias: every
// product of an int16 input and an int8 weight is at most 2^22 in magnitude, so up to 511 taps
// sum exactly (TFLite's int64 accumulator holds the same value). They run depth multiplier 1
// with at most that many taps; other calls use the scalar body.
constexpr int64_t kDepthwise16x8MaxTaps = 511;
inline bool Depthwise16x8Int32Taps(const DepthwiseConvParams& p) {
  return p.depth_multiplier == 1 && int64_t{p.filter.h} * p.filter.w <= kDepthwise16x8MaxTaps;
}

// The in-bounds taps of one output pixel: a rows x cols block starting at x_first (input, at
// channel 0) and w_first (filter, at channel 0). Tap (r, k) of input channel ic and output
// channel oc is x_first[r * x_row + k * x_col + ic] times w_first[r * w_row + k * w_col + oc].
template <typename In>
struct DepthwiseTaps {
  const In* x_first;
  const int8_t* w_first;
  int32_t rows, cols;
};

// Strides of the tap block, fixed for a call. `w_channels` is the filter's channel count
// (output.c); bodies for depth multiplier 1 pass input.c, the same value, so that the
// compiler keeps one register for both.
struct DepthwiseStrides {
  ptrdiff_t x_row, x_col, w_row, w_col;
};
inline DepthwiseStrides DepthwiseStridesOf(const DepthwiseConvParams& p, int32_t w_channels) {
  return {static_cast<ptrdiff_t>(p.dilation.h) * p.input.w * p.input.c,
          static_cast<ptrdiff_t>(p.dilation.w) * p.input.c,
          static_cast<ptrdiff_t>(p.filter.w) * w_channels, static_cast<ptrdiff_t>(w_channels)};
}

// The outer loop every depthwise body shares: batches, output rows and columns in order (NHWC
// output order), clipping each window to the image (TapRange). Calls `pixel(taps, out)` once
// per output pixel with `out` at the pixel's output channel 0; the body writes its output.c
// channels. `w_channels` as above.
template <typename In, typename Out, typename PixelFn>
inline void ForEachDepthwisePixel(const DepthwiseConvParams& p, const In* input,
                                  const int8_t* filter, Out* output, int32_t w_channels,
                                  PixelFn&& pixel) {
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_w = p.filter.w;
  for (int32_t b = 0; b < p.input.n; ++b) {
    const In* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, p.filter.h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, p.dilation.w, in_w, &kx_lo, &kx_hi);
        DepthwiseTaps<In> t;
        t.x_first = image + (static_cast<ptrdiff_t>(y0 + ky_lo * p.dilation.h) * in_w + x0 +
                             kx_lo * p.dilation.w) * in_c;
        t.w_first = filter + (static_cast<ptrdiff_t>(ky_lo) * k_w + kx_lo) * w_channels;
        t.rows = ky_hi - ky_lo;
        t.cols = kx_hi - kx_lo;
        pixel(t, output);
        output += p.output.c;  // NHWC: output pixels are consecutive
      }
    }
  }
}

KernelStatus CheckDepthwiseConv(const DepthwiseConvParams& p, const PerChannelRequant& quant,
                                const void* input, const void* filter, void* output,
                                const Scratch& scratch, size_t scratch_needed, bool wide);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_
