// BM_Conv/<isa>/<shape> and BM_Conv16x8/<isa>/<shape>: every compiled variant at the MLPerf
// Tiny conv shapes (conv_bench_shapes.h).
#include <cstdint>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "conv_bench_shapes.h"
#include "mica/kernels/conv.h"

namespace mica {
namespace bench {
namespace {

using kernels::ConvParams;

ConvParams ToParams(const ConvShape& s) {
  ConvParams p;
  p.input = {1, s.in_h, s.in_w, s.in_c};
  p.filter = {s.out_c, s.k_h, s.k_w, s.in_c};
  p.output = {1, s.out_h, s.out_w, s.out_c};
  p.stride = {s.stride, s.stride};
  p.padding = {s.pad_h, s.pad_w};
  return p;
}

int64_t Macs(const ConvParams& p) {
  return int64_t{p.output.elements()} * p.filter.h * p.filter.w * p.filter.c;
}

template <typename Variant>
void RunConv(benchmark::State& state, const ConvShape& shape, Variant v) {
  ConvParams p = ToParams(shape);
  p.input_offset = 128;
  p.output_offset = -128;
  const auto in = RandomVector<int8_t>(p.input.elements(), -128, 127, 1);
  const auto w = RandomVector<int8_t>(p.filter.elements(), -127, 127, 2);
  const auto bias = RandomVector<int32_t>(p.output.c, -16384, 16384, 3);
  const std::vector<int32_t> mult(p.output.c, 0x5A000000), shift(p.output.c, -10);
  std::vector<int8_t> out(p.output.elements());
  std::vector<uint32_t> scratch(kernels::ConvScratchBytes(p, v.isa) / 4 + 1);
  const kernels::Scratch s{scratch.data(), kernels::ConvScratchBytes(p, v.isa)};
  for (auto _ : state) {
    if (v.fn(p, {mult.data(), shift.data()}, in.data(), w.data(), bias.data(), out.data(), s) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, Macs(p));
}

template <typename Variant>
void RunConv16x8(benchmark::State& state, const ConvShape& shape, Variant v) {
  ConvParams p = ToParams(shape);
  p.activation = {-32768, 32767};
  const auto in = RandomVector<int16_t>(p.input.elements(), -32768, 32767, 1);
  const auto w = RandomVector<int8_t>(p.filter.elements(), -127, 127, 2);
  const auto bias = RandomVector<int64_t>(p.output.c, -100000, 100000, 3);
  const std::vector<int32_t> mult(p.output.c, 0x5A000000), shift(p.output.c, -10);
  std::vector<int16_t> out(p.output.elements());
  std::vector<uint32_t> scratch(kernels::Conv16x8ScratchBytes(p, v.isa) / 4 + 1);
  const kernels::Scratch s{scratch.data(), kernels::Conv16x8ScratchBytes(p, v.isa)};
  for (auto _ : state) {
    if (v.fn(p, {mult.data(), shift.data()}, in.data(), w.data(), bias.data(), out.data(), s) !=
        kernels::KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetMacs(state, Macs(p));
}

const bool kRegistered = [] {
  for (const auto& shape : ConvShapes()) {
    for (const auto& v : kernels::ConvVariants()) {
      benchmark::RegisterBenchmark(
          (std::string("BM_Conv/") + v.name + "/" + shape.name).c_str(),
          [shape, v](benchmark::State& st) { RunConv(st, shape, v); });
    }
    for (const auto& v : kernels::Conv16x8Variants()) {
      benchmark::RegisterBenchmark(
          (std::string("BM_Conv16x8/") + v.name + "/" + shape.name).c_str(),
          [shape, v](benchmark::State& st) { RunConv16x8(st, shape, v); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mica
