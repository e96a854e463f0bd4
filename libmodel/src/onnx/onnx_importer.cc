#include "onnx/onnx_importer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"

namespace mica {
namespace onnx_import {
namespace {

std::string ShapeStr(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

// Converts IEEE half bits to float (exact: every half is representable).
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400u), exp - 25);
  }
  return sign ? -v : v;
}

// Reads `n` little-endian elements of type T from raw bytes (the host is little-endian).
template <typename T>
std::vector<T> FromRaw(const std::string& raw, int64_t n) {
  std::vector<T> out(static_cast<size_t>(n));
  if (n > 0) std::memcpy(out.data(), raw.data(), static_cast<size_t>(n) * sizeof(T));
  return out;
}

}  // namespace

int64_t Value::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

void Value::Unpack() {
  if (!is_packed()) return;
  const size_t elem = DTypeBytes(packed_dtype, 1);
  const size_t count = elem == 0 ? 0 : packed.size() / elem;
  ints.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const char* p = packed.data() + i * elem;
    switch (packed_dtype) {
      case DType::kInt8: ints[i] = static_cast<int8_t>(*p); break;
      case DType::kInt16: { int16_t y; std::memcpy(&y, p, 2); ints[i] = y; break; }
      case DType::kInt32: { int32_t y; std::memcpy(&y, p, 4); ints[i] = y; break; }
      default: ints[i] = static_cast<uint8_t>(*p); break;  // uint8, bool
    }
  }
  packed = {};
  packed_owner.reset();
  packed_dtype = DType::kInt64;
}

// --------------------------------------------------------------------------------------------
// NodeCtx

NodeCtx::NodeCtx(const onnx::NodeProto& node, int index, const std::string& origin)
    : node_(node), origin_(origin) {
  label_ = absl::StrCat("node '", node.name().empty() ? node.output_size() > 0 ? node.output(0) : ""
                                                      : node.name(),
                        "' (", node.op_type(), " #", index, ")");
}

absl::Status NodeCtx::Error(absl::StatusCode code, const std::string& msg) const {
  return absl::Status(code, absl::StrCat(origin_, ": ", label_, ": ", msg));
}

const onnx::AttributeProto* NodeCtx::Find(const std::string& name) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

absl::StatusOr<int64_t> NodeCtx::Int(const std::string& name, int64_t fallback) const {
  const auto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::INT) {
    return Invalid(absl::StrCat("attribute '", name, "' must be an INT"));
  }
  return a->i();
}

absl::StatusOr<float> NodeCtx::Float(const std::string& name, float fallback) const {
  const auto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a FLOAT"));
  }
  return a->f();
}

absl::StatusOr<std::string> NodeCtx::String(const std::string& name,
                                            const std::string& fallback) const {
  const auto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) {
    return Invalid(absl::StrCat("attribute '", name, "' must be a STRING"));
  }
  return a->s();
}

