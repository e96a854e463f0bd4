#include "mica/device_run.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "mica/estimate/target.h"
#include "mica/runtime/executor.h"

#ifndef MICA_FIRMWARE_DIR
#define MICA_FIRMWARE_DIR ""
#endif

namespace mica {
namespace cli {

std::string QemuBuildFor(kernels::Isa isa, const std::string& cpu) {
  switch (isa) {
    case kernels::Isa::kMve: return "m55-mve";
    case kernels::Isa::kDsp:
      if (cpu == "cortex-m7") return "m7-dsp";
      if (cpu == "cortex-m33") return "m33-dsp";
      return "m4-dsp";
    default: return "m55-scalar";
  }
}

std::string RunnerFirmware(const std::string& build, const std::string& firmware) {
  if (!firmware.empty()) return firmware;
  const char* env = std::getenv("MICA_FIRMWARE_DIR");
  const std::string dir = env != nullptr && *env != '\0' ? env : MICA_FIRMWARE_DIR;
  return absl::StrCat(dir, "/", build, "/firmware/mica_runner.elf");
}

absl::StatusOr<kernels::Isa> TargetIsa(const std::string& profile_name,
                                       const std::string& variant, std::string* cpu) {
  auto profile = estimate::FindTargetProfile(profile_name);
  if (!profile.ok()) return profile.status();
  if (cpu != nullptr) *cpu = profile->cortex_m.cpu;
  if (profile->kind != estimate::TargetKind::kCortexM) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", profile_name, "' is not a Cortex-M profile: running on a simulated Ethos-U needs "
        "an Arm Corstone FVP, which this mica does not drive yet"));
  }
  kernels::Isa isa = profile->cortex_m.has_mve   ? kernels::Isa::kMve
                     : profile->cortex_m.has_dsp ? kernels::Isa::kDsp
                                                 : kernels::Isa::kScalar;
  if (!variant.empty()) {
    auto v = runtime::ParseIsa(variant);
    if (!v.ok()) return v.status();
    if (v->has_value()) isa = **v;
  }
  return isa;
}

absl::StatusOr<DeviceRun> RunOnQemu(const Graph& graph, kernels::Isa isa,
                                    const std::vector<std::vector<uint8_t>>& inputs,
                                    const std::vector<std::vector<uint8_t>>& expected,
                                    const std::string& firmware, bool per_op_counts,
                                    const std::string& cpu) {
  DeviceRun run;
  run.isa = isa;
  run.build = QemuBuildFor(isa, cpu);
  auto plan = runtime::CompilePlan(graph, {isa, 0});
  if (!plan.ok()) return plan.status();
  run.plan = *std::move(plan);
  auto options = fvp::QemuOptionsFor(run.build);
  if (!options.ok()) return options.status();
  options->firmware = RunnerFirmware(run.build, firmware);
  fvp::SimulationRequest req;
  req.plan = run.plan.bytes;
  req.inputs = inputs;
  req.expected = expected;
  req.per_op_counts = per_op_counts;
  fvp::QemuSimulator qemu(*options);
  std::cerr << "mica: running on " << qemu.name() << " (" << run.build << ", exact instruction "
            << "counts with -icount)...\n";
  auto result = qemu.Run(req);
  if (!result.ok()) return result.status();
  run.result = *std::move(result);
  return run;
}

}  // namespace cli
}  // namespace mica
