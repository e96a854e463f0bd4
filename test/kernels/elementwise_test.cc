// Elementwise kernels (ADD, SUB, MUL, MINIMUM, MAXIMUM, SQUARED_DIFFERENCE) against a simple
// reference: per-element TFLite arithmetic written with the independent fixed-point reference
// and a digit-by-digit broadcast index. Every compiled variant of ADD and MUL is run.
#include "mica/kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/fixed_point_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::AddParams;
using kernels::KernelStatus;
using kernels::MulParams;
using kernels::Shape;
using testing::ElemRng;
using testing::RefClamp;
using testing::RefMultiplyByQuantizedMultiplier;

int32_t RefAddSub(const AddParams& p, int32_t a, int32_t b, int sign) {
  const int64_t s1 = int64_t{a + p.input1_offset} * (int64_t{1} << p.left_shift);
  const int64_t s2 = int64_t{b + p.input2_offset} * (int64_t{1} << p.left_shift);
  const int32_t x1 = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(s1),
                                                      p.input1.multiplier, p.input1.shift);
  const int32_t x2 = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(s2),
                                                      p.input2.multiplier, p.input2.shift);
  const int32_t raw = sign > 0 ? x1 + x2 : x1 - x2;
  return RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(raw, p.output.multiplier,
                                                           p.output.shift)} +
                      p.output_offset,
                  p.activation.min, p.activation.max);
}

int32_t RefMul(const MulParams& p, int32_t a, int32_t b) {
  const int64_t prod = int64_t{a + p.input1_offset} * (b + p.input2_offset);
  return RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(prod),
                                                           p.output.multiplier,
                                                           p.output.shift)} +
                      p.output_offset,
                  p.activation.min, p.activation.max);
}

int32_t RefSquaredDifference(const AddParams& p, int32_t a, int32_t b) {
  const int64_t s1 = int64_t{a + p.input1_offset} * (int64_t{1} << p.left_shift);
  const int64_t s2 = int64_t{b + p.input2_offset} * (int64_t{1} << p.left_shift);
  const int32_t x1 = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(s1),
                                                      p.input1.multiplier, p.input1.shift);
  const int32_t x2 = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(s2),
                                                      p.input2.multiplier, p.input2.shift);
  const int64_t d = int64_t{x1} - x2;
  const int32_t sq = static_cast<int32_t>(static_cast<uint32_t>(d * d));
  return RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(sq, p.output.multiplier,
                                                           p.output.shift)} +
                      p.output_offset,
                  p.activation.min, p.activation.max);
}

// TFLite ADD / SUB parameters from scales (left_shift 20 / 15, double ratios).
AddParams MakeAddParams(ElemRng& rng, bool int16, bool sub) {
  AddParams p;
  const double s1 = rng.Real(0.001, 0.2), s2 = rng.Real(0.001, 0.2), so = rng.Real(0.002, 0.4);
  p.left_shift = int16 ? 15 : 20;
  const double twice_max = 2 * std::max(s1, s2);
  double r1 = s1 / twice_max, r2 = s2 / twice_max,
         ro = twice_max / ((1 << p.left_shift) * so);
  if (sub) {  // SUB's float32 ratios
    const float tm = static_cast<float>(2 * std::max(s1, s2));
    r1 = static_cast<float>(static_cast<float>(s1) / tm);
    r2 = static_cast<float>(static_cast<float>(s2) / tm);
    ro = static_cast<float>(tm / ((1 << p.left_shift) * static_cast<float>(so)));
  }
  p.input1 = testing::QuantizeRef(r1);
  p.input2 = testing::QuantizeRef(r2);
  p.output = testing::QuantizeRef(ro);
  if (int16) {
    p.input1_offset = p.input2_offset = p.output_offset = 0;
    p.activation = {-32768, 32767};
  } else {
    p.input1_offset = -rng.ZeroPoint8();
    p.input2_offset = -rng.ZeroPoint8();
    p.output_offset = rng.ZeroPoint8();
    p.activation = rng.Chance(0.3) ? kernels::ActivationRange{p.output_offset, 127}
                                   : kernels::ActivationRange{-128, 127};
  }
  return p;
}

