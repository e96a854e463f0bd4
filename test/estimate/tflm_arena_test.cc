// TFLite Micro's tensor arena: mica's estimate against TFLite Micro's own figures — the host
// (64-bit) interpreter's report committed in test/data/tflm_arena/tflite_micro_host.csv (no
// tool needed), and the 32-bit arenas measured on Cortex-M in
// ../shared/reference/tflm-cmsis-nn/totals.csv (skipped with a warning without ../shared).
#include "mica/estimate/tflm_arena.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

using kernels::Isa;

std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    rows.push_back(cells);
  }
  return rows;
}

std::string ModelsDir() {
  const std::string shared = testing::SharedDir();
  return shared.empty() ? "" : shared + "/models/mlperf-tiny/";
}

TEST_CASE("TFLite Micro arena: host build equals tflite-micro's report", "[tflm_arena]") {
  const std::string dir = ModelsDir();
  if (dir.empty()) {
    WARN("../shared absent: TFLite Micro host arena comparison skipped");
    return;
  }
  auto rows = ReadCsv(std::string(MICA_TEST_DATA_DIR) + "/tflm_arena/tflite_micro_host.csv");
  REQUIRE(rows.size() == 5);
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    REQUIRE(c.size() >= 11);
    absl::StatusOr<Graph> g = LoadModel(dir + c[0] + ".tflite");
    REQUIRE(g.ok());
    TflmArenaOptions o;
    o.pointer_bytes = 8;
    o.kernels = TflmKernels::kReference;
    absl::StatusOr<TflmArena> a = EstimateTflmArena(*g, o);
    REQUIRE(a.ok());
    INFO(c[0] << ": mica head " << a->head_bytes << " tail " << a->tail_bytes << " total "
              << a->total_bytes << " vs tflite-micro " << c[4] << " / " << c[5] << " / "
              << c[6]);
    // The head (the greedy plan) and the structural categories are exact.
    CHECK(a->head_bytes == std::stoll(c[4]));
    CHECK(a->tail[0].bytes == std::stoll(c[7]));  // eval tensors
    CHECK(a->tail[1].bytes == std::stoll(c[8]));  // node and registration
    // The tail and the whole arena: byte for byte.
    const double ratio = static_cast<double>(a->total_bytes) / std::stod(c[6]);
    std::printf("tflm host %-28s mica %7lld (head %6lld tail %5lld) tflite-micro %s  %+.2f%%\n", c[0].c_str(), static_cast<long long>(a->total_bytes), static_cast<long long>(a->head_bytes), static_cast<long long>(a->tail_bytes), c[6].c_str(), 100 * (ratio - 1));
    CHECK(a->tail_bytes == std::stoll(c[5]));
    CHECK(a->total_bytes == std::stoll(c[6]));
  }
}

// Returns a model of operator `index` of `g` alone: its tensors in first-use order (inputs, then
// outputs), its non-constant inputs as graph inputs, its outputs as graph outputs; written and
// read back, as the one-operator models tflite-micro was run on were made.
absl::StatusOr<Graph> OneOperator(const Graph& g, size_t index) {
  Graph out = g;
  Subgraph& s = out.main();
  const Subgraph& sg = g.main();
  Operator op = sg.ops[index];
  std::map<int32_t, int32_t> remap;
  std::vector<Tensor> tensors;
  auto take = [&](int32_t t) {
    if (t < 0) return t;
    auto it = remap.find(t);
    if (it != remap.end()) return it->second;
    tensors.push_back(sg.tensors[t]);
    return remap[t] = static_cast<int32_t>(tensors.size() - 1);
  };
  std::vector<int32_t> inputs, outputs;
  for (int32_t& t : op.inputs) {
    t = take(t);
    if (t >= 0 && !tensors[t].is_constant()) inputs.push_back(t);
  }
  for (int32_t& t : op.outputs) outputs.push_back(t = take(t));
  s.tensors = tensors;
  s.ops = {op};
  s.inputs = inputs;
  s.outputs = outputs;
  absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(out);
  if (!bytes.ok()) return bytes.status();
  return LoadTflite(std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)), "one-op");
}

