// Public entry points and variant list of softmax.
#include "mica/kernels/softmax.h"

#include "softmax_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

// The int8-input softmaxes have an MVE body and no DSP one (the work is the fixed-point exp,
// which SIMD32 does not shorten): MVE on Helium, scalar elsewhere.
KernelStatus Softmax(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* in,
                     int8_t* out) {
#if MICA_KERNELS_HAVE_MVE
  return internal::SoftmaxMve(p, rows, depth, in, out);
#else
  return internal::SoftmaxScalar(p, rows, depth, in, out);
#endif
}
KernelStatus SoftmaxInt8ToInt16(const SoftmaxParams& p, int32_t rows, int32_t depth,
                                const int8_t* in, int16_t* out) {
#if MICA_KERNELS_HAVE_MVE
  return internal::SoftmaxInt8ToInt16Mve(p, rows, depth, in, out);
#else
  return internal::SoftmaxInt8ToInt16Scalar(p, rows, depth, in, out);
#endif
}
KernelStatus Softmax16(const Softmax16Params& p, int32_t rows, int32_t depth, const int16_t* in,
                       int16_t* out) {
  return internal::Softmax16Scalar(p, rows, depth, in, out);
}

VariantList<SoftmaxFn> SoftmaxVariants() {
  static constexpr Variant<SoftmaxFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SoftmaxScalar)
      MICA_KERNELS_VARIANT_MVE(internal::SoftmaxMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<SoftmaxInt8ToInt16Fn> SoftmaxInt8ToInt16Variants() {
  static constexpr Variant<SoftmaxInt8ToInt16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SoftmaxInt8ToInt16Scalar)
      MICA_KERNELS_VARIANT_MVE(internal::SoftmaxInt8ToInt16Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
