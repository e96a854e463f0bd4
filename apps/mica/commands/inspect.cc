// `mica inspect MODEL [--json]`: operators, tensors, quantization, MACs, weights, arena peak.
//
// Text output: a header (model, format, inputs, outputs), one aligned table row per operator
// of the entry subgraph in execution order, then totals, then each opaque operator (one mica
// loads but does not convert) with its reason.
//
// JSON output (--json), schema "mica.inspect/1"; keys always appear in this order:
//   {
//     "schema": "mica.inspect/1",
//     "model": "<path as given>",
//     "format": "tflite" | "onnx" | "built" | "unknown",
//     "description": "<model description>",
//     "subgraphs": <number of subgraphs; only the entry subgraph (0) is listed>,
//     "inputs":  [<tensor>...],          // graph inputs of subgraph 0
//     "outputs": [<tensor>...],          // graph outputs of subgraph 0
//     "operators": [
//       { "index": <position in the file's operator list>,
//         "kind": "CONV_2D" | ... | "OPAQUE",
//         "name": "<OpKindName, or the custom/builtin name of an opaque op>",
//         "version": <operator version>,
//         "inputs": [<tensor> | null for an absent optional input ...],
//         "outputs": [<tensor>...],
//         "macs": <multiply-accumulates>,
//         "weight_bytes": <bytes of constant inputs>,
//         "output_elements": <elements written>,
//         "opaque_reason": "<why mica does not run or cost it>" }  // OPAQUE operators only
//     ],
//     "totals": { "operators": <n>, "macs": <sum>, "weight_bytes": <bytes of distinct constant
//                 tensors the operators read>, "arena_peak_bytes": <activation arena peak>,
//                 "arena_alignment": 16, "arena_lower_bound_bytes": <bytes live at the busiest
//                 operator: no plan can do better> }
//   }
//   <tensor> = { "index": <tensor index>, "name": "...", "shape": [d0, d1, ...],
//                "dtype": "int8" | "float32" | ..., "constant": true|false,
//                "quantization": {"kind": "none"}
//                              | {"kind": "per-tensor", "scale": <float>, "zero_point": <int>}
//                              | {"kind": "per-channel", "axis": <int>, "count": <channels>} }
// The arena peak comes from mica's planner (greedy by size, first fit, 16-byte alignment) over
// activation lifetimes in execution order; "arena_peak_bytes" is null when the subgraph has no
// valid execution order. Floats use printf "%.9g".
//
// Exit codes: 0 ok, 1 unreadable or malformed model (one-line error), 2 usage error.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/base/text.h"
#include "mica/command.h"
#include "mica/estimate/json_writer.h"
#include "mica/estimate/text_table.h"
#include "mica/model/analysis.h"
#include "mica/model/load.h"
#include "mica/model_input.h"

