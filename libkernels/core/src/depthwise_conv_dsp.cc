// DepthwiseConv, DSP body. Depth multiplier 1 (the common case): four channels at a time,
// input widened with SXTAB16 (offset folded in), filter with SXTB16, per-lane SMLABB/SMLATT.
// Other depth multipliers use the scalar body. The 16x8 body does the same with int16 pairs.
#include "depthwise_conv_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

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

// Channels c .. c + 3 of one output pixel: four accumulators over a rows x cols tap block, then
// requantized into o[0..3] (kMode: the call's RequantMode); out of line so the tap loop and
// then the requantization each get the registers. kSameCol: the input and filter column
// strides are equal (dilation 1), one register for both.
template <int kMode, bool kSameCol>
__attribute__((noinline)) void Group4(const int8_t* xr, const int8_t* wr, int32_t rows,
                                      int32_t cols, const TapBlock& b, uint32_t off2,
                                      const Requant4& f, int32_t c, int8_t* o) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const ptrdiff_t w_col = b.w_col;
  const ptrdiff_t x_col = kSameCol ? w_col : b.x_col;
  for (int32_t r = 0; r < rows; ++r, xr += b.x_row, wr += b.w_row) {
    const int8_t* x = xr;
    const int8_t* w = wr;
    for (int32_t k = cols; k > 0; --k, x += x_col, w += w_col) {
      uint32_t xe, xo;
      dsp::Widen4(dsp::Load32(x), off2, &xe, &xo);
      const uint32_t wv = dsp::Load32(w);
      const uint32_t we = dsp::Sxtb16(wv), wo = dsp::Sxtb16Ror8(wv);
      a0 = dsp::Smlabb(xe, we, a0);
      a2 = dsp::Smlatt(xe, we, a2);
      a1 = dsp::Smlabb(xo, wo, a1);
      a3 = dsp::Smlatt(xo, wo, a3);
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

// kMode: the call's RequantMode.
template <int kMode>
void DepthwiseMult1(const DepthwiseConvParams& p, const PerChannelRequant& q, const int8_t* input,
                    const int8_t* filter, const int32_t* bias, int8_t* out) {
  // Parameters copied into the lambdas: the output stores could alias them.
  const int32_t c_count = p.input.c;
  const int32_t off = p.input_offset, out_off = p.output_offset;
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const uint32_t off2 = dsp::Pack16(off, off);
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
    for (; c + 4 <= c_count; c += 4, o += 4) {
      if (same_col) {
        Group4<kMode, true>(t.x_first + c, t.w_first + c, t.rows, t.cols, block, off2, requant4,
                            c, o);
      } else {
        Group4<kMode, false>(t.x_first + c, t.w_first + c, t.rows, t.cols, block, off2,
                             requant4, c, o);
      }
    }
    for (; c < c_count; ++c) {
      int32_t acc = 0;
      const int8_t* xr = t.x_first + c;
      const int8_t* wr = t.w_first + c;
      for (int32_t r = 0; r < t.rows; ++r, xr += x_row, wr += w_row) {
        for (int32_t k = 0; k < t.cols; ++k) acc += wr[k * c_count] * (xr[k * x_col] + off);
      }
      *o++ = finish(acc, c);
    }
  });
}

// 16x8, depth multiplier 1: four channels per step, int16 input pairs against int8 filter
// pairs (SXTB16 + PKHBT/PKHTB), per-lane SMLABB/SMLATT. Each product is at most 2^22 in
// magnitude, so up to 511 taps sum exactly in int32 before the int64 bias (TFLite's int64
// accumulator holds the same value).
void Depthwise16x8Mult1(const DepthwiseConvParams& p, const PerChannelRequant& q,
                        const int16_t* input, const int8_t* filter, const int64_t* bias,
                        int16_t* out) {
  const int32_t c_count = p.input.c;
  const DepthwiseStrides st = DepthwiseStridesOf(p, c_count);
  const auto finish = [&](int64_t acc, int32_t c) {
    if (bias != nullptr) acc += bias[c];
    const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[c], q.shift[c]);
    return static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
  };
  ForEachDepthwisePixel(p, input, filter, out, c_count, [&](DepthwiseTaps<int16_t> t, int16_t* o) {
    int32_t c = 0;
    for (; c + 4 <= c_count; c += 4) {
      int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      const int16_t* xr = t.x_first + c;
      const int8_t* wr = t.w_first + c;
      for (int32_t r = 0; r < t.rows; ++r, xr += st.x_row, wr += st.w_row) {
        const int16_t* x = xr;
        const int8_t* w = wr;
        for (int32_t k = 0; k < t.cols; ++k, x += st.x_col, w += c_count) {
          const uint32_t wv = dsp::Load32(w);
          const uint32_t we = dsp::Sxtb16(wv), wo = dsp::Sxtb16Ror8(wv);
          const uint32_t w01 = dsp::Pkhbt(we, wo), w23 = dsp::Pkhtb(wo, we);
          const uint32_t x01 = dsp::Load32(x), x23 = dsp::Load32(x + 2);
          a0 = dsp::Smlabb(x01, w01, a0);
          a1 = dsp::Smlatt(x01, w01, a1);
          a2 = dsp::Smlabb(x23, w23, a2);
          a3 = dsp::Smlatt(x23, w23, a3);
        }
      }
      *o++ = finish(a0, c);
      *o++ = finish(a1, c + 1);
      *o++ = finish(a2, c + 2);
      *o++ = finish(a3, c + 3);
    }
    for (; c < c_count; ++c) {
      int32_t acc = 0;
      const int16_t* xr = t.x_first + c;
      const int8_t* wr = t.w_first + c;
      for (int32_t r = 0; r < t.rows; ++r, xr += st.x_row, wr += st.w_row) {
        for (int32_t k = 0; k < t.cols; ++k) acc += wr[k * c_count] * xr[k * st.x_col];
      }
      *o++ = finish(acc, c);
    }
  });
}

}  // namespace

KernelStatus DepthwiseConv16x8Dsp(const DepthwiseConvParams& params,
                                  const PerChannelRequant& quant, const int16_t* input,
                                  const int8_t* filter, const int64_t* bias, int16_t* output,
                                  Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConv16x8ScratchBytes(params, Isa::kDsp),
                                             true);
  if (st != KernelStatus::kOk) return st;
  if (!Depthwise16x8Int32Taps(params)) {
    return DepthwiseConv16x8Scalar(params, quant, input, filter, bias, output, scratch);
  }
  Depthwise16x8Mult1(params, quant, input, filter, bias, output);
  return KernelStatus::kOk;
}

KernelStatus DepthwiseConvDsp(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConvScratchBytes(params, Isa::kDsp), false);
  if (st != KernelStatus::kOk) return st;
  if (params.depth_multiplier != 1) {
    return DepthwiseConvScalar(params, quant, input, filter, bias, output, scratch);
  }
  const bool bounded =
      BoundedRequantOk(int64_t{params.filter.h} * params.filter.w, params.input_offset, bias,
                       params.output.c, quant.shift, params.output.c);
  WithRequantMode(Requant8ModeOf(bounded, params.activation.min, params.activation.max),
                  [&](auto mode) {
                    DepthwiseMult1<decltype(mode)::value>(params, quant, input, filter, bias,
                                                          output);
                  });
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
