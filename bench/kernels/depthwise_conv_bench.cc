// BM_DepthwiseConv/<isa>/<shape>: every compiled variant at the MLPerf Tiny depthwise shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "conv_bench_shapes.h"
#include "mica/kernels/depthwise_conv.h"

namespace mica {
namespace bench {
namespace {

template <typename Variant>
void RunDepthwise(benchmark::State& state, const ConvShape& shape, Variant v) {
  kernels::DepthwiseConvParams p;
  p.input = {1, shape.in_h, shape.in_w, shape.in_c};
  p.filter = {1, shape.k_h, shape.k_w, shape.out_c};
  p.output = {1, shape.out_h, shape.out_w, shape.out_c};
  p.stride = {shape.stride, shape.stride};
  p.padding = {shape.pad_h, shape.pad_w};
  p.input_offset = 128;
  p.output_offset = -128;
  const auto in = RandomVector<int8_t>(p.input.elements(), -128, 127, 1);
  const auto w = RandomVector<int8_t>(p.filter.elements(), -127, 127, 2);
  const auto bias = RandomVector<int32_t>(p.output.c, -16384, 16384, 3);
  const std::vector<int32_t> mult(p.output.c, 0x5A000000), shift(p.output.c, -9);
  std::vector<int8_t> out(p.output.elements());
  std::vector<uint32_t> scratch(kernels::DepthwiseConvScratchBytes(p, v.isa) / 4 + 1);
  const kernels::Scratch s{scratch.data(), kernels::DepthwiseConvScratchBytes(p, v.isa)};
  for (auto _ : state) {
    if (v.fn(p, {mult.data(), shift.data()}, in.data(), w.data(), bias.data(), out.data(), s) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, int64_t{p.output.elements()} * p.filter.h * p.filter.w);
}

const bool kRegistered = [] {
  for (const auto& shape : DepthwiseShapes()) {
    for (const auto& v : kernels::DepthwiseConvVariants()) {
      benchmark::RegisterBenchmark(
          (std::string("BM_DepthwiseConv/") + v.name + "/" + shape.name).c_str(),
          [shape, v](benchmark::State& st) { RunDepthwise(st, shape, v); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mica