TEST_CASE("TFLite Micro arena: host build equals tflite-micro on every one-operator model",
          "[tflm_arena]") {
  const std::string dir = ModelsDir();
  if (dir.empty()) {
    WARN("../shared absent: one-operator TFLite Micro host arena comparison skipped");
    return;
  }
  auto rows = ReadCsv(std::string(MICA_TEST_DATA_DIR) + "/tflm_arena/tflite_micro_host_single_op.csv");
  REQUIRE(rows.size() == 71);
  std::map<std::string, Graph> models;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    REQUIRE(c.size() >= 8);
    if (models.count(c[0]) == 0) {
      absl::StatusOr<Graph> g = LoadModel(dir + c[0] + ".tflite");
      REQUIRE(g.ok());
      models.emplace(c[0], std::move(*g));
    }
    absl::StatusOr<Graph> one = OneOperator(models.at(c[0]), std::stoul(c[1]));
    REQUIRE(one.ok());
    TflmArenaOptions o;
    o.pointer_bytes = 8;
    o.kernels = TflmKernels::kReference;
    absl::StatusOr<TflmArena> a = EstimateTflmArena(*one, o);
    REQUIRE(a.ok());
    INFO(c[0] << " operator " << c[1] << " " << c[2] << ": mica head " << a->head_bytes
              << " tail " << a->tail_bytes << " vs tflite-micro " << c[5] << " / " << c[6]);
    CHECK(a->head_bytes == std::stoll(c[5]));
    CHECK(a->tail_bytes == std::stoll(c[6]));
  }
}

TEST_CASE("TFLite Micro arena: 32-bit targets never below the measured arena", "[tflm_arena]") {
  const std::string dir = ModelsDir();
  if (dir.empty()) {
    WARN("../shared absent: measured TFLite Micro arena comparison skipped");
    return;
  }
  auto rows = ReadCsv(testing::SharedDir() + "/reference/tflm-cmsis-nn/totals.csv");
  REQUIRE(rows.size() > 1);
  int checked = 0;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    REQUIRE(c.size() >= 6);
    absl::StatusOr<Graph> g = LoadModel(dir + c[0] + ".tflite");
    REQUIRE(g.ok());
    TflmArenaOptions o;
    o.pointer_bytes = 4;
    const std::string& build = c[1];
    if (build == "ref-m55") {
      o.kernels = TflmKernels::kReference;
    } else {
      o.isa = build == "mve-m55" ? Isa::kMve : build == "dsp-m4" ? Isa::kDsp : Isa::kScalar;
    }
    absl::StatusOr<TflmArena> a = EstimateTflmArena(*g, o);
    REQUIRE(a.ok());
    const double measured = std::stod(c[5]);
    const double over = (a->total_bytes - measured) / measured;
    std::printf("tflm arena %-28s %-10s mica %7lld (head %6lld tail %5lld) measured %7.0f  %+.2f%%\n",
                c[0].c_str(), build.c_str(), static_cast<long long>(a->total_bytes),
                static_cast<long long>(a->head_bytes), static_cast<long long>(a->tail_bytes),
                measured, 100 * over);
    INFO(c[0] << " " << build << ": mica " << a->total_bytes << " measured " << measured);
    CHECK(a->total_bytes >= measured);
    // Reached: at most 56 bytes (0.35 %) above; the goal is 2 %.
    CHECK(over <= 0.005);
    ++checked;
  }
  CHECK(checked == 16);
}

TEST_CASE("TFLite Micro arena: options and runtime names", "[tflm_arena]") {
  Graph g;
  g.subgraphs.emplace_back();
  TflmArenaOptions o;
  o.pointer_bytes = 2;
  CHECK_FALSE(EstimateTflmArena(g, o).ok());
  CHECK_FALSE(EstimateTflmArena(Graph{}, TflmArenaOptions{}).ok());
  CHECK(ParseRuntime("tflm").value() == Runtime::kTflm);
  CHECK(ParseRuntime("executorch").value() == Runtime::kExecuTorch);
  CHECK(ParseRuntime("mica").value() == Runtime::kMica);
  CHECK_FALSE(ParseRuntime("onnx").ok());
  // An empty subgraph: no head, the tail is the bookkeeping alone.
  absl::StatusOr<TflmArena> a = EstimateTflmArena(g, TflmArenaOptions{});
  REQUIRE(a.ok());
  CHECK(a->head_bytes == 0);
  CHECK(a->total_bytes == a->tail_bytes);
  CHECK(a->peak_op == -1);
}

}  // namespace
}  // namespace estimate
}  // namespace mica
