// Report content: top operators, memory fit and advice.
#include "mica/estimate/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/base/text.h"
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {
namespace {

std::string Percent(double fraction) { return absl::StrFormat("%.0f%%", 100 * fraction); }

std::string Kib(double bytes) { return absl::StrFormat("%.1f KiB", bytes / 1024.0); }

// The last ';'-separated part of a TFLite tensor name, tail-truncated to 40 characters.
std::string ShortName(const std::string& name) {
  size_t semi = name.rfind(';');
  std::string s = semi == std::string::npos ? name : name.substr(semi + 1);
  if (s.size() > 40) s = "..." + s.substr(s.size() - 37);
  return s;
}

std::string OpLabel(const OpEstimate& o) {
  return absl::StrCat("#", o.op_index, " ", o.op_name);
}

bool IsFloat(DType t) { return t == DType::kFloat32 || t == DType::kFloat16; }

// True when any operator's non-constant input or output is floating point.
bool HasFloatActivations(const Graph& graph) {
  if (graph.subgraphs.empty()) return false;
  const Subgraph& sg = graph.main();
  for (const Operator& op : sg.ops) {
    if (op.kind == OpKind::kQuantize || op.kind == OpKind::kDequantize) continue;
    for (const auto* list : {&op.inputs, &op.outputs}) {
      for (int32_t t : *list) {
        if (t >= 0 && t < static_cast<int32_t>(sg.tensors.size()) &&
            !sg.tensors[t].is_constant() && IsFloat(sg.tensors[t].dtype)) {
          return true;
        }
      }
    }
  }
  return false;
}

// The other way to a full-integer int8 model: TensorFlow's converter.
constexpr const char* kInt8Conversion =
    "TensorFlow Lite's TFLiteConverter with optimizations=[tf.lite.Optimize.DEFAULT], a "
    "representative_dataset and target_spec.supported_ops=[tf.lite.OpsSet.TFLITE_BUILTINS_INT8] "
    "works too";

// Returns `arg` quoted for a POSIX shell when it needs it.
std::string ShellWord(const std::string& arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    plain &= absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
             std::string("_./:=,@%+-").find(c) != std::string::npos;
  }
  if (plain) return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string CommandText(const std::vector<std::string>& command) {
  std::vector<std::string> words = {"mica"};
  for (const std::string& a : command) words.push_back(ShellWord(a));
  return absl::StrJoin(words, " ");
}

// `mica quantize MODEL --calibration random -o <stem>_int8.tflite` (in the current folder), or
// empty without a model path.
std::vector<std::string> QuantizeCommand(const std::string& model_path) {
  if (model_path.empty()) return {};
  std::string stem = model_path.substr(model_path.find_last_of('/') + 1);
  if (const size_t dot = stem.rfind('.'); dot != std::string::npos && dot > 0) stem.resize(dot);
  if (stem.empty()) stem = "model";
  return {"quantize", model_path, "--calibration", "random", "-o", stem + "_int8.tflite"};
}

// How to quantize: the mica command when there is one, and TensorFlow's converter.
std::string QuantizeHint(const std::vector<std::string>& command) {
  if (command.empty()) return absl::StrCat("e.g. ", kInt8Conversion);
  return absl::StrCat("e.g. `", CommandText(command),
                      "`, with a folder of representative inputs (.npy) in place of random, "
                      "which fixes shapes only; ",
                      kInt8Conversion);
}

bool IsNamedMode(const std::string& name) { return VelaMemoryMode(name).ok(); }

// The per-profile options that reproduce `profile` on top of what its command-line name (a
// built-in profile or a profile file) already gives, with `change` applied last. A change of
// memory mode drops a reproduced arena cache size (the new mode brings its own).
ProfileOptions ReproduceOptions(const TargetProfile& profile, const ProfileOptions& change) {
  const EthosUConfig& now = profile.ethos_u;
  absl::StatusOr<TargetProfile> base = profile.cli_flag == "--target-profile"
                                           ? FindTargetProfile(profile.cli_value)
                                           : absl::StatusOr<TargetProfile>(absl::NotFoundError(""));
  ProfileOptions o;
  if (VelaSystemConfig(now.system.name).ok() &&
      !(base.ok() && base->ethos_u.system.name == now.system.name)) {
    o.system_config = now.system.name;
  }
  bool same_mode = base.ok() && base->ethos_u.memory_mode.name == now.memory_mode.name;
  if (IsNamedMode(now.memory_mode.name) && !same_mode) o.memory_mode = now.memory_mode.name;
  int64_t expected_cache = same_mode ? base->ethos_u.memory_mode.arena_cache_bytes
                           : IsNamedMode(now.memory_mode.name)
                               ? VelaMemoryMode(now.memory_mode.name)->arena_cache_bytes
                               : now.memory_mode.arena_cache_bytes;
  if (now.memory_mode.arena_cache_bytes != expected_cache) {
    o.arena_cache_bytes = now.memory_mode.arena_cache_bytes;
  }
  if (!change.system_config.empty()) o.system_config = change.system_config;
  if (!change.memory_mode.empty()) {
    o.memory_mode = change.memory_mode;
    o.arena_cache_bytes = -1;
  }
  if (change.arena_cache_bytes >= 0) o.arena_cache_bytes = change.arena_cache_bytes;
  return o;
}

// `mica check MODEL <flag> <name>:<options> --performance` for `profile` changed by `change`,
// or empty when the profile has no command-line name or the changed profile would not be
// accepted (the same validation the command line applies).
std::vector<std::string> ChangedProfileCommand(const TargetProfile& profile,
                                               const ProfileOptions& change,
                                               const std::string& model_path) {
  if (profile.cli_flag.empty() || profile.kind != TargetKind::kEthosU) return {};
  TargetProfile trial = profile;
  if (!ApplyProfileOptions(&trial, change).ok()) return {};
  const ProfileOptions o = ReproduceOptions(profile, change);
  std::string spec = profile.cli_value;
  if (!o.empty()) spec += ":" + ProfileOptionsText(o);
  return {"check", model_path, profile.cli_flag, spec, "--performance"};
}

// A staging area large enough for `needed` bytes: the smallest of Vela's Dedicated_Sram sizes
// that holds it (in a dedicated mode), else an explicit arena-cache-size.
std::vector<std::string> LargerStagingCommand(const TargetProfile& profile, int64_t needed,
                                              const std::string& model_path) {
  const MemoryMode& mode = profile.ethos_u.memory_mode;
  if (mode.arena_axi != mode.cache_axi) {
    for (const char* name : {"Dedicated_Sram_256KB", "Dedicated_Sram_384KB",
                             "Dedicated_Sram_512KB"}) {
      absl::StatusOr<MemoryMode> m = VelaMemoryMode(name);
      if (m.ok() && m->arena_cache_bytes >= needed &&
          m->arena_cache_bytes > mode.arena_cache_bytes) {
        ProfileOptions change;
        change.memory_mode = name;
        std::vector<std::string> c = ChangedProfileCommand(profile, change, model_path);
        if (!c.empty()) return c;
      }
    }
  }
  ProfileOptions change;
  const int64_t step = 64 * 1024;
  change.arena_cache_bytes = (needed + step - 1) / step * step;
  return ChangedProfileCommand(profile, change, model_path);
}

// A memory mode that keeps more of the traffic in SRAM: Shared_Sram when feature maps live off
// SRAM, else Sram_Only (everything in SRAM); only modes valid for this system.
std::vector<std::string> FasterMemoryCommand(const TargetProfile& profile,
                                             const std::string& model_path) {
  const EthosUConfig& c = profile.ethos_u;
  const MemoryConfig& arena = c.memory_mode.arena_axi == 0 ? c.system.axi0 : c.system.axi1;
  std::vector<const char*> modes;
  if (arena.area != MemoryArea::kSram) modes.push_back("Shared_Sram");
  modes.push_back("Sram_Only");
  for (const char* name : modes) {
    if (c.memory_mode.name == name) continue;
    ProfileOptions change;
    change.memory_mode = name;
    std::vector<std::string> cmd = ChangedProfileCommand(profile, change, model_path);
    if (!cmd.empty()) return cmd;
  }
  return {};
}

// The next smaller built-in NPU of the same family beside the current profile.
std::vector<std::string> SmallerNpuCommand(const TargetProfile& profile,
                                           const std::string& model_path) {
  if (profile.cli_flag.empty()) return {};
  std::string smaller;
  int32_t best = 0;
  for (const std::string& name : BuiltinTargetNames()) {
    absl::StatusOr<TargetProfile> p = FindTargetProfile(name);
    if (!p.ok() || p->kind != TargetKind::kEthosU ||
        p->ethos_u.family != profile.ethos_u.family || p->ethos_u.macs >= profile.ethos_u.macs) {
      continue;
    }
    if (p->ethos_u.macs > best) best = p->ethos_u.macs, smaller = name;
  }
  if (smaller.empty()) return {};
  const ProfileOptions o = ReproduceOptions(profile, ProfileOptions());
  const std::string current =
      o.empty() ? profile.cli_value : profile.cli_value + ":" + ProfileOptionsText(o);
  return {"check", model_path, profile.cli_flag, current,
          "--target-profile", smaller, "--performance"};
}

}  // namespace

std::string CompactNames(const std::string& text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('\'', i);
    if (open == std::string::npos) break;
    size_t close = text.find('\'', open + 1);
    if (close == std::string::npos) break;
    out += text.substr(i, open + 1 - i);
    out += ShortName(text.substr(open + 1, close - open - 1));
    out += '\'';
    i = close + 1;
  }
  out += text.substr(i);
  return out;
}

