// Max / average pooling against a naive reference (every filter tap visited, out-of-image taps
// skipped, average rounded half away from zero), all variants, int8 and int16.
#include "mica/kernels/pooling.h"

#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::Dims;
using kernels::KernelStatus;
using kernels::PoolParams;
using testing::ElemRng;

template <typename T>
std::vector<T> RefPool(const PoolParams& p, const std::vector<T>& in, bool max) {
  std::vector<T> out(static_cast<size_t>(p.output.elements()));
  const Dims& i = p.input;
  const Dims& o = p.output;
  for (int b = 0; b < o.n; ++b)
    for (int y = 0; y < o.h; ++y)
      for (int x = 0; x < o.w; ++x)
        for (int c = 0; c < o.c; ++c) {
          int64_t acc = max ? INT64_MIN : 0;
          int count = 0;
          for (int fy = 0; fy < p.filter_h; ++fy)
            for (int fx = 0; fx < p.filter_w; ++fx) {
              const int iy = y * p.stride.h - p.padding.h + fy;
              const int ix = x * p.stride.w - p.padding.w + fx;
              if (iy < 0 || iy >= i.h || ix < 0 || ix >= i.w) continue;
              const int64_t v = in[((static_cast<size_t>(b) * i.h + iy) * i.w + ix) * i.c + c];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!max) {
            const int64_t mag = acc < 0 ? -acc : acc;
            const int64_t q = (mag + count / 2) / count;
            acc = acc < 0 ? -q : q;
          }
          acc = std::min<int64_t>(std::max<int64_t>(acc, p.activation.min), p.activation.max);
          out[((static_cast<size_t>(b) * o.h + y) * o.w + x) * o.c + c] = static_cast<T>(acc);
        }
  return out;
}

PoolParams RandomPool(ElemRng& rng, bool int16) {
  PoolParams p;
  for (;;) {
    p.input = {rng.Uniform(1, 2), rng.Uniform(1, 12), rng.Uniform(1, 12), rng.Uniform(1, 9)};
    p.filter_h = rng.Uniform(1, 5);
    p.filter_w = rng.Uniform(1, 5);
    p.stride = {rng.Uniform(1, 3), rng.Uniform(1, 3)};
    const bool same = rng.Chance(0.5);
    auto out_size = [&](int in, int k, int s) { return same ? (in + s - 1) / s : (in - k + s) / s; };
    auto pad = [&](int in, int k, int s, int out) {
      const int t = (out - 1) * s + k - in;
      return t > 0 ? t / 2 : 0;
    };
    const int oh = out_size(p.input.h, p.filter_h, p.stride.h);
    const int ow = out_size(p.input.w, p.filter_w, p.stride.w);
    if (oh < 1 || ow < 1) continue;
    p.output = {p.input.n, oh, ow, p.input.c};
    p.padding = {pad(p.input.h, p.filter_h, p.stride.h, oh), pad(p.input.w, p.filter_w, p.stride.w, ow)};
    break;
  }
  const int32_t lo = int16 ? -32768 : -128, hi = int16 ? 32767 : 127;
  p.activation = {lo, hi};
  if (rng.Chance(0.3)) p.activation = {rng.Uniform(lo, 0), rng.Uniform(1, hi)};
  return p;
}

TEST_CASE("MaxPool / AvgPool int8 match the reference, all variants", "[kernels][pool]") {
  const uint64_t seed = testing::TestSeed(0xB001);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 150; ++iter) {
    CAPTURE(iter);
    const PoolParams p = RandomPool(rng, false);
    CAPTURE(p.input.h, p.input.w, p.input.c, p.filter_h, p.filter_w, p.stride.h, p.stride.w,
            p.padding.h, p.padding.w);
    const auto in = rng.Fill<int8_t>(static_cast<size_t>(p.input.elements()), -128, 127);
    const auto want_max = RefPool(p, in, true);
    const auto want_avg = RefPool(p, in, false);
    for (const auto& v : kernels::MaxPoolVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> out(want_max.size(), 0x55);
      REQUIRE(v.fn(p, in.data(), out.data()) == KernelStatus::kOk);
      REQUIRE(out == want_max);
    }
    for (const auto& v : kernels::AvgPoolVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> out(want_avg.size(), 0x55);
      REQUIRE(v.fn(p, in.data(), out.data()) == KernelStatus::kOk);
      REQUIRE(out == want_avg);
    }
    std::vector<int8_t> out(want_avg.size());
    REQUIRE(kernels::AvgPool(p, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == want_avg);
  }
}

