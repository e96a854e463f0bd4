// Conv / Conv16x8, DSP bodies (SIMD32: SXTB16 / SXTAB16 / SMLAD / SMLALD).
//
// One group, dilation_w 1 and k_c a multiple of 4 (1x1 included): four output pixels at a time
// gathered into four interleaved int16 im2col columns (offset applied, blocks of 4 permuted to
// SXTB16 lane order), each filter row widened once for the four (SMLAD). Other convs: two
// pixels' columns, 2 filter rows x 2 columns per pass. 1xN (kernel height 1, dilation 1, not
// 1x1) reads the input in place. On the host the intrinsics are emulated bit-exactly
// (dsp_intrinsics.h).
#include "conv_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/im2col.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

using dsp::Load32;

// Requantization of the int8 paths, its parameters copied out of `p` / `q`: the output stores
// could alias those, and would force a reload of each per output. kMode: the call's
// RequantMode.
template <int kMode>
struct Requant8 {
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t out_off, lo, hi;
  Requant8(const ConvParams& p, const PerChannelRequant& q, const int32_t* b)
      : bias(b), mult(q.multiplier), shift(q.shift), out_off(p.output_offset),
        lo(p.activation.min), hi(p.activation.max) {}
  int8_t operator()(int32_t acc, int32_t oc) const {
    if (bias != nullptr) acc += bias[oc];
    return RequantInt8<kMode>(acc, mult[oc], shift[oc], out_off, lo, hi);
  }
};

// acc + sum_i f[i] * (x[i] + off) over n int8 values read in place, for two filter rows.
inline void DotDirect2(const int8_t* x, const int8_t* f0, const int8_t* f1, int32_t n,
                       int32_t off, int32_t* acc0, int32_t* acc1) {
  const uint32_t off2 = dsp::Pack16(off, off);
  int32_t a0 = *acc0, a1 = *acc1;
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t xe, xo;
    dsp::Widen4(Load32(x + i), off2, &xe, &xo);
    const uint32_t w0 = Load32(f0 + i), w1 = Load32(f1 + i);
    a0 = dsp::Smlad(xe, dsp::Sxtb16(w0), a0);
    a0 = dsp::Smlad(xo, dsp::Sxtb16Ror8(w0), a0);
    a1 = dsp::Smlad(xe, dsp::Sxtb16(w1), a1);
    a1 = dsp::Smlad(xo, dsp::Sxtb16Ror8(w1), a1);
  }
  for (; i < n; ++i) {
    a0 += f0[i] * (x[i] + off);
    a1 += f1[i] * (x[i] + off);
  }
  *acc0 = a0;
  *acc1 = a1;
}

inline int32_t DotDirect1(const int8_t* x, const int8_t* f, int32_t n, int32_t off, int32_t acc) {
  const uint32_t off2 = dsp::Pack16(off, off);
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) acc = dsp::Dot4(Load32(x + i), Load32(f + i), off2, acc);
  for (; i < n; ++i) acc += f[i] * (x[i] + off);
  return acc;
}

// Direct path: one group, dilation_w 1, so each kernel row's in-bounds taps are one run of
// contiguous input. Used for 1x1 stride 1 and for kernel height 1 (1xN).
template <int kMode>
void ConvDirect(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                const int8_t* filter, const int32_t* bias, int8_t* out) {
  const Requant8<kMode> finish(p, q, bias);
  const int32_t in_h = p.input.h, in_w = p.input.w, c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w;
  const int32_t out_c = p.output.c;
  const int32_t k_total = k_h * k_w * c;
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
        for (; oc + 2 <= out_c; oc += 2) {
          const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k_total;
          const int8_t* f1 = f0 + k_total;
          int32_t acc0 = 0, acc1 = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int32_t iy = y0 + ky * p.dilation.h;
            const int8_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + x0 + kx_lo) * c;
            const int32_t f_off = (ky * k_w + kx_lo) * c;
            DotDirect2(x, f0 + f_off, f1 + f_off, run, p.input_offset, &acc0, &acc1);
          }
          *out++ = finish(acc0, oc);
          *out++ = finish(acc1, oc + 1);
        }
        if (oc < out_c) {
          const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k_total;
          int32_t acc = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int32_t iy = y0 + ky * p.dilation.h;
            const int8_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + x0 + kx_lo) * c;
            acc = DotDirect1(x, f0 + (ky * k_w + kx_lo) * c, run, p.input_offset, acc);
          }
          *out++ = finish(acc, oc);
        }
      }
    }
  }
}

