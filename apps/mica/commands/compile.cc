// `mica compile MODEL --target-profile NAME -o FILE [--isa scalar|dsp|mve] [--format plan|c]
//               [--symbol NAME]`
//
// Compiles an integer model into a device plan (.mplan, libkernels/device's format): what the
// host executor's lowering prepares (multipliers, shifts, variant, scratch, the planner's
// arena offsets, constant data), resolved once on the host. The ISA comes from the profile's
// CPU (MVE on cortex-m55/m85, DSP on m4/m7/m33, scalar otherwise); --isa overrides it (e.g.
// `--isa scalar` for a cortex-m55+nomve+nodsp build). --format c writes a C array to link into
// a firmware. Prints the plan's size, arena, scratch and constant bytes.
//
// Exit codes: 0 ok, 1 failure (one line: unreadable model, an operator the device cannot run),
// 2 usage error.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mica/args.h"
#include "mica/base/file.h"
#include "mica/command.h"
#include "mica/estimate/target.h"
#include "mica/model/load.h"
#include "mica/model_input.h"
#include "mica/runtime/executor.h"
#include "mica/runtime/plan.h"

namespace mica {
namespace cli {
namespace {

int RunCompile(const std::vector<std::string>& args) {
  ArgParser p("compile");
  std::vector<std::string> models;
  std::string profile_name, out, isa_name, format = "plan", symbol = "mica_plan";
  p.Positional("MODEL", &models, 1, 1);
  p.Option("--target-profile", &profile_name, "NAME", "Cortex-M profile (cortex-m55, ...)");
  p.Option("-t", &profile_name, "NAME", "same as --target-profile");
  p.Option("-o", &out, "FILE", "where to write the plan");
  p.Option("--output", &out, "FILE", "same as -o");
  p.Option("--isa", &isa_name, "scalar|dsp|mve", "kernel variant (default: the CPU's best)");
  p.Option("--format", &format, "plan|c", "binary plan (default) or a C array");
  p.Option("--symbol", &symbol, "NAME", "C array name for --format c (default mica_plan)");
  if (int rc = p.Parse(args); rc >= 0) return rc;
  if (out.empty()) return UsageError("compile: -o FILE is required");
  if (format != "plan" && format != "c") return UsageError("compile: --format must be plan or c");
  if (profile_name.empty() && isa_name.empty()) profile_name = "cortex-m55";
  runtime::PlanOptions options;
  if (!profile_name.empty()) {
    auto profile = estimate::FindTargetProfile(profile_name);
    if (!profile.ok()) return Failure(std::string(profile.status().message()));
    options.isa = profile->cortex_m.has_mve   ? kernels::Isa::kMve
                  : profile->cortex_m.has_dsp ? kernels::Isa::kDsp
                                              : kernels::Isa::kScalar;
  }
  if (!isa_name.empty()) {
    auto isa = runtime::ParseIsa(isa_name);
    if (!isa.ok() || !isa->has_value()) {
      return UsageError("compile: --isa must be scalar, dsp or mve");
    }
    options.isa = **isa;
  }
  auto graph = LoadModelInput(models[0]);
  if (!graph.ok()) return Failure(std::string(graph.status().message()));
  auto plan = runtime::CompilePlan(*graph, options);
  if (!plan.ok()) return Failure(std::string(plan.status().message()));
  absl::Status s = format == "c" ? WriteFileBytes(out, runtime::PlanToC(plan->bytes, symbol))
                                 : WriteFileBytes(out, plan->bytes);
  if (!s.ok()) return Failure(std::string(s.message()));
  std::cout << "plan " << out << ": " << plan->bytes.size() << " bytes, "
            << plan->op_names.size() << " operators, isa " << kernels::IsaName(options.isa)
            << "\narena " << plan->arena_bytes << " bytes (activations "
            << plan->activation_bytes << ", scratch " << plan->scratch_bytes << ", state "
            << plan->state_bytes << "), constants " << plan->constant_bytes << " bytes\n";
  return kExitOk;
}

const Registration kCompile{{"compile", "MODEL --target-profile NAME -o FILE [--format plan|c]",
                             "Compile a model into a device plan for the Cortex-M runtime",
                             RunCompile, 35}};

}  // namespace
}  // namespace cli
}  // namespace mica
