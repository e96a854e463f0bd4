// DepthwiseConv / DepthwiseConv16x8, scalar bodies.
#include "depthwise_conv_internal.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

template <typename In, typename Acc, typename Bias, typename Out, bool kWide>
void DepthwiseLoops(const DepthwiseConvParams& p, const PerChannelRequant& q, const In* input,
                    const int8_t* filter, const Bias* bias, Out* out) {
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_w = p.filter.w, out_c = p.output.c, mult = p.depth_multiplier;
  const Acc in_off = p.input_offset;
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
        for (int32_t oc = 0; oc < out_c; ++oc) {
          const int32_t ic = oc / mult;
          Acc acc = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const In* row = image + static_cast<ptrdiff_t>(y0 + ky * p.dilation.h) * in_w * in_c;
            const int8_t* f_row = filter + static_cast<ptrdiff_t>(ky) * k_w * out_c;
            for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
              const Acc x = row[static_cast<ptrdiff_t>(x0 + kx * p.dilation.w) * in_c + ic];
              acc += static_cast<Acc>(f_row[kx * out_c + oc]) * (x + in_off);
            }
          }
          if (bias != nullptr) acc += bias[oc];
          int32_t v;
          if (kWide) {
            v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[oc], q.shift[oc]);
          } else {
            v = MultiplyByQuantizedMultiplierNonNeg(static_cast<int32_t>(acc), q.multiplier[oc],
                                              q.shift[oc]) +
                p.output_offset;
          }
          *out++ = static_cast<Out>(Clamp(v, p.activation.min, p.activation.max));
        }
      }
    }
  }
}

// int8, depth multiplier 1: four channels per pass over pointer-stepped taps (the window's
// address arithmetic is shared by the four accumulators).
void DepthwiseInt8Mult1(const DepthwiseConvParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* out) {
  const int32_t in_h = p.input.h, in_w = p.input.w, c_count = p.input.c;
  const int32_t k_w = p.filter.w, off = p.input_offset;
  const ptrdiff_t x_row = static_cast<ptrdiff_t>(p.dilation.h) * in_w * c_count;
  const ptrdiff_t w_row = static_cast<ptrdiff_t>(k_w) * c_count;
  const ptrdiff_t x_col = static_cast<ptrdiff_t>(p.dilation.w) * c_count;
  const auto finish = [&](int32_t acc, int32_t c) {
    if (bias != nullptr) acc += bias[c];
    const int32_t v =
        MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[c], q.shift[c]) + p.output_offset;
    return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
  };
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int8_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * c_count;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, p.filter.h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, p.dilation.w, in_w, &kx_lo, &kx_hi);
        const int8_t* x_first =
            image + (static_cast<ptrdiff_t>(y0 + ky_lo * p.dilation.h) * in_w + x0 +
                     kx_lo * p.dilation.w) * c_count;
        const int8_t* w_first = filter + (static_cast<ptrdiff_t>(ky_lo) * k_w + kx_lo) * c_count;
        const int32_t rows = ky_hi - ky_lo, cols = kx_hi - kx_lo;
        for (int32_t c = 0; c < c_count; c += 4) {
          const int32_t n = c_count - c < 4 ? c_count - c : 4;
          int32_t a[4] = {0, 0, 0, 0};
          const int8_t* xr = x_first + c;
          const int8_t* wr = w_first + c;
          for (int32_t r = 0; r < rows; ++r, xr += x_row, wr += w_row) {
            const int8_t* x = xr;
            const int8_t* w = wr;
            for (int32_t k = 0; k < cols; ++k, x += x_col, w += c_count) {
              for (int32_t i = 0; i < n; ++i) a[i] += w[i] * (x[i] + off);
            }
          }
          for (int32_t i = 0; i < n; ++i) *out++ = finish(a[i], c + i);
        }
      }
    }
  }
}

}  // namespace

KernelStatus DepthwiseConvScalar(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                                 const int8_t* input, const int8_t* filter, const int32_t* bias,
                                 int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConvScratchBytes(params, Isa::kScalar),
                                             false);
  if (st != KernelStatus::kOk) return st;
  if (params.depth_multiplier == 1) {
    DepthwiseInt8Mult1(params, quant, input, filter, bias, output);
  } else {
    DepthwiseLoops<int8_t, int32_t, int32_t, int8_t, false>(params, quant, input, filter, bias,
                                                            output);
  }
  return KernelStatus::kOk;
}

KernelStatus DepthwiseConv16x8Scalar(const DepthwiseConvParams& params,
                                     const PerChannelRequant& quant, const int16_t* input,
                                     const int8_t* filter, const int64_t* bias, int16_t* output,
                                     Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConv16x8ScratchBytes(params, Isa::kScalar),
                                             true);
  if (st != KernelStatus::kOk) return st;
  DepthwiseLoops<int16_t, int64_t, int64_t, int16_t, true>(params, quant, input, filter, bias,
                                                           output);
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