absl::StatusOr<std::vector<int64_t>> NodeCtx::Ints(const std::string& name,
                                                   std::vector<int64_t> fallback) const {
  const auto* a = Find(name);
  if (a == nullptr) return fallback;
  if (a->type() != onnx::AttributeProto::INTS) {
    return Invalid(absl::StrCat("attribute '", name, "' must be INTS"));
  }
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

absl::StatusOr<std::vector<float>> NodeCtx::Floats(const std::string& name) const {
  const auto* a = Find(name);
  if (a == nullptr) return std::vector<float>{};
  if (a->type() != onnx::AttributeProto::FLOATS) {
    return Invalid(absl::StrCat("attribute '", name, "' must be FLOATS"));
  }
  return std::vector<float>(a->floats().begin(), a->floats().end());
}

int NodeCtx::num_inputs() const {
  int n = node_.input_size();
  while (n > 0 && node_.input(n - 1).empty()) --n;
  return n;
}

// --------------------------------------------------------------------------------------------
// Constants

absl::StatusOr<Value> TensorToValue(const onnx::TensorProto& t, const std::string& what) {
  auto bad = [&](const std::string& msg) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", msg));
  };
  if (t.data_location() == onnx::TensorProto::EXTERNAL || t.external_data_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(
        what, ": uses external data files, which mica does not read; re-save the model with "
              "its weights inside (onnx.save(model, path, save_as_external_data=False))"));
  }
  if (t.has_segment()) return absl::UnimplementedError(absl::StrCat(what, ": segmented tensor"));
  Value v;
  v.is_const = true;
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > kMaxDim) {
      return bad(absl::StrCat("dimension ", d, " out of range (0 to ", kMaxDim, ")"));
    }
    n *= d;
    if (n > kMaxElements) return bad("more than 2^31 elements");
    v.shape.push_back(d);
  }
  const std::string& raw = t.raw_data();
  const bool has_raw = t.has_raw_data();
  auto check_count = [&](int64_t got, const char* field) -> absl::Status {
    if (got != n) {
      return bad(absl::StrCat("shape ", ShapeStr(v.shape), " needs ", n, " elements but ", field,
                              " holds ", got));
    }
    return absl::OkStatus();
  };
  auto check_raw = [&](size_t elem) -> absl::Status {
    if (raw.size() != static_cast<size_t>(n) * elem) {
      return bad(absl::StrCat("shape ", ShapeStr(v.shape), " needs ", n * static_cast<int64_t>(elem),
                              " bytes of raw_data but it holds ", raw.size()));
    }
    return absl::OkStatus();
  };
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(4));
        v.floats = FromRaw<float>(raw, n);
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.float_data_size(), "float_data"));
        v.floats.assign(t.float_data().begin(), t.float_data().end());
      }
      return v;
    case onnx::TensorProto::DOUBLE: {
      std::vector<double> d;
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(8));
        d = FromRaw<double>(raw, n);
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.double_data_size(), "double_data"));
        d.assign(t.double_data().begin(), t.double_data().end());
      }
      v.floats.assign(d.begin(), d.end());
      return v;
    }
    case onnx::TensorProto::FLOAT16: {
      std::vector<uint16_t> h;
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(2));
        h = FromRaw<uint16_t>(raw, n);
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.int32_data_size(), "int32_data"));
        for (int32_t x : t.int32_data()) h.push_back(static_cast<uint16_t>(x));
      }
      v.floats.reserve(h.size());
      for (uint16_t x : h) v.floats.push_back(HalfToFloat(x));
      return v;
    }
    case onnx::TensorProto::INT64:
      v.is_int = true;
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(8));
        v.ints = FromRaw<int64_t>(raw, n);
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.int64_data_size(), "int64_data"));
        v.ints.assign(t.int64_data().begin(), t.int64_data().end());
      }
      return v;
    case onnx::TensorProto::UINT16:
      v.is_int = true;
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(2));
        const std::vector<uint16_t> u = FromRaw<uint16_t>(raw, n);
        v.ints.assign(u.begin(), u.end());
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.int32_data_size(), "int32_data"));
        v.ints.assign(t.int32_data().begin(), t.int32_data().end());
      }
      return v;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL: {
      // Kept packed in the file's element type (see Value::packed).
      v.is_int = true;
      const int dt = t.data_type();
      v.packed_dtype = dt == onnx::TensorProto::INT32   ? DType::kInt32
                       : dt == onnx::TensorProto::INT16 ? DType::kInt16
                       : dt == onnx::TensorProto::INT8  ? DType::kInt8
                       : dt == onnx::TensorProto::UINT8 ? DType::kUInt8
                                                        : DType::kBool;
      const size_t elem = DTypeBytes(v.packed_dtype, 1);
      if (has_raw) {
        MICA_RETURN_IF_ERROR(check_raw(elem));
        v.packed = raw;  // a view: the ModelProto outlives the import
      } else {
        MICA_RETURN_IF_ERROR(check_count(t.int32_data_size(), "int32_data"));
        auto owned = std::make_shared<std::string>(static_cast<size_t>(n) * elem, '\0');
        for (int64_t i = 0; i < n; ++i) {
          const int32_t x = t.int32_data(static_cast<int>(i));
          // Little-endian truncation to the element type, as the raw form stores it.
          const uint32_t u = static_cast<uint32_t>(x);
          const uint8_t b[4] = {static_cast<uint8_t>(u), static_cast<uint8_t>(u >> 8),
                                static_cast<uint8_t>(u >> 16), static_cast<uint8_t>(u >> 24)};
          std::memcpy(&(*owned)[static_cast<size_t>(i) * elem], b, elem);
        }
        v.packed = *owned;
        v.packed_owner = std::move(owned);
      }
      return v;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat(what, ": element type ", t.data_type(),
                       " is not supported (float, double, float16 and integer constants are)"));
  }
}

// --------------------------------------------------------------------------------------------
// OnnxImporter: setup

OnnxImporter::OnnxImporter(const onnx::ModelProto& model, std::string origin)
    : model_(model), graph_proto_(model.graph()), origin_(std::move(origin)) {}

