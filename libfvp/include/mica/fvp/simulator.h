// mica fvp — running a compiled plan on an instruction-set simulator (QEMU, Arm's Corstone
// FVPs) through the mica runner firmware (firmware/), and reading back what it measured.
//
// The request is bundled (mica/device/bundle.h: plan, inputs, expected outputs) into a
// temporary file the simulator loads at the runner's bundle address; the runner prints
// `MICA ...` lines (firmware/runner.cc) which ParseRunnerOutput turns into a result. Every
// failure is one line: simulator or firmware missing (with how to get it), crash, timeout,
// truncated or garbage output, and a simulator that exits 0 without the runner ever starting.
// Nothing is left behind (the bundle's folder is removed).
//
//   mica::fvp::QemuSimulator qemu(mica::fvp::QemuBoardFor(Isa::kMve, firmware_elf));
//   MICA_ASSIGN_OR_RETURN(mica::fvp::SimulationResult r, qemu.Run(request));
//   std::cout << r.total_instructions << " instructions, " << (r.passed ? "PASS" : "FAIL");
#ifndef MICA_FVP_SIMULATOR_H_
#define MICA_FVP_SIMULATOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace mica {
namespace fvp {

struct SimulationRequest {
  std::vector<uint8_t> plan;                   // a compiled plan (mica/runtime/plan.h)
  std::vector<std::vector<uint8_t>> inputs;    // raw bytes, one per graph input
  std::vector<std::vector<uint8_t>> expected;  // empty, or one per graph output (self-check)
  bool print_outputs = true;                   // read the outputs back
  bool per_op_counts = true;                   // an extra run counting each operator
};

struct OpCount {
  int32_t index = 0;
  std::string name;
  uint64_t instructions = 0;
};

struct OutputCheck {
  int32_t index = 0;
  int64_t first_difference = -1;  // element index, -1 when equal
  uint64_t differences = 0;
  int64_t max_difference = 0;
  bool size_mismatch = false;
};

struct SimulationResult {
  std::string board, isa;
  uint64_t ops = 0, arena_bytes = 0, plan_bytes = 0;
  std::vector<OpCount> op_counts;   // with per_op_counts
  uint64_t total_instructions = 0;  // one inference, exact (QEMU -icount)
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<OutputCheck> checks;
  std::optional<bool> passed;       // with expected outputs: Test_result
};

// Serialises a request into the runner's bundle format.
std::vector<uint8_t> MakeBundle(const SimulationRequest& request);

// Parses the runner's transcript (other lines, e.g. the simulator's own, are ignored).
// `origin` names the simulator in errors. Internal for a runner error line or a run that
// never started or ended; InvalidArgument for a malformed MICA line.
absl::StatusOr<SimulationResult> ParseRunnerOutput(const std::string& text,
                                                   const std::string& origin);

class Simulator {
 public:
  virtual ~Simulator() = default;
  virtual std::string name() const = 0;
  virtual absl::StatusOr<SimulationResult> Run(const SimulationRequest& request) = 0;
};

struct QemuOptions {
  std::string program = "qemu-system-arm";  // looked up on PATH unless it holds a '/'
  std::string machine = "mps3-an547";
  std::string firmware;                     // the runner ELF built for `machine`
  uint64_t bundle_address = 0x60000000;
  absl::Duration timeout = absl::Seconds(300);
  std::string build;  // the firmware build (preset qemu-<build>), for error messages
};

// The QEMU machine, bundle address of the runner's board for a build: "m55-mve" and
// "m55-scalar" on mps3-an547, "m4-dsp" on mps2-an386, "m7-dsp" on mps2-an500, "m33-dsp" on
// mps2-an505. InvalidArgument for another name.
absl::StatusOr<QemuOptions> QemuOptionsFor(const std::string& build);

class QemuSimulator : public Simulator {
 public:
  explicit QemuSimulator(QemuOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "qemu " + options_.machine; }
  // Runs `program -M machine -nographic -icount shift=0,align=off,sleep=off
  // -semihosting-config enable=on,target=native -kernel FIRMWARE
  // -device loader,file=BUNDLE,addr=ADDR` and parses the transcript.
  absl::StatusOr<SimulationResult> Run(const SimulationRequest& request) override;

 private:
  QemuOptions options_;
};

}  // namespace fvp
}  // namespace mica

#endif  // MICA_FVP_SIMULATOR_H_
