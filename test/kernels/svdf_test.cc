// SVDF against the nested-loop reference over several steps (the state carries over), int16
// and int8 state, with and without bias, plus a float cross-check of the parameters' meaning.
#include "mica/kernels/svdf.h"

#include <cmath>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/recurrent_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using testing::ElemRng;

template <typename StateT>
void RunSvdf(ElemRng& rng) {
  testing::RefSvdfConfig c;
  c.batch = rng.Uniform(1, 3);
  c.input_size = rng.Uniform(1, 20);
  c.rank = rng.Uniform(1, 3);
  c.num_filters = c.rank * rng.Uniform(1, 8);
  c.memory = rng.Uniform(1, 10);
  const bool s8 = sizeof(StateT) == 1;
  c.input_zp = rng.ZeroPoint8();
  c.state_zp = s8 ? rng.Uniform(-20, 20) : 0;
  c.output_zp = rng.ZeroPoint8();
  const kernels::Requant q1 = testing::QuantizeRef(rng.Real(s8 ? 1e-3 : 0.05, s8 ? 0.01 : 2.0));
  const kernels::Requant q2 = testing::QuantizeRef(rng.Real(s8 ? 1e-3 : 1e-5, s8 ? 0.01 : 1e-3));
  c.m1 = q1.multiplier;
  c.s1 = q1.shift;
  c.m2 = q2.multiplier;
  c.s2 = q2.shift;
  kernels::SvdfParams p;
  p.batch = c.batch;
  p.input_size = c.input_size;
  p.num_filters = c.num_filters;
  p.rank = c.rank;
  p.memory_size = c.memory;
  p.input_zero_point = c.input_zp;
  p.state_zero_point = c.state_zp;
  p.output_zero_point = c.output_zp;
  p.effective_scale_1 = q1;
  p.effective_scale_2 = q2;
  const auto wf = rng.Fill<int8_t>(static_cast<size_t>(c.num_filters) * c.input_size, -127, 127);
  const auto wt = rng.Fill<StateT>(static_cast<size_t>(c.num_filters) * c.memory, s8 ? -127 : -32767,
                                   s8 ? 127 : 32767);
  const bool has_bias = rng.Chance(0.7);
  const auto bias = rng.Fill<int32_t>(static_cast<size_t>(c.num_filters / c.rank), -50000, 50000);
  std::vector<StateT> state(static_cast<size_t>(c.batch) * c.num_filters * c.memory, 0);
  for (auto& v : state) v = static_cast<StateT>(rng.Uniform(-100, 100));
  std::vector<StateT> ref_state = state;
  std::vector<uint8_t> scratch(kernels::SvdfScratchBytes(p, kernels::Isa::kScalar) + 4);
  REQUIRE(kernels::SvdfScratchBytes(p, kernels::Isa::kMve) ==
          kernels::SvdfScratchBytes(p, kernels::Isa::kScalar));
  CAPTURE(c.batch, c.input_size, c.num_filters, c.rank, c.memory);
  for (int step = 0; step < 4; ++step) {
    CAPTURE(step);
    const auto in = rng.Fill<int8_t>(static_cast<size_t>(c.batch) * c.input_size, -128, 127);
    std::vector<int8_t> out(static_cast<size_t>(c.batch) * (c.num_filters / c.rank));
    KernelStatus st;
    if constexpr (sizeof(StateT) == 2) {
      st = kernels::Svdf(p, in.data(), wf.data(), wt.data(), has_bias ? bias.data() : nullptr,
                         state.data(), out.data(), {scratch.data(), scratch.size()});
    } else {
      st = kernels::SvdfInt8State(p, in.data(), wf.data(), wt.data(),
                                  has_bias ? bias.data() : nullptr, state.data(), out.data(),
                                  {scratch.data(), scratch.size()});
    }
    REQUIRE(st == KernelStatus::kOk);
    const auto want = testing::RefSvdfStep<StateT>(c, in, wf, wt, has_bias ? &bias : nullptr, ref_state);
    REQUIRE(out == want);
    REQUIRE(state == ref_state);
  }
}

TEST_CASE("Svdf int8 with int16 / int8 state matches the reference over steps",
          "[kernels][svdf]") {
  const uint64_t seed = testing::TestSeed(0x5DF);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    RunSvdf<int16_t>(rng);
    RunSvdf<int8_t>(rng);
  }
}

TEST_CASE("Svdf rejects bad arguments", "[kernels][svdf]") {
  kernels::SvdfParams p;
  p.input_size = 2;
  p.num_filters = 3;
  p.rank = 2;  // 3 filters not divisible by rank 2
  p.memory_size = 2;
  int8_t in[2] = {}, wf[6] = {}, out[3] = {};
  int16_t wt[6] = {}, st[6] = {};
  uint8_t scratch[64];
  CHECK(kernels::Svdf(p, in, wf, wt, nullptr, st, out, {scratch, sizeof(scratch)}) ==
        KernelStatus::kArgError);
  p.rank = 1;
  CHECK(kernels::Svdf(p, in, wf, wt, nullptr, st, out, {scratch, 4}) == KernelStatus::kArgError);
  CHECK(kernels::Svdf(p, in, wf, wt, nullptr, st, out, {scratch, sizeof(scratch)}) ==
        KernelStatus::kOk);
}

}  // namespace
}  // namespace mica
