// Ethos-U weight encoder speed: the encoded-size estimate of every weight tensor of a lowered
// model (EncodeWeightsEstimate per NPU op with weights: Vela's U55/U65 traversal and MLW
// stream search, or the U85 traversal and MLW streams), and of streams of one repeated value
// (ConstantWeightStreamBytes). On big models this is most of `mica check`'s time.
//
//   MICA_SHARED_DIR=../shared build/bench/mica_estimate_bench --benchmark_filter=Weights
//   (the corpus models come from MICA_SOURCE_DIR, default: the working directory)
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "benchmark/benchmark.h"
#include "ethos_u/model.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"

namespace {

using mica::estimate::EthosUFamily;

struct Case {
  const char* path;  // under MICA_SHARED_DIR ("shared/...") or MICA_SOURCE_DIR
  EthosUFamily family;
  int32_t macs;
};

const Case kCases[] = {
    {"shared/models/mlperf-tiny/vww_mobilenet_v1_025_int8.tflite", EthosUFamily::kU55, 256},
    {"shared/models/mlperf-tiny/ic_resnet8_int8.tflite", EthosUFamily::kU65, 512},
    {"test/corpus/models/mobilenet_v3_large_a050_96.tflite", EthosUFamily::kU55, 256},
    {"test/corpus/models/mobilenet_v3_large_a050_96.tflite", EthosUFamily::kU85, 256},
    {"test/corpus/models/large_weights_64.tflite", EthosUFamily::kU65, 512},
    {"test/corpus/models/efficientnet_v2_w050_d050_96.tflite", EthosUFamily::kU55, 128},
};

std::string PathOf(const std::string& p) {
  if (p.rfind("shared/", 0) == 0) {
    const char* dir = std::getenv("MICA_SHARED_DIR");
    return std::string(dir ? dir : "../shared") + p.substr(6);
  }
  const char* dir = std::getenv("MICA_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/" + p;
}

const mica::Graph* Model(const std::string& path) {
  static std::map<std::string, mica::Graph> cache;
  auto it = cache.find(path);
  if (it != cache.end()) return &it->second;
  absl::StatusOr<mica::Graph> g = mica::LoadModel(path);
  if (!g.ok()) return nullptr;
  return &cache.emplace(path, *std::move(g)).first->second;
}

// A case's model lowered for its NPU, or nothing after skipping the benchmark with the reason.
struct LoweredCase {
  const mica::Graph* graph;
  mica::estimate::ethosu::Arch arch;
  mica::estimate::ethosu::Lowered lw;
};
std::optional<LoweredCase> LowerCase(const Case& c, const std::string& path,
                                     benchmark::State& state) {
  const mica::Graph* g = Model(path);
  if (g == nullptr) {
    state.SkipWithError(("model not found: " + path).c_str());
    return std::nullopt;
  }
  absl::StatusOr<mica::estimate::EthosUConfig> config =
      mica::estimate::DefaultEthosUConfig(c.family, c.macs);
  absl::StatusOr<mica::estimate::ethosu::Arch> arch =
      config.ok() ? mica::estimate::ethosu::MakeArch(c.family, c.macs)
                  : absl::StatusOr<mica::estimate::ethosu::Arch>(config.status());
  if (!arch.ok()) {
    state.SkipWithError("bad config");
    return std::nullopt;
  }
  absl::StatusOr<mica::estimate::ethosu::Lowered> lw =
      mica::estimate::ethosu::Lower(*g, *config, *arch);
  if (!lw.ok()) {
    state.SkipWithError("lowering failed");
    return std::nullopt;
  }
  return LoweredCase{g, *std::move(arch), *std::move(lw)};
}

void BM_WeightsEncodeModel(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  const std::string path = PathOf(c.path);
  const std::optional<LoweredCase> m = LowerCase(c, path, state);
  if (!m) return;
  int64_t weights = 0, encoded = 0;
  for (auto _ : state) {
    encoded = 0;
    weights = 0;
    for (const mica::estimate::ethosu::NpuOp& op : m->lw.ops) {
      if (op.weight_tensor < 0) continue;
      encoded +=
          mica::estimate::ethosu::EncodeWeightsEstimate(m->graph->main(), op, m->arch).encoded_bytes;
      weights += m->graph->main().tensors[op.weight_tensor].num_elements();
    }
    benchmark::DoNotOptimize(encoded);
  }
  state.SetItemsProcessed(state.iterations() * weights);
  state.SetLabel(path.substr(path.rfind('/') + 1) + " " +
                 (c.family == EthosUFamily::kU85   ? "U85"
                  : c.family == EthosUFamily::kU65 ? "U65"
                                                   : "U55") +
                 "-" + std::to_string(c.macs) + ", " + std::to_string(encoded) + " B encoded");
}
BENCHMARK(BM_WeightsEncodeModel)->DenseRange(0, 5)->Unit(benchmark::kMillisecond);

// The encodings EncodeWeights asks for (EncodeWeightsEstimates) on one thread and on up to
// two; wall-clock time.
void BM_WeightsEncodeModelThreads(benchmark::State& state) {
  const Case& c = kCases[state.range(0)];
  const std::string path = PathOf(c.path);
  const std::optional<LoweredCase> m = LowerCase(c, path, state);
  if (!m) return;
  const int threads = static_cast<int>(state.range(1));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        mica::estimate::ethosu::EncodeWeightsEstimates(m->graph->main(), m->lw.ops, m->arch, threads));
  }
  state.SetLabel(path.substr(path.rfind('/') + 1) + ", " + std::to_string(threads) + " thread(s)");
}
BENCHMARK(BM_WeightsEncodeModelThreads)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_WeightsConstantStream(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mica::estimate::ethosu::ConstantWeightStreamBytes(n));
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_WeightsConstantStream)->Arg(256)->Arg(1 << 16)->Arg(1 << 20);

}  // namespace
