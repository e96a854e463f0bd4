// Conv / Conv16x8, scalar bodies: plain C++ for any Cortex-M and the host.
#include "conv_internal.h"
#include "internal/im2col.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

// int8: int32 accumulator, offsets, double-rounding requantization.
struct Int8Path {
  using In = int8_t;
  using Out = int8_t;
  using Acc = int32_t;
  using Bias = int32_t;
  static Out Finish(Acc acc, int32_t mult, int32_t shift, const ConvParams& p) {
    int32_t v = AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, mult, shift), p.output_offset);
    return static_cast<Out>(Clamp(v, p.activation.min, p.activation.max));
  }
};

// 16x8: int64 accumulator, no offsets, TFLite's int64 requantization.
struct Int16Path {
  using In = int16_t;
  using Out = int16_t;
  using Acc = int64_t;
  using Bias = int64_t;
  static Out Finish(Acc acc, int32_t mult, int32_t shift, const ConvParams& p) {
    int32_t v = MultiplyByQuantizedMultiplier64(acc, mult, shift);
    return static_cast<Out>(Clamp(v, p.activation.min, p.activation.max));
  }
};

template <typename Path>
void ConvLoops(const ConvParams& p, const PerChannelRequant& quant, const typename Path::In* input,
               const int8_t* filter, const typename Path::Bias* bias, typename Path::Out* output) {
  using Acc = typename Path::Acc;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w, k_c = p.filter.c;
  const int32_t out_h = p.output.h, out_w = p.output.w, out_c = p.output.c;
  const int32_t per_group = out_c / (in_c / k_c);
  const Acc in_off = p.input_offset;
  typename Path::Out* out = output;
  for (int32_t b = 0; b < p.input.n; ++b) {
    const typename Path::In* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < out_h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      int32_t ky_lo, ky_hi;
      TapRange(y0, k_h, p.dilation.h, in_h, &ky_lo, &ky_hi);
      for (int32_t ox = 0; ox < out_w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        int32_t kx_lo, kx_hi;
        TapRange(x0, k_w, p.dilation.w, in_w, &kx_lo, &kx_hi);
        for (int32_t oc = 0; oc < out_c; ++oc) {
          const int32_t ch0 = (oc / per_group) * k_c;
          const int8_t* f_oc = filter + static_cast<ptrdiff_t>(oc) * k_h * k_w * k_c;
          Acc acc = 0;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            const int32_t iy = y0 + ky * p.dilation.h;
            for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
              const int32_t ix = x0 + kx * p.dilation.w;
              const typename Path::In* in_px =
                  image + (static_cast<ptrdiff_t>(iy) * in_w + ix) * in_c + ch0;
              const int8_t* f_px = f_oc + (ky * k_w + kx) * k_c;
              for (int32_t c = 0; c < k_c; ++c) {
                acc += static_cast<Acc>(f_px[c]) * (static_cast<Acc>(in_px[c]) + in_off);
              }
            }
          }
          if (bias != nullptr) acc += bias[oc];
          *out++ = Path::Finish(acc, quant.multiplier[oc], quant.shift[oc], p);
        }
      }
    }
  }
}

#if !MICA_CONV_SCALAR_PACKED
// Armv6-M (no SMLAL): two pixels x two filter rows of plain 32-bit MACs.

// 2 filter rows x 2 int16 columns of length k. Kept out of line so the four accumulators and
// four pointers get registers of their own (inlined, GCC spills them on Armv7-M).
__attribute__((noinline)) void Dot2x2(const int8_t* f0, const int8_t* f1, const int16_t* c0,
                                      const int16_t* c1, int32_t k, int32_t acc[4]) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  const int8_t* const end = f0 + k;
  while (f0 != end) {
    const int32_t w0 = *f0++, w1 = *f1++, x0 = *c0++, x1 = *c1++;
    a00 += w0 * x0;
    a01 += w0 * x1;
    a10 += w1 * x0;
    a11 += w1 * x1;
  }
  acc[0] = a00;
  acc[1] = a01;
  acc[2] = a10;
  acc[3] = a11;
}

