// The human-readable `mica check` report: aligned tables, notes and advice.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/text.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/render.h"
#include "mica/estimate/text_table.h"
#include "mica/model/analysis.h"
#include "report/render_internal.h"

namespace mica {
namespace estimate {
namespace {

using render_internal::At;
using render_internal::Axi;
using render_internal::ConstantBytes;
using render_internal::FormatName;
using render_internal::kAreas;

const char* AreaTitle(MemoryArea a) {
  switch (a) {
    case MemoryArea::kSram: return "SRAM";
    case MemoryArea::kDram: return "DRAM";
    case MemoryArea::kOnChipFlash: return "on-chip flash";
    case MemoryArea::kOffChipFlash: return "off-chip flash";
  }
  return "";
}

// Returns a display form of a tensor name: the last ';'-separated part, without the model's
// outer scope ("functional_1/", "sequential/") when the name has one, cut at the end. Layer
// names come first in converter-made names, so rows stay distinguishable
// ("depthwise_conv2d_1/BiasAdd/ReadVar...", not "...Add/ReadVariableOp/resource1").
std::string ShortName(const std::string& name, size_t max_len = 40) {
  std::string s = name.substr(name.rfind(';') == std::string::npos ? 0 : name.rfind(';') + 1);
  const size_t first = s.find('/');
  if (first != std::string::npos && s.find('/', first + 1) != std::string::npos) {
    s = s.substr(first + 1);
  }
  if (s.size() > max_len) s = s.substr(0, max_len - 3) + "...";
  return s;
}

// Caps a free-text table cell (reasons and notes can run to hundreds of characters: the full
// text is in --per-layer's reasons, the JSON and the CSV).
std::string CapCell(std::string s, size_t max_len = 100) {
  if (s.size() > max_len) s = s.substr(0, max_len - 3) + "...";
  return s;
}

// Profiles per table: wider tables are split so that no line runs to hundreds of characters
// (the target table's cells describe memories and are wide; the others hold numbers).
constexpr size_t kProfilesPerTable = 6;
constexpr size_t kProfilesPerTargetTable = 3;

// Splits `runs` into groups of at most `per_table`, in order.
std::vector<std::vector<ProfileReport>> Chunks(const std::vector<ProfileReport>& runs,
                                               size_t per_table = kProfilesPerTable) {
  std::vector<std::vector<ProfileReport>> out;
  for (size_t i = 0; i < runs.size(); i += per_table) {
    out.emplace_back(runs.begin() + static_cast<long>(i),
                     runs.begin() + static_cast<long>(std::min(runs.size(), i + per_table)));
  }
  return out;
}

std::string Mhz(double hz) { return absl::StrCat(FormatFixed(hz / 1e6, hz >= 1e8 ? 0 : 1), " MHz"); }
std::string KibText(double bytes) { return FormatFixed(bytes / 1024.0, 2); }
std::string Cycles(double c) { return FormatInt(static_cast<int64_t>(std::llround(c)), true); }

std::string CpuTitle(const CortexMConfig& c) {
  std::string isa = c.has_mve ? "MVE" : c.has_dsp ? "DSP" : "scalar";
  return absl::StrCat(c.cpu, " (", isa, " kernels", c.has_fpu ? ", FPU" : ", no FPU", ")");
}

std::string MemoryText(const MemoryConfig& m, double core_hz, int axi_width) {
  double bytes_per_cycle = m.clock_scale * axi_width * m.ports_used;
  return absl::StrCat(MemoryAreaName(m.area), ": ", FormatFixed(bytes_per_cycle, 2),
                      " B/cycle (", FormatFixed(bytes_per_cycle * core_hz / 1e9, 2),
                      " GB/s), burst ", m.burst_length, " B, latency r", m.read_latency, "/w",
                      m.write_latency);
}

std::string TargetTable(const std::vector<ProfileReport>& runs) {
  Table t;
  t.AddColumn("target");
  for (const ProfileReport& r : runs) t.AddColumn(r.profile.name);
  auto row = [&](const std::string& label, auto cell) {
    std::vector<std::string> cells = {label};
    for (const ProfileReport& r : runs) cells.push_back(cell(r.profile));
    t.AddRow(cells);
  };
  row("kind", [](const TargetProfile& p) {
    return p.kind == TargetKind::kEthosU
               ? absl::StrCat(EthosUFamilyTitle(p.ethos_u.family), ", ", p.ethos_u.macs,
                              " MACs/cycle")
               : CpuTitle(p.cortex_m);
  });
  row("clock", [](const TargetProfile& p) { return Mhz(p.clock_hz()); });
  bool any_ethos = false;
  for (const ProfileReport& r : runs) any_ethos |= r.profile.kind == TargetKind::kEthosU;
  if (any_ethos) {
    row("system config", [](const TargetProfile& p) {
      return p.kind == TargetKind::kEthosU ? p.ethos_u.system.name : std::string("-");
    });
  }
  if (any_ethos) row("memory mode", [](const TargetProfile& p) {
    if (p.kind != TargetKind::kEthosU) return std::string("-");
    const auto& m = p.ethos_u.memory_mode;
    return absl::StrCat(m.name, m.arena_cache_bytes > 0
                                    ? absl::StrCat(" (staging ", m.arena_cache_bytes / 1024, " KiB)")
                                    : std::string());
  });
  row("weights in", [](const TargetProfile& p) {
    if (p.kind != TargetKind::kEthosU) return std::string("flash");
    int port = p.ethos_u.memory_mode.const_axi;
    return absl::StrCat(MemoryAreaName(Axi(p.ethos_u, port).area), " (AXI", port, ")");
  });
  row("feature maps in", [](const TargetProfile& p) {
    if (p.kind != TargetKind::kEthosU) return std::string("SRAM");
    int port = p.ethos_u.memory_mode.arena_axi;
    return absl::StrCat(MemoryAreaName(Axi(p.ethos_u, port).area), " (AXI", port, ")");
  });
  if (any_ethos) {
    for (int port : {0, 1}) {
      row(absl::StrCat("AXI", port), [port](const TargetProfile& p) {
        if (p.kind != TargetKind::kEthosU) return std::string("-");
        return MemoryText(Axi(p.ethos_u, port), p.ethos_u.system.core_clock_hz,
                          p.ethos_u.system.axi_width_bytes);
      });
    }
    row("host CPU", [](const TargetProfile& p) {
      if (p.kind != TargetKind::kEthosU) return std::string("-");
      return absl::StrCat(p.cortex_m.cpu, " @ ", Mhz(p.cortex_m.clock_hz),
                          p.ethos_u.platform.empty() ? std::string()
                                                     : absl::StrCat(" (", p.ethos_u.platform, ")"));
    });
  }
  row("SRAM / flash", [](const TargetProfile& p) {
    if (p.kind != TargetKind::kCortexM) return std::string("-");
    return absl::StrCat(p.cortex_m.sram_bytes / 1024, " KiB / ", p.cortex_m.flash_bytes / 1024,
                        " KiB", p.cortex_m.flash_wait_states > 0
                                    ? absl::StrCat(", ", p.cortex_m.flash_wait_states, " wait state(s)")
                                    : std::string());
  });
  return t.Render(2);
}

std::string OperatorTable(const Graph& graph, const std::vector<ProfileReport>& runs) {
  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("output");
  for (const ProfileReport& r : runs) t.AddColumn(r.profile.name);
  t.AddColumn("notes");
  const Subgraph& sg = graph.main();
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    std::vector<std::string> cells = {std::to_string(i), std::string(sg.ops[i].name())};
    std::string out_name;
    if (!sg.ops[i].outputs.empty() && sg.ops[i].outputs[0] >= 0 &&
        sg.ops[i].outputs[0] < static_cast<int32_t>(sg.tensors.size())) {
      out_name = sg.tensors[sg.ops[i].outputs[0]].name;
    }
    cells.push_back(ShortName(out_name));
    std::vector<std::string> notes;
    for (const ProfileReport& r : runs) {
      if (i >= r.mica.ops.size()) {
        cells.push_back("?");
        continue;
      }
      const OpEstimate& o = r.mica.ops[i];
      if (r.profile.kind == TargetKind::kCortexM) {
        cells.push_back(o.kernel);
      } else {
        cells.push_back(o.placement == Placement::kNpu ? "NPU" : "CPU");
      }
      std::vector<std::string> why;
      for (const std::string& n : o.reasons) why.push_back(CompactNames(n));
      for (const std::string& n : o.notes) why.push_back(n);
      if (!why.empty()) {
        notes.push_back(runs.size() > 1 ? absl::StrCat(r.profile.name, ": ", absl::StrJoin(why, "; "))
                                        : absl::StrJoin(why, "; "));
      }
    }
    cells.push_back(CapCell(absl::StrJoin(notes, " | ")));
    t.AddRow(cells);
  }
  return t.Render(2);
}

std::string PerformanceTable(const std::vector<ProfileReport>& runs) {
  struct Col {
    const ProfileReport* run;
    const Estimate* e;
    std::string title;
  };
  std::vector<Col> cols;
  for (const ProfileReport& r : runs) {
    cols.push_back({&r, &r.mica, r.profile.name});
    for (const Estimate& x : r.extra) {
      cols.push_back({&r, &x, absl::StrCat(r.profile.name, " (", x.backend, ")")});
    }
  }
  Table t;
  t.AddColumn("metric");
  t.AddColumn("unit");
  for (const Col& c : cols) t.AddColumn(c.title, Align::kRight);
  auto row = [&](const std::string& metric, const std::string& unit, auto cell) {
    std::vector<std::string> cells = {metric, unit};
    for (const Col& c : cols) cells.push_back(cell(c));
    t.AddRow(cells);
  };
  row("total cycles", "cycles", [](const Col& c) { return Cycles(c.e->total_cycles); });
  row("NPU cycles", "cycles", [](const Col& c) {
    return c.run->profile.kind == TargetKind::kEthosU ? Cycles(c.e->npu_cycles) : "-";
  });
  row("CPU cycles", "cycles", [](const Col& c) {
    if (c.e->backend != "mica") return std::string("-");
    if (c.run->profile.kind == TargetKind::kCortexM) return Cycles(c.e->cpu_cycles);
    return c.e->cpu_ops > 0
               ? absl::StrCat(Cycles(c.e->host_cpu_cycles), " @host")
               : std::string("0");
  });
  for (MemoryArea a : kAreas) {
    row(absl::StrCat(AreaTitle(a), " access cycles"), "cycles",
        [a](const Col& c) { return Cycles(c.e->access_cycles[At(a)]); });
  }
  row("MACs (on the NPU for Ethos-U)", "MACs",
      [](const Col& c) { return FormatInt(c.e->macs, true); });
  row("NPU MAC utilisation", "%", [](const Col& c) {
    if (c.run->profile.kind != TargetKind::kEthosU || c.e->backend != "mica") return std::string("-");
    return FormatFixed(100 * MacUtilisation(*c.e, c.run->profile), 1);
  });
  for (MemoryArea a : kAreas) {
    row(absl::StrCat(AreaTitle(a), " used"), "KiB",
        [a](const Col& c) { return KibText(c.e->memory_used_bytes[At(a)]); });
  }
  row("weights (original)", "KiB",
      [](const Col& c) { return KibText(static_cast<double>(c.e->weights_original_bytes)); });
  row("weights (encoded)", "KiB", [](const Col& c) {
    return c.run->profile.kind == TargetKind::kEthosU
               ? KibText(static_cast<double>(c.e->weights_encoded_bytes)) : std::string("-");
  });
  row("activation arena", "KiB", [](const Col& c) {
    return c.e->backend == "mica" ? KibText(static_cast<double>(c.e->arena_bytes)) : "-";
  });
  row("inference time", "ms", [](const Col& c) {
    double hz = c.e->clock_hz > 0 ? c.e->clock_hz : c.run->profile.clock_hz();
    return FormatFixed(hz > 0 ? 1e3 * c.e->total_cycles / hz : 0, 3);
  });
  row("inferences/s", "1/s", [](const Col& c) {
    double hz = c.e->clock_hz > 0 ? c.e->clock_hz : c.run->profile.clock_hz();
    double s = hz > 0 ? c.e->total_cycles / hz : 0;
    return s > 0 ? FormatFixed(1.0 / s, 1) : std::string("-");
  });
  return t.Render(2);
}

// One row per operator: the top `n` by cycles (n > 0), or every operator in order (n = 0, with
// the full CPU-fallback reasons).
std::string LayerTable(const ProfileReport& r, int n) {
  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("output");
  t.AddColumn("where");
  t.AddColumn("cycles", Align::kRight);
  t.AddColumn("share", Align::kRight);
  t.AddColumn("MACs", Align::kRight);
  t.AddColumn("bottleneck");
  if (n == 0) t.AddColumn("why on the CPU / notes");
  std::vector<TopOperator> rows;
  if (n > 0) {
    rows = TopOperators(r.mica, n);
  } else {
    for (size_t i = 0; i < r.mica.ops.size(); ++i) {
      const OpEstimate& o = r.mica.ops[i];
      TopOperator row;
      row.op_index = static_cast<int32_t>(i);
      row.total_cycles = o.total_cycles;
      row.share = r.mica.total_cycles > 0 ? o.total_cycles / r.mica.total_cycles : 0;
      row.bottleneck = o.bottleneck;
      rows.push_back(row);
    }
  }
  for (const TopOperator& top : rows) {
    const OpEstimate& o = r.mica.ops[top.op_index];
    std::string out = ShortName(o.output_name, 32);
    std::string where = r.profile.kind == TargetKind::kCortexM ? o.kernel
                        : o.placement == Placement::kNpu       ? "NPU"
                                                               : "CPU (" + o.kernel + ")";
    std::vector<std::string> cells = {
        std::to_string(o.op_index), o.op_name, out, where, Cycles(o.total_cycles),
        FormatFixed(100 * top.share, 1) + "%", FormatInt(o.macs, true),
        BottleneckName(top.bottleneck)};
    if (n == 0) {
      std::vector<std::string> why(o.reasons.begin(), o.reasons.end());
      why.insert(why.end(), o.notes.begin(), o.notes.end());
      cells.push_back(absl::StrJoin(why, "; "));
    }
    t.AddRow(cells);
  }
  return t.Render(2);
}

// The memory section of one Cortex-M profile: the arena to reserve (head and tail), the peak,
// flash, and a fit verdict per memory.
std::string MemoryText(const ProfileReport& r) {
  const RuntimeMemory& m = r.mica.memory;
  std::string out = absl::StrCat("Memory for ", r.profile.name, " (runtime ", m.runtime, ": ",
                                 m.basis, ")\n");
  absl::StrAppend(&out, "  arena to reserve  ", FormatInt(m.arena_bytes, true), " bytes = head ",
                  FormatInt(m.head_bytes, true), " (activations and kernel scratch, planned "
                  "together; scratch requests ", FormatInt(m.scratch_bytes, true),
                  " in all) + tail ", FormatInt(m.tail_bytes, true), " (persistent)\n");
  if (!m.tail.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, bytes] : m.tail) parts.push_back(absl::StrCat(name, " ", bytes));
    absl::StrAppend(&out, "  tail              ", absl::StrJoin(parts, ", "), "\n");
  }
  if (m.peak_op_index >= 0) {
    std::vector<std::string> names;
    for (const std::string& t : m.peak_tensors) names.push_back(PrintableText(ShortName(t)));
    absl::StrAppend(&out, "  peak              operator #", m.peak_op_index, " ",
                    m.peak_operator, "; live: ", absl::StrJoin(names, ", "), "\n");
  }
  absl::StrAppend(&out, "  flash             ", FormatInt(m.flash_bytes, true), " bytes (model ",
                  FormatInt(m.model_flash_bytes, true), " + runtime and kernel code ",
                  FormatInt(m.code_flash_bytes, true), ")\n");
  auto verdict = [](const char* what, int64_t need, int64_t have) {
    if (have <= 0) return absl::StrCat(what, " size unknown: no verdict");
    if (need <= have) {
      return absl::StrCat("fits in ", what, " (", FormatInt(have, true), " bytes) with ",
                          FormatInt(have - need, true), " bytes to spare");
    }
    return absl::StrCat("does not fit in ", what, " (", FormatInt(have, true), " bytes) by ",
                        FormatInt(need - have, true), " bytes");
  };
  absl::StrAppend(&out, "  SRAM              ", verdict("SRAM", m.arena_bytes, m.sram_bytes),
                  "\n");
  absl::StrAppend(&out, "  flash             ",
                  verdict("flash", m.flash_bytes, m.flash_capacity_bytes), "\n");
  return out;
}

}  // namespace

