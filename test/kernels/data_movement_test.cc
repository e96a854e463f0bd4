// Data movement against index-arithmetic references: TRANSPOSE (rank 1..6), PAD,
// CONCATENATION, STRIDED_SLICE (incl. TFLite's mask resolution), SLICE, SPLIT.
#include "mica/kernels/data_movement.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using kernels::Shape;
using testing::ElemRng;

// Multi-index <-> flat index, row-major.
std::vector<int32_t> Unflatten(const Shape& s, int64_t i) {
  std::vector<int32_t> idx(s.rank);
  for (int k = s.rank - 1; k >= 0; --k) {
    idx[k] = static_cast<int32_t>(i % s.dims[k]);
    i /= s.dims[k];
  }
  return idx;
}
int64_t Flatten(const Shape& s, const std::vector<int32_t>& idx) {
  int64_t i = 0;
  for (int k = 0; k < s.rank; ++k) i = i * s.dims[k] + idx[k];
  return i;
}

template <typename T>
void CheckTranspose(ElemRng& rng, kernels::TransposeFn fn = kernels::Transpose,
                    int max_dim = 5) {
  Shape in = testing::RandomShape(rng, 6, max_dim);
  while (in.elements() > 20000) in.dims[rng.Uniform(0, in.rank - 1)] = 1;
  std::vector<int32_t> perm(in.rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937(rng.Uniform(0, 1 << 30)));
  Shape out;
  out.rank = in.rank;
  for (int i = 0; i < in.rank; ++i) out.dims[i] = in.dims[perm[i]];
  const auto x = rng.Fill<T>(static_cast<size_t>(in.elements()), -30000, 30000);
  std::vector<T> y(x.size());
  REQUIRE(fn(in, perm.data(), x.data(), y.data(), sizeof(T)) == KernelStatus::kOk);
  for (int64_t o = 0; o < out.elements(); ++o) {
    const auto oi = Unflatten(out, o);
    std::vector<int32_t> ii(in.rank);
    for (int k = 0; k < in.rank; ++k) ii[perm[k]] = oi[k];
    REQUIRE(y[o] == x[Flatten(in, ii)]);
  }
}

TEST_CASE("Transpose matches the reference up to rank 6", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7A);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    CheckTranspose<int8_t>(rng);
    CheckTranspose<int16_t>(rng);
    CheckTranspose<int32_t>(rng);
  }
  const int32_t bad[2] = {0, 0};
  int8_t buf[4];
  CHECK(kernels::Transpose(Shape{2, {2, 2}}, bad, buf, buf, 1) == KernelStatus::kArgError);
  const int32_t ok[2] = {1, 0};
  CHECK(kernels::Transpose(Shape{2, {2, 2}}, ok, buf, buf, 3) == KernelStatus::kArgError);
}