const char* AdviceSeverityName(AdviceSeverity s) {
  switch (s) {
    case AdviceSeverity::kInfo: return "info";
    case AdviceSeverity::kWarning: return "warning";
    case AdviceSeverity::kError: return "error";
  }
  return "info";
}

const char* AdviceCategoryName(AdviceCategory c) {
  switch (c) {
    case AdviceCategory::kCompatibility: return "compatibility";
    case AdviceCategory::kMemory: return "memory";
    case AdviceCategory::kPerformance: return "performance";
  }
  return "performance";
}

std::vector<TopOperator> TopOperators(const Estimate& e, int n) {
  std::vector<TopOperator> all;
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const OpEstimate& o = e.ops[i];
    if (!(o.total_cycles > 0)) continue;
    TopOperator t;
    t.op_index = static_cast<int32_t>(i);
    t.total_cycles = o.total_cycles;
    t.share = e.total_cycles > 0 ? o.total_cycles / e.total_cycles : 0;
    t.bottleneck = o.bottleneck;
    all.push_back(t);
  }
  std::stable_sort(all.begin(), all.end(), [](const TopOperator& a, const TopOperator& b) {
    return a.total_cycles > b.total_cycles;
  });
  if (n >= 0 && static_cast<int>(all.size()) > n) all.resize(n);
  return all;
}

