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
  c.input_size = rng.Chance(0.2) ? rng.Uniform(21, 70) : rng.Uniform(1, 20);
  c.rank = rng.Uniform(1, 3);
  c.num_filters = c.rank * rng.Uniform(1, 8);
  c.memory = rng.Uniform(1, 10);
  const bool s8 = sizeof(StateT) == 1;
  c.input_zp = rng.ZeroPoint8();
  // TFLite's int16 state has zero point 0; the bodies take any in the state's range.
  c.state_zp = s8 ? rng.Uniform(-20, 20) : (rng.Chance(0.3) ? rng.Uniform(-300, 300) : 0);
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
  CAPTURE(c.batch, c.input_size, c.num_filters, c.rank, c.memory, c.input_zp, c.state_zp);
  // The public entry and every compiled body, each on its own copy of the state.
  const auto run = [&](auto fn, const std::vector<int8_t>& in, std::vector<StateT>& st,
                       std::vector<int8_t>& out) {
    return fn(p, in.data(), wf.data(), wt.data(), has_bias ? bias.data() : nullptr, st.data(),
              out.data(), kernels::Scratch{scratch.data(), scratch.size()});
  };
  const auto variants = [] {
    if constexpr (sizeof(StateT) == 2) {
      return kernels::SvdfVariants();
    } else {
      return kernels::SvdfInt8StateVariants();
    }
  }();
  std::vector<std::vector<StateT>> states(variants.size(), state);
  for (int step = 0; step < 4; ++step) {
    CAPTURE(step);
    const auto in = rng.Fill<int8_t>(static_cast<size_t>(c.batch) * c.input_size, -128, 127);
    std::vector<int8_t> out(static_cast<size_t>(c.batch) * (c.num_filters / c.rank));
    KernelStatus st;
    if constexpr (sizeof(StateT) == 2) {
      st = run(&kernels::Svdf, in, state, out);
    } else {
      st = run(&kernels::SvdfInt8State, in, state, out);
    }
    REQUIRE(st == KernelStatus::kOk);
    const auto want = testing::RefSvdfStep<StateT>(c, in, wf, wt, has_bias ? &bias : nullptr, ref_state);
    REQUIRE(out == want);
    REQUIRE(state == ref_state);
    for (size_t v = 0; v < variants.size(); ++v) {
      CAPTURE(variants[v].name);
      std::vector<int8_t> got(out.size(), 0x55);
      REQUIRE(run(variants[v].fn, in, states[v], got) == KernelStatus::kOk);
      REQUIRE(got == want);
      REQUIRE(states[v] == ref_state);
    }
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
  // Zero points outside their tensors' ranges.
  for (const auto& v : kernels::SvdfVariants()) {
    CAPTURE(v.name);
    kernels::SvdfParams bad = p;
    bad.input_zero_point = 128;
    CHECK(v.fn(bad, in, wf, wt, nullptr, st, out, {scratch, sizeof(scratch)}) ==
          KernelStatus::kArgError);
    bad = p;
    bad.output_zero_point = -129;
    CHECK(v.fn(bad, in, wf, wt, nullptr, st, out, {scratch, sizeof(scratch)}) ==
          KernelStatus::kArgError);
    bad = p;
    bad.state_zero_point = 32768;
    CHECK(v.fn(bad, in, wf, wt, nullptr, st, out, {scratch, sizeof(scratch)}) ==
          KernelStatus::kArgError);
  }
  int8_t st8[6] = {}, wt8[6] = {};
  p.state_zero_point = 128;
  CHECK(kernels::SvdfInt8State(p, in, wf, wt8, nullptr, st8, out, {scratch, sizeof(scratch)}) ==
        KernelStatus::kArgError);
}

}  // namespace
}  // namespace mica
