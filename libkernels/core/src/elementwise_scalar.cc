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

// One run of MINIMUM (kMin) or MAXIMUM (BinaryRows' row function).
template <typename T, bool kMin>
void MinMaxRow(const T* a, const T* b, bool b_one, T* out, int32_t n) {
  const auto op = [](T x, T y) { return kMin ? (x < y ? x : y) : (x > y ? x : y); };
  if (b_one) {
    const T v = *b;
    for (int32_t i = 0; i < n; ++i) out[i] = op(a[i], v);
  } else {
    for (int32_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  }
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

KernelStatus MinimumScalar(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                           const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int8_t, true>);
}
KernelStatus MaximumScalar(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                           const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int8_t, false>);
}
KernelStatus Minimum16Scalar(const Shape& s1, const int16_t* in1, const Shape& s2,
                             const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int16_t, true>);
}
KernelStatus Maximum16Scalar(const Shape& s1, const int16_t* in1, const Shape& s2,
                             const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int16_t, false>);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
