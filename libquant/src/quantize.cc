#include "mica/quant/quantize.h"

#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/model/analysis.h"
#include "mica/model/load.h"
#include "mica/quant/quant_params.h"

namespace mica {
namespace quant {
namespace {

// How an operator's float outputs get their parameters.
enum class Role { kUnsupported, kFree, kShareInput, kFixed, kConcat };

Role RoleOf(OpKind k) {
  switch (k) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv:
    case OpKind::kFullyConnected:
    case OpKind::kBatchMatMul:
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kSquaredDifference:
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kReluN1To1:
    case OpKind::kLeakyRelu:
    case OpKind::kHardSwish:
    case OpKind::kPrelu:
    case OpKind::kResizeBilinear:
    case OpKind::kArgMax:
    case OpKind::kArgMin:
      return Role::kFree;
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kExpandDims:
    case OpKind::kTranspose:
    case OpKind::kPad:
    case OpKind::kPadV2:
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
    case OpKind::kSlice:
    case OpKind::kStridedSlice:
    case OpKind::kGather:
    case OpKind::kSplit:
    case OpKind::kSplitV:
    case OpKind::kUnpack:
    case OpKind::kReduceMax:
    case OpKind::kResizeNearestNeighbor:
    case OpKind::kSpaceToDepth:
    case OpKind::kDepthToSpace:
      return Role::kShareInput;
    case OpKind::kSoftmax:
    case OpKind::kLogistic:
    case OpKind::kTanh:
      return Role::kFixed;
    case OpKind::kConcatenation:
      return Role::kConcat;
    default:
      return Role::kUnsupported;
  }
}

// The operand a data-movement op copies (SPLIT's inputs are (axis, input)).
size_t DataInput(OpKind k) { return k == OpKind::kSplit ? 1 : 0; }

// Operator versions TFLite converters write for the int8 variants.
int32_t Int8Version(OpKind k) {
  switch (k) {
    case OpKind::kFullyConnected: return 4;
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv: return 3;
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
    case OpKind::kSoftmax:
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kMean:
    case OpKind::kConcatenation:
    case OpKind::kPad:
    case OpKind::kPadV2:
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kTranspose:
    case OpKind::kDequantize:
    case OpKind::kQuantize:
    case OpKind::kLeakyRelu:
    case OpKind::kSlice:
    case OpKind::kStridedSlice:
    case OpKind::kSplit:
    case OpKind::kGather: return 2;
    default: return 1;
  }
}

Quantization ToQuant(const QuantParams& p) {
  Quantization q;
  q.scale = {p.scale};
  q.zero_point = {p.zero_point};
  return q;
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<float> FloatValues(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  if (!v.empty()) std::memcpy(v.data(), t.data.bytes(), v.size() * sizeof(float));
  return v;
}

class Pass {
 public:
  Pass(const Graph& g, const TensorRanges& ranges, const QuantizeOptions& opt)
      : src_(g), in_(g.main()), ranges_(ranges), opt_(opt) {}

  absl::StatusOr<Graph> Run() {
    if (src_.subgraphs.size() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "quantize: graphs with ", src_.subgraphs.size(), " subgraphs are not supported"));
    }
    MICA_RETURN_IF_ERROR(CheckTopologicalOrder(in_));
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      if (RoleOf(in_.ops[i].kind) == Role::kUnsupported) {
        return absl::UnimplementedError(absl::StrCat("quantize: operator ", i, " (",
                                                     std::string(in_.ops[i].name()),
                                                     ") is not supported"));
      }
    }
    for (const Tensor& t : in_.tensors) {
      if (!t.is_constant() && t.dtype == DType::kFloat32 && !t.quant.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("quantize: tensor '", t.name, "' is float but carries quantization"));
      }
    }
    out_.description = src_.description;
    out_.metadata = src_.metadata;
    out_.metadata["quantizer"] = "mica quant (int8, post-training)";
    out_.source_format = ModelFormat::kBuilt;
    out_.subgraphs.push_back(in_);
    sg_ = &out_.main();
    act_.assign(in_.tensors.size(), std::nullopt);