TEST_CASE("Transpose: every variant matches the reference", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7A7);
  CAPTURE(seed);
  ElemRng rng(seed);
  REQUIRE(kernels::TransposeVariants().size() >= 2);  // scalar and dsp on the host
  for (const auto& v : kernels::TransposeVariants()) {
    CAPTURE(v.name);
    for (int iter = 0; iter < 60; ++iter) {
      CAPTURE(iter);
      const int max_dim = iter % 2 == 0 ? 5 : 40;  // long runs and large strides too
      CheckTranspose<int8_t>(rng, v.fn, max_dim);
      CheckTranspose<int16_t>(rng, v.fn, max_dim);
      CheckTranspose<int32_t>(rng, v.fn, max_dim);
    }
    // NHWC <-> NCHW with every tile edge (the DSP body's 2-D tile path), int8 and int16.
    for (const int32_t c : {1, 3, 4, 5, 8, 13}) {
      for (const auto& perm : {std::vector<int32_t>{0, 3, 1, 2}, std::vector<int32_t>{0, 2, 3, 1}}) {
        const Shape in{4, {2, 7, 9, c}};
        const auto x8 = rng.Fill<int8_t>(static_cast<size_t>(in.elements()), -128, 127);
        const auto x16 = rng.Fill<int16_t>(static_cast<size_t>(in.elements()), -32768, 32767);
        std::vector<int8_t> y8(x8.size()), r8(x8.size());
        std::vector<int16_t> y16(x16.size()), r16(x16.size());
        REQUIRE(v.fn(in, perm.data(), x8.data(), y8.data(), 1) == KernelStatus::kOk);
        REQUIRE(v.fn(in, perm.data(), x16.data(), y16.data(), 2) == KernelStatus::kOk);
        Shape out;
        out.rank = 4;
        for (int i = 0; i < 4; ++i) out.dims[i] = in.dims[perm[i]];
        for (int64_t o = 0; o < out.elements(); ++o) {
          const auto oi = Unflatten(out, o);
          std::vector<int32_t> ii(4);
          for (int k = 0; k < 4; ++k) ii[perm[k]] = oi[k];
          r8[o] = x8[Flatten(in, ii)];
          r16[o] = x16[Flatten(in, ii)];
        }
        CAPTURE(c, perm);
        REQUIRE(y8 == r8);
        REQUIRE(y16 == r16);
      }
    }
    const int32_t bad[2] = {0, 0};
    int8_t buf[4];
    CHECK(v.fn(Shape{2, {2, 2}}, bad, buf, buf, 1) == KernelStatus::kArgError);
  }
}

template <typename T>
void CheckPad(ElemRng& rng, kernels::PadFn fn, int max_rank, int max_dim, int max_pad) {
  Shape in = testing::RandomShape(rng, max_rank, max_dim);
  if (rng.Chance(0.1)) in.dims[rng.Uniform(0, in.rank - 1)] = 0;  // all padding
  kernels::PadParams p;
  Shape out = in;
  for (int k = 0; k < in.rank; ++k) {
    p.before[k] = rng.Chance(0.4) ? 0 : rng.Uniform(0, max_pad);
    p.after[k] = rng.Chance(0.4) ? 0 : rng.Uniform(0, max_pad);
    out.dims[k] += p.before[k] + p.after[k];
  }
  CAPTURE(testing::ShapeString(in), testing::ShapeString(out));
  const auto x = rng.Fill<T>(static_cast<size_t>(in.elements()), -30000, 30000);
  const T pad = static_cast<T>(rng.Uniform(-30000, 30000));
  std::vector<T> y(static_cast<size_t>(out.elements()), T{0x55});
  REQUIRE(fn(p, in, x.data(), &pad, y.data(), sizeof(T)) == KernelStatus::kOk);
  for (int64_t o = 0; o < out.elements(); ++o) {
    auto idx = Unflatten(out, o);
    bool inside = true;
    for (int k = 0; k < in.rank; ++k) {
      idx[k] -= p.before[k];
      inside = inside && idx[k] >= 0 && idx[k] < in.dims[k];
    }
    REQUIRE(y[o] == (inside ? x[Flatten(in, idx)] : pad));
  }
}

TEST_CASE("Pad: every variant matches the reference", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7B7);
  CAPTURE(seed);
  ElemRng rng(seed);
  REQUIRE(kernels::PadVariants().size() >= 2);
  for (const auto& v : kernels::PadVariants()) {
    CAPTURE(v.name);
    for (int iter = 0; iter < 60; ++iter) {
      CAPTURE(iter);
      const bool big = iter % 2 == 1;
      CheckPad<int8_t>(rng, v.fn, big ? 3 : 6, big ? 30 : 4, big ? 5 : 2);
      CheckPad<int16_t>(rng, v.fn, big ? 3 : 6, big ? 30 : 4, big ? 5 : 2);
      CheckPad<int32_t>(rng, v.fn, big ? 3 : 6, big ? 30 : 4, big ? 5 : 2);
    }
    kernels::PadParams neg;
    neg.before[0] = -1;
    int8_t val = 0, buf[4];
    CHECK(v.fn(neg, Shape{1, {2}}, buf, &val, buf, 1) == KernelStatus::kArgError);
  }
}

