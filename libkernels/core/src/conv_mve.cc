// Conv, MVE (Helium) body. One group (and an int8 zero point): four output pixels at a time are
// gathered into int8 im2col columns (padding = the input zero point; 1x1 reads the input in
// place), then each filter row is loaded once per 16 lanes and multiplied into the four columns
// with VMLADAVA.S8; the input offset enters through per-channel weight sums, folded with the
// bias and the split shifts into per-channel constants once per call, and each channel's four
// results are requantized branch-free in one vector and stored with one byte scatter. Other
// cases (grouped, or offsets beyond int8) use the row-run path below when dilation_w is 1 and
// the scalar body otherwise.
// Conv16x8 (one group, dilation_w 1; else the scalar body): each output pixel's in-bounds
// window rows are contiguous runs of int16 input, read in place against two filter rows at a
// time (VLDRB.S16 widening, VMLALDAVA.S16 into TFLite's int64 accumulator).
#include "conv_internal.h"
#include "internal/im2col.h"
#include "internal/mve_helpers.h"
#include "internal/mve_s16.h"
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
      AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[oc], q.shift[oc]), p.output_offset);
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

// Per-channel epilogue constants of the im2col path, prepared once per call.
struct ChannelQuant {
  int32_t extra;  // input_offset * (sum of the filter row) + bias (mod 2^32)
  int32_t multiplier;
  int32_t left;   // max(shift, 0)
  int32_t right;  // min(shift, 0)
};

// Four columns (c[0..3], k int8 each) against every filter row. Missing columns (count < 4)
// repeat column 0 and write the same bytes as it. kRightOnly: every shift <= -1 (no left
// shift, and the rounding fixup applies to every negative lane).
template <bool kRightOnly>
__attribute__((noinline)) void Columns4(const ConvParams& p, const int8_t* filter,
                                        const ChannelQuant* cq, const int8_t* const c[4],
                                        int32_t k, int8_t* const out[4]) {
  // Everything in locals: the output stores could alias memory the compiler would reload.
  const int32_t out_c = p.output.c, out_off = p.output_offset;
  const int32x4_t lo = vdupq_n_s32(p.activation.min), hi = vdupq_n_s32(p.activation.max);
  const int8_t *const c0 = c[0], *const c1 = c[1], *const c2 = c[2], *const c3 = c[3];
  // The four pixels' outputs of one channel, stored with one scatter (byte offsets from out[0]).
  uint32_t offsets[4];
  for (int j = 0; j < 4; ++j) offsets[j] = static_cast<uint32_t>(out[j] - out[0]);
  const uint32x4_t scatter = vld1q_u32(offsets);
  int8_t* o = out[0];
  const int8_t* w = filter;
  const int32_t vectors = k >> 4;
  const int32_t rest = k & 15;
  for (int32_t oc = 0; oc < out_c; ++oc, ++o, ++cq) {
    const int8_t *p0 = c0, *p1 = c1, *p2 = c2, *p3 = c3;
    int32_t d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    // Whole vectors unpredicated (GCC keeps this loop in registers), then one predicated tail.
    for (int32_t i = vectors; i > 0; --i) {
      const int8x16_t wv = vld1q_s8(w);
      d0 = vmladavaq_s8(d0, vld1q_s8(p0), wv);
      d1 = vmladavaq_s8(d1, vld1q_s8(p1), wv);
      d2 = vmladavaq_s8(d2, vld1q_s8(p2), wv);
      d3 = vmladavaq_s8(d3, vld1q_s8(p3), wv);
      w += 16, p0 += 16, p1 += 16, p2 += 16, p3 += 16;
    }
    if (rest != 0) {
      const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(rest));
      const int8x16_t wv = vldrbq_z_s8(w, pr);
      d0 = vmladavaq_s8(d0, vldrbq_z_s8(p0, pr), wv);
      d1 = vmladavaq_s8(d1, vldrbq_z_s8(p1, pr), wv);
      d2 = vmladavaq_s8(d2, vldrbq_z_s8(p2, pr), wv);
      d3 = vmladavaq_s8(d3, vldrbq_z_s8(p3, pr), wv);
      w += rest;
    }
    // Requantize the four columns together: they share this channel's multiplier and shift.
    // Branch-free MulQuant: a zero left shift is the identity, and the rounding fixup is
    // masked off when the right shift is zero.
    int32x4_t acc = vdupq_n_s32(d0);
    acc = vsetq_lane_s32(d1, acc, 1);
    acc = vsetq_lane_s32(d2, acc, 2);
    acc = vsetq_lane_s32(d3, acc, 3);
    const ChannelQuant ch = *cq;
    acc = vaddq_n_s32(acc, ch.extra);
    if (!kRightOnly) acc = vshlq_r_s32(acc, ch.left);
    acc = vqrdmulhq_n_s32(acc, ch.multiplier);
    const int32x4_t fixup =
        kRightOnly ? vshrq_n_s32(acc, 31) : vshrq_n_s32(vandq_s32(acc, vdupq_n_s32(ch.right)), 31);
    acc = vrshlq_n_s32(vqaddq_s32(acc, fixup), ch.right);
    acc = vminq_s32(vmaxq_s32(vaddq_n_s32(acc, out_off), lo), hi);
    vstrbq_scatter_offset_s32(o, scatter, acc);
  }
}