namespace mica {
namespace cli {
namespace {

constexpr size_t kAlignment = 16;

std::string FormatKey(ModelFormat f) {
  switch (f) {
    case ModelFormat::kTflite: return "tflite";
    case ModelFormat::kOnnx: return "onnx";
    case ModelFormat::kBuilt: return "built";
    case ModelFormat::kExecuTorch: return "executorch";
    case ModelFormat::kUnknown: break;
  }
  return "unknown";
}

std::string ShapeText(const std::vector<int32_t>& shape) {
  if (shape.empty()) return "scalar";
  return absl::StrJoin(shape, "x");
}

std::string QuantText(const Quantization& q) {
  if (q.empty()) return "none";
  if (!q.per_channel()) return "per-tensor";
  return absl::StrCat("per-channel(", q.axis, ",", q.scale.size(), ")");
}

void WriteTensor(JsonWriter& w, const Subgraph& sg, int32_t index) {
  if (index < 0 || static_cast<size_t>(index) >= sg.tensors.size()) {
    w.Null();
    return;
  }
  const Tensor& t = sg.tensors[static_cast<size_t>(index)];
  w.BeginObject();
  w.Key("index").Int(index);
  w.Key("name").String(t.name);
  w.Key("shape").BeginArray(true);
  for (int32_t d : t.shape) w.Int(d);
  w.EndArray();
  w.Key("dtype").String(std::string(DTypeName(t.dtype)));
  w.Key("constant").Bool(t.is_constant());
  w.Key("quantization").BeginObject(true);
  if (t.quant.empty()) {
    w.Key("kind").String("none");
  } else if (!t.quant.per_channel()) {
    w.Key("kind").String("per-tensor");
    w.Key("scale").Double(t.quant.scale[0]);
    w.Key("zero_point").Int(t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0]);
  } else {
    w.Key("kind").String("per-channel");
    w.Key("axis").Int(t.quant.axis);
    w.Key("count").Int(static_cast<int64_t>(t.quant.scale.size()));
  }
  w.EndObject();
  w.EndObject();
}

// "#3 1x25x5x64" per tensor; constants carry a trailing '*', absent inputs print "-".
std::string TensorList(const Subgraph& sg, const std::vector<int32_t>& ids) {
  std::vector<std::string> parts;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= sg.tensors.size()) {
      parts.push_back("-");
      continue;
    }
    const Tensor& t = sg.tensors[static_cast<size_t>(id)];
    parts.push_back(absl::StrCat("#", id, " ", ShapeText(t.shape), t.is_constant() ? "*" : ""));
  }
  return absl::StrJoin(parts, ", ");
}

std::string DtypeList(const Subgraph& sg, const Operator& op) {
  auto names = [&](const std::vector<int32_t>& ids) {
    std::vector<std::string> v;
    for (int32_t id : ids) {
      if (id >= 0 && static_cast<size_t>(id) < sg.tensors.size()) {
        v.emplace_back(DTypeName(sg.tensors[static_cast<size_t>(id)].dtype));
      }
    }
    return absl::StrJoin(v, ",");
  };
  return names(op.inputs) + " -> " + names(op.outputs);
}

// The quantization worth showing for an operator: its first per-channel or quantized
// constant (the weights) if any, else its first output's.
std::string OpQuantText(const Subgraph& sg, const Operator& op) {
  for (int32_t id : op.inputs) {
    if (id < 0 || static_cast<size_t>(id) >= sg.tensors.size()) continue;
    const Tensor& t = sg.tensors[static_cast<size_t>(id)];
    if (t.is_constant() && !t.quant.empty() && t.dtype != DType::kInt32) return QuantText(t.quant);
  }
  if (!op.outputs.empty() && op.outputs[0] >= 0 &&
      static_cast<size_t>(op.outputs[0]) < sg.tensors.size()) {
    return QuantText(sg.tensors[static_cast<size_t>(op.outputs[0])].quant);
  }
  return "none";
}

std::string IoSummary(const Subgraph& sg, const std::vector<int32_t>& ids) {
  std::vector<std::string> parts;
  for (int32_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= sg.tensors.size()) continue;
    const Tensor& t = sg.tensors[static_cast<size_t>(id)];
    std::string q;
    if (!t.quant.empty() && !t.quant.per_channel()) {
      q = absl::StrCat(" (scale ", JsonDouble(t.quant.scale[0], 6), ", zero point ",
                       t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0], ")");
    }
    parts.push_back(absl::StrCat("#", id, " '", PrintableText(t.name), "' ", ShapeText(t.shape), " ",
                                 std::string(DTypeName(t.dtype)), q));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, "; ");
}

