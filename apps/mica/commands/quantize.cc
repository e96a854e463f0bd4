// `mica quantize MODEL --calibration DATA -o OUT.tflite [--scheme a8w8|a16w8|a8w4]
//                [--per-tensor] [--per-tensor-fc] [--observer minmax|ema|percentile[=P]|mse]
//                [--exclude OP_OR_TENSOR ...] [--io int8|uint8|float] [--json]
//                [-t PROFILE] [--seed N]`
//
// Post-training quantization of a float TFLite or ONNX model (libquant's QuantizeGraph):
//  1. reads the calibration samples (mica/calibration.h), or with `--calibration random[=N]`
//     N seeded uniform [-1, 1) inputs (default 8; shapes only: a warning says it does not
//     predict accuracy);
//  2. runs the float model on them with the fp32 executor, an observer folding every float
//     tensor into its range;
//  3. quantizes: weights symmetric per output channel for convolutions (per tensor with
//     --per-tensor; fully-connected layers per channel too, as TensorFlow 2.21's converter,
//     unless --per-tensor-fc), activations int8 asymmetric (a8w8, a8w4)
//     or int16 symmetric (a16w8), int4 weights packed two per byte (a8w4); operators that
//     cannot be quantized, and the --exclude ones (operator index, operator type such as
//     SOFTMAX, or output tensor name), stay float32;
//  4. reloads the written bytes and runs the quantized model on the calibration samples next to
//     the float one: per layer, the SQNR and max |error| of its output against the float
//     model's, the share of float values beyond the quantized range (activation clipping),
//     the weights' SQNR and clipped count;
//  5. writes OUT atomically (nothing is written when any step fails).
//
// The report (text, or JSON schema "mica.quantize/1" with --json) lists every layer, the
// float fallbacks with their reason, the graph outputs' SQNR, and the three layers that lose
// most (largest SQNR drop from their input to their output).
//
// Exit codes: 0 ok, 1 failure (bad model or calibration data: one-line error), 2 usage.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mica/args.h"
#include "mica/base/file.h"
#include "mica/base/status_macros.h"
#include "mica/calibration.h"
#include "mica/command.h"
#include "mica/estimate/json_writer.h"
#include "mica/estimate/target.h"
#include "mica/estimate/text_table.h"
#include "mica/model/load.h"
#include "mica/quant/observer.h"
#include "mica/quant/quant_params.h"
#include "mica/quant/quantize.h"
#include "mica/runtime/executor.h"