template <typename T, typename Fn, typename Ref>
void CheckBinary(ElemRng& rng, Fn fn, Ref ref, int32_t lo, int32_t hi, const Shape& s1,
                 const Shape& s2, const Shape& so) {
  const auto in1 = rng.Fill<T>(static_cast<size_t>(s1.elements()), lo, hi);
  const auto in2 = rng.Fill<T>(static_cast<size_t>(s2.elements()), lo, hi);
  std::vector<T> out(static_cast<size_t>(so.elements()), 0x55);
  REQUIRE(fn(s1, in1.data(), s2, in2.data(), so, out.data()) == KernelStatus::kOk);
  for (int64_t o = 0; o < so.elements(); ++o) {
    const T a = in1[testing::BroadcastSourceIndex(so, s1, o)];
    const T b = in2[testing::BroadcastSourceIndex(so, s2, o)];
    const int32_t want = ref(a, b);
    if (out[o] != want) {
      CAPTURE(o, int{a}, int{b}, want, int{out[o]});
      FAIL("mismatch");
    }
  }
}

// Random broadcast triple (either input may be the one broadcasting, or both).
void RandomShapes(ElemRng& rng, Shape* s1, Shape* s2, Shape* so) {
  *so = testing::RandomShape(rng, 6, 7);
  if (so->elements() > 3000) so->dims[0] = 1;
  *s1 = rng.Chance(0.5) ? *so : testing::BroadcastableShape(rng, *so);
  *s2 = rng.Chance(0.5) ? *so : testing::BroadcastableShape(rng, *so);
  // The output must be the broadcast of the inputs: put a full dim back where both are 1.
  for (int k = 0; k < so->rank; ++k) {
    const int i1 = s1->rank - so->rank + k, i2 = s2->rank - so->rank + k;
    const bool b1 = i1 < 0 || s1->dims[i1] != so->dims[k];
    const bool b2 = i2 < 0 || s2->dims[i2] != so->dims[k];
    if (b1 && b2 && so->dims[k] != 1) {
      if (i1 >= 0) {
        s1->dims[i1] = so->dims[k];
      } else {
        *s1 = *so;
      }
    }
  }
}

TEST_CASE("Add and Sub int8 match the reference, all variants, broadcasting", "[kernels][add]") {
  const uint64_t seed = testing::TestSeed(0xADD8);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 120; ++iter) {
    CAPTURE(iter);
    Shape s1, s2, so;
    RandomShapes(rng, &s1, &s2, &so);
    CAPTURE(testing::ShapeString(s1), testing::ShapeString(s2), testing::ShapeString(so));
    const bool sub = iter % 3 == 2;
    AddParams p = MakeAddParams(rng, false, sub);
    if (rng.Chance(0.1)) {  // extreme multipliers and shifts
      p.input1 = {INT32_MAX, 0};
      p.input2 = {1 << 30, -31};
      p.output = {rng.Uniform(1 << 30, INT32_MAX), rng.Uniform(-31, 0)};
    }
    CAPTURE(p.input1.multiplier, p.input1.shift, p.input2.multiplier, p.input2.shift,
            p.output.multiplier, p.output.shift);
    if (sub) {
      for (const auto& v : kernels::SubVariants()) {
        CAPTURE(v.name);
        CheckBinary<int8_t>(
            rng, [&](auto... a) { return v.fn(p, a...); },
            [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, -1); }, -128, 127, s1, s2, so);
      }
      CheckBinary<int8_t>(
          rng, [&](auto... a) { return kernels::Sub(p, a...); },
          [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, -1); }, -128, 127, s1, s2, so);
    } else {
      for (const auto& v : kernels::AddVariants()) {
        CAPTURE(v.name);
        CheckBinary<int8_t>(
            rng, [&](auto... a) { return v.fn(p, a...); },
            [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, 1); }, -128, 127, s1, s2, so);
      }
    }
  }
}

