// Whole-model goldens: every model under ../shared/golden must reproduce its outputs and (for
// seed1) every per-operator dump byte for byte, with every kernel variant this host runs.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace runtime {
namespace {

namespace fs = std::filesystem;

// SplitMix64 input generator of ../shared/golden/README.md.
std::vector<uint8_t> GenerateInput(uint64_t seed, const Tensor& t) {
  uint64_t x = seed;
  auto next = [&x]() {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const int64_t n = t.num_elements();
  std::vector<uint8_t> out(t.num_bytes());
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t r = next();
    switch (t.dtype) {
      case DType::kInt8:
      case DType::kUInt8: out[j] = static_cast<uint8_t>(r >> 56); break;
      case DType::kInt16: {
        const uint16_t v = static_cast<uint16_t>(r >> 48);
        std::memcpy(&out[2 * j], &v, 2);
        break;
      }
      case DType::kInt32: {
        const uint32_t v = static_cast<uint32_t>(r >> 32);
        std::memcpy(&out[4 * j], &v, 4);
        break;
      }
      case DType::kFloat32: {
        const double lo = -1.0, hi = 1.0;
        const float v = static_cast<float>(lo + static_cast<double>(r >> 11) * 0x1p-53 * (hi - lo));
        std::memcpy(&out[4 * j], &v, 4);
        break;
      }
      default: FAIL("unsupported input dtype"); break;
    }
  }
  return out;
}

std::optional<std::vector<uint8_t>> TryRead(const fs::path& p) {
  if (!fs::exists(p)) return std::nullopt;
  return mica::testing::ReadFile(p.string());
}

std::string DescribeDiff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
                         const Tensor& t) {
  std::ostringstream os;
  if (got.size() != want.size()) {
    os << "size " << got.size() << " vs " << want.size();
    return os.str();
  }
  const size_t es = std::max<size_t>(1, t.num_bytes() / std::max<int64_t>(1, t.num_elements()));
  size_t diffs = 0, first = SIZE_MAX;
  int64_t max_abs = 0;
  for (size_t i = 0; i < got.size() / es; ++i) {
    if (std::memcmp(&got[i * es], &want[i * es], es) == 0) continue;
    ++diffs;
    if (first == SIZE_MAX) first = i;
    int64_t g = 0, w = 0;
    if (t.dtype == DType::kInt8) {
      g = static_cast<int8_t>(got[i]);
      w = static_cast<int8_t>(want[i]);
    } else if (t.dtype == DType::kInt16) {
      int16_t a, b;
      std::memcpy(&a, &got[2 * i], 2);
      std::memcpy(&b, &want[2 * i], 2);
      g = a;
      w = b;
    } else if (t.dtype == DType::kInt32) {
      int32_t a, b;
      std::memcpy(&a, &got[4 * i], 4);
      std::memcpy(&b, &want[4 * i], 4);
      g = a;
      w = b;
    }
    max_abs = std::max<int64_t>(max_abs, g > w ? g - w : w - g);
  }
  os << diffs << " of " << got.size() / es << " elements differ, first at index " << first
     << ", max abs diff " << max_abs << " (" << DTypeName(t.dtype) << ")";
  return os.str();
}

struct GoldenModel {
  std::string group, name;
};

// Every model directory under golden/.
std::vector<GoldenModel> ListGoldens(const std::string& shared) {
  std::vector<GoldenModel> out;
  for (const char* group : {"mlperf-tiny", "more"}) {
    const fs::path dir = fs::path(shared) / "golden" / group;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.is_directory()) out.push_back({group, e.path().filename().string()});
    }
  }
  std::sort(out.begin(), out.end(), [](const GoldenModel& a, const GoldenModel& b) {
    return a.group + a.name < b.group + b.name;
  });
  return out;
}

