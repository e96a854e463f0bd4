// Activations: LOGISTIC / TANH int8 against the independent gemmlowp-style reference and
// float; int16 against a reference built on a std::exp sigmoid table and float; RELU, RELU6,
// LEAKY_RELU, PRELU against per-element references; HARD_SWISH against float hard swish.
#include "mica/kernels/activations.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/fixed_point_ref.h"
#include "testing/reference/gemmlowp_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using kernels::LogisticParams;
using testing::ElemRng;
using testing::RefClamp;
using testing::RefMultiplyByQuantizedMultiplier;
namespace gref = testing::gref;

// TFLite Micro's int8 LOGISTIC / TANH prepare (kInputIntegerBits = 4, frexp).
LogisticParams MakeLogisticParams(double input_scale, int32_t zp) {
  LogisticParams p;
  p.input_zero_point = zp;
  int shift = 0;
  const double q = std::frexp(input_scale * (1 << 27), &shift);
  p.input_left_shift = shift;
  p.input_multiplier = static_cast<int32_t>(std::llround(q * 2147483648.0));
  p.input_range_radius = static_cast<int32_t>(std::floor(15.0 * (1 << 27) / std::ldexp(1.0, shift)));
  return p;
}

TEST_CASE("Logistic and Tanh int8 long inputs (tabulated path) equal short calls",
          "[kernels][activations]") {
  const uint64_t seed = testing::TestSeed(0x1062);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 10; ++iter) {
    const LogisticParams p = MakeLogisticParams(rng.Real(0.002, 0.5), rng.ZeroPoint8());
    const auto in = rng.Fill<int8_t>(1500, -128, 127);
    std::vector<int8_t> lo(in.size()), th(in.size()), one(1);
    REQUIRE(kernels::Logistic(p, 1500, in.data(), lo.data()) == KernelStatus::kOk);
    REQUIRE(kernels::Tanh(p, 1500, in.data(), th.data()) == KernelStatus::kOk);
    for (size_t i = 0; i < in.size(); ++i) {
      REQUIRE(kernels::Logistic(p, 1, &in[i], one.data()) == KernelStatus::kOk);
      REQUIRE(lo[i] == one[0]);
      REQUIRE(kernels::Tanh(p, 1, &in[i], one.data()) == KernelStatus::kOk);
      REQUIRE(th[i] == one[0]);
    }
  }
}