std::string RenderCheckText(const CheckReport& report) {
  const Graph& graph = *report.graph;
  const std::vector<ProfileReport>& runs = report.profiles;
  const std::string& model_path = report.model_path;
  const bool compatibility = report.compatibility, performance = report.performance;
  std::string out;
  const int64_t const_bytes = ConstantBytes(graph);
  // The model's own MACs, whatever runs them (an Ethos-U estimate counts its NPU's only).
  const int64_t macs = AnalyzeCost(graph.main()).total_macs;
  absl::StrAppend(&out, "Model: ", model_path, " (", FormatName(graph.source_format), ", ",
                  graph.main().ops.size(), " operators, ", FormatInt(macs, true), " MACs, ",
                  KibText(static_cast<double>(const_bytes)), " KiB constants)\n\n");
  absl::StrAppend(&out, "Target profiles\n");
  for (const std::vector<ProfileReport>& chunk : Chunks(runs, kProfilesPerTargetTable)) {
    absl::StrAppend(&out, TargetTable(chunk), "\n");
  }
  if (compatibility) {
    absl::StrAppend(&out, "Operators (placement; Cortex-M: the kernel that runs)\n");
    for (const std::vector<ProfileReport>& chunk : Chunks(runs)) {
      absl::StrAppend(&out, OperatorTable(graph, chunk));
    }
    for (const ProfileReport& r : runs) {
      if (r.profile.kind != TargetKind::kEthosU) continue;
      int n = static_cast<int>(r.mica.ops.size());
      absl::StrAppend(&out, "  ", r.profile.name, ": ", r.mica.npu_ops, " of ", n,
                      " operators on the NPU, ", r.mica.cpu_ops, " on the CPU (",
                      FormatFixed(n > 0 ? 100.0 * r.mica.cpu_ops / n : 0, 1), "% unsupported)\n");
    }
    absl::StrAppend(&out, "\n");
  }
  if (performance) {
    absl::StrAppend(&out, "Performance (cycles at each profile's clock; memory in KiB)\n");
    for (const std::vector<ProfileReport>& chunk : Chunks(runs)) {
      absl::StrAppend(&out, PerformanceTable(chunk), "\n");
    }
    for (const ProfileReport& r : runs) {
      absl::StrAppend(&out, "Top operators by cycles: ", r.profile.name, "\n",
                      LayerTable(r, kCheckTopOperators), "\n");
    }
  }
  if (report.per_layer) {
    for (const ProfileReport& r : runs) {
      absl::StrAppend(&out, "Per layer: ", r.profile.name, "\n", LayerTable(r, 0), "\n");
    }
  }
  for (const ProfileReport& r : runs) {
    for (const std::string& err : r.backend_errors) {
      absl::StrAppend(&out, "Note: ", r.profile.name, ": ", err, "\n");
    }
    for (const std::string& n : r.mica.notes) {
      absl::StrAppend(&out, "Note: ", r.profile.name, ": ", n, "\n");
    }
  }
  if (!runs.empty()) absl::StrAppend(&out, "\n");
  for (const ProfileReport& r : runs) {
    if (!r.mica.memory.runtime.empty()) absl::StrAppend(&out, MemoryText(r), "\n");
  }
  for (const ProfileReport& r : runs) {
    absl::StrAppend(&out, "Advice for ", r.profile.name, "\n");
    int i = 1;
    for (const Advice& a : r.advice) {
      if (!performance && a.category == AdviceCategory::kPerformance &&
          r.advice.size() > 1) {
        continue;
      }
      absl::StrAppend(&out, "  ", i++, ". [", AdviceSeverityName(a.severity), ", ",
                      AdviceCategoryName(a.category), "] ", a.message, "\n");
    }
    absl::StrAppend(&out, "\n");
  }
  if (performance) {
    absl::StrAppend(&out,
                    "Estimates from mica's static cost models (Ethos-U: written from Vela's "
                    "documented behaviour; Cortex-M: calibrated on CMSIS-NN instruction counts).\n");
  }
  return out;
}

}  // namespace estimate
}  // namespace mica