// 2 filter rows x 2 permuted int16 columns of length k.
inline void Dot2x2(const int8_t* f0, const int8_t* f1, const int16_t* c0, const int16_t* c1,
                   int32_t k, int32_t acc[4]) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const uint32_t w0 = Load32(f0 + i), w1 = Load32(f1 + i);
    const uint32_t w0e = dsp::Sxtb16(w0), w0o = dsp::Sxtb16Ror8(w0);
    const uint32_t w1e = dsp::Sxtb16(w1), w1o = dsp::Sxtb16Ror8(w1);
    const uint32_t c0e = Load32(c0 + i), c0o = Load32(c0 + i + 2);
    const uint32_t c1e = Load32(c1 + i), c1o = Load32(c1 + i + 2);
    a00 = dsp::Smlad(w0e, c0e, a00);
    a00 = dsp::Smlad(w0o, c0o, a00);
    a01 = dsp::Smlad(w0e, c1e, a01);
    a01 = dsp::Smlad(w0o, c1o, a01);
    a10 = dsp::Smlad(w1e, c0e, a10);
    a10 = dsp::Smlad(w1o, c0o, a10);
    a11 = dsp::Smlad(w1e, c1e, a11);
    a11 = dsp::Smlad(w1o, c1o, a11);
  }
  for (; i < k; ++i) {
    a00 += f0[i] * c0[i];
    a01 += f0[i] * c1[i];
    a10 += f1[i] * c0[i];
    a11 += f1[i] * c1[i];
  }
  acc[0] = a00;  // row 0, column 0
  acc[1] = a01;  // row 0, column 1
  acc[2] = a10;
  acc[3] = a11;
}

inline int32_t Dot1(const int8_t* f, const int16_t* col, int32_t k) {
  int32_t acc = 0;
  int32_t i = 0;
  for (; i + 4 <= k; i += 4) {
    const uint32_t w = Load32(f + i);
    acc = dsp::Smlad(dsp::Sxtb16(w), Load32(col + i), acc);
    acc = dsp::Smlad(dsp::Sxtb16Ror8(w), Load32(col + i + 2), acc);
  }
  for (; i < k; ++i) acc += f[i] * col[i];
  return acc;
}

// Im2ColS16 with permute for one group, dilation_w 1 and k_c a multiple of 4, into column j
// of four interleaved columns: block b (taps 4b .. 4b + 3) of column j at col[16 b + 4 j ..],
// so one pointer walks the four columns (Dot1x4). Each row's in-bounds taps are one
// contiguous run of whole blocks, widened a word at a time with SXTAB16 (offset folded in);
// its two halves {c0, c2}, {c1, c3} are the permuted order. `col` points at column j.
void Im2ColS16Runs(const Im2ColGeometry& g, const int8_t* image, int32_t out_y, int32_t out_x,
                   int32_t input_offset, int16_t* col) {
  const int32_t y0 = out_y * g.stride_h - g.pad_h;
  const int32_t x0 = out_x * g.stride_w - g.pad_w;
  const uint32_t off2 = dsp::Pack16(input_offset, input_offset);
  const int32_t blocks_all = g.k_w * g.k_c / 4;
  int16_t* d = col;
  const auto zero = [&d](int32_t blocks) {
    for (; blocks > 0; --blocks, d += 16) {
      dsp::Store32(d, 0);
      dsp::Store32(d + 2, 0);
    }
  };
  for (int32_t ky = 0; ky < g.k_h; ++ky) {
    const int32_t iy = y0 + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) {
      zero(blocks_all);
      continue;
    }
    const int32_t lo = x0 < 0 ? (-x0 < g.k_w ? -x0 : g.k_w) : 0;
    int32_t hi = g.in_w - x0 < g.k_w ? g.in_w - x0 : g.k_w;
    if (hi < lo) hi = lo;
    const int32_t b_lo = lo * g.k_c / 4, b_run = (hi - lo) * g.k_c / 4;
    zero(b_lo);
    const int8_t* src = image + (static_cast<ptrdiff_t>(iy) * g.in_w + x0 + lo) * g.in_c;
    for (int32_t i = b_run; i > 0; --i, src += 4, d += 16) {
      uint32_t even, odd;
      dsp::Widen4(Load32(src), off2, &even, &odd);
      dsp::Store32(d, even);
      dsp::Store32(d + 2, odd);
    }
    zero(blocks_all - b_lo - b_run);
  }
}