TEST_CASE("AvgPool variants at global-pool shapes (incl. > 256 taps, extreme values)",
          "[kernels][pool]") {
  const uint64_t seed = testing::TestSeed(0xB002);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int hw : {8, 16, 17}) {
    for (int c : {1, 4, 7, 64}) {
      PoolParams p;
      p.input = {1, hw, hw, c};
      p.output = {1, 1, 1, c};
      p.filter_h = p.filter_w = hw;
      p.stride = {hw, hw};
      for (int32_t fill : {-128, 127, 0}) {
        auto in = rng.Fill<int8_t>(static_cast<size_t>(p.input.elements()), -128, 127);
        if (fill != 0) std::fill(in.begin(), in.end(), static_cast<int8_t>(fill));
        const auto want = RefPool(p, in, false);
        for (const auto& v : kernels::AvgPoolVariants()) {
          CAPTURE(hw, c, fill, v.name);
          std::vector<int8_t> out(want.size());
          REQUIRE(v.fn(p, in.data(), out.data()) == KernelStatus::kOk);
          REQUIRE(out == want);
        }
      }
    }
  }
}

TEST_CASE("MaxPool16 / AvgPool16 match the reference", "[kernels][pool]") {
  const uint64_t seed = testing::TestSeed(0xB016);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 80; ++iter) {
    CAPTURE(iter);
    const PoolParams p = RandomPool(rng, true);
    const auto in = rng.Fill<int16_t>(static_cast<size_t>(p.input.elements()), -32768, 32767);
    std::vector<int16_t> out(static_cast<size_t>(p.output.elements()));
    REQUIRE(kernels::MaxPool16(p, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefPool(p, in, true));
    REQUIRE(kernels::AvgPool16(p, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefPool(p, in, false));
  }
}

TEST_CASE("AvgPool rounds half away from zero", "[kernels][pool]") {
  // Hand-computed: windows of two, sums 3 -> 2, -3 -> -2, 1 -> 1, -1 -> -1.
  PoolParams p;
  p.input = {1, 1, 8, 1};
  p.output = {1, 1, 4, 1};
  p.filter_w = 2;
  p.stride = {1, 2};
  const int8_t in[8] = {1, 2, -1, -2, 0, 1, 0, -1};
  int8_t out[4];
  REQUIRE(kernels::AvgPool(p, in, out) == KernelStatus::kOk);
  CHECK(out[0] == 2);
  CHECK(out[1] == -2);
  CHECK(out[2] == 1);
  CHECK(out[3] == -1);
}

TEST_CASE("Pooling rejects empty windows and bad shapes", "[kernels][pool]") {
  int8_t in[16] = {}, out[16] = {};
  PoolParams p;
  p.input = {1, 4, 4, 1};
  p.output = {1, 2, 2, 1};
  p.filter_h = p.filter_w = 2;
  p.stride = {2, 2};
  CHECK(kernels::AvgPool(p, in, out) == KernelStatus::kOk);
  PoolParams q = p;
  q.padding = {3, 0};  // first window entirely in the padding
  CHECK(kernels::AvgPool(q, in, out) == KernelStatus::kArgError);
  q = p;
  q.output.c = 2;
  CHECK(kernels::MaxPool(q, in, out) == KernelStatus::kArgError);
  q = p;
  q.stride = {0, 1};
  CHECK(kernels::MaxPool(q, in, out) == KernelStatus::kArgError);
  q = p;
  q.activation = {-200, 127};
  CHECK(kernels::MaxPool(q, in, out) == KernelStatus::kArgError);
}

}  // namespace
}  // namespace mica
