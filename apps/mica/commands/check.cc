// `mica check`: does a model fit an Arm target, what does it cost, what to fix first (MLIA-like).
//
//   mica check MODEL --target-profile P [--target-profile Q ...] [--target-config FILE ...]
//              [--compatibility] [--performance] [--backend mica|vela ...]
//              [--system-config NAME] [--memory-mode NAME] [--json] [--output FILE]
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
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
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

int RunCheck(const std::vector<std::string>& args) {
  ArgParser p("check");
  std::vector<std::string> models, profiles, configs, backends;
  bool compatibility = false, performance = false, json = false;
  std::string output, system_config, memory_mode;
  p.Positional("MODEL", &models, 1, 1);
  p.Repeated("--target-profile", &profiles, "NAME",
             "built-in target profile (repeatable; see `mica targets`)");
  p.Repeated("--target-config", &configs, "FILE",
             "user target profile in protobuf text format (repeatable)");
  p.Flag("--compatibility", &compatibility, "operator placement and reasons (default)");
  p.Flag("--performance", &performance, "cycles, memory, top operators");
  p.Repeated("--backend", &backends, "NAME",
             "extra backend printed beside mica's estimate: vela (repeatable)");
  p.Option("--system-config", &system_config, "NAME",
           "Vela system config for Ethos-U profiles (e.g. Ethos_U55_Deep_Embedded)");
  p.Option("--memory-mode", &memory_mode, "NAME",
           "Vela memory mode for Ethos-U profiles (e.g. Sram_Only, Dedicated_Sram)");
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

  std::vector<ProfileRun> runs;
  std::set<std::string> seen;
  for (const std::string& name : profiles) {
    absl::StatusOr<TargetProfile> t = estimate::FindTargetProfile(name);
    if (!t.ok()) return UsageError("check: " + std::string(t.status().message()));
    runs.push_back({*t, {}, {}, {}, {}});
  }
  for (const std::string& file : configs) {
    absl::StatusOr<TargetProfile> t = estimate::LoadTargetProfileFile(file);
    if (!t.ok()) return UsageError("check: " + std::string(t.status().message()));
    runs.push_back({*t, {}, {}, {}, {}});
  }
  bool any_ethos = false;
  for (ProfileRun& r : runs) {
    if (!seen.insert(r.profile.name).second) {
      return UsageError("check: target profile '" + r.profile.name + "' given twice");
    }
    any_ethos |= r.profile.kind == TargetKind::kEthosU;
  }
  if ((!system_config.empty() || !memory_mode.empty()) && !any_ethos) {
    return UsageError("check: --system-config/--memory-mode need an Ethos-U target profile");
  }
  if (want_vela && !any_ethos) {
    return UsageError("check: --backend vela needs an Ethos-U target profile");
  }
  for (ProfileRun& r : runs) {
    if (r.profile.kind != TargetKind::kEthosU) continue;
    if (system_config.empty() && memory_mode.empty()) continue;
    absl::Status s = estimate::SetVelaConfig(&r.profile, system_config, memory_mode);
    if (!s.ok()) return UsageError("check: " + std::string(s.message()));
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
    r.advice = estimate::Advise(*graph, r.profile, r.mica);
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
     "MODEL --target-profile NAME [--target-profile NAME ...] [--target-config FILE] "
     "[--compatibility] [--performance] [--backend vela] [--system-config NAME] "
     "[--memory-mode NAME] [--json] [--output FILE]",
     "Check a model against Ethos-U / Cortex-M targets: placement, cycles, memory, advice",
     RunCheck, 20}};

}  // namespace
}  // namespace cli
}  // namespace mica