TEST_CASE("Pad matches the reference", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7B);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    const Shape in = testing::RandomShape(rng, 6, 4);
    kernels::PadParams p;
    Shape out = in;
    for (int k = 0; k < in.rank; ++k) {
      p.before[k] = rng.Uniform(0, 2);
      p.after[k] = rng.Uniform(0, 2);
      out.dims[k] += p.before[k] + p.after[k];
    }
    const auto x = rng.Fill<int8_t>(static_cast<size_t>(in.elements()), -128, 127);
    const int8_t pad = static_cast<int8_t>(rng.Uniform(-128, 127));
    std::vector<int8_t> y(static_cast<size_t>(out.elements()));
    REQUIRE(kernels::Pad(p, in, x.data(), &pad, y.data(), 1) == KernelStatus::kOk);
    for (int64_t o = 0; o < out.elements(); ++o) {
      auto idx = Unflatten(out, o);
      bool inside = true;
      for (int k = 0; k < in.rank; ++k) {
        idx[k] -= p.before[k];
        inside = inside && idx[k] >= 0 && idx[k] < in.dims[k];
      }
      REQUIRE(y[o] == (inside ? x[Flatten(in, idx)] : pad));
    }
  }
  kernels::PadParams neg;
  neg.before[0] = -1;
  int8_t v = 0, buf[4];
  CHECK(kernels::Pad(neg, Shape{1, {2}}, buf, &v, buf, 1) == KernelStatus::kArgError);
}

TEST_CASE("Concatenation and Split are inverse and match the reference", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7C);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    Shape out = testing::RandomShape(rng, 5, 4);
    const int axis = rng.Uniform(0, out.rank - 1);
    const int n = rng.Uniform(1, 4);
    std::vector<Shape> shapes(n, out);
    std::vector<std::vector<int16_t>> parts(n);
    std::vector<const void*> ptrs(n);
    std::vector<int32_t> sizes(n);
    int32_t total = 0;
    for (int k = 0; k < n; ++k) {
      shapes[k].dims[axis] = sizes[k] = rng.Uniform(0, 3);
      total += sizes[k];
      parts[k] = rng.Fill<int16_t>(static_cast<size_t>(shapes[k].elements()), -32768, 32767);
      ptrs[k] = parts[k].data();
    }
    out.dims[axis] = total;
    std::vector<int16_t> y(static_cast<size_t>(out.elements()));
    REQUIRE(kernels::Concatenation(axis, n, shapes.data(), ptrs.data(), out, y.data(), 2) ==
            KernelStatus::kOk);
    for (int64_t o = 0; o < out.elements(); ++o) {
      auto idx = Unflatten(out, o);
      int k = 0;
      while (idx[axis] >= sizes[k]) idx[axis] -= sizes[k++];
      REQUIRE(y[o] == parts[k][Flatten(shapes[k], idx)]);
    }
    std::vector<std::vector<int16_t>> back(n);
    std::vector<void*> outs(n);
    for (int k = 0; k < n; ++k) {
      back[k].resize(parts[k].size());
      outs[k] = back[k].data();
    }
    REQUIRE(kernels::Split(axis, out, y.data(), n, sizes.data(), outs.data(), 2) == KernelStatus::kOk);
    for (int k = 0; k < n; ++k) REQUIRE(back[k] == parts[k]);
  }
}