// The same with raw int8 columns read in place (1x1 path; the caller folds the offset in).
__attribute__((noinline)) void Dot2x2S8(const int8_t* f0, const int8_t* f1, const int8_t* c0,
                                        const int8_t* c1, int32_t k, int32_t acc[4]) {
  int32_t a00 = 0, a01 = 0, a10 = 0, a11 = 0;
  const int8_t* const end = f0 + k;
  while (f0 != end) {
    const int32_t w0 = *f0++, w1 = *f1++, x0 = *c0++, x1 = *c1++;
    a00 += w0 * x0;
    a01 += w0 * x1;
    a10 += w1 * x0;
    a11 += w1 * x1;
  }
  acc[0] = a00;
  acc[1] = a01;
  acc[2] = a10;
  acc[3] = a11;
}

// 1x1, stride 1, no padding, one group: pixels are the columns, read in place, two pixels x two
// filter rows per pass.
// kMode (here and below): the call's RequantMode.
template <int kMode>
void Conv1x1Int8(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                 const int8_t* filter, const int32_t* bias, int8_t* output) {
  // Filter-row pairs outermost: sum w * (x + off) = sum w * x + off * sum w (exact mod 2^32),
  // so each pair's offset term and bias are folded once and the pixel loop multiplies raw
  // int8 (offset 0). Parameters in locals: the output stores could alias p and q.
  const int32_t pixels = p.input.n * p.input.h * p.input.w;
  const int32_t k = p.input.c, out_c = p.output.c, off = p.input_offset;
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const auto finish = [=](int32_t acc, int32_t extra, int32_t mult, int32_t shift) {
    acc = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(extra));
    return RequantInt8<kMode>(acc, mult, shift, out_off, lo, hi);
  };
  const auto extra_of = [=](const int8_t* f, int32_t oc) {
    uint32_t sum = 0;
    for (int32_t i = 0; i < k; ++i) sum += static_cast<uint32_t>(f[i]);
    const uint32_t b = bias != nullptr ? static_cast<uint32_t>(bias[oc]) : 0u;
    return static_cast<int32_t>(b + static_cast<uint32_t>(off) * sum);
  };
  for (int32_t oc = 0; oc < out_c; oc += 2) {
    const bool two = oc + 1 < out_c;
    const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k;
    const int8_t* f1 = two ? f0 + k : f0;
    const int32_t e0 = extra_of(f0, oc), e1 = two ? extra_of(f1, oc + 1) : 0;
    const int32_t m0 = q.multiplier[oc], s0 = q.shift[oc];
    const int32_t m1 = two ? q.multiplier[oc + 1] : 0, s1 = two ? q.shift[oc + 1] : 0;
    for (int32_t px = 0; px < pixels; px += 2) {
      const bool pair = px + 1 < pixels;
      const int8_t* x0 = input + static_cast<ptrdiff_t>(px) * k;
      const int8_t* x1 = pair ? x0 + k : x0;
      int8_t* out0 = output + static_cast<ptrdiff_t>(px) * out_c + oc;
      int32_t acc[4];
      Dot2x2S8(f0, f1, x0, x1, k, acc);
      out0[0] = finish(acc[0], e0, m0, s0);
      if (pair) out0[out_c] = finish(acc[1], e0, m0, s0);
      if (two) {
        out0[1] = finish(acc[2], e1, m1, s1);
        if (pair) out0[out_c + 1] = finish(acc[3], e1, m1, s1);
      }
    }
  }
}

