// Benchmarks of the non-conv kernels at MLPerf Tiny shapes (the CMSIS-NN anchor cases where
// one exists), every compiled variant: BM_Add/<isa>/add_16x32x32, BM_Mul/..., BM_Softmax/...,
// BM_AvgPool/..., BM_MaxPool/..., plus logistic / tanh, mean, transpose, SVDF and LSTM.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "mica/kernels/activations.h"
#include "mica/kernels/data_movement.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/pooling.h"
#include "mica/kernels/reduce.h"
#include "mica/kernels/softmax.h"
#include "mica/kernels/svdf.h"

namespace mica {
namespace bench {
namespace {

using kernels::KernelStatus;
using kernels::Shape;

template <typename T>
std::vector<T> Random(int64_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(d(gen));
  return v;
}

void Finish(benchmark::State& state, int64_t elements) {
  state.SetItemsProcessed(state.iterations() * elements);
}

template <typename Fn>
void Loop(benchmark::State& state, Fn fn) {
  for (auto _ : state) {
    if (fn() != KernelStatus::kOk) {
      state.SkipWithError("kernel refused its arguments");
      break;
    }
  }
}

// ADD / MUL at the ResNet8 residual shape (anchor add_16x32x32).
void RegisterBinary() {
  static const Shape s{4, {1, 32, 32, 16}};
  static const auto a = Random<int8_t>(s.elements(), -128, 127, 1);
  static const auto b = Random<int8_t>(s.elements(), -128, 127, 2);
  static std::vector<int8_t> out(static_cast<size_t>(s.elements()));
  kernels::AddParams ap;
  ap.input1_offset = ap.input2_offset = 128;
  ap.output_offset = -128;
  ap.input1 = {1073741824, 0};
  ap.input2 = {1717986918, -1};
  ap.output = {1789569707, -19};
  kernels::MulParams mp;
  mp.input1_offset = mp.input2_offset = 128;
  mp.output_offset = -128;
  mp.output = {1431655765, -8};
  for (const auto& v : kernels::AddVariants()) {
    benchmark::RegisterBenchmark((std::string("BM_Add/") + v.name + "/add_16x32x32").c_str(),
                                 [v, ap](benchmark::State& st) {
                                   Loop(st, [&] { return v.fn(ap, s, a.data(), s, b.data(), s, out.data()); });
                                   Finish(st, s.elements());
                                 });
  }
  for (const auto& v : kernels::MulVariants()) {
    benchmark::RegisterBenchmark((std::string("BM_Mul/") + v.name + "/mul_16x32x32").c_str(),
                                 [v, mp](benchmark::State& st) {
                                   Loop(st, [&] { return v.fn(mp, s, a.data(), s, b.data(), s, out.data()); });
                                   Finish(st, s.elements());
                                 });
  }
  // Broadcast: per-channel vector against the tensor.
  static const Shape c{1, {16}};
  benchmark::RegisterBenchmark("BM_Add/scalar/add_broadcast_16x32x32+16", [ap](benchmark::State& st) {
    Loop(st, [&] { return kernels::Add(ap, s, a.data(), c, b.data(), s, out.data()); });
    Finish(st, s.elements());
  });
}

void RegisterSoftmaxPool() {
  struct SoftmaxCase {
    const char* name;
    int32_t depth, mult, shift, diff_min;
  };
  static const SoftmaxCase cases[] = {{"softmax_1x10", 10, 1073741824, 23, -248},
                                      {"softmax_1x12", 12, 1288490189, 24, -124}};
  for (const SoftmaxCase& c : cases) {
    for (const auto& v : kernels::SoftmaxVariants()) {
      benchmark::RegisterBenchmark((std::string("BM_Softmax/") + v.name + "/" + c.name).c_str(),
                                   [v, &c](benchmark::State& st) {
                                     const auto in = Random<int8_t>(c.depth, -128, 127, 3);
                                     std::vector<int8_t> out(static_cast<size_t>(c.depth));
                                     const kernels::SoftmaxParams p{c.mult, c.shift, c.diff_min};
                                     Loop(st, [&] { return v.fn(p, 1, c.depth, in.data(), out.data()); });
                                     Finish(st, c.depth);
                                   });
    }
  }
  struct PoolCase {
    const char* name;
    bool avg;
    kernels::PoolParams p;
  };
  static std::vector<PoolCase> pools;
  kernels::PoolParams p;
  p.input = {1, 25, 5, 64};
  p.output = {1, 1, 1, 64};
  p.filter_h = 25;
  p.filter_w = 5;
  p.stride = {25, 5};
  pools.push_back({"avgpool25x5_64", true, p});
  p.input = {1, 8, 8, 64};
  p.filter_h = p.filter_w = 8;
  p.stride = {8, 8};
  pools.push_back({"avgpool8x8_64", true, p});
  p.input = {1, 32, 32, 16};
  p.output = {1, 16, 16, 16};
  p.filter_h = p.filter_w = 2;
  p.stride = {2, 2};
  pools.push_back({"maxpool2x2s2_16_32x32", false, p});
  for (const PoolCase& c : pools) {
    for (const auto& v : c.avg ? kernels::AvgPoolVariants() : kernels::MaxPoolVariants()) {
      benchmark::RegisterBenchmark(
          (std::string(c.avg ? "BM_AvgPool/" : "BM_MaxPool/") + v.name + "/" + c.name).c_str(),
          [v, &c](benchmark::State& st) {
            const auto in = Random<int8_t>(c.p.input.elements(), -128, 127, 4);
            std::vector<int8_t> out(static_cast<size_t>(c.p.output.elements()));
            Loop(st, [&] { return v.fn(c.p, in.data(), out.data()); });
            Finish(st, c.p.input.elements());
          });
    }
  }
}

void RegisterOthers() {
  benchmark::RegisterBenchmark("BM_Logistic/scalar/4096", [](benchmark::State& st) {
    const auto in = Random<int8_t>(4096, -128, 127, 5);
    std::vector<int8_t> out(4096);
    const kernels::LogisticParams p{-10, 1015, 1616117760, -1};
    Loop(st, [&] { return kernels::Logistic(p, 4096, in.data(), out.data()); });
    Finish(st, 4096);
  });
  benchmark::RegisterBenchmark("BM_Tanh16/scalar/4096", [](benchmark::State& st) {
    const auto in = Random<int16_t>(4096, -32768, 32767, 6);
    std::vector<int16_t> out(4096);
    const kernels::Tanh16Params p{0, 0};
    Loop(st, [&] { return kernels::Tanh16(p, 4096, in.data(), out.data()); });
    Finish(st, 4096);
  });
  benchmark::RegisterBenchmark("BM_Mean/scalar/hw_of_1x8x8x64", [](benchmark::State& st) {
    const Shape s{4, {1, 8, 8, 64}};
    const auto in = Random<int8_t>(s.elements(), -128, 127, 7);
    std::vector<int8_t> out(64);
    kernels::ReduceAxes axes;
    axes.count = 2;
    axes.axis[0] = 1;
    axes.axis[1] = 2;
    const kernels::MeanParams p{-128, -128, {1 << 30, 1}};
    Loop(st, [&] { return kernels::Mean(p, s, axes, in.data(), out.data()); });
    Finish(st, s.elements());
  });
  benchmark::RegisterBenchmark("BM_Transpose/scalar/1x32x32x16_nchw", [](benchmark::State& st) {
    const Shape s{4, {1, 32, 32, 16}};
    const int32_t perm[4] = {0, 3, 1, 2};
    const auto in = Random<int8_t>(s.elements(), -128, 127, 8);
    std::vector<int8_t> out(in.size());
    Loop(st, [&] { return kernels::Transpose(s, perm, in.data(), out.data(), 1); });
    Finish(st, s.elements());
  });
  // SVDF at keyword_scrambled-like size; LSTM at micro_speech_lstm-like size.
  benchmark::RegisterBenchmark("BM_Svdf/scalar/in40_f128_m8_r1", [](benchmark::State& st) {
    kernels::SvdfParams p;
    p.input_size = 40;
    p.num_filters = 128;
    p.rank = 1;
    p.memory_size = 8;
    p.effective_scale_1 = {1 << 30, -4};
    p.effective_scale_2 = {1 << 30, -12};
    const auto in = Random<int8_t>(40, -128, 127, 9);
    const auto wf = Random<int8_t>(128 * 40, -127, 127, 10);
    const auto wt = Random<int16_t>(128 * 8, -2000, 2000, 11);
    std::vector<int16_t> state(128 * 8);
    std::vector<int8_t> out(128);
    std::vector<uint32_t> scratch(kernels::SvdfScratchBytes(p, kernels::Isa::kScalar) / 4);
    Loop(st, [&] {
      return kernels::Svdf(p, in.data(), wf.data(), wt.data(), nullptr, state.data(), out.data(),
                           {scratch.data(), scratch.size() * 4});
    });
    Finish(st, 128 * 40 + 128 * 8);
  });
  benchmark::RegisterBenchmark("BM_Lstm/scalar/t49_in40_s32", [](benchmark::State& st) {
    kernels::LstmParams p;
    p.time_steps = 49;
    p.input_size = 40;
    p.state_size = 32;
    std::vector<int8_t> w[4], r[4];
    kernels::LstmGateParams* g[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate, &p.output_gate};
    for (int k = 0; k < 4; ++k) {
      w[k] = Random<int8_t>(32 * 40, -127, 127, 20 + k);
      r[k] = Random<int8_t>(32 * 32, -127, 127, 30 + k);
      g[k]->input_weights = w[k].data();
      g[k]->recurrent_weights = r[k].data();
      g[k]->input_fc = {1 << 30, -6};
      g[k]->recurrent_fc = {1 << 30, -6};
    }
    p.forget_cell_mul = {1 << 30, -14};
    p.input_cell_mul = {1 << 30, -18};
    p.hidden_mul = {1 << 30, -22};
    const auto in = Random<int8_t>(49 * 40, -128, 127, 12);
    std::vector<int8_t> h(32), out(49 * 32);
    std::vector<int16_t> c(32);
    std::vector<uint16_t> scratch(kernels::LstmScratchBytes(p, kernels::Isa::kScalar) / 2);
    Loop(st, [&] {
      return kernels::Lstm(p, in.data(), h.data(), c.data(), out.data(),
                           {scratch.data(), scratch.size() * 2});
    });
    Finish(st, 49 * 4 * 32 * (40 + 32));
  });
}

const bool kRegistered = [] {
  RegisterBinary();
  RegisterSoftmaxPool();
  RegisterOthers();
  return true;
}();

}  // namespace
}  // namespace bench
}  // namespace mica
