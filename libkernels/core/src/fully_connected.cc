// FullyConnected / FullyConnected16x8: argument checks, scratch sizes, variant tables, entries.
#include "mica/kernels/fully_connected.h"

#include "fully_connected_internal.h"
#include "internal/checks.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus CheckFullyConnected(const FullyConnectedParams& p, const PerChannelRequant& quant,
                                 const void* input, const void* weights, void* output,
                                 const Scratch& scratch, size_t scratch_needed, bool wide) {
  if (input == nullptr || weights == nullptr || output == nullptr) {
    return KernelStatus::kArgError;
  }
  if (p.batches < 1 || p.input_depth < 1 || p.output_depth < 1) return KernelStatus::kArgError;
  if (int64_t{p.batches} * p.input_depth > INT32_MAX ||
      int64_t{p.output_depth} * p.input_depth > INT32_MAX ||
      int64_t{p.batches} * p.output_depth > INT32_MAX) {
    return KernelStatus::kArgError;
  }
  if (!OffsetOk(p.filter_offset)) return KernelStatus::kArgError;
  if (p.per_channel && p.filter_offset != 0) return KernelStatus::kArgError;
  const int32_t channels = p.per_channel ? p.output_depth : 1;
  if (!ChannelQuantOk(p.input_offset, p.output_offset, p.activation, quant, channels, wide)) {
    return KernelStatus::kArgError;
  }
  if (!ScratchOk(scratch, scratch_needed)) return KernelStatus::kArgError;
  return KernelStatus::kOk;
}

}  // namespace internal

size_t FullyConnectedScratchBytes(const FullyConnectedParams& params, Isa isa) {
  // Scalar and DSP: the input row plus its offset as int16 (rounded up to whole words), for the
  // scalar body in natural order, for the DSP body permuted in blocks of 4. Optional: without
  // it those bodies read the input in place, slower. Not asked for fewer than kWidenRows
  // outputs, where the widening pass costs about what it saves (and a long input row, such
  // as a classifier head's, would add its size to the arena for nothing).
  constexpr int32_t kWidenRows = 8;
  if (params.input_depth < 1 || params.output_depth < kWidenRows || isa == Isa::kMve) return 0;
  return (static_cast<size_t>(params.input_depth) * sizeof(int16_t) + 3) & ~size_t{3};
}

size_t FullyConnected16x8ScratchBytes(const FullyConnectedParams& params, Isa isa) {
  (void)params;
  (void)isa;
  return 0;
}

KernelStatus FullyConnected(const FullyConnectedParams& params, const PerChannelRequant& quant,
                            const int8_t* input, const int8_t* weights, const int32_t* bias,
                            int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(FullyConnected)(params, quant, input, weights, bias, output,
                                                     scratch);
}

KernelStatus FullyConnected16x8(const FullyConnectedParams& params,
                                const PerChannelRequant& quant, const int16_t* input,
                                const int8_t* weights, const int64_t* bias, int16_t* output,
                                Scratch scratch) {
  return internal::MICA_KERNELS_BEST(FullyConnected16x8)(params, quant, input, weights, bias,
                                                         output, scratch);
}

VariantList<FullyConnectedFn> FullyConnectedVariants() {
  static constexpr Variant<FullyConnectedFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::FullyConnectedScalar)
      MICA_KERNELS_VARIANT_DSP(internal::FullyConnectedDsp)
      MICA_KERNELS_VARIANT_MVE(internal::FullyConnectedMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

VariantList<FullyConnected16x8Fn> FullyConnected16x8Variants() {
  static constexpr Variant<FullyConnected16x8Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::FullyConnected16x8Scalar)
      MICA_KERNELS_VARIANT_DSP(internal::FullyConnected16x8Dsp)
      MICA_KERNELS_VARIANT_MVE(internal::FullyConnected16x8Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
