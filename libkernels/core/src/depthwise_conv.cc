// DepthwiseConv / DepthwiseConv16x8: argument checks, scratch sizes, variant tables, entries.
#include "mica/kernels/depthwise_conv.h"

#include "depthwise_conv_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus CheckDepthwiseConv(const DepthwiseConvParams& p, const PerChannelRequant& quant,
                                const void* input, const void* filter, void* output,
                                const Scratch& scratch, size_t scratch_needed, bool wide) {
  if (input == nullptr || filter == nullptr || output == nullptr) return KernelStatus::kArgError;
  if (!DimsOk(p.input) || !DimsOk(p.filter) || !DimsOk(p.output)) return KernelStatus::kArgError;
  if (p.depth_multiplier < 1 || p.filter.n != 1 || p.output.n != p.input.n ||
      int64_t{p.input.c} * p.depth_multiplier != p.output.c || p.filter.c != p.output.c) {
    return KernelStatus::kArgError;
  }
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

size_t DepthwiseConvScratchBytes(const DepthwiseConvParams& params, Isa isa) {
  (void)params;
  (void)isa;
  return 0;  // every body reads the input in place
}

size_t DepthwiseConv16x8ScratchBytes(const DepthwiseConvParams& params, Isa isa) {
  (void)params;
  (void)isa;
  return 0;
}

KernelStatus DepthwiseConv(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                           const int8_t* input, const int8_t* filter, const int32_t* bias,
                           int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(DepthwiseConv)(params, quant, input, filter, bias, output,
                                                    scratch);
}

KernelStatus DepthwiseConv16x8(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                               const int16_t* input, const int8_t* filter, const int64_t* bias,
                               int16_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(DepthwiseConv16x8)(params, quant, input, filter, bias,
                                                        output, scratch);
}

VariantList<DepthwiseConvFn> DepthwiseConvVariants() {
  static constexpr Variant<DepthwiseConvFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::DepthwiseConvScalar)
      MICA_KERNELS_VARIANT_DSP(internal::DepthwiseConvDsp)
      MICA_KERNELS_VARIANT_MVE(internal::DepthwiseConvMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

VariantList<DepthwiseConv16x8Fn> DepthwiseConv16x8Variants() {
  static constexpr Variant<DepthwiseConv16x8Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::DepthwiseConv16x8Scalar)
      MICA_KERNELS_VARIANT_DSP(internal::DepthwiseConv16x8Dsp)
      MICA_KERNELS_VARIANT_MVE(internal::DepthwiseConv16x8Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