void CheckGolden(const std::string& group, const std::string& name) {
  const std::string shared = mica::testing::SharedDir();
  if (shared.empty()) {
    WARN("MICA_SHARED_DIR absent: skipped golden " << group << "/" << name);
    return;
  }
  const fs::path gdir = fs::path(shared) / "golden" / group / name;
  const fs::path model = fs::path(shared) / "models" / group / (name + ".tflite");
  REQUIRE(fs::is_directory(gdir));
  INFO("model " << model.string());
  absl::StatusOr<Graph> graph = LoadModel(model.string());
  if (!graph.ok()) FAIL(std::string(graph.status().message()));
  const Subgraph& sg = graph->main();

  std::vector<fs::path> seeds;
  for (const auto& e : fs::directory_iterator(gdir)) {
    if (e.is_directory() && e.path().filename().string().rfind("seed", 0) == 0) {
      seeds.push_back(e.path());
    }
  }
  std::sort(seeds.begin(), seeds.end());
  REQUIRE(!seeds.empty());

  for (kernels::Isa isa : HostIsas()) {
    CAPTURE(kernels::IsaName(isa));
    ExecutorOptions opts;
    opts.isa = isa;
    auto exec = Executor::Create(*graph, opts);
    if (!exec.ok()) FAIL(std::string(exec.status().message()));
    for (const fs::path& seed_dir : seeds) {
      const std::string seed_name = seed_dir.filename().string();
      CAPTURE(seed_name);
      const uint64_t seed = std::stoull(seed_name.substr(4));
      std::vector<HostTensor> inputs;
      for (size_t i = 0; i < sg.inputs.size(); ++i) {
        const Tensor& t = sg.tensors[sg.inputs[i]];
        HostTensor h;
        h.dtype = t.dtype;
        h.shape = t.shape;
        h.bytes = mica::testing::ReadFile((seed_dir / ("input_" + std::to_string(i) + ".bin")).string());
        // The README's generator reproduces the stored inputs.
        CHECK(GenerateInput(seed + i, t) == h.bytes);
        inputs.push_back(std::move(h));
      }
      std::map<int32_t, std::vector<uint8_t>> dumps;
      (*exec)->SetTensorObserver([&](int32_t k, const TensorView& v) {
        dumps[k].assign(v.data, v.data + v.bytes);
      });
      auto outputs = (*exec)->Run(inputs);
      if (!outputs.ok()) FAIL(std::string(outputs.status().message()));

      // Per-operator dumps, in execution order: report the first diverging operator.
      size_t checked = 0;
      for (size_t op = 0; op < sg.ops.size(); ++op) {
        for (int32_t k : sg.ops[op].outputs) {
          auto want = TryRead(seed_dir / ("t" + std::to_string(k) + ".bin"));
          if (!want) continue;
          ++checked;
          const std::vector<uint8_t>& got = dumps[k];
          if (got != *want) {
            FAIL("first diverging operator #" << op << " (" << sg.ops[op].name() << ") tensor "
                                              << k << " '" << sg.tensors[k].name << "': "
                                              << DescribeDiff(got, *want, sg.tensors[k]));
          }
        }
      }
      if (seed_name == "seed1") CHECK(checked > 0);
      for (size_t i = 0; i < sg.outputs.size(); ++i) {
        const auto want =
            mica::testing::ReadFile((seed_dir / ("output_" + std::to_string(i) + ".bin")).string());
        INFO("output " << i);
        const Tensor& t = sg.tensors[sg.outputs[i]];
        if ((*outputs)[i].bytes != want) {
          FAIL("output " << i << ": " << DescribeDiff((*outputs)[i].bytes, want, t));
        }
      }
    }
  }
}

TEST_CASE("golden: every golden directory has a test case", "[golden]") {
  const std::string shared = mica::testing::SharedDir();
  if (shared.empty()) {
    WARN("MICA_SHARED_DIR absent: skipped golden discovery");
    return;
  }
  const std::vector<std::string> known = {
      "mlperf-tiny/ad_autoencoder_int8", "mlperf-tiny/ic_resnet8_int8",
      "mlperf-tiny/kws_ds_cnn_int8",     "mlperf-tiny/vww_mobilenet_v1_025_int8",
      "more/face_landmarks_192",         "more/force_int_quant",
      "more/keyword_scrambled",          "more/micro_speech_lstm",
      "more/seanet_conv0",               "more/simple_add_model"};
  for (const GoldenModel& g : ListGoldens(shared)) {
    const std::string id = g.group + "/" + g.name;
    if (std::find(known.begin(), known.end(), id) == known.end()) {
      // A golden added later still gets checked here.
      INFO("new golden " << id);
      CheckGolden(g.group, g.name);
    }
  }
}

#define MICA_GOLDEN_TEST(group, name)                                      \
  TEST_CASE("golden: " group "/" name, "[golden]") { CheckGolden(group, name); }

MICA_GOLDEN_TEST("mlperf-tiny", "ad_autoencoder_int8")
MICA_GOLDEN_TEST("mlperf-tiny", "ic_resnet8_int8")
MICA_GOLDEN_TEST("mlperf-tiny", "kws_ds_cnn_int8")
MICA_GOLDEN_TEST("mlperf-tiny", "vww_mobilenet_v1_025_int8")
MICA_GOLDEN_TEST("more", "face_landmarks_192")
MICA_GOLDEN_TEST("more", "force_int_quant")
MICA_GOLDEN_TEST("more", "keyword_scrambled")
MICA_GOLDEN_TEST("more", "micro_speech_lstm")
MICA_GOLDEN_TEST("more", "seanet_conv0")
MICA_GOLDEN_TEST("more", "simple_add_model")

}  // namespace
}  // namespace runtime
}  // namespace mica
