// DepthwiseConv, MVE (Helium) body. Depth multiplier 1: eight channels per step in int16 lanes
// (VLDRB.S16, offset added, VMULLB / VMULLT into even / odd int32 accumulators, requantized with
// gathered per-channel parameters and narrowed back to channel order), then four channels per
// step in int32 lanes (VLDRB.S32) and a VCTP32-predicated tail. Other depth multipliers use the
// scalar body.
// DepthwiseConv16x8, depth multiplier 1 and at most kDepthwise16x8MaxTaps taps: eight channels
// per step (VLD1.16 inputs, VLDRB.S16 weights, VMULLB / VMULLT into even / odd int32 lanes,
// exact as each product is at most 2^22), the int64 bias and TFLite's int64 requantization in
// vectors when every shift is <= -2 and the biases fit (Requant16Apply, channel groups outermost
// so each group's parameters are formed once; else per channel); other cases use the scalar
// body.
#include <climits>
#include <type_traits>

#include "depthwise_conv_internal.h"
#include "internal/mve_helpers.h"
#include "internal/requantize.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
namespace {

// Accumulates four channels over the in-bounds taps; whole blocks unpredicated (GCC keeps
// them in registers), the channel tail predicated.
template <bool kTail>
inline int32x4_t Taps4(const int8_t* x_base, const int8_t* w_base, int32_t rows, ptrdiff_t x_row,
                       ptrdiff_t w_row, int32_t cols, ptrdiff_t x_col, ptrdiff_t w_col,
                       int32x4_t off, mve_pred16_t pred) {
  int32x4_t acc = vdupq_n_s32(0);
  for (int32_t r = 0; r < rows; ++r, x_base += x_row, w_base += w_row) {
    const int8_t* x = x_base;
    const int8_t* w = w_base;
    for (int32_t k = 0; k < cols; ++k, x += x_col, w += w_col) {
      const int32x4_t xv = kTail ? vldrbq_z_s32(x, pred) : vldrbq_s32(x);
      const int32x4_t wv = kTail ? vldrbq_z_s32(w, pred) : vldrbq_s32(w);
      acc = vaddq_s32(acc, vmulq_s32(vaddq_s32(xv, off), wv));
    }
  }
  return acc;
}

// Eight channels over the in-bounds taps in int16 lanes: (x + offset) fits int16 (the caller
// checks the offset), and VMULLB / VMULLT give the exact int32 products of the even and odd
// channels, accumulated in two int32x4 (even: channels 0, 2, 4, 6; odd: 1, 3, 5, 7).
// kGroups (1 or 2) groups of eight: acc[2g] even, acc[2g + 1] odd channels of group g. Two
// groups share the pointer steps and loop overhead. Out of line: inlined into the pixel body,
// GCC spills the offset and strides inside the tap loop (the requantization constants hold
// most vector registers there).
// Without pre-allocation scheduling: GCC would hoist all four loads of a tap above the
// arithmetic and spill an accumulator in the tap loop.
// The strides and offset of the tap loop, by reference: four register arguments instead of
// six more on the stack at every call.
struct Taps8Args {
  ptrdiff_t x_row, w_row, x_col, w_col;
  int16_t off;
};
template <int kGroups>
__attribute__((noinline, optimize("no-schedule-insns"))) void Taps8(
    const int8_t* x_base, const int8_t* w_base, int32_t rows, int32_t cols,
    const Taps8Args& a, int32x4_t* acc) {
  const ptrdiff_t x_row = a.x_row, w_row = a.w_row, x_col = a.x_col, w_col = a.w_col;
  const int16_t off = a.off;
  int32x4_t e0 = vdupq_n_s32(0), o0 = e0, e1 = e0, o1 = e0;
  for (int32_t r = 0; r < rows; ++r, x_base += x_row, w_base += w_row) {
    const int8_t* x = x_base;
    const int8_t* w = w_base;
    for (int32_t k = 0; k < cols; ++k, x += x_col, w += w_col) {
      // The second group first: loaded through x + 8 before x, GCC addresses both with
      // immediate offsets instead of post-incrementing copies of the pointers.
      if (kGroups == 2) {
        const int16x8_t xv1 = vaddq_n_s16(vldrbq_s16(x + 8), off);
        const int16x8_t wv1 = vldrbq_s16(w + 8);
        e1 = vaddq_s32(e1, vmullbq_int_s16(xv1, wv1));
        o1 = vaddq_s32(o1, vmulltq_int_s16(xv1, wv1));
      }
      const int16x8_t xv = vaddq_n_s16(vldrbq_s16(x), off);
      const int16x8_t wv = vldrbq_s16(w);
      e0 = vaddq_s32(e0, vmullbq_int_s16(xv, wv));
      o0 = vaddq_s32(o0, vmulltq_int_s16(xv, wv));
    }
  }
  acc[0] = e0;
  acc[1] = o0;
  if (kGroups == 2) {
    acc[2] = e1;
    acc[3] = o1;
  }
}

// Bias, requantization and output offset of four channels `step` apart starting at c
// (gathers), not clamped. kRightOnly: every shift is <= -1 (TFLite's usual case), so there is
// no left shift, the shift vector is the (negative) rounding right shift itself and the
// rounding fixup applies to every negative lane.
template <bool kRightOnly>
inline int32x4_t Requant4Strided(int32x4_t acc, const int32_t* bias, const int32_t* mult,
                                 const int32_t* shift, uint32x4_t idx, int32_t out_off) {
  if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_gather_shifted_offset_s32(bias, idx));
  const int32x4_t m = vldrwq_gather_shifted_offset_s32(mult, idx);
  const int32x4_t s = vldrwq_gather_shifted_offset_s32(shift, idx);
  if (kRightOnly) {
    acc = vqrdmulhq_s32(acc, m);
    const int32x4_t fixup = vshrq_n_s32(acc, 31);  // -1 iff acc < 0
    acc = vrshlq_s32(vqaddq_s32(acc, fixup), s);
  } else {
    acc = mve::MulQuantLanes(acc, m, s);
  }
  return vaddq_n_s32(acc, out_off);
}

