// Scalar bodies of the activation functions.
#include "activations_internal.h"
#include "internal/broadcast.h"
#include "internal/fixedpoint.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

// exp(x) for x <= 0 in double, evaluable at compile time: exp(x) = exp(x / 2^k)^(2^k) with a
// Taylor series on the reduced argument.
constexpr double ConstexprExpNeg(double x) {
  int k = 0;
  while (x < -0.125) {
    x *= 0.5;
    ++k;
  }
  double term = 1.0, sum = 1.0;
  for (int i = 1; i < 30; ++i) {
    term *= x / i;
    sum += term;
  }
  for (int i = 0; i < k; ++i) sum *= sum;
  return sum;
}

// TFLite's combined sigmoid / tanh table, 0.16 fixed point, generated here rather than stored:
// entry i is sigmoid(i / 24) * 65536 corrected by half the midpoint error of linear
// interpolation (second difference / 16), rounded; this reproduces TFLite's published values.
struct SigmoidTable {
  uint16_t v[256];
};
constexpr double ConstexprSigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + ConstexprExpNeg(-x)) : 1.0 - 1.0 / (1.0 + ConstexprExpNeg(x));
}
constexpr SigmoidTable MakeSigmoidTable() {
  SigmoidTable t{};
  for (int i = 0; i < 256; ++i) {
    const double f0 = ConstexprSigmoid((i - 1) / 24.0);
    const double f1 = ConstexprSigmoid(i / 24.0);
    const double f2 = ConstexprSigmoid((i + 1) / 24.0);
    const double v = 65536.0 * (f1 - (f0 - 2 * f1 + f2) / 16.0);
    const double r = static_cast<double>(static_cast<int64_t>(v + 0.5));
    t.v[i] = static_cast<uint16_t>(r > 65535.0 ? 65535.0 : r);
  }
  return t;
}
constexpr SigmoidTable kSigmoidTable = MakeSigmoidTable();

}  // namespace

const uint16_t* SigmoidTableUint16() { return kSigmoidTable.v; }

bool ValidLogistic(const LogisticParams& p) {
  return p.input_left_shift >= -31 && p.input_left_shift <= 31 && p.input_range_radius >= 0;
}

namespace {

inline int8_t LogisticElement(const LogisticParams& p, int32_t raw) {
  const int32_t x = raw - p.input_zero_point;
  if (x <= -p.input_range_radius) return -128;
  if (x >= p.input_range_radius) return 127;
  const int32_t q4 = MultiplyByQuantizedMultiplier(x, p.input_multiplier, p.input_left_shift);
  const int32_t v = RoundingDivideByPOT(fp::Logistic<4>(q4), 31 - 8) - 128;
  return static_cast<int8_t>(Clamp(v, -128, 127));
}

inline int8_t TanhElement(const TanhParams& p, int32_t raw) {
  const int32_t x = raw - p.input_zero_point;
  if (x <= -p.input_range_radius) return -128;
  if (x >= p.input_range_radius) return 127;
  const int32_t q4 = MultiplyByQuantizedMultiplier(x, p.input_multiplier, p.input_left_shift);
  const int32_t v = RoundingDivideByPOT(fp::Tanh<4>(q4), 31 - 7);
  return static_cast<int8_t>(Clamp(v, -128, 127));
}

// Applies `element` to n int8 values. Long inputs first tabulate all 256 possible results
// (bit-identical: the same function of the same input), then map through the table.
template <typename Element>
void MapInt8(int32_t n, const int8_t* in, int8_t* out, Element element) {
  if (n >= 512) {
    int8_t table[256];
    for (int32_t v = -128; v < 128; ++v) table[v + 128] = element(v);
    for (int32_t i = 0; i < n; ++i) out[i] = table[in[i] + 128];
  } else {
    for (int32_t i = 0; i < n; ++i) out[i] = element(in[i]);
  }
}

}  // namespace

KernelStatus LogisticScalar(const LogisticParams& p, int32_t n, const int8_t* in, int8_t* out) {
  if (!ValidLogistic(p) || n < 0) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  MapInt8(n, in, out, [&p](int32_t v) { return LogisticElement(p, v); });
  return KernelStatus::kOk;
}

KernelStatus TanhScalar(const TanhParams& p, int32_t n, const int8_t* in, int8_t* out) {
  if (!ValidLogistic(p) || n < 0) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  MapInt8(n, in, out, [&p](int32_t v) { return TanhElement(p, v); });
  return KernelStatus::kOk;
}

namespace {
// Effective multiplier / shift / rounding of the int16 sigmoid-table kernels.
struct Int16Scale {
  int32_t multiplier;
  int32_t shift;
  int32_t round;
};
inline Int16Scale MakeInt16Scale(const Logistic16Params& p) {
  Int16Scale s{p.input_multiplier, p.input_left_shift, 0};
  if (s.multiplier == 0) {
    s.multiplier = 3 << s.shift;
    s.shift = 0;
  }
  s.round = s.shift > 0 ? 1 << (s.shift - 1) : 0;
  return s;
}
inline bool ValidInt16Scale(const Logistic16Params& p) {
  return p.input_left_shift >= 0 && p.input_left_shift <= 30 && p.input_multiplier >= 0 &&
         (p.input_multiplier != 0 || p.input_left_shift <= 28) &&
         p.input_multiplier <= (1 << 16);
}
}  // namespace