// One filter row (k = 4 * blocks int8) against four interleaved columns (Im2ColS16Runs):
// per block one weight word widened once (SXTB16, SXTB16 ROR 8) for four columns of two words
// each, eight SMLAD for sixteen MACs. Out of line so the loop has the registers.
__attribute__((noinline)) void Dot1x4(const int8_t* f, const int16_t* cols, int32_t blocks,
                                      int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
#if MICA_KERNELS_HAVE_DSP
  // In assembly: LDRD for each column's two words (GCC loads them one at a time).
  if (blocks > 0) {
    uint32_t we, wo, c0, c1;
    __asm__(
        "1:\n\t"
        "ldr %[wo], [%[f]], #4\n\t"
        "sxtb16 %[we], %[wo]\n\t"
        "sxtb16 %[wo], %[wo], ror #8\n\t"
        "ldrd %[c0], %[c1], [%[c]], #8\n\t"
        "smlad %[a0], %[we], %[c0], %[a0]\n\t"
        "smlad %[a0], %[wo], %[c1], %[a0]\n\t"
        "ldrd %[c0], %[c1], [%[c]], #8\n\t"
        "smlad %[a1], %[we], %[c0], %[a1]\n\t"
        "smlad %[a1], %[wo], %[c1], %[a1]\n\t"
        "ldrd %[c0], %[c1], [%[c]], #8\n\t"
        "smlad %[a2], %[we], %[c0], %[a2]\n\t"
        "smlad %[a2], %[wo], %[c1], %[a2]\n\t"
        "ldrd %[c0], %[c1], [%[c]], #8\n\t"
        "smlad %[a3], %[we], %[c0], %[a3]\n\t"
        "smlad %[a3], %[wo], %[c1], %[a3]\n\t"
        "subs %[n], %[n], #1\n\t"
        "bne 1b"
        : [f] "+r"(f), [c] "+r"(cols), [n] "+r"(blocks), [a0] "+r"(a0), [a1] "+r"(a1),
          [a2] "+r"(a2), [a3] "+r"(a3), [we] "=&r"(we), [wo] "=&r"(wo), [c0] "=&r"(c0),
          [c1] "=&r"(c1)
        :
        : "cc", "memory");
  }
#else
  for (; blocks > 0; --blocks, f += 4, cols += 16) {
    const uint32_t w = Load32(f);
    const uint32_t we = dsp::Sxtb16(w), wo = dsp::Sxtb16Ror8(w);
    a0 = dsp::Smlad(wo, Load32(cols + 2), dsp::Smlad(we, Load32(cols), a0));
    a1 = dsp::Smlad(wo, Load32(cols + 6), dsp::Smlad(we, Load32(cols + 4), a1));
    a2 = dsp::Smlad(wo, Load32(cols + 10), dsp::Smlad(we, Load32(cols + 8), a2));
    a3 = dsp::Smlad(wo, Load32(cols + 14), dsp::Smlad(we, Load32(cols + 12), a3));
  }
#endif
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// One group, dilation_w 1, k_c a multiple of 4 (1x1 included): four output pixels at a time
// (the last pass repeats its last pixel) gathered into four interleaved int16 columns, then
// each filter row against them (Dot1x4) and its four outputs requantized with the row's
// parameters loaded once.
template <int kMode>
void ConvIm2Col4(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                 const int8_t* filter, const int32_t* bias, int8_t* output, int16_t* cols) {
  const int32_t out_c = p.output.c;
  const int32_t k = p.filter.h * p.filter.w * p.filter.c;
  const Im2ColGeometry g{p.input.h, p.input.w, p.input.c, p.filter.h, p.filter.w, p.filter.c,
                         p.stride.h, p.stride.w, p.dilation.h, p.dilation.w,
                         p.padding.h, p.padding.w};
  const int32_t out_w = p.output.w;
  const int32_t plane = p.output.h * out_w;
  const int32_t pixels = p.output.n * plane;
  const ptrdiff_t image_size = static_cast<ptrdiff_t>(p.input.h) * p.input.w * p.input.c;
  // Requantization parameters by value: the output stores could alias p and q.
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  for (int32_t px = 0; px < pixels; px += 4) {
    const int32_t n = pixels - px < 4 ? pixels - px : 4;
    for (int32_t j = 0; j < 4; ++j) {
      const int32_t pj = px + (j < n ? j : n - 1);
      const int32_t b = pj / plane, r = pj % plane;
      Im2ColS16Runs(g, input + b * image_size, r / out_w, r % out_w, p.input_offset,
                    cols + 4 * j);
    }
    int8_t* const out = output + static_cast<ptrdiff_t>(px) * out_c;
    for (int32_t oc = 0; oc < out_c; ++oc) {
      int32_t acc[4];
      Dot1x4(filter + static_cast<ptrdiff_t>(oc) * k, cols, k / 4, acc);
      const int32_t b = bias != nullptr ? bias[oc] : 0;
      const int32_t m = mult[oc], s = shift[oc];
      int8_t* o = out + oc;
      for (int32_t j = 0; j < n; ++j, o += out_c) {
        *o = RequantInt8<kMode>(acc[j] + b, m, s, out_off, lo, hi);
      }
    }
  }
}

template <int kMode>
void ConvIm2Col(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                const int8_t* filter, const int32_t* bias, int8_t* output, int16_t* cols) {
  const Requant8<kMode> finish(p, q, bias);
  const int32_t in_c = p.input.c, k_c = p.filter.c;
  const int32_t out_c = p.output.c;
  const int32_t groups = in_c / k_c;
  const int32_t per_group = out_c / groups;
  const int32_t k = p.filter.h * p.filter.w * k_c;
  const Im2ColGeometry g{p.input.h, p.input.w, in_c, p.filter.h, p.filter.w, k_c,
                         p.stride.h, p.stride.w, p.dilation.h, p.dilation.w,
                         p.padding.h, p.padding.w};
  const int32_t plane = p.output.h * p.output.w;
  const int32_t pixels = p.output.n * plane;
  const ptrdiff_t image_size = static_cast<ptrdiff_t>(p.input.h) * p.input.w * in_c;
  int16_t* col0 = cols;
  int16_t* col1 = cols + k;
  for (int32_t px = 0; px < pixels; px += 2) {
    const bool pair = px + 1 < pixels;
    const int32_t b0 = px / plane, r0 = px % plane;
    const int32_t b1 = (px + 1) / plane, r1 = (px + 1) % plane;
    int8_t* out0 = output + static_cast<ptrdiff_t>(px) * out_c;
    int8_t* out1 = out0 + out_c;
    for (int32_t grp = 0; grp < groups; ++grp) {
      Im2ColS16(g, input + b0 * image_size + grp * k_c, r0 / p.output.w, r0 % p.output.w,
                p.input_offset, true, col0);
      if (pair) {
        Im2ColS16(g, input + b1 * image_size + grp * k_c, r1 / p.output.w, r1 % p.output.w,
                  p.input_offset, true, col1);
      }
      const int32_t oc_end = (grp + 1) * per_group;
      int32_t oc = grp * per_group;
      if (pair) {
        for (; oc + 2 <= oc_end; oc += 2) {
          const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k;
          int32_t acc[4];
          Dot2x2(f0, f0 + k, col0, col1, k, acc);
          out0[oc] = finish(acc[0], oc);
          out1[oc] = finish(acc[1], oc);
          out0[oc + 1] = finish(acc[2], oc + 1);
          out1[oc + 1] = finish(acc[3], oc + 1);
        }
      }
      for (; oc < oc_end; ++oc) {
        const int8_t* f = filter + static_cast<ptrdiff_t>(oc) * k;
        out0[oc] = finish(Dot1(f, col0, k), oc);
        if (pair) out1[oc] = finish(Dot1(f, col1, k), oc);
      }
    }
  }
}

// 16x8 direct path (one group, dilation_w 1): SMLALD on int16 input pairs and int8 filter
// pairs repacked with PKHBT/PKHTB; int64 accumulation as TFLite.
inline int64_t Dot16x8(const int16_t* x, const int8_t* f, int32_t n, int64_t acc) {
  int32_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const uint32_t w = Load32(f + i);
    const uint32_t we = dsp::Sxtb16(w), wo = dsp::Sxtb16Ror8(w);
    acc = dsp::Smlald(Load32(x + i), dsp::Pkhbt(we, wo), acc);
    acc = dsp::Smlald(Load32(x + i + 2), dsp::Pkhtb(wo, we), acc);
  }
  for (; i < n; ++i) acc += static_cast<int64_t>(f[i]) * x[i];
  return acc;
}

