// Softmax: int8 (fixed-point exp path) against the independent gemmlowp-style reference and
// against float softmax; int16 (LUT path) against a reference built from std::exp tables.
#include "mica/kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/gemmlowp_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using kernels::SoftmaxParams;
using testing::ElemRng;
namespace gref = testing::gref;

// TFLite's PreprocessSoftmaxScaling + CalculateInputRadius (kScaledDiffIntegerBits = 5).
SoftmaxParams MakeSoftmaxParams(double beta, double input_scale) {
  SoftmaxParams p;
  const double real = std::min(beta * input_scale * (1 << 26), 2147483647.0);
  int32_t shift = 0;
  testing::QuantizeMultiplierRef(real, &p.input_beta_multiplier, &shift);
  p.input_beta_left_shift = shift;
  p.diff_min = -static_cast<int32_t>(std::floor(31.0 * (1 << 26) / std::ldexp(1.0, shift)));
  return p;
}

template <typename OutT>
std::vector<OutT> RefSoftmax(const SoftmaxParams& p, int rows, int depth,
                             const std::vector<int8_t>& in) {
  std::vector<OutT> out(in.size());
  const int bits = 8 * sizeof(OutT);
  const int32_t out_min = bits == 8 ? -128 : -32768, out_max = bits == 8 ? 127 : 32767;
  for (int r = 0; r < rows; ++r) {
    const int8_t* x = &in[static_cast<size_t>(r) * depth];
    const int32_t mx = *std::max_element(x, x + depth);
    auto exp_of = [&](int32_t diff) {
      const int32_t scaled = gref::HighMul(
          static_cast<int32_t>(int64_t{diff} * (int64_t{1} << p.input_beta_left_shift)),
          p.input_beta_multiplier);
      return gref::ExpNeg(gref::Fx<5>{scaled});
    };
    gref::Fx<12> sum{0};
    for (int c = 0; c < depth; ++c) {
      if (x[c] - mx >= p.diff_min) sum = sum + exp_of(x[c] - mx).template Rescaled<12>();
    }
    int headroom = 0;
    while (headroom < 32 && !((static_cast<uint32_t>(sum.raw) << headroom) & 0x80000000u)) ++headroom;
    const int32_t shifted =
        static_cast<int32_t>((static_cast<uint32_t>(sum.raw) << headroom) - 0x80000000u);
    const gref::Fx<0> scale = gref::OneOverOnePlusX(gref::Fx<0>{shifted});
    const int exponent = (12 - headroom) + 31 - bits;
    for (int c = 0; c < depth; ++c) {
      int32_t v = out_min;
      if (x[c] - mx >= p.diff_min) {
        v = gref::DivPot((scale * exp_of(x[c] - mx)).raw, exponent) + out_min;
        v = std::min(std::max(v, out_min), out_max);
      }
      out[static_cast<size_t>(r) * depth + c] = static_cast<OutT>(v);
    }
  }
  return out;
}

TEST_CASE("Softmax int8 matches the fixed-point reference and float softmax",
          "[kernels][softmax]") {
  const uint64_t seed = testing::TestSeed(0x50F7);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 150; ++iter) {
    CAPTURE(iter);
    const int rows = rng.Uniform(1, 4), depth = rng.Uniform(1, 40);
    const double scale = rng.Chance(0.2) ? rng.Real(0.3, 2.0) : rng.Real(0.01, 0.3);
    const double beta = rng.Chance(0.8) ? 1.0 : rng.Real(0.2, 3.0);
    const SoftmaxParams p = MakeSoftmaxParams(beta, scale);
    CAPTURE(rows, depth, scale, beta, p.input_beta_multiplier, p.input_beta_left_shift,
            p.diff_min);
    const auto in = rng.Fill<int8_t>(static_cast<size_t>(rows * depth), -128, 127);
    const auto want = RefSoftmax<int8_t>(p, rows, depth, in);
    for (const auto& v : kernels::SoftmaxVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> out(in.size(), 0x55);
      REQUIRE(v.fn(p, rows, depth, in.data(), out.data()) == KernelStatus::kOk);
      REQUIRE(out == want);
    }
    std::vector<int16_t> out16(in.size());
    REQUIRE(kernels::SoftmaxInt8ToInt16(p, rows, depth, in.data(), out16.data()) ==
            KernelStatus::kOk);
    const auto want16 = RefSoftmax<int16_t>(p, rows, depth, in);
    REQUIRE(out16 == want16);
    for (const auto& v : kernels::SoftmaxInt8ToInt16Variants()) {
      CAPTURE(v.name);
      std::vector<int16_t> got(in.size(), 0x55);
      REQUIRE(v.fn(p, rows, depth, in.data(), got.data()) == KernelStatus::kOk);
      REQUIRE(got == want16);
    }
    // Float softmax, within 2 output steps (the fixed-point exp is accurate to ~1e-6 but the
    // diff_min cutoff and rounding add up to a step).
    for (int r = 0; r < rows; ++r) {
      const int8_t* x = &in[static_cast<size_t>(r) * depth];
      const int mx = *std::max_element(x, x + depth);
      double total = 0;
      for (int c = 0; c < depth; ++c) total += std::exp(beta * scale * (x[c] - mx));
      for (int c = 0; c < depth; ++c) {
        const double prob = std::exp(beta * scale * (x[c] - mx)) / total;
        const double q8 = std::min(127.0, std::round(prob * 256) - 128);
        REQUIRE(std::abs(want[static_cast<size_t>(r) * depth + c] - q8) <= 2);
      }
    }
  }
}

