// `mica check` and `mica targets` as a black box: the README command, JSON, --output, the vela
// backend with a fake `vela`, and one-line errors with the documented exit codes.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::CountLines;
using testing::RunMica;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string KwsModel() {
  std::string shared = testing::SharedDir();
  return shared.empty() ? std::string() : shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("mica check: the README command prints every section for both profiles", "[check]") {
  const std::string model = KwsModel();
  if (model.empty()) {
    WARN("shared models absent: skipped mica check on kws_ds_cnn_int8");
    return;
  }
  CliResult r = RunMica({"check", model, "--target-profile", "ethos-u55-256", "--target-profile",
                         "cortex-m55", "--compatibility", "--performance"});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  for (const char* section :
       {"Target profiles", "Operators (placement", "Performance (cycles",
        "Top operators by cycles: ethos-u55-256", "Top operators by cycles: cortex-m55",
        "Advice for ethos-u55-256", "Advice for cortex-m55", "total cycles", "NPU cycles",
        "SRAM access cycles", "off-chip flash access cycles", "SRAM used", "inferences/s",
        "Ethos_U55_High_End_Embedded", "Shared_Sram", "arm_convolve_1x1_s8_fast/mve",
        "13 of 13 operators on the NPU", "bottleneck"}) {
    CAPTURE(section);
    CHECK(Has(r.out, section));
  }

  // Without --compatibility/--performance: compatibility only.
  CliResult c = RunMica({"check", model, "--target-profile", "ethos-u55-64"});
  REQUIRE(c.exit_code == 0);
  CHECK(Has(c.out, "Operators (placement"));
  CHECK_FALSE(Has(c.out, "Performance (cycles"));
}

TEST_CASE("mica check --json is versioned and carries the documented fields", "[check]") {
  const std::string model = KwsModel();
  if (model.empty()) {
    WARN("shared models absent: skipped mica check --json");
    return;
  }
  std::vector<std::string> args = {"check", model, "--target-profile", "ethos-u65-256",
                                    "--target-profile", "cortex-m4", "--performance", "--json"};
  CliResult r = RunMica(args);
  REQUIRE(r.exit_code == 0);
  for (const char* key :
       {"\"schema\": \"mica.check/1\"", "\"profiles\"", "\"performance\"", "\"total_cycles\"",
        "\"npu_cycles\"", "\"sram_access_cycles\"", "\"dram_access_cycles\"",
        "\"on_chip_flash_access_cycles\"", "\"off_chip_flash_access_cycles\"",
        "\"memory_used\"", "\"sram_bytes\"", "\"dram_bytes\"", "\"off_chip_flash_bytes\"",
        "\"operators\"", "\"placement\": \"npu\"", "\"bottleneck\"", "\"advice\"",
        "\"inferences_per_second\"", "\"kernel\": \"arm_convolve_1x1_s8_fast/dsp\""}) {
    CAPTURE(key);
    CHECK(Has(r.out, key));
  }
  int depth = 0;
  for (char ch : r.out) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
  CHECK(depth == 0);

  // --output writes the same document to a file, nothing to stdout.
  std::string dir = testing::TempDir("check_json");
  std::string out = dir + "/report.json";
  args.push_back("--output");
  args.push_back(out);
  CliResult w = RunMica(args);
  REQUIRE(w.exit_code == 0);
  CHECK(w.out.empty());
  CHECK(Slurp(out) == r.out);
}

TEST_CASE("mica check --target-config and --system-config/--memory-mode", "[check]") {
  const std::string model = KwsModel();
  if (model.empty()) {
    WARN("shared models absent: skipped mica check --target-config");
    return;
  }
  std::string dir = testing::TempDir("check_config");
  std::string cfg = dir + "/board.textproto";
  std::ofstream(cfg) << "base: \"cortex-m4\"\nname: \"tiny-board\"\n"
                        "cortex_m { sram_bytes: 8192 }\n";
  CliResult r = RunMica({"check", model, "--target-config", cfg, "--performance"});
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "tiny-board"));
  CHECK(Has(r.out, "of SRAM but tiny-board has 8.0 KiB"));

  CliResult s = RunMica({"check", model, "--target-profile", "ethos-u55-128", "--system-config",
                         "Ethos_U55_Deep_Embedded", "--memory-mode", "Sram_Only",
                         "--performance"});
  REQUIRE(s.exit_code == 0);
  CHECK(Has(s.out, "Ethos_U55_Deep_Embedded"));
  CHECK(Has(s.out, "Sram_Only"));
  CHECK(Has(s.out, "200 MHz"));
}

