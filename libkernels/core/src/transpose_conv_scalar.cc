// TransposeConv, scalar body: for each output element, gather the input pixels and taps that
// TFLite's reference scatters into it (same int32 sum, no buffer).
#include "internal/requantize.h"
#include "transpose_conv_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus TransposeConvScalar(const TransposeConvParams& p, const PerChannelRequant& q,
                                 const int8_t* input, const int8_t* filter, const int32_t* bias,
                                 int8_t* output, Scratch scratch) {
  (void)scratch;
  const KernelStatus st = CheckTransposeConv(p, q, input, filter, output);
  if (st != KernelStatus::kOk) return st;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w;
  for (int32_t b = 0; b < p.output.n; ++b) {
    const int8_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      int32_t ky0, ky_end;
      TransposeTaps(oy, p.padding.h, p.stride.h, k_h, in_h, &ky0, &ky_end);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        int32_t kx0, kx_end;
        TransposeTaps(ox, p.padding.w, p.stride.w, k_w, in_w, &kx0, &kx_end);
        for (int32_t oc = 0; oc < p.output.c; ++oc) {
          int32_t acc = 0;
          for (int32_t ky = ky0; ky < ky_end; ky += p.stride.h) {
            const int32_t iy = (oy + p.padding.h - ky) / p.stride.h;
            for (int32_t kx = kx0; kx < kx_end; kx += p.stride.w) {
              const int32_t ix = (ox + p.padding.w - kx) / p.stride.w;
              const int8_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + ix) * in_c;
              const int8_t* f =
                  filter + ((static_cast<ptrdiff_t>(oc) * k_h + ky) * k_w + kx) * in_c;
              for (int32_t c = 0; c < in_c; ++c) acc += (x[c] + p.input_offset) * f[c];
            }
          }
          if (bias != nullptr) acc += bias[oc];
          const int32_t v =
              AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[oc], q.shift[oc]), p.output_offset);
          *output++ = static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
        }
      }
    }
  }
  return KernelStatus::kOk;
}

// 16x8: the same gather with int64 sums and no offsets (TFLite's int16 reference scatters
// into an int64 buffer; the sums are identical).
KernelStatus TransposeConv16x8Scalar(const TransposeConvParams& p, const PerChannelRequant& q,
                                     const int16_t* input, const int8_t* filter,
                                     const int64_t* bias, int16_t* output, Scratch scratch) {
  (void)scratch;
  const KernelStatus st = CheckTransposeConv(p, q, input, filter, output, /*wide=*/true);
  if (st != KernelStatus::kOk) return st;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w;
  for (int32_t b = 0; b < p.output.n; ++b) {
    const int16_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      int32_t ky0, ky_end;
      TransposeTaps(oy, p.padding.h, p.stride.h, k_h, in_h, &ky0, &ky_end);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        int32_t kx0, kx_end;
        TransposeTaps(ox, p.padding.w, p.stride.w, k_w, in_w, &kx0, &kx_end);
        for (int32_t oc = 0; oc < p.output.c; ++oc) {
          int64_t acc = 0;
          for (int32_t ky = ky0; ky < ky_end; ky += p.stride.h) {
            const int32_t iy = (oy + p.padding.h - ky) / p.stride.h;
            for (int32_t kx = kx0; kx < kx_end; kx += p.stride.w) {
              const int32_t ix = (ox + p.padding.w - kx) / p.stride.w;
              const int16_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + ix) * in_c;
              const int8_t* f =
                  filter + ((static_cast<ptrdiff_t>(oc) * k_h + ky) * k_w + kx) * in_c;
              for (int32_t c = 0; c < in_c; ++c) acc += int32_t{x[c]} * f[c];
            }
          }
          if (bias != nullptr) acc += bias[oc];
          const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[oc], q.shift[oc]);
          *output++ = static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
