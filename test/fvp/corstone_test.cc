// Corstone FVP transcripts (formats of ../shared/docs/fvp-output-formats.md) and
// CorstoneFvpSimulator's failures with fake FVP executables (no FVP can be installed here).
#include "mica/fvp/corstone.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace fvp {
namespace {

const char kStat300[] =
    "Application exit code: 0.\r\n"
    "\r\n"
    "Info: /OSCI/SystemC: Simulation stopped by user.\r\n"
    "[warning ][main@0][01 ns] Simulation stopped by user\r\n"
    "\r\n"
    "--- FVP_MPS3_Corstone_SSE_300 statistics: -------------------------------------\r\n"
    "Simulated time                          : 2.958458s\r\n"
    "User time                               : 1.768731s\r\n"
    "Performance index                       : 1.46\r\n"
    "cpu0                                    :  36.57 MIPS (    73961463 Inst)\r\n"
    "-------------------------------------------------------------------------------\r\n";

TEST_CASE("FVP --stat block, exit code and stop reason", "[fvp][corstone]") {
  auto t = ParseFvpTranscript(kStat300);
  REQUIRE(t.ok());
  REQUIRE(t->exit_code.has_value());
  CHECK(*t->exit_code == 0);
  CHECK(t->cpu_instructions.at("cpu0") == 73961463u);
  REQUIRE(t->simulated_seconds.has_value());
  CHECK(*t->simulated_seconds == Approx(2.958458));
  auto q = ParseFvpTranscript(
      "Info: Simulation is stopping. Reason: CPU time has been exceeded.\n"
      "cpu_core.cpu0                           :  26.36 MIPS (   768000000 Inst)\n");
  REQUIRE(q.ok());
  CHECK(q->stop_reason == "CPU time has been exceeded");
  CHECK(q->cpu_instructions.at("cpu_core.cpu0") == 768000000u);
}

TEST_CASE("MLEK NPU counters in the legacy and current formats", "[fvp][corstone]") {
  auto legacy = ParseFvpTranscript(
      "INFO - Profile for Inference :\n"
      "INFO - NPU AXI0_RD_DATA_BEAT_RECEIVED beats: 9332\n"
      "INFO - NPU ACTIVE cycles: 33145\n"
      "INFO - NPU IDLE cycles: 1033\n"
      "INFO - NPU total cycles: 34178\n");
  REQUIRE(legacy.ok());
  CHECK(legacy->npu_counters.at("NPU ACTIVE") == 33145u);
  CHECK(legacy->npu_counters.at("NPU TOTAL") == 34178u);
  CHECK(legacy->npu_counters.at("NPU AXI0_RD_DATA_BEAT_RECEIVED") == 9332u);
  auto current = ParseFvpTranscript(
      "INFO - Profile for Inference:\n"
      "INFO - NPU ACTIVE: 33145 cycles\n"
      "INFO - NPU ETHOSU_PMU_SRAM_RD_DATA_BEAT_RECEIVED: 12 beats\n"
      "INFO - NPU TOTAL: 34178 cycles\n");
  REQUIRE(current.ok());
  CHECK(current->npu_counters.at("NPU ACTIVE") == 33145u);
  CHECK(current->npu_counters.at("NPU ETHOSU_PMU_SRAM_RD_DATA_BEAT_RECEIVED") == 12u);
  CHECK(current->npu_counters.at("NPU TOTAL") == 34178u);
}

TEST_CASE("MLIA metrics block, and its negative fixtures", "[fvp][corstone]") {
  auto t = ParseFvpTranscript(
      "some output\n<metrics>W3sicHJvZmlsaW5nX2dyb3VwIjoiSW5mZXJlbmNlIiwiY291bnQiOjEsInNhbXBsZXMi"
      "Olt7Im5hbWUiOiJOUFUgSURMRSIsInZhbHVlIjpbMl19LHsibmFtZSI6Ik5QVSBBWEkwX1JEX0RBVEFfQkVBVF9SRU"
      "NFSVZFRCIsInZhbHVlIjpbNF19LHsibmFtZSI6Ik5QVSBBWEkwX1dSX0RBVEFfQkVBVF9XUklUVEVOIiwidmFsdWUi"
      "Ols1XX0seyJuYW1lIjoiTlBVIEFYSTFfUkRfREFUQV9CRUFUX1JFQ0VJVkVEIiwidmFsdWUiOls2XX0seyJuYW1lIj"
      "oiTlBVIEFDVElWRSIsInZhbHVlIjpbMV19LHsibmFtZSI6Ik5QVSBUT1RBTCIsInZhbHVlIjpbM119XX1d</metrics>\n");
  REQUIRE(t.ok());
  CHECK(t->npu_counters.at("NPU ACTIVE") == 1u);
  CHECK(t->npu_counters.at("NPU IDLE") == 2u);
  CHECK(t->npu_counters.at("NPU TOTAL") == 3u);
  CHECK(t->npu_counters.at("NPU AXI0_RD_DATA_BEAT_RECEIVED") == 4u);
  CHECK(t->npu_counters.at("NPU AXI0_WR_DATA_BEAT_WRITTEN") == 5u);
  CHECK(t->npu_counters.at("NPU AXI1_RD_DATA_BEAT_RECEIVED") == 6u);
  CHECK_FALSE(ParseFvpTranscript("<metrics>123</metrics>\n").ok());
  // Duplicated name: [{"samples":[{"name":"NPU IDLE","value":[1]},{"name":"NPU IDLE","value":[2]}]}]
  CHECK_FALSE(ParseFvpTranscript("<metrics>W3sic2FtcGxlcyI6W3sibmFtZSI6Ik5QVSBJRExFIiwidmFsdWUiOlsxXX0s"
                                 "eyJuYW1lIjoiTlBVIElETEUiLCJ2YWx1ZSI6WzJdfV19XQ==</metrics>\n")
                   .ok());
  auto none = ParseFvpTranscript("NPU IDLE: 123\n");
  REQUIRE(none.ok());
  CHECK(none->npu_counters.empty());
}

TEST_CASE("ExecuTorch PMU report and bundled I/O verdict", "[fvp][corstone]") {
  auto t = ParseFvpTranscript(
      "I [executorch:arm_perf_monitor.cpp:151] Inference runtime: 2585 CPU cycles total\n"
      "I [executorch:arm_perf_monitor.cpp:180] Ethos-U PMU report:\n"
      "I [executorch:arm_perf_monitor.cpp:181] ethosu_pmu_cycle_cntr : 411\n"
      "I [executorch:arm_perf_monitor.cpp:184] ethosu_pmu_cntr0 : 6\n"
      "I [executorch:arm_perf_monitor.cpp:184] ethosu_pmu_cntr3 : 9 (9.00 per inference)\n"
      "I [executorch:arm_perf_monitor.cpp:190] Ethos-U PMU Events:[ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED, "
      "ETHOSU_PMU_AXI1_RD_DATA_BEAT_RECEIVED, ETHOSU_PMU_AXI0_WR_DATA_BEAT_WRITTEN, ETHOSU_PMU_NPU_IDLE]\n"
      "I [executorch:arm_executor_runner.cpp:700 verify_result()] TEST: BundleIO index[0] Test_result: PASS\n");
  REQUIRE(t.ok());
  REQUIRE(t->cpu_cycles.has_value());
  CHECK(*t->cpu_cycles == 2585u);
  CHECK(t->npu_counters.at("ETHOSU_PMU_CYCLE_CNTR") == 411u);
  CHECK(t->npu_counters.at("ETHOSU_PMU_AXI0_RD_DATA_BEAT_RECEIVED") == 6u);
  CHECK(t->npu_counters.at("ETHOSU_PMU_NPU_IDLE") == 9u);
  REQUIRE(t->passed.has_value());
  CHECK(*t->passed);
  auto f = ParseFvpTranscript("E [executorch:r.cpp:1 v()] TEST: BundleIO index[0] Test_result: FAIL\n");
  REQUIRE(f.ok());
  CHECK_FALSE(*f->passed);
}

TEST_CASE("hostile FVP output is an error or ignored, never a crash", "[fvp][corstone]") {
  CHECK(ParseFvpTranscript("Application exit code: 99999999999999999999999.\n").ok());
  CHECK(ParseFvpTranscript("ethosu_pmu_cntr99999999999999999999 : 5\n").ok());
  CHECK(ParseFvpTranscript("NPU " + std::string(200000, 'A') + " cycles: 5\n").ok());
  CHECK_FALSE(ParseFvpTranscript("<metrics>" + std::string(100000, '!') + "</metrics>\n").ok());
}

TEST_CASE("TFLM verdicts and per-operator ticks", "[fvp][corstone]") {
  auto t = ParseFvpTranscript("DEPTHWISE_CONV_2D took 224622 ticks (8 ms).\nCONV_2D took 249561 ticks (9 ms).\n"
                              "~~~ALL TESTS PASSED~~~\n");
  REQUIRE(t.ok());
  REQUIRE(t->op_ticks.size() == 2);
  CHECK(t->op_ticks[1].first == "CONV_2D");
  CHECK(t->op_ticks[1].second == 249561u);
  CHECK(*t->passed);
}

std::string FakeFvp(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/FVP_Corstone_SSE-300_Ethos-U55";
  std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
  chmod(path.c_str(), 0755);
  return path;
}

absl::StatusOr<SimulationResult> RunFake(const std::string& dir, const std::string& program,
                                         bool expected = true) {
  CorstoneOptions o;
  o.program = program;
  o.firmware = dir + "/runner.elf";
  std::ofstream(o.firmware) << "elf";
  o.timeout = absl::Seconds(5);
  SimulationRequest r;
  r.plan = {1};
  if (expected) r.expected = {{0}};
  return CorstoneFvpSimulator(o).Run(r);
}

TEST_CASE("CorstoneFvpSimulator with a fake FVP", "[fvp][corstone]") {
  const std::string dir = testing::TempDir("fake_fvp");
  SECTION("missing FVP names the download") {
    auto r = RunFake(dir, "FVP_mica_absent");
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("developer.arm.com") != std::string::npos);
  }
  SECTION("a good run: runner lines through the FVP's uart, \\r\\n endings") {
    auto r = RunFake(dir, FakeFvp(dir,
        "printf 'telnetterminal0: Listening for serial connection on port 5000\\r\\n'\n"
        "printf 'MICA begin board=mps3-an547 isa=mve\\r\\nMICA total 100\\r\\nMICA output 0 1 00\\r\\n'\n"
        "printf 'MICA check 0 first=-1 diffs=0 maxdiff=0\\r\\nTest_result: PASS\\r\\nMICA end 0\\r\\n'\n"
        "printf 'Application exit code: 0.\\r\\ncpu0 :  36.57 MIPS (    73961463 Inst)\\r\\n'"));
    REQUIRE(r.ok());
    CHECK(*r->passed);
  }
  SECTION("exit 0 without the runner starting (the FVP flows' trap)") {
    auto r = RunFake(dir, FakeFvp(dir, "echo 'Info: /OSCI/SystemC: Simulation stopped by user.'"));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("never started") != std::string::npos);
  }
  SECTION("the FVP's own time limit") {
    auto r = RunFake(dir, FakeFvp(dir, "echo 'MICA begin board=b isa=mve'\n"
                                       "echo 'Info: Simulation is stopping. Reason: CPU time has been exceeded.'"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  }
  SECTION("a verdict-less run with expected outputs is a failure") {
    auto r = RunFake(dir, FakeFvp(dir, "echo 'MICA begin board=b isa=mve'\necho 'MICA total 1'\n"
                                       "echo 'MICA end 0'"));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("no Test_result") != std::string::npos);
  }
  SECTION("a crash") {
    auto r = RunFake(dir, FakeFvp(dir, "echo 'Hard fault' >&2\nkill -SEGV $$"));
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()).find("crashed") != std::string::npos);
  }
}

TEST_CASE("the FVP command line", "[fvp][corstone]") {
  CorstoneOptions o;
  o.firmware = "runner.elf";
  auto argv = CorstoneCommand(o, "/tmp/b.bin");
  REQUIRE(argv.ok());
  CHECK((*argv)[0] == "FVP_Corstone_SSE-300_Ethos-U55");
  std::string joined;
  for (const auto& a : *argv) joined += a + " ";
  CHECK(joined.find("--data /tmp/b.bin@0x60000000") != std::string::npos);
  CHECK(joined.find("cpu0.semihosting-enable=1") != std::string::npos);
  CHECK(joined.find("--stat") != std::string::npos);
  o.platform = "corstone-999";
  CHECK_FALSE(CorstoneCommand(o, "b").ok());
}

}  // namespace
}  // namespace fvp
}  // namespace mica
