// Public entry points and variant lists of the pooling ops.
#include "mica/kernels/pooling.h"

#include "pooling_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

KernelStatus MaxPool(const PoolParams& p, const int8_t* in, int8_t* out) {
  // On Helium cores the compiler vectorises the channels-innermost scalar loop with MVE, which
  // beats the SIMD32 body (QEMU instruction counts: 97k vs 137k at 32x32x16 k2 s2).
#if MICA_KERNELS_HAVE_DSP && !MICA_KERNELS_HAVE_MVE
  return internal::MaxPoolDsp(p, in, out);
#else
  return internal::MaxPoolScalar(p, in, out);
#endif
}
KernelStatus MaxPool16(const PoolParams& p, const int16_t* in, int16_t* out) {
  return internal::MaxPool16Scalar(p, in, out);
}
KernelStatus AvgPool(const PoolParams& p, const int8_t* in, int8_t* out) {
#if MICA_KERNELS_HAVE_DSP
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
      MICA_KERNELS_VARIANT_DSP(internal::MaxPoolDsp)};
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
      MICA_KERNELS_VARIANT_DSP(internal::AvgPoolDsp)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Pool16Fn> AvgPool16Variants() {
  static constexpr Variant<Pool16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::AvgPool16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
