// Whole-model inference on the host: the four MLPerf Tiny models (int8 per kernel variant, and
// float), one Run() per iteration (inputs from the golden seed1 directory for int8 models,
// a fixed smooth signal for float). Models come from $MICA_SHARED_DIR/models (default
// ../shared); missing models are reported as skipped.
//
//   build/release/bench/mica_models_bench --benchmark_filter=kws
// Names: BM_Model/<model>/<variant|float>.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "mica/runtime/executor.h"

namespace {

namespace fs = std::filesystem;
using mica::runtime::Executor;
using mica::runtime::HostTensor;

std::string SharedDir() {
  const char* env = std::getenv("MICA_SHARED_DIR");
  for (const std::string& d : {std::string(env ? env : ""), std::string("../shared"),
                               std::string("../../shared"), std::string("/work/shared")}) {
    if (!d.empty() && fs::is_directory(fs::path(d) / "models")) return d;
  }
  return "";
}

std::vector<HostTensor> Inputs(const mica::Subgraph& sg, const std::string& golden) {
  std::vector<HostTensor> in;
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    const mica::Tensor& t = sg.tensors[sg.inputs[i]];
    HostTensor h{t.dtype, t.shape, std::vector<uint8_t>(t.num_bytes())};
    std::ifstream f(golden + "/input_" + std::to_string(i) + ".bin", std::ios::binary);
    if (f && t.dtype != mica::DType::kFloat32) {
      h.bytes.assign(std::istreambuf_iterator<char>(f), {});
    } else if (t.dtype == mica::DType::kFloat32) {
      for (int64_t j = 0; j < t.num_elements(); ++j) {
        const float v = static_cast<float>(0.5 * std::sin(0.01 * static_cast<double>(j)));
        std::memcpy(&h.bytes[4 * j], &v, 4);
      }
    }
    in.push_back(std::move(h));
  }
  return in;
}

void BM_Model(benchmark::State& state, std::string model, std::string golden,
              std::optional<mica::kernels::Isa> isa) {
  auto graph = mica::LoadModel(model);
  if (!graph.ok()) {
    state.SkipWithError(std::string(graph.status().message()).c_str());
    return;
  }
  mica::runtime::ExecutorOptions opts;
  opts.isa = isa;
  auto exec = Executor::Create(*graph, opts);
  if (!exec.ok()) {
    state.SkipWithError(std::string(exec.status().message()).c_str());
    return;
  }
  const std::vector<HostTensor> inputs = Inputs(graph->main(), golden);
  for (auto _ : state) {
    auto out = (*exec)->Run(inputs);
    if (!out.ok()) {
      state.SkipWithError(std::string(out.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(out->data());
  }
  state.counters["arena_bytes"] = static_cast<double>((*exec)->arena_bytes());
  state.counters["ops"] = static_cast<double>(graph->main().ops.size());
}

const int kRegistered = [] {
  const std::string shared = SharedDir();
  const char* models[] = {"kws_ds_cnn", "vww_mobilenet_v1_025", "ic_resnet8", "ad_autoencoder"};
  for (const char* m : models) {
    const std::string base = shared + "/models/mlperf-tiny/" + m;
    const std::string golden = shared + "/golden/mlperf-tiny/" + m + "_int8/seed1";
    for (mica::kernels::Isa isa : mica::runtime::HostIsas()) {
      benchmark::RegisterBenchmark(
          (std::string("BM_Model/") + m + "/" + mica::kernels::IsaName(isa)).c_str(), BM_Model,
          base + "_int8.tflite", golden, std::optional<mica::kernels::Isa>(isa))
          ->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark((std::string("BM_Model/") + m + "/float").c_str(), BM_Model,
                                 base + "_float.tflite", golden,
                                 std::optional<mica::kernels::Isa>())
        ->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

}  // namespace
