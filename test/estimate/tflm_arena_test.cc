// TFLite Micro's tensor arena: mica's estimate against TFLite Micro's own figures — the host
// (64-bit) interpreter's report committed in test/data/tflm_arena/tflite_micro_host.csv (no
// tool needed), and the 32-bit arenas measured on Cortex-M in
// ../shared/reference/tflm-cmsis-nn/totals.csv (skipped with a warning without ../shared).
#include "mica/estimate/tflm_arena.h"

#include <algorithm>
#include <cmath>
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

// mica's estimate for the host reference build tflite-micro reports on: reference kernels,
// 64-bit pointers.
absl::StatusOr<TflmArena> HostArena(const Graph& g) {
  TflmArenaOptions o;
  o.pointer_bytes = 8;
  o.kernels = TflmKernels::kReference;
  return EstimateTflmArena(g, o);
}

// Index of the column `name` in a CSV header row; fails the test naming `file` when absent.
size_t Column(const std::vector<std::string>& head, const char* name, const char* file) {
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i] == name) return i;
  }
  FAIL(file << " has no column " << name);
  return 0;
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
    absl::StatusOr<TflmArena> a = HostArena(*g);
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
// outputs, then intermediates), its non-constant, non-variable inputs as graph inputs (each
// once), its outputs as graph outputs; written and read back, as the one-operator models
// tflite-micro was run on were made (test/corpus/tools/record_tflm_single_op.py cuts the same).
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
    if (t >= 0 && !tensors[t].is_constant() && !tensors[t].is_variable &&
        std::find(inputs.begin(), inputs.end(), t) == inputs.end()) {
      inputs.push_back(t);
    }
  }
  for (int32_t& t : op.outputs) outputs.push_back(t = take(t));
  for (int32_t& t : op.intermediates) t = take(t);
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
    absl::StatusOr<TflmArena> a = HostArena(*one);
    REQUIRE(a.ok());
    INFO(c[0] << " operator " << c[1] << " " << c[2] << ": mica head " << a->head_bytes
              << " tail " << a->tail_bytes << " vs tflite-micro " << c[5] << " / " << c[6]);
    CHECK(a->head_bytes == std::stoll(c[5]));
    CHECK(a->tail_bytes == std::stoll(c[6]));
  }
}

// Operators the corpus does not have (int8 one-operator models written by
// test/data/tflm_arena/record_tflite_micro_ops.py, which recorded tflite-micro's report).
TEST_CASE("TFLite Micro arena: host build equals tflite-micro on operators the corpus lacks",
          "[tflm_arena]") {
  const std::string dir = std::string(MICA_TEST_DATA_DIR) + "/tflm_arena/";
  auto rows = ReadCsv(dir + "tflite_micro_host_ops.csv");
  REQUIRE(rows.size() == 21);
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    REQUIRE(c.size() >= 7);
    absl::StatusOr<Graph> g = LoadModel(dir + "ops/" + c[0] + ".tflite");
    REQUIRE(g.ok());
    absl::StatusOr<TflmArena> a = HostArena(*g);
    REQUIRE(a.ok());
    INFO(c[0] << ": mica head " << a->head_bytes << " tail " << a->tail_bytes
              << " vs tflite-micro " << c[4] << " / " << c[5]);
    CHECK(a->head_bytes == std::stoll(c[4]));
    CHECK(a->tail_bytes == std::stoll(c[5]));
    CHECK(a->total_bytes == std::stoll(c[6]));
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

// The model corpus (test/corpus, and the shared models recorded beside it when ../shared is
// present): TFLite Micro's host interpreter (tflite-micro, reference kernels, 64-bit) reported
// its arena for every model it ran (test/corpus/reference/tflm/outputs.csv, recorded by
// test/corpus/tools/record_tflm.py); mica's host estimate against it, byte for byte.
TEST_CASE("TFLite Micro arena: host build against tflite-micro on the model corpus",
          "[tflm_arena]") {
  const std::string root = testing::SourceDir() + "/test/corpus/";
  auto rows = ReadCsv(root + "reference/tflm/outputs.csv");
  REQUIRE(rows.size() > 1);
  const std::vector<std::string>& head = rows[0];
  auto col = [&](const char* name) { return Column(head, name, "outputs.csv"); };
  const size_t c_source = col("source"), c_model = col("model"), c_path = col("model_path"),
               c_status = col("status"), c_total = col("arena_total_bytes"),
               c_head = col("arena_head_bytes");
  const std::string shared = testing::SharedDir();  // its ten models too, when present
  std::map<std::string, bool> seen;
  int exact = 0, head_exact = 0, n = 0, n_shared = 0;
  double worst = 0;
  std::vector<double> errs;
  std::string worst_model;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    if (c.size() <= c_head || c[c_status] != "ok") continue;
    std::string path;
    if (c[c_source] == "corpus") {
      path = root + c[c_path];
    } else if (c[c_source] == "shared" && !shared.empty()) {
      path = shared + "/" + c[c_path];
    } else {
      continue;
    }
    if (seen[c[c_source] + "/" + c[c_model]]) continue;
    seen[c[c_source] + "/" + c[c_model]] = true;
    n_shared += c[c_source] == "shared";
    absl::StatusOr<Graph> g = LoadModel(path);
    REQUIRE(g.ok());
    absl::StatusOr<TflmArena> a = HostArena(*g);
    REQUIRE(a.ok());
    const int64_t total = std::stoll(c[c_total]), want_head = std::stoll(c[c_head]);
    ++n;
    exact += a->total_bytes == total;
    head_exact += a->head_bytes == want_head;
    const double err = static_cast<double>(a->total_bytes) / static_cast<double>(total) - 1;
    errs.push_back(std::abs(err));
    if (std::abs(err) > std::abs(worst)) worst = err, worst_model = c[c_model];
    if (a->total_bytes != total) {
      std::printf("tflm host corpus %-36s mica %8lld (head %8lld) tflite-micro %8lld (head %8lld) %+.2f%%\n",
                  c[c_model].c_str(), static_cast<long long>(a->total_bytes),
                  static_cast<long long>(a->head_bytes), static_cast<long long>(total),
                  static_cast<long long>(want_head), 100 * err);
    }
  }
  std::sort(errs.begin(), errs.end());
  const double median = errs.empty() ? 0 : errs[errs.size() / 2];
  std::printf("tflm host corpus: %d models (%d of them from ../shared), arena exact on %d, head "
              "exact on %d, median |error| %.2f%%, worst %+.2f%% (%s)\n",
              n, n_shared, exact, head_exact, 100 * median, 100 * worst, worst_model.c_str());
  // Exact: head, tail and total byte for byte on every model the interpreter ran (85 corpus
  // models: CNNs, transpose convolutions with their int32 scratch, GRU/LSTM models,
  // per-channel fully-connected stacks; with ../shared its ten models too: SVDF, float
  // QUANTIZE/DEQUANTIZE wrappers, MAXIMUM, LSTM).
  CHECK(n - n_shared >= 85);
  if (!shared.empty()) CHECK(n_shared >= 10);
  CHECK(head_exact == n);
  CHECK(exact == n);
}

// Every distinct operator of the corpus alone (test/corpus/reference/tflm/single_op.csv,
// recorded by test/corpus/tools/record_tflm_single_op.py): mica's host head and tail against
// tflite-micro's, byte for byte. This covers the operators of the corpus models the interpreter
// refuses as a whole (BATCH_MATMUL, SQUARED_DIFFERENCE, RSQRT, int16 SUB of the transformers and
// ConvNeXts).
TEST_CASE("TFLite Micro arena: host build equals tflite-micro on every corpus operator alone",
          "[tflm_arena]") {
  const std::string root = testing::SourceDir() + "/test/corpus/";
  auto rows = ReadCsv(root + "reference/tflm/single_op.csv");
  REQUIRE(rows.size() > 1);
  const std::vector<std::string>& head = rows[0];
  auto col = [&](const char* name) { return Column(head, name, "single_op.csv"); };
  const size_t c_model = col("model"), c_op = col("op_index"), c_kind = col("op"),
               c_status = col("status"), c_head = col("head_bytes"), c_tail = col("tail_bytes");
  std::map<std::string, Graph> models;
  int n = 0, exact = 0;
  std::map<std::string, int> kinds;
  for (size_t r = 1; r < rows.size(); ++r) {
    const std::vector<std::string>& c = rows[r];
    if (c.size() <= c_tail || c[c_status] != "ok") continue;
    if (models.count(c[c_model]) == 0) {
      absl::StatusOr<Graph> g = LoadModel(root + "models/" + c[c_model] + ".tflite");
      REQUIRE(g.ok());
      models.emplace(c[c_model], std::move(*g));
    }
    absl::StatusOr<Graph> one = OneOperator(models.at(c[c_model]), std::stoul(c[c_op]));
    REQUIRE(one.ok());
    absl::StatusOr<TflmArena> a = HostArena(*one);
    REQUIRE(a.ok());
    INFO(c[c_model] << " operator " << c[c_op] << " " << c[c_kind] << ": mica head "
                    << a->head_bytes << " tail " << a->tail_bytes << " vs tflite-micro "
                    << c[c_head] << " / " << c[c_tail]);
    CHECK(a->head_bytes == std::stoll(c[c_head]));
    CHECK(a->tail_bytes == std::stoll(c[c_tail]));
    ++n;
    exact += a->head_bytes == std::stoll(c[c_head]) && a->tail_bytes == std::stoll(c[c_tail]);
    ++kinds[c[c_kind]];
  }
  std::printf("tflm host single operators: %d cases of %zu operator kinds, exact on %d\n", n,
              kinds.size(), exact);
  CHECK(n >= 1600);
  CHECK(kinds.size() >= 34);
}

}  // namespace
}  // namespace estimate
}  // namespace mica
