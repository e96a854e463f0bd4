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
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <thread>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/base/status_macros.h"
#include "mica/command.h"
#include "mica/estimate/cortex_m.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/render.h"
#include "mica/estimate/report.h"
#include "mica/estimate/target.h"
#include "mica/estimate/tflm_arena.h"
#include "mica/fvp/subprocess.h"
#include "mica/device_run.h"
#include "mica/fvp/corstone.h"
#include "mica/fvp/vela.h"
#include "mica/model/load.h"
#include "mica/model_input.h"

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

// Reads a model list: one path per line; blank lines and lines starting with '#' are skipped.
absl::StatusOr<std::vector<std::string>> ReadModelList(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path, size_t{64} << 20));
  std::vector<std::string> out;
  std::string line;
  auto flush = [&] {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start != std::string::npos && line[start] != '#') out.push_back(line.substr(start));
    line.clear();
  };
  for (uint8_t c : *bytes) {
    if (c == '\n') {
      flush();
    } else {
      line += static_cast<char>(c);
    }
  }
  flush();
  if (out.empty()) return absl::InvalidArgumentError(path + ": lists no model");
  return out;
}

// Returns the models of shard "I/N" (1-based): those at list positions I-1, I-1+N, ...
absl::StatusOr<std::vector<std::string>> Shard(const std::vector<std::string>& models,
                                               const std::string& spec) {
  const size_t slash = spec.find('/');
  int i = 0, n = 0;
  if (slash == std::string::npos || !absl::SimpleAtoi(spec.substr(0, slash), &i) ||
      !absl::SimpleAtoi(spec.substr(slash + 1), &n) || n < 1 || i < 1 || i > n) {
    return absl::InvalidArgumentError("--shard needs I/N with 1 <= I <= N, got '" + spec + "'");
  }
  std::vector<std::string> out;
  for (size_t k = static_cast<size_t>(i - 1); k < models.size(); k += static_cast<size_t>(n)) {
    out.push_back(models[k]);
  }
  return out;
}

// SplitMix64 inputs (the shared goldens' generator, seed 1): deterministic, so a measurement
// can be repeated exactly.
std::vector<uint8_t> SeededInput(uint64_t seed, const Tensor& t) {
  uint64_t x = seed;
  std::vector<uint8_t> out(t.num_bytes());
  const size_t es = t.num_elements() > 0 ? out.size() / static_cast<size_t>(t.num_elements()) : 1;
  for (size_t j = 0; j + es <= out.size(); j += es) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const uint64_t top = z >> (64 - 8 * es);
    for (size_t b = 0; b < es; ++b) out[j + b] = static_cast<uint8_t>(top >> (8 * b));
  }
  return out;
}

// Checks every model against every profile on `jobs` threads; one row per model x profile in
// list order. A model that cannot be read or estimated gives error rows, and exit code 1 once
// all are done. Progress goes to stderr when it is a terminal.
// The estimate of one model on one profile: Cortex-M profiles with the kernels (and arena) of
// the runtime asked for (CMSIS-NN under TFLite Micro, or mica's), Ethos-U profiles as Vela
// compiles them.
absl::StatusOr<Estimate> EstimateFor(const Graph& graph, const TargetProfile& profile,
                                     estimate::Runtime runtime) {
  if (profile.kind != TargetKind::kCortexM) return estimate::EstimateModel(graph, profile);
  MICA_ASSIGN_OR_RETURN(Estimate e, estimate::EstimateCortexM(graph, profile, runtime));
  if (runtime != estimate::Runtime::kTflm) {
    MICA_RETURN_IF_ERROR(estimate::AddRuntimeMemory(graph, profile, runtime, &e));
  }
  return e;
}