// General int8 conv: two output pixels at a time gathered into int16 im2col columns (offset
// applied, zeros outside the image), then 2 filter rows x 2 columns per pass: four MACs per
// four loads, the shape of code a Cortex-M0/M3 runs well.
template <int kMode>
void ConvIm2ColInt8(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                    const int8_t* filter, const int32_t* bias, int8_t* output, int16_t* cols) {
  const int32_t in_c = p.input.c, k_c = p.filter.c, out_c = p.output.c;
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
  // Requantization parameters by value: the output stores could alias p and q.
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int32_t acc, int32_t oc) {
    if (bias != nullptr) acc += bias[oc];
    return RequantInt8<kMode>(acc, mult[oc], shift[oc], out_off, lo, hi);
  };
  for (int32_t px = 0; px < pixels; px += 2) {
    const bool pair = px + 1 < pixels;
    int8_t* out0 = output + static_cast<ptrdiff_t>(px) * out_c;
    int8_t* out1 = out0 + out_c;
    for (int32_t grp = 0; grp < groups; ++grp) {
      for (int32_t j = 0; j < (pair ? 2 : 1); ++j) {
        const int32_t b = (px + j) / plane, r = (px + j) % plane;
        Im2ColS16(g, input + b * image_size + grp * k_c, r / p.output.w, r % p.output.w,
                  p.input_offset, false, j == 0 ? col0 : col1);
      }
      const int16_t* c1 = pair ? col1 : col0;
      const int32_t oc_end = (grp + 1) * per_group;
      for (int32_t oc = grp * per_group; oc < oc_end; oc += 2) {
        const bool two = oc + 1 < oc_end;
        const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k;
        const int8_t* f1 = two ? f0 + k : f0;
        int32_t acc[4];
        Dot2x2(f0, f1, col0, c1, k, acc);
        out0[oc] = finish(acc[0], oc);
        if (pair) out1[oc] = finish(acc[1], oc);
        if (two) {
          out0[oc + 1] = finish(acc[2], oc + 1);
          if (pair) out1[oc + 1] = finish(acc[3], oc + 1);
        }
      }
    }
  }
}

#endif  // !MICA_CONV_SCALAR_PACKED

#if MICA_CONV_SCALAR_PACKED
// Packed lanes (Armv7-M and later, and the host): two int8 inputs of two output pixels, offset
// applied (|v| <= 255), share one int32 as v_a + v_b * 2^23, so one 32x32 -> 64-bit
// multiply-accumulate (SMLAL) of a filter value with it adds w * v_a + w * v_b * 2^23: two
// MACs per instruction. Over at most kPackChunk taps |sum w * v_a| <= 128 * 128 * 255 < 2^22,
// so the low 23 bits of the 64-bit sum, sign-extended, are that sum exactly and the rest is
// the other pixel's: exact for any values, decoded once per chunk.
constexpr int kPackShift = 23;
constexpr int32_t kPackChunk = 128;

// Calls fn(src, n) for the taps of output pixel (out_y, out_x) in filter order (ky, kx, ci):
// src = n consecutive input values, or nullptr for n taps outside the image.
template <typename Fn>
inline void ForEachTapRun(const Im2ColGeometry& g, const int8_t* image, int32_t out_y,
                          int32_t out_x, Fn&& fn) {
  const int32_t y0 = out_y * g.stride_h - g.pad_h;
  const int32_t x0 = out_x * g.stride_w - g.pad_w;
  for (int32_t ky = 0; ky < g.k_h; ++ky) {
    const int32_t iy = y0 + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) {
      fn(nullptr, g.k_w * g.k_c);
      continue;
    }
    const int8_t* row = image + static_cast<ptrdiff_t>(iy) * g.in_w * g.in_c;
    if (g.dilation_w == 1 && g.k_c == g.in_c) {
      const int32_t lo = x0 < 0 ? (-x0 < g.k_w ? -x0 : g.k_w) : 0;
      int32_t hi = g.in_w - x0 < g.k_w ? g.in_w - x0 : g.k_w;
      if (hi < lo) hi = lo;
      if (lo > 0) fn(nullptr, lo * g.k_c);
      if (hi > lo) fn(row + static_cast<ptrdiff_t>(x0 + lo) * g.in_c, (hi - lo) * g.k_c);
      if (hi < g.k_w) fn(nullptr, (g.k_w - hi) * g.k_c);
      continue;
    }
    for (int32_t kx = 0; kx < g.k_w; ++kx) {
      const int32_t ix = x0 + kx * g.dilation_w;
      fn(ix < 0 || ix >= g.in_w ? nullptr : row + static_cast<ptrdiff_t>(ix) * g.in_c, g.k_c);
    }
  }
}

