#include "mica/quant/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
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

// Operators TFLite has 16x8 (int16 activations, int8 weights) kernels for.
bool HasInt16Kernel(OpKind k) {
  switch (k) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv:
    case OpKind::kFullyConnected:
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
    case OpKind::kSoftmax:
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kExpandDims:
    case OpKind::kConcatenation:
    case OpKind::kPad:
    case OpKind::kMean:
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kLeakyRelu:
    case OpKind::kTranspose:
    case OpKind::kStridedSlice:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
      return true;
    default:
      return false;
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

// A constant that holds real numbers: float32, or int8 with quantization parameters (the
// weights of a dynamic-range "hybrid" float model, dequantized before requantizing).
bool IsRealConstant(const Tensor& t) {
  return t.is_constant() && (t.dtype == DType::kFloat32 ||
                             (t.dtype == DType::kInt8 && !t.quant.scale.empty()));
}

std::vector<float> FloatValues(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  if (v.empty()) return v;
  if (t.dtype == DType::kFloat32) {
    std::memcpy(v.data(), t.data.bytes(), v.size() * sizeof(float));
    return v;
  }
  // int8 with per-tensor or per-axis parameters.
  const int8_t* q = reinterpret_cast<const int8_t*>(t.data.bytes());
  const size_t channels = t.quant.scale.size();
  size_t inner = 1;
  if (channels > 1) {
    for (size_t d = static_cast<size_t>(t.quant.axis) + 1; d < t.shape.size(); ++d) inner *= static_cast<size_t>(t.shape[d]);
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t c = channels > 1 ? (i / inner) % channels : 0;
    const int64_t zp = c < t.quant.zero_point.size() ? t.quant.zero_point[c] : 0;
    v[i] = t.quant.scale[c] * static_cast<float>(q[i] - zp);
  }
  return v;
}

double Sqnr(double signal, double noise) {
  if (noise == 0.0) return std::numeric_limits<double>::infinity();
  if (signal == 0.0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

// Weight operand, bias operand and data operand of the operators with constant weights.
struct WeightSlots {
  size_t weight = SIZE_MAX, bias = SIZE_MAX, data = 0;
  int channel_axis = -1;  // per-channel axis (per-channel mode only)
};

WeightSlots SlotsOf(OpKind k) {
  WeightSlots s;
  switch (k) {
    case OpKind::kConv2D: s.weight = 1; s.bias = 2; s.channel_axis = 0; break;
    case OpKind::kDepthwiseConv2D: s.weight = 1; s.bias = 2; s.channel_axis = 3; break;
    case OpKind::kTransposeConv: s.weight = 1; s.bias = 3; s.data = 2; s.channel_axis = 0; break;
    case OpKind::kFullyConnected: s.weight = 1; s.bias = 2; break;
    default: break;
  }
  return s;
}

class Pass {
 public:
  Pass(const Graph& g, const TensorRanges& ranges, const QuantizeOptions& opt)
      : src_(g), in_(g.main()), ranges_(ranges), opt_(opt) {}

  absl::StatusOr<QuantizeResult> Run() {
    if (src_.subgraphs.size() != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "quantize: graphs with ", src_.subgraphs.size(), " subgraphs are not supported"));
    }
    MICA_RETURN_IF_ERROR(CheckTopologicalOrder(in_));
    if (opt_.uint8_io && opt_.activations != ActivationType::kInt8) {
      return absl::InvalidArgumentError("quantize: uint8 inputs/outputs need int8 activations");
    }
    float_op_.assign(in_.ops.size(), false);
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      const Operator& op = in_.ops[i];
      std::string reason;
      if (opt_.keep_float.count(static_cast<int32_t>(i))) {
        reason = "excluded (--exclude)";
      } else if (RoleOf(op.kind) == Role::kUnsupported) {
        reason = "the quantizer has no integer rule for this operator";
      } else if (opt_.activations == ActivationType::kInt16 && !HasInt16Kernel(op.kind)) {
        reason = "TFLite has no 16x8 (int16 activation) kernel for this operator";
      } else if (const WeightSlots ws = SlotsOf(op.kind); ws.weight != SIZE_MAX) {
        const bool const_w = ws.weight < op.inputs.size() && op.inputs[ws.weight] >= 0 &&
                             IsRealConstant(in_.tensors[static_cast<size_t>(op.inputs[ws.weight])]);
        const bool const_b = ws.bias >= op.inputs.size() || op.inputs[ws.bias] < 0 ||
                             in_.tensors[static_cast<size_t>(op.inputs[ws.bias])].is_constant();
        if (!const_w) reason = "its weights are not a constant of real numbers";
        if (!const_b) reason = "its bias is computed at run time";
      }
      if (reason.empty()) continue;
      if (!opt_.float_fallback && !opt_.keep_float.count(static_cast<int32_t>(i))) {
        if (RoleOf(op.kind) == Role::kUnsupported) {
          return absl::UnimplementedError(absl::StrCat("quantize: operator ", i, " (",
                                                       std::string(op.name()),
                                                       ") is not supported"));
        }
        if (opt_.activations == ActivationType::kInt16 && !HasInt16Kernel(op.kind)) {
          return absl::UnimplementedError(absl::StrCat("quantize: operator ", i, " (",
                                                       std::string(op.name()), "): ", reason));
        }
        continue;  // weight problems are reported below with their context
      }
      float_op_[i] = true;
      result_.fallbacks.push_back({static_cast<int32_t>(i), std::string(op.name()), reason});
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
    is_int_.assign(in_.tensors.size(), false);
    origin_.resize(in_.tensors.size());
    for (size_t t = 0; t < origin_.size(); ++t) origin_[t] = static_cast<int32_t>(t);
    op_state_.assign(in_.ops.size(), OpState::kQuantized);
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      if (float_op_[i]) op_state_[i] = OpState::kFloat;
    }

    MICA_RETURN_IF_ERROR(PlanConcats());
    MICA_RETURN_IF_ERROR(AssignActivations());
    MICA_RETURN_IF_ERROR(QuantizeOperands());
    InsertRequantizes();
    for (size_t t = 0; t < in_.tensors.size(); ++t) {
      if (!act_[t] || !is_int_[t]) continue;
      Tensor& tensor = sg_->tensors[t];
      tensor.dtype = ActType();
      tensor.quant = ToQuant(*act_[t]);
    }
    MICA_RETURN_IF_ERROR(InsertFallbackConversions());
    if (opt_.float_io) {
      AddFloatIo();
    } else if (opt_.uint8_io) {
      AddUint8Io();
    }
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      if (op_state_[i] == OpState::kFloat) continue;
      Operator& op = sg_->ops[i];
      op.version = std::max(op.version, Int8Version(op.kind));
    }
    Compact();
    OwnRemainingConstants();
    MICA_RETURN_IF_ERROR(ValidateGraph(out_));
    result_.graph = std::move(out_);
    result_.source_tensor = std::move(origin_);
    return std::move(result_);
  }

 private:
  enum class OpState { kQuantized, kFloat, kAsIs };

  bool int16() const { return opt_.activations == ActivationType::kInt16; }
  DType ActType() const { return int16() ? DType::kInt16 : DType::kInt8; }

  // Activation parameters for an observed range: asymmetric int8, or symmetric int16.
  QuantParams ActParams(const TensorRange& r) const {
    if (int16()) {
      return ChooseSymmetricParams(std::max(std::fabs(r.min), std::fabs(r.max)), 32767);
    }
    return ChooseAsymmetricParams(r.min, r.max);
  }

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
      if (op.kind != OpKind::kConcatenation || op.outputs.empty() || float_op_[i] ||
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
      const QuantParams p = ActParams(r);
      override_[op.outputs[0]] = p;
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int32_t t = op.inputs[k];
        if (!IsFloatActivation(t)) continue;
        const int32_t prod = producer[static_cast<size_t>(t)];
        const bool free = prod >= 0 && !graph_inputs.count(t) &&
                          !float_op_[static_cast<size_t>(prod)] &&
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
    // A graph input read only by float operators stays float.
    std::set<int32_t> read_by_quantized;
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      if (float_op_[i]) continue;
      for (int32_t t : in_.ops[i].inputs) read_by_quantized.insert(t);
    }
    for (int32_t t : in_.inputs) {
      if (!IsFloatActivation(t) || !read_by_quantized.count(t)) continue;
      is_int_[static_cast<size_t>(t)] = true;
      if (auto it = override_.find(t); it != override_.end()) {
        act_[static_cast<size_t>(t)] = it->second;
        continue;
      }
      MICA_ASSIGN_OR_RETURN(TensorRange r, RangeOf(t, "graph input"));
      act_[static_cast<size_t>(t)] = ActParams(r);
    }
    for (size_t i = 0; i < in_.ops.size(); ++i) {
      const Operator& op = in_.ops[i];
      const Role role = RoleOf(op.kind);
      for (int32_t t : op.outputs) {
        if (!IsFloatActivation(t)) continue;
        if (float_op_[i]) {
          // The output stays float; a quantized reader gets a QUANTIZEd copy with these.
          if (auto it = ranges_.find(t); it != ranges_.end()) {
            act_[static_cast<size_t>(t)] = override_.count(t) ? override_[t] : ActParams(it->second);
          }
          continue;
        }
        is_int_[static_cast<size_t>(t)] = true;
        const std::string ctx =
            absl::StrCat("output of operator ", i, " ", std::string(op.name()));
        QuantParams p;
        if (auto it = override_.find(t); it != override_.end()) {
          p = it->second;
        } else if (role == Role::kFixed) {
          if (int16()) {
            p = QuantParams{1.0f / 32768, 0};
          } else {
            p = op.kind == OpKind::kTanh ? QuantParams{1.0f / 128, 0}
                                         : QuantParams{1.0f / 256, -128};
          }
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
          p = ActParams(r);
        }
        act_[static_cast<size_t>(t)] = p;
      }
    }
    return absl::OkStatus();
  }

  int32_t NewTensor(Tensor t, int32_t origin = -1) {
    sg_->tensors.push_back(std::move(t));
    origin_.push_back(origin);
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

  // Symmetric weights, per channel along `axis` (or per tensor when axis < 0): int8 on
  // [-127, 127] with the channel's absolute maximum, or int4 on [-7, 7] with the clip that
  // minimises the channel's squared error.
  // `min_scale` (one per channel, or empty) raises a channel's scale so its bias fits.
  int32_t QuantizeWeights(const Tensor& w, int axis, bool int4, int32_t op,
                          std::vector<float>* scales, const std::vector<double>& min_scale = {}) {
    const std::vector<float> v = FloatValues(w);
    const int64_t n = static_cast<int64_t>(v.size());
    const bool per_channel = axis >= 0 && axis < static_cast<int>(w.shape.size());
    int64_t channels = 1, inner = 1;
    if (per_channel) {
      channels = w.shape[static_cast<size_t>(axis)];
      for (size_t d = static_cast<size_t>(axis) + 1; d < w.shape.size(); ++d) inner *= w.shape[d];
    }
    const int32_t qmax = int4 ? 7 : 127;
    auto channel_of = [&](int64_t i) { return per_channel ? (i / inner) % channels : 0; };
    std::vector<float> abs_max(static_cast<size_t>(channels), 0.0f);
    for (int64_t i = 0; i < n; ++i) {
      float& m = abs_max[static_cast<size_t>(channel_of(i))];
      if (std::isfinite(v[static_cast<size_t>(i)])) m = std::max(m, std::fabs(v[static_cast<size_t>(i)]));
    }
    std::vector<float> clip = abs_max;
    if (int4) {
      // Search the clip per channel: a in {1.00, 0.99, ..., 0.50} of the absolute maximum.
      std::vector<double> best(static_cast<size_t>(channels), -1.0);
      for (int step = 0; step <= 50; ++step) {
        const float a = 1.0f - 0.01f * static_cast<float>(step);
        std::vector<double> err(static_cast<size_t>(channels), 0.0);
        for (int64_t i = 0; i < n; ++i) {
          const size_t c = static_cast<size_t>(channel_of(i));
          const QuantParams p = ChooseSymmetricParams(a * abs_max[c], qmax);
          const float x = v[static_cast<size_t>(i)];
          const float r = DequantizeValue(QuantizeToInt(x, p, -qmax, qmax), p);
          err[c] += static_cast<double>(x - r) * static_cast<double>(x - r);
        }
        for (size_t c = 0; c < err.size(); ++c) {
          if (best[c] < 0 || err[c] < best[c]) {
            best[c] = err[c];
            clip[c] = a * abs_max[c];
          }
        }
      }
    }
    std::vector<int8_t> q(static_cast<size_t>(n));
    scales->clear();
    for (size_t c = 0; c < clip.size(); ++c) {
      float sc = ChooseSymmetricParams(clip[c], qmax).scale;
      if (c < min_scale.size() && sc < min_scale[c]) {
        sc = static_cast<float>(min_scale[c]);
        clip[c] = sc * static_cast<float>(qmax);
      }
      scales->push_back(sc);
    }
    WeightReport rep;
    rep.op = op;
    rep.tensor = w.name;
    rep.channels = static_cast<int32_t>(scales->size());
    rep.bits = int4 ? 4 : 8;
    rep.elements = n;
    double signal = 0, noise = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t c = static_cast<size_t>(channel_of(i));
      const QuantParams p{(*scales)[c], 0};
      const float x = v[static_cast<size_t>(i)];
      // TFLite's converter multiplies by the float reciprocal of the scale (then rounds half
      // away from zero); doing the same keeps ties on the same side as its files.
      const float inv = 1.0f / p.scale;
      const float scaled = std::isfinite(x) ? std::round(x * inv) : 0.0f;
      const int32_t qi = static_cast<int32_t>(std::clamp(scaled, static_cast<float>(-qmax),
                                                         static_cast<float>(qmax)));
      q[static_cast<size_t>(i)] = static_cast<int8_t>(qi);
      if (std::fabs(x) > clip[c] * (1.0f + 1e-6f)) ++rep.clipped;
      const double r = DequantizeValue(qi, p);
      signal += static_cast<double>(x) * x;
      noise += (x - r) * (x - r);
    }
    rep.sqnr_db = Sqnr(signal, noise);
    result_.weights.push_back(rep);
    Quantization qp;
    qp.scale = *scales;
    qp.zero_point.assign(scales->size(), 0);
    qp.axis = per_channel ? axis : 0;
    if (!int4) return NewConstant(w, DType::kInt8, Bytes(q), std::move(qp));
    std::vector<uint8_t> packed(static_cast<size_t>((n + 1) / 2), 0);
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t nib = static_cast<uint8_t>(q[static_cast<size_t>(i)]) & 0x0F;
      packed[static_cast<size_t>(i / 2)] |= static_cast<uint8_t>(i % 2 ? nib << 4 : nib);
    }
    return NewConstant(w, DType::kInt4, std::move(packed), std::move(qp));
  }

  // Bias at scale in_scale x weight scale: int32, or int64 for 16x8 conv-like operators.
  int32_t QuantizeBiasTensor(const Tensor& b, float in_scale, const std::vector<float>& ws,
                             bool int64) {
    const std::vector<float> v = FloatValues(b);
    Quantization qp;
    for (size_t c = 0; c < ws.size(); ++c) {
      qp.scale.push_back(in_scale * ws[c]);
      qp.zero_point.push_back(0);
    }
    WeightReport* rep = result_.weights.empty() ? nullptr : &result_.weights.back();
    if (!int64) {
      std::vector<int32_t> q = QuantizeBias(v.data(), v.size(), in_scale, ws);
      for (size_t i = 0; i < v.size() && rep != nullptr; ++i) {
        const double s = static_cast<double>(in_scale) * ws[ws.size() == 1 ? 0 : i];
        if (std::fabs(v[i] / s) > 2147483647.0) ++rep->bias_saturated;
      }
      return NewConstant(b, DType::kInt32, Bytes(q), std::move(qp));
    }
    // |bias| < 2^40 keeps the 16x8 kernels' int64 arithmetic exact (TFLite Micro's bound;
    // Vela refuses 2^40 itself).
    constexpr double kMax = 1099511627775.0;
    std::vector<int64_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      const double s = static_cast<double>(in_scale) * ws[ws.size() == 1 ? 0 : i];
      double r = std::isfinite(v[i]) && s > 0 ? std::round(v[i] / s) : 0.0;
      if (std::fabs(r) > kMax) {
        if (rep != nullptr) ++rep->bias_saturated;
        r = std::clamp(r, -kMax, kMax);
      }
      q[i] = static_cast<int64_t>(r);
    }
    return NewConstant(b, DType::kInt64, Bytes(q), std::move(qp));
  }

  // Asymmetric int8 (symmetric int16) with the constant's own range, or with `p` when given.
  int32_t QuantizeConstant(const Tensor& c, std::optional<QuantParams> p) {
    const std::vector<float> v = FloatValues(c);
    if (!p) {
      float lo = 0, hi = 0;
      for (float x : v) {
        if (!std::isfinite(x)) continue;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      p = ActParams(TensorRange{lo, hi});
    }
    if (int16()) {
      std::vector<int16_t> q(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        q[i] = static_cast<int16_t>(QuantizeToInt(v[i], *p, -32767, 32767));
      }
      return NewConstant(c, DType::kInt16, Bytes(q), ToQuant(*p));
    }
    std::vector<int8_t> q(v.size());
    for (size_t i = 0; i < v.size(); ++i) q[i] = QuantizeValue(v[i], *p);
    return NewConstant(c, DType::kInt8, Bytes(q), ToQuant(*p));
  }

  absl::Status QuantizeOperands() {
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      if (float_op_[i]) continue;
      Operator& op = sg_->ops[i];
      const std::string ctx = absl::StrCat("quantize: operator ", i, " (", std::string(op.name()), ")");
      const WeightSlots slots = SlotsOf(op.kind);
      auto const_float = [&](size_t k) -> const Tensor* {
        if (k >= op.inputs.size() || op.inputs[k] < 0) return nullptr;
        const Tensor& t = in_.tensors[static_cast<size_t>(op.inputs[k])];
        if (k == slots.weight) return IsRealConstant(t) ? &t : nullptr;
        return t.is_constant() && t.dtype == DType::kFloat32 ? &t : nullptr;
      };
      auto act_scale = [&](size_t k) -> std::optional<float> {
        if (k >= op.inputs.size() || !IsFloatActivation(op.inputs[k]) ||
            !act_[static_cast<size_t>(op.inputs[k])]) {
          return std::nullopt;
        }
        return act_[static_cast<size_t>(op.inputs[k])]->scale;
      };
      const size_t weight = slots.weight, bias = slots.bias, data = slots.data;
      // TFLite Micro runs int4 FULLY_CONNECTED weights per tensor only (its prepare refuses
      // per-channel int4 filters), so a8w4 keeps those per tensor.
      const bool int4_fc = op.kind == OpKind::kFullyConnected && opt_.weights == WeightType::kInt4;
      const int axis = !opt_.per_channel                                      ? -1
                       : op.kind == OpKind::kFullyConnected && opt_.per_channel_fc && !int4_fc ? 0
                                                                                 : slots.channel_axis;
      if (weight != SIZE_MAX) {
        const Tensor* w = const_float(weight);
        if (w == nullptr) {
          return absl::UnimplementedError(ctx + ": weights must be a constant of real numbers");
        }
        const std::optional<float> in_scale = act_scale(data);
        if (!in_scale) return absl::InvalidArgumentError(ctx + ": input is not a float activation");
        const bool int4 = opt_.weights == WeightType::kInt4 && op.kind != OpKind::kTransposeConv;
        // An int8 operator's worst-case accumulator, 255 x sum |q_w| + |q_b|, must fit int32
        // (TFLite Micro and mica refuse it otherwise): a channel whose float bias is large
        // against input_scale x weight_scale gets a larger weight scale (TFLite's converter
        // adjusts weight scales for its bias bound the same way).
        // int16 operators: |bias| < 2^40 (TFLite Micro's 16x8 bound and Vela's), so the same
        // widening applies there.
        std::vector<double> min_scale;
        if (const Tensor* b = const_float(bias); b != nullptr) {
          const std::vector<float> bv = FloatValues(*b);
          const int64_t per = std::max<int64_t>(1, w->num_elements() / std::max<int64_t>(1, b->num_elements()));
          // Weights feeding one output: `per` of them, each at most 127.
          const double room = int16() ? 1099511627775.0 * 0.99
                                      : 2147483647.0 * 0.99 - 255.0 * 127.0 * static_cast<double>(per);
          if (room > 0) {
            double worst = 0;
            for (float x : bv) worst = std::max(worst, std::fabs(static_cast<double>(x)));
            if (axis >= 0) {
              for (float x : bv) min_scale.push_back(std::fabs(static_cast<double>(x)) / (*in_scale * room));
            } else {
              min_scale.push_back(worst / (*in_scale * room));
            }
          }
        }
        std::vector<float> scales;
        op.inputs[weight] =
            QuantizeWeights(*w, axis, int4, static_cast<int32_t>(i), &scales, min_scale);
        if (const Tensor* b = const_float(bias); b != nullptr) {
          if (b->num_elements() != static_cast<int64_t>(scales.size()) && scales.size() != 1) {
            return absl::InvalidArgumentError(ctx + ": bias length differs from output channels");
          }
          op.inputs[bias] = QuantizeBiasTensor(*b, *in_scale, scales, int16());
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
          op.inputs[k] = QuantizeWeights(*c, -1, false, static_cast<int32_t>(i), &scales);
        } else if (op.kind == OpKind::kPadV2 && k == 2 && act_scale(0)) {
          op.inputs[k] = QuantizeConstant(*c, *act_[static_cast<size_t>(op.inputs[0])]);
        } else {
          op.inputs[k] = QuantizeConstant(*c, std::nullopt);
        }
      }
    }
    return absl::OkStatus();
  }

  // Rebuilds the op list with `before[i]` inserted ahead of op i; keeps op_state_ aligned.
  void Splice(std::map<size_t, std::vector<Operator>> before) {
    std::vector<Operator> ops;
    std::vector<OpState> states;
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      if (auto it = before.find(i); it != before.end()) {
        for (Operator& o : it->second) {
          ops.push_back(std::move(o));
          states.push_back(OpState::kAsIs);
        }
      }
      ops.push_back(std::move(sg_->ops[i]));
      states.push_back(op_state_[i]);
    }
    sg_->ops = std::move(ops);
    op_state_ = std::move(states);
  }

  static Operator Conversion(OpKind kind, int32_t in, int32_t out) {
    Operator o;
    o.kind = kind;
    o.inputs = {in};
    o.outputs = {out};
    return o;
  }

  void InsertRequantizes() {
    if (requant_.empty()) return;
    std::map<size_t, std::vector<Operator>> before;
    for (const Requant& r : requant_) {
      const size_t i = static_cast<size_t>(r.op);
      const int32_t src = sg_->ops[i].inputs[r.input];
      Tensor t = sg_->tensors[static_cast<size_t>(src)];
      t.name += "/requantized";
      t.dtype = ActType();
      t.quant = ToQuant(r.params);
      const int32_t dst = NewTensor(std::move(t), src);
      before[i].push_back(Conversion(OpKind::kQuantize, src, dst));
      sg_->ops[i].inputs[r.input] = dst;
    }
    Splice(std::move(before));
  }

  // Float operators read DEQUANTIZEd copies of integer tensors; quantized operators read
  // QUANTIZEd copies of the float tensors float operators write.
  absl::Status InsertFallbackConversions() {
    if (std::none_of(float_op_.begin(), float_op_.end(), [](bool b) { return b; })) {
      return absl::OkStatus();
    }
    std::map<int32_t, int32_t> dequantized, quantized;
    std::map<size_t, std::vector<Operator>> before;
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      if (op_state_[i] == OpState::kAsIs) continue;
      Operator& op = sg_->ops[i];
      const bool is_float = op_state_[i] == OpState::kFloat;
      for (int32_t& t : op.inputs) {
        if (t < 0 || static_cast<size_t>(t) >= in_.tensors.size() || !IsFloatActivation(t)) {
          continue;
        }
        const size_t ti = static_cast<size_t>(t);
        if (is_float && is_int_[ti]) {
          auto it = dequantized.find(t);
          if (it == dequantized.end()) {
            Tensor f = in_.tensors[ti];
            f.name += "/dequantized";
            const int32_t fi = NewTensor(std::move(f), t);
            before[i].push_back(Conversion(OpKind::kDequantize, t, fi));
            it = dequantized.emplace(t, fi).first;
          }
          t = it->second;
        } else if (!is_float && !is_int_[ti]) {
          if (!act_[ti]) {
            return absl::FailedPreconditionError(absl::StrCat(
                "quantize: no calibration range for tensor ", t, " '", in_.tensors[ti].name,
                "' (written by a float operator, read by a quantized one)"));
          }
          auto it = quantized.find(t);
          if (it == quantized.end()) {
            Tensor q = in_.tensors[ti];
            q.name += "/quantized";
            q.dtype = ActType();
            q.quant = ToQuant(*act_[ti]);
            const int32_t qi = NewTensor(std::move(q), t);
            before[i].push_back(Conversion(OpKind::kQuantize, t, qi));
            it = quantized.emplace(t, qi).first;
          }
          t = it->second;
        }
      }
    }
    Splice(std::move(before));
    return absl::OkStatus();
  }

  bool IntEdge(int32_t t) const {
    return t >= 0 && static_cast<size_t>(t) < act_.size() && act_[static_cast<size_t>(t)] &&
           is_int_[static_cast<size_t>(t)];
  }

  // Puts conversions at the graph edges: inputs of `edge` dtype QUANTIZEd to the integer
  // tensors, integer outputs converted back with `out_kind`.
  void AddEdges(DType edge, OpKind out_kind) {
    std::vector<Operator> front, back;
    const std::string suffix = int16() ? "_int16" : "_int8";
    auto edge_tensor = [&](int32_t t) {
      Tensor e = sg_->tensors[static_cast<size_t>(t)];
      e.dtype = edge;
      if (edge == DType::kFloat32) {
        e.quant = {};
      } else {
        e.quant.zero_point.at(0) += 128;  // uint8 = int8 + 128
      }
      sg_->tensors[static_cast<size_t>(t)].name += suffix;
      return NewTensor(std::move(e), t);
    };
    for (int32_t& t : sg_->inputs) {
      if (!IntEdge(t)) continue;
      const int32_t e = edge_tensor(t);
      front.push_back(Conversion(OpKind::kQuantize, e, t));
      t = e;
    }
    for (int32_t& t : sg_->outputs) {
      if (!IntEdge(t)) continue;
      const int32_t e = edge_tensor(t);
      back.push_back(Conversion(out_kind, t, e));
      t = e;
    }
    std::vector<OpState> states(front.size(), OpState::kAsIs);
    states.insert(states.end(), op_state_.begin(), op_state_.end());
    states.insert(states.end(), back.size(), OpState::kAsIs);
    front.insert(front.end(), std::make_move_iterator(sg_->ops.begin()),
                 std::make_move_iterator(sg_->ops.end()));
    front.insert(front.end(), std::make_move_iterator(back.begin()),
                 std::make_move_iterator(back.end()));
    sg_->ops = std::move(front);
    op_state_ = std::move(states);
  }

  void AddFloatIo() { AddEdges(DType::kFloat32, OpKind::kDequantize); }
  void AddUint8Io() { AddEdges(DType::kUInt8, OpKind::kQuantize); }

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
    std::vector<int32_t> kept_origin;
    for (size_t t = 0; t < sg_->tensors.size(); ++t) {
      if (!used[t]) continue;
      remap[t] = static_cast<int32_t>(kept.size());
      kept.push_back(std::move(sg_->tensors[t]));
      kept_origin.push_back(origin_[t]);
    }
    origin_ = std::move(kept_origin);
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
  QuantizeResult result_;
  std::vector<bool> float_op_;        // by float-graph operator
  std::vector<OpState> op_state_;     // by operator of sg_->ops
  std::vector<bool> is_int_;          // the tensor itself becomes integer
  std::vector<int32_t> origin_;       // by tensor of sg_->tensors
  const TensorRanges& ranges_;
  QuantizeOptions opt_;
  Graph out_;
  Subgraph* sg_ = nullptr;
  std::vector<std::optional<QuantParams>> act_;
  std::map<int32_t, QuantParams> override_;
  std::vector<Requant> requant_;
};

}  // namespace

absl::StatusOr<QuantizeResult> QuantizeWithReport(const Graph& float_graph,
                                                  const TensorRanges& ranges,
                                                  const QuantizeOptions& options) {
  if (float_graph.subgraphs.empty()) {
    return absl::InvalidArgumentError("quantize: the graph has no subgraph");
  }
  Pass pass(float_graph, ranges, options);
  return pass.Run();
}

absl::StatusOr<Graph> QuantizeGraph(const Graph& float_graph, const TensorRanges& ranges,
                                    const QuantizeOptions& options) {
  MICA_ASSIGN_OR_RETURN(QuantizeResult r, QuantizeWithReport(float_graph, ranges, options));
  return std::move(r.graph);
}

}  // namespace quant
}  // namespace mica
