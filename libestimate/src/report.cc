// Report content: top operators, memory fit and advice.
#include "mica/estimate/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

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

std::vector<Advice> Advise(const Graph& graph, const TargetProfile& profile, const Estimate& e) {
  std::vector<Advice> out;
  auto add = [&](AdviceCategory c, std::string m) { out.push_back({c, std::move(m)}); };
  const bool ethos = profile.kind == TargetKind::kEthosU;
  const double total = e.total_cycles > 0 ? e.total_cycles : 1;

  // 1. Compatibility.
  if (HasFloatActivations(graph)) {
    if (ethos) {
      add(AdviceCategory::kCompatibility,
          "The model computes in floating point, which Ethos-U cannot run: quantize it to "
          "full-integer int8 (e.g. `mica quantize`) so its operators can move to the NPU.");
    } else {
      add(AdviceCategory::kCompatibility,
          absl::StrCat("The model computes in floating point: CMSIS-NN kernels are int8/int16; "
                       "quantizing to int8 cuts weights 4x and cycles by roughly an order of "
                       "magnitude",
                       profile.cortex_m.has_fpu
                           ? "."
                           : absl::StrCat(" (", profile.cortex_m.cpu,
                                          " has no FPU, so float runs as soft-float).")));
    }
  }
  if (ethos && e.cpu_ops > 0) {
    double cpu_share = e.cpu_cycles / total;
    add(AdviceCategory::kCompatibility,
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
      add(AdviceCategory::kCompatibility,
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
    add(AdviceCategory::kCompatibility,
        absl::StrCat("Operator(s) ", absl::StrJoin(unknown, ", "),
                     " are unknown to mica and not costed: the totals leave them out."));
  }

  // 2. Memory: fit, then memory-bound operators.
  for (const MemoryFit& f : MemoryFits(e, profile)) {
    if (f.fits()) continue;
    std::string what = f.area == MemoryArea::kSram ? "SRAM" : "flash";
    std::string fix = !ethos
        ? (f.area == MemoryArea::kSram
               ? "shrink the largest activations (fewer channels, smaller input, earlier "
                 "downsampling) or pick a part with more RAM"
               : "prune/cluster or shrink the weights, or pick a part with more flash")
        : "the staging area spills: choose a larger Dedicated_Sram size or reduce activations";
    add(AdviceCategory::kMemory,
        absl::StrCat("Needs ", Kib(static_cast<double>(f.used_bytes)), " of ", what, " but ",
                     profile.name, " has ", Kib(static_cast<double>(f.capacity_bytes)), ": ",
                     fix, "."));
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
      std::string fix =
          ethos ? (b == Bottleneck::kSram
                       ? "feature-map traffic dominates: fuse or shrink activations"
                       : "weight/feature-map traffic to this memory dominates: a faster memory "
                         "mode (e.g. Sram_Only or Dedicated_Sram) or smaller weights "
                         "(pruning, clustering) helps")
                : "flash wait states dominate: place weights in SRAM/TCM or enable the flash "
                  "cache";
      add(AdviceCategory::kMemory,
          absl::StrCat(Percent(share), " of the cycles are in operators limited by ",
                       BottleneckName(b), " bandwidth (", absl::StrJoin(labels, ", "), "): ",
                       fix, "."));
    }
  }

  // 3. The few expensive operators.
  int named = 0;
  for (const TopOperator& t : TopOperators(e, 3)) {
    if (t.share < 0.15 || e.ops.size() < 2) break;
    const OpEstimate& o = e.ops[t.op_index];
    std::string where =
        o.placement == Placement::kCpu && ethos ? " on the host CPU" : std::string();
    add(AdviceCategory::kPerformance,
        absl::StrCat(OpLabel(o), where, " ('", ShortName(o.output_name), "') takes ", Percent(t.share),
                     " of the cycles (", BottleneckName(t.bottleneck), "-bound",
                     o.kernel.empty() ? std::string() : absl::StrCat(", ", o.kernel),
                     "): fewer channels or a smaller kernel there pays off most."));
    ++named;
  }
  if (ethos) {
    double util = MacUtilisation(e, profile);
    if (e.npu_cycles > 0 && util < 0.1 && e.macs > 0) {
      add(AdviceCategory::kPerformance,
          absl::StrCat("NPU MAC utilisation is ", absl::StrFormat("%.1f%%", 100 * util),
                       ": the model is too small or too memory-bound to use ",
                       profile.ethos_u.macs, " MACs/cycle; a smaller configuration may do."));
    }
  }
  if (out.empty()) {
    add(AdviceCategory::kPerformance,
        ethos ? absl::StrCat("All ", e.ops.size(), " operators run on the NPU; nothing to fix.")
              : "Nothing to fix: the model fits and no operator dominates.");
  }
  (void)named;
  return out;
}

}  // namespace estimate
}  // namespace mica
