// Benchmarks of mica's estimator on the MLPerf Tiny models (from MICA_SHARED_DIR, default
// ../shared): the estimator alone per (model, profile), and load + estimate for the README's
// two profiles (what `mica check` does in-process, minus printing).
//
//   build/bench/mica_estimate_bench --benchmark_filter=BM_Estimate/kws
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/load.h"

namespace mica {
namespace estimate {
namespace {

std::string SharedModels() {
  const char* env = std::getenv("MICA_SHARED_DIR");
  std::filesystem::path dir = env ? env : "../shared";
  dir /= "models/mlperf-tiny";
  return std::filesystem::is_directory(dir) ? dir.string() : std::string();
}

const char* const kModels[] = {"kws_ds_cnn_int8", "ic_resnet8_int8", "vww_mobilenet_v1_025_int8",
                               "ad_autoencoder_int8"};

void BM_Estimate(benchmark::State& state, Graph graph, TargetProfile profile) {
  for (auto _ : state) {
    absl::StatusOr<Estimate> e = EstimateModel(graph, profile);
    if (!e.ok()) {
      state.SkipWithError(std::string(e.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(e->total_cycles);
  }
}

void BM_LoadAndEstimate(benchmark::State& state, std::string path) {
  for (auto _ : state) {
    absl::StatusOr<Graph> g = LoadModel(path);
    if (!g.ok()) {
      state.SkipWithError(std::string(g.status().message()).c_str());
      return;
    }
    for (const char* name : {"ethos-u55-256", "cortex-m55"}) {
      absl::StatusOr<TargetProfile> p = FindTargetProfile(name);
      absl::StatusOr<Estimate> e = EstimateModel(*g, *p);
      benchmark::DoNotOptimize(e.ok());
    }
  }
}

int Register() {
  std::string dir = SharedModels();
  if (dir.empty()) return 0;  // no reference models: nothing to measure
  for (const char* model : kModels) {
    std::string path = dir + "/" + model + ".tflite";
    absl::StatusOr<Graph> g = LoadModel(path);
    if (!g.ok()) continue;
    for (const TargetProfile& p : BuiltinTargets()) {
      benchmark::RegisterBenchmark(("BM_Estimate/" + std::string(model) + "/" + p.name).c_str(),
                                   BM_Estimate, *g, p)
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RegisterBenchmark(("BM_LoadAndEstimate/" + std::string(model)).c_str(),
                                 BM_LoadAndEstimate, path)
        ->Unit(benchmark::kMicrosecond);
  }
  return 0;
}

const int kRegistered = Register();

}  // namespace
}  // namespace estimate
}  // namespace mica