TEST_CASE("Logistic and Tanh int8 match the fixed-point reference and float",
          "[kernels][activations]") {
  const uint64_t seed = testing::TestSeed(0x1061);
  CAPTURE(seed);
  ElemRng rng(seed);
  std::vector<int8_t> all(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<int8_t>(i - 128);
  for (int iter = 0; iter < 40; ++iter) {
    const double scale = rng.Chance(0.3) ? rng.Real(0.1, 1.0) : rng.Real(0.002, 0.1);
    const int32_t zp = rng.ZeroPoint8();
    const LogisticParams p = MakeLogisticParams(scale, zp);
    CAPTURE(iter, scale, zp, p.input_multiplier, p.input_left_shift, p.input_range_radius);
    std::vector<int8_t> lo(256), th(256);
    for (const auto& v : kernels::LogisticVariants()) {
      REQUIRE(v.fn(p, 256, all.data(), lo.data()) == KernelStatus::kOk);
    }
    for (const auto& v : kernels::TanhVariants()) {
      REQUIRE(v.fn(p, 256, all.data(), th.data()) == KernelStatus::kOk);
    }
    for (int i = 0; i < 256; ++i) {
      const int32_t x = all[i] - zp;
      int32_t want_lo, want_th;
      if (x <= -p.input_range_radius) {
        want_lo = want_th = -128;
      } else if (x >= p.input_range_radius) {
        want_lo = want_th = 127;
      } else {
        const int32_t q4 = RefMultiplyByQuantizedMultiplier(x, p.input_multiplier, p.input_left_shift);
        want_lo = RefClamp(gref::DivPot(gref::Logistic(gref::Fx<4>{q4}).raw, 23) - 128, -128, 127);
        want_th = RefClamp(gref::DivPot(gref::Tanh(gref::Fx<4>{q4}).raw, 24), -128, 127);
      }
      CAPTURE(i, x);
      REQUIRE(lo[i] == want_lo);
      REQUIRE(th[i] == want_th);
      const double real = scale * x;
      REQUIRE(std::abs(lo[i] - std::min(127.0, std::round(256.0 / (1 + std::exp(-real))) - 128)) <= 1);
      REQUIRE(std::abs(th[i] - std::max(-128.0, std::min(127.0, std::round(128 * std::tanh(real))))) <= 1);
    }
  }
}

// TFLite's int16 sigmoid table from <cmath>: sigmoid(i / 24) in 0.16 fixed point with half the
// linear-interpolation midpoint error (second difference / 16) added back, rounded.
std::vector<uint32_t> RefSigmoidTable() {
  auto f = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  std::vector<uint32_t> t(256);
  for (int i = 0; i < 256; ++i) {
    const double a = f((i - 1) / 24.0), b = f(i / 24.0), c = f((i + 1) / 24.0);
    t[i] = static_cast<uint32_t>(std::min(65535.0, std::round(65536.0 * (b - (a - 2 * b + c) / 16))));
  }
  return t;
}

int32_t RefLogistic16(int32_t mult, int32_t shift, int16_t x, const std::vector<uint32_t>& t) {
  if (mult == 0) {
    mult = 3 << shift;
    shift = 0;
  }
  const int64_t v = (int64_t{x} * mult + (shift > 0 ? int64_t{1} << (shift - 1) : 0)) >> shift;
  const int64_t a = v < 0 ? -v : v;
  int64_t r = (a >> 9) >= 255 ? int64_t{0x7FFF} << 10
                              : (int64_t{t[a >> 9]} << 9) + (a & 511) * (int64_t{t[(a >> 9) + 1]} - t[a >> 9]);
  r = v >= 0 ? r + 512 : (int64_t{1} << 25) - r + 511;
  return static_cast<int16_t>(r >> 10);
}

int32_t RefTanh16(int32_t mult, int32_t shift, int16_t x, const std::vector<uint32_t>& t) {
  if (mult == 0) {
    mult = 3 << shift;
    shift = 0;
  }
  const int64_t v = (int64_t{x} * mult + (shift > 0 ? int64_t{1} << (shift - 1) : 0)) >> shift;
  const int64_t a = v < 0 ? -v : v;
  int64_t r = (a >> 8) >= 255 ? int64_t{0xFFFF} << 8
                              : (int64_t{t[a >> 8]} << 8) + (a & 255) * (int64_t{t[(a >> 8) + 1]} - t[a >> 8]);
  r = v >= 0 ? r - (1 << 23) + 128 : -r + (1 << 23) + 127;
  return static_cast<int16_t>(r >> 8);
}

TEST_CASE("Logistic16 / Tanh16 match the table reference and float", "[kernels][activations]") {
  const auto table = RefSigmoidTable();
  // Published first entries of TFLite's table.
  CHECK(table[0] == 32768);
  CHECK(table[1] == 33451);
  CHECK(table[2] == 34133);
  CHECK(table[3] == 34813);
  CHECK(table[4] == 35493);
  CHECK(table[12] == 40794);
  CHECK(table[35] == 53169);
  CHECK(table[79] == 63186);
  std::vector<int16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<int16_t>(i - 32768);
  std::vector<int16_t> out(65536);
  struct Case {
    double scale;
  };
  // Power-of-two scales (multiplier 0) and general ones (the prepare's doubling loop).
  for (double scale : {1.0 / 4096, 1.0 / 8192, 3.0 / 32768, 1e-4, 5e-4, 2.5e-5}) {
    kernels::Logistic16Params p;
    int log2 = 0;
    const bool pot = std::frexp(scale, &log2) == 0.5;
    p.input_left_shift = (15 - 3) + (log2 - 1);
    if (pot && (p.input_left_shift == 0 || p.input_left_shift == 1)) {
      p.input_multiplier = 0;
    } else {
      double m = scale * 4096.0 * 3.0;
      p.input_left_shift = 0;
      while (m <= 32767.0 / 2.0 && p.input_left_shift <= 30) {
        ++p.input_left_shift;
        m *= 2.0;
      }
      p.input_multiplier = static_cast<int32_t>(m);
    }
    CAPTURE(scale, p.input_multiplier, p.input_left_shift);
    REQUIRE(kernels::Logistic16(p, 65536, all.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < 65536; i += 1) {
      const int32_t want = RefLogistic16(p.input_multiplier, p.input_left_shift, all[i], table);
      if (out[i] != want) {
        CAPTURE(i, want, out[i]);
        FAIL("logistic16 mismatch");
      }
      if (std::abs(want / 32768.0 - 1 / (1 + std::exp(-scale * all[i]))) > 2e-3) {
        CAPTURE(i, want);
        FAIL("logistic16 far from float");
      }
    }
    REQUIRE(kernels::Tanh16(p, 65536, all.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < 65536; i += 1) {
      const int32_t want = RefTanh16(p.input_multiplier, p.input_left_shift, all[i], table);
      if (out[i] != want) {
        CAPTURE(i, want, out[i]);
        FAIL("tanh16 mismatch");
      }
      if (std::abs(want / 32768.0 - std::tanh(scale * all[i])) > 3e-3) {
        CAPTURE(i, want);
        FAIL("tanh16 far from float");
      }
    }
  }
}

TEST_CASE("Relu, Relu6 clamp, LeakyRelu and Prelu match the reference",
          "[kernels][activations]") {
  const uint64_t seed = testing::TestSeed(0x7E1);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 30; ++iter) {
    CAPTURE(iter);
    const int n = rng.Uniform(1, 300);
    const auto in = rng.Fill<int8_t>(static_cast<size_t>(n), -128, 127);
    const auto in16 = rng.Fill<int16_t>(static_cast<size_t>(n), -32768, 32767);
    std::vector<int8_t> out(n);
    std::vector<int16_t> out16(n);
    // RELU with requantization.
    kernels::ReluParams r;
    r.input_zero_point = rng.ZeroPoint8();
    r.output_offset = rng.ZeroPoint8();
    const double si = rng.Real(0.01, 0.1), so = rng.Real(0.01, 0.1);
    r.output = testing::QuantizeRef(si / so);
    r.activation = {std::max(-128, r.output_offset), 127};
    REQUIRE(kernels::Relu(r, n, in.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < n; ++i) {
      REQUIRE(out[i] == RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(in[i] - r.input_zero_point,
                                                                          r.output.multiplier,
                                                                          r.output.shift)} +
                                     r.output_offset,
                                 r.activation.min, r.activation.max));
    }
    r.input_zero_point = 0;
    r.output_offset = 0;
    r.activation = {0, 32767};
    REQUIRE(kernels::Relu16(r, n, in16.data(), out16.data()) == KernelStatus::kOk);
    for (int i = 0; i < n; ++i) {
      REQUIRE(out16[i] == RefClamp(RefMultiplyByQuantizedMultiplier(in16[i], r.output.multiplier,
                                                                    r.output.shift),
                                   0, 32767));
    }
    // RELU6 as a raw clamp.
    const kernels::ActivationRange six{-20, 90};
    REQUIRE(kernels::Clamp(six, n, in.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < n; ++i) REQUIRE(out[i] == std::min(90, std::max(-20, int{in[i]})));
    // LEAKY_RELU.
    kernels::LeakyReluParams l;
    l.input_zero_point = rng.ZeroPoint8();
    l.output_zero_point = rng.ZeroPoint8();
    l.identity = testing::QuantizeRef(si / so);
    l.alpha = testing::QuantizeRef(si * rng.Real(0.01, 0.5) / so);
    REQUIRE(kernels::LeakyRelu(l, n, in.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < n; ++i) {
      const int32_t x = in[i] - l.input_zero_point;
      const kernels::Requant& q = x >= 0 ? l.identity : l.alpha;
      REQUIRE(out[i] == RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(x, q.multiplier, q.shift)} +
                                     l.output_zero_point,
                                 -128, 127));
    }
    l.input_zero_point = l.output_zero_point = 0;
    REQUIRE(kernels::LeakyRelu16(l, n, in16.data(), out16.data()) == KernelStatus::kOk);
    for (int i = 0; i < n; ++i) {
      const kernels::Requant& q = in16[i] >= 0 ? l.identity : l.alpha;
      REQUIRE(out16[i] == RefClamp(RefMultiplyByQuantizedMultiplier(in16[i], q.multiplier, q.shift),
                                   -32768, 32767));
    }
    // PRELU with alpha broadcast over the last dimension.
    const int32_t c = rng.Uniform(1, 8), rows = rng.Uniform(1, 20);
    const kernels::Shape xs{2, {rows, c}}, as{1, {c}};
    const auto x = rng.Fill<int8_t>(static_cast<size_t>(rows * c), -128, 127);
    const auto alpha = rng.Fill<int8_t>(static_cast<size_t>(c), -128, 127);
    kernels::PreluParams pr;
    pr.input_offset = -rng.ZeroPoint8();
    pr.alpha_offset = -rng.ZeroPoint8();
    pr.output_offset = rng.ZeroPoint8();
    pr.output1 = testing::QuantizeRef(si / so);
    pr.output2 = testing::QuantizeRef(si * 0.01 / so);
    std::vector<int8_t> po(x.size());
    REQUIRE(kernels::Prelu(pr, xs, x.data(), as, alpha.data(), po.data()) == KernelStatus::kOk);
    for (int i = 0; i < rows * c; ++i) {
      const int32_t v = pr.input_offset + x[i];
      const int32_t o = v >= 0 ? RefMultiplyByQuantizedMultiplier(v, pr.output1.multiplier, pr.output1.shift)
                               : RefMultiplyByQuantizedMultiplier(v * (pr.alpha_offset + alpha[i % c]),
                                                                  pr.output2.multiplier, pr.output2.shift);
      REQUIRE(po[i] == RefClamp(int64_t{o} + pr.output_offset, -128, 127));
    }
  }
}

TEST_CASE("HardSwish tracks float hard swish across scales", "[kernels][activations]") {
  const uint64_t seed = testing::TestSeed(0x4A5);
  CAPTURE(seed);
  ElemRng rng(seed);
  std::vector<int8_t> all(256), out(256);
  for (int i = 0; i < 256; ++i) all[i] = static_cast<int8_t>(i - 128);
  for (int iter = 0; iter < 40; ++iter) {
    // Input scales on both sides of 3 * 128 / 32768 (the reluish left/right shift boundary).
    const float si = static_cast<float>(rng.Real(0.002, 0.12));
    const float so = static_cast<float>(rng.Real(0.005, 0.1));
    const int32_t zi = rng.ZeroPoint8(), zo = rng.Uniform(-128, 0);
    kernels::HardSwishParams p;
    p.input_zero_point = zi;
    p.output_zero_point = zo;
    const float hires = (1.0f / 128.0f) * si;
    int32_t m, e;
    testing::QuantizeMultiplierRef(hires / so, &m, &e);
    p.output_multiplier_fixedpoint_int16 = kernels::HardSwishDownScaleMultiplier(m);
    p.output_multiplier_exponent = e;
    testing::QuantizeMultiplierRef(hires / (3.0f / 32768.0f), &m, &e);
    p.reluish_multiplier_fixedpoint_int16 = kernels::HardSwishDownScaleMultiplier(m);
    p.reluish_multiplier_exponent = e;
    CAPTURE(iter, si, so, zi, zo, p.output_multiplier_exponent, p.reluish_multiplier_exponent);
    if (p.output_multiplier_exponent > 0) continue;  // TFLite rejects these
    REQUIRE(kernels::HardSwish(p, 256, all.data(), out.data()) == KernelStatus::kOk);
    for (int i = 0; i < 256; ++i) {
      const double x = si * (all[i] - zi);
      const double hs = x * std::min(6.0, std::max(0.0, x + 3)) / 6;
      const double q = std::min(127.0, std::max(-128.0, std::round(hs / so) + zo));
      CAPTURE(i, x, hs, q, int{out[i]});
      // The int16 fixed-point path loses a little precision at large output scales ratios.
      REQUIRE(std::abs(out[i] - q) <= 2);
    }
  }
  CHECK(kernels::HardSwishDownScaleMultiplier(1 << 30) == 16384);
  CHECK(kernels::HardSwishDownScaleMultiplier(INT32_MAX) == 32767);
}

}  // namespace
}  // namespace mica
