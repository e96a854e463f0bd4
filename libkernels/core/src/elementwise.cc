// Public entry points and variant lists of the elementwise ops.
#include "mica/kernels/elementwise.h"

#include "elementwise_internal.h"
#include "internal/broadcast.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

#if MICA_KERNELS_HAVE_MVE
#define MICA_ELEMENTWISE_BEST(op) internal::op##Mve
#elif MICA_KERNELS_HAVE_DSP
#define MICA_ELEMENTWISE_BEST(op) internal::op##Dsp
#else
#define MICA_ELEMENTWISE_BEST(op) internal::op##Scalar
#endif

KernelStatus Add(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                 const int8_t* in2, const Shape& so, int8_t* out) {
  return MICA_ELEMENTWISE_BEST(Add)(p, s1, in1, s2, in2, so, out);
}
KernelStatus Add16(const AddParams& p, const Shape& s1, const int16_t* in1, const Shape& s2,
                   const int16_t* in2, const Shape& so, int16_t* out) {
  return internal::Add16Scalar(p, s1, in1, s2, in2, so, out);
}
KernelStatus Sub(const SubParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                 const int8_t* in2, const Shape& so, int8_t* out) {
  return internal::SubScalar(p, s1, in1, s2, in2, so, out);
}
KernelStatus Sub16(const SubParams& p, const Shape& s1, const int16_t* in1, const Shape& s2,
                   const int16_t* in2, const Shape& so, int16_t* out) {
  return internal::Sub16Scalar(p, s1, in1, s2, in2, so, out);
}
KernelStatus Mul(const MulParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                 const int8_t* in2, const Shape& so, int8_t* out) {
  return MICA_ELEMENTWISE_BEST(Mul)(p, s1, in1, s2, in2, so, out);
}
KernelStatus Mul16(const MulParams& p, const Shape& s1, const int16_t* in1, const Shape& s2,
                   const int16_t* in2, const Shape& so, int16_t* out) {
  return internal::Mul16Scalar(p, s1, in1, s2, in2, so, out);
}

namespace {
template <typename T>
KernelStatus SquaredDifferenceT(const AddParams& p, const Shape& s1, const T* in1,
                                const Shape& s2, const T* in2, const Shape& so, T* out,
                                int32_t lo, int32_t hi) {
  if (p.left_shift < 0 || p.left_shift > 15 || p.input1.shift > 0 || p.input1.shift < -31 ||
      p.input2.shift > 0 || p.input2.shift < -31 || p.output.shift > 31 ||
      p.output.shift < -31 || p.activation.min > p.activation.max || p.activation.min < lo ||
      p.activation.max > hi) {
    return KernelStatus::kArgError;
  }
  return internal::BinaryElementwise(s1, in1, s2, in2, so, out, [&p](T a, T b) {
    return static_cast<T>(internal::SquaredDifferenceElement(p, a, b));
  });
}

}  // namespace

KernelStatus SquaredDifference(const SquaredDifferenceParams& p, const Shape& s1,
                               const int8_t* in1, const Shape& s2, const int8_t* in2,
                               const Shape& so, int8_t* out) {
  return SquaredDifferenceT<int8_t>(p, s1, in1, s2, in2, so, out, -128, 127);
}
KernelStatus SquaredDifference16(const SquaredDifferenceParams& p, const Shape& s1,
                                 const int16_t* in1, const Shape& s2, const int16_t* in2,
                                 const Shape& so, int16_t* out) {
  return SquaredDifferenceT<int16_t>(p, s1, in1, s2, in2, so, out, -32768, 32767);
}
KernelStatus Minimum(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                     const Shape& so, int8_t* out) {
  return MICA_ELEMENTWISE_BEST(Minimum)(s1, in1, s2, in2, so, out);
}
KernelStatus Maximum(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                     const Shape& so, int8_t* out) {
  return MICA_ELEMENTWISE_BEST(Maximum)(s1, in1, s2, in2, so, out);
}
KernelStatus Minimum16(const Shape& s1, const int16_t* in1, const Shape& s2, const int16_t* in2,
                       const Shape& so, int16_t* out) {
  return MICA_ELEMENTWISE_BEST(Minimum16)(s1, in1, s2, in2, so, out);
}
KernelStatus Maximum16(const Shape& s1, const int16_t* in1, const Shape& s2, const int16_t* in2,
                       const Shape& so, int16_t* out) {
  return MICA_ELEMENTWISE_BEST(Maximum16)(s1, in1, s2, in2, so, out);
}

VariantList<AddFn> AddVariants() {
  static constexpr Variant<AddFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::AddScalar)
      MICA_KERNELS_VARIANT_DSP(internal::AddDsp)
      MICA_KERNELS_VARIANT_MVE(internal::AddMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Add16Fn> Add16Variants() {
  static constexpr Variant<Add16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Add16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<AddFn> SubVariants() {
  static constexpr Variant<AddFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::SubScalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Add16Fn> Sub16Variants() {
  static constexpr Variant<Add16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Sub16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<MulFn> MulVariants() {
  static constexpr Variant<MulFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::MulScalar)
      MICA_KERNELS_VARIANT_DSP(internal::MulDsp)
      MICA_KERNELS_VARIANT_MVE(internal::MulMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<Mul16Fn> Mul16Variants() {
  static constexpr Variant<Mul16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Mul16Scalar)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

VariantList<MinMaxFn> MinimumVariants() {
  static constexpr Variant<MinMaxFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::MinimumScalar)
      MICA_KERNELS_VARIANT_DSP(internal::MinimumDsp)
      MICA_KERNELS_VARIANT_MVE(internal::MinimumMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<MinMaxFn> MaximumVariants() {
  static constexpr Variant<MinMaxFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::MaximumScalar)
      MICA_KERNELS_VARIANT_DSP(internal::MaximumDsp)
      MICA_KERNELS_VARIANT_MVE(internal::MaximumMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<MinMax16Fn> Minimum16Variants() {
  static constexpr Variant<MinMax16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Minimum16Scalar)
      MICA_KERNELS_VARIANT_DSP(internal::Minimum16Dsp)
      MICA_KERNELS_VARIANT_MVE(internal::Minimum16Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}
VariantList<MinMax16Fn> Maximum16Variants() {
  static constexpr Variant<MinMax16Fn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::Maximum16Scalar)
      MICA_KERNELS_VARIANT_DSP(internal::Maximum16Dsp)
      MICA_KERNELS_VARIANT_MVE(internal::Maximum16Mve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
