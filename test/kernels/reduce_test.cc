// MEAN / SUM / REDUCE_MAX against a reference that sums in int64 per output element and
// folds 1/N into the multiplier the way TFLite's QuantizedMeanOrSum does.
#include "mica/kernels/reduce.h"

#include <algorithm>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/fixed_point_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using kernels::ReduceAxes;
using kernels::Shape;
using testing::ElemRng;

template <typename T>
std::vector<T> RefReduce(const kernels::MeanParams& p, const Shape& s, const std::vector<bool>& red,
                         const std::vector<T>& in, int mode /*0 mean 1 sum 2 max*/) {
  Shape o = s;
  int64_t n = 1;
  for (int k = 0; k < s.rank; ++k) {
    if (red[k]) {
      o.dims[k] = 1;
      n *= s.dims[k];
    }
  }
  std::vector<int64_t> acc(static_cast<size_t>(o.elements()), mode == 2 ? INT64_MIN : 0);
  for (int64_t i = 0; i < s.elements(); ++i) {
    int64_t rem = i, oi = 0, mul = 1;
    for (int k = s.rank - 1; k >= 0; --k) {
      const int64_t c = rem % s.dims[k];
      rem /= s.dims[k];
      oi += (red[k] ? 0 : c) * mul;
      mul *= o.dims[k];
    }
    acc[oi] = mode == 2 ? std::max<int64_t>(acc[oi], in[i]) : acc[oi] + in[i];
  }
  int32_t m = p.output.multiplier, sh = p.output.shift;
  if (mode == 0) {
    int lg = 0;
    while ((int64_t{2} << lg) <= n) ++lg;  // floor(log2(n))
    lg = std::min({lg, 32, 31 + sh});
    m = static_cast<int32_t>((int64_t{m} << lg) / n);
    sh -= lg;
  }
  const int32_t lo = sizeof(T) == 1 ? -128 : -32768, hi = sizeof(T) == 1 ? 127 : 32767;
  std::vector<T> out(acc.size());
  for (size_t i = 0; i < acc.size(); ++i) {
    if (mode == 2) {
      out[i] = static_cast<T>(acc[i]);
    } else {
      const int32_t shifted = static_cast<int32_t>(acc[i] - int64_t{p.input_zero_point} * n);
      out[i] = static_cast<T>(testing::RefClamp(
          int64_t{testing::RefMultiplyByQuantizedMultiplier(shifted, m, sh)} + p.output_zero_point, lo, hi));
    }
  }
  return out;
}

template <typename T>
void CheckReduce(ElemRng& rng) {
  const Shape s = testing::RandomShape(rng, 6, 6);
  ReduceAxes axes;
  std::vector<bool> red(s.rank, false);
  axes.count = rng.Uniform(1, s.rank);
  for (int j = 0; j < axes.count; ++j) {
    const int a = rng.Uniform(0, s.rank - 1);
    red[a] = true;
    axes.axis[j] = rng.Chance(0.3) ? a - s.rank : a;  // negative axes too; repeats allowed
  }
  kernels::MeanParams p;
  const bool is8 = sizeof(T) == 1;
  p.input_zero_point = is8 ? rng.ZeroPoint8() : 0;
  p.output_zero_point = is8 ? rng.ZeroPoint8() : 0;
  p.output = testing::QuantizeRef(rng.Chance(0.3) ? 1.0 : rng.Real(0.3, 3.0));
  const auto in = rng.Fill<T>(static_cast<size_t>(s.elements()), is8 ? -128 : -32768, is8 ? 127 : 32767);
  const size_t n_out = RefReduce(p, s, red, in, 2).size();
  std::vector<T> out(n_out);
  CAPTURE(testing::ShapeString(s), axes.count, p.output.multiplier, p.output.shift);
  if constexpr (sizeof(T) == 1) {
    REQUIRE(kernels::Mean(p, s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 0));
    REQUIRE(kernels::Sum(p, s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 1));
    REQUIRE(kernels::ReduceMax(s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 2));
  } else {
    REQUIRE(kernels::Mean16(p, s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 0));
    REQUIRE(kernels::Sum16(p, s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 1));
    REQUIRE(kernels::ReduceMax16(s, axes, in.data(), out.data()) == KernelStatus::kOk);
    REQUIRE(out == RefReduce(p, s, red, in, 2));
  }
}

TEST_CASE("Mean, Sum and ReduceMax match the reference", "[kernels][reduce]") {
  const uint64_t seed = testing::TestSeed(0x3EA);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 80; ++iter) {
    CAPTURE(iter);
    CheckReduce<int8_t>(rng);
    CheckReduce<int16_t>(rng);
  }
}

TEST_CASE("Mean of a global average pool is the rounded average", "[kernels][reduce]") {
  // Same scale and zero point in and out: multiplier 2^30, shift 1 (= 1.0). Mean of
  // {1, 2, 3, 5} = 2.75 -> 3; of {-1, -2} = -1.5 -> -1: 1/N is folded into the Q31
  // multiplier (2^30 << 1) / 2 and the rounding doubling high multiply rounds ties up.
  kernels::MeanParams p;
  p.output = {1 << 30, 1};
  ReduceAxes axes;
  axes.count = 1;
  axes.axis[0] = 1;
  const int8_t a[4] = {1, 2, 3, 5};
  int8_t out = 0;
  REQUIRE(kernels::Mean(p, Shape{2, {1, 4}}, axes, a, &out) == KernelStatus::kOk);
  CHECK(out == 3);
  const int8_t b[2] = {-1, -2};
  REQUIRE(kernels::Mean(p, Shape{2, {1, 2}}, axes, b, &out) == KernelStatus::kOk);
  CHECK(out == -1);
  axes.axis[0] = 2;
  CHECK(kernels::Mean(p, Shape{2, {1, 2}}, axes, b, &out) == KernelStatus::kArgError);
}

}  // namespace
}  // namespace mica
