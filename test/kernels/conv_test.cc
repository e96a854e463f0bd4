// Conv / Conv16x8: every compiled variant, bit-exact against the reference, over seeded
// random shapes (odd channels, sizes around the SIMD widths, strides, dilations, SAME/VALID,
// groups, 1x1 and 1xN fast paths), extreme offsets, multipliers, shifts and clamps.
#include "mica/kernels/conv.h"

#include <cstdint>
#include <vector>

#include "conv_test_util.h"
#include "mica/kernels/isa.h"
#include "mica/kernels/padding.h"
#include "testing/catch.h"
#include "testing/reference/conv_ref.h"
#include "testing/shared.h"

namespace mica {
namespace kernels {
namespace {

using testing::ConvRng;

enum class Shape { kAny, k1x1, k1xN };

ConvParams RandomConv(ConvRng& rng, Shape shape, bool wide) {
  ConvParams p;
  p.input.n = rng.Chance(0.2) ? 2 : 1;
  const int32_t channels[] = {1, 3, 4, 5, 7, 8, 16, 17};
  p.filter.c = channels[rng.Uniform(0, 7)];
  const int32_t groups = (shape == Shape::kAny && rng.Chance(0.15)) ? rng.Uniform(2, 3) : 1;
  p.input.c = p.filter.c * groups;
  p.output.c = groups * channels[rng.Uniform(0, 7)];
  p.filter.n = p.output.c;
  p.input.h = rng.Uniform(1, 9);
  p.input.w = rng.Uniform(1, 9);
  if (shape == Shape::k1x1) {
    p.filter.h = p.filter.w = 1;
  } else {
    p.filter.h = shape == Shape::k1xN ? 1 : rng.Uniform(1, 4);
    p.filter.w = rng.Uniform(1, 5);
    p.stride = {rng.Uniform(1, 3), rng.Uniform(1, 3)};
    p.dilation = {rng.Uniform(1, 2), shape == Shape::k1xN ? 1 : rng.Uniform(1, 2)};
  }
  if (shape == Shape::k1xN && rng.Chance(0.5)) p.input.h = 1;
  const bool same = shape != Shape::k1x1 && rng.Chance(0.5);
  const int32_t eff_h = (p.filter.h - 1) * p.dilation.h + 1;
  const int32_t eff_w = (p.filter.w - 1) * p.dilation.w + 1;
  if (!same) {  // VALID needs the window to fit
    if (p.input.h < eff_h) p.input.h = eff_h + rng.Uniform(0, 2);
    if (p.input.w < eff_w) p.input.w = eff_w + rng.Uniform(0, 2);
  }
  p.output.n = p.input.n;
  p.output.h = PaddedOutputSize(same, p.input.h, p.filter.h, p.stride.h, p.dilation.h);
  p.output.w = PaddedOutputSize(same, p.input.w, p.filter.w, p.stride.w, p.dilation.w);
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

template <typename Variants, typename In, typename Bias, typename Out, typename ScratchFn>
void CheckAllVariants(const Variants& variants, const ConvParams& p,
                      const testing::RandomQuant& q, const std::vector<In>& in,
                      const std::vector<int8_t>& filter, const std::vector<Bias>& bias,
                      ScratchFn scratch_bytes) {
  std::vector<Out> want(static_cast<size_t>(p.output.elements()));
  testing::ConvReference(p, q.mult.data(), q.shift.data(), in.data(), filter.data(),
                         bias.empty() ? nullptr : bias.data(), want.data());
  for (const auto& v : variants) {
    CAPTURE(v.name);
    std::vector<Out> got(want.size(), static_cast<Out>(0x55));
    testing::ScratchBuffer scratch(scratch_bytes(p, v.isa));
    REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                 got.data(), scratch.get()) == KernelStatus::kOk);
    REQUIRE(got == want);
    if (scratch_bytes(p, v.isa) > 0) {  // too little scratch is refused
      Scratch small{scratch.words.data(), scratch_bytes(p, v.isa) - 1};
      REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), small) == KernelStatus::kArgError);
    }
  }
}

