// BatchMatMul: every compiled variant, bit-exact against the reference, over seeded random
// shapes (adj_x / adj_y, broadcast batch dims, sizes around the SIMD widths), extreme offsets,
// multipliers, shifts and clamps.
#include "mica/kernels/batch_matmul.h"

#include <algorithm>
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

TEST_CASE("BatchMatMul int8: every variant matches the reference", "[kernels][batch_matmul]") {
  const uint64_t seed = testing::TestSeed(0xB33);
  CAPTURE(seed);
  ConvRng rng(seed);
  for (int i = 0; i < 200; ++i) {
    CAPTURE(i);
    BatchMatMulParams p;
    for (int d = 0; d < 3; ++d) {
      const int32_t dim = d == 0 ? 1 : rng.Uniform(1, 3);
      p.lhs_batch[d] = dim;
      p.rhs_batch[d] = dim;
      if (rng.Chance(0.3)) (rng.Chance(0.5) ? p.lhs_batch[d] : p.rhs_batch[d]) = 1;
    }
    p.m = rng.Pick<int32_t>({1, 2, 3, 5, 8});
    p.k = rng.Pick<int32_t>({1, 3, 4, 5, 7, 16, 17, 33});
    p.n = rng.Pick<int32_t>({1, 2, 3, 5, 7, 16});
    p.adj_x = rng.Chance(0.5);
    p.adj_y = rng.Chance(0.5);
    p.lhs_offset = rng.Offset8();
    p.rhs_offset = rng.Chance(0.5) ? 0 : rng.Offset8();
    p.output_offset = rng.Uniform(-128, 127);
    p.activation = testing::RandomActivation(rng, -128, 127);
    const auto q = testing::MakeQuant(rng, 1, testing::AccBits(p.k, 9), 8);
    p.requant = {q.mult[0], q.shift[0]};
    CAPTURE(p.lhs_batch[1], p.lhs_batch[2], p.rhs_batch[1], p.rhs_batch[2], p.m, p.k, p.n,
            p.adj_x, p.adj_y, p.lhs_offset, p.rhs_offset, p.output_offset);
    size_t lb = 1, rb = 1, ob = 1;
    for (int d = 0; d < 3; ++d) {
      lb *= p.lhs_batch[d];
      rb *= p.rhs_batch[d];
      ob *= std::max(p.lhs_batch[d], p.rhs_batch[d]);
    }
    const auto lhs = rng.Fill<int8_t>(lb * p.m * p.k, -128, 127);
    const auto rhs = rng.Fill<int8_t>(rb * p.k * p.n, -128, 127);
    std::vector<int8_t> want(ob * p.m * p.n);
    testing::BatchMatMulReference(p, lhs.data(), rhs.data(), want.data());
    for (const auto& v : BatchMatMulVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> got(want.size(), 0x55);
      testing::ScratchBuffer s(BatchMatMulScratchBytes(p, v.isa));
      REQUIRE(v.fn(p, lhs.data(), rhs.data(), got.data(), s.get()) == KernelStatus::kOk);
      REQUIRE(got == want);
    }
  }
}

TEST_CASE("BatchMatMul: hand-computed example and refused arguments", "[kernels][batch_matmul]") {
  BatchMatMulParams p;
  p.m = 2;
  p.k = 2;
  p.n = 2;
  p.requant = {1 << 30, 1};  // x1
  const int8_t a[4] = {1, 2, 3, 4};  // [[1,2],[3,4]]
  const int8_t b[4] = {5, 6, 7, 8};  // [[5,6],[7,8]]
  const int8_t want[4] = {19, 22, 43, 50};
  for (const auto& v : BatchMatMulVariants()) {
    CAPTURE(v.name);
    int8_t out[4] = {};
    testing::ScratchBuffer s(BatchMatMulScratchBytes(p, v.isa));
    REQUIRE(v.fn(p, a, b, out, s.get()) == KernelStatus::kOk);
    for (int i = 0; i < 4; ++i) REQUIRE(out[i] == want[i]);
    BatchMatMulParams bad = p;
    bad.lhs_batch[1] = 2;
    bad.rhs_batch[1] = 3;  // neither equal nor 1
    REQUIRE(v.fn(bad, a, b, out, s.get()) == KernelStatus::kArgError);
    bad = p;
    bad.k = 0;
    REQUIRE(v.fn(bad, a, b, out, s.get()) == KernelStatus::kArgError);
  }
}

}  // namespace
}  // namespace kernels
}  // namespace mica