void Conv16x8Direct(const ConvParams& p, const PerChannelRequant& q, const int16_t* input,
                    const int8_t* filter, const int64_t* bias, int16_t* out) {
  const int32_t in_h = p.input.h, in_w = p.input.w, c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w;
  const int32_t k_total = k_h * k_w * c;
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int16_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, k_h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, 1, in_w, &kx_lo, &kx_hi);
        const int32_t run = (kx_hi - kx_lo) * c;
        for (int32_t oc = 0; oc < p.output.c; ++oc) {
          const int8_t* f = filter + static_cast<ptrdiff_t>(oc) * k_total;
          int64_t acc = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int32_t iy = y0 + ky * p.dilation.h;
            acc = Dot16x8(image + (static_cast<ptrdiff_t>(iy) * in_w + x0 + kx_lo) * c,
                          f + (ky * k_w + kx_lo) * c, run, acc);
          }
          if (bias != nullptr) acc += bias[oc];
          const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[oc], q.shift[oc]);
          *out++ = static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
        }
      }
    }
  }
}

}  // namespace

KernelStatus ConvDsp(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch) {
  const bool direct = ConvDspIsDirect(params);
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    direct ? 0 : ConvScratchBytes(params, Isa::kDsp), false);
  if (st != KernelStatus::kOk) return st;
  const bool bounded =
      BoundedRequantOk(int64_t{params.filter.h} * params.filter.w * params.filter.c,
                       params.input_offset, bias, params.output.c, quant.shift,
                       params.output.c);
  int16_t* const cols = static_cast<int16_t*>(scratch.buf);
  WithRequantMode(Requant8ModeOf(bounded, params.activation.min, params.activation.max),
                  [&](auto mode) {
                    constexpr int kMode = decltype(mode)::value;
                    if (direct) {
                      ConvDirect<kMode>(params, quant, input, filter, bias, output);
                    } else if (ConvDspIsIm2Col4(params)) {
                      ConvIm2Col4<kMode>(params, quant, input, filter, bias, output, cols);
                    } else {
                      ConvIm2Col<kMode>(params, quant, input, filter, bias, output, cols);
                    }
                  });
  return KernelStatus::kOk;
}

KernelStatus Conv16x8Dsp(const ConvParams& params, const PerChannelRequant& quant,
                         const int16_t* input, const int8_t* filter, const int64_t* bias,
                         int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    Conv16x8ScratchBytes(params, Isa::kDsp), true);
  if (st != KernelStatus::kOk) return st;
  if (Conv16x8IsRuns(params)) {
    Conv16x8Direct(params, quant, input, filter, bias, output);
    return KernelStatus::kOk;
  }
  // Grouped or horizontally dilated 16x8 convolutions: the scalar body.
  return Conv16x8Scalar(params, quant, input, filter, bias, output, scratch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