TEST_CASE("mica check --backend vela prints Vela's figures beside mica's", "[check]") {
  const std::string model = KwsModel();
  if (model.empty()) {
    WARN("shared models absent: skipped mica check --backend vela");
    return;
  }
  // A fake vela that writes a fixed summary CSV.
  std::string dir = testing::TempDir("check_vela");
  std::string vela = dir + "/vela";
  {
    std::ofstream f(vela);
    f << "#!/bin/sh\nout=.\nwhile [ $# -gt 0 ]; do [ \"$1\" = --output-dir ] && out=\"$2\"; "
         "shift; done\nprintf 'cycles_total,cycles_npu,core_clock\\n12345,11111,500000000\\n' > "
         "\"$out/m_summary_X.csv\"\n";
  }
  chmod(vela.c_str(), 0755);
  const std::string path = std::string("PATH=") + dir + ":/usr/bin:/bin";
  CliResult r = RunMica({"check", model, "--target-profile", "ethos-u55-256", "--performance",
                         "--backend", "vela"},
                        {path});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "ethos-u55-256 (vela)"));
  CHECK(Has(r.out, "12,345"));

  // A requested backend that fails is a failure of the command: the report still prints,
  // then one line names the backend's error, and the exit code is 1.
  {
    std::ofstream f(vela);
    f << "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\n"
         "echo '  File \"vela.py\", line 1' >&2\necho 'ValueError: unsupported model' >&2\n"
         "exit 1\n";
  }
  CliResult failed = RunMica({"check", model, "--target-profile", "ethos-u55-256",
                              "--performance", "--backend", "vela"},
                             {path});
  CHECK(failed.exit_code == 1);
  CHECK(CountLines(failed.err) == 1);
  CHECK(Has(failed.err, "requested backend failed"));
  CHECK(Has(failed.err, "ValueError: unsupported model"));
  CHECK_FALSE(Has(failed.err, "Traceback"));

  // Not installed: one line naming how to install it.
  CliResult n = RunMica({"check", model, "--target-profile", "ethos-u55-256", "--performance",
                         "--backend", "vela"},
                        {"PATH=/nonexistent"});
  CHECK(n.exit_code == 1);
  CHECK(CountLines(n.err) == 1);
  CHECK(Has(n.err, "pip install ethos-u-vela"));
}

TEST_CASE("mica check: bad input gives one line and the right exit code", "[check]") {
  std::string dir = testing::TempDir("check_errors");
  std::string text = dir + "/notes.txt";
  std::ofstream(text) << "not a model\n";
  std::string bad_cfg = dir + "/bad.textproto";
  std::ofstream(bad_cfg) << "base: \"ethos-u55-256\"\nethos_u { macs: 100 }\n";
  std::string model = KwsModel().empty() ? text : KwsModel();
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {{"check", dir + "/missing.tflite", "--target-profile", "cortex-m4"}, 1, "missing.tflite"},
      {{"check", text, "--target-profile", "cortex-m4"}, 1, "notes.txt"},
      {{"check", model, "--target-profile", "ethos-u99"}, 2, "valid: ethos-u55-32"},
      {{"check", model}, 2, "--target-profile"},
      {{"check", model, "--target-profile", "cortex-m4", "--backend", "tvm"}, 2, "unknown backend"},
      {{"check", model, "--target-profile", "cortex-m4", "--system-config",
        "Ethos_U55_Deep_Embedded"}, 2, "does not fit cortex-m4"},
      {{"check", model, "--target-profile", "cortex-m4", "--backend", "vela"}, 2,
       "Ethos-U target profile"},
      {{"check", model, "--target-profile", "ethos-u55-256", "--memory-mode", "Fast"}, 2,
       "unknown Vela memory mode"},
      {{"check", model, "--target-profile", "cortex-m4", "--target-profile", "cortex-m4"}, 2,
       "given twice"},
      // A bad --target-config file is a failed input (exit 1), not a usage mistake (issue 16).
      {{"check", model, "--target-config", bad_cfg}, 1, "bad.textproto: field ethos_u"},
      {{"check", model, "--target-profile", "cortex-m4", "--frobnicate"}, 2, "unknown flag"},
      {{"targets", "--verbose"}, 2, "unknown flag"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args, c.expect);
    CliResult r = RunMica(c.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == c.exit_code);
    CHECK(CountLines(r.err) == 1);
    CHECK(Has(r.err, c.expect));
    CHECK(r.out.empty());
  }
}

TEST_CASE("mica targets lists the built-in profiles", "[check]") {
  CliResult r = RunMica({"targets"});
  REQUIRE(r.exit_code == 0);
  for (const char* name : {"ethos-u55-32", "ethos-u65-512", "ethos-u85-2048", "cortex-m0",
                           "cortex-m85", "Ethos_U85_SYS_Flash_Low", "Dedicated_Sram_512KB"}) {
    CAPTURE(name);
    CHECK(Has(r.out, name));
  }
  CliResult j = RunMica({"targets", "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(Has(j.out, "\"schema\": \"mica.targets/1\""));
  CHECK(Has(j.out, "\"macs_per_cycle\": 2048"));
}

}  // namespace
}  // namespace mica
