// `mica inspect / check / run` on ExecuTorch programs (test/executorch/, exported by ExecuTorch
// 1.5.1 through its Cortex-M flow; see the manifest there for where each expected output came
// from).
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::RunMica;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string Data(const std::string& name) {
  return testing::SourceDir() + "/test/executorch/" + name;
}

TEST_CASE("mica run on a bundled program checks the bundled outputs", "[executorch]") {
  // The portable float program: bytes equal to ExecuTorch's own runtime.
  CliResult f = RunMica({"run", Data("tiny_float.bpte")});
  CAPTURE(f.out, f.err);
  REQUIRE(f.exit_code == 0);
  CHECK(Has(f.out, "output 0: float32 [1,5], 5 elements: identical bytes"));
  CHECK(Has(f.out, "Test_result: PASS"));
  // Cortex-M int8 programs: bytes equal to ExecuTorch's Python implementation of the operators.
  for (const char* m : {"ds_cnn.bpte", "mobilenet_v1_025.bpte", "deep_autoencoder.bpte"}) {
    CliResult r = RunMica({"run", Data(m)});
    CAPTURE(m, r.out, r.err);
    CHECK(r.exit_code == 0);
    CHECK(Has(r.out, "identical bytes"));
    CHECK(Has(r.out, "Test_result: PASS"));
  }
}

TEST_CASE("mica run on a bundled program reports a mismatch per tensor", "[executorch]") {
  // resnet8's global average pool meets .5 ties: ExecuTorch's Python reference rounds the
  // float mean half to even after removing the zero point, mica (as TFLite Micro and CMSIS-NN's
  // arm_avgpool_s8) rounds the raw sum half away from zero; one int8 step then spreads through
  // the classifier.
  const std::string out_dir = testing::TempDir("executorch_run");
  CliResult r = RunMica({"run", Data("resnet8.bpte"), "--output-dir", out_dir});
  CAPTURE(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(Has(r.out, "output 0: float32 [1,10], 10 elements: "));
  CHECK(Has(r.out, "differ (first at index 0, largest difference "));
  CHECK(Has(r.out, "beyond tolerance"));
  CHECK(Has(r.out, "Test_result: FAIL"));
  CHECK(testing::ReadFile(out_dir + "/output_0.bin").size() == 40);
}

TEST_CASE("mica inspect and check read .pte and .bpte", "[executorch]") {
  CliResult i = RunMica({"inspect", Data("ds_cnn.pte")});
  CAPTURE(i.out, i.err);
  REQUIRE(i.exit_code == 0);
  CHECK(Has(i.out, "(executorch, 1 subgraph)"));
  CHECK(Has(i.out, "DEPTHWISE_CONV_2D"));
  CHECK_FALSE(Has(i.out, "OPAQUE"));
  for (const char* target : {"cortex-m55", "ethos-u55-256", "ethos-u65-512"}) {
    CliResult c = RunMica({"check", Data("mobilenet_v1_025.bpte"), "--target-profile", target});
    CAPTURE(target, c.out, c.err);
    CHECK(c.exit_code == 0);
    CHECK(Has(c.out, "ExecuTorch"));
  }
  // The program's input stays on the host: QUANTIZE of the float input runs on the CPU.
  CliResult u = RunMica({"check", Data("ds_cnn.pte"), "--target-profile", "ethos-u55-256"});
  REQUIRE(u.exit_code == 0);
  CHECK(Has(u.out, "ethos-u55-256: 15 of 17 operators on the NPU, 2 on the CPU"));
}

TEST_CASE("mica run on a .pte takes --input like any model", "[executorch]") {
  const std::string out_dir = testing::TempDir("executorch_pte_run");
  CliResult r = RunMica({"run", Data("ds_cnn.pte"), "--input", Data("ds_cnn.input.bin"),
                         "--output-dir", out_dir});
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(testing::ReadFile(out_dir + "/output_0.bin") ==
        testing::ReadFile(Data("ds_cnn.expected.bin")));
}

TEST_CASE("mica check --runtime executorch reserves the program's memory plan", "[executorch]") {
  // The planned buffers as ExecuTorch's own deserializer reads them (manifest.json,
  // planned_buffers): what the application hands the method.
  const std::pair<const char*, const char*> cases[] = {
      {"tiny_conv.pte", "\"arena_bytes\": 5488,"},
      {"ds_cnn.pte", "\"arena_bytes\": 20464,"},
      {"tiny_float.pte", "\"arena_bytes\": 6144,"},
  };
  for (const auto& [model, arena] : cases) {
    CliResult r = RunMica({"check", Data(model), "-t", "cortex-m55", "--runtime", "executorch",
                           "--json"});
    CAPTURE(model, r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(Has(r.out, "\"runtime\": \"executorch\""));
    CHECK(Has(r.out, arena));
    CHECK(Has(r.out, "ExecuTorch memory plan of method 'forward'"));
  }
  CliResult t = RunMica({"check", Data("tiny_conv.pte"), "-t", "cortex-m55", "--runtime",
                         "executorch"});
  CHECK(t.exit_code == 0);
  CHECK(Has(t.out, "runtime executorch"));
}

}  // namespace
}  // namespace mica