TEST_CASE("StridedSlice and Slice match the reference", "[kernels][data]") {
  const uint64_t seed = testing::TestSeed(0x7D);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 60; ++iter) {
    CAPTURE(iter);
    const Shape in = testing::RandomShape(rng, 6, 6);
    kernels::StridedSliceParams p;
    Shape out = in;
    for (int k = 0; k < in.rank; ++k) {
      const int32_t stride = rng.Chance(0.3) ? -rng.Uniform(1, 3) : rng.Uniform(1, 3);
      // A shrunk axis needs an in-range begin (TFLite reads out of bounds otherwise).
      const bool shrink = rng.Chance(0.1);
      const int32_t begin =
          shrink ? rng.Uniform(-in.dims[k], in.dims[k] - 1) : rng.Uniform(-8, 8);
      kernels::ResolveStridedSliceAxis(in.dims[k], begin, rng.Uniform(-8, 8), stride,
                                       !shrink && rng.Chance(0.2), rng.Chance(0.2), shrink, false,
                                       &p.start[k], &p.stop[k]);
      if (shrink) p.stride[k] = 1;
      if (!shrink) p.stride[k] = stride;
      out.dims[k] = kernels::StridedSliceCount(p.start[k], p.stop[k], p.stride[k]);
    }
    const auto x = rng.Fill<int8_t>(static_cast<size_t>(in.elements()), -128, 127);
    std::vector<int8_t> y(static_cast<size_t>(out.elements()));
    REQUIRE(kernels::StridedSlice(p, in, x.data(), out, y.data(), 1) == KernelStatus::kOk);
    for (int64_t o = 0; o < out.elements(); ++o) {
      auto idx = Unflatten(out, o);
      for (int k = 0; k < in.rank; ++k) idx[k] = p.start[k] + idx[k] * p.stride[k];
      REQUIRE(y[o] == x[Flatten(in, idx)]);
    }
    // SLICE with -1 sizes.
    std::vector<int32_t> begin(in.rank), size(in.rank);
    Shape so = in;
    for (int k = 0; k < in.rank; ++k) {
      begin[k] = rng.Uniform(0, in.dims[k] - 1);
      size[k] = rng.Chance(0.3) ? -1 : rng.Uniform(0, in.dims[k] - begin[k]);
      so.dims[k] = size[k] == -1 ? in.dims[k] - begin[k] : size[k];
    }
    std::vector<int8_t> z(static_cast<size_t>(so.elements()));
    REQUIRE(kernels::Slice(begin.data(), size.data(), in, x.data(), z.data(), 1) == KernelStatus::kOk);
    for (int64_t o = 0; o < so.elements(); ++o) {
      auto idx = Unflatten(so, o);
      for (int k = 0; k < in.rank; ++k) idx[k] += begin[k];
      REQUIRE(z[o] == x[Flatten(in, idx)]);
    }
  }
}

TEST_CASE("ResolveStridedSliceAxis follows TFLite's mask rules", "[kernels][data]") {
  int32_t s = 0, e = 0;
  // x[1:-1] on size 5 -> [1, 4).
  kernels::ResolveStridedSliceAxis(5, 1, -1, 1, false, false, false, false, &s, &e);
  CHECK(s == 1);
  CHECK(e == 4);
  // x[::-1] via masks -> start 4, stop -1 (exclusive), 5 elements.
  kernels::ResolveStridedSliceAxis(5, 0, 0, -1, true, true, false, false, &s, &e);
  CHECK(s == 4);
  CHECK(e == -1);
  CHECK(kernels::StridedSliceCount(s, e, -1) == 5);
  // Shrink axis at -2 -> [3, 4).
  kernels::ResolveStridedSliceAxis(5, -2, 0, 1, false, false, true, false, &s, &e);
  CHECK(s == 3);
  CHECK(e == 4);
  // Out-of-range begin clamps; offset mode adds begin to end.
  kernels::ResolveStridedSliceAxis(5, 2, 2, 1, false, false, false, true, &s, &e);
  CHECK(s == 2);
  CHECK(e == 4);
  kernels::ResolveStridedSliceAxis(5, 9, 20, 1, false, false, false, false, &s, &e);
  CHECK(s == 5);
  CHECK(e == 5);
}

}  // namespace
}  // namespace mica
