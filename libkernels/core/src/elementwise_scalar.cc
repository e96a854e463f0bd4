// Scalar bodies of the elementwise ops.
#include "elementwise_internal.h"
#include "internal/broadcast.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

template <typename T, int kSign>
KernelStatus AddSubT(const AddParams& p, const Shape& s1, const T* in1, const Shape& s2,
                     const T* in2, const Shape& so, T* out, int32_t lo, int32_t hi) {
  if (!ValidAddParams(p, lo, hi)) return KernelStatus::kArgError;
  // Parameters by value: a copy the output stores cannot alias stays in registers.
  return BinaryElementwise(s1, in1, s2, in2, so, out, [q = p](T a, T b) {
    return static_cast<T>(AddSubElement<kSign>(q, a, b));
  });
}

template <typename T>
KernelStatus MulT(const MulParams& p, const Shape& s1, const T* in1, const Shape& s2,
                  const T* in2, const Shape& so, T* out, int32_t lo, int32_t hi) {
  if (!ValidMulParams(p, lo, hi)) return KernelStatus::kArgError;
  return BinaryElementwise(s1, in1, s2, in2, so, out,
                           [q = p](T a, T b) { return static_cast<T>(MulElement(q, a, b)); });
}

}  // namespace

KernelStatus AddScalar(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                       const int8_t* in2, const Shape& so, int8_t* out) {
  return AddSubT<int8_t, 1>(p, s1, in1, s2, in2, so, out, -128, 127);
}
KernelStatus Add16Scalar(const AddParams& p, const Shape& s1, const int16_t* in1,
                         const Shape& s2, const int16_t* in2, const Shape& so, int16_t* out) {
  return AddSubT<int16_t, 1>(p, s1, in1, s2, in2, so, out, -32768, 32767);
}
KernelStatus SubScalar(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                       const int8_t* in2, const Shape& so, int8_t* out) {
  return AddSubT<int8_t, -1>(p, s1, in1, s2, in2, so, out, -128, 127);
}
KernelStatus Sub16Scalar(const AddParams& p, const Shape& s1, const int16_t* in1,
                         const Shape& s2, const int16_t* in2, const Shape& so, int16_t* out) {
  return AddSubT<int16_t, -1>(p, s1, in1, s2, in2, so, out, -32768, 32767);
}
KernelStatus MulScalar(const MulParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                       const int8_t* in2, const Shape& so, int8_t* out) {
  return MulT<int8_t>(p, s1, in1, s2, in2, so, out, -128, 127);
}
KernelStatus Mul16Scalar(const MulParams& p, const Shape& s1, const int16_t* in1,
                         const Shape& s2, const int16_t* in2, const Shape& so, int16_t* out) {
  return MulT<int16_t>(p, s1, in1, s2, in2, so, out, -32768, 32767);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
