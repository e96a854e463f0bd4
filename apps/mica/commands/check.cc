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
// JSON output (schema "mica.check/1") is described in libestimate/REPORT.md.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/base/status_macros.h"
#include "mica/command.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/report.h"
#include "mica/estimate/target.h"
#include "mica/fvp/subprocess.h"
#include "mica/fvp/vela.h"
#include "mica/json.h"
#include "mica/model/load.h"
#include "mica/table.h"

namespace mica {
namespace cli {
namespace {

using estimate::Advice;
using estimate::Bottleneck;
using estimate::Estimate;
using estimate::MemoryArea;
using estimate::OpEstimate;
using estimate::Placement;
using estimate::TargetKind;
using estimate::TargetProfile;

constexpr int kTopOperators = 5;
constexpr const char* kSchema = "mica.check/1";

struct ProfileRun {
  TargetProfile profile;
  Estimate mica;
  std::vector<Estimate> extra;       // other backends' figures (vela)
  std::vector<std::string> backend_errors;
  std::vector<Advice> advice;
};

int At(MemoryArea a) { return static_cast<int>(a); }

const MemoryArea kAreas[] = {MemoryArea::kSram, MemoryArea::kDram, MemoryArea::kOnChipFlash,
                             MemoryArea::kOffChipFlash};
const char* AreaTitle(MemoryArea a) {
  switch (a) {
    case MemoryArea::kSram: return "SRAM";
    case MemoryArea::kDram: return "DRAM";
    case MemoryArea::kOnChipFlash: return "on-chip flash";
    case MemoryArea::kOffChipFlash: return "off-chip flash";
  }
  return "";
}

std::string FormatName(ModelFormat f) {
  switch (f) {
    case ModelFormat::kTflite: return "TFLite";
    case ModelFormat::kOnnx: return "ONNX";
    case ModelFormat::kBuilt: return "built";
    case ModelFormat::kUnknown: break;
  }
  return "unknown";
}

// Returns a display form of a TFLite tensor name: the last ';'-separated part, tail-truncated.
std::string ShortName(const std::string& name, size_t max_len = 40) {
  std::string s = name.substr(name.rfind(';') == std::string::npos ? 0 : name.rfind(';') + 1);
  if (s.size() > max_len) s = "..." + s.substr(s.size() - (max_len - 3));
  return s;
}

std::string Mhz(double hz) { return absl::StrCat(FormatFixed(hz / 1e6, hz >= 1e8 ? 0 : 1), " MHz"); }
std::string KibText(double bytes) { return FormatFixed(bytes / 1024.0, 2); }
std::string Cycles(double c) { return FormatInt(static_cast<int64_t>(std::llround(c)), true); }

std::string FamilyTitle(estimate::EthosUFamily f) {
  switch (f) {
    case estimate::EthosUFamily::kU55: return "Ethos-U55";
    case estimate::EthosUFamily::kU65: return "Ethos-U65";
    case estimate::EthosUFamily::kU85: return "Ethos-U85";
  }
  return "Ethos-U";
}

std::string CpuTitle(const estimate::CortexMConfig& c) {
  std::string isa = c.has_mve ? "MVE" : c.has_dsp ? "DSP" : "scalar";
  return absl::StrCat(c.cpu, " (", isa, " kernels", c.has_fpu ? ", FPU" : ", no FPU", ")");
}

std::string MemoryText(const estimate::MemoryConfig& m, double core_hz, int axi_width) {
  double bytes_per_cycle = m.clock_scale * axi_width * m.ports_used;
  return absl::StrCat(estimate::MemoryAreaName(m.area), ": ", FormatFixed(bytes_per_cycle, 2),
                      " B/cycle (", FormatFixed(bytes_per_cycle * core_hz / 1e9, 2),
                      " GB/s), burst ", m.burst_length, " B, latency r", m.read_latency, "/w",
                      m.write_latency);
}

const estimate::MemoryConfig& Axi(const estimate::EthosUConfig& e, int port) {
  return port == 0 ? e.system.axi0 : e.system.axi1;
}

// ---------------------------------------------------------------------------------------------
// Text output.

std::string TargetTable(const std::vector<ProfileRun>& runs) {
  Table t;
  t.AddColumn("target");
  for (const ProfileRun& r : runs) t.AddColumn(r.profile.name);
  auto row = [&](const std::string& label, auto cell) {
    std::vector<std::string> cells = {label};
    for (const ProfileRun& r : runs) cells.push_back(cell(r.profile));
    t.AddRow(cells);
  };
  row("kind", [](const TargetProfile& p) {
    return p.kind == TargetKind::kEthosU
               ? absl::StrCat(FamilyTitle(p.ethos_u.family), ", ", p.ethos_u.macs, " MACs/cycle")
               : CpuTitle(p.cortex_m);
  });
  row("clock", [](const TargetProfile& p) { return Mhz(p.clock_hz()); });
  bool any_ethos = false;
  for (const ProfileRun& r : runs) any_ethos |= r.profile.kind == TargetKind::kEthosU;
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
    return absl::StrCat(estimate::MemoryAreaName(Axi(p.ethos_u, port).area), " (AXI", port, ")");
  });
  row("feature maps in", [](const TargetProfile& p) {
    if (p.kind != TargetKind::kEthosU) return std::string("SRAM");
    int port = p.ethos_u.memory_mode.arena_axi;
    return absl::StrCat(estimate::MemoryAreaName(Axi(p.ethos_u, port).area), " (AXI", port, ")");
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

std::string OperatorTable(const Graph& graph, const std::vector<ProfileRun>& runs) {
  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("output");
  for (const ProfileRun& r : runs) t.AddColumn(r.profile.name);
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
    for (const ProfileRun& r : runs) {
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
      for (const std::string& n : o.reasons) why.push_back(estimate::CompactNames(n));
      for (const std::string& n : o.notes) why.push_back(n);
      if (!why.empty()) {
        notes.push_back(runs.size() > 1 ? absl::StrCat(r.profile.name, ": ", absl::StrJoin(why, "; "))
                                        : absl::StrJoin(why, "; "));
      }
    }
    cells.push_back(absl::StrJoin(notes, " | "));
    t.AddRow(cells);
  }
  return t.Render(2);
}

std::string PerformanceTable(const std::vector<ProfileRun>& runs) {
  struct Col {
    const ProfileRun* run;
    const Estimate* e;
    std::string title;
  };
  std::vector<Col> cols;
  for (const ProfileRun& r : runs) {
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
  row("MACs", "MACs", [](const Col& c) { return FormatInt(c.e->macs, true); });
  row("NPU MAC utilisation", "%", [](const Col& c) {
    if (c.run->profile.kind != TargetKind::kEthosU || c.e->backend != "mica") return std::string("-");
    return FormatFixed(100 * estimate::MacUtilisation(*c.e, c.run->profile), 1);
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

std::string TopTable(const ProfileRun& r) {
  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("output");
  t.AddColumn("where");
  t.AddColumn("cycles", Align::kRight);
  t.AddColumn("share", Align::kRight);
  t.AddColumn("MACs", Align::kRight);
  t.AddColumn("bottleneck");
  for (const estimate::TopOperator& top : estimate::TopOperators(r.mica, kTopOperators)) {
    const OpEstimate& o = r.mica.ops[top.op_index];
    std::string out = ShortName(o.output_name, 32);
    std::string where = r.profile.kind == TargetKind::kCortexM ? o.kernel
                        : o.placement == Placement::kNpu       ? "NPU"
                                                               : "CPU (" + o.kernel + ")";
    t.AddRow({std::to_string(o.op_index), o.op_name, out, where, Cycles(o.total_cycles),
              FormatFixed(100 * top.share, 1) + "%", FormatInt(o.macs, true),
              estimate::BottleneckName(top.bottleneck)});
  }
  return t.Render(2);
}

std::string RenderText(const std::string& model_path, const Graph& graph,
                       const std::vector<ProfileRun>& runs, bool compatibility,
                       bool performance) {
  std::string out;
  int64_t const_bytes = 0, macs = 0;
  for (const Tensor& t : graph.main().tensors) {
    if (t.is_constant()) const_bytes += static_cast<int64_t>(t.num_bytes());
  }
  if (!runs.empty()) macs = runs.front().mica.macs;
  absl::StrAppend(&out, "Model: ", model_path, " (", FormatName(graph.source_format), ", ",
                  graph.main().ops.size(), " operators, ", FormatInt(macs, true), " MACs, ",
                  KibText(static_cast<double>(const_bytes)), " KiB constants)\n\n");
  absl::StrAppend(&out, "Target profiles\n", TargetTable(runs), "\n");
  if (compatibility) {
    absl::StrAppend(&out, "Operators (placement; Cortex-M: the kernel that runs)\n",
                    OperatorTable(graph, runs));
    for (const ProfileRun& r : runs) {
      if (r.profile.kind != TargetKind::kEthosU) continue;
      int n = static_cast<int>(r.mica.ops.size());
      absl::StrAppend(&out, "  ", r.profile.name, ": ", r.mica.npu_ops, " of ", n,
                      " operators on the NPU, ", r.mica.cpu_ops, " on the CPU (",
                      FormatFixed(n > 0 ? 100.0 * r.mica.cpu_ops / n : 0, 1), "% unsupported)\n");
    }
    absl::StrAppend(&out, "\n");
  }
  if (performance) {
    absl::StrAppend(&out, "Performance (cycles at each profile's clock; memory in KiB)\n",
                    PerformanceTable(runs), "\n");
    for (const ProfileRun& r : runs) {
      absl::StrAppend(&out, "Top operators by cycles: ", r.profile.name, "\n", TopTable(r), "\n");
    }
  }
  for (const ProfileRun& r : runs) {
    for (const std::string& err : r.backend_errors) {
      absl::StrAppend(&out, "Note: ", r.profile.name, ": ", err, "\n");
    }
    for (const std::string& n : r.mica.notes) {
      absl::StrAppend(&out, "Note: ", r.profile.name, ": ", n, "\n");
    }
  }
  if (!runs.empty()) absl::StrAppend(&out, "\n");
  for (const ProfileRun& r : runs) {
    absl::StrAppend(&out, "Advice for ", r.profile.name, "\n");
    int i = 1;
    for (const Advice& a : r.advice) {
      if (!performance && a.category == estimate::AdviceCategory::kPerformance &&
          r.advice.size() > 1) {
        continue;
      }
      absl::StrAppend(&out, "  ", i++, ". [", estimate::AdviceSeverityName(a.severity), ", ",
                      estimate::AdviceCategoryName(a.category), "] ", a.message, "\n");
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

// ---------------------------------------------------------------------------------------------
// JSON output (documented in libestimate/REPORT.md).

void JsonMemory(JsonWriter& w, const estimate::MemoryConfig& m) {
  w.BeginObject();
  w.Key("area").String(estimate::MemoryAreaName(m.area));
  w.Key("clock_scale").Double(m.clock_scale);
  w.Key("burst_length_bytes").Int(m.burst_length);
  w.Key("read_latency_cycles").Int(m.read_latency);
  w.Key("write_latency_cycles").Int(m.write_latency);
  w.Key("ports_used").Int(m.ports_used);
  w.Key("max_reads").Int(m.max_reads);
  w.Key("max_writes").Int(m.max_writes);
  w.EndObject();
}

void JsonCpu(JsonWriter& w, const estimate::CortexMConfig& c) {
  w.BeginObject();
  w.Key("cpu").String(c.cpu);
  w.Key("kernels").String(c.has_mve ? "mve" : c.has_dsp ? "dsp" : "scalar");
  w.Key("dsp").Bool(c.has_dsp);
  w.Key("mve").Bool(c.has_mve);
  w.Key("fpu").Bool(c.has_fpu);
  w.Key("clock_hz").Double(c.clock_hz, 12);
  w.Key("sram_bytes").Int(c.sram_bytes);
  w.Key("flash_bytes").Int(c.flash_bytes);
  w.Key("flash_wait_states").Int(c.flash_wait_states);
  w.EndObject();
}

void JsonTarget(JsonWriter& w, const TargetProfile& p) {
  w.BeginObject();
  w.Key("name").String(p.name);
  w.Key("kind").String(p.kind == TargetKind::kEthosU ? "ethos-u" : "cortex-m");
  w.Key("description").String(p.description);
  w.Key("origin").String(p.origin);
  w.Key("clock_hz").Double(p.clock_hz(), 12);
  if (p.kind == TargetKind::kEthosU) {
    const auto& e = p.ethos_u;
    w.Key("ethos_u").BeginObject();
    w.Key("family").String(estimate::EthosUFamilyName(e.family));
    w.Key("macs_per_cycle").Int(e.macs);
    w.Key("platform").String(e.platform);
    w.Key("system_config").BeginObject();
    w.Key("name").String(e.system.name);
    w.Key("core_clock_hz").Double(e.system.core_clock_hz, 12);
    w.Key("axi_width_bytes").Int(e.system.axi_width_bytes);
    w.Key("axi0");
    JsonMemory(w, e.system.axi0);
    w.Key("axi1");
    JsonMemory(w, e.system.axi1);
    w.EndObject();
    w.Key("memory_mode").BeginObject();
    w.Key("name").String(e.memory_mode.name);
    w.Key("const_area").String(estimate::MemoryAreaName(Axi(e, e.memory_mode.const_axi).area));
    w.Key("arena_area").String(estimate::MemoryAreaName(Axi(e, e.memory_mode.arena_axi).area));
    w.Key("cache_area").String(estimate::MemoryAreaName(Axi(e, e.memory_mode.cache_axi).area));
    w.Key("arena_cache_bytes").Int(e.memory_mode.arena_cache_bytes);
    w.EndObject();
    w.EndObject();
    w.Key("host_cpu");
  } else {
    w.Key("cortex_m");
  }
  JsonCpu(w, p.cortex_m);
  w.EndObject();
}

void JsonAreas(JsonWriter& w, const estimate::PerArea& v, const char* suffix) {
  for (MemoryArea a : kAreas) {
    w.Key(absl::StrCat(estimate::MemoryAreaName(a), suffix)).Double(v[At(a)], 15);
  }
}

void JsonPerformance(JsonWriter& w, const Estimate& e, const TargetProfile& p) {
  w.BeginObject();
  w.Key("backend").String(e.backend);
  w.Key("total_cycles").Double(e.total_cycles, 15);
  w.Key("npu_cycles").Double(e.npu_cycles, 15);
  w.Key("cpu_cycles").Double(e.cpu_cycles, 15);
  w.Key("host_cpu_cycles").Double(e.host_cpu_cycles, 15);
  JsonAreas(w, e.access_cycles, "_access_cycles");
  w.Key("memory_used").BeginObject();
  JsonAreas(w, e.memory_used_bytes, "_bytes");
  w.EndObject();
  w.Key("macs").Int(e.macs);
  w.Key("mac_utilisation").Double(e.backend == "mica" ? estimate::MacUtilisation(e, p) : 0, 6);
  w.Key("weights_original_bytes").Int(e.weights_original_bytes);
  w.Key("weights_encoded_bytes").Int(e.weights_encoded_bytes);
  w.Key("arena_bytes").Int(e.arena_bytes);
  w.Key("scratch_bytes").Int(e.scratch_bytes);
  w.Key("code_bytes").Int(e.code_bytes);
  double hz = e.clock_hz > 0 ? e.clock_hz : p.clock_hz();
  double s = hz > 0 ? e.total_cycles / hz : 0;
  w.Key("clock_hz").Double(hz, 12);
  w.Key("inference_seconds").Double(s, 9);
  w.Key("inferences_per_second").Double(s > 0 ? 1.0 / s : 0, 9);
  w.Key("notes").BeginArray();
  for (const std::string& n : e.notes) w.String(n);
  w.EndArray();
  w.EndObject();
}

std::string RenderJson(const std::string& model_path, const Graph& graph,
                       const std::vector<ProfileRun>& runs, bool compatibility,
                       bool performance) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema").String(kSchema);
  w.Key("mica_version").String(MICA_VERSION);
  w.Key("model").BeginObject();
  w.Key("path").String(model_path);
  w.Key("format").String(FormatName(graph.source_format));
  w.Key("operators").Int(static_cast<int64_t>(graph.main().ops.size()));
  int64_t const_bytes = 0;
  for (const Tensor& t : graph.main().tensors) {
    if (t.is_constant()) const_bytes += static_cast<int64_t>(t.num_bytes());
  }
  w.Key("constant_bytes").Int(const_bytes);
  w.EndObject();
  w.Key("compatibility_requested").Bool(compatibility);
  w.Key("performance_requested").Bool(performance);
  w.Key("profiles").BeginArray();
  for (const ProfileRun& r : runs) {
    const Estimate& e = r.mica;
    w.BeginObject();
    w.Key("name").String(r.profile.name);
    w.Key("target");
    JsonTarget(w, r.profile);
    w.Key("compatibility").BeginObject();
    w.Key("operators").Int(static_cast<int64_t>(e.ops.size()));
    w.Key("npu_operators").Int(e.npu_ops);
    w.Key("cpu_operators").Int(e.cpu_ops);
    std::set<std::string> cpu_types;
    for (const OpEstimate& o : e.ops) {
      if (r.profile.kind == TargetKind::kEthosU && o.placement == Placement::kCpu) {
        cpu_types.insert(o.op_name);
      }
    }
    w.Key("cpu_operator_types").BeginArray(true);
    for (const std::string& s : cpu_types) w.String(s);
    w.EndArray();
    w.EndObject();
    if (performance) {
      w.Key("performance");
      JsonPerformance(w, e, r.profile);
      w.Key("other_backends").BeginArray();
      for (const Estimate& x : r.extra) JsonPerformance(w, x, r.profile);
      w.EndArray();
      w.Key("backend_errors").BeginArray();
      for (const std::string& s : r.backend_errors) w.String(s);
      w.EndArray();
    }
    w.Key("operators").BeginArray();
    for (const OpEstimate& o : e.ops) {
      w.BeginObject();
      w.Key("index").Int(o.op_index);
      w.Key("type").String(o.op_name);
      w.Key("output").String(o.output_name);
      w.Key("placement").String(o.placement == Placement::kNpu ? "npu" : "cpu");
      w.Key("reasons").BeginArray();
      for (const std::string& s : o.reasons) w.String(s);
      w.EndArray();
      w.Key("kernel").String(o.kernel);
      if (performance) {
        w.Key("macs").Int(o.macs);
        w.Key("compute_cycles").Double(o.compute_cycles, 15);
        JsonAreas(w, o.access_cycles, "_access_cycles");
        w.Key("bytes").BeginObject();
        JsonAreas(w, o.bytes, "_bytes");
        w.EndObject();
        w.Key("total_cycles").Double(o.total_cycles, 15);
        w.Key("bottleneck").String(estimate::BottleneckName(o.bottleneck));
      }
      w.Key("notes").BeginArray();
      for (const std::string& s : o.notes) w.String(s);
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    if (performance) {
      w.Key("top_operators").BeginArray();
      for (const estimate::TopOperator& t : estimate::TopOperators(e, kTopOperators)) {
        w.BeginObject(true);
        w.Key("index").Int(t.op_index);
        w.Key("total_cycles").Double(t.total_cycles, 15);
        w.Key("share").Double(t.share, 6);
        w.Key("bottleneck").String(estimate::BottleneckName(t.bottleneck));
        w.EndObject();
      }
      w.EndArray();
    }
    w.Key("advice").BeginArray();
    for (const Advice& a : r.advice) {
      w.BeginObject();
      w.Key("category").String(estimate::AdviceCategoryName(a.category));
      w.Key("severity").String(estimate::AdviceSeverityName(a.severity));
      w.Key("message").String(a.message);
      if (!a.command.empty()) {
        w.Key("command").BeginArray(true);
        for (const std::string& arg : a.command) w.String(arg);
        w.EndArray();
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

// ---------------------------------------------------------------------------------------------

// The profiles of the command line, in order: each built-in (`--target-profile NAME[:OPTS]`) or
// file (`--target-config FILE[:OPTS]`) profile, then the global --system-config/--memory-mode,
// which must fit every profile (else InvalidArgument naming the one it does not fit), then the
// profile's own options, which override the global ones.
absl::StatusOr<std::vector<TargetProfile>> ResolveProfiles(
    const std::vector<std::string>& profiles, const std::vector<std::string>& configs,
    const std::string& system_config, const std::string& memory_mode) {
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
    MICA_ASSIGN_OR_RETURN(TargetProfile t, estimate::LoadTargetProfileFile(file));
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

  absl::StatusOr<std::vector<TargetProfile>> resolved =
      ResolveProfiles(profiles, configs, system_config, memory_mode);
  if (!resolved.ok()) return UsageError("check: " + std::string(resolved.status().message()));
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

  std::string text = json ? RenderJson(model_path, *graph, runs, compatibility, performance)
                          : RenderText(model_path, *graph, runs, compatibility, performance);
  if (!output.empty()) {
    absl::Status s = WriteFileBytes(output, std::vector<uint8_t>(text.begin(), text.end()));
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