absl::Status OnnxImporter::ReadOpset() {
  for (const auto& o : model_.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset_ = o.version();
  }
  if (opset_ <= 0) {
    // IR version 1/2 files predate opset_import; they are opset 1.
    if (model_.opset_import_size() == 0 && model_.ir_version() > 0 && model_.ir_version() < 3) {
      opset_ = 1;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(origin_, ": model declares no ai.onnx opset (opset_import)"));
    }
  }
  if (opset_ > 1000) {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": opset ", opset_, " out of range"));
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ReadInitializers() {
  for (const auto& t : graph_proto_.initializer()) {
    const std::string what = absl::StrCat(origin_, ": initializer '", t.name(), "'");
    if (t.name().empty()) return absl::InvalidArgumentError(what + ": has no name");
    MICA_ASSIGN_OR_RETURN(Value v, TensorToValue(t, what));
    values_[t.name()] = std::move(v);
  }
  if (graph_proto_.sparse_initializer_size() > 0) {
    return absl::UnimplementedError(absl::StrCat(origin_, ": sparse initializers"));
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ReadInputs() {
  for (const auto& in : graph_proto_.input()) {
    // Older exporters list initializers as inputs too; the initializer is the value.
    if (values_.count(in.name())) continue;
    const std::string what = absl::StrCat(origin_, ": graph input '", in.name(), "'");
    if (in.name().empty()) return absl::InvalidArgumentError(what + ": has no name");
    if (!in.type().has_tensor_type()) {
      return absl::UnimplementedError(what + ": is not a tensor");
    }
    const auto& tt = in.type().tensor_type();
    // Integer and bool inputs (indices, token ids, masks) load with their type: the nodes
    // reading them are converted or loaded as opaque operators; `run` refuses what it cannot.
    DType dtype = DType::kFloat32;
    switch (tt.elem_type()) {
      case onnx::TensorProto::FLOAT: break;
      case onnx::TensorProto::FLOAT16: dtype = DType::kFloat16; break;
      case onnx::TensorProto::INT8: dtype = DType::kInt8; break;
      case onnx::TensorProto::UINT8: dtype = DType::kUInt8; break;
      case onnx::TensorProto::INT16: dtype = DType::kInt16; break;
      case onnx::TensorProto::INT32: dtype = DType::kInt32; break;
      case onnx::TensorProto::UINT32: dtype = DType::kUInt32; break;
      case onnx::TensorProto::INT64: dtype = DType::kInt64; break;
      case onnx::TensorProto::BOOL: dtype = DType::kBool; break;
      default:
        return absl::UnimplementedError(absl::StrCat(
            what, ": element type ", tt.elem_type(),
            " is not supported (float, float16, integer and bool inputs are)"));
    }
    if (!tt.has_shape()) return absl::InvalidArgumentError(what + ": has no shape");
    Value v;
    bool symbolic_batch = false;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0 || d.dim_value() > kMaxDim) {
          return absl::InvalidArgumentError(absl::StrCat(
              what, ": dimension ", i, " is ", d.dim_value(), " (valid: 0 to ", kMaxDim, ")"));
        }
        v.shape.push_back(d.dim_value());
      } else if (i == 0) {
        v.shape.push_back(1);  // symbolic batch
        symbolic_batch = true;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            what, ": dimension ", i, " is symbolic ('", d.dim_param(),
            "'); mica needs static shapes (only the batch dimension may be symbolic)"));
      }
    }
    // Rank-4 inputs become NHWC, unless the model itself starts by transposing them (a
    // channels-last model exported with an explicit Transpose), which then cancels out.
    bool only_transposed = true, consumed = false;
    for (const auto& node : graph_proto_.node()) {
      for (const auto& name : node.input()) {
        if (name != in.name()) continue;
        consumed = true;
        if (node.op_type() != "Transpose") only_transposed = false;
      }
    }
    v.nhwc = v.rank() == 4 && !(consumed && only_transposed);
    if (dtype != DType::kFloat32) v.nhwc = false;  // only float activations change layout
    MICA_ASSIGN_OR_RETURN(v.tensor, AddTensor(nullptr, in.name(), PhysShape(v), dtype));
    if (symbolic_batch) {
      auto& t = sg_->tensors[v.tensor];
      t.shape_signature = t.shape;
      t.shape_signature[0] = -1;
    }
    sg_->inputs.push_back(v.tensor);
    values_[in.name()] = std::move(v);
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ReadOutputs() {
  for (const auto& out : graph_proto_.output()) {
    auto it = values_.find(out.name());
    if (it == values_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin_, ": graph output '", out.name(), "' is not produced by any node"));
    }
    Value& v = it->second;
    if (v.tensor == kNoTensor) {
      if (!v.is_const || v.is_int) {
        return absl::UnimplementedError(absl::StrCat(
            origin_, ": graph output '", out.name(), "' is an integer constant"));
      }
      MICA_ASSIGN_OR_RETURN(v.tensor, AddFloatConst(nullptr, out.name(), v.shape, v.floats));
    }
    sg_->outputs.push_back(v.tensor);
  }
  return absl::OkStatus();
}

absl::StatusOr<Graph> OnnxImporter::Import() {
  graph_.source_format = ModelFormat::kOnnx;
  graph_.source_path = origin_;
  graph_.subgraphs.emplace_back();
  sg_ = &graph_.subgraphs.front();
  sg_->name = graph_proto_.name();
  if (!model_.producer_name().empty()) graph_.metadata["producer"] = model_.producer_name();
  if (!model_.producer_version().empty()) {
    graph_.metadata["producer_version"] = model_.producer_version();
  }
  graph_.description = model_.doc_string().substr(0, 4096);
  for (const auto& p : model_.metadata_props()) {
    graph_.metadata[p.key().substr(0, 256)] = p.value().substr(0, 4096);
  }

  MICA_RETURN_IF_ERROR(ReadOpset());
  graph_.metadata["onnx_opset"] = absl::StrCat(opset_);
  graph_.metadata["onnx_ir_version"] = absl::StrCat(model_.ir_version());
  for (const auto& node : graph_proto_.node()) {
    for (const auto& name : node.input()) {
      if (!name.empty()) ++uses_[name];
    }
  }
  for (const auto& out : graph_proto_.output()) ++uses_[out.name()];

  MICA_RETURN_IF_ERROR(ReadInitializers());
  MICA_RETURN_IF_ERROR(ReadInputs());
  for (const auto& vi : graph_proto_.value_info()) declared_[vi.name()] = &vi.type();
  for (const auto& out : graph_proto_.output()) declared_[out.name()] = &out.type();
  for (int i = 0; i < graph_proto_.node_size(); ++i) {
    NodeCtx n(graph_proto_.node(i), i, origin_);
    MICA_RETURN_IF_ERROR(ConvertOrOpaque(n));
  }
  MICA_RETURN_IF_ERROR(ReadOutputs());
  if (sg_->outputs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": graph has no outputs"));
  }

  for (auto& [tensor, data] : pending_floats_) {
    std::vector<uint8_t> bytes(data.size() * sizeof(float));
    if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    data = {};
    sg_->tensors[tensor].data = graph_.AddConstData(std::move(bytes));
  }
  pending_floats_.clear();
  MICA_RETURN_IF_ERROR(ValidateGraph(graph_));
  return std::move(graph_);
}