// n bytes from s to d, or n copies of v to d, sixteen a step unpredicated and a predicated
// last step of 1 to 16 (no library call: the runs here are a few dozen bytes; GCC rebuilds the
// predicate of a VCTP inside a loop with four instructions, so only the tail has one).
inline void CopyS8(int8_t* d, const int8_t* s, int32_t n) {
  if (n <= 0) return;
  for (; n > 16; n -= 16, d += 16, s += 16) vst1q_s8(d, vld1q_s8(s));
  const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(n));  // 1 .. 16 bytes left
  vstrbq_p_s8(d, vldrbq_z_s8(s, pr), pr);
}
inline void FillS8(int8_t* d, int8x16_t v, int32_t n) {
  if (n <= 0) return;
  for (; n > 16; n -= 16, d += 16) vst1q_s8(d, v);
  vstrbq_p_s8(d, v, vctp8q(static_cast<uint32_t>(n)));
}

// Im2ColS8 for one group and dilation_w 1: each row's in-bounds taps are one contiguous run of
// the input, copied with CopyS8 and padded with the pad value on either side.
void Im2ColS8Runs(const Im2ColGeometry& g, const int8_t* image, int32_t out_y, int32_t out_x,
                  int8x16_t pad, int8_t* col) {
  const int32_t y0 = out_y * g.stride_h - g.pad_h;
  const int32_t x0 = out_x * g.stride_w - g.pad_w;
  const int32_t n_all = g.k_w * g.k_c;
  const int32_t lo = x0 < 0 ? (-x0 < g.k_w ? -x0 : g.k_w) : 0;
  int32_t hi = g.in_w - x0 < g.k_w ? g.in_w - x0 : g.k_w;
  if (hi < lo) hi = lo;
  const int32_t n_lo = lo * g.k_c, n_run = (hi - lo) * g.k_c;
  int8_t* dst = col;
  for (int32_t ky = 0; ky < g.k_h; ++ky, dst += n_all) {
    const int32_t iy = y0 + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) {
      FillS8(dst, pad, n_all);
      continue;
    }
    FillS8(dst, pad, n_lo);
    CopyS8(dst + n_lo, image + (static_cast<ptrdiff_t>(iy) * g.in_w + x0 + lo) * g.in_c, n_run);
    FillS8(dst + n_lo + n_run, pad, n_all - n_lo - n_run);
  }
}