int RunSweep(const std::vector<std::string>& models, const std::vector<TargetProfile>& targets,
             estimate::Runtime runtime, int jobs, bool json, const std::string& jsonl,
             const std::string& summary_csv, const std::string& csv) {
  std::vector<std::vector<estimate::SweepRow>> rows(models.size());
  std::vector<std::string> layer_csv(csv.empty() ? 0 : models.size());
  std::atomic<size_t> next{0}, done{0};
  const bool progress = ::isatty(STDERR_FILENO) != 0;
  std::mutex progress_mu;
  auto work = [&] {
    for (size_t k = next++; k < models.size(); k = next++) {
      const std::string& path = models[k];
      absl::StatusOr<Graph> graph = LoadModelInput(path);
      std::vector<ProfileRun> runs;
      for (const TargetProfile& t : targets) {
        if (!graph.ok()) {
          rows[k].push_back(
              estimate::FailedSweepRow(path, t.name, std::string(graph.status().message())));
          continue;
        }
        absl::StatusOr<Estimate> e = EstimateFor(*graph, t, runtime);
        if (!e.ok()) {
          rows[k].push_back(estimate::FailedSweepRow(path, t.name, std::string(e.status().message())));
          continue;
        }
        rows[k].push_back(estimate::MakeSweepRow(path, t, *e));
        if (!csv.empty()) runs.push_back({t, *std::move(e), {}, {}, {}});
      }
      if (!csv.empty() && graph.ok()) {
        estimate::CheckReport one{path, &*graph, std::move(runs), false, true, MICA_VERSION};
        layer_csv[k] = estimate::RenderCheckCsv(one);
      }
      const size_t n = ++done;
      if (progress) {
        std::lock_guard<std::mutex> lock(progress_mu);
        std::cerr << "\rmica check: " << n << "/" << models.size() << " models" << std::flush;
      }
    }
  };
  std::vector<std::thread> workers;
  for (int j = 1; j < std::min<int>(jobs, static_cast<int>(models.size())); ++j) {
    workers.emplace_back(work);
  }
  work();
  for (std::thread& t : workers) t.join();
  if (progress) std::cerr << "\n";

  std::vector<estimate::SweepRow> all;
  bool failed = false;
  for (auto& r : rows) {
    for (auto& row : r) {
      failed |= !row.ok;
      all.push_back(std::move(row));
    }
  }
  std::cout << (json ? estimate::RenderSweepJsonl(all) : estimate::RenderSweepText(all));
  if (!jsonl.empty()) {
    if (absl::Status s = WriteFileBytes(jsonl, estimate::RenderSweepJsonl(all)); !s.ok()) {
      return Failure(std::string(s.message()));
    }
  }
  if (!summary_csv.empty()) {
    if (absl::Status s = WriteFileBytes(summary_csv, estimate::RenderSweepCsv(all)); !s.ok()) {
      return Failure(std::string(s.message()));
    }
  }
  if (!csv.empty()) {
    std::string text;
    for (size_t k = 0; k < layer_csv.size(); ++k) {
      if (layer_csv[k].empty()) continue;
      // One header for the whole file.
      const size_t body = text.empty() ? 0 : layer_csv[k].find('\n') + 1;
      text += layer_csv[k].substr(body);
    }
    if (absl::Status s = WriteFileBytes(csv, text); !s.ok()) return Failure(std::string(s.message()));
  }
  if (failed) return Failure("check: some models could not be checked (see the error rows)");
  return kExitOk;
}

// --backend qemu: runs the model on QEMU for a Cortex-M profile and returns the measured
// instructions (total and per operator) beside mica's estimate.
absl::StatusOr<estimate::Measurement> MeasureOnQemu(const Graph& graph, const ProfileRun& r) {
  const Subgraph& sg = graph.main();
  std::vector<std::vector<uint8_t>> inputs;
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    inputs.push_back(SeededInput(1 + i, sg.tensors[sg.inputs[i]]));
  }
  MICA_ASSIGN_OR_RETURN(kernels::Isa isa, TargetIsa(r.profile.name, ""));
  MICA_ASSIGN_OR_RETURN(DeviceRun run,
                        RunOnQemu(graph, isa, inputs, {}, "", true, r.profile.cortex_m.cpu));
  const fvp::SimulationResult& m = run.result;
  estimate::Measurement out;
  out.backend = "qemu";
  out.board = m.board;
  out.build = run.build;
  out.kernels = kernels::IsaName(run.isa);
  out.inputs = "SplitMix64 seed 1";
  out.total_instructions = static_cast<int64_t>(m.total_instructions);
  // QEMU counts instructions: the estimate compared is the estimated instructions (compute
  // cycles, without the flash wait states the cycle estimate adds).
  for (const auto& o : r.mica.ops) out.estimate_instructions += o.compute_cycles;
  out.arena_bytes = static_cast<int64_t>(m.arena_bytes);
  out.plan_bytes = static_cast<int64_t>(m.plan_bytes);
  for (const fvp::OpCount& op : m.op_counts) {
    estimate::MeasuredOp o;
    o.index = op.index;
    o.name = op.name;
    o.instructions = static_cast<int64_t>(op.instructions);
    for (const auto& e : r.mica.ops) {
      if (e.op_index == op.index) o.estimate_instructions = e.compute_cycles;
    }
    out.ops.push_back(std::move(o));
  }
  return out;
}

