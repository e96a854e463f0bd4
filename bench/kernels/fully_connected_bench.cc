// BM_FullyConnected/<isa>/fc_640to128 (Autoencoder (AD) dense 1, the anchor shape) and the
// 16x8 variant, plus BM_BatchMatMul/<isa>/<shape> and BM_TransposeConv/<isa>/<shape> at small
// representative shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "conv_bench_shapes.h"
#include "mica/kernels/batch_matmul.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/transpose_conv.h"

namespace mica {
namespace bench {
namespace {

template <typename Variant>
void RunFc(benchmark::State& state, int32_t in_depth, int32_t out_depth, Variant v) {
  kernels::FullyConnectedParams p;
  p.input_depth = in_depth;
  p.output_depth = out_depth;
  p.input_offset = 7;
  p.output_offset = -128;
  const auto in = RandomVector<int8_t>(in_depth, -128, 127, 1);
  const auto w = RandomVector<int8_t>(size_t(in_depth) * out_depth, -127, 127, 2);
  const auto bias = RandomVector<int32_t>(out_depth, -16384, 16384, 3);
  const int32_t mult = 0x5A000000, shift = -12;
  std::vector<int8_t> out(out_depth);
  for (auto _ : state) {
    if (v.fn(p, {&mult, &shift}, in.data(), w.data(), bias.data(), out.data(), {}) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, int64_t{in_depth} * out_depth);
}

template <typename Variant>
void RunFc16x8(benchmark::State& state, int32_t in_depth, int32_t out_depth, Variant v) {
  kernels::FullyConnectedParams p;
  p.input_depth = in_depth;
  p.output_depth = out_depth;
  p.activation = {-32768, 32767};
  const auto in = RandomVector<int16_t>(in_depth, -32768, 32767, 1);
  const auto w = RandomVector<int8_t>(size_t(in_depth) * out_depth, -127, 127, 2);
  const auto bias = RandomVector<int64_t>(out_depth, -100000, 100000, 3);
  const int32_t mult = 0x5A000000, shift = -12;
  std::vector<int16_t> out(out_depth);
  for (auto _ : state) {
    if (v.fn(p, {&mult, &shift}, in.data(), w.data(), bias.data(), out.data(), {}) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, int64_t{in_depth} * out_depth);
}

template <typename Variant>
void RunBatchMatMul(benchmark::State& state, int32_t m, int32_t k, int32_t n, bool adj_y,
                    Variant v) {
  kernels::BatchMatMulParams p;
  p.m = m;
  p.k = k;
  p.n = n;
  p.adj_y = adj_y;
  p.lhs_offset = 3;
  p.requant = {0x5A000000, -10};
  const auto lhs = RandomVector<int8_t>(size_t(m) * k, -128, 127, 1);
  const auto rhs = RandomVector<int8_t>(size_t(k) * n, -128, 127, 2);
  std::vector<int8_t> out(size_t(m) * n);
  std::vector<uint32_t> scratch(kernels::BatchMatMulScratchBytes(p, v.isa) / 4 + 1);
  const kernels::Scratch s{scratch.data(), kernels::BatchMatMulScratchBytes(p, v.isa)};
  for (auto _ : state) {
    if (v.fn(p, lhs.data(), rhs.data(), out.data(), s) != kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, int64_t{m} * k * n);
}

template <typename Variant>
void RunTransposeConv(benchmark::State& state, Variant v) {
  // 2x upsampling decoder layer: 8x8x32 -> 16x16x16, 3x3 kernel, stride 2, SAME.
  kernels::TransposeConvParams p;
  p.input = {1, 8, 8, 32};
  p.filter = {16, 3, 3, 32};
  p.output = {1, 16, 16, 16};
  p.stride = {2, 2};
  p.padding = {0, 0};
  p.input_offset = 5;
  const auto in = RandomVector<int8_t>(p.input.elements(), -128, 127, 1);
  const auto w = RandomVector<int8_t>(p.filter.elements(), -127, 127, 2);
  const std::vector<int32_t> mult(16, 0x5A000000), shift(16, -10);
  std::vector<int8_t> out(p.output.elements());
  for (auto _ : state) {
    if (v.fn(p, {mult.data(), shift.data()}, in.data(), w.data(), nullptr, out.data(), {}) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  // Each input element meets every filter tap once (some land outside the output).
  SetMacs(state, int64_t{p.input.elements()} * p.filter.n * p.filter.h * p.filter.w);
}

const bool kRegistered = [] {
  for (const auto& v : kernels::FullyConnectedVariants()) {
    benchmark::RegisterBenchmark(
        (std::string("BM_FullyConnected/") + v.name + "/fc_640to128").c_str(),
        [v](benchmark::State& st) { RunFc(st, 640, 128, v); });
  }
  for (const auto& v : kernels::FullyConnected16x8Variants()) {
    benchmark::RegisterBenchmark(
        (std::string("BM_FullyConnected16x8/") + v.name + "/fc_640to128").c_str(),
        [v](benchmark::State& st) { RunFc16x8(st, 640, 128, v); });
  }
  for (const auto& v : kernels::BatchMatMulVariants()) {
    benchmark::RegisterBenchmark(
        (std::string("BM_BatchMatMul/") + v.name + "/49x64x64_adj_y").c_str(),
        [v](benchmark::State& st) { RunBatchMatMul(st, 49, 64, 64, true, v); });
    benchmark::RegisterBenchmark(
        (std::string("BM_BatchMatMul/") + v.name + "/49x64x64").c_str(),
        [v](benchmark::State& st) { RunBatchMatMul(st, 49, 64, 64, false, v); });
  }
  for (const auto& v : kernels::TransposeConvVariants()) {
    benchmark::RegisterBenchmark(
        (std::string("BM_TransposeConv/") + v.name + "/8x8x32_k3s2_to16x16x16").c_str(),
        [v](benchmark::State& st) { RunTransposeConv(st, v); });
  }
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mica