void DepthwiseMult1(const DepthwiseConvParams& p, const PerChannelRequant& q, const int8_t* input,
                    const int8_t* filter, const int32_t* bias, int8_t* out) {
  // Everything the pixel body reads lives in locals captured by value: the int8 output stores
  // could alias `p` and `q`, and would otherwise force a reload of each per channel group.
  const int32_t c_count = p.input.c;
  const int32x4_t off = vdupq_n_s32(p.input_offset);
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const DepthwiseStrides st = DepthwiseStridesOf(p, c_count);
  const ptrdiff_t x_row = st.x_row, w_row = st.w_row, x_col = st.x_col;
  // int16 lanes hold x + offset for every int8 x when the offset is within int16 - 128.
  const bool wide_ok = p.input_offset >= -32640 && p.input_offset <= 32639;
  const int16_t off16 = static_cast<int16_t>(wide_ok ? p.input_offset : 0);
  const uint32x4_t idx = vidupq_n_u32(0, 2);  // channels 0, 2, 4, 6 of a group of eight
  bool right_only = true;
  for (int32_t c = 0; c < c_count; ++c) right_only = right_only && shift[c] <= -1;
  const bool full = lo == -128 && hi == 127;
  const Taps8Args targs{x_row, w_row, x_col, c_count, off16};
  ForEachDepthwisePixel(p, input, filter, out, c_count, [=](DepthwiseTaps<int8_t> t, int8_t* o) {
    int32_t c = 0;
    if (wide_ok) {
      // Requantizes eight channels (ch ..) and stores them in channel order. The tag's value:
      // bit 0, every shift <= 0; bit 1, the clamp is the full int8 range, which the saturating
      // narrowings (int32 -> int16 -> int8) apply by themselves.
      const auto finish8 = [&](auto tag, const int32x4_t* acc, int32_t ch, int8_t* dst) {
        constexpr bool kRight = (decltype(tag)::value & 1) != 0;
        constexpr bool kFull = (decltype(tag)::value & 2) != 0;
        int32x4_t even = Requant4Strided<kRight>(
            acc[0], bias == nullptr ? nullptr : bias + ch, mult + ch, shift + ch, idx, out_off);
        int32x4_t odd = Requant4Strided<kRight>(acc[1], bias == nullptr ? nullptr : bias + ch + 1,
                                                mult + ch + 1, shift + ch + 1, idx, out_off);
        if (kFull) {
          // Interleave back to channel order with saturation to int16, then to int8 in the low
          // byte of each int16 lane; VSTRB.16 stores those bytes.
          const int16x8_t h = vqmovntq_s32(vqmovnbq_s32(vdupq_n_s16(0), even), odd);
          vstrbq_s16(dst, vreinterpretq_s16_s8(vqmovnbq_s16(vdupq_n_s8(0), h)));
        } else {
          even = vminq_s32(vmaxq_s32(even, vdupq_n_s32(lo)), vdupq_n_s32(hi));
          odd = vminq_s32(vmaxq_s32(odd, vdupq_n_s32(lo)), vdupq_n_s32(hi));
          vstrbq_s16(dst, vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), even), odd));
        }
      };
      const auto groups = [&](auto tag) {
        int32x4_t acc[4];
        for (; c + 16 <= c_count; c += 16, o += 16) {
          Taps8<2>(t.x_first + c, t.w_first + c, t.rows, t.cols, targs, acc);
          finish8(tag, acc, c, o);
          finish8(tag, acc + 2, c + 8, o + 8);
        }
        if (c + 8 <= c_count) {
          Taps8<1>(t.x_first + c, t.w_first + c, t.rows, t.cols, targs, acc);
          finish8(tag, acc, c, o);
          c += 8;
          o += 8;
        }
      };
      if (right_only && full) {
        groups(std::integral_constant<int, 3>{});
      } else if (right_only) {
        groups(std::integral_constant<int, 1>{});
      } else {
        groups(std::integral_constant<int, 0>{});
      }
    }
    for (; c + 4 <= c_count; c += 4, o += 4) {
      int32x4_t acc = Taps4<false>(t.x_first + c, t.w_first + c, t.rows, x_row, w_row, t.cols,
                                   x_col, c_count, off, 0);
      if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_s32(bias + c));
      acc = mve::MulQuantLanes(acc, vldrwq_s32(mult + c), vldrwq_s32(shift + c));
      vstrbq_s32(o, mve::OffsetClamp(acc, out_off, lo, hi));  // low byte of each lane
    }
    if (c < c_count) {
      const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(c_count - c));
      int32x4_t acc = Taps4<true>(t.x_first + c, t.w_first + c, t.rows, x_row, w_row, t.cols,
                                  x_col, c_count, off, pred);
      if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_z_s32(bias + c, pred));
      acc = mve::MulQuantLanes(acc, vldrwq_z_s32(mult + c, pred), vldrwq_z_s32(shift + c, pred));
      vstrbq_p_s32(o, mve::OffsetClamp(acc, out_off, lo, hi), pred);
    }
  });
}

}  // namespace