void PrintQemuMeasurement(const estimate::Measurement& m) {
  auto pct = [](double a, double b) {
    return b > 0 ? absl::StrFormat("%+.1f%%", 100.0 * (a - b) / b) : std::string("-");
  };
  std::cout << "\nMeasured on QEMU " << m.board << " (" << m.build << ", " << m.kernels
            << " kernels; exact instructions with -icount, not cycles; inputs: " << m.inputs
            << ")\n"
            << absl::StrFormat("  %-4s %-22s %14s %14s %9s\n", "op", "operator",
                               "instructions", "mica instr", "est/meas");
  for (const estimate::MeasuredOp& op : m.ops) {
    std::cout << absl::StrFormat("  %-4d %-22s %14d %14.0f %9s\n", op.index, op.name,
                                 op.instructions, op.estimate_instructions,
                                 pct(op.estimate_instructions,
                                     static_cast<double>(op.instructions)));
  }
  std::cout << absl::StrFormat("  %-27s %14d %14.0f %9s\n", "total (one inference)",
                               m.total_instructions, m.estimate_instructions,
                               pct(m.estimate_instructions,
                                   static_cast<double>(m.total_instructions)))
            << "  arena on the device: " << m.arena_bytes << " bytes; plan: " << m.plan_bytes
            << " bytes\n";
}

// Measures every Cortex-M profile of `report` on QEMU. With `print` the text tables go to
// stdout; otherwise the measurements are attached to the report (JSON `measured`).
int MeasureQemuProfiles(const Graph& graph, estimate::CheckReport* report, bool print) {
  int rc = kExitOk;
  for (ProfileRun& r : report->profiles) {
    if (r.profile.kind != TargetKind::kCortexM) {
      if (print) std::cout << "\nqemu: " << r.profile.name << " is not a Cortex-M profile (skipped)\n";
      continue;
    }
    absl::StatusOr<estimate::Measurement> m = MeasureOnQemu(graph, r);
    if (!m.ok()) {
      std::cerr << "mica: check: qemu: " << m.status().message() << "\n";
      rc = kExitFailure;
      continue;
    }
    if (print) {
      PrintQemuMeasurement(*m);
    } else {
      r.measured.push_back(*std::move(m));
    }
  }
  return rc;
}

// --backend corstone-300|310|320 with an installed FVP: the runner firmware (SSE-300 memory
// map) on the FVP; the FVP's --stat instruction count of the whole program and its counters.
int PrintFvpMeasurements(const Graph& graph, const std::string& platform) {
  const Subgraph& sg = graph.main();
  fvp::SimulationRequest req;
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    req.inputs.push_back(SeededInput(1 + i, sg.tensors[sg.inputs[i]]));
  }
  auto plan = runtime::CompilePlan(graph, {kernels::Isa::kMve, 0});
  if (!plan.ok()) {
    std::cerr << "mica: check: " << platform << ": " << plan.status().message() << "\n";
    return kExitFailure;
  }
  req.plan = plan->bytes;
  fvp::CorstoneOptions o;
  o.platform = platform;
  o.firmware = RunnerFirmware("m55-mve", "");
  fvp::CorstoneFvpSimulator sim(o);
  std::cerr << "mica: running on " << sim.name() << "...\n";
  auto r = sim.Run(req);
  if (!r.ok()) {
    std::cerr << "mica: check: " << r.status().message() << "\n";
    return kExitFailure;
  }
  std::cout << "\nMeasured on " << sim.name() << " (Cortex-M55, MVE kernels; FVP --stat counts "
            << "the whole program)\n";
  for (const auto& [cpu, insn] : sim.transcript().cpu_instructions) {
    std::cout << "  " << cpu << ": " << insn << " instructions\n";
  }
  for (const auto& [name, v] : sim.transcript().npu_counters) {
    std::cout << "  " << name << ": " << v << "\n";
  }
  std::cout << "  arena on the device: " << r->arena_bytes << " bytes\n";
  return kExitOk;
}