void RunInt8(ConvRng& rng, Shape shape) {
  const ConvParams p = RandomConv(rng, shape, false);
  CAPTURE(p.input.n, p.input.h, p.input.w, p.input.c, p.filter.n, p.filter.h, p.filter.w,
          p.filter.c, p.output.h, p.output.w, p.stride.h, p.stride.w, p.dilation.h,
          p.dilation.w, p.padding.h, p.padding.w, p.input_offset, p.output_offset);
  const auto in = rng.Fill<int8_t>(p.input.elements(), -128, 127);
  const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
  std::vector<int32_t> bias;
  if (!rng.Chance(0.1)) bias = rng.Fill<int32_t>(p.output.c, -40000, 40000);
  const auto q = testing::MakeQuant(
      rng, p.output.c, testing::AccBits(int64_t{p.filter.h} * p.filter.w * p.filter.c, 8), 8);
  CheckAllVariants<VariantList<ConvFn>, int8_t, int32_t, int8_t>(
      ConvVariants(), p, q, in, filter, bias, ConvScratchBytes);
}

void RunInt16(ConvRng& rng, Shape shape) {
  const ConvParams p = RandomConv(rng, shape, true);
  CAPTURE(p.input.n, p.input.h, p.input.w, p.input.c, p.filter.n, p.filter.h, p.filter.w,
          p.filter.c, p.output.h, p.output.w, p.stride.h, p.stride.w, p.dilation.h,
          p.dilation.w, p.padding.h, p.padding.w);
  const auto in = rng.Fill<int16_t>(p.input.elements(), -32768, 32767);
  const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
  std::vector<int64_t> bias;
  if (!rng.Chance(0.1)) bias = rng.Fill64(p.output.c, -(int64_t{1} << 40), int64_t{1} << 40);
  const auto q = testing::MakeQuant(
      rng, p.output.c, testing::AccBits(int64_t{p.filter.h} * p.filter.w * p.filter.c, 16), 7);
  CheckAllVariants<VariantList<Conv16x8Fn>, int16_t, int64_t, int16_t>(
      Conv16x8Variants(), p, q, in, filter, bias, Conv16x8ScratchBytes);
}

TEST_CASE("Conv int8: every variant matches the reference on random shapes", "[kernels][conv]") {
  const uint64_t seed = testing::TestSeed(0xC0471);
  CAPTURE(seed);
  ConvRng rng(seed);
  WARN("conv variants on this host: " << ConvVariants().size());
  for (int i = 0; i < 150; ++i) {
    CAPTURE(i);
    RunInt8(rng, i % 5 == 0 ? Shape::k1x1 : i % 5 == 1 ? Shape::k1xN : Shape::kAny);
  }
}

TEST_CASE("Conv 16x8: every variant matches the reference on random shapes", "[kernels][conv]") {
  const uint64_t seed = testing::TestSeed(0xC0472);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 80; ++i) {
    CAPTURE(i);
    RunInt16(rng, i % 4 == 0 ? Shape::k1x1 : i % 4 == 1 ? Shape::k1xN : Shape::kAny);
  }
}

TEST_CASE("Conv variants: scalar and dsp are listed on the host", "[kernels][conv]") {
  REQUIRE(FindVariant(ConvVariants(), Isa::kScalar) != nullptr);
  REQUIRE(ConvVariants()[0].isa == Isa::kScalar);
  for (const auto& v : ConvVariants()) REQUIRE(IsaCompiled(v.isa));
#if !defined(__arm__)
  REQUIRE(FindVariant(ConvVariants(), Isa::kDsp) != nullptr);
  REQUIRE(FindVariant(ConvVariants(), Isa::kMve) == nullptr);
#endif
}

