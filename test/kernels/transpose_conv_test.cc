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


// TFLite's int16 transpose convolution: scatter into an int64 buffer, add the int64 bias, then
// the int64 requantization (Q31 multiplier rounded to Q15, one rounding shift by 15 - shift).
void TransposeConv16x8Reference(const TransposeConvParams& p, const testing::RandomQuant& q,
                                const std::vector<int16_t>& in, const std::vector<int8_t>& f,
                                const std::vector<int64_t>& bias, std::vector<int16_t>* out) {
  std::vector<int64_t> acc(static_cast<size_t>(p.output.elements()), 0);
  auto at = [](const Dims& d, int n, int y, int x, int c) {
    return ((static_cast<int64_t>(n) * d.h + y) * d.w + x) * d.c + c;
  };
  for (int n = 0; n < p.input.n; ++n)
    for (int iy = 0; iy < p.input.h; ++iy)
      for (int ix = 0; ix < p.input.w; ++ix)
        for (int ic = 0; ic < p.input.c; ++ic)
          for (int ky = 0; ky < p.filter.h; ++ky)
            for (int kx = 0; kx < p.filter.w; ++kx)
              for (int oc = 0; oc < p.output.c; ++oc) {
                const int oy = iy * p.stride.h - p.padding.h + ky;
                const int ox = ix * p.stride.w - p.padding.w + kx;
                if (oy < 0 || oy >= p.output.h || ox < 0 || ox >= p.output.w) continue;
                acc[at(p.output, n, oy, ox, oc)] +=
                    int64_t{in[at(p.input, n, iy, ix, ic)]} * f[at(p.filter, oc, ky, kx, ic)];
              }
  out->resize(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    const int oc = static_cast<int>(i % p.output.c);
    const int64_t a = acc[i] + (bias.empty() ? 0 : bias[oc]);
    const int32_t v = testing::RefMultiplyByQuantizedMultiplier64(a, q.mult[oc], q.shift[oc]);
    (*out)[i] = static_cast<int16_t>(testing::RefClamp(v, p.activation.min, p.activation.max));
  }
}

TEST_CASE("TransposeConv 16x8: every variant matches TFLite's int16 reference",
          "[kernels][transpose_conv]") {
  const uint64_t seed = testing::TestSeed(0x7C16);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 120; ++i) {
    CAPTURE(i);
    TransposeConvParams p = RandomTransposeConv(rng);
    p.input_offset = 0;
    p.output_offset = 0;
    p.activation = testing::RandomActivation(rng, -32768, 32767);
    const auto in = rng.Fill<int16_t>(p.input.elements(), -32768, 32767);
    const auto filter = rng.Fill<int8_t>(p.filter.elements(), -127, 127);
    std::vector<int64_t> bias;
    if (!rng.Chance(0.1)) {
      for (int32_t c = 0; c < p.output.c; ++c) {
        bias.push_back(int64_t{rng.Uniform(-2000000000, 2000000000)} * rng.Uniform(1, 16));
      }
    }
    const int64_t taps = int64_t{p.filter.h} * p.filter.w * p.input.c /
                         (int64_t{p.stride.h} * p.stride.w) + 1;
    const auto q = testing::MakeQuant(rng, p.output.c, testing::AccBits(taps, 16), 14);
    std::vector<int16_t> want;
    TransposeConv16x8Reference(p, q, in, filter, bias, &want);
    for (const auto& v : TransposeConv16x8Variants()) {
      CAPTURE(v.name);
      std::vector<int16_t> got(want.size(), 0x5555);
      testing::ScratchBuffer s(TransposeConv16x8ScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, q.view(), in.data(), filter.data(), bias.empty() ? nullptr : bias.data(),
                   got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
  // Offsets are refused in 16x8 (TFLite's int16 zero points are 0).
  TransposeConvParams p = RandomTransposeConv(rng);
  p.input_offset = 3;
  p.activation = {-32768, 32767};
  const auto q = testing::MakeQuant(rng, p.output.c, 20, 14);
  std::vector<int16_t> in(p.input.elements()), out(p.output.elements());
  std::vector<int8_t> f(p.filter.elements());
  CHECK(TransposeConv16x8(p, q.view(), in.data(), f.data(), nullptr, out.data(), {}) ==
        KernelStatus::kArgError);
}

}  // namespace
}  // namespace kernels
}  // namespace mica