std::vector<MemoryFit> MemoryFits(const Estimate& e, const TargetProfile& profile) {
  std::vector<MemoryFit> fits;
  if (profile.kind == TargetKind::kCortexM) {
    MemoryFit ram;
    ram.area = MemoryArea::kSram;
    ram.used_bytes = static_cast<int64_t>(e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)]);
    ram.capacity_bytes = profile.cortex_m.sram_bytes;
    MemoryFit flash;
    flash.area = MemoryArea::kOnChipFlash;
    flash.used_bytes =
        static_cast<int64_t>(e.memory_used_bytes[static_cast<int>(MemoryArea::kOnChipFlash)]);
    flash.capacity_bytes = profile.cortex_m.flash_bytes;
    if (!e.memory.runtime.empty()) {
      // The runtime's own figures: the arena to reserve, and model + code in flash.
      ram.used_bytes = e.memory.arena_bytes;
      flash.used_bytes = e.memory.flash_bytes;
    }
    fits = {ram, flash};
  } else if (profile.ethos_u.memory_mode.arena_cache_bytes > 0) {
    MemoryFit sram;
    sram.area = MemoryArea::kSram;
    sram.used_bytes =
        static_cast<int64_t>(e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)]);
    sram.capacity_bytes = profile.ethos_u.memory_mode.arena_cache_bytes;
    fits = {sram};
  }
  return fits;
}