    MICA_RETURN_IF_ERROR(PlanConcats());
    MICA_RETURN_IF_ERROR(AssignActivations());
    MICA_RETURN_IF_ERROR(QuantizeOperands());
    InsertRequantizes();
    for (size_t t = 0; t < in_.tensors.size(); ++t) {
      if (!act_[t]) continue;
      Tensor& tensor = sg_->tensors[t];
      tensor.dtype = DType::kInt8;
      tensor.quant = ToQuant(*act_[t]);
    }
    if (opt_.float_io) AddFloatIo();
    for (Operator& op : sg_->ops) op.version = std::max(op.version, Int8Version(op.kind));
    Compact();
    OwnRemainingConstants();
    MICA_RETURN_IF_ERROR(ValidateGraph(out_));
    return std::move(out_);
  }

 private:
  bool IsFloatActivation(int32_t t) const {
    if (t < 0 || static_cast<size_t>(t) >= in_.tensors.size()) return false;
    const Tensor& tensor = in_.tensors[static_cast<size_t>(t)];
    return !tensor.is_constant() && tensor.dtype == DType::kFloat32;
  }

  absl::StatusOr<TensorRange> RangeOf(int32_t t, const std::string& context) const {
    auto it = ranges_.find(t);
    if (it == ranges_.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("quantize: no calibration range for tensor ", t, " '",
                       in_.tensors[static_cast<size_t>(t)].name, "' (", context, ")"));
    }
    return it->second;
  }

  // Concatenation shares one set of parameters between its inputs and output. Inputs written
  // by an operator free to pick its output scale take the shared set; others get a
  // requantizing QUANTIZE.
  absl::Status PlanConcats() {
    std::vector<int32_t> producer(in_.tensors.size(), -1);
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      for (int32_t t : in_.ops[i].outputs) producer[static_cast<size_t>(t)] = static_cast<int32_t>(i);
    }
    std::set<int32_t> graph_inputs(in_.inputs.begin(), in_.inputs.end());
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      const Operator& op = in_.ops[i];
      if (op.kind != OpKind::kConcatenation || op.outputs.empty() ||
          !IsFloatActivation(op.outputs[0])) {
        continue;
      }
      const std::string ctx = absl::StrCat("output of operator ", i, " CONCATENATION");
      MICA_ASSIGN_OR_RETURN(TensorRange r, RangeOf(op.outputs[0], ctx));
      for (int32_t t : op.inputs) {
        if (auto it = ranges_.find(t); it != ranges_.end()) {
          r.min = std::min(r.min, it->second.min);
          r.max = std::max(r.max, it->second.max);
        }
      }
      const QuantParams p = ChooseAsymmetricParams(r.min, r.max);
      override_[op.outputs[0]] = p;
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int32_t t = op.inputs[k];
        if (!IsFloatActivation(t)) continue;
        const int32_t prod = producer[static_cast<size_t>(t)];
        const bool free = prod >= 0 && !graph_inputs.count(t) &&
                          RoleOf(in_.ops[static_cast<size_t>(prod)].kind) == Role::kFree &&
                          !override_.count(t);
        if (free) {
          override_[t] = p;
        } else {
          requant_.push_back({static_cast<int32_t>(i), k, p});
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status AssignActivations() {
    for (int32_t t : in_.inputs) {
      if (!IsFloatActivation(t)) continue;
      if (auto it = override_.find(t); it != override_.end()) {
        act_[static_cast<size_t>(t)] = it->second;
        continue;
      }
      MICA_ASSIGN_OR_RETURN(TensorRange r, RangeOf(t, "graph input"));
      act_[static_cast<size_t>(t)] = ChooseAsymmetricParams(r.min, r.max);
    }
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      const Operator& op = in_.ops[i];
      const Role role = RoleOf(op.kind);
      for (int32_t t : op.outputs) {
        if (!IsFloatActivation(t)) continue;
        const std::string ctx =
            absl::StrCat("output of operator ", i, " ", std::string(op.name()));
        QuantParams p;
        if (auto it = override_.find(t); it != override_.end()) {
          p = it->second;
        } else if (role == Role::kFixed) {
          p = op.kind == OpKind::kTanh ? QuantParams{1.0f / 128, 0} : QuantParams{1.0f / 256, -128};
        } else if (role == Role::kShareInput) {
          const size_t d = DataInput(op.kind);
          const int32_t src = d < op.inputs.size() ? op.inputs[d] : kNoTensor;
          if (!IsFloatActivation(src) || !act_[static_cast<size_t>(src)]) {
            return absl::InvalidArgumentError(
                absl::StrCat("quantize: ", ctx, " copies an input that is not a float activation"));
          }
          p = *act_[static_cast<size_t>(src)];
        } else {
          MICA_ASSIGN_OR_RETURN(TensorRange r, RangeOf(t, ctx));
          p = ChooseAsymmetricParams(r.min, r.max);
        }
        act_[static_cast<size_t>(t)] = p;
      }
    }
    return absl::OkStatus();
  }

  int32_t NewTensor(Tensor t) {
    sg_->tensors.push_back(std::move(t));
    return static_cast<int32_t>(sg_->tensors.size() - 1);
  }

  int32_t NewConstant(const Tensor& like, DType dtype, std::vector<uint8_t> bytes,
                      Quantization q) {
    Tensor t;
    t.name = like.name;
    t.dtype = dtype;
    t.shape = like.shape;
    t.quant = std::move(q);
    t.data = out_.AddConstData(std::move(bytes));
    return NewTensor(std::move(t));
  }

  // Symmetric int8 weights, per channel along `axis` (or per tensor when axis < 0).
  int32_t QuantizeWeights(const Tensor& w, int axis, std::vector<float>* scales) {
    const std::vector<float> v = FloatValues(w);
    ChannelQuantized cq = QuantizeSymmetric(v.data(), w.shape, axis);
    Quantization q;
    q.scale = cq.scales;
    q.zero_point.assign(cq.scales.size(), 0);
    q.axis = axis >= 0 ? axis : 0;
    *scales = cq.scales;
    return NewConstant(w, DType::kInt8, Bytes(cq.values), std::move(q));
  }

  int32_t QuantizeBiasTensor(const Tensor& b, float in_scale, const std::vector<float>& ws) {
    const std::vector<float> v = FloatValues(b);
    std::vector<int32_t> q = QuantizeBias(v.data(), v.size(), in_scale, ws);
    Quantization qp;
    for (size_t c = 0; c < ws.size(); ++c) {
      qp.scale.push_back(in_scale * ws[c]);
      qp.zero_point.push_back(0);
    }
    return NewConstant(b, DType::kInt32, Bytes(q), std::move(qp));
  }

  // Asymmetric int8 with the constant's own range, or with `p` when given.
  int32_t QuantizeConstant(const Tensor& c, std::optional<QuantParams> p) {
    const std::vector<float> v = FloatValues(c);
    if (!p) {
      float lo = 0, hi = 0;
      for (float x : v) {
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      p = ChooseAsymmetricParams(lo, hi);
    }
    std::vector<int8_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i) q[i] = QuantizeValue(v[i], *p);
    return NewConstant(c, DType::kInt8, Bytes(q), ToQuant(*p));
  }

  absl::Status QuantizeOperands() {
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      Operator& op = sg_->ops[i];
      const std::string ctx = absl::StrCat("quantize: operator ", i, " (", std::string(op.name()), ")");
      auto const_float = [&](size_t k) -> const Tensor* {
        if (k >= op.inputs.size() || op.inputs[k] < 0) return nullptr;
        const Tensor& t = in_.tensors[static_cast<size_t>(op.inputs[k])];
        return t.is_constant() && t.dtype == DType::kFloat32 ? &t : nullptr;
      };
      auto act_scale = [&](size_t k) -> std::optional<float> {
        if (k >= op.inputs.size() || !IsFloatActivation(op.inputs[k])) return std::nullopt;
        return act_[static_cast<size_t>(op.inputs[k])]->scale;
      };
      size_t weight = SIZE_MAX, bias = SIZE_MAX, data = 0;
      int axis = -1;
      switch (op.kind) {
        case OpKind::kConv2D: weight = 1; bias = 2; axis = opt_.per_channel ? 0 : -1; break;
        case OpKind::kDepthwiseConv2D: weight = 1; bias = 2; axis = opt_.per_channel ? 3 : -1; break;
        case OpKind::kTransposeConv: weight = 1; bias = 3; data = 2; axis = opt_.per_channel ? 0 : -1; break;
        case OpKind::kFullyConnected: weight = 1; bias = 2; break;
        default: break;
      }
      if (weight != SIZE_MAX) {
        const Tensor* w = const_float(weight);
        if (w == nullptr) {
          return absl::UnimplementedError(ctx + ": weights must be a float32 constant");
        }
        const std::optional<float> in_scale = act_scale(data);
        if (!in_scale) return absl::InvalidArgumentError(ctx + ": input is not a float activation");
        std::vector<float> scales;
        op.inputs[weight] = QuantizeWeights(*w, axis, &scales);
        if (const Tensor* b = const_float(bias); b != nullptr) {
          if (b->num_elements() != static_cast<int64_t>(scales.size()) && scales.size() != 1) {
            return absl::InvalidArgumentError(ctx + ": bias length differs from output channels");
          }
          op.inputs[bias] = QuantizeBiasTensor(*b, *in_scale, scales);
        } else if (bias < op.inputs.size() && op.inputs[bias] >= 0 &&
                   !in_.tensors[static_cast<size_t>(op.inputs[bias])].is_constant()) {
          return absl::UnimplementedError(ctx + ": non-constant bias");
        }
      }
      // Every other float constant operand: symmetric per tensor for matrix products,
      // the data operand's parameters for PADV2's pad value, else its own range.
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        if (k == weight || k == bias) continue;
        const Tensor* c = const_float(k);
        if (c == nullptr) continue;
        if (op.kind == OpKind::kBatchMatMul) {
          std::vector<float> scales;
          op.inputs[k] = QuantizeWeights(*c, -1, &scales);
        } else if (op.kind == OpKind::kPadV2 && k == 2 && act_scale(0)) {
          op.inputs[k] = QuantizeConstant(*c, *act_[static_cast<size_t>(op.inputs[0])]);
        } else {
          op.inputs[k] = QuantizeConstant(*c, std::nullopt);
        }
      }
    }
    return absl::OkStatus();
  }

  void InsertRequantizes() {
    if (requant_.empty()) return;
    std::vector<Operator> ops;
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      for (const Requant& r : requant_) {
        if (r.op != static_cast<int32_t>(i)) continue;
        const int32_t src = sg_->ops[i].inputs[r.input];
        Tensor t = sg_->tensors[static_cast<size_t>(src)];
        t.name += "/requantized";
        t.dtype = DType::kInt8;
        t.quant = ToQuant(r.params);
        const int32_t dst = NewTensor(std::move(t));
        Operator q;
        q.kind = OpKind::kQuantize;
        q.inputs = {src};
        q.outputs = {dst};
        ops.push_back(std::move(q));
        sg_->ops[i].inputs[r.input] = dst;
      }
      ops.push_back(std::move(sg_->ops[i]));
    }
    sg_->ops = std::move(ops);
  }

  void AddFloatIo() {
    std::vector<Operator> front, back;
    for (int32_t& t : sg_->inputs) {
      if (!act_[static_cast<size_t>(t)]) continue;
      Tensor f = sg_->tensors[static_cast<size_t>(t)];
      f.dtype = DType::kFloat32;
      f.quant = {};
      sg_->tensors[static_cast<size_t>(t)].name += "_int8";
      const int32_t fi = NewTensor(std::move(f));
      Operator q;
      q.kind = OpKind::kQuantize;
      q.inputs = {fi};
      q.outputs = {t};
      front.push_back(std::move(q));
      t = fi;
    }
    for (int32_t& t : sg_->outputs) {
      if (t >= static_cast<int32_t>(act_.size()) || !act_[static_cast<size_t>(t)]) continue;
      Tensor f = sg_->tensors[static_cast<size_t>(t)];
      f.dtype = DType::kFloat32;
      f.quant = {};
      sg_->tensors[static_cast<size_t>(t)].name += "_int8";
      const int32_t fo = NewTensor(std::move(f));
      Operator d;
      d.kind = OpKind::kDequantize;
      d.inputs = {t};
      d.outputs = {fo};
      back.push_back(std::move(d));
      t = fo;
    }
    front.insert(front.end(), std::make_move_iterator(sg_->ops.begin()),
                 std::make_move_iterator(sg_->ops.end()));
    front.insert(front.end(), std::make_move_iterator(back.begin()),
                 std::make_move_iterator(back.end()));
    sg_->ops = std::move(front);
  }

  // Drops tensors nothing references any more (the float weights) and renumbers the rest.
  void Compact() {
    std::vector<bool> used(sg_->tensors.size(), false);
    auto mark = [&](int32_t t) {
      if (t >= 0 && static_cast<size_t>(t) < used.size()) used[static_cast<size_t>(t)] = true;
    };
    for (const Operator& op : sg_->ops) {
      for (int32_t t : op.inputs) mark(t);
      for (int32_t t : op.outputs) mark(t);
      for (int32_t t : op.intermediates) mark(t);
    }
    for (int32_t t : sg_->inputs) mark(t);
    for (int32_t t : sg_->outputs) mark(t);
    std::vector<int32_t> remap(sg_->tensors.size(), kNoTensor);
    std::vector<Tensor> kept;
    for (size_t t = 0; t < sg_->tensors.size(); ++t) {
      if (!used[t]) continue;
      remap[t] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(sg_->tensors[t]));
    }
    auto apply = [&](std::vector<int32_t>& v) {
      for (int32_t& t : v) {
        if (t >= 0) t = remap[static_cast<size_t>(t)];
      }
    };
    for (Operator& op : sg_->ops) {
      apply(op.inputs);
      apply(op.outputs);
      apply(op.intermediates);
    }
    apply(sg_->inputs);
    apply(sg_->outputs);
    sg_->tensors = std::move(kept);
  }

  // Constants the pass kept as they were (int32 shapes, axes) still point into the float
  // graph's buffers: copy them so the result owns everything.
  void OwnRemainingConstants() {
    std::set<const uint8_t*> ours;
    for (const auto& buf : out_.storage) ours.insert(buf->data());
    for (Tensor& t : sg_->tensors) {
      if (!t.is_constant() || ours.count(t.data.bytes())) continue;
      t.data = out_.AddConstData(std::vector<uint8_t>(t.data.bytes(), t.data.bytes() + t.data.size));
    }
  }

  struct Requant {
    int32_t op;
    size_t input;
    QuantParams params;
  };

  const Graph& src_;
  const Subgraph& in_;
  const TensorRanges& ranges_;
  QuantizeOptions opt_;
  Graph out_;
  Subgraph* sg_ = nullptr;
  std::vector<std::optional<QuantParams>> act_;
  std::map<int32_t, QuantParams> override_;
  std::vector<Requant> requant_;
};

}  // namespace

absl::StatusOr<Graph> QuantizeGraph(const Graph& float_graph, const TensorRanges& ranges,
                                    const QuantizeOptions& options) {
  if (float_graph.subgraphs.empty()) {
    return absl::InvalidArgumentError("quantize: the graph has no subgraph");
  }
  Pass pass(float_graph, ranges, options);
  return pass.Run();
}

}  // namespace quant
}  // namespace mica