void ConvIm2Col(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                const int8_t* filter, const int32_t* bias, int8_t* output, void* scratch) {
  const int32_t k = p.filter.h * p.filter.w * p.filter.c;
  // The input offset enters through the filter rows' sums, folded with the bias once per call.
  ChannelQuant* cq = static_cast<ChannelQuant*>(scratch);
  bool right_only = true;
  for (int32_t oc = 0; oc < p.output.c; ++oc) {
    const int32_t wsum = mve::SumS8(filter + static_cast<ptrdiff_t>(oc) * k, k);
    const int32_t shift = q.shift[oc];
    right_only = right_only && shift <= -1;
    cq[oc] = {mve::AddScaled(bias != nullptr ? bias[oc] : 0, p.input_offset, wsum),
              q.multiplier[oc], shift > 0 ? shift : 0, shift < 0 ? shift : 0};
  }
  int8_t* cols = reinterpret_cast<int8_t*>(cq + p.output.c);
  const bool in_place = ConvIs1x1(p);
  const Im2ColGeometry g{p.input.h, p.input.w, p.input.c, p.filter.h, p.filter.w, p.filter.c,
                         p.stride.h, p.stride.w, p.dilation.h, p.dilation.w,
                         p.padding.h, p.padding.w};
  const int8_t pad = static_cast<int8_t>(-p.input_offset);
  const int8x16_t pad_v = vdupq_n_s8(pad);
  const bool runs = p.dilation.w == 1;  // one group here (ConvMveIsIm2Col)
  const int32_t plane = p.output.h * p.output.w;
  const int32_t pixels = p.output.n * plane;
  const ptrdiff_t image_size = static_cast<ptrdiff_t>(p.input.h) * p.input.w * p.input.c;
  for (int32_t px = 0; px < pixels; px += 4) {
    const int32_t count = pixels - px < 4 ? pixels - px : 4;
    const int8_t* c[4];
    int8_t* out[4];
    for (int32_t j = 0; j < 4; ++j) {
      // Missing columns of the last group repeat the first; their results are not stored.
      const int32_t pj = px + (j < count ? j : 0);
      out[j] = output + static_cast<ptrdiff_t>(pj) * p.output.c;
      if (in_place) {
        c[j] = input + static_cast<ptrdiff_t>(pj) * k;
      } else if (j < count) {
        int8_t* col = cols + static_cast<ptrdiff_t>(j) * k;
        const int32_t b = pj / plane, r = pj % plane;
        if (runs) {
          Im2ColS8Runs(g, input + b * image_size, r / p.output.w, r % p.output.w, pad_v, col);
        } else {
          Im2ColS8(g, input + b * image_size, r / p.output.w, r % p.output.w, pad, col);
        }
        c[j] = col;
      } else {
        c[j] = cols;
      }
    }
    if (right_only) {
      Columns4<true>(p, filter, cq, c, k, out);
    } else {
      Columns4<false>(p, filter, cq, c, k, out);
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
  if (ConvMveIsIm2Col(params)) {
    ConvIm2Col(params, quant, input, filter, bias, output, scratch.buf);
  } else if (params.input.c == params.filter.c && params.dilation.w == 1) {
    ConvRuns(params, quant, input, filter, bias, output);
  } else {
    ConvLoopsInt8(params, quant, input, filter, bias, output);
  }
  return KernelStatus::kOk;
}

namespace {

// Two output channels' dot products over the window rows: `rows` runs of `run` int16 inputs
// (x_row apart) against the filter rows f0 and f0 + k_total (f_row apart). Out of line so the
// loop keeps its pointers and both 64-bit accumulators in registers (inlined into the pixel
// loop, GCC spills a pointer per step).
__attribute__((noinline)) void Dot16x8Pair(const int16_t* x, ptrdiff_t x_row, const int8_t* f0,
                                           int32_t f_row, int32_t k_total, int32_t rows,
                                           int32_t run, int64_t acc[2]) {
  int64_t a0 = 0, a1 = 0;
  for (int32_t r = 0; r < rows; ++r, x += x_row, f0 += f_row) {
    mve::DotS16S8x2<false>(x, f0, f0 + k_total, run, 0, &a0, &a1);
  }
  acc[0] = a0;
  acc[1] = a1;
}

void Conv16x8Runs(const ConvParams& p, const PerChannelRequant& q, const int16_t* input,
                  const int8_t* filter, const int64_t* bias, int16_t* out) {
  const int32_t in_h = p.input.h, in_w = p.input.w, c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w, out_c = p.output.c;
  const int32_t k_total = k_h * k_w * c;
  // Parameters in locals: the output stores could alias p and q.
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int64_t acc, int32_t oc) {
    if (bias != nullptr) acc += bias[oc];
    return static_cast<int16_t>(
        Clamp(MultiplyByQuantizedMultiplier64(acc, mult[oc], shift[oc]), lo, hi));
  };
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int16_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, k_h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < p.output.w; ++ox, out += out_c) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, 1, in_w, &kx_lo, &kx_hi);
        const int32_t run = (kx_hi - kx_lo) * c;
        const int16_t* x_first =
            image + (static_cast<ptrdiff_t>(y0 + ky_lo * p.dilation.h) * in_w + x0 + kx_lo) * c;
        const ptrdiff_t x_row = static_cast<ptrdiff_t>(p.dilation.h) * in_w * c;
        const int32_t f_first = (ky_lo * k_w + kx_lo) * c;
        int32_t oc = 0;
        for (; oc + 2 <= out_c; oc += 2) {
          int64_t acc[2];
          Dot16x8Pair(x_first, x_row, filter + static_cast<ptrdiff_t>(oc) * k_total + f_first,
                      k_w * c, k_total, ky_hi - ky_lo, run, acc);
          out[oc] = finish(acc[0], oc);
          out[oc + 1] = finish(acc[1], oc + 1);
        }
        if (oc < out_c) {
          const int8_t* f = filter + static_cast<ptrdiff_t>(oc) * k_total + f_first;
          const int16_t* x = x_first;
          int64_t a = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky, x += x_row, f += k_w * c) {
            a = mve::DotS16S8<false>(x, f, run, 0, a);
          }
          out[oc] = finish(a, oc);
        }
      }
    }
  }
}

}  // namespace

KernelStatus Conv16x8Mve(const ConvParams& params, const PerChannelRequant& quant,
                         const int16_t* input, const int8_t* filter, const int64_t* bias,
                         int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    Conv16x8ScratchBytes(params, Isa::kMve), true);
  if (st != KernelStatus::kOk) return st;
  if (!Conv16x8IsRuns(params)) {
    return Conv16x8Scalar(params, quant, input, filter, bias, output, scratch);
  }
  Conv16x8Runs(params, quant, input, filter, bias, output);
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
