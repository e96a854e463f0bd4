// TRANSPOSE / PAD: public entries (the best body of this build) and variant tables.
#include "data_movement_internal.h"
#include "mica/kernels/data_movement.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

KernelStatus Transpose(const Shape& in_shape, const int32_t* perm, const void* input,
                       void* output, size_t element_bytes) {
  return internal::MICA_KERNELS_BEST(Transpose)(in_shape, perm, input, output, element_bytes);
}

KernelStatus Pad(const PadParams& params, const Shape& in_shape, const void* input,
                 const void* pad_value, void* output, size_t element_bytes) {
  return internal::MICA_KERNELS_BEST(Pad)(params, in_shape, input, pad_value, output,
                                          element_bytes);
}

VariantList<TransposeFn> TransposeVariants() {
  static constexpr Variant<TransposeFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::TransposeScalar)
      MICA_KERNELS_VARIANT_DSP(internal::TransposeDsp)
      MICA_KERNELS_VARIANT_MVE(internal::TransposeMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

VariantList<PadFn> PadVariants() {
  static constexpr Variant<PadFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::PadScalar)
      MICA_KERNELS_VARIANT_DSP(internal::PadDsp)
      MICA_KERNELS_VARIANT_MVE(internal::PadMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
