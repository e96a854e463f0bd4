// mica fvp — Arm's Corstone FVPs (FVP_Corstone_SSE-300/310/320 with Ethos-U55/U65/U85), when a
// user has one installed (a licensed download; none can be installed on mica's CI, so this is
// tested with recorded transcript formats and a fake FVP executable).
//
// ParseFvpTranscript reads everything the FVP flows print (../shared/docs/fvp-output-formats.md):
// the `--stat` block, `Application exit code`, stop reasons, the verdicts (`Test_result:`,
// TFLM's `~~~ALL TESTS PASSED~~~`), NPU PMU counters in the MLEK legacy and current formats,
// MLIA's `<metrics>base64</metrics>` block, ExecuTorch's `ethosu_pmu_*` report and TFLM's
// per-operator tick lines. CorstoneFvpSimulator runs the mica runner firmware on an FVP and
// combines the runner's own lines with the FVP's statistics.
#ifndef MICA_FVP_CORSTONE_H_
#define MICA_FVP_CORSTONE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mica/fvp/simulator.h"

namespace mica {
namespace fvp {

struct FvpTranscript {
  std::optional<int> exit_code;           // "Application exit code: N."
  std::string stop_reason;                // "Info: Simulation is stopping. Reason: <text>."
  std::map<std::string, uint64_t> cpu_instructions;  // --stat: instance -> Inst
  std::optional<double> simulated_seconds;
  std::optional<bool> passed;             // Test_result / ~~~ALL TESTS PASSED~~~
  // NPU PMU counters by canonical name: "NPU ACTIVE", "NPU IDLE", "NPU TOTAL",
  // "NPU AXI0_RD_DATA_BEAT_RECEIVED", ... (ExecuTorch: "ETHOSU_PMU_CYCLE_CNTR" and the
  // event names of its "Ethos-U PMU Events:[...]" list).
  std::map<std::string, uint64_t> npu_counters;
  std::optional<uint64_t> cpu_cycles;     // ExecuTorch "Inference runtime: N CPU cycles total"
  std::vector<std::pair<std::string, uint64_t>> op_ticks;  // TFLM "<OP> took N ticks (M ms)."
};

// InvalidArgument for a malformed metrics block (bad base64, duplicated counter) or a counter
// given twice with different values.
absl::StatusOr<FvpTranscript> ParseFvpTranscript(const std::string& text);

struct CorstoneOptions {
  std::string platform = "corstone-300";  // corstone-300 | corstone-310 | corstone-320
  std::string program;                    // default: the platform's FVP executable name
  std::string firmware;                   // the mica runner built for the platform's board
  uint64_t bundle_address = 0x60000000;
  std::string npu = "U55";                // configuration name for -C ...ethosu.num_macs etc.
  int32_t npu_macs = 256;
  absl::Duration timeout = absl::Seconds(600);
};

// The FVP executable of a platform, and the hint printed when it is missing. InvalidArgument
// for an unknown platform.
absl::StatusOr<std::string> FvpProgramFor(const std::string& platform);
std::string FvpInstallHint(const std::string& platform);

// The command line CorstoneFvpSimulator runs (for tests and --verbose).
absl::StatusOr<std::vector<std::string>> CorstoneCommand(const CorstoneOptions& options,
                                                         const std::string& bundle_path);

class CorstoneFvpSimulator : public Simulator {
 public:
  explicit CorstoneFvpSimulator(CorstoneOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "fvp " + options_.platform; }
  // The runner's results (outputs, self-check). Its instruction counts come from the FPGAIO
  // counter, which is exact only under QEMU's -icount: on an FVP use transcript()'s --stat
  // count (every instruction of the program, start-up included). Errors as QemuSimulator's,
  // plus the FVP's stop reasons and a missing verdict. Not yet run against a real FVP.
  absl::StatusOr<SimulationResult> Run(const SimulationRequest& request) override;
  // The FVP's statistics and counters of the last Run().
  const FvpTranscript& transcript() const { return transcript_; }

 private:
  CorstoneOptions options_;
  FvpTranscript transcript_;
};

}  // namespace fvp
}  // namespace mica

#endif  // MICA_FVP_CORSTONE_H_