// Packs the columns of pixels a and b (image pointers at the group's first channel, pixel
// coordinates) into dst[0], dst[2], dst[4], ...: (x_a + off) + (x_b + off) * 2^23, 0 outside
// the image. Two passes: lane a written, lane b added.
inline void Im2ColPacked(const Im2ColGeometry& g, const int8_t* image_a, int32_t y_a, int32_t x_a,
                         const int8_t* image_b, int32_t y_b, int32_t x_b, int32_t off,
                         int32_t* dst) {
  int32_t* d = dst;
  ForEachTapRun(g, image_a, y_a, x_a, [&](const int8_t* src, int32_t n) {
    if (src == nullptr) {
      for (int32_t i = 0; i < n; ++i, d += 2) *d = 0;
    } else {
      for (int32_t i = 0; i < n; ++i, d += 2) *d = src[i] + off;
    }
  });
  d = dst;
  ForEachTapRun(g, image_b, y_b, x_b, [&](const int8_t* src, int32_t n) {
    if (src == nullptr) {
      d += 2 * n;
    } else {
      for (int32_t i = 0; i < n; ++i, d += 2) {
        *d = static_cast<int32_t>(static_cast<uint32_t>(*d) +
                                  (static_cast<uint32_t>(src[i] + off) << kPackShift));
      }
    }
  });
}

// Splits a chunk's 64-bit sum s = a + b * 2^23 (|a| < 2^22) into a and b.
inline void Unpack(int64_t s, int32_t* a, int32_t* b) {
  const int32_t lo = static_cast<int32_t>(static_cast<uint32_t>(s) << (32 - kPackShift)) >>
                     (32 - kPackShift);
  *a += lo;
  *b += static_cast<int32_t>((s - lo) >> kPackShift);
}