namespace mica {
namespace cli {
namespace {

using runtime::HostTensor;

struct Settings {
  std::string scheme = "a8w8";
  quant::QuantizeOptions options;
  quant::ObserverConfig observer;
  std::string io = "int8";
  std::string calibration;
  bool random = false;
  int random_count = 8;
  uint64_t seed = 1;
};

// Running error statistics of one tensor.
struct Accum {
  double signal = 0, noise = 0, max_abs = 0;
  int64_t count = 0, clipped = 0;
  bool seen = false;
  double sqnr() const {
    if (noise == 0) return std::numeric_limits<double>::infinity();
    if (signal == 0) return -std::numeric_limits<double>::infinity();
    return 10.0 * std::log10(signal / noise);
  }
};

struct Layer {
  int32_t op = -1;
  std::string kind, tensor, dtype, fallback;
  int32_t float_tensor = -1;
  Accum acc;
  double drop = 0;  // SQNR of the worst input minus the output's
  const quant::WeightReport* weights = nullptr;
};

bool IsIntType(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kUInt8;
}

// Returns the float values of `v` (dequantized with `t`'s parameters).
std::vector<float> ToFloat(const runtime::TensorView& v, const Tensor& t) {
  const size_t n = static_cast<size_t>(v.num_elements());
  std::vector<float> out(n);
  if (v.dtype == DType::kFloat32) {
    if (n) std::memcpy(out.data(), v.data, n * 4);
    return out;
  }
  const float scale = t.quant.scale.empty() ? 1.0f : t.quant.scale[0];
  const int64_t zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
  for (size_t i = 0; i < n; ++i) {
    int64_t q = 0;
    if (v.dtype == DType::kInt8) q = v.as<int8_t>()[i];
    if (v.dtype == DType::kUInt8) q = v.as<uint8_t>()[i];
    if (v.dtype == DType::kInt16) q = v.as<int16_t>()[i];
    out[i] = scale * static_cast<float>(q - zp);
  }
  return out;
}

// Converts a float sample tensor to the quantized graph's input `t`.
HostTensor ToInput(const HostTensor& f, const Tensor& t) {
  if (t.dtype == DType::kFloat32) return f;
  HostTensor h;
  h.dtype = t.dtype;
  h.shape = t.shape;
  const float* v = reinterpret_cast<const float*>(f.bytes.data());
  const size_t n = f.bytes.size() / 4;
  const quant::QuantParams p{t.quant.scale.at(0), static_cast<int32_t>(t.quant.zero_point.at(0))};
  for (size_t i = 0; i < n; ++i) {
    if (t.dtype == DType::kInt16) {
      const int16_t q = static_cast<int16_t>(quant::QuantizeToInt(v[i], p, -32768, 32767));
      h.bytes.push_back(static_cast<uint8_t>(q & 0xFF));
      h.bytes.push_back(static_cast<uint8_t>((q >> 8) & 0xFF));
    } else if (t.dtype == DType::kUInt8) {
      h.bytes.push_back(static_cast<uint8_t>(quant::QuantizeToInt(v[i], p, 0, 255)));
    } else {
      h.bytes.push_back(static_cast<uint8_t>(quant::QuantizeValue(v[i], p)));
    }
  }
  return h;
}

std::string Db(double v) {
  if (std::isinf(v)) return v > 0 ? "exact" : "-inf";
  return FormatFixed(v, 1);
}

// Resolves --exclude names to float-graph operator indices.
absl::StatusOr<std::set<int32_t>> ResolveExcludes(const std::vector<std::string>& names,
                                                  const Subgraph& sg) {
  std::set<int32_t> out;
  for (const std::string& raw : names) {
    std::string name = raw;
    if (!name.empty() && name[0] == '#') name = name.substr(1);
    bool found = false;
    int32_t index = 0;
    if (absl::SimpleAtoi(name, &index)) {
      if (index < 0 || index >= static_cast<int32_t>(sg.ops.size())) {
        return absl::InvalidArgumentError(absl::StrCat("--exclude ", raw, ": the model has ",
                                                       sg.ops.size(), " operators"));
      }
      out.insert(index);
      continue;
    }
    for (size_t i = 0; i < sg.ops.size(); ++i) {
      const Operator& op = sg.ops[i];
      bool match = absl::AsciiStrToUpper(name) == std::string(op.name());
      for (int32_t t : op.outputs) {
        if (t >= 0 && sg.tensors[static_cast<size_t>(t)].name == name) match = true;
      }
      if (match) {
        out.insert(static_cast<int32_t>(i));
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--exclude ", raw, ": no operator has that index, type or output tensor name"));
    }
  }
  return out;
}

struct Outcome {
  quant::QuantizeResult q;
  std::vector<uint8_t> bytes;
  std::vector<Layer> layers;
  std::vector<std::pair<std::string, Accum>> outputs;
  std::vector<int32_t> worst;  // indices into layers
  size_t samples = 0;
  std::string evaluation_note;  // why the per-layer evaluation did not run
};

absl::StatusOr<Outcome> Quantize(const Graph& fg, const std::vector<Sample>& samples,
                                 const Settings& s, const std::string& out_path) {
  Outcome o;
  o.samples = samples.size();
  const Subgraph& fsg = fg.main();

  // Calibration: every float tensor of every sample through the observer.
  MICA_ASSIGN_OR_RETURN(auto fexec, runtime::Executor::Create(fg));
  quant::RangeCollector ranges(s.observer);
  fexec->SetTensorObserver([&](int32_t index, const runtime::TensorView& v) {
    if (v.dtype == DType::kFloat32) {
      ranges.Observe(index, v.as<float>(), static_cast<size_t>(v.num_elements()));
    }
  });
  for (const Sample& sample : samples) MICA_RETURN_IF_ERROR(fexec->Run(sample).status());
  fexec->SetTensorObserver(nullptr);

  MICA_ASSIGN_OR_RETURN(o.q, quant::QuantizeWithReport(fg, ranges.ranges(), s.options));
  MICA_ASSIGN_OR_RETURN(o.bytes, WriteTflite(o.q.graph));
  MICA_ASSIGN_OR_RETURN(
      Graph qg, LoadTflite(std::make_shared<const std::vector<uint8_t>>(o.bytes), out_path));
  const Subgraph& qsg = qg.main();

  // The layers: every float-graph operator with a float output.
  std::map<int32_t, size_t> layer_of_tensor;  // float tensor -> layer
  std::map<int32_t, const quant::FloatFallback*> fallback;
  for (const quant::FloatFallback& f : o.q.fallbacks) fallback[f.op] = &f;
  std::map<int32_t, const quant::WeightReport*> weights;
  for (const quant::WeightReport& w : o.q.weights) weights.emplace(w.op, &w);
  for (size_t i = 0; i < fsg.ops.size(); ++i) {
    const Operator& op = fsg.ops[i];
    for (int32_t t : op.outputs) {
      if (t < 0 || fsg.tensors[static_cast<size_t>(t)].dtype != DType::kFloat32) continue;
      Layer l;
      l.op = static_cast<int32_t>(i);
      l.kind = std::string(op.name());
      l.tensor = fsg.tensors[static_cast<size_t>(t)].name;
      l.float_tensor = t;
      if (auto it = fallback.find(l.op); it != fallback.end()) l.fallback = it->second->reason;
      if (auto it = weights.find(l.op); it != weights.end()) l.weights = it->second;
      layer_of_tensor[t] = o.layers.size();
      o.layers.push_back(l);
      break;
    }
  }
  // Which quantized tensor stands for each float tensor: the integer one, else a float copy.
  std::map<int32_t, int32_t> stands_for;  // quantized tensor -> float tensor
  std::map<int32_t, int32_t> copy_of;     // quantized copy of a float tensor -> float tensor
  {
    std::map<int32_t, int32_t> best;  // float tensor -> quantized tensor
    for (size_t q = 0; q < o.q.source_tensor.size() && q < qsg.tensors.size(); ++q) {
      const int32_t f = o.q.source_tensor[q];
      if (f < 0 || qsg.tensors[q].is_constant()) continue;
      const std::string& name = qsg.tensors[q].name;
      const bool copy = name.find("/requantized") != std::string::npos ||
                        name.find("/quantized") != std::string::npos ||
                        name.find("/dequantized") != std::string::npos;
      auto it = best.find(f);
      const bool better = it == best.end() ||
                          (IsIntType(qsg.tensors[q].dtype) && !copy &&
                           !IsIntType(qsg.tensors[static_cast<size_t>(it->second)].dtype));
      if (better && !copy) best[f] = static_cast<int32_t>(q);
    }
    for (const auto& [f, q] : best) stands_for[q] = f;
    // The QUANTIZEd copies quantized readers see of float tensors (fallback outputs).
    for (size_t q = 0; q < o.q.source_tensor.size() && q < qsg.tensors.size(); ++q) {
      if (o.q.source_tensor[q] >= 0 && qsg.tensors[q].name.find("/quantized") != std::string::npos) {
        copy_of[static_cast<int32_t>(q)] = o.q.source_tensor[q];
      }
    }
  }

  // Evaluation: the reloaded quantized model next to the float one, sample by sample. mica's
  // kernels take int8 weights only: int4 weights are unpacked into int8 tensors with the same
  // values and scales for the evaluation (what TFLite Micro does at prepare time), so the
  // figures are those of the written file.
  Graph eval = qg;
  for (Tensor& t : eval.main().tensors) {
    if (t.dtype != DType::kInt4 || !t.is_constant()) continue;
    std::vector<uint8_t> unpacked(static_cast<size_t>(t.num_elements()));
    for (size_t i = 0; i < unpacked.size(); ++i) {
      const uint8_t nib = (i % 2 ? t.data.bytes()[i / 2] >> 4 : t.data.bytes()[i / 2]) & 0x0F;
      unpacked[i] = nib >= 8 ? static_cast<uint8_t>(nib | 0xF0) : nib;
    }
    t.dtype = DType::kInt8;
    t.data = eval.AddConstData(std::move(unpacked));
  }
  auto qexec = runtime::Executor::Create(eval);
  if (!qexec.ok()) {
    o.evaluation_note = absl::StrCat("mica cannot run the quantized model (",
                                     qexec.status().message(), "); no per-layer errors");
    return o;
  }
  std::map<int32_t, std::vector<float>> reference;
  fexec->SetTensorObserver([&](int32_t index, const runtime::TensorView& v) {
    if (v.dtype == DType::kFloat32) {
      reference[index].assign(v.as<float>(), v.as<float>() + v.num_elements());
    }
  });
  std::map<int32_t, Accum> acc;       // by float tensor
  std::map<int32_t, Accum> copy_acc;  // by float tensor: its quantized copy
  (*qexec)->SetTensorObserver([&](int32_t index, const runtime::TensorView& v) {
    auto it = stands_for.find(index);
    std::map<int32_t, Accum>* into = &acc;
    if (it == stands_for.end()) {
      it = copy_of.find(index);
      if (it == copy_of.end()) return;
      into = &copy_acc;
    }
    auto ref = reference.find(it->second);
    if (ref == reference.end()) return;
    const Tensor& qt = qsg.tensors[static_cast<size_t>(index)];
    const std::vector<float> got = ToFloat(v, qt);
    if (got.size() != ref->second.size()) return;
    Accum& a = (*into)[it->second];
    a.seen = true;
    float lo = -std::numeric_limits<float>::infinity(), hi = -lo;
    if (IsIntType(qt.dtype) && !qt.quant.scale.empty()) {
      const int32_t qmin = qt.dtype == DType::kInt8 ? -128 : qt.dtype == DType::kUInt8 ? 0 : -32768;
      const int32_t qmax = qt.dtype == DType::kInt8 ? 127 : qt.dtype == DType::kUInt8 ? 255 : 32767;
      const quant::QuantParams p{qt.quant.scale[0], static_cast<int32_t>(qt.quant.zero_point[0])};
      lo = quant::DequantizeValue(qmin, p) - 0.5f * p.scale;
      hi = quant::DequantizeValue(qmax, p) + 0.5f * p.scale;
    }
    for (size_t i = 0; i < got.size(); ++i) {
      const double r = ref->second[i], e = got[i] - r;
      a.signal += r * r;
      a.noise += e * e;
      a.max_abs = std::max(a.max_abs, std::fabs(e));
      a.clipped += (r < lo || r > hi) ? 1 : 0;
    }
    a.count += static_cast<int64_t>(got.size());
  });
  for (const Sample& sample : samples) {
    reference.clear();
    MICA_RETURN_IF_ERROR(fexec->Run(sample).status());
    std::vector<HostTensor> qin;
    for (size_t k = 0; k < sample.size() && k < qsg.inputs.size(); ++k) {
      qin.push_back(ToInput(sample[k], qsg.tensors[static_cast<size_t>(qsg.inputs[k])]));
    }
    MICA_RETURN_IF_ERROR((*qexec)->Run(qin).status());
  }
  for (Layer& l : o.layers) {
    if (auto it = acc.find(l.float_tensor); it != acc.end()) l.acc = it->second;
  }
  // SQNR drop: the SQNR of the worst input as the operator reads it (graph inputs: their own
  // quantization; a quantized reader of a float tensor: its QUANTIZEd copy) minus the
  // output's. An operator reading exact inputs and writing exact outputs drops 0.
  for (Layer& l : o.layers) {
    if (!l.acc.seen) continue;
    double in_sqnr = std::numeric_limits<double>::infinity();
    for (int32_t t : fsg.ops[static_cast<size_t>(l.op)].inputs) {
      const std::map<int32_t, Accum>& from =
          l.fallback.empty() && copy_acc.count(t) ? copy_acc : acc;
      if (auto it = from.find(t); it != from.end() && it->second.seen) {
        in_sqnr = std::min(in_sqnr, it->second.sqnr());
      }
    }
    const double out = l.acc.sqnr();
    l.drop = std::isinf(out) ? 0 : std::isinf(in_sqnr) ? 0 : in_sqnr - out;
    if (std::isnan(l.drop)) l.drop = 0;
  }
  std::vector<int32_t> order;
  for (size_t i = 0; i < o.layers.size(); ++i) {
    if (o.layers[i].acc.seen) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return o.layers[static_cast<size_t>(a)].drop > o.layers[static_cast<size_t>(b)].drop;
  });
  for (size_t i = 0; i < order.size() && i < 3; ++i) o.worst.push_back(order[i]);
  for (int32_t t : fsg.outputs) {
    auto it = acc.find(t);
    o.outputs.emplace_back(fsg.tensors[static_cast<size_t>(t)].name,
                           it == acc.end() ? Accum{} : it->second);
  }
  return o;
}

std::string CalibrationText(const Settings& s, size_t n) {
  return s.random ? absl::StrCat("random (", n, " seeded uniform [-1, 1) samples, seed ", s.seed, ")")
                  : absl::StrCat(s.calibration, " (", n, " samples)");
}

void PrintText(const std::string& model, const std::string& out, const Settings& s,
               const Outcome& o) {
  std::cout << "mica quantize: " << model << " -> " << out << " (" << FormatInt(
                   static_cast<int64_t>(o.bytes.size()), true) << " bytes)\n"
            << "scheme " << s.scheme << ", weights "
            << (!s.options.per_channel      ? "per-tensor"
                : s.options.per_channel_fc ? "per-channel (convolutions, fully connected)"
                                           : "per-channel (convolutions)")
            << ", observer " << quant::ObserverName(s.observer) << ", io " << s.io
            << ", calibration " << CalibrationText(s, o.samples) << "\n\n";
  if (!o.q.fallbacks.empty()) {
    std::cout << "Operators kept in float32:\n";
    for (const quant::FloatFallback& f : o.q.fallbacks) {
      std::cout << "  #" << f.op << " " << f.op_name << ": " << f.reason << "\n";
    }
    std::cout << "\n";
  }
  if (!o.evaluation_note.empty()) {
    std::cout << "note: " << o.evaluation_note << "\n";
    return;
  }
  Table t;
  t.AddColumn("#", Align::kRight);
  t.AddColumn("operator");
  t.AddColumn("output");
  t.AddColumn("type");
  t.AddColumn("SQNR dB", Align::kRight);
  t.AddColumn("max |err|", Align::kRight);
  t.AddColumn("act clip %", Align::kRight);
  t.AddColumn("weights");
  t.AddColumn("w SQNR dB", Align::kRight);
  t.AddColumn("w clipped", Align::kRight);
  for (const Layer& l : o.layers) {
    std::string type = l.fallback.empty() ? (s.scheme == "a16w8" ? "int16" : "int8") : "float32";
    const quant::WeightReport* w = l.weights;
    t.AddRow({FormatInt(l.op), l.kind, l.tensor.size() > 40 ? "..." + l.tensor.substr(l.tensor.size() - 37) : l.tensor,
              type, l.acc.seen ? Db(l.acc.sqnr()) : std::string("-"),
              l.acc.seen ? absl::StrFormat("%.3g", l.acc.max_abs) : std::string("-"),
              l.acc.seen && l.acc.count ? FormatFixed(100.0 * static_cast<double>(l.acc.clipped) / static_cast<double>(l.acc.count), 2) : std::string("-"),
              w ? absl::StrCat("int", w->bits, w->channels > 1 ? " per-channel" : " per-tensor") : std::string(),
              w ? Db(w->sqnr_db) : std::string(), w ? FormatInt(w->clipped) : std::string()});
  }
  std::cout << t.Render() << "\n";
  for (const auto& [name, a] : o.outputs) {
    std::cout << "output '" << name << "': SQNR " << Db(a.sqnr()) << " dB, max |err| "
              << absl::StrFormat("%.4g", a.max_abs) << " (vs the float model on the "
              << o.samples << " calibration samples)\n";
  }
  if (!o.worst.empty()) {
    std::cout << "layers that lose most (SQNR drop from input to output):";
    for (int32_t i : o.worst) {
      const Layer& l = o.layers[static_cast<size_t>(i)];
      std::cout << " #" << l.op << " " << l.kind << " (" << FormatFixed(l.drop, 1) << " dB)";
    }
    std::cout << "\n";
  }
}

void PrintJson(const std::string& model, const std::string& out, const Settings& s,
               const Outcome& o) {
  JsonWriter w;
  w.BeginObject();
  w.Key("schema").String("mica.quantize/1");
  w.Key("model").String(model);
  w.Key("output").String(out);
  w.Key("bytes").Int(static_cast<int64_t>(o.bytes.size()));
  w.Key("scheme").String(s.scheme);
  w.Key("per_channel").Bool(s.options.per_channel);
  w.Key("per_channel_fc").Bool(s.options.per_channel_fc);
  w.Key("observer").String(quant::ObserverName(s.observer));
  w.Key("io").String(s.io);
  w.Key("calibration").BeginObject();
  w.Key("source").String(s.random ? "random" : s.calibration);
  w.Key("samples").Int(static_cast<int64_t>(o.samples));
  w.Key("random").Bool(s.random);
  w.EndObject();
  w.Key("fallbacks").BeginArray();
  for (const quant::FloatFallback& f : o.q.fallbacks) {
    w.BeginObject();
    w.Key("op").Int(f.op);
    w.Key("kind").String(f.op_name);
    w.Key("reason").String(f.reason);
    w.EndObject();
  }
  w.EndArray();
  if (o.evaluation_note.empty()) {
    w.Key("evaluation").Null();
  } else {
    w.Key("evaluation").String(o.evaluation_note);
  }
  w.Key("layers").BeginArray();
  for (const Layer& l : o.layers) {
    w.BeginObject();
    w.Key("op").Int(l.op);
    w.Key("kind").String(l.kind);
    w.Key("tensor").String(l.tensor);
    w.Key("float_fallback").Bool(!l.fallback.empty());
    w.Key("sqnr_db").Double(l.acc.seen ? l.acc.sqnr() : std::nan(""));
    w.Key("max_abs_error").Double(l.acc.seen ? l.acc.max_abs : std::nan(""));
    w.Key("clipped_fraction")
        .Double(l.acc.count ? static_cast<double>(l.acc.clipped) / static_cast<double>(l.acc.count)
                            : std::nan(""));
    w.Key("sqnr_drop_db").Double(l.acc.seen ? l.drop : std::nan(""));
    if (l.weights == nullptr) {
      w.Key("weights").Null();
    } else {
      w.Key("weights").BeginObject();
      w.Key("tensor").String(l.weights->tensor);
      w.Key("bits").Int(l.weights->bits);
      w.Key("channels").Int(l.weights->channels);
      w.Key("sqnr_db").Double(l.weights->sqnr_db);
      w.Key("clipped").Int(l.weights->clipped);
      w.Key("bias_saturated").Int(l.weights->bias_saturated);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("outputs").BeginArray();
  for (const auto& [name, a] : o.outputs) {
    w.BeginObject();
    w.Key("tensor").String(name);
    w.Key("sqnr_db").Double(a.seen ? a.sqnr() : std::nan(""));
    w.Key("max_abs_error").Double(a.seen ? a.max_abs : std::nan(""));
    w.EndObject();
  }
  w.EndArray();
  w.Key("worst_layers").BeginArray(true);
  for (int32_t i : o.worst) w.Int(o.layers[static_cast<size_t>(i)].op);
  w.EndArray();
  w.EndObject();
  std::cout << w.str() << "\n";
}

int RunQuantize(const std::vector<std::string>& args) {
  ArgParser p("quantize");
  p.Summary("Post-training quantization of a float model, calibrated on representative data");
  std::vector<std::string> model;
  std::string out, scheme = "a8w8", observer = "minmax", io = "int8", calibration, profile,
                   seed_text = "1";
  bool per_tensor = false, per_tensor_fc = false, json = false;
  std::vector<std::string> excludes;
  p.Positional("MODEL", &model, 1, 1);
  p.Option("--calibration", &calibration, "DATA",
           "folder or file of .npy/.npz/raw float32 samples, or random[=N] (shapes only)");
  p.Option("--output", &out, "OUT.tflite", "the quantized model to write");
  p.Option("--scheme", &scheme, "a8w8|a16w8|a8w4",
           "activations/weights bits (default a8w8; a16w8: int16 activations)");
  p.Flag("--per-tensor", &per_tensor, "per-tensor weights everywhere (default: per channel)");
  p.Flag("--per-tensor-fc", &per_tensor_fc,
         "per-tensor FULLY_CONNECTED weights (older converters; default per channel as TF 2.21)");
  p.Option("--observer", &observer, "minmax|ema|percentile[=P]|mse",
           "how activation ranges are taken from the calibration data (default minmax)");
  p.Repeated("--exclude", &excludes, "OP_OR_TENSOR",
             "keep an operator float32: its index, type (SOFTMAX) or output tensor name");
  p.Option("--io", &io, "int8|uint8|float", "input/output type (default int8; int16 for a16w8)");
  p.Option("--target-profile", &profile, "NAME", "the target the model is for (validated)");
  p.Option("--seed", &seed_text, "N", "seed of --calibration random (default 1)");
  p.Flag("--json", &json, "print the report as JSON (schema mica.quantize/1)");
  if (int rc = p.Parse(args); rc >= 0) return rc;
  if (calibration.empty()) return UsageError("quantize: --calibration DATA is required");
  if (out.empty()) return UsageError("quantize: -o OUT.tflite is required");

  Settings s;
  s.scheme = scheme;
  s.io = io;
  s.calibration = calibration;
  s.options.per_channel = !per_tensor;
  s.options.per_channel_fc = !per_tensor && !per_tensor_fc;
  s.options.float_fallback = true;
  if (scheme == "a16w8") {
    s.options.activations = quant::ActivationType::kInt16;
  } else if (scheme == "a8w4") {
    s.options.weights = quant::WeightType::kInt4;
  } else if (scheme != "a8w8") {
    return UsageError("quantize: --scheme must be a8w8, a16w8 or a8w4, got '" + scheme + "'");
  }
  if (io == "float") {
    s.options.float_io = true;
  } else if (io == "uint8") {
    if (scheme == "a16w8") return UsageError("quantize: --io uint8 needs int8 activations");
    s.options.uint8_io = true;
  } else if (io != "int8") {
    return UsageError("quantize: --io must be int8, uint8 or float, got '" + io + "'");
  }
  absl::StatusOr<quant::ObserverConfig> obs = quant::ParseObserver(observer);
  if (!obs.ok()) return UsageError("quantize: " + std::string(obs.status().message()));
  s.observer = *obs;
  if (scheme == "a16w8") s.observer.levels = 65536;
  if (!absl::SimpleAtoi(seed_text, &s.seed)) {
    return UsageError("quantize: --seed needs a non-negative integer, got '" + seed_text + "'");
  }
  if (calibration == "random" || calibration.rfind("random=", 0) == 0) {
    s.random = true;
    if (calibration.size() > 6 &&
        (!absl::SimpleAtoi(calibration.substr(7), &s.random_count) || s.random_count < 1 ||
         s.random_count > 10000)) {
      return UsageError("quantize: --calibration random=N needs N in [1, 10000], got '" +
                        calibration + "'");
    }
  }
  if (!profile.empty()) {
    absl::StatusOr<estimate::TargetProfile> t = estimate::FindTargetProfile(profile);
    if (!t.ok()) return UsageError("quantize: " + std::string(t.status().message()));
    if (t->kind == estimate::TargetKind::kEthosU && scheme == "a8w4") {
      std::cerr << "mica quantize: warning: " << profile
                << " needs 8-bit weights: operators with int4 weights run on the host CPU (and "
                   "Vela 5.2 cannot read INT4 tensors at all)\n";
    }
  }

  absl::StatusOr<Graph> g = LoadModel(model[0]);
  if (!g.ok()) return Failure("quantize: " + std::string(g.status().message()));
  if (g->subgraphs.size() != 1) {
    return Failure(absl::StrCat("quantize: ", model[0], " has ", g->subgraphs.size(),
                                " subgraphs; only single-subgraph models can be quantized"));
  }
  bool any_float = false;
  for (const Tensor& t : g->main().tensors) {
    any_float |= !t.is_constant() && t.dtype == DType::kFloat32;
  }
  if (!any_float) {
    return Failure("quantize: " + model[0] + " has no float32 activations: it is already quantized");
  }
  absl::StatusOr<std::set<int32_t>> ex = ResolveExcludes(excludes, g->main());
  if (!ex.ok()) return UsageError("quantize: " + std::string(ex.status().message()));
  s.options.keep_float = *ex;

  std::vector<Sample> samples;
  if (s.random) {
    std::cerr << "mica quantize: warning: random calibration data fixes shapes only; the "
                 "ranges (and the reported errors) do not predict accuracy on real inputs\n";
    for (int32_t i : g->main().inputs) {
      if (g->main().tensors[static_cast<size_t>(i)].dtype != DType::kFloat32) {
        return Failure("quantize: input '" + g->main().tensors[static_cast<size_t>(i)].name +
                       "' is not float32: only float models can be calibrated");
      }
    }
    samples = RandomCalibration(g->main(), s.random_count, s.seed);
  } else {
    absl::StatusOr<std::vector<Sample>> c = LoadCalibration(calibration, g->main());
    if (!c.ok()) return Failure("quantize: " + std::string(c.status().message()));
    samples = *std::move(c);
  }

  absl::StatusOr<Outcome> o = Quantize(*g, samples, s, out);
  if (!o.ok()) return Failure("quantize: " + model[0] + ": " + std::string(o.status().message()));
  if (absl::Status w = WriteFileBytes(out, o->bytes); !w.ok()) {
    return Failure("quantize: " + std::string(w.message()));
  }
  if (json) {
    PrintJson(model[0], out, s, *o);
  } else {
    PrintText(model[0], out, s, *o);
  }
  return kExitOk;
}

const Registration kQuantize{
    {"quantize",
     "MODEL --calibration DATA|random[=N] -o OUT.tflite [--scheme a8w8|a16w8|a8w4] "
     "[--per-tensor] [--per-tensor-fc] [--observer minmax|ema|percentile[=P]|mse] [--exclude OP_OR_TENSOR] "
     "[--io int8|uint8|float] [--json]",
     "Quantize a float model (post-training, calibrated) and report the error per layer",
     RunQuantize, 4}};

}  // namespace
}  // namespace cli
}  // namespace mica