TEST_CASE("Add int8 same-shape fast paths of every variant agree on odd lengths",
          "[kernels][add]") {
  const uint64_t seed = testing::TestSeed(0xADD9);
  CAPTURE(seed);
  ElemRng rng(seed);
  REQUIRE(kernels::AddVariants().size() >= 1);
  for (int32_t n : {1, 2, 3, 4, 5, 7, 15, 16, 17, 64, 1001}) {
    CAPTURE(n);
    Shape s{1, {n}};
    const AddParams p = MakeAddParams(rng, false, false);
    MulParams m;
    m.input1_offset = -rng.ZeroPoint8();
    m.input2_offset = -rng.ZeroPoint8();
    m.output_offset = rng.ZeroPoint8();
    m.output = testing::QuantizeRef(rng.Real(1e-4, 0.05));
    for (const auto& v : kernels::AddVariants()) {
      CAPTURE(v.name);
      CheckBinary<int8_t>(
          rng, [&](auto... a) { return v.fn(p, a...); },
          [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, 1); }, -128, 127, s, s, s);
    }
    for (const auto& v : kernels::MulVariants()) {
      CAPTURE(v.name);
      CheckBinary<int8_t>(
          rng, [&](auto... a) { return v.fn(m, a...); },
          [&](int32_t a, int32_t b) { return RefMul(m, a, b); }, -128, 127, s, s, s);
    }
  }
}

TEST_CASE("Add16 / Sub16 / Mul16 match the reference", "[kernels][add]") {
  const uint64_t seed = testing::TestSeed(0xADD16);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 60; ++iter) {
    CAPTURE(iter);
    Shape s1, s2, so;
    RandomShapes(rng, &s1, &s2, &so);
    const AddParams p = MakeAddParams(rng, true, iter % 2 == 1);
    CheckBinary<int16_t>(
        rng, [&](auto... a) { return kernels::Add16(p, a...); },
        [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, 1); }, -32768, 32767, s1, s2, so);
    CheckBinary<int16_t>(
        rng, [&](auto... a) { return kernels::Sub16(p, a...); },
        [&](int32_t a, int32_t b) { return RefAddSub(p, a, b, -1); }, -32768, 32767, s1, s2, so);
    MulParams m;
    m.output = testing::QuantizeRef(rng.Real(1e-6, 1e-3));
    m.activation = {-32768, 32767};
    CheckBinary<int16_t>(
        rng, [&](auto... a) { return kernels::Mul16(m, a...); },
        [&](int32_t a, int32_t b) { return RefMul(m, a, b); }, -32768, 32767, s1, s2, so);
  }
}

TEST_CASE("Mul int8 matches the reference, all variants", "[kernels][mul]") {
  const uint64_t seed = testing::TestSeed(0x3017);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 100; ++iter) {
    CAPTURE(iter);
    Shape s1, s2, so;
    RandomShapes(rng, &s1, &s2, &so);
    MulParams m;
    m.input1_offset = -rng.ZeroPoint8();
    m.input2_offset = -rng.ZeroPoint8();
    m.output_offset = rng.ZeroPoint8();
    m.output = rng.Chance(0.1) ? kernels::Requant{rng.Uniform(1 << 30, INT32_MAX),
                                                  rng.Uniform(-31, 8)}
                               : testing::QuantizeRef(rng.Real(1e-4, 0.05));
    m.activation = rng.Chance(0.3) ? kernels::ActivationRange{-20, 90}
                                   : kernels::ActivationRange{-128, 127};
    CAPTURE(m.output.multiplier, m.output.shift);
    for (const auto& v : kernels::MulVariants()) {
      CAPTURE(v.name);
      CheckBinary<int8_t>(
          rng, [&](auto... a) { return v.fn(m, a...); },
          [&](int32_t a, int32_t b) { return RefMul(m, a, b); }, -128, 127, s1, s2, so);
    }
  }
}

