// Quantization parameter choice, value conversion, observers, metrics and multipliers.
#include "mica/quant/quant_params.h"

#include <cmath>
#include <limits>

#include "mica/quant/metrics.h"
#include "mica/quant/multiplier.h"
#include "mica/quant/observer.h"
#include "mica/model/builder.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace quant {
namespace {

TEST_CASE("Asymmetric params widen to include zero and make it exact") {
  QuantParams p = ChooseAsymmetricParams(-1.0f, 3.0f);
  CHECK(p.scale == Approx(4.0 / 255.0));
  CHECK(p.zero_point == -64);  // round(-128 + 63.75)
  p = ChooseAsymmetricParams(0.0f, 6.0f);
  CHECK(p.scale == Approx(6.0 / 255.0));
  CHECK(p.zero_point == -128);
  p = ChooseAsymmetricParams(0.5f, 6.0f);  // widened to [0, 6]
  CHECK(p.zero_point == -128);
  p = ChooseAsymmetricParams(-2.0f, -1.0f);  // widened to [-2, 0]
  CHECK(p.scale == Approx(2.0 / 255.0));
  CHECK(p.zero_point == 127);
  p = ChooseAsymmetricParams(0.0f, 0.0f);
  CHECK(p.scale == 1.0f);
  CHECK(p.zero_point == 0);
  p = ChooseAsymmetricParams(-std::numeric_limits<float>::infinity(), 1.0f);
  CHECK(p.scale == 1.0f);

  const uint64_t seed = testing::TestSeed(77);
  CAPTURE(seed);
  SeededRng rng(seed);
  for (int i = 0; i < 500; ++i) {
    const float lo = -rng.Uniform01() * 50.0f, hi = rng.Uniform01() * 50.0f + 1e-3f;
    CAPTURE(lo, hi);
    const QuantParams q = ChooseAsymmetricParams(lo, hi);
    REQUIRE(q.zero_point >= -128);
    REQUIRE(q.zero_point <= 127);
    REQUIRE(DequantizeValue(QuantizeValue(0.0f, q), q) == 0.0f);
    // The ends of the range survive within one step.
    REQUIRE(std::fabs(DequantizeValue(QuantizeValue(lo, q), q) - lo) <= q.scale);
    REQUIRE(std::fabs(DequantizeValue(QuantizeValue(hi, q), q) - hi) <= q.scale);
  }
}

TEST_CASE("Quantize rounds half away from zero and saturates") {
  const QuantParams p{0.5f, 3};
  CHECK(QuantizeValue(0.25f, p) == 4);    // 0.5 -> 1
  CHECK(QuantizeValue(-0.25f, p) == 2);   // -0.5 -> -1
  CHECK(QuantizeValue(1000.0f, p) == 127);
  CHECK(QuantizeValue(-1000.0f, p) == -128);
  CHECK(QuantizeValue(std::nanf(""), p) == 3);
  CHECK(DequantizeValue(5, p) == 1.0f);
}

TEST_CASE("Symmetric per-channel weights follow TFLite axes") {
  // OHWI [2,1,1,3]: channel 0 max |w| = 2, channel 1 max |w| = 0.5.
  const float w[] = {1.1f, -2.0f, 0.3f, 0.2f, 0.5f, -0.125f};
  ChannelQuantized pc = QuantizeSymmetric(w, {2, 1, 1, 3}, 0);
  REQUIRE(pc.scales.size() == 2);
  CHECK(pc.scales[0] == Approx(2.0 / 127));
  CHECK(pc.scales[1] == Approx(0.5 / 127));
  // 69.85 -> 70, 19.05 -> 19, 50.8 -> 51, -31.75 -> -32
  CHECK(pc.values == std::vector<int8_t>{70, -127, 19, 51, 127, -32});
  // Depthwise 1HWC [1,1,2,2]: channels are the innermost axis 3.
  const float dw[] = {1.0f, 0.11f, -4.0f, 0.2f};
  ChannelQuantized d = QuantizeSymmetric(dw, {1, 1, 2, 2}, 3);
  REQUIRE(d.scales.size() == 2);
  CHECK(d.scales[0] == Approx(4.0 / 127));
  CHECK(d.scales[1] == Approx(0.2 / 127));
  CHECK(d.values == std::vector<int8_t>{32, 70, -127, 127});  // 31.75 -> 32, 69.85 -> 70
  // Per tensor, and an all-zero channel gets scale 1.
  ChannelQuantized pt = QuantizeSymmetric(w, {2, 3}, -1);
  REQUIRE(pt.scales.size() == 1);
  CHECK(pt.scales[0] == Approx(2.0 / 127));
  const float z[] = {0, 0, 1, 1};
  CHECK(QuantizeSymmetric(z, {2, 2}, 0).scales[0] == 1.0f);
}

TEST_CASE("Bias quantizes with input scale times weight scale") {
  const float b[] = {0.1f, -0.2f, 1e12f};
  const std::vector<int32_t> q = QuantizeBias(b, 3, 0.01f, {0.5f, 0.25f, 0.001f});
  CHECK(q[0] == 20);     // 0.1 / 0.005
  CHECK(q[1] == -80);    // -0.2 / 0.0025
  CHECK(q[2] == std::numeric_limits<int32_t>::max());
  CHECK(QuantizeBias(b, 2, 0.01f, {0.5f}) == std::vector<int32_t>{20, -40});
}

TEST_CASE("MinMaxObserver skips non-finite values") {
  MinMaxObserver o;
  CHECK(o.empty());
  const float v[] = {1.0f, std::nanf(""), -3.0f, std::numeric_limits<float>::infinity(), 2.0f};
  o.Observe(v, 5);
  CHECK(o.min() == -3.0f);
  CHECK(o.max() == 2.0f);
  CHECK(o.count() == 3);
  CHECK(o.non_finite() == 2);
  RangeCollector rc;
  rc.Observe(4, v, 1);
  rc.Observe(4, v + 2, 1);
  rc.Observe(7, v + 1, 1);  // only NaN: no range
  const TensorRanges r = rc.ranges();
  REQUIRE(r.size() == 1);
  CHECK(r.at(4).min == -3.0f);
  CHECK(r.at(4).max == 1.0f);
}

TEST_CASE("Error metrics are hand-computed values") {
  const float ref[] = {1.0f, 2.0f};
  const float approx[] = {1.0f, 1.0f};
  const ErrorMetrics m = CompareToReference(ref, approx, 2);
  CHECK(m.sqnr_db == Approx(10.0 * std::log10(5.0)));
  CHECK(m.max_abs_error == 1.0);
  CHECK(m.mean_abs_error == 0.5);
  CHECK(m.rmse == Approx(std::sqrt(0.5)));
  CHECK(std::isinf(CompareToReference(ref, ref, 2).sqnr_db));
  const float zero[] = {0.0f, 0.0f};
  CHECK(CompareToReference(zero, ref, 2).sqnr_db < 0);
  const int8_t q[] = {-128, 0, 127};
  CHECK(DequantizeInt8(q, 3, QuantParams{0.5f, -128}) == std::vector<float>{0.0f, 64.0f, 127.5f});
}

TEST_CASE("QuantizeMultiplier reconstructs the real scale") {
  const FixedPointMultiplier a = QuantizeMultiplier(0.5);
  CHECK(a.multiplier == (int32_t{1} << 30));
  CHECK(a.shift == 0);
  const FixedPointMultiplier b = QuantizeMultiplier(3.0);  // 0.75 * 2^2
  CHECK(b.multiplier == 1610612736);
  CHECK(b.shift == 2);
  CHECK(QuantizeMultiplier(0.0).multiplier == 0);
  SeededRng rng(testing::TestSeed(3));
  for (int i = 0; i < 1000; ++i) {
    const double real = std::ldexp(0.5 + 0.5 * rng.Uniform01(), static_cast<int>(rng.Next() % 40) - 30);
    const FixedPointMultiplier m = QuantizeMultiplier(real);
    CAPTURE(real);
    REQUIRE(m.multiplier >= (int32_t{1} << 30));
    const double back = std::ldexp(static_cast<double>(m.multiplier), m.shift - 31);
    REQUIRE(std::fabs(back - real) <= real * std::ldexp(1.0, -30));
  }
}

}  // namespace
}  // namespace quant
}  // namespace mica