KernelStatus DepthwiseConvMve(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConvScratchBytes(params, Isa::kMve), false);
  if (st != KernelStatus::kOk) return st;
  if (params.depth_multiplier != 1) {
    return DepthwiseConvScalar(params, quant, input, filter, bias, output, scratch);
  }
  DepthwiseMult1(params, quant, input, filter, bias, output);
  return KernelStatus::kOk;
}

namespace {

// Whether the eight-channel groups may requantize in vectors (Requant16Apply): every shift
// <= -2 (TFLite's total shift 15 - shift >= 17) and every bias small enough that bias plus an
// accumulator of `taps` products (each at most 2^22) fits int32. O(channels), once per call.
bool Requant16LanesOk(const PerChannelRequant& q, const int64_t* bias, int32_t channels,
                      int64_t taps) {
  const int64_t bias_max = INT32_MAX - taps * (int64_t{1} << 22);
  for (int32_t c = 0; c < channels; ++c) {
    if (q.shift[c] > -2) return false;
    if (bias != nullptr && (bias[c] > bias_max || bias[c] < -bias_max)) return false;
  }
  return true;
}

// TFLite's int64 16x8 requantization of four channels ch, ch + 2, ch + 4, ch + 6 (one even or
// odd accumulator vector), exact under Requant16LanesOk: with P = (acc + bias) * reduced and
// t = 15 - shift >= 17, (P + 2^(t-1)) >> t = VRSHL(VMULH(acc + bias, reduced << 16), t - 16)
// (VMULH is floor(P / 2^16); the dropped bits cannot carry past the rounding bit).
struct Requant16Params {
  int32x4_t mult;   // the Q15 multiplier in the high half-word
  int32x4_t shift;  // -(t - 16)
  int32x4_t bias;   // the biases' low words (they fit int32), or 0
};
inline Requant16Params Requant16ParamsOf(int32_t ch, const int32_t* mult, const int32_t* shift,
                                         const int64_t* bias) {
  const uint32x4_t lanes = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
  const int32x4_t m = vldrwq_gather_shifted_offset_s32(mult + ch, lanes);
  // Q31 -> Q15, rounded and capped at 0x7FFF.
  uint32x4_t reduced = vshrq_n_u32(vaddq_n_u32(vreinterpretq_u32_s32(m), 0x8000u), 16);
  reduced = vminq_u32(reduced, vdupq_n_u32(0x7FFFu));
  Requant16Params r;
  r.mult = vreinterpretq_s32_u32(vshlq_n_u32(reduced, 16));
  r.shift = vaddq_n_s32(vldrwq_gather_shifted_offset_s32(shift + ch, lanes), 1);
  r.bias = bias == nullptr ? vdupq_n_s32(0)
                           : vldrwq_gather_shifted_offset_s32(
                                 reinterpret_cast<const int32_t*>(bias + ch), vidupq_n_u32(0, 4));
  return r;
}
// Requantizes and stores (narrowed to int16, halfword scatter) at o[0], o[2], o[4], o[6].
inline void Requant16Apply(int32x4_t acc, const Requant16Params& r, int32x4_t lo, int32x4_t hi,
                           int16_t* o) {
  int32x4_t v = vmulhq_s32(vaddq_s32(acc, r.bias), r.mult);
  v = vrshlq_s32(v, r.shift);
  v = vminq_s32(vmaxq_s32(v, lo), hi);
  vstrhq_scatter_shifted_offset_s32(o, vidupq_n_u32(0, 2), v);
}

// Eight channels (fewer when `left` < 8: predicated) of one output pixel over its tap block:
// even / odd channel products summed in int32 lanes. Out of line so the tap loop keeps the
// strides and pointers in registers (inlined into the pixel loop, GCC reloads them per tap).
__attribute__((noinline)) void Taps16x8(const int16_t* xr, const int8_t* wr, int32_t rows,
                                        int32_t cols, const DepthwiseStrides& st, int32_t left,
                                        int32x4_t* even_out, int32x4_t* odd_out) {
  const ptrdiff_t x_row = st.x_row, w_row = st.w_row, x_col = st.x_col, w_col = st.w_col;
  int32x4_t even = vdupq_n_s32(0), odd = even;
  if (left >= 8) {
    for (int32_t r = 0; r < rows; ++r, xr += x_row, wr += w_row) {
      const int16_t* x = xr;
      const int8_t* w = wr;
      for (int32_t k = cols; k > 0; --k, x += x_col, w += w_col) {
        const int16x8_t xv = vld1q_s16(x), wv = vldrbq_s16(w);
        even = vaddq_s32(even, vmullbq_int_s16(xv, wv));
        odd = vaddq_s32(odd, vmulltq_int_s16(xv, wv));
      }
    }
  } else {
    const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(left));
    for (int32_t r = 0; r < rows; ++r, xr += x_row, wr += w_row) {
      const int16_t* x = xr;
      const int8_t* w = wr;
      for (int32_t k = cols; k > 0; --k, x += x_col, w += w_col) {
        const int16x8_t xv = vldrhq_z_s16(x, pred), wv = vldrbq_z_s16(w, pred);
        even = vaddq_s32(even, vmullbq_int_s16(xv, wv));
        odd = vaddq_s32(odd, vmulltq_int_s16(xv, wv));
      }
    }
  }
  *even_out = even;
  *odd_out = odd;
}

