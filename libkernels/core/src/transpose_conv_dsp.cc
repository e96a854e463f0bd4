// TransposeConv, DSP body: the gather of the scalar body, with the per-tap dot product over
// input channels done four at a time (SXTAB16 input with offset, SXTB16 filter, SMLAD) for two
// output channels per pass.
#include "internal/dsp_intrinsics.h"
#include "internal/requantize.h"
#include "transpose_conv_internal.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int8_t Finish(int32_t acc, const int32_t* bias, int32_t oc, const PerChannelRequant& q,
                     const TransposeConvParams& p) {
  if (bias != nullptr) acc += bias[oc];
  const int32_t v =
      AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[oc], q.shift[oc]), p.output_offset);
  return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
}

}  // namespace

KernelStatus TransposeConvDsp(const TransposeConvParams& p, const PerChannelRequant& q,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch) {
  (void)scratch;
  const KernelStatus st = CheckTransposeConv(p, q, input, filter, output);
  if (st != KernelStatus::kOk) return st;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w;
  const ptrdiff_t filter_stride = static_cast<ptrdiff_t>(k_h) * k_w * in_c;
  const int32_t off = p.input_offset;
  const uint32_t off2 = dsp::Pack16(off, off);
  for (int32_t b = 0; b < p.output.n; ++b) {
    const int8_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      int32_t ky0, ky_end;
      TransposeTaps(oy, p.padding.h, p.stride.h, k_h, in_h, &ky0, &ky_end);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        int32_t kx0, kx_end;
        TransposeTaps(ox, p.padding.w, p.stride.w, k_w, in_w, &kx0, &kx_end);
        for (int32_t oc = 0; oc < p.output.c; oc += 2) {
          const bool pair = oc + 1 < p.output.c;
          int32_t a0 = 0, a1 = 0;
          for (int32_t ky = ky0; ky < ky_end; ky += p.stride.h) {
            const int32_t iy = (oy + p.padding.h - ky) / p.stride.h;
            for (int32_t kx = kx0; kx < kx_end; kx += p.stride.w) {
              const int32_t ix = (ox + p.padding.w - kx) / p.stride.w;
              const int8_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + ix) * in_c;
              const int8_t* f0 = filter + oc * filter_stride + (ky * k_w + kx) * in_c;
              const int8_t* f1 = pair ? f0 + filter_stride : f0;
              int32_t c = 0;
              for (; c + 4 <= in_c; c += 4) {
                uint32_t xe, xo;
                dsp::Widen4(dsp::Load32(x + c), off2, &xe, &xo);
                const uint32_t w0 = dsp::Load32(f0 + c), w1 = dsp::Load32(f1 + c);
                a0 = dsp::Smlad(xe, dsp::Sxtb16(w0), a0);
                a0 = dsp::Smlad(xo, dsp::Sxtb16Ror8(w0), a0);
                a1 = dsp::Smlad(xe, dsp::Sxtb16(w1), a1);
                a1 = dsp::Smlad(xo, dsp::Sxtb16Ror8(w1), a1);
              }
              for (; c < in_c; ++c) {
                a0 += (x[c] + off) * f0[c];
                a1 += (x[c] + off) * f1[c];
              }
            }
          }
          *output++ = Finish(a0, bias, oc, q, p);
          if (pair) *output++ = Finish(a1, bias, oc + 1, q, p);
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
