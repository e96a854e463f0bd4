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
  const int32_t out_c = p.output.c, mult = p.depth_multiplier;
  const Acc in_off = p.input_offset;
  const DepthwiseStrides st = DepthwiseStridesOf(p, out_c);
  ForEachDepthwisePixel(p, input, filter, out, out_c, [&](DepthwiseTaps<In> t, Out* o) {
    for (int32_t oc = 0; oc < out_c; ++oc) {
      const int32_t ic = oc / mult;
      Acc acc = 0;
      const In* xr = t.x_first + ic;
      const int8_t* wr = t.w_first + oc;
      for (int32_t r = 0; r < t.rows; ++r, xr += st.x_row, wr += st.w_row) {
        for (int32_t k = 0; k < t.cols; ++k) {
          const Acc x = xr[k * st.x_col];
          acc += static_cast<Acc>(wr[k * st.w_col]) * (x + in_off);
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
      *o++ = static_cast<Out>(Clamp(v, p.activation.min, p.activation.max));
    }
  });
}

// int8, depth multiplier 1: four channels per pass over pointer-stepped taps (the window's
// address arithmetic is shared by the four accumulators).
void DepthwiseInt8Mult1(const DepthwiseConvParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* out) {
  const int32_t c_count = p.input.c, off = p.input_offset;
  const DepthwiseStrides st = DepthwiseStridesOf(p, c_count);
  const auto finish = [&](int32_t acc, int32_t c) {
    if (bias != nullptr) acc += bias[c];
    const int32_t v =
        MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[c], q.shift[c]) + p.output_offset;
    return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
  };
  ForEachDepthwisePixel(p, input, filter, out, c_count, [&](DepthwiseTaps<int8_t> t, int8_t* o) {
    for (int32_t c = 0; c < c_count; c += 4) {
      const int32_t n = c_count - c < 4 ? c_count - c : 4;
      int32_t a[4] = {0, 0, 0, 0};
      const int8_t* xr = t.x_first + c;
      const int8_t* wr = t.w_first + c;
      for (int32_t r = 0; r < t.rows; ++r, xr += st.x_row, wr += st.w_row) {
        const int8_t* x = xr;
        const int8_t* w = wr;
        for (int32_t k = 0; k < t.cols; ++k, x += st.x_col, w += c_count) {
          for (int32_t i = 0; i < n; ++i) a[i] += w[i] * (x[i] + off);
        }
      }
      for (int32_t i = 0; i < n; ++i) *o++ = finish(a[i], c + i);
    }
  });
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
