// `mica inspect / check / run` on ExecuTorch programs (test/executorch/, exported by ExecuTorch
// 1.5.1 through its Cortex-M flow; see the manifest there for where each expected output came
// from).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
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
  // nn.Linear lowered portable (permute_copy + addmm / mm): FULLY_CONNECTED, ExecuTorch's bytes.
  CliResult l = RunMica({"run", Data("tiny_linear.bpte")});
  CAPTURE(l.out, l.err);
  CHECK(l.exit_code == 0);
  CHECK(Has(l.out, "output 0: float32 [2,4], 8 elements: identical bytes"));
  CHECK(Has(l.out, "Test_result: PASS"));
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

std::vector<float> Floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> v(bytes.size() / 4);
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

TEST_CASE("a .pt2 without ExecuTorch is refused, naming what to install", "[executorch]") {
  const std::string pt2 = Data("tiny_pt2.pt2");
  // No such Python.
  CliResult r = RunMica({"inspect", pt2}, {"MICA_EXECUTORCH_PYTHON=/nonexistent/python3"});
  CAPTURE(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err, "is a PyTorch ExportedProgram (.pt2)"));
  CHECK(Has(r.err, "'/nonexistent/python3' is not found"));
  CHECK(Has(r.err, "pip install executorch"));
  CHECK(Has(r.err, "MICA_EXECUTORCH_PYTHON"));
  CHECK(r.out.empty());
  // A Python that cannot import torch: a module on PYTHONPATH shadows any installed one.
  if (testing::RunBinary("/bin/sh", {"-c", "command -v python3"}).exit_code != 0) {
    WARN("skipped the import-failure case: python3 is not on PATH");
  } else {
    const std::string dir = testing::TempDir("executorch_no_torch");
    std::ofstream(dir + "/torch.py") << "raise ImportError('torch is not installed here')\n";
    for (const char* cmd : {"inspect", "check", "run"}) {
      std::vector<std::string> args = {cmd, pt2};
      if (std::string(cmd) == "check") args.insert(args.end(), {"-t", "cortex-m55"});
      if (std::string(cmd) == "run") {
        args.insert(args.end(), {"--input", Data("tiny_pt2.input.bin"), "--output-dir", dir});
      }
      CliResult n = RunMica(args, {"MICA_EXECUTORCH_PYTHON=python3", "PYTHONPATH=" + dir});
      CAPTURE(cmd, n.out, n.err);
      CHECK(n.exit_code == 1);
      CHECK(Has(n.err, "which 'python3' cannot import (ImportError: torch is not installed "
                       "here); install ExecuTorch (pip install executorch"));
      CHECK(testing::CountLines(n.err) == 1);
    }
  }
}

TEST_CASE("a .pt2 is converted through ExecuTorch's exporter when it is installed",
          "[executorch]") {
  // MICA_EXECUTORCH_PYTHON (else python3) must import executorch: optional, as Python is.
  const char* env = std::getenv("MICA_EXECUTORCH_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "python3";
  if (testing::RunBinary(python, {"-c", "import executorch.exir"}).exit_code != 0) {
    WARN("skipped: " << python << " cannot import executorch (set MICA_EXECUTORCH_PYTHON to a "
                                  "Python that has it)");
    return;
  }
  const std::vector<std::string> with = {"MICA_EXECUTORCH_PYTHON=" + python};
  CliResult i = RunMica({"inspect", Data("tiny_pt2.pt2")}, with);
  CAPTURE(i.out, i.err);
  REQUIRE(i.exit_code == 0);
  CHECK(Has(i.out, "(executorch, 1 subgraph)"));
  CHECK(Has(i.out, "converted: from a PyTorch ExportedProgram (.pt2) by executorch "));
  CHECK(Has(i.out, "CONV_2D"));
  CHECK(Has(i.out, "MAX_POOL_2D"));
  CHECK_FALSE(Has(i.out, "opaque operators"));
  // The converted program gives the outputs ExecuTorch's runtime gave (portable fp32 kernels;
  // the bundled-program tolerance).
  const std::string out_dir = testing::TempDir("executorch_pt2_run");
  CliResult r = RunMica({"run", Data("tiny_pt2.pt2"), "--input", Data("tiny_pt2.input.bin"),
                         "--output-dir", out_dir}, with);
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  // A file the exporter cannot read: its last error line, in one line.
  const std::string bad = testing::TempDir("executorch_bad_pt2") + "/cut.pt2";
  std::vector<uint8_t> cut = testing::ReadFile(Data("tiny_pt2.pt2"));
  cut.resize(cut.size() / 4);
  std::ofstream(bad, std::ios::binary).write(reinterpret_cast<const char*>(cut.data()),
                                             static_cast<std::streamsize>(cut.size()));
  CliResult b = RunMica({"inspect", bad}, with);
  CAPTURE(b.out, b.err);
  CHECK(b.exit_code == 1);
  CHECK(Has(b.err, "cut.pt2: ExecuTorch's exporter could not convert it to a .pte (exit 1): "));
  CHECK(testing::CountLines(b.err) == 1);
  const std::vector<float> got = Floats(testing::ReadFile(out_dir + "/output_0.bin"));
  const std::vector<float> want = Floats(testing::ReadFile(Data("tiny_pt2.expected.bin")));
  REQUIRE(got.size() == want.size());
  REQUIRE(!want.empty());
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(k);
    CHECK(std::abs(got[k] - want[k]) <= 1e-5f + 1e-5f * std::abs(want[k]));
  }
}