double MacUtilisation(const Estimate& e, const TargetProfile& profile) {
  if (profile.kind != TargetKind::kEthosU || !(e.npu_cycles > 0) || profile.ethos_u.macs <= 0) {
    return 0;
  }
  int64_t npu_macs = 0;
  for (const OpEstimate& o : e.ops) {
    if (o.placement == Placement::kNpu) npu_macs += o.macs;
  }
  return std::min(1.0, npu_macs / (e.npu_cycles * profile.ethos_u.macs));
}

std::vector<Advice> Advise(const Graph& graph, const TargetProfile& profile, const Estimate& e,
                           const std::string& model_path) {
  std::vector<Advice> out;
  auto add = [&](AdviceCategory c, AdviceSeverity sev, std::string m,
                 std::vector<std::string> command = {}) {
    out.push_back({c, sev, std::move(m), std::move(command)});
  };
  const bool ethos = profile.kind == TargetKind::kEthosU;
  const double total = e.total_cycles > 0 ? e.total_cycles : 1;

  // 1. Compatibility.
  if (HasFloatActivations(graph)) {
    const std::vector<std::string> quantize = QuantizeCommand(model_path);
    if (ethos) {
      add(AdviceCategory::kCompatibility, AdviceSeverity::kError,
          absl::StrCat("The model computes in floating point, which Ethos-U cannot run: quantize "
                       "it to a full-integer int8 model (",
                       QuantizeHint(quantize), ") so its operators can move to the NPU."),
          quantize);
    } else {
      add(AdviceCategory::kCompatibility, AdviceSeverity::kWarning,
          absl::StrCat("The model computes in floating point: CMSIS-NN kernels are int8/int16; "
                       "an int8 model (",
                       QuantizeHint(quantize),
                       ") cuts weights 4x and cycles by roughly an order of magnitude",
                       profile.cortex_m.has_fpu
                           ? "."
                           : absl::StrCat(" (", profile.cortex_m.cpu,
                                          " has no FPU, so float runs as soft-float).")),
          quantize);
    }
  }
  if (ethos && e.cpu_ops > 0) {
    double cpu_share = e.cpu_cycles / total;
    add(AdviceCategory::kCompatibility, AdviceSeverity::kWarning,
        absl::StrCat(e.cpu_ops, " of ", e.ops.size(), " operators fall back to the host ",
                     profile.cortex_m.cpu, " and take ", Percent(cpu_share),
                     " of the estimated time; making them NPU-compatible comes first."));
    // Group the fallbacks by operator type (the first one's reason stands for the group).
    std::map<std::string, std::vector<const OpEstimate*>> groups;
    std::vector<std::string> order;
    for (const OpEstimate& o : e.ops) {
      if (o.placement != Placement::kCpu) continue;
      if (!groups.count(o.op_name)) order.push_back(o.op_name);
      groups[o.op_name].push_back(&o);
    }
    for (size_t i = 0; i < order.size() && i < 3; ++i) {
      const auto& ops = groups[order[i]];
      std::vector<std::string> labels;
      for (size_t k = 0; k < ops.size() && k < 4; ++k) {
        labels.push_back(absl::StrCat("#", ops[k]->op_index));
      }
      if (ops.size() > 4) labels.push_back("...");
      std::string reason = ops.front()->reasons.empty() ? std::string("no reason given")
                                                        : ops.front()->reasons.front();
      add(AdviceCategory::kCompatibility, AdviceSeverity::kWarning,
          absl::StrCat(order[i], " x", ops.size(), " (", absl::StrJoin(labels, ", "),
                       ") on the CPU: ", CompactNames(reason), "."));
    }
  }
  std::set<std::string> unknown;
  for (const OpEstimate& o : e.ops) {
    for (const std::string& n : o.notes) {
      if (n.find("unknown operator") != std::string::npos) unknown.insert(o.op_name);
    }
  }
  if (!unknown.empty()) {
    add(AdviceCategory::kCompatibility, AdviceSeverity::kWarning,
        absl::StrCat("Operator(s) ", absl::StrJoin(unknown, ", "),
                     " are unknown to mica and not costed: the totals leave them out."));
  }

  // 2. Memory: fit, then memory-bound operators.
  bool staging_advised = false;
  for (const MemoryFit& f : MemoryFits(e, profile)) {
    if (f.fits()) continue;
    staging_advised = staging_advised || ethos;
    std::string what = f.area == MemoryArea::kSram ? "SRAM" : "flash";
    std::string head = absl::StrCat("Needs ", Kib(static_cast<double>(f.used_bytes)), " of ",
                                    what, " but ", profile.name, " has ",
                                    Kib(static_cast<double>(f.capacity_bytes)), ": ");
    if (!ethos) {
      std::string detail;
      if (!e.memory.runtime.empty()) {
        detail = absl::StrCat("does not fit in ", what, " by ", f.used_bytes - f.capacity_bytes,
                              " bytes (", e.memory.runtime, ")");
        if (f.area == MemoryArea::kSram && e.memory.peak_op_index >= 0) {
          std::vector<std::string> names;
          for (size_t k = 0; k < e.memory.peak_tensors.size() && k < 3; ++k) {
            const std::string& name = e.memory.peak_tensors[k];
            const size_t cut = name.rfind(';');
            names.push_back(absl::StrCat(
                "'", PrintableText(cut == std::string::npos ? name : name.substr(cut + 1)), "'"));
          }
          absl::StrAppend(&detail, "; the peak is at #", e.memory.peak_op_index, " ",
                          e.memory.peak_operator, " with ", absl::StrJoin(names, ", "), " live");
        }
        absl::StrAppend(&detail, "; ");
      }
      add(AdviceCategory::kMemory, AdviceSeverity::kError,
          absl::StrCat(head, detail,
                       f.area == MemoryArea::kSram
                           ? "shrink the largest activations (fewer channels, smaller input, "
                             "earlier downsampling) or pick a part with more RAM"
                           : "prune/cluster or shrink the weights, or pick a part with more "
                             "flash",
                       " (`mica targets` lists the built-in parts)."),
          {"targets"});
      continue;
    }
    // Ethos-U: the SRAM staging area is too small, so Vela spills to the slower memory.
    std::vector<std::string> command = LargerStagingCommand(profile, f.used_bytes, model_path);
    add(AdviceCategory::kMemory, AdviceSeverity::kWarning,
        absl::StrCat(head, "the staging area spills to the slower memory; reduce the activations",
                     command.empty() ? std::string(" or give the NPU more SRAM")
                                     : absl::StrCat(" or compare a larger staging area: `",
                                                    CommandText(command), "`"),
                     "."),
        command);
  }
  // Ethos-U with a dedicated staging SRAM smaller than the activation arena: the feature maps
  // that do not fit it live in the arena's memory (DRAM), which the model fits but pays for.
  const MemoryMode& mode = profile.ethos_u.memory_mode;
  if (ethos && !staging_advised && mode.arena_axi != mode.cache_axi &&
      mode.arena_cache_bytes > 0 && e.arena_bytes > mode.arena_cache_bytes) {
    std::vector<std::string> command = LargerStagingCommand(profile, e.arena_bytes, model_path);
    add(AdviceCategory::kMemory, AdviceSeverity::kInfo,
        absl::StrCat("The activation arena (", Kib(static_cast<double>(e.arena_bytes)),
                     ") is larger than the ", Kib(static_cast<double>(mode.arena_cache_bytes)),
                     " staging SRAM of ", profile.name,
                     ": the feature maps that do not fit it are read and written in the "
                     "arena's memory",
                     command.empty() ? std::string(".")
                                     : absl::StrCat("; compare a larger staging area: `",
                                                    CommandText(command), "`.")),
        command);
  }
  {
    std::map<Bottleneck, std::pair<double, std::vector<int32_t>>> bound;
    for (const OpEstimate& o : e.ops) {
      if (o.bottleneck == Bottleneck::kCompute || !(o.total_cycles > 0)) continue;
      auto& b = bound[o.bottleneck];
      b.first += o.total_cycles;
      b.second.push_back(o.op_index);
    }
    for (const auto& [b, v] : bound) {
      double share = v.first / total;
      if (share < 0.2) continue;
      std::vector<std::string> labels;
      for (size_t k = 0; k < v.second.size() && k < 4; ++k) {
        labels.push_back(absl::StrCat("#", v.second[k]));
      }
      if (v.second.size() > 4) labels.push_back("...");
      std::string fix;
      std::vector<std::string> command;
      if (!ethos) {
        fix = "flash wait states dominate: place weights in SRAM/TCM or enable the flash cache";
      } else if (b == Bottleneck::kSram) {
        fix = "feature-map traffic dominates: fuse or shrink activations";
      } else {
        command = FasterMemoryCommand(profile, model_path);
        const bool all_sram =
            !command.empty() && command[3].find("memory-mode=Sram_Only") != std::string::npos;
        fix = absl::StrCat(
            "weight/feature-map traffic to this memory dominates: smaller weights (pruning, "
            "clustering) help",
            command.empty() ? std::string()
                            : absl::StrCat(all_sram ? ", and if weights and feature maps fit in "
                                                      "SRAM compare `"
                                                    : ", and with feature maps in SRAM compare `",
                                           CommandText(command), "`"));
      }
      add(AdviceCategory::kMemory, AdviceSeverity::kWarning,
          absl::StrCat(Percent(share), " of the cycles are in operators limited by ",
                       BottleneckName(b), " bandwidth (", absl::StrJoin(labels, ", "), "): ",
                       fix, "."),
          command);
    }
  }

  // 3. The few expensive operators.
  for (const TopOperator& t : TopOperators(e, 3)) {
    if (t.share < 0.15 || e.ops.size() < 2) break;
    const OpEstimate& o = e.ops[t.op_index];
    std::string where =
        o.placement == Placement::kCpu && ethos ? " on the host CPU" : std::string();
    add(AdviceCategory::kPerformance, AdviceSeverity::kInfo,
        absl::StrCat(OpLabel(o), where, " ('", ShortName(o.output_name), "') takes ", Percent(t.share),
                     " of the cycles (", BottleneckName(t.bottleneck), "-bound",
                     o.kernel.empty() ? std::string() : absl::StrCat(", ", o.kernel),
                     "): fewer channels or a smaller kernel there pays off most."));
  }
  if (ethos) {
    double util = MacUtilisation(e, profile);
    if (e.npu_cycles > 0 && util < 0.1 && e.macs > 0) {
      std::vector<std::string> command = SmallerNpuCommand(profile, model_path);
      add(AdviceCategory::kPerformance, AdviceSeverity::kInfo,
          absl::StrCat("NPU MAC utilisation is ", absl::StrFormat("%.1f%%", 100 * util),
                       ": the model is too small or too memory-bound to use ",
                       profile.ethos_u.macs, " MACs/cycle; a smaller configuration may do",
                       command.empty() ? std::string()
                                       : absl::StrCat(" (compare `", CommandText(command), "`)"),
                       "."),
          command);
    }
  }
  if (out.empty()) {
    add(AdviceCategory::kPerformance, AdviceSeverity::kInfo,
        ethos ? absl::StrCat("All ", e.ops.size(), " operators run on the NPU; nothing to fix.")
              : "Nothing to fix: the model fits and no operator dominates.");
  }
  return out;
}

}  // namespace estimate
}  // namespace mica