absl::Status OnnxImporter::ConvertOrOpaque(const NodeCtx& n) {
  const auto& node = n.node();
  bool reads_unknown = false;
  for (const auto& name : node.input()) reads_unknown |= unknown_shape_.count(name) > 0;
  // What a failed conversion may have added, to undo before loading the node as opaque.
  const size_t n_tensors = sg_->tensors.size(), n_ops = sg_->ops.size();
  std::vector<std::pair<std::string, int32_t>> input_tensors;
  for (const auto& name : node.input()) {
    auto it = values_.find(name);
    if (it != values_.end()) input_tensors.emplace_back(name, it->second.tensor);
  }
  // The converters build float32 activations: a node reading an integer or bool activation
  // (an integer graph input, an opaque node's output) is loaded as opaque.
  for (const auto& name : node.input()) {
    auto it = values_.find(name);
    if (it == values_.end() || it->second.is_const || it->second.tensor == kNoTensor) continue;
    const DType t = sg_->tensors[it->second.tensor].dtype;
    if (t != DType::kFloat32 && node.output_size() > 0) {
      return AddOpaque(n, absl::StrCat(n.label(), ": input '", name, "' is ",
                                       std::string(DTypeName(t)),
                                       "; mica's ONNX importer converts float32 activations"));
    }
  }
  const absl::Status s = ConvertNode(n);
  if (s.ok()) return s;
  // Unsupported is not invalid; a node fed by a value of unknown shape cannot be checked.
  if (s.code() != absl::StatusCode::kUnimplemented && !reads_unknown) return s;
  if (node.output_size() == 0) return s;
  sg_->ops.resize(std::min(sg_->ops.size(), n_ops));
  sg_->tensors.resize(std::min(sg_->tensors.size(), n_tensors));
  for (auto it = pending_floats_.begin(); it != pending_floats_.end();) {
    it = it->first >= static_cast<int32_t>(n_tensors) ? pending_floats_.erase(it) : std::next(it);
  }
  for (auto* cache : {&nhwc_cache_, &plain_cache_, &memory_cache_}) {
    for (auto it = cache->begin(); it != cache->end();) {
      it = it->second >= static_cast<int32_t>(n_tensors) ? cache->erase(it) : std::next(it);
    }
  }
  for (auto& [name, ops] : fusable_act_) {
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [&](int32_t o) { return o >= static_cast<int32_t>(n_ops); }),
              ops.end());
  }
  for (const auto& [name, tensor] : input_tensors) values_[name].tensor = tensor;
  for (const auto& name : node.output()) {
    values_.erase(name);
    foldable_.erase(name);
    fusable_act_.erase(name);
  }
  std::string reason(s.message());
  const std::string prefix = absl::StrCat(origin_, ": ");
  if (reason.compare(0, prefix.size(), prefix) == 0) reason.erase(0, prefix.size());
  if (reads_unknown && s.code() != absl::StatusCode::kUnimplemented) {
    reason = absl::StrCat("an input's shape is unknown (", reason, ")");
  }
  return AddOpaque(n, reason);
}