TEST_CASE("Conv int8: extreme products over long windows stay exact in every variant",
          "[kernels][conv]") {
  // |w * (x + offset)| at its largest (128 * 255) over 300 taps, of opposite signs in
  // neighbouring pixels: the scalar body's packed lanes (two pixels per int32, decoded every
  // 128 taps) must not carry one pixel's sum into the other's.
  ConvParams p;
  p.input = {1, 1, 5, 300};
  p.filter = {3, 1, 1, 300};
  p.output = {1, 1, 5, 3};
  p.input_offset = 128;
  p.output_offset = 0;
  std::vector<int8_t> in(5 * 300), f(3 * 300);
  for (int32_t px = 0; px < 5; ++px) {
    for (int32_t i = 0; i < 300; ++i) in[px * 300 + i] = px % 2 == 0 ? 127 : -128;
  }
  for (int32_t oc = 0; oc < 3; ++oc) {
    for (int32_t i = 0; i < 300; ++i) f[oc * 300 + i] = oc == 1 ? 127 : -128;
  }
  const int32_t mult[3] = {1 << 30, 1 << 30, 1 << 30}, shift[3] = {-18, -18, -18};
  std::vector<int8_t> want(15);
  testing::ConvReference(p, mult, shift, in.data(), f.data(), static_cast<const int32_t*>(nullptr),
                         want.data());
  REQUIRE(want[0] != want[3]);
  for (const auto& v : ConvVariants()) {
    CAPTURE(v.name);
    std::vector<int8_t> out(15, 0x55);
    testing::ScratchBuffer s(ConvScratchBytes(p, v.isa));
    REQUIRE(v.fn(p, {mult, shift}, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kOk);
    REQUIRE(out == want);
  }
}

TEST_CASE("Conv: hand-computed 2x2 example", "[kernels][conv]") {
  // 1x3x3x1 input, one 2x2 filter of ones, VALID, stride 1, offset +1, multiplier 0.5.
  ConvParams p;
  p.input = {1, 3, 3, 1};
  p.filter = {1, 2, 2, 1};
  p.output = {1, 2, 2, 1};
  p.input_offset = 1;
  p.output_offset = -3;
  const int8_t in[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  const int8_t f[4] = {1, 1, 1, 1};
  const int32_t bias[1] = {2};
  const int32_t mult[1] = {1 << 30}, shift[1] = {0};
  // sums with +1 per tap: 12, 16, 24, 28; + bias 2 -> 14, 18, 26, 30; * 0.5 -> 7, 9, 13, 15.
  const int8_t want[4] = {4, 6, 10, 12};
  for (const auto& v : ConvVariants()) {
    CAPTURE(v.name);
    int8_t out[4] = {};
    testing::ScratchBuffer s(ConvScratchBytes(p, v.isa));
    REQUIRE(v.fn(p, {mult, shift}, in, f, bias, out, s.get()) == KernelStatus::kOk);
    for (int i = 0; i < 4; ++i) REQUIRE(out[i] == want[i]);
  }
}

TEST_CASE("Conv: inconsistent arguments are refused", "[kernels][conv]") {
  ConvParams p;
  p.input = {1, 4, 4, 3};
  p.filter = {2, 3, 3, 3};
  p.output = {1, 2, 2, 2};
  std::vector<int8_t> in(48), f(54), out(8);
  const int32_t mult[2] = {1 << 30, 1 << 30}, shift[2] = {-1, -1};
  const PerChannelRequant q{mult, shift};
  for (const auto& v : ConvVariants()) {
    CAPTURE(v.name);
    testing::ScratchBuffer s(ConvScratchBytes(p, v.isa));
    REQUIRE(v.fn(p, q, in.data(), f.data(), nullptr, out.data(), s.get()) == KernelStatus::kOk);
    ConvParams bad = p;
    bad.output.c = 3;
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
    bad = p;
    bad.stride.h = 0;
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
    bad = p;
    bad.activation = {10, -10};
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
    bad = p;
    bad.input.c = 4;  // not a multiple of filter.c
    REQUIRE(v.fn(bad, q, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
    REQUIRE(v.fn(p, q, nullptr, f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
    const int32_t bad_shift[2] = {-1, 40};
    REQUIRE(v.fn(p, {mult, bad_shift}, in.data(), f.data(), nullptr, out.data(), s.get()) ==
            KernelStatus::kArgError);
  }
}

TEST_CASE("Conv scratch sizes are pure arithmetic for every Isa", "[kernels][conv]") {
  ConvParams p;
  p.input = {1, 32, 32, 16};
  p.filter = {16, 3, 3, 16};
  p.output = {1, 32, 32, 16};
  p.padding = {1, 1};
  // Scalar: two pixels packed in one int32 column.
  REQUIRE(ConvScratchBytes(p, Isa::kScalar) == 3 * 3 * 16 * sizeof(int32_t));
  REQUIRE(ConvScratchBytes(p, Isa::kDsp) == 4 * 3 * 3 * 16 * sizeof(int16_t));  // 4 pixels
  // MVE (callable on a host without it): four int32 per channel + four int8 columns.
  REQUIRE(ConvScratchBytes(p, Isa::kMve) == 16 * 4 * sizeof(int32_t) + 4 * 3 * 3 * 16);
  p.filter = {16, 1, 1, 16};
  p.padding = {0, 0};
  REQUIRE(ConvScratchBytes(p, Isa::kDsp) == 4 * 16 * sizeof(int16_t));
  REQUIRE(ConvScratchBytes(p, Isa::kMve) == 16 * 4 * sizeof(int32_t));  // 1x1 reads in place
  p.filter = {16, 1, 5, 16};  // 1xN: the DSP body reads kernel rows in place
  p.output = {1, 32, 28, 16};
  REQUIRE(ConvScratchBytes(p, Isa::kDsp) == 0);
}

}  // namespace
}  // namespace kernels
}  // namespace mica
