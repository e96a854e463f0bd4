// TransposeConv: every compiled variant, bit-exact against TFLite's scatter formulation, over
// seeded random shapes (strides 1-3, SAME/VALID output sizes, odd channels), extreme offsets,
// multipliers, shifts and clamps.
#include "mica/kernels/transpose_conv.h"

#include <cstdint>
#include <vector>

#include "conv_test_util.h"
#include "testing/catch.h"
#include "testing/reference/conv_ref.h"
#include "testing/shared.h"

namespace mica {
namespace kernels {
namespace {

using testing::ConvRng;

TransposeConvParams RandomTransposeConv(ConvRng& rng) {
  TransposeConvParams p;
  p.input = {rng.Chance(0.2) ? 2 : 1, rng.Uniform(1, 6), rng.Uniform(1, 6),
             rng.Pick<int32_t>({1, 3, 4, 5, 8, 17})};
  p.filter = {rng.Pick<int32_t>({1, 3, 5, 8}), rng.Uniform(1, 4), rng.Uniform(1, 4), p.input.c};
  p.stride = {rng.Uniform(1, 3), rng.Uniform(1, 3)};
  const bool same = rng.Chance(0.5);
  const auto out_size = [&](int32_t in, int32_t k, int32_t s) {
    return same ? in * s : (in - 1) * s + k;
  };
  p.output = {p.input.n, out_size(p.input.h, p.filter.h, p.stride.h),
              out_size(p.input.w, p.filter.w, p.stride.w), p.filter.n};
  const auto pad = [](int32_t in, int32_t k, int32_t s, int32_t out) {
    const int32_t total = (in - 1) * s + k - out;
    return total > 0 ? total / 2 : 0;
  };
  p.padding = {pad(p.input.h, p.filter.h, p.stride.h, p.output.h),
               pad(p.input.w, p.filter.w, p.stride.w, p.output.w)};
  p.input_offset = rng.Offset8();
  p.output_offset = rng.Uniform(-128, 127);
  p.activation = testing::RandomActivation(rng, -128, 127);
  return p;
}

TEST_CASE("TransposeConv int8: every variant matches the reference", "[kernels][transpose_conv]") {
  const uint64_t seed = testing::TestSeed(0x7C01);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 150; ++i) {
    CAPTURE(i);
    const TransposeConvParams p = RandomTransposeConv(rng);
    CAPTURE(p.input.n, p.input.h, p.input.w, p.input.c, p.filter.n, p.filter.h, p.filter.w,
            p.output.h, p.output.w, p.stride.h, p.stride.w, p.padding.h, p.padding.w,
            p.input_offset, p.output_offset);
    const auto in = rng.Fill<int8_t>(p.input.elements(), -128, 127);
    const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
    std::vector<int32_t> bias;
    if (!rng.Chance(0.1)) bias = rng.Fill<int32_t>(p.output.c, -40000, 40000);
    const int64_t taps = int64_t{p.filter.h} * p.filter.w * p.input.c /
                         (int64_t{p.stride.h} * p.stride.w) + 1;
    const auto q = testing::MakeQuant(rng, p.output.c, testing::AccBits(taps, 8), 8);
    std::vector<int8_t> want(p.output.elements());
    testing::TransposeConvReference(p, q.mult.data(), q.shift.data(), in.data(), filter.data(),
                                    bias.empty() ? nullptr : bias.data(), want.data());
    for (const auto& v : TransposeConvVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(TransposeConvScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("TransposeConv: hand-computed stride-2 example and refused arguments",
          "[kernels][transpose_conv]") {
  // 1x2x1x1 input {1, 2}, 1x1x2x1 filter {1, 3}... as 1-D: stride 2, kernel 2, VALID -> 4.
  TransposeConvParams p;
  p.input = {1, 1, 2, 1};
  p.filter = {1, 1, 2, 1};
  p.output = {1, 1, 4, 1};
  p.stride = {1, 2};
  const int8_t in[2] = {1, 2}, f[2] = {1, 3};
  const int32_t mult[1] = {1 << 30}, shift[1] = {1};  // x1
  const int8_t want[4] = {1, 3, 2, 6};
  for (const auto& v : TransposeConvVariants()) {
    CAPTURE(v.name);
    int8_t out[4] = {};
    REQUIRE(v.fn(p, {mult, shift}, in, f, nullptr, out, {}) == KernelStatus::kOk);
    for (int i = 0; i < 4; ++i) REQUIRE(out[i] == want[i]);
    TransposeConvParams bad = p;
    bad.filter.c = 2;
    REQUIRE(v.fn(bad, {mult, shift}, in, f, nullptr, out, {}) == KernelStatus::kArgError);
    bad = p;
    bad.padding.w = -1;
    REQUIRE(v.fn(bad, {mult, shift}, in, f, nullptr, out, {}) == KernelStatus::kArgError);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mica