int RunCheck(const std::vector<std::string>& args) {
  ArgParser p("check");
  std::vector<std::string> models, profiles, configs, backends;
  bool compatibility = false, performance = false, json = false, per_layer = false;
  std::string output, system_config, memory_mode, csv, html, models_from, shard, jobs_text = "1",
      jsonl, summary_csv, method;
  p.Positional("MODEL", &models, 0, -1);
  p.Repeated("--target-profile", &profiles, "NAME[:OPTS]",
             "built-in target profile (see `mica targets`), optionally with its own "
             "Ethos-U configuration: NAME:system-config=S,memory-mode=M,arena-cache-size=BYTES "
             "(e.g. ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode="
             "Dedicated_Sram_384KB, Vela's command-line defaults)");
  p.Repeated("-t", &profiles, "NAME[:OPTS]", "same as --target-profile");
  p.Repeated("--target-config", &configs, "FILE[:OPTS]",
             "user target profile in protobuf text format (same OPTS)");
  p.Flag("--compatibility", &compatibility, "operator placement and reasons (default)");
  p.Flag("--performance", &performance, "cycles, memory, top operators");
  std::string runtime_name = "tflm";
  p.Option("--runtime", &runtime_name, "NAME",
          "runtime whose memory Cortex-M profiles report: tflm (default; TFLite Micro's arena), "
          "mica (mica's runtime), executorch (an ExecuTorch program's memory plan)");
  p.Repeated("--backend", &backends, "NAME",
             "extra backend printed beside mica's estimate: vela (Ethos-U), qemu (Cortex-M: "
             "measured instructions)");
  p.Option("--system-config", &system_config, "NAME",
           "Vela system config for every profile given (e.g. Ethos_U55_Deep_Embedded); refused "
           "unless it fits each of them (all Ethos-U of the config's family): otherwise use "
           "NAME:system-config=... per profile, which also overrides this flag");
  p.Option("--memory-mode", &memory_mode, "NAME",
           "Vela memory mode for every profile given (e.g. Sram_Only, Dedicated_Sram_384KB); "
           "refused unless valid for each of them; per profile: NAME:memory-mode=...");
  p.Flag("--per-layer", &per_layer,
         "also print every operator's row (cycles, share, bottleneck, full CPU reasons) per "
         "profile; implies --performance");
  p.Option("--html", &html, "FILE",
           "also write a self-contained HTML report (profiles, per-layer bars, memory timeline, "
           "advice) to FILE");
  p.Option("--csv", &csv, "FILE",
           "also write one row per profile x operator (per model) to FILE as CSV (columns in "
           "REPORT.md)");
  p.Flag("--json", &json, "print the report as JSON (schema mica.check/1; several models: one "
                          "JSON Lines row per model x profile)");
  p.Option("--output", &output, "FILE", "write the report to FILE (atomically) instead of stdout");
  p.Option("--models-from", &models_from, "FILE",
           "check the models listed in FILE (one path per line; blank lines and # comments "
           "skipped) besides those on the command line");
  p.Option("--shard", &shard, "I/N",
           "check only models I, I+N, I+2N, ... (1-based) of the list: N array jobs split a "
           "sweep with no coordination beyond the list");
  p.Option("--jobs", &jobs_text, "N", "check N models at once (default 1)");
  p.Option("--jsonl", &jsonl, "FILE",
           "several models: write one JSON object per model x profile to FILE (JSON Lines)");
  p.Option("--summary-csv", &summary_csv, "FILE",
           "several models: write one CSV row per model x profile to FILE");
  p.Option("--method", &method, "NAME",
           "ExecuTorch programs: the method to check (default: the first)");
  if (int rc = p.Parse(args); rc >= 0) return rc;

  if (!models_from.empty()) {
    absl::StatusOr<std::vector<std::string>> listed = ReadModelList(models_from);
    if (!listed.ok()) return Failure("check: " + std::string(listed.status().message()));
    models.insert(models.end(), listed->begin(), listed->end());
  }
  if (models.empty()) return UsageError("check: missing MODEL (or --models-from FILE)");
  const bool sweep = models.size() > 1 || !models_from.empty() || !shard.empty() ||
                     !jsonl.empty() || !summary_csv.empty();
  if (!shard.empty()) {
    absl::StatusOr<std::vector<std::string>> mine = Shard(models, shard);
    if (!mine.ok()) return UsageError("check: " + std::string(mine.status().message()));
    models = *std::move(mine);
  }
  int jobs = 0;
  if (!absl::SimpleAtoi(jobs_text, &jobs) || jobs < 1 || jobs > 256) {
    return UsageError("check: --jobs needs an integer in [1, 256], got '" + jobs_text + "'");
  }

  if (profiles.empty() && configs.empty()) {
    return UsageError("check: needs at least one --target-profile or --target-config (valid "
                      "profiles: " + absl::StrJoin(estimate::BuiltinTargetNames(), ", ") + ")");
  }
  bool want_vela = false, want_qemu = false;
  std::string fvp_platform;
  for (const std::string& b : backends) {
    if (b == "vela") {
      want_vela = true;
    } else if (b == "qemu") {
      want_qemu = true;
    } else if (b == "corstone-300" || b == "corstone-310" || b == "corstone-320") {
      auto program = fvp::FvpProgramFor(b);
      if (!program.ok() || fvp::FindProgram(*program).empty()) {
        return Failure("check: --backend " + b + ": " + fvp::FvpInstallHint(b));
      }
      fvp_platform = b;
    } else if (b != "mica") {
      return UsageError("check: unknown backend '" + b + "' (valid: mica, vela, qemu)");
    }
  }
  if (!fvp_platform.empty() && json) {
    return UsageError("check: --backend corstone-* prints text only (no --json)");
  }
  if (want_qemu || !fvp_platform.empty()) performance = true;
  // Vela contributes performance figures: asking for it implies --performance.
  if (want_vela) performance = true;
  if (per_layer || !csv.empty() || !html.empty()) performance = true;
  if (!compatibility && !performance) compatibility = true;
  absl::StatusOr<estimate::Runtime> parsed_runtime = estimate::ParseRuntime(runtime_name);
  if (!parsed_runtime.ok()) {
    return UsageError(absl::StrCat("check: --runtime: ", parsed_runtime.status().message()));
  }
  const estimate::Runtime runtime = *parsed_runtime;

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

  if (sweep && !method.empty()) {
    return UsageError("check: --method picks the method of one ExecuTorch program");
  }
  if (sweep) {
    if (want_vela || want_qemu || !fvp_platform.empty() || per_layer || !html.empty() ||
        !output.empty()) {
      return UsageError("check: --backend vela/qemu/corstone-*, --per-layer, --html and --output "
                        "describe one model; with several models use --jsonl/--summary-csv/--csv");
    }
    std::vector<TargetProfile> targets;
    for (const ProfileRun& r : runs) targets.push_back(r.profile);
    return RunSweep(models, targets, runtime, jobs, json, jsonl, summary_csv, csv);
  }

  const std::string& model_path = models[0];
  absl::StatusOr<Graph> graph = LoadModelInput(model_path, method);
  if (!graph.ok()) return Failure(std::string(graph.status().message()));
  if (graph->subgraphs.empty()) return Failure(model_path + ": model has no subgraph");
  if (want_vela && graph->source_format != ModelFormat::kTflite) {
    return Failure("check: --backend vela reads TFLite models only; " + model_path +
                   " is not one (drop --backend vela to get mica's own estimate)");
  }

  for (ProfileRun& r : runs) {
    absl::StatusOr<Estimate> e = EstimateFor(*graph, r.profile, runtime);
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

  estimate::CheckReport report{model_path, &*graph, std::move(runs),
                               compatibility, performance, MICA_VERSION};
  report.per_layer = per_layer;
  for (const auto& [path, render] :
       {std::pair{csv, &estimate::RenderCheckCsv}, std::pair{html, &estimate::RenderCheckHtml}}) {
    if (path.empty()) continue;
    if (IsSameFile(path, model_path)) {
      return Failure(absl::StrCat(path, ": is the model itself; choose another file"));
    }
    if (absl::Status s = WriteFileBytes(path, render(report)); !s.ok()) {
      return Failure(std::string(s.message()));
    }
  }
  int qemu_rc = kExitOk;
  if (want_qemu && json) qemu_rc = MeasureQemuProfiles(*graph, &report, /*print=*/false);
  std::string text = json ? estimate::RenderCheckJson(report) : estimate::RenderCheckText(report);
  if (!json) text += ExecuTorchNotes(*graph);
  if (!output.empty()) {
    if (IsSameFile(output, model_path)) {
      return Failure(absl::StrCat(output, ": is the model itself; the report needs another file"));
    }
    absl::Status s = WriteFileBytes(output, text);
    if (!s.ok()) return Failure(std::string(s.message()));
  } else {
    std::cout << text;
  }
  int rc = qemu_rc;
  if (want_qemu && !json) rc = MeasureQemuProfiles(*graph, &report, /*print=*/true);
  if (!fvp_platform.empty()) rc = std::max(rc, PrintFvpMeasurements(*graph, fvp_platform));
  // A backend the user asked for that failed is a failure of the command, not a footnote.
  for (const ProfileRun& r : report.profiles) {
    for (const std::string& e : r.backend_errors) {
      return Failure(absl::StrCat("check: ", r.profile.name, ": requested backend failed: ", e));
    }
  }
  return rc;
}

const Registration kCheck{
    {"check",
     "MODEL --target-profile NAME[:OPTS] [--target-profile NAME[:OPTS] ...] "
     "[--target-config FILE[:OPTS]] "
     "[--compatibility] [--performance] [--backend vela|qemu] [--system-config NAME] "
     "[--memory-mode NAME] [--json] [--output FILE]",
     "Check a model against Ethos-U / Cortex-M targets: placement, cycles, memory, advice",
     RunCheck, 20}};

}  // namespace
}  // namespace cli
}  // namespace mica
