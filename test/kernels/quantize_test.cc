// QUANTIZE / DEQUANTIZE / requantization against <cmath> references.
#include "mica/kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/fixed_point_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using testing::ElemRng;

template <typename T>
void CheckQuantize(ElemRng& rng) {
  const int n = 500;
  kernels::AffineQuant q{static_cast<float>(rng.Real(1e-4, 0.5)), rng.Uniform(-100, 100)};
  std::vector<float> in(n);
  for (auto& v : in) v = static_cast<float>(rng.Real(-80, 80));
  in[0] = 0.5f * q.scale;   // an exact tie: rounds away from zero
  in[1] = -1.5f * q.scale;
  in[2] = 1e30f;
  in[3] = -1e30f;
  in[4] = std::numeric_limits<float>::quiet_NaN();
  std::vector<T> out(n);
  KernelStatus st = sizeof(T) == 1
                        ? kernels::Quantize(q, n, in.data(), reinterpret_cast<int8_t*>(out.data()))
                        : kernels::Quantize16(q, n, in.data(), reinterpret_cast<int16_t*>(out.data()));
  REQUIRE(st == KernelStatus::kOk);
  constexpr int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  for (int i = 5; i < n; ++i) {
    const double r = std::round(in[i] / q.scale);  // float quotient, std::round
    const int64_t want = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(std::round(in[i] / q.scale)) + q.zero_point, lo), hi);
    (void)r;
    CAPTURE(i, in[i]);
    REQUIRE(out[i] == want);
  }
  CHECK(out[2] == hi);
  CHECK(out[3] == lo);
  // Dequantize round trip.
  std::vector<float> back(n);
  st = sizeof(T) == 1
           ? kernels::Dequantize(q, n, reinterpret_cast<const int8_t*>(out.data()), back.data())
           : kernels::Dequantize16(q, n, reinterpret_cast<const int16_t*>(out.data()), back.data());
  REQUIRE(st == KernelStatus::kOk);
  for (int i = 0; i < n; ++i) {
    REQUIRE(back[i] == static_cast<float>(static_cast<double>(q.scale) * (out[i] - q.zero_point)));
  }
}

TEST_CASE("Quantize and Dequantize follow TFLite's rounding", "[kernels][quantize]") {
  const uint64_t seed = testing::TestSeed(0x9A);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 10; ++iter) {
    CheckQuantize<int8_t>(rng);
    CheckQuantize<int16_t>(rng);
  }
  // Hand-computed ties: 0.5 -> 1, -1.5 -> -2, 2.5 -> 3 (scale 1, zero point 0).
  const float in[3] = {0.5f, -1.5f, 2.5f};
  int8_t out[3];
  REQUIRE(kernels::Quantize({1.0f, 0}, 3, in, out) == KernelStatus::kOk);
  CHECK(out[0] == 1);
  CHECK(out[1] == -2);
  CHECK(out[2] == 3);
  CHECK(kernels::Quantize({0.0f, 0}, 3, in, out) == KernelStatus::kArgError);
}

TEST_CASE("Requantize matches the reference for all type pairs", "[kernels][quantize]") {
  const uint64_t seed = testing::TestSeed(0x9B);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 20; ++iter) {
    kernels::RequantizeParams p;
    p.input_zero_point = rng.ZeroPoint8();
    p.output_zero_point = rng.ZeroPoint8();
    p.output = testing::QuantizeRef(rng.Real(0.01, 300));
    const auto a8 = rng.Fill<int8_t>(100, -128, 127);
    const auto a16 = rng.Fill<int16_t>(100, -32768, 32767);
    std::vector<int8_t> o8(100);
    std::vector<int16_t> o16(100);
    auto ref = [&](int32_t x, int32_t lo, int32_t hi) {
      return testing::RefClamp(int64_t{testing::RefMultiplyByQuantizedMultiplier(
                                   x - p.input_zero_point, p.output.multiplier, p.output.shift)} +
                                   p.output_zero_point,
                               lo, hi);
    };
    REQUIRE(kernels::Requantize(p, 100, a8.data(), o8.data()) == KernelStatus::kOk);
    for (int i = 0; i < 100; ++i) REQUIRE(o8[i] == ref(a8[i], -128, 127));
    REQUIRE(kernels::Requantize(p, 100, a8.data(), o16.data()) == KernelStatus::kOk);
    for (int i = 0; i < 100; ++i) REQUIRE(o16[i] == ref(a8[i], -32768, 32767));
    REQUIRE(kernels::Requantize(p, 100, a16.data(), o8.data()) == KernelStatus::kOk);
    for (int i = 0; i < 100; ++i) REQUIRE(o8[i] == ref(a16[i], -128, 127));
    REQUIRE(kernels::Requantize(p, 100, a16.data(), o16.data()) == KernelStatus::kOk);
    for (int i = 0; i < 100; ++i) REQUIRE(o16[i] == ref(a16[i], -32768, 32767));
  }
}


