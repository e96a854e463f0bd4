// The machine-readable `mica check` report: one JSON document, schema mica.check/1
// (libestimate/REPORT.md documents every field).
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mica/estimate/json_writer.h"
#include "mica/estimate/render.h"
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

void JsonMemory(JsonWriter& w, const MemoryConfig& m) {
  w.BeginObject();
  w.Key("area").String(MemoryAreaName(m.area));
  w.Key("clock_scale").Double(m.clock_scale);
  w.Key("burst_length_bytes").Int(m.burst_length);
  w.Key("read_latency_cycles").Int(m.read_latency);
  w.Key("write_latency_cycles").Int(m.write_latency);
  w.Key("ports_used").Int(m.ports_used);
  w.Key("max_reads").Int(m.max_reads);
  w.Key("max_writes").Int(m.max_writes);
  w.EndObject();
}

void JsonCpu(JsonWriter& w, const CortexMConfig& c) {
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
    w.Key("family").String(EthosUFamilyName(e.family));
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
    w.Key("const_area").String(MemoryAreaName(Axi(e, e.memory_mode.const_axi).area));
    w.Key("arena_area").String(MemoryAreaName(Axi(e, e.memory_mode.arena_axi).area));
    w.Key("cache_area").String(MemoryAreaName(Axi(e, e.memory_mode.cache_axi).area));
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

void JsonAreas(JsonWriter& w, const PerArea& v, const char* suffix) {
  for (MemoryArea a : kAreas) {
    w.Key(absl::StrCat(MemoryAreaName(a), suffix)).Double(v[At(a)], 15);
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
  w.Key("mac_utilisation").Double(e.backend == "mica" ? MacUtilisation(e, p) : 0, 6);
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

void JsonOperator(JsonWriter& w, const OpEstimate& o, bool performance) {
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
    w.Key("bottleneck").String(BottleneckName(o.bottleneck));
  }
  w.Key("notes").BeginArray();
  for (const std::string& s : o.notes) w.String(s);
  w.EndArray();
  w.EndObject();
}

void JsonCompatibility(JsonWriter& w, const ProfileReport& r) {
  const Estimate& e = r.mica;
  w.BeginObject();
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
}

// The memory a deployment reserves with the chosen runtime, and whether it fits.
void JsonMemory(JsonWriter& w, const RuntimeMemory& m) {
  w.BeginObject();
  w.Key("runtime").String(m.runtime);
  w.Key("basis").String(m.basis);
  w.Key("arena_bytes").Int(m.arena_bytes);
  w.Key("arena_head_bytes").Int(m.head_bytes);
  w.Key("arena_scratch_bytes").Int(m.scratch_bytes);
  w.Key("arena_tail_bytes").Int(m.tail_bytes);
  w.Key("arena_tail").BeginObject();
  for (const auto& [name, bytes] : m.tail) w.Key(name).Int(bytes);
  w.EndObject();
  w.Key("flash_bytes").Int(m.flash_bytes);
  w.Key("model_flash_bytes").Int(m.model_flash_bytes);
  w.Key("code_flash_bytes").Int(m.code_flash_bytes);
  w.Key("sram_bytes").Int(m.sram_bytes);
  w.Key("fits_sram").Bool(m.sram_bytes <= 0 || m.arena_bytes <= m.sram_bytes);
  w.Key("sram_margin_bytes").Int(m.sram_bytes > 0 ? m.sram_bytes - m.arena_bytes : 0);
  w.Key("flash_capacity_bytes").Int(m.flash_capacity_bytes);
  w.Key("fits_flash").Bool(m.flash_capacity_bytes <= 0 || m.flash_bytes <= m.flash_capacity_bytes);
  w.Key("flash_margin_bytes")
      .Int(m.flash_capacity_bytes > 0 ? m.flash_capacity_bytes - m.flash_bytes : 0);
  w.Key("peak_operator_index").Int(m.peak_op_index);
  w.Key("peak_operator").String(m.peak_operator);
  w.Key("peak_tensors").BeginArray(true);
  for (const std::string& t : m.peak_tensors) w.String(t);
  w.EndArray();
  w.EndObject();
}

// A simulator run: exact instructions per inference and per operator beside mica's estimate.
void JsonMeasurement(JsonWriter& w, const Measurement& m) {
  auto ratio = [](double est, int64_t measured) {
    return measured > 0 ? est / static_cast<double>(measured) : 0.0;
  };
  w.BeginObject();
  w.Key("backend").String(m.backend);
  w.Key("board").String(m.board);
  w.Key("build").String(m.build);
  w.Key("kernels").String(m.kernels);
  w.Key("inputs").String(m.inputs);
  w.Key("unit").String("instructions");
  w.Key("total_instructions").Int(m.total_instructions);
  w.Key("estimate_instructions").Double(m.estimate_instructions);
  w.Key("estimate_over_measured").Double(ratio(m.estimate_instructions, m.total_instructions));
  w.Key("arena_bytes").Int(m.arena_bytes);
  w.Key("plan_bytes").Int(m.plan_bytes);
  w.Key("operators").BeginArray();
  for (const MeasuredOp& o : m.ops) {
    w.BeginObject(true);
    w.Key("index").Int(o.index);
    w.Key("name").String(o.name);
    w.Key("instructions").Int(o.instructions);
    w.Key("estimate_instructions").Double(o.estimate_instructions);
    w.Key("estimate_over_measured").Double(ratio(o.estimate_instructions, o.instructions));
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void JsonProfile(JsonWriter& w, const ProfileReport& r, bool performance) {
  const Estimate& e = r.mica;
  w.BeginObject();
  w.Key("name").String(r.profile.name);
  w.Key("target");
  JsonTarget(w, r.profile);
  w.Key("compatibility");
  JsonCompatibility(w, r);
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
  if (!e.memory.runtime.empty()) {
    w.Key("memory");
    JsonMemory(w, e.memory);
  }
  if (!r.measured.empty()) {
    w.Key("measured").BeginArray();
    for (const Measurement& m : r.measured) JsonMeasurement(w, m);
    w.EndArray();
  }
  w.Key("operators").BeginArray();
  for (const OpEstimate& o : e.ops) JsonOperator(w, o, performance);
  w.EndArray();
  if (performance) {
    w.Key("top_operators").BeginArray();
    for (const TopOperator& t : TopOperators(e, kCheckTopOperators)) {
      w.BeginObject(true);
      w.Key("index").Int(t.op_index);
      w.Key("total_cycles").Double(t.total_cycles, 15);
      w.Key("share").Double(t.share, 6);
      w.Key("bottleneck").String(BottleneckName(t.bottleneck));
      w.EndObject();
    }
    w.EndArray();
  }
  w.Key("advice").BeginArray();
  for (const Advice& a : r.advice) {
    w.BeginObject();
    w.Key("category").String(AdviceCategoryName(a.category));
    w.Key("severity").String(AdviceSeverityName(a.severity));
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

// ExecuTorch programs only (other formats' documents keep their keys): the method checked,
// every method of the program, and the calls delegated to another backend (opaque, not costed).
void JsonExecuTorch(JsonWriter& w, const Graph& graph) {
  auto meta = [&](const std::string& key) {
    auto it = graph.metadata.find(key);
    return it == graph.metadata.end() ? std::string() : it->second;
  };
  const std::string method = meta("executorch.method");
  std::vector<std::string> methods = absl::StrSplit(meta("executorch.methods"), ',',
                                                    absl::SkipEmpty());
  if (methods.empty() && !method.empty()) methods.push_back(method);
  w.Key("executorch").BeginObject();
  w.Key("method").String(method);
  w.Key("methods").BeginArray(true);
  for (const std::string& m : methods) w.String(m);
  w.EndArray();
  w.Key("delegated_calls").BeginArray();
  const Subgraph& sg = graph.main();
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const Operator& op = sg.ops[i];
    const std::string name(op.name());
    if (op.kind != OpKind::kOpaque || name.rfind("delegate:", 0) != 0) continue;
    w.BeginObject();
    w.Key("index").Int(static_cast<int64_t>(i));
    w.Key("backend").String(name.substr(9));
    w.Key("reason").String(op.opaque_reason);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

}  // namespace

std::string RenderCheckJson(const CheckReport& report) {
  const Graph& graph = *report.graph;
  JsonWriter w;
  w.BeginObject();
  w.Key("schema").String(kCheckSchema);
  w.Key("mica_version").String(report.tool_version);
  w.Key("model").BeginObject();
  w.Key("path").String(report.model_path);
  w.Key("format").String(FormatName(graph.source_format));
  w.Key("operators").Int(static_cast<int64_t>(graph.main().ops.size()));
  w.Key("constant_bytes").Int(ConstantBytes(graph));
  w.Key("macs").Int(AnalyzeCost(graph.main()).total_macs);
  if (graph.source_format == ModelFormat::kExecuTorch) JsonExecuTorch(w, graph);
  w.EndObject();
  w.Key("compatibility_requested").Bool(report.compatibility);
  w.Key("performance_requested").Bool(report.performance);
  w.Key("profiles").BeginArray();
  for (const ProfileReport& r : report.profiles) JsonProfile(w, r, report.performance);
  w.EndArray();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace estimate
}  // namespace mica