absl::Status OnnxImporter::AddOpaque(const NodeCtx& n, const std::string& reason) {
  const auto& node = n.node();
  std::vector<int32_t> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) continue;
    MICA_ASSIGN_OR_RETURN(Value * v, In(n, i));
    if (v->tensor != kNoTensor) {
      inputs.push_back(v->tensor);
    } else if (v->is_const && !v->is_int) {
      MICA_ASSIGN_OR_RETURN(int32_t t,
                            AddFloatConst(&n, UniqueName(node.input(i)), v->shape, v->floats));
      inputs.push_back(t);
    } else if (v->is_packed()) {
      // In the file's element type, sharing nothing but the bytes the file holds.
      std::vector<uint8_t> bytes(v->packed.begin(), v->packed.end());
      inputs.push_back(AddConst(node.input(i), v->shape, v->packed_dtype, std::move(bytes)));
    } else if (v->is_const) {
      std::vector<int32_t> ints;
      for (int64_t x : v->ints) {
        ints.push_back(static_cast<int32_t>(std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max())));
      }
      inputs.push_back(AddInt32Const(node.input(i), v->shape, ints));
    }
  }
  std::vector<int32_t> outputs;
  std::vector<std::string> unknown;
  for (int i = 0; i < node.output_size(); ++i) {
    const std::string& name = node.output(i);
    if (name.empty()) continue;
    Value v;
    DType dtype = DType::kFloat32;
    bool known = false;
    auto it = declared_.find(name);
    if (it != declared_.end() && it->second->has_tensor_type()) {
      const auto& tt = it->second->tensor_type();
      switch (tt.elem_type()) {
        case onnx::TensorProto::FLOAT16: dtype = DType::kFloat16; break;
        case onnx::TensorProto::INT8: dtype = DType::kInt8; break;
        case onnx::TensorProto::UINT8: dtype = DType::kUInt8; break;
        case onnx::TensorProto::INT16: dtype = DType::kInt16; break;
        case onnx::TensorProto::INT32: dtype = DType::kInt32; break;
        case onnx::TensorProto::UINT32: dtype = DType::kUInt32; break;
        case onnx::TensorProto::INT64: dtype = DType::kInt64; break;
        case onnx::TensorProto::BOOL: dtype = DType::kBool; break;
        default: break;
      }
      if (tt.has_shape()) {
        known = true;
        for (int d = 0; d < tt.shape().dim_size(); ++d) {
          const auto& dim = tt.shape().dim(d);
          if (dim.has_dim_value()) {
            v.shape.push_back(dim.dim_value());
          } else if (d == 0) {
            v.shape.push_back(1);  // symbolic batch, as for graph inputs
          } else {
            known = false;
            break;
          }
        }
      }
    }
    if (!known) {
      v.shape.clear();
      unknown.push_back(name);
      unknown_shape_[name] = true;
    }
    MICA_ASSIGN_OR_RETURN(v.tensor, AddTensor(&n, name, v.shape, dtype));
    outputs.push_back(v.tensor);
    MICA_RETURN_IF_ERROR(SetOut(n, i, std::move(v)));
  }
  const int32_t o = AddOp(OpKind::kOpaque, std::move(inputs), std::move(outputs));
  Operator& op = sg_->ops[o];
  op.opaque_name = node.op_type();
  op.opaque_reason = reason;
  if (!unknown.empty()) {
    absl::StrAppend(&op.opaque_reason, "; the model declares no shape for output '",
                    absl::StrJoin(unknown, "', '"), "' (shown as a scalar)");
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ConvertNode(const NodeCtx& n) {
  const auto& node = n.node();
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return n.Unsupported(absl::StrCat("operator domain '", node.domain(), "' is not supported"));
  }
  if (node.output_size() == 0) return n.Invalid("node has no outputs");
  // Every supported operator but Constant reads input 0.
  if (node.op_type() != "Constant" && !n.HasInput(0)) return n.Invalid("missing input 0");
  for (const auto& a : node.attribute()) {
    if (!a.ref_attr_name().empty()) return n.Unsupported("attribute references (functions)");
  }
  const std::string& op = node.op_type();
  if (op == "Conv") return ConvertConv(n);
  if (op == "ConvTranspose") return ConvertConvTranspose(n);
  if (op == "Gemm") return ConvertGemm(n);
  if (op == "MatMul") return ConvertMatMul(n);
  if (op == "Add") return ConvertBinary(n, OpKind::kAdd);
  if (op == "Sub") return ConvertBinary(n, OpKind::kSub);
  if (op == "Mul") return ConvertBinary(n, OpKind::kMul);
  if (op == "Div") return ConvertBinary(n, OpKind::kDiv);
  if (op == "Max") return ConvertBinary(n, OpKind::kMaximum);
  if (op == "Min") return ConvertBinary(n, OpKind::kMinimum);
  if (op == "Relu") return ConvertRelu(n);
  if (op == "Clip") return ConvertClip(n);
  if (op == "LeakyRelu") {
    MICA_ASSIGN_OR_RETURN(float alpha, n.Float("alpha", 0.01f));
    return Unary(n, OpKind::kLeakyRelu, LeakyReluAttrs{alpha});
  }
  if (op == "Sigmoid") return Unary(n, OpKind::kLogistic);
  if (op == "Tanh") return Unary(n, OpKind::kTanh);
  if (op == "HardSwish") return Unary(n, OpKind::kHardSwish);
  if (op == "Exp") return Unary(n, OpKind::kExp);
  if (op == "Sqrt") return Unary(n, OpKind::kSqrt);
  if (op == "Abs") return Unary(n, OpKind::kAbs);
  if (op == "Neg") return Unary(n, OpKind::kNeg);
  if (op == "MaxPool") return ConvertPool(n, true);
  if (op == "AveragePool") return ConvertPool(n, false);
  if (op == "GlobalAveragePool") return ConvertGlobalPool(n, false);
  if (op == "GlobalMaxPool") return ConvertGlobalPool(n, true);
  if (op == "BatchNormalization") return ConvertBatchNorm(n);
  if (op == "Flatten") return ConvertFlatten(n);
  if (op == "Reshape") return ConvertReshape(n);
  if (op == "Transpose") return ConvertTranspose(n);
  if (op == "Concat") return ConvertConcat(n);
  if (op == "Pad") return ConvertPad(n);
  if (op == "Softmax") return ConvertSoftmax(n);
  if (op == "Squeeze") return ConvertSqueeze(n, false);
  if (op == "Unsqueeze") return ConvertSqueeze(n, true);
  if (op == "Identity" || op == "Dropout") return ConvertIdentity(n);
  if (op == "Constant") return ConvertConstant(n);
  if (op == "Shape") return ConvertShape(n);
  if (op == "Gather") return ConvertGather(n);
  if (op == "Cast") return ConvertCast(n);
  if (op == "ConstantOfShape") return ConvertConstantOfShape(n);
  if (op == "Sum") return ConvertSum(n);
  if (op == "PRelu") return ConvertBinary(n, OpKind::kPrelu);
  if (op == "ReduceMean") return ConvertReduce(n, OpKind::kMean);
  if (op == "ReduceMax") return ConvertReduce(n, OpKind::kReduceMax);
  if (op == "ReduceSum") return ConvertReduce(n, OpKind::kSum);
  return n.Unsupported(absl::StrCat("operator '", op, "' is not supported by mica's ONNX importer"));
}