TEST_CASE("Minimum, Maximum and SquaredDifference match the reference", "[kernels][minmax]") {
  const uint64_t seed = testing::TestSeed(0x313);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    Shape s1, s2, so;
    RandomShapes(rng, &s1, &s2, &so);
    auto mn = [](int32_t a, int32_t b) { return std::min(a, b); };
    auto mx = [](int32_t a, int32_t b) { return std::max(a, b); };
    CheckBinary<int8_t>(rng, kernels::Minimum, mn, -128, 127, s1, s2, so);
    CheckBinary<int8_t>(rng, kernels::Maximum, mx, -128, 127, s1, s2, so);
    CheckBinary<int16_t>(rng, kernels::Minimum16, mn, -32768, 32767, s1, s2, so);
    CheckBinary<int16_t>(rng, kernels::Maximum16, mx, -32768, 32767, s1, s2, so);
    // SQUARED_DIFFERENCE: int8 (left shift 7) and int16 (left shift 0).
    const double sa = rng.Real(0.01, 0.1), sb = rng.Real(0.01, 0.1), so8 = rng.Real(0.01, 1);
    AddParams p;
    p.left_shift = 7;
    const double tm = 2 * std::max(sa, sb);
    p.input1 = testing::QuantizeRef(sa / tm);
    p.input2 = testing::QuantizeRef(sb / tm);
    p.output = testing::QuantizeRef(tm * tm / ((1 << 14) * so8));
    p.input1_offset = -rng.ZeroPoint8();
    p.input2_offset = -rng.ZeroPoint8();
    p.output_offset = rng.ZeroPoint8();
    CheckBinary<int8_t>(
        rng, [&](auto... a) { return kernels::SquaredDifference(p, a...); },
        [&](int32_t a, int32_t b) { return RefSquaredDifference(p, a, b); }, -128, 127, s1, s2,
        so);
    AddParams q = p;
    q.left_shift = 0;
    q.input1_offset = q.input2_offset = q.output_offset = 0;
    q.output = testing::QuantizeRef(tm * tm / (so8 * 300));
    q.activation = {-32768, 32767};
    CheckBinary<int16_t>(
        rng, [&](auto... a) { return kernels::SquaredDifference16(q, a...); },
        [&](int32_t a, int32_t b) { return RefSquaredDifference(q, a, b); }, -32768, 32767, s1,
        s2, so);
  }
}

TEST_CASE("Minimum / Maximum: every variant matches the reference on random broadcasts",
          "[kernels][minmax]") {
  const uint64_t seed = testing::TestSeed(0x3131);
  CAPTURE(seed);
  ElemRng rng(seed);
  auto mn = [](int32_t a, int32_t b) { return std::min(a, b); };
  auto mx = [](int32_t a, int32_t b) { return std::max(a, b); };
  REQUIRE(kernels::MinimumVariants().size() >= 2);  // scalar and dsp (emulated) on the host
  for (int iter = 0; iter < 120; ++iter) {
    CAPTURE(iter);
    Shape s1, s2, so;
    if (iter % 3 == 0) {
      // Long runs (vector loops and every tail length), either input possibly one element.
      so.rank = rng.Uniform(1, 3);
      for (int i = 0; i < so.rank; ++i) so.dims[i] = rng.Uniform(1, 4);
      so.dims[so.rank - 1] = rng.Uniform(1, 80);
      s1 = so;
      s2 = so;
      if (rng.Chance(0.3)) s2 = Shape{};  // rank 0: one element
      if (rng.Chance(0.2)) std::swap(s1, s2);
    } else {
      RandomShapes(rng, &s1, &s2, &so);
    }
    CAPTURE(testing::ShapeString(s1), testing::ShapeString(s2), testing::ShapeString(so));
    for (const auto& v : kernels::MinimumVariants()) {
      CAPTURE(v.name);
      CheckBinary<int8_t>(rng, v.fn, mn, -128, 127, s1, s2, so);
    }
    for (const auto& v : kernels::MaximumVariants()) {
      CAPTURE(v.name);
      CheckBinary<int8_t>(rng, v.fn, mx, -128, 127, s1, s2, so);
    }
    for (const auto& v : kernels::Minimum16Variants()) {
      CAPTURE(v.name);
      CheckBinary<int16_t>(rng, v.fn, mn, -32768, 32767, s1, s2, so);
    }
    for (const auto& v : kernels::Maximum16Variants()) {
      CAPTURE(v.name);
      CheckBinary<int16_t>(rng, v.fn, mx, -32768, 32767, s1, s2, so);
    }
  }
  // Shapes that do not broadcast are refused by every variant.
  const Shape a{2, {3, 4}}, b{2, {2, 4}};
  int8_t x[12] = {}, y[8] = {}, o[12] = {};
  for (const auto& v : kernels::MinimumVariants()) {
    CAPTURE(v.name);
    REQUIRE(v.fn(a, x, b, y, a, o) == KernelStatus::kArgError);
  }
}