int16_t Logistic16Element(int32_t multiplier, int32_t shift, int32_t round, int16_t x) {
  const uint16_t* table = kSigmoidTable.v;
  const int32_t v = static_cast<int32_t>((static_cast<int64_t>(x) * multiplier + round) >> shift);
  const uint32_t abs_v = static_cast<uint32_t>(v < 0 ? -static_cast<int64_t>(v) : v);
  const uint32_t uh = abs_v >> 9;
  uint32_t result;
  if (uh >= 255) {
    result = 0x7FFFu << 10;
  } else {
    const uint32_t ua = table[uh];
    const uint32_t ub = table[uh + 1];
    const uint32_t ut = abs_v & 0x1ffu;
    result = (ua << 9) + ut * (ub - ua);
  }
  result = v >= 0 ? (result + (1u << 9)) : ((1u << (16 + 9)) - result + (1u << 9) - 1);
  result >>= 10;
  return static_cast<int16_t>(result);
}

int16_t Tanh16Element(int32_t multiplier, int32_t shift, int32_t round, int16_t x) {
  const uint16_t* table = kSigmoidTable.v;
  const int32_t v = static_cast<int32_t>((static_cast<int64_t>(x) * multiplier + round) >> shift);
  const uint32_t abs_v = static_cast<uint32_t>(v < 0 ? -static_cast<int64_t>(v) : v);
  const uint32_t uh = abs_v >> 8;
  int32_t result;
  if (uh >= 255) {
    result = 0xFFFF << 8;
  } else {
    const uint32_t ua = table[uh];
    const uint32_t ub = table[uh + 1];
    const uint32_t ut = abs_v & 0xFFu;
    result = static_cast<int32_t>((ua << 8) + ut * (ub - ua));
  }
  result = v >= 0 ? (result - (1 << (14 + 9)) + (1 << (9 - 2)))
                  : (-result + (1 << (14 + 9)) + (1 << (9 - 2)) - 1);
  result >>= (9 - 1);
  return static_cast<int16_t>(result);
}

KernelStatus Logistic16Scalar(const Logistic16Params& p, int32_t n, const int16_t* in,
                              int16_t* out) {
  if (!ValidInt16Scale(p) || n < 0) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  const Int16Scale s = MakeInt16Scale(p);
  for (int32_t i = 0; i < n; ++i) out[i] = Logistic16Element(s.multiplier, s.shift, s.round, in[i]);
  return KernelStatus::kOk;
}

KernelStatus Tanh16Scalar(const Tanh16Params& p, int32_t n, const int16_t* in, int16_t* out) {
  if (!ValidInt16Scale(p) || n < 0) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  const Int16Scale s = MakeInt16Scale(p);
  for (int32_t i = 0; i < n; ++i) out[i] = Tanh16Element(s.multiplier, s.shift, s.round, in[i]);
  return KernelStatus::kOk;
}

namespace {

template <typename T>
KernelStatus ReluT(const ReluParams& p, int32_t n, const T* in, T* out, int32_t lo, int32_t hi) {
  if (n < 0 || p.output.shift > 31 || p.output.shift < -31 ||
      p.activation.min > p.activation.max || p.activation.min < lo || p.activation.max > hi) {
    return KernelStatus::kArgError;
  }
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t v = p.output_offset + MultiplyByQuantizedMultiplier(in[i] - p.input_zero_point,
                                                                      p.output.multiplier,
                                                                      p.output.shift);
    out[i] = static_cast<T>(Clamp(v, p.activation.min, p.activation.max));
  }
  return KernelStatus::kOk;
}

template <typename T>
KernelStatus ClampT(ActivationRange r, int32_t n, const T* in, T* out, int32_t lo, int32_t hi) {
  if (n < 0 || r.min > r.max || r.min < lo || r.max > hi) return KernelStatus::kArgError;
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int32_t i = 0; i < n; ++i) out[i] = static_cast<T>(Clamp(in[i], r.min, r.max));
  return KernelStatus::kOk;
}

template <typename T>
KernelStatus LeakyReluT(const LeakyReluParams& p, int32_t n, const T* in, T* out, int32_t lo,
                        int32_t hi) {
  if (n < 0 || p.identity.shift > 31 || p.identity.shift < -31 || p.alpha.shift > 31 ||
      p.alpha.shift < -31) {
    return KernelStatus::kArgError;
  }
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t x = in[i] - p.input_zero_point;
    const Requant& q = x >= 0 ? p.identity : p.alpha;
    const int32_t v = p.output_zero_point + MultiplyByQuantizedMultiplier(x, q.multiplier, q.shift);
    out[i] = static_cast<T>(Clamp(v, lo, hi));
  }
  return KernelStatus::kOk;
}

