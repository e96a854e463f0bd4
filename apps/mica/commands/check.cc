// `mica check`: does a model fit an Arm target, what does it cost, what to fix first (MLIA-like).
//
//   mica check MODEL --target-profile P [--target-profile Q ...] [--target-config FILE ...]
//              [--compatibility] [--performance] [--backend mica|vela ...]
//              [--system-config NAME] [--memory-mode NAME] [--json] [--output FILE]
//
// A profile may carry its own Ethos-U configuration: `--target-profile
// ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode=Dedicated_Sram_384KB`.
// The global --system-config/--memory-mode apply to every profile given and are refused (exit 2)
// unless they fit each one; a profile's own options override them.
//
// --compatibility is the default when neither it nor --performance is given. mica's own
// estimator always runs; --backend vela adds Vela's figures beside it for Ethos-U profiles (and
// implies --performance).
// This file handles the arguments and runs the estimates; the report (text tables, or JSON of
// schema "mica.check/1" described in libestimate/REPORT.md) is rendered by libestimate
// (mica/estimate/render.h).
#include <iostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/base/status_macros.h"
#include "mica/command.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/render.h"
#include "mica/estimate/report.h"
#include "mica/estimate/target.h"
#include "mica/fvp/subprocess.h"
#include "mica/fvp/vela.h"
#include "mica/model/load.h"