// Real-valued requantization in double: round(s_in * (q - zp_in) / s_out) + zp_out, clamped.
int64_t DoubleRequant(int64_t q, double s_in, int64_t zp_in, double s_out, int64_t zp_out,
                      int64_t lo, int64_t hi) {
  const double r = std::round(s_in * static_cast<double>(q - zp_in) / s_out);
  return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(r) + zp_out, lo), hi);
}

template <typename In, typename Out>
void CheckRequantPair(ElemRng& rng, bool same_scale) {
  constexpr int64_t kInLo = std::numeric_limits<In>::min(), kInHi = std::numeric_limits<In>::max();
  constexpr int64_t kOutLo = std::numeric_limits<Out>::min();
  constexpr int64_t kOutHi = std::numeric_limits<Out>::max();
  const double s_in = rng.Real(1e-3, 2.0);
  const double s_out = same_scale ? s_in : rng.Real(1e-3, 2.0);
  // Zero points inside each type's range (the int32 side keeps well inside it).
  auto zp = [&](int64_t lo, int64_t hi) {
    return static_cast<int32_t>(rng.Uniform(static_cast<int32_t>(std::max<int64_t>(lo, -30000)),
                                            static_cast<int32_t>(std::min<int64_t>(hi, 30000))));
  };
  kernels::RequantizeParams p;
  p.input_zero_point = zp(kInLo, kInHi);
  p.output_zero_point = zp(kOutLo, kOutHi);
  p.output = testing::QuantizeRef(static_cast<double>(static_cast<float>(s_in)) /
                                  static_cast<double>(static_cast<float>(s_out)));
  const int n = 300;
  std::vector<In> in(n);
  for (int i = 0; i < n; ++i) {
    const int64_t lo = std::max<int64_t>(kInLo, -(int64_t{1} << 18));
    const int64_t hi = std::min<int64_t>(kInHi, int64_t{1} << 18);
    in[i] = static_cast<In>(lo + static_cast<int64_t>(rng.Real(0, 1) * static_cast<double>(hi - lo)));
  }
  in[0] = static_cast<In>(kInLo > -(int64_t{1} << 18) ? kInLo : -(int64_t{1} << 18));
  in[1] = static_cast<In>(kInHi < (int64_t{1} << 18) ? kInHi : (int64_t{1} << 18));
  std::vector<Out> out(n);
  REQUIRE(kernels::Requantize(p, n, in.data(), out.data()) == KernelStatus::kOk);
  for (int i = 0; i < n; ++i) {
    CAPTURE(i, int64_t{in[i]}, s_in, s_out, p.input_zero_point, p.output_zero_point);
    // TFLite's arithmetic (independent reference)...
    const int64_t ref = testing::RefClamp(
        int64_t{testing::RefMultiplyByQuantizedMultiplier(in[i] - p.input_zero_point,
                                                          p.output.multiplier, p.output.shift)} +
            p.output_zero_point,
        kOutLo, kOutHi);
    REQUIRE(int64_t{out[i]} == ref);
    // ...agrees with real arithmetic: exactly when the scales are equal, else within a rounding.
    const int64_t real = DoubleRequant(in[i], static_cast<float>(s_in), p.input_zero_point,
                                       static_cast<float>(s_out), p.output_zero_point, kOutLo,
                                       kOutHi);
    if (same_scale) {
      REQUIRE(int64_t{out[i]} == real);
    } else {
      REQUIRE(std::abs(int64_t{out[i]} - real) <= 1);
    }
  }
}

TEST_CASE("Requantize covers TFLite Micro's integer pairs, exact against double math",
          "[kernels][quantize]") {
  const uint64_t seed = testing::TestSeed(0x9C);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 20; ++iter) {
    for (bool same : {true, false}) {
      CheckRequantPair<uint8_t, int8_t>(rng, same);
      CheckRequantPair<int8_t, uint8_t>(rng, same);
      CheckRequantPair<int8_t, int32_t>(rng, same);
      CheckRequantPair<int16_t, int32_t>(rng, same);
      CheckRequantPair<int32_t, int8_t>(rng, same);
      CheckRequantPair<int32_t, int16_t>(rng, same);
      CheckRequantPair<int8_t, int16_t>(rng, same);
      CheckRequantPair<int16_t, int8_t>(rng, same);
    }
  }
  // The common model-input case: uint8 image data with zero point 128 to int8 with zero point
  // 0 and the same scale is q - 128 for every value (and the reverse at outputs).
  kernels::RequantizeParams p;
  p.input_zero_point = 128;
  p.output_zero_point = 0;
  p.output = testing::QuantizeRef(1.0);
  std::vector<uint8_t> u(256);
  for (int i = 0; i < 256; ++i) u[i] = static_cast<uint8_t>(i);
  std::vector<int8_t> s(256);
  REQUIRE(kernels::Requantize(p, 256, u.data(), s.data()) == KernelStatus::kOk);
  for (int i = 0; i < 256; ++i) REQUIRE(int{s[i]} == i - 128);
  p.input_zero_point = 0;
  p.output_zero_point = 128;
  std::vector<uint8_t> back(256);
  REQUIRE(kernels::Requantize(p, 256, s.data(), back.data()) == KernelStatus::kOk);
  CHECK(back == u);
}

}  // namespace
}  // namespace mica