// --------------------------------------------------------------------------------------------
// Values

absl::StatusOr<Value*> OnnxImporter::In(const NodeCtx& n, int i) {
  if (!n.HasInput(i)) return n.Invalid(absl::StrCat("missing input ", i));
  const std::string& name = n.node().input(i);
  auto it = values_.find(name);
  if (it == values_.end()) {
    return n.Invalid(absl::StrCat("input ", i, " '", name,
                                  "' is not produced by any earlier node, initializer or graph "
                                  "input"));
  }
  return &it->second;
}

absl::StatusOr<Value*> OnnxImporter::ConstIn(const NodeCtx& n, int i, const std::string& what) {
  MICA_ASSIGN_OR_RETURN(Value * v, In(n, i));
  if (!v->is_const) {
    return n.Unsupported(absl::StrCat(what, " (input ", i, " '", n.node().input(i),
                                      "') must be a constant initializer"));
  }
  return v;
}

absl::StatusOr<std::vector<int64_t>> OnnxImporter::ConstInts(const NodeCtx& n, int i,
                                                             const std::string& what) {
  MICA_ASSIGN_OR_RETURN(Value * v, ConstIn(n, i, what));
  if (!v->is_int) {
    return n.Invalid(absl::StrCat(what, " (input ", i, ") must be an integer tensor"));
  }
  if (v->rank() > 1) return n.Invalid(absl::StrCat(what, " (input ", i, ") must be 1-D"));
  v->Unpack();
  return v->ints;
}

absl::Status OnnxImporter::SetOut(const NodeCtx& n, int i, Value v) {
  if (i >= n.node().output_size() || n.node().output(i).empty()) return absl::OkStatus();
  const std::string& name = n.node().output(i);
  if (values_.count(name)) {
    return n.Invalid(absl::StrCat("output '", name, "' is already defined (graph is not SSA)"));
  }
  if (v.tensor != kNoTensor &&
      std::find(sg_->inputs.begin(), sg_->inputs.end(), v.tensor) == sg_->inputs.end()) {
    // The tensor takes the ONNX value's name (a fused or aliased tensor takes the last one);
    // graph inputs keep theirs.
    sg_->tensors[v.tensor].name = name;
  }
  values_[name] = std::move(v);
  return absl::OkStatus();
}

int OnnxImporter::Uses(const std::string& name) const {
  auto it = uses_.find(name);
  return it == uses_.end() ? 0 : it->second;
}

// --------------------------------------------------------------------------------------------
// Tensors

std::string OnnxImporter::UniqueName(const std::string& base) {
  int& count = name_counts_[base];
  ++count;
  return count == 1 ? base : absl::StrCat(base, "_", count);
}

absl::StatusOr<int32_t> OnnxImporter::AddTensor(const NodeCtx* n, const std::string& name,
                                                const std::vector<int64_t>& shape, DType dtype) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim || (count *= d) > kMaxElements) {
      const std::string msg = absl::StrCat("tensor '", name, "' shape ", ShapeStr(shape),
                                           " is negative, has a dimension above ", kMaxDim,
                                           " or exceeds 2^31 elements");
      if (n != nullptr) return n->Invalid(msg);
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", msg));
    }
  }
  if (shape.size() > 8) {
    const std::string msg = absl::StrCat("tensor '", name, "' has rank ", shape.size(), " (max 8)");
    if (n != nullptr) return n->Unsupported(msg);
    return absl::UnimplementedError(absl::StrCat(origin_, ": ", msg));
  }
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  for (int64_t d : shape) t.shape.push_back(static_cast<int32_t>(d));
  sg_->tensors.push_back(std::move(t));
  return static_cast<int32_t>(sg_->tensors.size() - 1);
}

absl::StatusOr<int32_t> OnnxImporter::AddFloatConst(const NodeCtx* n, const std::string& name,
                                                    const std::vector<int64_t>& shape,
                                                    std::vector<float> data) {
  MICA_ASSIGN_OR_RETURN(int32_t t, AddTensor(n, name, shape));
  pending_floats_[t] = std::move(data);
  // Mark as constant now (validators and fold logic see it); bytes are written at the end.
  static const uint8_t kPlaceholder = 0;
  sg_->tensors[t].data = ConstData{&kPlaceholder, 0};
  return t;
}

int32_t OnnxImporter::AddInt32Const(const std::string& name, const std::vector<int64_t>& shape,
                                    const std::vector<int32_t>& data) {
  std::vector<uint8_t> bytes(data.size() * 4);
  if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
  return AddConst(name, shape, DType::kInt32, std::move(bytes));
}