int RunInspect(const std::vector<std::string>& args) {
  ArgParser p("inspect");
  bool json = false;
  std::vector<std::string> models;
  std::string method;
  p.Flag("--json", &json, "print JSON (schema mica.inspect/1) instead of a table");
  p.Option("--method", &method, "NAME",
           "ExecuTorch programs: the method to show (default: the first)");
  p.Positional("MODEL", &models, 1, 1);
  if (int rc = p.Parse(args); rc >= 0) return rc;
  const std::string& path = models[0];

  absl::StatusOr<Graph> loaded = LoadModelInput(path, method);
  if (!loaded.ok()) return Failure(std::string(loaded.status().message()));
  const Graph& g = *loaded;
  if (g.subgraphs.empty()) return Failure(path + ": model has no subgraph");
  const Subgraph& sg = g.main();

  const GraphCost cost = AnalyzeCost(sg);
  bool have_arena = false;
  size_t arena_peak = 0, arena_bound = 0;
  std::string arena_error;
  if (absl::StatusOr<std::vector<int32_t>> order = TopologicalOrder(sg); order.ok()) {
    const std::vector<TensorLifetime> lifetimes = ComputeLifetimes(sg, *order);
    arena_bound = PeakLiveBytes(lifetimes);
    absl::StatusOr<ArenaPlan> plan = PlanArena(lifetimes, ArenaOptions{kAlignment});
    if (plan.ok()) {
      have_arena = true;
      arena_peak = plan->peak_bytes;
    } else {
      arena_error = std::string(plan.status().message());
    }
  } else {
    arena_error = std::string(order.status().message());
  }

  if (json) {
    JsonWriter w;
    w.BeginObject();
    w.Key("schema").String("mica.inspect/1");
    w.Key("model").String(path);
    w.Key("format").String(FormatKey(g.source_format));
    w.Key("description").String(g.description);
    w.Key("subgraphs").Int(static_cast<int64_t>(g.subgraphs.size()));
    if (g.source_format == ModelFormat::kExecuTorch) {
      // The method shown and every method of the program, in file order.
      w.Key("method").String(MetadataOr(g, "executorch.method", ""));
      w.Key("methods").BeginArray();
      for (const std::string& m : ExecuTorchMethods(g)) w.String(m);
      w.EndArray();
    }
    w.Key("inputs").BeginArray();
    for (int32_t t : sg.inputs) WriteTensor(w, sg, t);
    w.EndArray();
    w.Key("outputs").BeginArray();
    for (int32_t t : sg.outputs) WriteTensor(w, sg, t);
    w.EndArray();
    w.Key("operators").BeginArray();
    for (size_t i = 0; i < sg.ops.size(); ++i) {
      const Operator& op = sg.ops[i];
      w.BeginObject();
      w.Key("index").Int(static_cast<int64_t>(i));
      w.Key("kind").String(std::string(OpKindName(op.kind)));
      w.Key("name").String(std::string(op.name()));
      w.Key("version").Int(op.version);
      w.Key("inputs").BeginArray();
      for (int32_t t : op.inputs) WriteTensor(w, sg, t);
      w.EndArray();
      w.Key("outputs").BeginArray();
      for (int32_t t : op.outputs) WriteTensor(w, sg, t);
      w.EndArray();
      w.Key("macs").Int(cost.ops[i].macs);
      w.Key("weight_bytes").Int(cost.ops[i].weight_bytes);
      w.Key("output_elements").Int(cost.ops[i].output_elements);
      if (op.kind == OpKind::kOpaque) w.Key("opaque_reason").String(op.opaque_reason);
      w.EndObject();
    }
    w.EndArray();
    w.Key("totals").BeginObject();
    w.Key("operators").Int(static_cast<int64_t>(sg.ops.size()));
    w.Key("macs").Int(cost.total_macs);
    w.Key("weight_bytes").Int(cost.unique_constant_bytes);
    if (have_arena) {
      w.Key("arena_peak_bytes").UInt(arena_peak);
    } else {
      w.Key("arena_peak_bytes").Null();
    }
    w.Key("arena_alignment").UInt(kAlignment);
    if (have_arena) {
      w.Key("arena_lower_bound_bytes").UInt(arena_bound);
    } else {
      w.Key("arena_lower_bound_bytes").Null();
    }
    w.EndObject();
    w.EndObject();
    std::cout << w.str() << "\n";
    return kExitOk;
  }

  std::cout << "model:     " << path << " (" << FormatKey(g.source_format) << ", "
            << g.subgraphs.size() << " subgraph" << (g.subgraphs.size() == 1 ? "" : "s")
            << (g.subgraphs.size() > 1 ? "; showing subgraph 0" : "") << ")\n";
  if (!g.description.empty()) {
    std::cout << "about:     " << PrintableText(g.description) << "\n";
  }
  if (g.source_format == ModelFormat::kExecuTorch) {
    const std::vector<std::string> methods = ExecuTorchMethods(g);
    std::cout << "method:    '" << PrintableText(MetadataOr(g, "executorch.method", "")) << "'";
    if (methods.size() > 1) {
      std::vector<std::string> quoted;
      for (const std::string& m : methods) quoted.push_back("'" + PrintableText(m) + "'");
      std::cout << " (" << methods.size() << " methods: " << absl::StrJoin(quoted, ", ")
                << "; --method NAME shows another)";
    }
    std::cout << "\n";
    if (auto it = g.metadata.find("executorch.converted_from"); it != g.metadata.end()) {
      std::cout << "converted: from a " << PrintableText(it->second) << "\n";
    }
  }
  std::cout << "inputs:    " << IoSummary(sg, sg.inputs) << "\n";
  std::cout << "outputs:   " << IoSummary(sg, sg.outputs) << "\n\n";

  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("inputs (#tensor shape, *constant)");
  t.AddColumn("outputs");
  t.AddColumn("dtypes");
  t.AddColumn("quantization");
  t.AddColumn("MACs", Align::kRight);
  t.AddColumn("weight bytes", Align::kRight);
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const Operator& op = sg.ops[i];
    t.AddRow({FormatInt(static_cast<int64_t>(i)), std::string(op.name()),
              TensorList(sg, op.inputs), TensorList(sg, op.outputs), DtypeList(sg, op),
              OpQuantText(sg, op), FormatInt(cost.ops[i].macs, true),
              FormatInt(cost.ops[i].weight_bytes, true)});
  }
  t.AddSeparator();
  t.AddRow({"", absl::StrCat(sg.ops.size(), " ops"), "", "", "", "",
            FormatInt(cost.total_macs, true), FormatInt(cost.total_weight_bytes, true)});
  std::cout << t.Render();
  std::cout << "\ntotals:    " << sg.ops.size() << " operators, "
            << FormatInt(cost.total_macs, true) << " MACs, "
            << FormatInt(cost.unique_constant_bytes, true) << " weight bytes (distinct constants)\n";
  if (have_arena) {
    std::cout << "arena:     " << FormatInt(static_cast<int64_t>(arena_peak), true)
              << " bytes peak (greedy by size, first fit, " << kAlignment
              << "-byte alignment); lower bound "
              << FormatInt(static_cast<int64_t>(arena_bound), true) << " (live at the busiest op)\n";
  } else {
    std::cout << "arena:     n/a (" << arena_error << ")\n";
  }
  bool first_opaque = true;
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const Operator& op = sg.ops[i];
    if (op.kind != OpKind::kOpaque) continue;
    if (first_opaque) std::cout << "\nopaque operators (loaded, estimated as CPU fallback, not run):\n";
    first_opaque = false;
    std::cout << "  #" << i << " " << PrintableText(std::string(op.name())) << ": "
              << PrintableText(op.opaque_reason.empty() ? "no reason recorded" : op.opaque_reason)
              << "\n";
  }
  return kExitOk;
}

const Registration kInspect{{"inspect", "MODEL [--json]",
                             "List operators, tensors, quantization, MACs, weights and arena peak",
                             RunInspect, 10}};

}  // namespace
}  // namespace cli
}  // namespace mica