// gemmlowp's int16 helpers used by TFLite's hard swish.
inline int16_t Srdhm16(int16_t a, int16_t b) {
  if (a == b && a == -32768) return 32767;
  const int32_t ab = static_cast<int32_t>(a) * b;
  const int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((ab + nudge) / (1 << 15));
}
inline int16_t SaturatingDoublingHighMul16(int16_t a, int16_t b) {
  if (a == b && a == -32768) return 32767;
  const int32_t ab = static_cast<int32_t>(a) * b;
  return static_cast<int16_t>(ab / (1 << 15));
}
inline int16_t SaturatingShiftLeft16(int16_t a, int shift) {
  const int32_t v = static_cast<int32_t>(a) * (int32_t{1} << shift);
  return static_cast<int16_t>(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}
inline int16_t RoundingDivideByPOT16(int16_t x, int exponent) {
  return static_cast<int16_t>(RoundingDivideByPOT(x, exponent));
}

}  // namespace

KernelStatus ReluScalar(const ReluParams& p, int32_t n, const int8_t* in, int8_t* out) {
  return ReluT<int8_t>(p, n, in, out, -128, 127);
}
KernelStatus Relu16Scalar(const ReluParams& p, int32_t n, const int16_t* in, int16_t* out) {
  return ReluT<int16_t>(p, n, in, out, -32768, 32767);
}
KernelStatus ClampScalar(ActivationRange r, int32_t n, const int8_t* in, int8_t* out) {
  return ClampT<int8_t>(r, n, in, out, -128, 127);
}
KernelStatus Clamp16Scalar(ActivationRange r, int32_t n, const int16_t* in, int16_t* out) {
  return ClampT<int16_t>(r, n, in, out, -32768, 32767);
}
KernelStatus LeakyReluScalar(const LeakyReluParams& p, int32_t n, const int8_t* in,
                             int8_t* out) {
  return LeakyReluT<int8_t>(p, n, in, out, -128, 127);
}
KernelStatus LeakyRelu16Scalar(const LeakyReluParams& p, int32_t n, const int16_t* in,
                               int16_t* out) {
  return LeakyReluT<int16_t>(p, n, in, out, -32768, 32767);
}

KernelStatus HardSwishScalar(const HardSwishParams& p, int32_t n, const int8_t* in,
                             int8_t* out) {
  if (n < 0 || p.output_multiplier_exponent > 0 || p.output_multiplier_exponent < -15 ||
      p.reluish_multiplier_exponent > 15 || p.reluish_multiplier_exponent < -15 ||
      p.input_zero_point < -128 || p.input_zero_point > 127) {
    return KernelStatus::kArgError;
  }
  if (n == 0) return KernelStatus::kOk;
  if (in == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int32_t i = 0; i < n; ++i) {
    const int16_t x = static_cast<int16_t>(in[i] - p.input_zero_point);
    const int16_t hires = static_cast<int16_t>(x * (1 << 7));
    const int16_t preshift_out = Srdhm16(hires, p.output_multiplier_fixedpoint_int16);
    int16_t reluish = hires;
    if (p.reluish_multiplier_exponent > 0) {
      reluish = SaturatingShiftLeft16(reluish, p.reluish_multiplier_exponent - 1);
    }
    reluish = Srdhm16(reluish, p.reluish_multiplier_fixedpoint_int16);
    if (p.reluish_multiplier_exponent > 0) reluish = SaturatingShiftLeft16(reluish, 1);
    if (p.reluish_multiplier_exponent < 0) {
      reluish = RoundingDivideByPOT16(reluish, -p.reluish_multiplier_exponent);
    }
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
    const int16_t preshift = SaturatingDoublingHighMul16(reluish, preshift_out);
    int32_t v = RoundingDivideByPOT16(preshift, -p.output_multiplier_exponent);
    v = static_cast<int16_t>(v + p.output_zero_point);
    out[i] = static_cast<int8_t>(Clamp(v, -128, 127));
  }
  return KernelStatus::kOk;
}

KernelStatus PreluScalar(const PreluParams& p, const Shape& in_shape, const int8_t* in,
                         const Shape& alpha_shape, const int8_t* alpha, int8_t* out) {
  if (p.output1.shift > 31 || p.output1.shift < -31 || p.output2.shift > 31 ||
      p.output2.shift < -31) {
    return KernelStatus::kArgError;
  }
  return BinaryElementwise(in_shape, in, alpha_shape, alpha, in_shape, out,
                           [&p](int8_t x, int8_t a) {
                             const int32_t v = p.input_offset + x;
                             int32_t o;
                             if (v >= 0) {
                               o = MultiplyByQuantizedMultiplier(v, p.output1.multiplier,
                                                                 p.output1.shift);
                             } else {
                               o = MultiplyByQuantizedMultiplier(v * (p.alpha_offset + a),
                                                                 p.output2.multiplier,
                                                                 p.output2.shift);
                             }
                             return static_cast<int8_t>(Clamp(o + p.output_offset, -128, 127));
                           });
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
