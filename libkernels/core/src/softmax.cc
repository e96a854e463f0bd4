// Public entry points and variant list of softmax.
#include "mica/kernels/softmax.h"

#include "softmax_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

KernelStatus Softmax(const SoftmaxParams& p, int32_t rows, int32_t depth, const int8_t* in,
                     int8_t* out) {
  return internal::SoftmaxScalar(p, rows, depth, in, out);
}
KernelStatus SoftmaxInt8ToInt16(const SoftmaxParams& p, int32_t rows, int32_t depth,
                                const int8_t* in, int16_t* out) {
  return internal::SoftmaxInt8ToInt16Scalar(p, rows, depth, in, out);
}
KernelStatus Softmax16(const Softmax16Params& p, int32_t rows, int32_t depth, const int16_t* in,
                       int16_t* out) {
  return internal::Softmax16Scalar(p, rows, depth, in, out);
}

VariantList<SoftmaxFn> SoftmaxVariants() {
  static constexpr Variant<SoftmaxFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SoftmaxScalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