TEST_CASE("a program's methods: all listed, the first by default, --method picks",
          "[executorch]") {
  CliResult d = RunMica({"inspect", Data("tiny_methods.pte")});
  CAPTURE(d.out, d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(Has(d.out, "method:    'forward' (2 methods: 'forward', 'scale'; --method NAME shows "
                   "another)"));
  CHECK(Has(d.out, "inputs:    #0 'v"));
  CHECK(Has(d.out, " 2x3 float32\n"));
  CliResult s = RunMica({"inspect", Data("tiny_methods.pte"), "--method", "scale", "--json"});
  CAPTURE(s.out, s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(Has(s.out, "\"method\": \"scale\""));
  CHECK(Has(s.out, "\"methods\": ["));
  CHECK(Has(s.out, "\"forward\","));
  CHECK(Has(s.out, "\"name\": \"MUL\""));
  CliResult c = RunMica({"check", Data("tiny_methods.pte"), "--method", "scale", "-t",
                         "cortex-m55"});
  CAPTURE(c.out, c.err);
  CHECK(c.exit_code == 0);
  CHECK(Has(c.out, "MUL"));
  CHECK(Has(c.out, "ExecuTorch program: method 'scale' checked (2 methods: 'forward', 'scale'"));
  CliResult bad = RunMica({"inspect", Data("tiny_methods.pte"), "--method", "nope"});
  CHECK(bad.exit_code == 1);
  CHECK(Has(bad.err, "no method 'nope' (the program has 'forward', 'scale')"));
  CliResult other = RunMica({"inspect", Data("ds_cnn.bpte"), "--method", "scale"});
  CHECK(other.exit_code == 1);
  CHECK(Has(other.err, "no method 'scale' (the program has 'forward')"));
  // A bundled program with a suite per method: the first by default, --method picks.
  CliResult r = RunMica({"run", Data("tiny_methods.bpte")});
  CAPTURE(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "bundled test case 0 of method 'forward':"));
  CHECK(Has(r.out, "float32 [2,3], 6 elements: identical bytes"));
  CHECK(Has(r.out, "Test_result: PASS"));
  CliResult r2 = RunMica({"run", Data("tiny_methods.bpte"), "--method", "scale"});
  CAPTURE(r2.out, r2.err);
  CHECK(r2.exit_code == 0);
  CHECK(Has(r2.out, "bundled test case 0 of method 'scale':"));
  CHECK(Has(r2.out, "float32 [4], 4 elements: identical bytes"));
  CHECK(Has(r2.out, "Test_result: PASS"));
  // Plain (unbundled) input: --method on a model of another format is refused.
  CliResult t = RunMica({"inspect", testing::SourceDir() + "/test/executorch/README.md",
                         "--method", "forward"});
  CHECK(t.exit_code == 1);
  CHECK(Has(t.err, "--method picks a method of an ExecuTorch program"));
}

TEST_CASE("a delegated call stays opaque, reported with its backend and blob size",
          "[executorch]") {
  CliResult i = RunMica({"inspect", Data("tiny_xnnpack.pte")});
  CAPTURE(i.out, i.err);
  REQUIRE(i.exit_code == 0);
  CHECK(Has(i.out, "delegate:XnnpackBackend"));
  CHECK(Has(i.out, "delegated to backend 'XnnpackBackend' ("));
  CHECK(Has(i.out, "-byte blob, opaque to mica)"));
  CliResult c = RunMica({"check", Data("tiny_xnnpack.pte"), "-t", "cortex-m55"});
  CAPTURE(c.out, c.err);
  CHECK(c.exit_code == 0);
  CHECK(Has(c.out, "delegate:XnnpackBackend"));
  CHECK(Has(c.out, "are unknown to mica and not costed"));
  CHECK(Has(c.out, "Delegated calls (run by another ExecuTorch backend; not costed in the "
                   "figures above)\n  #0 delegate:XnnpackBackend: delegated to backend "
                   "'XnnpackBackend' ("));
}

TEST_CASE("mica check --json names the method and the delegated calls of an ExecuTorch program",
          "[executorch]") {
  CliResult d = RunMica({"check", Data("tiny_xnnpack.pte"), "-t", "cortex-m55", "--json"});
  CAPTURE(d.out, d.err);
  REQUIRE(d.exit_code == 0);
  CHECK(Has(d.out, "    \"executorch\": {\n      \"method\": \"forward\",\n"
                   "      \"methods\": [\"forward\"],\n      \"delegated_calls\": [\n"
                   "        {\n          \"index\": 0,\n"
                   "          \"backend\": \"XnnpackBackend\",\n"
                   "          \"reason\": \"delegated to backend 'XnnpackBackend' ("));
  CHECK_FALSE(Has(d.out, "Delegated calls"));  // the text section stays out of the JSON
  CliResult m = RunMica({"check", Data("tiny_methods.pte"), "-t", "cortex-m55", "--json",
                         "--method", "scale"});
  CAPTURE(m.out, m.err);
  REQUIRE(m.exit_code == 0);
  CHECK(Has(m.out, "\"executorch\": {\n      \"method\": \"scale\",\n"
                   "      \"methods\": [\"forward\", \"scale\"],\n"
                   "      \"delegated_calls\": []\n    }"));
  // Other formats keep their keys: no "executorch" object.
  CliResult t = RunMica({"check",
                         testing::SourceDir() + "/test/corpus/models/activation_relu6_64_i16.tflite",
                         "-t", "cortex-m55", "--json"});
  CAPTURE(t.out, t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(Has(t.out, "\"format\": \"TFLite\""));
  CHECK_FALSE(Has(t.out, "\"executorch\""));
}

}  // namespace
}  // namespace mica
