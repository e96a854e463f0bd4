// TransposeConv: argument check, scratch size, variant table, entry.
#include "mica/kernels/transpose_conv.h"

#include "internal/checks.h"
#include "transpose_conv_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus CheckTransposeConv(const TransposeConvParams& p, const PerChannelRequant& quant,
                                const void* input, const void* filter, void* output,
                                bool wide) {
  if (input == nullptr || filter == nullptr || output == nullptr) return KernelStatus::kArgError;
  if (!DimsOk(p.input) || !DimsOk(p.filter) || !DimsOk(p.output)) return KernelStatus::kArgError;
  if (p.output.n != p.input.n || p.filter.n != p.output.c || p.filter.c != p.input.c) {
    return KernelStatus::kArgError;
  }
  if (!WindowOk(p.stride, Dilation2D{}, p.padding, p.input, p.filter.h, p.filter.w) ||
      int64_t{p.output.h} + p.padding.h > INT32_MAX / 2 ||
      int64_t{p.output.w} + p.padding.w > INT32_MAX / 2) {
    return KernelStatus::kArgError;
  }
  if (!ChannelQuantOk(p.input_offset, p.output_offset, p.activation, quant, p.output.c, wide)) {
    return KernelStatus::kArgError;
  }
  return KernelStatus::kOk;
}

}  // namespace internal

size_t TransposeConvScratchBytes(const TransposeConvParams& params, Isa isa) {
  (void)params;
  (void)isa;
  return 0;  // gather formulation: no int32 accumulation buffer
}

KernelStatus TransposeConv(const TransposeConvParams& params, const PerChannelRequant& quant,
                           const int8_t* input, const int8_t* filter, const int32_t* bias,
                           int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(TransposeConv)(params, quant, input, filter, bias, output,
                                                    scratch);
}

VariantList<TransposeConvFn> TransposeConvVariants() {
  static constexpr Variant<TransposeConvFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::TransposeConvScalar)
      MICA_KERNELS_VARIANT_DSP(internal::TransposeConvDsp)
      MICA_KERNELS_VARIANT_MVE(internal::TransposeConvMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

size_t TransposeConv16x8ScratchBytes(const TransposeConvParams& params, Isa isa) {
  (void)params;
  (void)isa;
  return 0;
}

KernelStatus TransposeConv16x8(const TransposeConvParams& params, const PerChannelRequant& quant,
                               const int16_t* input, const int8_t* filter, const int64_t* bias,
                               int16_t* output, Scratch scratch) {
  return internal::TransposeConv16x8Scalar(params, quant, input, filter, bias, output, scratch);
}

VariantList<TransposeConv16x8Fn> TransposeConv16x8Variants() {
  static constexpr Variant<TransposeConv16x8Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::TransposeConv16x8Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