// One filter row (k int8) against four pixels packed in two interleaved columns (pixels 0, 1
// in cols[2i], 2, 3 in cols[2i + 1]): per tap one load of the weight, two of the columns and
// two SMLAL for four MACs. Out of line so the loop keeps its registers.
__attribute__((noinline)) void DotPacked4(const int8_t* f, const int32_t* cols, int32_t k,
                                          int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  while (k > 0) {
    const int32_t n = k < kPackChunk ? k : kPackChunk;
    k -= n;
    int64_t s01 = 0, s23 = 0;
#if MICA_KERNELS_TARGET_ARM
    // The two columns' words with one LDRD (GCC loads them one at a time).
    uint32_t lo01 = 0, hi01 = 0, lo23 = 0, hi23 = 0;
    int32_t w, c01, c23;
#define MICA_PACKED_TAP                                                                    \
  __asm__(                                                                                 \
      "ldrsb %[w], [%[f]], #1\n\t"                                                          \
      "ldrd %[c01], %[c23], [%[c]], #8\n\t"                                                 \
      "smlal %[lo01], %[hi01], %[c01], %[w]\n\t"                                            \
      "smlal %[lo23], %[hi23], %[c23], %[w]"                                                \
      : [f] "+r"(f), [c] "+r"(cols), [w] "=&r"(w), [c01] "=&r"(c01), [c23] "=&r"(c23),    \
        [lo01] "+r"(lo01), [hi01] "+r"(hi01), [lo23] "+r"(lo23), [hi23] "+r"(hi23)        \
      :                                                                                    \
      : "memory")
    for (int32_t i = n >> 1; i > 0; --i) {  // two taps per iteration: one loop branch
      MICA_PACKED_TAP;
      MICA_PACKED_TAP;
    }
    if ((n & 1) != 0) MICA_PACKED_TAP;
#undef MICA_PACKED_TAP
    s01 = static_cast<int64_t>((uint64_t{hi01} << 32) | lo01);
    s23 = static_cast<int64_t>((uint64_t{hi23} << 32) | lo23);
#else
    const int8_t* const end = f + n;
    while (f != end) {
      const int32_t w = *f++;
      s01 += static_cast<int64_t>(w) * cols[0];
      s23 += static_cast<int64_t>(w) * cols[1];
      cols += 2;
    }
#endif
    Unpack(s01, &a0, &a1);
    Unpack(s23, &a2, &a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// Every int8 conv (any window, groups, dilation): four output pixels at a time packed into two
// int32 columns (the last group repeats its last pixel), then each filter row of the group
// against them (DotPacked4) and the four outputs requantized with the row's parameters.
template <int kMode>
void ConvPackedInt8(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                    const int8_t* filter, const int32_t* bias, int8_t* output, int32_t* cols) {
  const int32_t in_c = p.input.c, k_c = p.filter.c, out_c = p.output.c;
  const int32_t groups = in_c / k_c;
  const int32_t per_group = out_c / groups;
  const int32_t k = p.filter.h * p.filter.w * k_c;
  const Im2ColGeometry g{p.input.h, p.input.w, in_c, p.filter.h, p.filter.w, k_c,
                         p.stride.h, p.stride.w, p.dilation.h, p.dilation.w,
                         p.padding.h, p.padding.w};
  const int32_t out_w = p.output.w;
  const int32_t plane = p.output.h * out_w;
  const int32_t pixels = p.output.n * plane;
  const ptrdiff_t image_size = static_cast<ptrdiff_t>(p.input.h) * p.input.w * in_c;
  // Requantization parameters by value: the output stores could alias p and q.
  const int32_t off = p.input_offset;
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  for (int32_t px = 0; px < pixels; px += 4) {
    const int32_t n = pixels - px < 4 ? pixels - px : 4;
    int8_t* out = output + static_cast<ptrdiff_t>(px) * out_c;
    for (int32_t grp = 0; grp < groups; ++grp) {
      for (int32_t j = 0; j < 4; j += 2) {
        const int32_t pa = px + (j < n ? j : n - 1), pb = px + (j + 1 < n ? j + 1 : n - 1);
        const int32_t ba = pa / plane, ra = pa % plane, bb = pb / plane, rb = pb % plane;
        Im2ColPacked(g, input + ba * image_size + grp * k_c, ra / out_w, ra % out_w,
                     input + bb * image_size + grp * k_c, rb / out_w, rb % out_w, off,
                     cols + j / 2);
      }
      const int32_t oc_end = (grp + 1) * per_group;
      for (int32_t oc = grp * per_group; oc < oc_end; ++oc) {
        int32_t acc[4];
        DotPacked4(filter + static_cast<ptrdiff_t>(oc) * k, cols, k, acc);
        const int32_t b = bias != nullptr ? bias[oc] : 0;
        const int32_t m = mult[oc], s = shift[oc];
        int8_t* o = out + oc;
        for (int32_t j = 0; j < n; ++j, o += out_c) {
          *o = RequantInt8<kMode>(acc[j] + b, m, s, out_off, lo, hi);
        }
      }
    }
  }
}
#endif  // MICA_CONV_SCALAR_PACKED

}  // namespace

void ConvLoopsInt8(const ConvParams& params, const PerChannelRequant& quant, const int8_t* input,
                   const int8_t* filter, const int32_t* bias, int8_t* output) {
  ConvLoops<Int8Path>(params, quant, input, filter, bias, output);
}

KernelStatus ConvScalar(const ConvParams& params, const PerChannelRequant& quant,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    ConvScratchBytes(params, Isa::kScalar), false);
  if (st != KernelStatus::kOk) return st;
  const bool bounded =
      BoundedRequantOk(int64_t{params.filter.h} * params.filter.w * params.filter.c,
                       params.input_offset, bias, params.output.c, quant.shift,
                       params.output.c);
  int16_t* const cols = static_cast<int16_t*>(scratch.buf);
  WithRequantMode(Requant8ModeOf(bounded, params.activation.min, params.activation.max),
                  [&](auto mode) {
                    constexpr int kMode = decltype(mode)::value;
#if MICA_CONV_SCALAR_PACKED
                    ConvPackedInt8<kMode>(params, quant, input, filter, bias, output,
                                          static_cast<int32_t*>(scratch.buf));
                    (void)cols;
#else
                    if (ConvIs1x1(params)) {
                      Conv1x1Int8<kMode>(params, quant, input, filter, bias, output);
                    } else {
                      ConvIm2ColInt8<kMode>(params, quant, input, filter, bias, output, cols);
                    }
#endif
                  });
  return KernelStatus::kOk;
}

KernelStatus Conv16x8Scalar(const ConvParams& params, const PerChannelRequant& quant,
                            const int16_t* input, const int8_t* filter, const int64_t* bias,
                            int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckConv(params, quant, input, filter, output, scratch,
                                    Conv16x8ScratchBytes(params, Isa::kScalar), true);
  if (st != KernelStatus::kOk) return st;
  ConvLoops<Int16Path>(params, quant, input, filter, bias, output);
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
