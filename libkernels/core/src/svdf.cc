// SVDF: scratch size, variant tables, entries (the step is SvdfStep in svdf_internal.h).
#include "mica/kernels/svdf.h"

#include "svdf_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

size_t SvdfScratchBytes(const SvdfParams& p, Isa /*isa*/) {
  if (p.batch < 1 || p.num_filters < 1 || p.rank < 1) return 0;
  const size_t units = static_cast<size_t>(p.num_filters / p.rank);
  return (static_cast<size_t>(p.batch) * static_cast<size_t>(p.num_filters) +
          static_cast<size_t>(p.batch) * units) *
         sizeof(int32_t);
}

KernelStatus Svdf(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                  const int16_t* wt, const int32_t* bias, int16_t* state, int8_t* output,
                  Scratch scratch) {
  return internal::MICA_KERNELS_BEST(Svdf)(p, input, wf, wt, bias, state, output, scratch);
}
KernelStatus SvdfInt8State(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                           const int8_t* wt, const int32_t* bias, int8_t* state,
                           int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(SvdfInt8State)(p, input, wf, wt, bias, state, output,
                                                    scratch);
}

VariantList<SvdfFn> SvdfVariants() {
  static constexpr Variant<SvdfFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SvdfScalar)
      MICA_KERNELS_VARIANT_DSP(internal::SvdfDsp)
      MICA_KERNELS_VARIANT_MVE(internal::SvdfMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<SvdfInt8StateFn> SvdfInt8StateVariants() {
  static constexpr Variant<SvdfInt8StateFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SvdfInt8StateScalar)
      MICA_KERNELS_VARIANT_DSP(internal::SvdfInt8StateDsp)
      MICA_KERNELS_VARIANT_MVE(internal::SvdfInt8StateMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
