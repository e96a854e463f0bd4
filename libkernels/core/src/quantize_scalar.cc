// QUANTIZE / DEQUANTIZE / requantization (scalar only: not hot in int8 graphs).
#include <limits>

#include "internal/requantize.h"
#include "mica/kernels/quantize.h"

namespace mica {
namespace kernels {
namespace {

// std::round(x) for float, then clamped to [lo, hi]; NaN gives 0 (what Arm's VCVT gives, and
// the host executor's choice).
inline int32_t RoundClampToInt(float x, int32_t lo, int32_t hi) {
  if (x != x) return 0;
  if (!(x > static_cast<float>(lo) - 1.0f)) return lo;
  if (!(x < static_cast<float>(hi) + 1.0f)) return hi;
  const float a = x < 0 ? -x : x;
  int32_t r = static_cast<int32_t>(a + 0.5f);
  if (static_cast<float>(r) - a > 0.5f) --r;  // a + 0.5f rounded up in float
  return x < 0 ? -r : r;
}

template <typename T>
KernelStatus QuantizeT(const AffineQuant& q, int32_t n, const float* in, T* out) {
  if (n < 0 || !(q.scale > 0.0f)) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  constexpr int32_t kLo = std::numeric_limits<T>::min();
  constexpr int32_t kHi = std::numeric_limits<T>::max();
  for (int32_t i = 0; i < n; ++i) {
    // The rounded quotient is clamped well outside the type first so the zero point can be
    // added without overflow; results are identical to TFLite's within the type's range.
    const int32_t r = RoundClampToInt(in[i] / q.scale, -(1 << 20), 1 << 20);
    out[i] = static_cast<T>(internal::Clamp(r + q.zero_point, kLo, kHi));
  }
  return KernelStatus::kOk;
}

template <typename T>
KernelStatus DequantizeT(const AffineQuant& q, int32_t n, const T* in, float* out) {
  if (n < 0) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  const double scale = static_cast<double>(q.scale);
  for (int32_t i = 0; i < n; ++i) {
    out[i] = static_cast<float>(scale * static_cast<double>(in[i] - q.zero_point));
  }
  return KernelStatus::kOk;
}

inline int32_t WrappingAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

template <typename In, typename Out>
KernelStatus RequantizeT(const RequantizeParams& p, int32_t n, const In* in, Out* out) {
  if (n < 0 || p.output.shift > 31 || p.output.shift < -31) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  constexpr int32_t kLo = std::numeric_limits<Out>::min();
  constexpr int32_t kHi = std::numeric_limits<Out>::max();
  for (int32_t i = 0; i < n; ++i) {
    const int32_t x = WrappingAdd(static_cast<int32_t>(in[i]), -p.input_zero_point);
    const int32_t v = WrappingAdd(
        internal::MultiplyByQuantizedMultiplier(x, p.output.multiplier, p.output.shift),
        p.output_zero_point);
    out[i] = static_cast<Out>(internal::Clamp(v, kLo, kHi));
  }
  return KernelStatus::kOk;
}

}  // namespace

KernelStatus Quantize(const AffineQuant& q, int32_t n, const float* in, int8_t* out) {
  return QuantizeT(q, n, in, out);
}
KernelStatus Quantize16(const AffineQuant& q, int32_t n, const float* in, int16_t* out) {
  return QuantizeT(q, n, in, out);
}
KernelStatus Dequantize(const AffineQuant& q, int32_t n, const int8_t* in, float* out) {
  return DequantizeT(q, n, in, out);
}
KernelStatus Dequantize16(const AffineQuant& q, int32_t n, const int16_t* in, float* out) {
  return DequantizeT(q, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, uint8_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int16_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int32_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const uint8_t* in, int8_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int8_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int16_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int32_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int32_t* in, int8_t* out) {
  return RequantizeT(p, n, in, out);
}
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int32_t* in, int16_t* out) {
  return RequantizeT(p, n, in, out);
}

}  // namespace kernels
}  // namespace mica
