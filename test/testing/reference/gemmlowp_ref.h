// Reference Q-format fixed point for tests, written independently of the kernel core's
// internal/fixedpoint.h: a FixedPoint<IntegerBits> value class with mask-select semantics
// (gemmlowp's documented algorithms: exp on negative values by a Taylor polynomial on
// [-1/4, 0) plus a barrel shifter of exp(-2^k) constants, 1/(1+x) and (1-x)/(1+x) by three
// Newton-Raphson steps, logistic and tanh from those), 64-bit intermediates throughout.
#ifndef MICA_TESTING_REFERENCE_GEMMLOWP_REF_H_
#define MICA_TESTING_REFERENCE_GEMMLOWP_REF_H_

#include <cmath>
#include <cstdint>

namespace mica {
namespace testing {
namespace gref {

// round(a * b / 2^31) with ties toward +infinity (what the nudge-and-truncate of VQRDMULH
// amounts to); -1 * -1 saturates.
inline int32_t HighMul(int32_t a, int32_t b) {
  if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
  const int64_t p = int64_t{a} * b;
  return static_cast<int32_t>((p + (int64_t{1} << 30)) >> 31);  // floor
}

// round(x / 2^e), ties away from zero.
inline int32_t DivPot(int32_t x, int e) {
  if (e == 0) return x;
  const int64_t mag = x < 0 ? -int64_t{x} : int64_t{x};
  const int64_t q = (mag + (int64_t{1} << (e - 1))) >> e;
  return static_cast<int32_t>(x < 0 ? -q : q);
}

// x * 2^e saturated to int32 (e > 0) or rounded (e < 0).
inline int32_t MulPot(int32_t x, int e) {
  if (e <= 0) return DivPot(x, -e);
  const int64_t v = int64_t{x} * (int64_t{1} << e);
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : static_cast<int32_t>(v);
}

template <int I>
struct Fx {
  int32_t raw;
  static Fx FromRaw(int32_t r) { return Fx{r}; }
  static Fx One() { return Fx{I == 0 ? INT32_MAX : static_cast<int32_t>(int64_t{1} << (31 - I))}; }
  static Fx FromDouble(double d) {
    return Fx{static_cast<int32_t>(std::llround(d * std::ldexp(1.0, 31 - I)))};
  }
  template <int J>
  Fx<J> Rescaled() const {
    return Fx<J>{MulPot(raw, I - J)};
  }
};
template <int I>
Fx<I> operator+(Fx<I> a, Fx<I> b) {
  return Fx<I>{static_cast<int32_t>(int64_t{a.raw} + b.raw)};
}
template <int I>
Fx<I> operator-(Fx<I> a, Fx<I> b) {
  return Fx<I>{static_cast<int32_t>(int64_t{a.raw} - b.raw)};
}
template <int I, int J>
Fx<I + J> operator*(Fx<I> a, Fx<J> b) {
  return Fx<I + J>{HighMul(a.raw, b.raw)};
}

inline Fx<0> ExpQuarter(Fx<0> a) {
  const Fx<0> c = Fx<0>{1895147668};   // exp(-1/8)
  const Fx<0> third = Fx<0>{715827883};
  const Fx<0> x = a + Fx<0>{1 << 28};  // + 1/8
  const Fx<0> x2 = x * x, x3 = x2 * x, x4 = x2 * x2;
  const Fx<0> x4_4 = Fx<0>{DivPot(x4.raw, 2)};
  const Fx<0> poly = Fx<0>{DivPot(((x4_4 + x3) * third + x2).raw, 1)};
  return c + c * (x + poly);
}

template <int I>
Fx<0> ExpNeg(Fx<I> a) {
  const int frac = 31 - I;
  const int32_t quarter = static_cast<int32_t>(int64_t{1} << (frac - 2));
  const Fx<I> reduced = Fx<I>{(a.raw & (quarter - 1)) - quarter};
  Fx<0> r = ExpQuarter(reduced.template Rescaled<0>());
  const int32_t rem = reduced.raw - a.raw;
  const int32_t mults[] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int k = -2; k <= 4; ++k) {
    if (I > k && (rem >> (frac + k)) & 1) r = r * Fx<0>{mults[k + 2]};
  }
  if (I > 5 && a.raw < -static_cast<int32_t>(int64_t{1} << (36 - I))) r = Fx<0>{0};
  if (a.raw == 0) r = Fx<0>::One();
  return r;
}

inline Fx<2> Newton(Fx<0> half_den) {
  Fx<2> x = Fx<2>{1515870810} + half_den * Fx<2>{-1010580540};
  for (int i = 0; i < 3; ++i) {
    const Fx<2> hx = half_den * x;
    x = x + (x * (Fx<2>::One() - hx)).template Rescaled<2>();
  }
  return x;
}

inline Fx<0> HalfSum(Fx<0> a) {
  const int64_t s = int64_t{a.raw} + INT32_MAX;
  return Fx<0>{static_cast<int32_t>((s + (s >= 0 ? 1 : -1)) / 2)};
}

inline Fx<0> OneOverOnePlusX(Fx<0> a) {
  const Fx<2> x = Newton(HalfSum(a));
  return Fx<1>{x.raw}.Rescaled<0>();  // x / 2
}

inline Fx<0> OneMinusXOverOnePlusX(Fx<0> a) {
  const Fx<2> x = Newton(HalfSum(a));
  return (x - Fx<2>::One()).Rescaled<0>();
}

template <int I>
Fx<0> Logistic(Fx<I> a) {
  if (a.raw == 0) return Fx<0>{1 << 30};
  const Fx<I> abs = a.raw > 0 ? a : Fx<I>{-a.raw};
  const Fx<0> pos = OneOverOnePlusX(ExpNeg(Fx<I>{-abs.raw}));
  return a.raw > 0 ? pos : Fx<0>::One() - pos;
}

template <int I>
Fx<0> Tanh(Fx<I> a) {
  if (a.raw == 0) return Fx<0>{0};
  const int32_t n = a.raw < 0 ? a.raw : -a.raw;
  const Fx<0> t = OneMinusXOverOnePlusX(ExpNeg(Fx<I + 1>{n}));
  return a.raw < 0 ? Fx<0>{-t.raw} : t;
}

}  // namespace gref
}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_REFERENCE_GEMMLOWP_REF_H_
