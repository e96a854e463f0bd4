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
        v = AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(static_cast<int32_t>(acc), q.multiplier[oc],
                                                q.shift[oc]), p.output_offset);
      }
      *o++ = static_cast<Out>(Clamp(v, p.activation.min, p.activation.max));
    }
  });
}

// The tap block's strides, and what requantizing an output needs, copied out of p and q (the
// output stores could alias those).
struct TapBlock {
  ptrdiff_t x_row, w_row, x_col, w_col;
};
struct Requant4 {
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t out_off, lo, hi;
};

// Channels c .. c + 3 of one output pixel: four accumulators over a rows x cols tap block,
// then requantized into o[0..3] (kMode: the call's RequantMode). Out of line so the tap loop
// and then the requantization each get the registers (inlined, GCC spills the accumulators
// and offset inputs to the stack). kSameCol: the input and filter column strides are equal
// (dilation 1), one register for both.
template <int kMode, bool kSameCol>
__attribute__((noinline)) void Group4(const int8_t* xr, const int8_t* wr, int32_t rows,
                                      int32_t cols, const TapBlock& b, int32_t off,
                                      const Requant4& f, int32_t c, int8_t* o) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const ptrdiff_t w_col = b.w_col;
  const ptrdiff_t x_col = kSameCol ? w_col : b.x_col;
  for (int32_t r = 0; r < rows; ++r, xr += b.x_row, wr += b.w_row) {
    const int8_t* x = xr;
    const int8_t* w = wr;
    for (int32_t k = 0; k < cols; ++k, x += x_col, w += w_col) {
      a0 += w[0] * (x[0] + off);
      a1 += w[1] * (x[1] + off);
      a2 += w[2] * (x[2] + off);
      a3 += w[3] * (x[3] + off);
    }
  }
  const int32_t acc[4] = {a0, a1, a2, a3};
  const int32_t* const bias = f.bias;
  const int32_t* const mult = f.mult + c;
  const int32_t* const shift = f.shift + c;
  const int32_t out_off = f.out_off, lo = f.lo, hi = f.hi;
  for (int i = 0; i < 4; ++i) {
    int32_t a = acc[i];
    if (bias != nullptr) a += bias[c + i];
    o[i] = RequantInt8<kMode>(a, mult[i], shift[i], out_off, lo, hi);
  }
}

// int8, depth multiplier 1: four channels per pass over pointer-stepped taps (the window's
// address arithmetic is shared by the four accumulators), then single channels. Parameters are
// copied into the lambdas: the output stores could alias them and force reloads. kMode:
// the call's RequantMode.
template <int kMode>
void DepthwiseInt8Mult1(const DepthwiseConvParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* out) {
  const int32_t c_count = p.input.c, off = p.input_offset, out_off = p.output_offset;
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const DepthwiseStrides st = DepthwiseStridesOf(p, c_count);
  const ptrdiff_t x_row = st.x_row, w_row = st.w_row, x_col = st.x_col;
  const TapBlock block{x_row, w_row, x_col, c_count};
  const bool same_col = x_col == c_count;
  const Requant4 requant4{bias, mult, shift, out_off, lo, hi};
  const auto finish = [=](int32_t acc, int32_t c) {
    if (bias != nullptr) acc += bias[c];
    return RequantInt8<kMode>(acc, mult[c], shift[c], out_off, lo, hi);
  };
  ForEachDepthwisePixel(p, input, filter, out, c_count, [=](DepthwiseTaps<int8_t> t, int8_t* o) {
    int32_t c = 0;
    for (; c + 4 <= c_count; c += 4) {
      if (same_col) {
        Group4<kMode, true>(t.x_first + c, t.w_first + c, t.rows, t.cols, block, off, requant4,
                            c, o);
      } else {
        Group4<kMode, false>(t.x_first + c, t.w_first + c, t.rows, t.cols, block, off, requant4,
                             c, o);
      }
      o += 4;
    }
    for (; c < c_count; ++c) {
      int32_t a = 0;
      const int8_t* xr = t.x_first + c;
      const int8_t* wr = t.w_first + c;
      for (int32_t r = 0; r < t.rows; ++r, xr += x_row, wr += w_row) {
        for (int32_t k = 0; k < t.cols; ++k) a += wr[k * c_count] * (xr[k * x_col] + off);
      }
      *o++ = finish(a, c);
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
    const bool bounded =
        BoundedRequantOk(int64_t{params.filter.h} * params.filter.w, params.input_offset, bias,
                         params.output.c, quant.shift, params.output.c);
    WithRequantMode(Requant8ModeOf(bounded, params.activation.min, params.activation.max),
                    [&](auto mode) {
                      DepthwiseInt8Mult1<decltype(mode)::value>(params, quant, input, filter,
                                                                bias, output);
                    });
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
