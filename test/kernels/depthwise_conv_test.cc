// DepthwiseConv / DepthwiseConv16x8: every compiled variant, bit-exact against the reference,
// over seeded random shapes (depth multipliers 1-3, odd channels, strides, dilations,
// SAME/VALID), extreme offsets, multipliers, shifts and clamps.
#include "mica/kernels/depthwise_conv.h"

#include <cstdint>
#include <vector>

#include "conv_test_util.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/padding.h"
#include "testing/catch.h"
#include "testing/reference/conv_ref.h"
#include "testing/shared.h"

namespace mica {
namespace kernels {
namespace {

using testing::ConvRng;

DepthwiseConvParams RandomDepthwise(ConvRng& rng, bool wide) {
  DepthwiseConvParams p;
  p.input.n = rng.Chance(0.2) ? 2 : 1;
  p.input.c = rng.Pick<int32_t>({1, 3, 4, 5, 7, 8, 16, 17, 20});
  p.depth_multiplier = rng.Chance(0.5) ? 1 : rng.Uniform(2, 3);
  p.input.h = rng.Uniform(1, 10);
  p.input.w = rng.Uniform(1, 10);
  p.filter = {1, rng.Uniform(1, 4), rng.Uniform(1, 4), p.input.c * p.depth_multiplier};
  p.stride = {rng.Uniform(1, 3), rng.Uniform(1, 3)};
  p.dilation = {rng.Uniform(1, 2), rng.Uniform(1, 2)};
  const bool same = rng.Chance(0.5);
  const int32_t eff_h = (p.filter.h - 1) * p.dilation.h + 1;
  const int32_t eff_w = (p.filter.w - 1) * p.dilation.w + 1;
  if (!same) {
    if (p.input.h < eff_h) p.input.h = eff_h + rng.Uniform(0, 2);
    if (p.input.w < eff_w) p.input.w = eff_w + rng.Uniform(0, 2);
  }
  p.output = {p.input.n, PaddedOutputSize(same, p.input.h, p.filter.h, p.stride.h, p.dilation.h),
              PaddedOutputSize(same, p.input.w, p.filter.w, p.stride.w, p.dilation.w),
              p.filter.c};
  p.padding.h = PaddingBefore(same, p.input.h, p.filter.h, p.stride.h, p.dilation.h, p.output.h);
  p.padding.w = PaddingBefore(same, p.input.w, p.filter.w, p.stride.w, p.dilation.w, p.output.w);
  if (!wide) {
    p.input_offset = rng.Offset8();
    p.output_offset = rng.Uniform(-128, 127);
    p.activation = testing::RandomActivation(rng, -128, 127);
  } else {
    p.activation = testing::RandomActivation(rng, -32768, 32767);
  }
  return p;
}

#define MICA_CAPTURE_DW(p)                                                                    \
  CAPTURE(p.input.n, p.input.h, p.input.w, p.input.c, p.depth_multiplier, p.filter.h,         \
          p.filter.w, p.output.h, p.output.w, p.stride.h, p.stride.w, p.dilation.h,           \
          p.dilation.w, p.padding.h, p.padding.w, p.input_offset, p.output_offset)

TEST_CASE("DepthwiseConv int8: every variant matches the reference", "[kernels][depthwise]") {
  const uint64_t seed = testing::TestSeed(0xD3971);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    const DepthwiseConvParams p = RandomDepthwise(rng, false);
    MICA_CAPTURE_DW(p);
    const auto in = rng.Fill<int8_t>(p.input.elements(), -128, 127);
    const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
    std::vector<int32_t> bias;
    if (!rng.Chance(0.1)) bias = rng.Fill<int32_t>(p.output.c, -40000, 40000);
    const auto q = testing::MakeQuant(rng, p.output.c,
                                      testing::AccBits(int64_t{p.filter.h} * p.filter.w, 8), 8);
    std::vector<int8_t> want(p.output.elements());
    testing::DepthwiseConvReference(p, q.mult.data(), q.shift.data(), in.data(), filter.data(),
                                    bias.empty() ? nullptr : bias.data(), want.data());
    for (const auto& v : DepthwiseConvVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(DepthwiseConvScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("DepthwiseConv 16x8: every variant matches the reference", "[kernels][depthwise]") {
  const uint64_t seed = testing::TestSeed(0xD3972);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 80; ++i) {
    CAPTURE(i);
    const DepthwiseConvParams p = RandomDepthwise(rng, true);
    MICA_CAPTURE_DW(p);
    const auto in = rng.Fill<int16_t>(p.input.elements(), -32768, 32767);
    const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
    std::vector<int64_t> bias;
    if (!rng.Chance(0.1)) bias = rng.Fill64(p.output.c, -(int64_t{1} << 40), int64_t{1} << 40);
    const auto q = testing::MakeQuant(rng, p.output.c,
                                      testing::AccBits(int64_t{p.filter.h} * p.filter.w, 16), 7);
    std::vector<int16_t> want(p.output.elements());
    testing::DepthwiseConvReference(p, q.mult.data(), q.shift.data(), in.data(), filter.data(),
                                    bias.empty() ? nullptr : bias.data(), want.data());
    for (const auto& v : DepthwiseConv16x8Variants()) {
      CAPTURE(v.name);
      std::vector<int16_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(DepthwiseConv16x8ScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("DepthwiseConv: inconsistent arguments are refused", "[kernels][depthwise]") {
  DepthwiseConvParams p;
  p.input = {1, 4, 4, 3};
  p.depth_multiplier = 2;
  p.filter = {1, 3, 3, 6};
  p.output = {1, 2, 2, 6};
  std::vector<int8_t> in(48), f(54), out(24);
  std::vector<int32_t> mult(6, 1 << 30), shift(6, -1);
  const PerChannelRequant q{mult.data(), shift.data()};
  for (const auto& v : DepthwiseConvVariants()) {
    CAPTURE(v.name);
    REQUIRE(v.fn(p, q, in.data(), f.data(), nullptr, out.data(), {}) == KernelStatus::kOk);
    DepthwiseConvParams bad = p;
    bad.depth_multiplier = 3;
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), {}) ==
            KernelStatus::kArgError);
    bad = p;
    bad.filter.n = 2;
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), {}) ==
            KernelStatus::kArgError);
    bad = p;
    bad.dilation.w = 0;
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), {}) ==
            KernelStatus::kArgError);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mica