int32_t OnnxImporter::AddConst(const std::string& name, const std::vector<int64_t>& shape,
                               DType dtype, std::vector<uint8_t> bytes) {
  Tensor t;
  t.name = UniqueName(name);
  t.dtype = dtype;
  for (int64_t d : shape) t.shape.push_back(static_cast<int32_t>(d));
  t.data = graph_.AddConstData(std::move(bytes));
  sg_->tensors.push_back(std::move(t));
  return static_cast<int32_t>(sg_->tensors.size() - 1);
}

int32_t OnnxImporter::AddOp(OpKind kind, std::vector<int32_t> inputs,
                            std::vector<int32_t> outputs, OpAttrs attrs) {
  Operator op;
  op.kind = kind;
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  op.attrs = std::move(attrs);
  sg_->ops.push_back(std::move(op));
  return static_cast<int32_t>(sg_->ops.size() - 1);
}

// --------------------------------------------------------------------------------------------
// Layout

namespace {
// Logical NCHW -> physical NHWC: phys[i] = logical[kToNhwc[i]].
constexpr int kToNhwc[4] = {0, 2, 3, 1};
// Physical NHWC -> logical NCHW: logical[i] = phys[kToNchw[i]].
constexpr int kToNchw[4] = {0, 3, 1, 2};

// True when permuting `shape` by `perm` moves no element (non-unit dims keep their order).
bool PermMovesNothing(const std::vector<int64_t>& shape, const std::vector<int>& perm) {
  int last = -1;
  for (int p : perm) {
    if (shape[static_cast<size_t>(p)] == 1) continue;
    if (p < last) return false;
    last = p;
  }
  return true;
}

template <typename T>
std::vector<T> PermuteData(const std::vector<T>& in, const std::vector<int64_t>& shape,
                           const std::vector<int>& perm) {
  const size_t r = shape.size();
  std::vector<int64_t> out_shape(r), in_strides(r, 1);
  for (size_t i = r; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  for (size_t i = 0; i < r; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
  std::vector<T> out(in.size());
  std::vector<int64_t> idx(r, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < r; ++i) src += idx[i] * in_strides[static_cast<size_t>(perm[i])];
    out[o] = in[static_cast<size_t>(src)];
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}
}  // namespace

std::vector<int64_t> OnnxImporter::PhysShape(const Value& v) {
  if (!v.nhwc) return v.shape;
  std::vector<int64_t> s(4);
  for (int i = 0; i < 4; ++i) s[i] = v.shape[kToNhwc[i]];
  return s;
}

absl::StatusOr<int32_t> OnnxImporter::AsNhwc(const NodeCtx& n, const std::string& name, Value& v) {
  if (v.rank() != 4) {
    return n.Invalid(absl::StrCat("input '", name, "' has shape ", ShapeStr(v.shape),
                                  "; expected rank 4 (NCHW)"));
  }
  if (v.nhwc && v.tensor != kNoTensor) return v.tensor;
  auto cached = nhwc_cache_.find(name);
  if (cached != nhwc_cache_.end()) return cached->second;
  const std::vector<int> perm(kToNhwc, kToNhwc + 4);
  std::vector<int64_t> phys(4);
  for (int i = 0; i < 4; ++i) phys[i] = v.shape[kToNhwc[i]];
  int32_t t;
  if (v.is_const) {
    if (v.is_int) return n.Unsupported(absl::StrCat("integer constant '", name, "' as activation"));
    MICA_ASSIGN_OR_RETURN(t, AddFloatConst(&n, UniqueName(name + "/nhwc"), phys,
                                           PermuteData(v.floats, v.shape, perm)));
  } else {
    if (PermMovesNothing(v.shape, perm)) {
      MICA_ASSIGN_OR_RETURN(t, InsertReshape(n, v.tensor, phys, name + "/nhwc"));
    } else {
      MICA_ASSIGN_OR_RETURN(t, AddTensor(&n, UniqueName(name + "/nhwc"), phys));
      std::vector<int32_t> p(perm.begin(), perm.end());
      AddOp(OpKind::kTranspose, {v.tensor, AddInt32Const(name + "/nhwc_perm", {4}, p)}, {t});
    }
  }
  nhwc_cache_[name] = t;
  return t;
}

absl::StatusOr<int32_t> OnnxImporter::AsPlain(const NodeCtx& n, const std::string& name, Value& v) {
  if (v.is_const && v.tensor == kNoTensor) {
    if (v.is_int) return n.Unsupported(absl::StrCat("integer constant '", name, "' as activation"));
    auto cached = plain_cache_.find(name);
    if (cached != plain_cache_.end()) return cached->second;
    MICA_ASSIGN_OR_RETURN(int32_t t, AddFloatConst(&n, UniqueName(name), v.shape, v.floats));
    plain_cache_[name] = t;
    return t;
  }
  if (!v.nhwc) return v.tensor;
  auto cached = plain_cache_.find(name);
  if (cached != plain_cache_.end()) return cached->second;
  const std::vector<int64_t> phys = PhysShape(v);
  const std::vector<int> perm(kToNchw, kToNchw + 4);
  int32_t t;
  if (PermMovesNothing(phys, perm)) {
    MICA_ASSIGN_OR_RETURN(t, InsertReshape(n, v.tensor, v.shape, name + "/nchw"));
  } else {
    MICA_ASSIGN_OR_RETURN(t, AddTensor(&n, UniqueName(name + "/nchw"), v.shape));
    std::vector<int32_t> p(perm.begin(), perm.end());
    AddOp(OpKind::kTranspose, {v.tensor, AddInt32Const(name + "/nchw_perm", {4}, p)}, {t});
  }
  plain_cache_[name] = t;
  return t;
}

absl::StatusOr<int32_t> OnnxImporter::AsMemoryOrder(const NodeCtx& n, const std::string& name,
                                                    Value& v) {
  if (v.nhwc && v.tensor != kNoTensor &&
      PermMovesNothing(PhysShape(v), std::vector<int>(kToNchw, kToNchw + 4))) {
    return v.tensor;
  }
  return AsPlain(n, name, v);
}

absl::StatusOr<int32_t> OnnxImporter::InsertReshape(const NodeCtx& n, int32_t src,
                                                    const std::vector<int64_t>& shape,
                                                    const std::string& name) {
  MICA_ASSIGN_OR_RETURN(int32_t t, AddTensor(&n, UniqueName(name), shape));
  std::vector<int32_t> s(shape.begin(), shape.end());
  AddOp(OpKind::kReshape,
        {src, AddInt32Const(name + "/shape", {static_cast<int64_t>(s.size())}, s)}, {t},
        ReshapeAttrs{s});
  return t;
}

absl::StatusOr<int32_t> OnnxImporter::InsertPad(
    const NodeCtx& n, int32_t src, const std::vector<int64_t>& phys_shape,
    const std::vector<std::pair<int64_t, int64_t>>& pads, float value,
    std::vector<int64_t>* out_shape) {
  std::vector<int64_t> shape = phys_shape;
  std::vector<int32_t> p;
  for (size_t i = 0; i < shape.size(); ++i) {
    const auto [b, e] = pads[i];
    if (b < 0 || e < 0 || b > kMaxDim || e > kMaxDim) {
      return n.Unsupported(absl::StrCat("pads (", b, ", ", e, ") out of range"));
    }
    shape[i] += b + e;
    p.push_back(static_cast<int32_t>(b));
    p.push_back(static_cast<int32_t>(e));
  }
  const std::string base = n.node().output(0) + "/pad";
  MICA_ASSIGN_OR_RETURN(int32_t t, AddTensor(&n, UniqueName(base), shape));
  const int32_t paddings =
      AddInt32Const(base + "/paddings", {static_cast<int64_t>(shape.size()), 2}, p);
  if (value == 0.0f && !std::signbit(value)) {
    AddOp(OpKind::kPad, {src, paddings}, {t});
  } else {
    MICA_ASSIGN_OR_RETURN(int32_t c, AddFloatConst(&n, UniqueName(base + "/value"), {1}, {value}));
    AddOp(OpKind::kPadV2, {src, paddings, c}, {t});
  }
  if (out_shape != nullptr) *out_shape = shape;
  return t;
}

absl::Status OnnxImporter::Unary(const NodeCtx& n, OpKind kind, OpAttrs attrs) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const std::string& xname = n.node().input(0);
  if (x->is_int) return n.Unsupported("integer input");
  Value out;
  out.shape = x->shape;
  out.nhwc = x->nhwc;
  int32_t src;
  if (x->is_const && x->tensor == kNoTensor) {
    MICA_ASSIGN_OR_RETURN(src, AsPlain(n, xname, *x));
    out.nhwc = false;
  } else {
    src = x->tensor;
  }
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, n.node().output(0), PhysShape(out)));
  AddOp(kind, {src}, {out.tensor}, std::move(attrs));
  return SetOut(n, 0, std::move(out));
}

