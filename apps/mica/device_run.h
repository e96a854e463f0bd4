// Running a model on a simulated Cortex-M (`mica run -t`, `mica check --backend qemu`):
// compile the plan for the profile's ISA, pick the runner firmware of that build and run it on
// QEMU through libfvp.
#ifndef MICA_APPS_DEVICE_RUN_H_
#define MICA_APPS_DEVICE_RUN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/fvp/simulator.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"
#include "mica/runtime/plan.h"

namespace mica {
namespace cli {

struct DeviceRun {
  std::string build;  // "m55-mve", "m4-dsp", "m55-scalar"
  kernels::Isa isa = kernels::Isa::kMve;
  runtime::CompiledPlan plan;
  fvp::SimulationResult result;
};

// The QEMU build that runs `isa` plans for `cpu`: MVE and scalar on mps3-an547 (Cortex-M55, the
// scalar build without MVE/DSP), DSP on mps2-an500 for cortex-m7, mps2-an505 for cortex-m33 and
// mps2-an386 (Cortex-M4) otherwise.
std::string QemuBuildFor(kernels::Isa isa, const std::string& cpu = "");

// The runner firmware of `build`: `firmware` if given, else $MICA_FIRMWARE_DIR/<build>/...,
// else the one this mica was built with.
std::string RunnerFirmware(const std::string& build, const std::string& firmware);

// The ISA of a Cortex-M profile (its CPU's best), overridden by `variant` when not empty.
// `cpu` (if given) receives the profile's CPU name.
absl::StatusOr<kernels::Isa> TargetIsa(const std::string& profile, const std::string& variant,
                                       std::string* cpu = nullptr);

// Compiles and runs `graph` once on QEMU with `inputs` (raw bytes per graph input) and, if not
// empty, `expected` outputs for the runner's self-check. Prints progress to stderr.
absl::StatusOr<DeviceRun> RunOnQemu(const Graph& graph, kernels::Isa isa,
                                    const std::vector<std::vector<uint8_t>>& inputs,
                                    const std::vector<std::vector<uint8_t>>& expected,
                                    const std::string& firmware, bool per_op_counts,
                                    const std::string& cpu = "");

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_DEVICE_RUN_H_
