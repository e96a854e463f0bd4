// Public entry points and variant lists of the activation functions.
#include "mica/kernels/activations.h"

#include "activations_internal.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

KernelStatus Logistic(const LogisticParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return internal::LogisticScalar(p, n, in, out);
}
KernelStatus Tanh(const TanhParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return internal::TanhScalar(p, n, in, out);
}
KernelStatus Logistic16(const Logistic16Params& p, int32_t n, const int16_t* in, int16_t* out) {
  return internal::Logistic16Scalar(p, n, in, out);
}
KernelStatus Tanh16(const Tanh16Params& p, int32_t n, const int16_t* in, int16_t* out) {
  return internal::Tanh16Scalar(p, n, in, out);
}
KernelStatus Relu(const ReluParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return internal::ReluScalar(p, n, in, out);
}
KernelStatus Relu16(const ReluParams& p, int32_t n, const int16_t* in, int16_t* out) {
  return internal::Relu16Scalar(p, n, in, out);
}
KernelStatus Clamp(ActivationRange r, int32_t n, const int8_t* in, int8_t* out) {
  return internal::ClampScalar(r, n, in, out);
}
KernelStatus Clamp16(ActivationRange r, int32_t n, const int16_t* in, int16_t* out) {
  return internal::Clamp16Scalar(r, n, in, out);
}
KernelStatus LeakyRelu(const LeakyReluParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return internal::LeakyReluScalar(p, n, in, out);
}
KernelStatus LeakyRelu16(const LeakyReluParams& p, int32_t n, const int16_t* in, int16_t* out) {
  return internal::LeakyRelu16Scalar(p, n, in, out);
}
KernelStatus HardSwish(const HardSwishParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return internal::HardSwishScalar(p, n, in, out);
}
KernelStatus Prelu(const PreluParams& p, const Shape& in_shape, const int8_t* in,
                   const Shape& alpha_shape, const int8_t* alpha, int8_t* out) {
  return internal::PreluScalar(p, in_shape, in, alpha_shape, alpha, out);
}

VariantList<LogisticFn> LogisticVariants() {
  static constexpr Variant<LogisticFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::LogisticScalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<LogisticFn> TanhVariants() {
  static constexpr Variant<LogisticFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::TanhScalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
