// Graph passes over generated operator chains (issue 16, section 5): validation, lifetimes,
// the arena planners and the lower bound, for 10,000 to 100,000 operators. Google Benchmark
// fits the growth (BigO); it must stay linear (the suite's own check is
// test/model/scale_test.cc).
//
//   build/release/bench/mica_models_bench --benchmark_filter=Chain
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "mica/model/analysis.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"
#include "mica/model/planner.h"

namespace {

// x -> RELU -> RELU -> ... (`n` operators), float32 [1, 4] tensors.
mica::Graph Chain(int n) {
  mica::Graph g;
  g.subgraphs.emplace_back();
  mica::Subgraph& sg = g.subgraphs.back();
  for (int i = 0; i <= n; ++i) {
    mica::Tensor t;
    t.name = "t" + std::to_string(i);
    t.dtype = mica::DType::kFloat32;
    t.shape = {1, 4};
    sg.tensors.push_back(t);
  }
  for (int i = 0; i < n; ++i) {
    mica::Operator op;
    op.kind = mica::OpKind::kRelu;
    op.inputs = {i};
    op.outputs = {i + 1};
    sg.ops.push_back(op);
  }
  sg.inputs = {0};
  sg.outputs = {n};
  return g;
}

void BM_ChainPasses(benchmark::State& state) {
  const mica::Graph g = Chain(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(mica::ValidateGraph(g));
    const std::vector<mica::TensorLifetime> lifetimes = mica::ComputeLifetimes(g.main());
    for (mica::Planner p : {mica::Planner::kFirstFit, mica::Planner::kTflmGreedy}) {
      benchmark::DoNotOptimize(mica::PlanArena(lifetimes, p, mica::ArenaOptions{}));
    }
    benchmark::DoNotOptimize(mica::PeakLiveBytes(lifetimes));
  }
  state.SetComplexityN(state.range(0));
}
BENCHMARK(BM_ChainPasses)
    ->RangeMultiplier(2)
    ->Range(12500, 100000)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace
