// `mica inspect`: table and JSON output on zoo and real models, and its failure modes.
#include <fstream>
#include <string>

#include "cli/cli_util.h"
#include "mica/model/analysis.h"
#include "mica/model/load.h"
#include "mica/model/zoo.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::RunMica;

std::string WriteZooModel(const std::string& name, const std::string& dir) {
  auto g = zoo::Build(name, 1);
  REQUIRE(g.ok());
  auto bytes = WriteTflite(*g);
  REQUIRE(bytes.ok());
  const std::string path = dir + "/" + name + ".tflite";
  REQUIRE(WriteFileBytes(path, *bytes).ok());
  return path;
}

// Returns the text after `key` in the "totals" object of an inspect JSON document.
std::string TotalsField(const std::string& json, const std::string& key) {
  const size_t totals = json.find("\"totals\": {");
  if (totals == std::string::npos) return "";
  const size_t k = json.find("\"" + key + "\": ", totals);
  if (k == std::string::npos) return "";
  const size_t start = k + key.size() + 4;
  return json.substr(start, json.find_first_of(",\n}", start) - start);
}

TEST_CASE("inspect --json reports MACs, weights and arena peak of a zoo model") {
  const std::string dir = testing::TempDir("inspect-json");
  const std::string path = WriteZooModel("kws_ds_cnn", dir);
  auto g = LoadModel(path);
  REQUIRE(g.ok());
  const GraphCost cost = AnalyzeCost(g->main());
  auto plan = PlanArena(g->main());
  REQUIRE(plan.ok());

  const testing::CliResult r = RunMica({"inspect", path, "--json"});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out.rfind("{\n  \"schema\": \"mica.inspect/1\",\n  \"model\": ", 0) == 0);
  CHECK(r.out.find("\"format\": \"tflite\"") != std::string::npos);
  CHECK(TotalsField(r.out, "operators") == "13");
  CHECK(TotalsField(r.out, "macs") == "2656768");
  CHECK(TotalsField(r.out, "macs") == std::to_string(cost.total_macs));
  CHECK(TotalsField(r.out, "weight_bytes") == std::to_string(cost.unique_constant_bytes));
  CHECK(TotalsField(r.out, "arena_peak_bytes") == std::to_string(plan->peak_bytes));
  CHECK(TotalsField(r.out, "arena_alignment") == "16");
  CHECK(TotalsField(r.out, "arena_lower_bound_bytes") ==
        std::to_string(PeakLiveBytes(ComputeLifetimes(g->main()))));
  CHECK(TotalsField(r.out, "arena_lower_bound_bytes") == "64000");  // two 1x25x5x64 float32
  // First operator: CONV_2D reading the 1x49x10x1 input.
  CHECK(r.out.find("\"kind\": \"CONV_2D\"") < r.out.find("\"kind\": \"DEPTHWISE_CONV_2D\""));
  CHECK(r.out.find("\"shape\": [1, 49, 10, 1]") != std::string::npos);
  CHECK(r.out.find("\"quantization\": {\"kind\": \"none\"}") != std::string::npos);
  // Output is stable: a second run prints the same bytes.
  CHECK(RunMica({"inspect", path, "--json"}).out == r.out);
}

TEST_CASE("inspect prints an aligned table with totals") {
  const std::string dir = testing::TempDir("inspect-table");
  const std::string path = WriteZooModel("ic_resnet8", dir);
  const testing::CliResult r = RunMica({"inspect", path});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("12,501,632 MACs") != std::string::npos);
  CHECK(r.out.find("ADD") != std::string::npos);
  CHECK(r.out.find("arena:") != std::string::npos);
  // Every table line between the header rule and the totals has the same MACs column end.
  const size_t header = r.out.find("#  operator");
  REQUIRE(header != std::string::npos);
  const size_t macs_end = r.out.find("MACs", header) + 4;
  const size_t line_start = r.out.rfind('\n', header) + 1;
  const size_t col = macs_end - line_start;
  size_t pos = r.out.find('\n', header) + 1;
  int rows = 0;
  while (pos < r.out.size() && r.out[pos] != '\n') {
    const size_t eol = r.out.find('\n', pos);
    const std::string line = r.out.substr(pos, eol - pos);
    if (line.find_first_not_of('-') != std::string::npos) {
      CAPTURE(line);
      REQUIRE(line.size() > col);
      CHECK(line[col - 1] != ' ');  // right-aligned numbers end in the header's last column
      CHECK(line[col] == ' ');
      ++rows;
    }
    pos = eol + 1;
  }
  CHECK(rows == 16 + 1);  // 16 operators + totals row
}

TEST_CASE("inspect reports per-channel quantization of a real int8 model") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("MICA_SHARED_DIR absent: skipped inspect on the real MLPerf Tiny model");
    return;
  }
  const std::string path = shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite";
  const testing::CliResult r = RunMica({"inspect", path, "--json"});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("{\"kind\": \"per-channel\", \"axis\": 0, \"count\": 64}") != std::string::npos);
  CHECK(r.out.find("{\"kind\": \"per-channel\", \"axis\": 3, \"count\": 64}") != std::string::npos);
  CHECK(TotalsField(r.out, "macs") == "2656768");
  const testing::CliResult t = RunMica({"inspect", path});
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("per-channel(3,64)") != std::string::npos);
  CHECK(t.out.find("int8") != std::string::npos);
}

TEST_CASE("inspect names each opaque operator's reason, in text and JSON") {
  const std::string dir = testing::TempDir("inspect-opaque");
  Graph g;
  g.subgraphs.emplace_back();
  Subgraph& sg = g.subgraphs.back();
  for (const char* name : {"x", "y", "z"}) {
    Tensor t;
    t.name = name;
    t.dtype = DType::kFloat32;
    t.shape = {1, 4};
    sg.tensors.push_back(t);
  }
  Operator custom;
  custom.kind = OpKind::kOpaque;
  custom.opaque_name = "MyPostProcess";
  custom.inputs = {0};
  custom.outputs = {1};
  sg.ops.push_back(custom);
  Operator relu;
  relu.kind = OpKind::kRelu;
  relu.inputs = {1};
  relu.outputs = {2};
  sg.ops.push_back(relu);
  sg.inputs = {0};
  sg.outputs = {2};
  auto bytes = WriteTflite(g);
  REQUIRE(bytes.ok());
  const std::string path = dir + "/opaque.tflite";
  REQUIRE(WriteFileBytes(path, *bytes).ok());

  const testing::CliResult t = RunMica({"inspect", path});
  INFO(t.out << t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("opaque operators") != std::string::npos);
  CHECK(t.out.find("#0 MyPostProcess: custom operator 'MyPostProcess'") != std::string::npos);
  const testing::CliResult j = RunMica({"inspect", path, "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"opaque_reason\": \"custom operator 'MyPostProcess'") != std::string::npos);
  // Only opaque operators carry the key.
  CHECK(j.out.find("opaque_reason") == j.out.rfind("opaque_reason"));
}

TEST_CASE("inspect fails cleanly on bad files and bad usage") {
  const std::string dir = testing::TempDir("inspect-bad");
  SECTION("missing file") {
    const testing::CliResult r = RunMica({"inspect", dir + "/nope.tflite"});
    CHECK(r.exit_code == 1);
    CHECK(testing::CountLines(r.err) == 1);
    CHECK(r.err.rfind("mica: ", 0) == 0);
    CHECK(r.out.empty());
  }
  SECTION("garbage and truncated files") {
    const std::string garbage = dir + "/garbage.tflite";
    std::ofstream(garbage) << "this is not a model at all, not even close";
    testing::CliResult r = RunMica({"inspect", garbage, "--json"});
    CHECK(r.exit_code == 1);
    CHECK(testing::CountLines(r.err) == 1);
    CHECK(r.out.empty());
    auto g = zoo::Build("ad_autoencoder", 1);
    REQUIRE(g.ok());
    auto bytes = WriteTflite(*g);
    REQUIRE(bytes.ok());
    const std::string truncated = dir + "/truncated.tflite";
    {
      std::ofstream f(truncated, std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes->data()),
              static_cast<std::streamsize>(bytes->size() / 3));
    }
    r = RunMica({"inspect", truncated});
    CHECK(r.exit_code == 1);
    CHECK(testing::CountLines(r.err) == 1);
  }
  SECTION("usage errors") {
    CHECK(RunMica({"inspect"}).exit_code == 2);
    CHECK(RunMica({"inspect", "a.tflite", "b.tflite"}).exit_code == 2);
    const testing::CliResult r = RunMica({"inspect", "--frobnicate", "x.tflite"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--frobnicate") != std::string::npos);
    CHECK(RunMica({"inspect", "--help"}).exit_code == 0);
  }
}

}  // namespace
}  // namespace mica
