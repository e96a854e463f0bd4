// Conv / Conv16x8: argument checks, scratch sizes, variant tables and the public entries.
#include "mica/kernels/conv.h"

#include "conv_internal.h"
#include "internal/im2col.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus CheckConv(const ConvParams& p, const PerChannelRequant& quant, const void* input,
                       const void* filter, void* output, const Scratch& scratch,
                       size_t scratch_needed, bool wide) {
  if (input == nullptr || filter == nullptr || output == nullptr) return KernelStatus::kArgError;
  if (!DimsOk(p.input) || !DimsOk(p.filter) || !DimsOk(p.output)) return KernelStatus::kArgError;
  if (p.output.n != p.input.n || p.output.c != p.filter.n) return KernelStatus::kArgError;
  if (p.input.c % p.filter.c != 0) return KernelStatus::kArgError;
  const int32_t groups = p.input.c / p.filter.c;
  if (p.output.c % groups != 0) return KernelStatus::kArgError;
  if (!WindowOk(p.stride, p.dilation, p.padding, p.output, p.filter.h, p.filter.w)) {
    return KernelStatus::kArgError;
  }
  if (!ChannelQuantOk(p.input_offset, p.output_offset, p.activation, quant, p.output.c, wide)) {
    return KernelStatus::kArgError;
  }
  if (!ScratchOk(scratch, scratch_needed)) return KernelStatus::kArgError;
  return KernelStatus::kOk;
}

}  // namespace internal

size_t ConvScratchBytes(const ConvParams& p, Isa isa) {
  if (p.filter.n < 1 || p.filter.h < 1 || p.filter.w < 1 || p.filter.c < 1) return 0;
  switch (isa) {
    case Isa::kScalar:
      // Two pixels packed in one int32 column (as many bytes as two int16 columns); Armv6-M's
      // body needs as much or none (1x1).
      return internal::Im2ColBytesS16(p.filter.h, p.filter.w, p.filter.c, 2);
    case Isa::kDsp:
      // Four int16 im2col columns on the four-pixel path, else two, none where the body reads
      // the input in place.
      if (internal::ConvDspIsDirect(p)) return 0;
      return internal::Im2ColBytesS16(p.filter.h, p.filter.w, p.filter.c,
                                      internal::ConvDspIsIm2Col4(p) ? 4 : 2);
    case Isa::kMve: {
      // Per-channel epilogue constants (four int32: offset term + bias, multiplier, left and
      // right shift), plus four int8 im2col columns unless 1x1.
      if (!internal::ConvMveIsIm2Col(p)) return 0;
      const size_t sums = static_cast<size_t>(p.filter.n) * 4 * sizeof(int32_t);
      if (internal::ConvIs1x1(p)) return sums;
      const size_t k = static_cast<size_t>(p.filter.h) * p.filter.w * p.filter.c;
      return sums + ((4 * k + 3) & ~static_cast<size_t>(3));
    }
  }
  return 0;
}

size_t Conv16x8ScratchBytes(const ConvParams& p, Isa isa) {
  (void)p;
  (void)isa;
  return 0;
}

KernelStatus Conv(const ConvParams& params, const PerChannelRequant& quant, const int8_t* input,
                  const int8_t* filter, const int32_t* bias, int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(Conv)(params, quant, input, filter, bias, output, scratch);
}

KernelStatus Conv16x8(const ConvParams& params, const PerChannelRequant& quant,
                      const int16_t* input, const int8_t* filter, const int64_t* bias,
                      int16_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(Conv16x8)(params, quant, input, filter, bias, output,
                                               scratch);
}

VariantList<ConvFn> ConvVariants() {
  static constexpr Variant<ConvFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::ConvScalar)
      MICA_KERNELS_VARIANT_DSP(internal::ConvDsp)
      MICA_KERNELS_VARIANT_MVE(internal::ConvMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

VariantList<Conv16x8Fn> Conv16x8Variants() {
  static constexpr Variant<Conv16x8Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Conv16x8Scalar)
      MICA_KERNELS_VARIANT_DSP(internal::Conv16x8Dsp)
      MICA_KERNELS_VARIANT_MVE(internal::Conv16x8Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
