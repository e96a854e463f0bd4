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
                    if (ConvIs1x1(params)) {
                      Conv1x1Int8<kMode>(params, quant, input, filter, bias, output);
                    } else {
                      ConvIm2ColInt8<kMode>(params, quant, input, filter, bias, output, cols);
                    }
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
