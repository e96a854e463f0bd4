// TransposeConv, MVE (Helium) body: the gather of the scalar body, with the per-tap dot product
// over input channels done sixteen at a time (VMLADAVA.S8 on raw int8 lanes) for four output
// channels per pass. The input offset is folded in exactly (mod 2^32) from the filter sums:
// sum f (x + off) = sum f x + off sum f. The four sums are requantized as one vector with
// their channels' multipliers and shifts and stored narrowed to bytes.
#include "internal/mve_helpers.h"
#include "transpose_conv_internal.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {

KernelStatus TransposeConvMve(const TransposeConvParams& p, const PerChannelRequant& q,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch) {
  (void)scratch;
  const KernelStatus st = CheckTransposeConv(p, q, input, filter, output);
  if (st != KernelStatus::kOk) return st;
  const int32_t in_h = p.input.h, in_w = p.input.w, in_c = p.input.c;
  const int32_t k_h = p.filter.h, k_w = p.filter.w, out_c = p.output.c;
  const ptrdiff_t filter_stride = static_cast<ptrdiff_t>(k_h) * k_w * in_c;
  const int32_t off = p.input_offset, out_off = p.output_offset;
  const int32_t lo = p.activation.min, hi = p.activation.max;
  for (int32_t b = 0; b < p.output.n; ++b) {
    const int8_t* image = input + static_cast<ptrdiff_t>(b) * in_h * in_w * in_c;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      int32_t ky0, ky_end;
      TransposeTaps(oy, p.padding.h, p.stride.h, k_h, in_h, &ky0, &ky_end);
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        int32_t kx0, kx_end;
        TransposeTaps(ox, p.padding.w, p.stride.w, k_w, in_w, &kx0, &kx_end);
        for (int32_t oc = 0; oc < out_c; oc += 4) {
          const int32_t left = out_c - oc;
          // Channels past out_c repeat channel oc; their lanes are not stored.
          const ptrdiff_t s1 = left > 1 ? filter_stride : 0;
          const ptrdiff_t s2 = left > 2 ? 2 * filter_stride : 0;
          const ptrdiff_t s3 = left > 3 ? 3 * filter_stride : 0;
          int32_t dot[4] = {0, 0, 0, 0}, fsum[4] = {0, 0, 0, 0};
          for (int32_t ky = ky0; ky < ky_end; ky += p.stride.h) {
            const int32_t iy = (oy + p.padding.h - ky) / p.stride.h;
            for (int32_t kx = kx0; kx < kx_end; kx += p.stride.w) {
              const int32_t ix = (ox + p.padding.w - kx) / p.stride.w;
              const int8_t* x = image + (static_cast<ptrdiff_t>(iy) * in_w + ix) * in_c;
              const int8_t* f0 = filter + oc * filter_stride + (ky * k_w + kx) * in_c;
              mve::DotS8x4(x, f0, f0 + s1, f0 + s2, f0 + s3, in_c, dot, fsum);
            }
          }
          const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(left > 4 ? 4 : left));
          int32x4_t acc = vmlaq_n_s32(vld1q_s32(dot), vld1q_s32(fsum), off);
          if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_z_s32(bias + oc, pred));
          acc = mve::MulQuantLanes(acc, vldrwq_z_s32(q.multiplier + oc, pred),
                                   vldrwq_z_s32(q.shift + oc, pred));
          acc = mve::OffsetClamp(acc, out_off, lo, hi);
          if (left >= 4) {
            vstrbq_s32(output, acc);
            output += 4;
          } else {
            vstrbq_p_s32(output, acc, pred);
            output += left;
          }
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
