// Public entry points and variant lists of the pooling ops.
#include "mica/kernels/pooling.h"

#include "pooling_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

KernelStatus MaxPool(const PoolParams& p, const int8_t* in, int8_t* out) {
#if MICA_KERNELS_HAVE_MVE
  return internal::MaxPoolMve(p, in, out);
#elif MICA_KERNELS_HAVE_DSP
  return internal::MaxPoolDsp(p, in, out);
#else
  return internal::MaxPoolScalar(p, in, out);
#endif
}
KernelStatus MaxPool16(const PoolParams& p, const int16_t* in, int16_t* out) {
  return internal::MaxPool16Scalar(p, in, out);
}
KernelStatus AvgPool(const PoolParams& p, const int8_t* in, int8_t* out) {
#if MICA_KERNELS_HAVE_MVE
  return internal::AvgPoolMve(p, in, out);
#elif MICA_KERNELS_HAVE_DSP
  return internal::AvgPoolDsp(p, in, out);
#else
  return internal::AvgPoolScalar(p, in, out);
#endif
}
KernelStatus AvgPool16(const PoolParams& p, const int16_t* in, int16_t* out) {
  return internal::AvgPool16Scalar(p, in, out);
}

VariantList<PoolFn> MaxPoolVariants() {
  static constexpr Variant<PoolFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::MaxPoolScalar)
      MICA_KERNELS_VARIANT_DSP(internal::MaxPoolDsp)
      MICA_KERNELS_VARIANT_MVE(internal::MaxPoolMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Pool16Fn> MaxPool16Variants() {
  static constexpr Variant<Pool16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::MaxPool16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<PoolFn> AvgPoolVariants() {
  static constexpr Variant<PoolFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::AvgPoolScalar)
      MICA_KERNELS_VARIANT_DSP(internal::AvgPoolDsp)
      MICA_KERNELS_VARIANT_MVE(internal::AvgPoolMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Pool16Fn> AvgPool16Variants() {
  static constexpr Variant<Pool16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::AvgPool16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