absl::StatusOr<bool> OnnxImporter::TryFuseActivation(const NodeCtx& n, Activation act) {
  if (!n.HasInput(0)) return false;
  const std::string& xname = n.node().input(0);
  auto it = fusable_act_.find(xname);
  if (it == fusable_act_.end() || Uses(xname) != 1) return false;
  std::vector<Activation*> slots;
  for (int32_t op_index : it->second) {
    Operator& op = sg_->ops[op_index];
    Activation* slot = nullptr;
    if (auto* a = std::get_if<Conv2DAttrs>(&op.attrs)) slot = &a->activation;
    if (auto* a = std::get_if<DepthwiseConv2DAttrs>(&op.attrs)) slot = &a->activation;
    if (auto* a = std::get_if<TransposeConvAttrs>(&op.attrs)) slot = &a->activation;
    if (auto* a = std::get_if<FullyConnectedAttrs>(&op.attrs)) slot = &a->activation;
    if (auto* a = std::get_if<ElementwiseAttrs>(&op.attrs)) slot = &a->activation;
    if (auto* a = std::get_if<Pool2DAttrs>(&op.attrs)) slot = &a->activation;
    if (slot == nullptr || *slot != Activation::kNone) return false;
    slots.push_back(slot);
  }
  // Grouped convolutions fuse into every group's conv (they end in a CONCATENATION).
  for (Activation* slot : slots) *slot = act;
  Value out = values_[xname];
  fusable_act_.erase(it);
  foldable_.erase(xname);
  MICA_RETURN_IF_ERROR(SetOut(n, 0, std::move(out)));
  return true;
}

}  // namespace onnx_import
}  // namespace mica
