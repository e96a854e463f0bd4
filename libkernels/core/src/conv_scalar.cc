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
// coordinates) into dst[i] = (x_a + off) + (x_b + off) * 2^23, 0 outside the image. Two
// passes: lane a written, lane b added. Out of line: one copy for the three requantization
// modes.
__attribute__((noinline)) void Im2ColPacked(const Im2ColGeometry& g, const int8_t* image_a,
                                            int32_t y_a, int32_t x_a, const int8_t* image_b,
                                            int32_t y_b, int32_t x_b, int32_t off,
                                            int32_t* dst) {
  int32_t* d = dst;
  ForEachTapRun(g, image_a, y_a, x_a, [&](const int8_t* src, int32_t n) {
    if (src == nullptr) {
      for (int32_t i = 0; i < n; ++i) *d++ = 0;
    } else {
      for (int32_t i = 0; i < n; ++i) *d++ = src[i] + off;
    }
  });
  d = dst;
  ForEachTapRun(g, image_b, y_b, x_b, [&](const int8_t* src, int32_t n) {
    if (src == nullptr) {
      d += n;
    } else {
      for (int32_t i = 0; i < n; ++i, ++d) {
        *d = static_cast<int32_t>(static_cast<uint32_t>(*d) +
                                  (static_cast<uint32_t>(src[i] + off) << kPackShift));
      }
    }
  });
}

// Im2ColPacked for 1x1 stride 1 unpadded (ConvIs1x1): the pixels' k inputs read in place, in
// one pass.
__attribute__((noinline)) void PackPixels(const int8_t* a, const int8_t* b, int32_t k,
                                          int32_t off, int32_t* dst) {
  const uint32_t both = static_cast<uint32_t>(off) + (static_cast<uint32_t>(off) << kPackShift);
  for (int32_t i = 0; i < k; ++i) {
    dst[i] = static_cast<int32_t>(static_cast<uint32_t>(a[i]) +
                                  (static_cast<uint32_t>(b[i]) << kPackShift) + both);
  }
}

// Splits a chunk's 64-bit sum s = a + b * 2^23 (|a| < 2^22) into a and b.
inline void Unpack(int64_t s, int32_t* a, int32_t* b) {
  const int32_t lo = static_cast<int32_t>(static_cast<uint32_t>(s) << (32 - kPackShift)) >>
                     (32 - kPackShift);
  *a += lo;
  *b += static_cast<int32_t>((s - lo) >> kPackShift);
}

// Two filter rows (k int8 each) against two pixels packed in one int32 column: per tap two
// weight loads, one column load (LDRD for two taps) and two SMLAL for four MACs. acc: row 0
// with pixels a, b, then row 1 with a, b. Out of line so the loop keeps its registers.
__attribute__((noinline)) void DotPacked2x2(const int8_t* f0, const int8_t* f1,
                                            const int32_t* col, int32_t k, int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  while (k > 0) {
    const int32_t n = k < kPackChunk ? k : kPackChunk;
    k -= n;
    int64_t s0, s1;
#if MICA_KERNELS_TARGET_ARM
    // In assembly: LDRD for two taps of the column (GCC loads them one at a time).
    uint32_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
    int32_t w, c0, c1;
    for (int32_t i = n >> 1; i > 0; --i) {
      __asm__(
          "ldrd %[c0], %[c1], [%[c]], #8\n\t"
          "ldrsb %[w], [%[f0]], #1\n\t"
          "smlal %[lo0], %[hi0], %[c0], %[w]\n\t"
          "ldrsb %[w], [%[f0]], #1\n\t"
          "smlal %[lo0], %[hi0], %[c1], %[w]\n\t"
          "ldrsb %[w], [%[f1]], #1\n\t"
          "smlal %[lo1], %[hi1], %[c0], %[w]\n\t"
          "ldrsb %[w], [%[f1]], #1\n\t"
          "smlal %[lo1], %[hi1], %[c1], %[w]"
          : [f0] "+r"(f0), [f1] "+r"(f1), [c] "+r"(col), [w] "=&r"(w), [c0] "=&r"(c0),
            [c1] "=&r"(c1), [lo0] "+r"(lo0), [hi0] "+r"(hi0), [lo1] "+r"(lo1), [hi1] "+r"(hi1)
          :
          : "memory");
    }
    s0 = static_cast<int64_t>((uint64_t{hi0} << 32) | lo0);
    s1 = static_cast<int64_t>((uint64_t{hi1} << 32) | lo1);
    if ((n & 1) != 0) {
      const int32_t c = *col++;
      s0 += static_cast<int64_t>(*f0++) * c;
      s1 += static_cast<int64_t>(*f1++) * c;
    }
#else
    s0 = 0;
    s1 = 0;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t c = *col++;
      s0 += static_cast<int64_t>(*f0++) * c;
      s1 += static_cast<int64_t>(*f1++) * c;
    }
#endif
    Unpack(s0, &a0, &a1);
    Unpack(s1, &a2, &a3);
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// Every int8 conv (any window, groups, dilation): two output pixels at a time packed into one
// int32 column (an odd last pixel is paired with itself), then two filter rows of the group at
// a time against it (DotPacked2x2), each row's requantization parameters loaded once for its
// two outputs.
template <int kMode>
void ConvPackedInt8(const ConvParams& p, const PerChannelRequant& q, const int8_t* input,
                    const int8_t* filter, const int32_t* bias, int8_t* output, int32_t* col) {
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
  const auto finish2 = [=](const int32_t* acc, int32_t oc, bool pair, int8_t* o) {
    const int32_t b = bias != nullptr ? bias[oc] : 0;
    const int32_t m = mult[oc], s = shift[oc];
    o[0] = RequantInt8<kMode>(acc[0] + b, m, s, out_off, lo, hi);
    if (pair) o[out_c] = RequantInt8<kMode>(acc[1] + b, m, s, out_off, lo, hi);
  };
  const bool one_by_one = ConvIs1x1(p);  // pixel j's inputs: input + j * k
  for (int32_t px = 0; px < pixels; px += 2) {
    const bool pair = px + 1 < pixels;
    const int32_t pb = pair ? px + 1 : px;
    const int32_t ba = px / plane, ra = px % plane, bb = pb / plane, rb = pb % plane;
    int8_t* const out = output + static_cast<ptrdiff_t>(px) * out_c;
    for (int32_t grp = 0; grp < groups; ++grp) {
      if (one_by_one) {
        PackPixels(input + static_cast<ptrdiff_t>(px) * k, input + static_cast<ptrdiff_t>(pb) * k,
                   k, off, col);
      } else {
        Im2ColPacked(g, input + ba * image_size + grp * k_c, ra / out_w, ra % out_w,
                     input + bb * image_size + grp * k_c, rb / out_w, rb % out_w, off, col);
      }
      const int32_t oc_end = (grp + 1) * per_group;
      for (int32_t oc = grp * per_group; oc < oc_end; oc += 2) {
        const bool two = oc + 1 < oc_end;
        const int8_t* f0 = filter + static_cast<ptrdiff_t>(oc) * k;
        int32_t acc[4];
        DotPacked2x2(f0, two ? f0 + k : f0, col, k, acc);
        finish2(acc, oc, pair, out + oc);
        if (two) finish2(acc + 2, oc + 1, pair, out + oc + 1);
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