namespace mica {
namespace cli {
namespace {

using estimate::Estimate;
using estimate::TargetKind;
using estimate::TargetProfile;

// One profile's figures, as the renderers take them.
using ProfileRun = estimate::ProfileReport;

// The profiles of the command line, in order: each built-in (`--target-profile NAME[:OPTS]`) or
// file (`--target-config FILE[:OPTS]`) profile, then the global --system-config/--memory-mode,
// which must fit every profile (else InvalidArgument naming the one it does not fit), then the
// profile's own options, which override the global ones. A --target-config file that cannot be
// read or is not a valid profile sets *bad_file: that is a failed input (exit 1), not a usage
// mistake (exit 2).
absl::StatusOr<std::vector<TargetProfile>> ResolveProfiles(
    const std::vector<std::string>& profiles, const std::vector<std::string>& configs,
    const std::string& system_config, const std::string& memory_mode, bool* bad_file) {
  *bad_file = false;
  std::vector<std::pair<TargetProfile, estimate::ProfileOptions>> requested;
  for (const std::string& spec : profiles) {
    std::string name;
    estimate::ProfileOptions options;
    MICA_RETURN_IF_ERROR(estimate::SplitProfileSpec(spec, &name, &options));
    MICA_ASSIGN_OR_RETURN(TargetProfile t, estimate::FindTargetProfile(name));
    if (!options.empty()) t.name = spec;
    requested.emplace_back(std::move(t), options);
  }
  for (const std::string& spec : configs) {
    std::string file;
    estimate::ProfileOptions options;
    MICA_RETURN_IF_ERROR(estimate::SplitProfileSpec(spec, &file, &options));
    absl::StatusOr<TargetProfile> loaded = estimate::LoadTargetProfileFile(file);
    if (!loaded.ok()) {
      *bad_file = true;
      return loaded.status();
    }
    TargetProfile t = *std::move(loaded);
    if (!options.empty()) t.name += ":" + estimate::ProfileOptionsText(options);
    requested.emplace_back(std::move(t), options);
  }
  std::set<std::string> seen;
  for (const auto& [t, options] : requested) {
    if (!seen.insert(t.name).second) {
      return absl::InvalidArgumentError("target profile '" + t.name + "' given twice");
    }
  }
  if (!system_config.empty() || !memory_mode.empty()) {
    estimate::ProfileOptions global;
    global.system_config = system_config;
    global.memory_mode = memory_mode;
    std::string flags;
    if (!system_config.empty()) flags = "--system-config " + system_config;
    if (!memory_mode.empty()) flags += (flags.empty() ? "" : " ") + ("--memory-mode " + memory_mode);
    for (auto& [t, options] : requested) {
      absl::Status s = t.kind == TargetKind::kEthosU
                           ? estimate::SetVelaConfig(&t, system_config, memory_mode)
                           : absl::InvalidArgumentError(t.name +
                                                        " is a Cortex-M profile, not Ethos-U");
      if (absl::IsNotFound(s)) return absl::InvalidArgumentError(s.message());
      if (!s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            flags, " applies to every profile given but does not fit ", t.name, " (",
            s.message(), "); give it per profile instead: --target-profile NAME:",
            estimate::ProfileOptionsText(global)));
      }
    }
  }
  std::vector<TargetProfile> out;
  for (auto& [t, options] : requested) {
    MICA_RETURN_IF_ERROR(estimate::ApplyProfileOptions(&t, options));
    out.push_back(std::move(t));
  }
  return out;
}

int RunCheck(const std::vector<std::string>& args) {
  ArgParser p("check");
  std::vector<std::string> models, profiles, configs, backends;
  bool compatibility = false, performance = false, json = false;
  std::string output, system_config, memory_mode;
  p.Positional("MODEL", &models, 1, 1);
  p.Repeated("--target-profile", &profiles, "NAME[:OPTS]",
             "built-in target profile (see `mica targets`), optionally with its own "
             "Ethos-U configuration: NAME:system-config=S,memory-mode=M,arena-cache-size=BYTES "
             "(e.g. ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode="
             "Dedicated_Sram_384KB, Vela's command-line defaults)");
  p.Repeated("--target-config", &configs, "FILE[:OPTS]",
             "user target profile in protobuf text format (same OPTS)");
  p.Flag("--compatibility", &compatibility, "operator placement and reasons (default)");
  p.Flag("--performance", &performance, "cycles, memory, top operators");
  p.Repeated("--backend", &backends, "NAME",
             "extra backend printed beside mica's estimate: vela");
  p.Option("--system-config", &system_config, "NAME",
           "Vela system config for every profile given (e.g. Ethos_U55_Deep_Embedded); refused "
           "unless it fits each of them (all Ethos-U of the config's family): otherwise use "
           "NAME:system-config=... per profile, which also overrides this flag");
  p.Option("--memory-mode", &memory_mode, "NAME",
           "Vela memory mode for every profile given (e.g. Sram_Only, Dedicated_Sram_384KB); "
           "refused unless valid for each of them; per profile: NAME:memory-mode=...");
  p.Flag("--json", &json, "print the report as JSON (schema mica.check/1)");
  p.Option("--output", &output, "FILE", "write the report to FILE (atomically) instead of stdout");
  if (int rc = p.Parse(args); rc >= 0) return rc;

  if (profiles.empty() && configs.empty()) {
    return UsageError("check: needs at least one --target-profile or --target-config (valid "
                      "profiles: " + absl::StrJoin(estimate::BuiltinTargetNames(), ", ") + ")");
  }
  bool want_vela = false;
  for (const std::string& b : backends) {
    if (b == "vela") {
      want_vela = true;
    } else if (b != "mica") {
      return UsageError("check: unknown backend '" + b + "' (valid: mica, vela)");
    }
  }
  // Vela contributes performance figures: asking for it implies --performance.
  if (want_vela) performance = true;
  if (!compatibility && !performance) compatibility = true;

  bool bad_config_file = false;
  absl::StatusOr<std::vector<TargetProfile>> resolved =
      ResolveProfiles(profiles, configs, system_config, memory_mode, &bad_config_file);
  if (!resolved.ok()) {
    const std::string message = "check: " + std::string(resolved.status().message());
    return bad_config_file ? Failure(message) : UsageError(message);
  }
  std::vector<ProfileRun> runs;
  for (TargetProfile& t : *resolved) runs.push_back({std::move(t), {}, {}, {}, {}});
  bool any_ethos = false;
  for (const ProfileRun& r : runs) any_ethos |= r.profile.kind == TargetKind::kEthosU;
  if (want_vela && !any_ethos) {
    return UsageError("check: --backend vela needs an Ethos-U target profile");
  }
  if (want_vela && fvp::FindProgram("vela").empty()) {
    return Failure("check: --backend vela: " + fvp::VelaInstallHint());
  }

  const std::string& model_path = models[0];
  absl::StatusOr<Graph> graph = LoadModel(model_path);
  if (!graph.ok()) return Failure(std::string(graph.status().message()));
  if (graph->subgraphs.empty()) return Failure(model_path + ": model has no subgraph");

  for (ProfileRun& r : runs) {
    absl::StatusOr<Estimate> e = estimate::EstimateModel(*graph, r.profile);
    if (!e.ok()) {
      return Failure(absl::StrCat(r.profile.name, ": ", e.status().message()));
    }
    r.mica = *std::move(e);
    r.advice = estimate::Advise(*graph, r.profile, r.mica, model_path);
    if (want_vela && r.profile.kind == TargetKind::kEthosU && performance) {
      absl::StatusOr<Estimate> v = fvp::RunVela(model_path, r.profile, {});
      if (v.ok()) {
        r.extra.push_back(*std::move(v));
      } else {
        r.backend_errors.push_back(absl::StrCat("vela: ", v.status().message()));
      }
    }
  }

  const estimate::CheckReport report{model_path, &*graph, std::move(runs),
                                     compatibility, performance, MICA_VERSION};
  std::string text = json ? estimate::RenderCheckJson(report) : estimate::RenderCheckText(report);
  if (!output.empty()) {
    if (IsSameFile(output, model_path)) {
      return Failure(absl::StrCat(output, ": is the model itself; the report needs another file"));
    }
    absl::Status s = WriteFileBytes(output, text);
    if (!s.ok()) return Failure(std::string(s.message()));
  } else {
    std::cout << text;
  }
  return kExitOk;
}

const Registration kCheck{
    {"check",
     "MODEL --target-profile NAME[:OPTS] [--target-profile NAME[:OPTS] ...] "
     "[--target-config FILE[:OPTS]] "
     "[--compatibility] [--performance] [--backend vela] [--system-config NAME] "
     "[--memory-mode NAME] [--json] [--output FILE]",
     "Check a model against Ethos-U / Cortex-M targets: placement, cycles, memory, advice",
     RunCheck, 20}};

}  // namespace
}  // namespace cli
}  // namespace mica
