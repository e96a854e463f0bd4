// FullyConnected / FullyConnected16x8: every compiled variant, bit-exact against the
// reference: per-tensor and per-channel, batches, depths around the SIMD widths, extreme
// offsets (incl. a weights offset), multipliers, shifts and clamps.
#include "mica/kernels/fully_connected.h"

#include <cstdint>
#include <vector>

#include "conv_test_util.h"
#include "testing/catch.h"
#include "testing/reference/matmul_ref.h"
#include "testing/shared.h"

namespace mica {
namespace kernels {
namespace {

using testing::ConvRng;

FullyConnectedParams RandomFc(ConvRng& rng, bool wide) {
  FullyConnectedParams p;
  p.batches = rng.Pick<int32_t>({1, 1, 2, 3});
  p.input_depth = rng.Pick<int32_t>({1, 3, 4, 5, 7, 8, 15, 16, 17, 33, 64, 100});
  p.output_depth = rng.Pick<int32_t>({1, 2, 3, 5, 7, 16, 17});
  p.per_channel = rng.Chance(0.5);
  if (!p.per_channel && rng.Chance(0.3)) p.filter_offset = rng.Uniform(-128, 127);
  if (!wide) {
    p.input_offset = rng.Offset8();
    p.output_offset = rng.Uniform(-128, 127);
    p.activation = testing::RandomActivation(rng, -128, 127);
  } else {
    p.activation = testing::RandomActivation(rng, -32768, 32767);
  }
  return p;
}

#define MICA_CAPTURE_FC(p)                                                                    \
  CAPTURE(p.batches, p.input_depth, p.output_depth, p.per_channel, p.input_offset,            \
          p.filter_offset, p.output_offset, p.activation.min, p.activation.max)

TEST_CASE("FullyConnected int8: every variant matches the reference", "[kernels][fc]") {
  const uint64_t seed = testing::TestSeed(0xFC01);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 300; ++i) {
    CAPTURE(i);
    const FullyConnectedParams p = RandomFc(rng, false);
    MICA_CAPTURE_FC(p);
    const auto in = rng.Fill<int8_t>(size_t(p.batches) * p.input_depth, -128, 127);
    const auto w = rng.Fill<int8_t>(size_t(p.output_depth) * p.input_depth, -127, 127);
    std::vector<int32_t> bias;
    if (!rng.Chance(0.1)) bias = rng.Fill<int32_t>(p.output_depth, -40000, 40000);
    const int bits = testing::AccBits(p.input_depth, p.filter_offset != 0 ? 9 : 8);
    const auto q = testing::MakeQuant(rng, p.per_channel ? p.output_depth : 1, bits, 8);
    std::vector<int8_t> want(size_t(p.batches) * p.output_depth);
    testing::FullyConnectedReference(p, q.mult.data(), q.shift.data(), in.data(), w.data(),
                                     bias.empty() ? nullptr : bias.data(), want.data());
    for (const auto& v : FullyConnectedVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(FullyConnectedScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), w.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
      // The scratch is optional (a plan sized for another variant gives none): the same
      // outputs without it.
      std::vector<int8_t> bare(want.size(), 0x55);
      REQUIRE(v.fn(p, q.view(), in.data(), w.data(), bias.empty() ? nullptr : bias.data(),
                   bare.data(), {}) == KernelStatus::kOk);
      REQUIRE(bare == want);
    }
  }
}

TEST_CASE("FullyConnected 16x8: every variant matches the reference", "[kernels][fc]") {
  const uint64_t seed = testing::TestSeed(0xFC02);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 150; ++i) {
    CAPTURE(i);
    const FullyConnectedParams p = RandomFc(rng, true);
    MICA_CAPTURE_FC(p);
    const auto in = rng.Fill<int16_t>(size_t(p.batches) * p.input_depth, -32768, 32767);
    const auto w = rng.Fill<int8_t>(size_t(p.output_depth) * p.input_depth, -127, 127);
    std::vector<int64_t> bias;
    if (!rng.Chance(0.1)) bias = rng.Fill64(p.output_depth, -(int64_t{1} << 40), int64_t{1} << 40);
    const auto q = testing::MakeQuant(rng, p.per_channel ? p.output_depth : 1,
                                      testing::AccBits(p.input_depth, 16), 7);
    std::vector<int16_t> want(size_t(p.batches) * p.output_depth);
    testing::FullyConnectedReference(p, q.mult.data(), q.shift.data(), in.data(), w.data(),
                                     bias.empty() ? nullptr : bias.data(), want.data());
    for (const auto& v : FullyConnected16x8Variants()) {
      CAPTURE(v.name);
      std::vector<int16_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(FullyConnected16x8ScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), w.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("FullyConnected: hand-computed example and refused arguments", "[kernels][fc]") {
  FullyConnectedParams p;
  p.input_depth = 3;
  p.output_depth = 2;
  p.input_offset = 1;
  p.output_offset = 5;
  const int8_t x[3] = {1, 2, 3};                 // +1 -> 2, 3, 4
  const int8_t w[6] = {1, 1, 1, -1, 0, 2};       // 9, 6
  const int32_t bias[2] = {1, -2};               // 10, 4
  const int32_t mult[1] = {1 << 30}, shift[1] = {1};  // x1.0
  for (const auto& v : FullyConnectedVariants()) {
    CAPTURE(v.name);
    int8_t out[2] = {};
    testing::ScratchBuffer s(FullyConnectedScratchBytes(p, v.isa));
    REQUIRE(v.fn(p, {mult, shift}, x, w, bias, out, s.get()) == KernelStatus::kOk);
    REQUIRE(out[0] == 15);
    REQUIRE(out[1] == 9);
    FullyConnectedParams bad = p;
    bad.per_channel = true;
    bad.filter_offset = 3;  // per-channel weights are symmetric
    REQUIRE(v.fn(bad, {mult, shift}, x, w, bias, out, s.get()) == KernelStatus::kArgError);
    bad = p;
    bad.output_depth = 0;
    REQUIRE(v.fn(bad, {mult, shift}, x, w, bias, out, s.get()) == KernelStatus::kArgError);
    REQUIRE(v.fn(p, {nullptr, shift}, x, w, bias, out, s.get()) == KernelStatus::kArgError);
  }
  for (const auto& v : FullyConnected16x8Variants()) {
    CAPTURE(v.name);
    const int16_t x16[3] = {1, 2, 3};
    int16_t out16[2] = {};
    REQUIRE(v.fn(p, {mult, shift}, x16, w, nullptr, out16, {}) == KernelStatus::kArgError);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mica