TEST_CASE("Softmax int8 hand-checked rows", "[kernels][softmax]") {
  const SoftmaxParams p = MakeSoftmaxParams(1.0, 0.0625);  // the CMSIS-NN anchor's values
  CHECK(p.input_beta_multiplier == 1073741824);
  CHECK(p.input_beta_left_shift == 23);
  CHECK(p.diff_min == -248);
  // All equal: each 1/4 -> 64 - 128 = -64.
  const int8_t same[4] = {5, 5, 5, 5};
  int8_t out[4];
  REQUIRE(kernels::Softmax(p, 1, 4, same, out) == KernelStatus::kOk);
  for (int8_t v : out) CHECK(v == -64);
  // One dominant element: probability ~1 -> 127; the others far below diff_min -> -128.
  const int8_t peak[3] = {127, -128, -128};
  REQUIRE(kernels::Softmax(p, 1, 3, peak, out) == KernelStatus::kOk);
  CHECK(out[0] == 127);
  CHECK(out[1] == -128);
  CHECK(out[2] == -128);
}

TEST_CASE("Softmax int8 over rows of 512+ near-equal elements gives the minimum",
          "[kernels][softmax]") {
  // The sum of exps reaches 2^28 (Q12): the output's rounding shift would be 32 or more. Every
  // probability is below half an output step (1/600 < 1/512), so each output is -128.
  const SoftmaxParams p = MakeSoftmaxParams(1.0, 0.0625);
  for (int depth : {600, 1000, 4096}) {
    std::vector<int8_t> in(static_cast<size_t>(depth), 7), out(in.size(), 0);
    in[3] = 6;  // one element a step below the maximum
    REQUIRE(kernels::Softmax(p, 1, depth, in.data(), out.data()) == KernelStatus::kOk);
    for (int8_t v : out) REQUIRE(v == -128);
    std::vector<int16_t> out16(in.size(), 0);
    REQUIRE(kernels::SoftmaxInt8ToInt16(p, 1, depth, in.data(), out16.data()) == KernelStatus::kOk);
    for (int16_t v : out16) REQUIRE(v > -32768);  // int16 output still resolves 1/depth
  }
}

// TFLite's gen_lut written with <cmath> (std::round), float evaluation like TFLite Micro.
std::vector<int16_t> RefLut(float (*f)(float), float lo, float hi) {
  std::vector<int16_t> lut(513);
  const float step = (hi - lo) / 512, half = step / 2, inv = 65536.0f / 2.0f;
  for (int i = 0; i < 512; ++i) {
    const float v = f(lo + i * step), vm = f(lo + i * step + half), vn = f(lo + (i + 1) * step);
    const float sample = std::round(v * inv);
    const float interp = std::round((vn * inv + std::round(v * inv)) / 2);
    const float mid = std::round(vm * inv);
    const float bias = std::round((interp - mid) / 2);
    lut[i] = static_cast<int16_t>(std::min(std::max(sample - bias, -32768.0f), 32767.0f));
  }
  lut[512] = static_cast<int16_t>(std::min(std::max(std::round(f(hi) * inv), -32768.0f), 32767.0f));
  return lut;
}
float ExpF(float x) { return std::exp(x); }
float RecipF(float x) { return 1.0f / (1.0f + x); }

int16_t RefLookup(int16_t v, const std::vector<int16_t>& lut) {
  const int idx = (v + 32768) / 128;  // 256 + floor(v / 128)
  const int off = (v + 32768) % 128;
  const int base = lut[idx], slope = lut[idx + 1] - lut[idx];
  return static_cast<int16_t>(base + ((slope * off + 64) >> 7));
}