// kVectorRequant (Requant16LanesOk): channel groups of eight outermost, each group's
// requantization parameters formed once and applied in vectors at every pixel; the channel tail
// (and every channel otherwise) is requantized per channel.
template <bool kVectorRequant>
void Depthwise16x8Mult1(const DepthwiseConvParams& p, const PerChannelRequant& q,
                        const int16_t* input, const int8_t* filter, const int64_t* bias,
                        int16_t* out) {
  const int32_t c_count = p.input.c;
  const DepthwiseStrides st = DepthwiseStridesOf(p, c_count);
  // Parameters in locals: the output stores could alias p and q.
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int32_t acc, int32_t c) {
    int64_t a = acc;
    if (bias != nullptr) a += bias[c];
    return static_cast<int16_t>(Clamp(MultiplyByQuantizedMultiplier64(a, mult[c], shift[c]),
                                      lo, hi));
  };
  int32_t c0 = 0;  // first channel requantized per channel
  if (kVectorRequant) {
    const int32x4_t lo_v = vdupq_n_s32(lo), hi_v = vdupq_n_s32(hi);
    for (; c0 + 8 <= c_count; c0 += 8) {
      const int32_t c = c0;
      const Requant16Params pe = Requant16ParamsOf(c, mult, shift, bias);
      const Requant16Params po = Requant16ParamsOf(c + 1, mult, shift, bias);
      ForEachDepthwisePixel(p, input, filter, out, c_count,
                            [&](DepthwiseTaps<int16_t> t, int16_t* o) {
                              int32x4_t even, odd;
                              Taps16x8(t.x_first + c, t.w_first + c, t.rows, t.cols, st, 8,
                                       &even, &odd);
                              Requant16Apply(even, pe, lo_v, hi_v, o + c);
                              Requant16Apply(odd, po, lo_v, hi_v, o + c + 1);
                            });
    }
    if (c0 == c_count) return;
  }
  ForEachDepthwisePixel(p, input, filter, out, c_count, [&](DepthwiseTaps<int16_t> t, int16_t* o) {
    for (int32_t c = c0; c < c_count; c += 8) {
      const int32_t left = c_count - c;
      int32x4_t even, odd;
      Taps16x8(t.x_first + c, t.w_first + c, t.rows, t.cols, st, left, &even, &odd);
      int32_t e[4], d[4];
      vst1q_s32(e, even);
      vst1q_s32(d, odd);
      const int32_t n = left < 8 ? left : 8;
      for (int32_t j = 0; j < n; ++j) {
        o[c + j] = finish((j & 1) != 0 ? d[j >> 1] : e[j >> 1], c + j);
      }
    }
  });
}

}  // namespace

KernelStatus DepthwiseConv16x8Mve(const DepthwiseConvParams& params,
                                  const PerChannelRequant& quant, const int16_t* input,
                                  const int8_t* filter, const int64_t* bias, int16_t* output,
                                  Scratch scratch) {
  const KernelStatus st = CheckDepthwiseConv(params, quant, input, filter, output, scratch,
                                             DepthwiseConv16x8ScratchBytes(params, Isa::kMve),
                                             true);
  if (st != KernelStatus::kOk) return st;
  if (!Depthwise16x8Int32Taps(params)) {
    return DepthwiseConv16x8Scalar(params, quant, input, filter, bias, output, scratch);
  }
  if (Requant16LanesOk(quant, bias, params.output.c, int64_t{params.filter.h} * params.filter.w)) {
    Depthwise16x8Mult1<true>(params, quant, input, filter, bias, output);
  } else {
    Depthwise16x8Mult1<false>(params, quant, input, filter, bias, output);
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