TEST_CASE("Add with TFLite parameters approximates the real sum", "[kernels][add]") {
  // Hand-computable: scales 0.05 / 0.04 / 0.06 and zero points -128 (the CMSIS-NN anchor's
  // parameters): real values 0.05 * (a + 128) + 0.04 * (b + 128) within one output step.
  AddParams p;
  p.input1_offset = p.input2_offset = 128;
  p.output_offset = -128;
  p.left_shift = 20;
  p.input1 = {1073741824, 0};
  p.input2 = {1717986918, -1};
  p.output = {1789569707, -19};
  for (int a = -128; a < 128; a += 5) {
    for (int b = -128; b < 128; b += 7) {
      const Shape s{1, {1}};
      const int8_t x = static_cast<int8_t>(a), y = static_cast<int8_t>(b);
      int8_t out = 0;
      REQUIRE(kernels::Add(p, s, &x, s, &y, s, &out) == KernelStatus::kOk);
      const double real = 0.05 * (a + 128) + 0.04 * (b + 128);
      const double q = std::min(127.0, std::round(real / 0.06) - 128);
      CAPTURE(a, b, int{out}, q);
      REQUIRE(std::abs(out - q) <= 1);
    }
  }
}

TEST_CASE("Elementwise ops reject bad shapes and parameters", "[kernels][add]") {
  int8_t a[6] = {}, b[6] = {}, o[6] = {};
  const Shape s23{2, {2, 3}}, s32{2, {3, 2}}, s3{1, {3}};
  AddParams p;
  p.input1 = p.input2 = p.output = {1 << 30, -1};
  CHECK(kernels::Add(p, s23, a, s32, b, s23, o) == KernelStatus::kArgError);
  CHECK(kernels::Add(p, s23, a, s3, b, s3, o) == KernelStatus::kArgError);
  CHECK(kernels::Add(p, s23, a, s3, b, s23, o) == KernelStatus::kOk);
  Shape big{7, {1, 1, 1, 1, 1, 1}};
  CHECK(kernels::Add(p, big, a, s3, b, s3, o) == KernelStatus::kArgError);
  AddParams bad = p;
  bad.input1.shift = 3;  // must be <= 0
  CHECK(kernels::Add(bad, s3, a, s3, b, s3, o) == KernelStatus::kArgError);
  CHECK(kernels::Add(p, s3, nullptr, s3, b, s3, o) == KernelStatus::kArgError);
  MulParams m;
  m.activation = {10, 5};
  CHECK(kernels::Mul(m, s3, a, s3, b, s3, o) == KernelStatus::kArgError);
  for (const auto& v : kernels::AddVariants()) {
    CAPTURE(v.name);
    CHECK(v.fn(p, s23, a, s32, b, s23, o) == KernelStatus::kArgError);
  }
}

}  // namespace
}  // namespace mica
