// Ethos-U estimator speed: EstimateEthosU alone on each MLPerf Tiny model and accelerator
// (default Vela system config / memory mode per family). Vela takes ~1.5 s per model on this
// kind of machine; mica's estimator should take well under 50 ms.
//
//   MICA_SHARED_DIR=../shared build/bench/mica_estimate_bench --benchmark_filter=EthosU
#include <cstdlib>
#include <map>
#include <string>

#include "benchmark/benchmark.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"

namespace {

const char* const kModels[] = {"ad_autoencoder_int8", "ic_resnet8_int8", "kws_ds_cnn_int8",
                               "vww_mobilenet_v1_025_int8"};

const mica::Graph* Model(const std::string& name) {
  static std::map<std::string, mica::Graph> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return &it->second;
  const char* dir = std::getenv("MICA_SHARED_DIR");
  const std::string path =
      std::string(dir ? dir : "../shared") + "/models/mlperf-tiny/" + name + ".tflite";
  absl::StatusOr<mica::Graph> g = mica::LoadModel(path);
  if (!g.ok()) return nullptr;
  return &cache.emplace(name, *std::move(g)).first->second;
}

void BM_EthosUEstimate(benchmark::State& state) {
  const std::string model = kModels[state.range(0)];
  const auto family = static_cast<mica::estimate::EthosUFamily>(state.range(1));
  const int32_t macs = static_cast<int32_t>(state.range(2));
  const mica::Graph* g = Model(model);
  if (g == nullptr) {
    state.SkipWithError("model not found: set MICA_SHARED_DIR");
    return;
  }
  mica::estimate::TargetProfile p;
  p.kind = mica::estimate::TargetKind::kEthosU;
  absl::StatusOr<mica::estimate::EthosUConfig> c =
      mica::estimate::DefaultEthosUConfig(family, macs);
  if (!c.ok()) {
    state.SkipWithError("bad config");
    return;
  }
  p.ethos_u = *c;
  for (auto _ : state) {
    absl::StatusOr<mica::estimate::Estimate> e = mica::estimate::EstimateEthosU(*g, p);
    benchmark::DoNotOptimize(e);
  }
  state.SetLabel(model + " " + std::to_string(macs));
}

void Args(benchmark::internal::Benchmark* b) {
  for (int m = 0; m < 4; ++m) {
    b->Args({m, static_cast<int>(mica::estimate::EthosUFamily::kU55), 32});
    b->Args({m, static_cast<int>(mica::estimate::EthosUFamily::kU55), 256});
    b->Args({m, static_cast<int>(mica::estimate::EthosUFamily::kU65), 512});
    b->Args({m, static_cast<int>(mica::estimate::EthosUFamily::kU85), 256});
    b->Args({m, static_cast<int>(mica::estimate::EthosUFamily::kU85), 2048});
  }
}

BENCHMARK(BM_EthosUEstimate)->Apply(Args)->Unit(benchmark::kMillisecond);

}  // namespace