TEST_CASE("Softmax16 matches the LUT reference and float softmax", "[kernels][softmax]") {
  std::vector<int16_t> exp_lut(513), recip_lut(513);
  kernels::GenerateInt16Lut<float>(ExpF, -10.0f, 0.0f, -1.0f, 1.0f, exp_lut.data());
  kernels::GenerateInt16Lut<float>(RecipF, 0.0f, 1.0f, -1.0f, 1.0f, recip_lut.data());
  REQUIRE(exp_lut == RefLut(ExpF, -10.0f, 0.0f));
  REQUIRE(recip_lut == RefLut(RecipF, 0.0f, 1.0f));
  CHECK(exp_lut[512] == 32767);  // exp(0) * 32768 saturates
  CHECK(recip_lut[0] == 32767);

  const uint64_t seed = testing::TestSeed(0x5016);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 60; ++iter) {
    CAPTURE(iter);
    const int rows = rng.Uniform(1, 3), depth = rng.Uniform(1, 30);
    const double scale = rng.Real(1e-4, 2e-3), beta = 1.0;
    kernels::Softmax16Params p;
    testing::QuantizeMultiplierRef(scale * beta / (10.0 / 65535.0), &p.input_multiplier,
                                   &p.input_left_shift);
    p.exp_lut = exp_lut.data();
    p.one_over_one_plus_x_lut = recip_lut.data();
    const auto in = rng.Fill<int16_t>(static_cast<size_t>(rows * depth), -32768, 32767);
    std::vector<int16_t> out(in.size());
    REQUIRE(kernels::Softmax16(p, rows, depth, in.data(), out.data()) == KernelStatus::kOk);
    for (int r = 0; r < rows; ++r) {
      const int16_t* x = &in[static_cast<size_t>(r) * depth];
      const int mx = *std::max_element(x, x + depth);
      std::vector<int32_t> e(depth);
      int32_t sum = 0;
      for (int c = 0; c < depth; ++c) {
        int32_t sd = 0;
        {
          const int64_t prod = int64_t{x[c] - mx};
          // MultiplyByQuantizedMultiplier via the double-rounding definition.
          const int left = std::max(p.input_left_shift, 0), right = std::max(-p.input_left_shift, 0);
          const int32_t hi = gref::HighMul(static_cast<int32_t>(prod * (int64_t{1} << left)),
                                           p.input_multiplier);
          sd = gref::DivPot(hi, right);
        }
        const int32_t sym = std::min(std::max(sd + 32767, -32768), 32767);
        e[c] = RefLookup(static_cast<int16_t>(sym), exp_lut);
        sum += e[c];
      }
      int hp1 = 0;
      while (!((static_cast<uint32_t>(sum) << hp1) & 0x80000000u)) ++hp1;
      const int32_t shifted = static_cast<int32_t>(((int64_t{sum} << (hp1 - 1)) + (1 << 13)) >> 14);
      const int32_t sym = std::min(std::max(shifted - 98304, -32768), 32767);
      const int32_t recip = RefLookup(static_cast<int16_t>(sym), recip_lut);
      double total = 0;
      for (int c = 0; c < depth; ++c) total += std::exp(scale * (x[c] - mx));
      for (int c = 0; c < depth; ++c) {
        const int rs = 31 - hp1;
        const int32_t want = std::min<int64_t>(
            std::max<int64_t>((int64_t{e[c]} * recip + (int64_t{1} << (rs - 1))) >> rs, 0), 32767);
        CAPTURE(r, c);
        REQUIRE(out[static_cast<size_t>(r) * depth + c] == want);
        const double prob = std::exp(scale * (x[c] - mx)) / total;
        REQUIRE(std::abs(want / 32768.0 - prob) < 3e-3);
      }
    }
  }
}

TEST_CASE("Softmax rejects bad arguments", "[kernels][softmax]") {
  int8_t in[4] = {}, out[4] = {};
  SoftmaxParams p = MakeSoftmaxParams(1.0, 0.1);
  CHECK(kernels::Softmax(p, -1, 4, in, out) == KernelStatus::kArgError);
  CHECK(kernels::Softmax(p, 1, 4, nullptr, out) == KernelStatus::kArgError);
  CHECK(kernels::Softmax(p, 0, 4, nullptr, nullptr) == KernelStatus::kOk);
  p.diff_min = 5;
  CHECK(kernels::Softmax(p, 1, 4, in, out) == KernelStatus::kArgError);
  kernels::Softmax16Params q;
  int16_t i16[2] = {}, o16[2] = {};
  CHECK(kernels::Softmax16(q, 1, 2, i16, o16) == KernelStatus::kArgError);  // no LUTs
  CHECK(kernels::SoftmaxScratchBytes(1, 10, kernels::Isa::kMve) == 0);
}

}  // namespace
}  // namespace mica
