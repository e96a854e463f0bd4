// Ethos-U operator placement: which operators Vela 5.1.0 maps to the NPU and why the others
// stay on the CPU (doc section 10: the generic checks, the per-family supported-op lists and
// the main op-specific constraints, restated in our own words).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ethos_u/model.h"
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

std::string DT(DType t) { return std::string(DTypeName(t)); }
std::string OpName(const Operator& op) { return std::string(op.name()); }

bool InU55List(OpKind k) {
  switch (k) {
    case OpKind::kAbs: case OpKind::kAdd: case OpKind::kArgMax: case OpKind::kAveragePool2D:
    case OpKind::kBatchMatMul: case OpKind::kConcatenation: case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D: case OpKind::kExp: case OpKind::kExpandDims:
    case OpKind::kFullyConnected: case OpKind::kHardSwish: case OpKind::kLeakyRelu:
    case OpKind::kLog: case OpKind::kLogistic: case OpKind::kMaximum: case OpKind::kMaxPool2D:
    case OpKind::kMean: case OpKind::kMinimum: case OpKind::kMul: case OpKind::kNeg:
    case OpKind::kPack: case OpKind::kPad: case OpKind::kPadV2: case OpKind::kPrelu:
    case OpKind::kQuantize: case OpKind::kReduceMax: case OpKind::kRelu: case OpKind::kRelu6:
    case OpKind::kReluN1To1: case OpKind::kReshape: case OpKind::kResizeBilinear:
    case OpKind::kResizeNearestNeighbor: case OpKind::kRsqrt: case OpKind::kSlice:
    case OpKind::kSoftmax: case OpKind::kSplit: case OpKind::kSplitV:
    case OpKind::kSquaredDifference: case OpKind::kSqueeze: case OpKind::kStridedSlice:
    case OpKind::kSub: case OpKind::kSum: case OpKind::kTanh: case OpKind::kTranspose:
    case OpKind::kTransposeConv: case OpKind::kUnidirectionalSequenceLstm:
    case OpKind::kUnpack:
      return true;
    default:
      return false;
  }
}

// Builtins mica keeps as opaque ops but Vela supports (by TFLite name).
bool OpaqueSupported(const std::string& name, EthosUFamily f) {
  static const char* const kU55[] = {"MIRROR_PAD", "REDUCE_MIN", "RELU_0_TO_1", "REVERSE_V2",
                                     "TILE"};
  static const char* const kU85[] = {"CAST", "EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
                                     "LESS_EQUAL", "LOGICAL_AND", "LOGICAL_NOT", "LOGICAL_OR",
                                     "NOT_EQUAL", "REDUCE_ALL", "REDUCE_ANY", "SCATTER_ND",
                                     "SELECT", "SELECT_V2"};
  for (const char* n : kU55) if (name == n) return true;
  if (f == EthosUFamily::kU85) {
    for (const char* n : kU85) if (name == n) return true;
  }
  return false;
}

bool Supports32Bit(OpKind k) {
  switch (k) {
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kNeg:
    case OpKind::kFullyConnected: case OpKind::kBatchMatMul: case OpKind::kArgMax:
    case OpKind::kTranspose: case OpKind::kSum: case OpKind::kReshape: case OpKind::kSqueeze:
    case OpKind::kExpandDims:
      return true;
    default:
      return false;
  }
}

bool QuantExempt(OpKind k) {
  switch (k) {
    case OpKind::kArgMax: case OpKind::kExpandDims: case OpKind::kPad: case OpKind::kPadV2:
    case OpKind::kQuantize: case OpKind::kTranspose: case OpKind::kReshape:
    case OpKind::kSqueeze:
      return true;
    default:
      return false;
  }
}

bool PerAxisAllowed(OpKind k) {
  return k == OpKind::kConv2D || k == OpKind::kDepthwiseConv2D ||
         k == OpKind::kFullyConnected || k == OpKind::kTransposeConv;
}

bool IsShapeOperand(OpKind k, size_t input) {
  switch (k) {
    case OpKind::kReshape: return input == 1;
    case OpKind::kTranspose: return input == 1;
    case OpKind::kPad: case OpKind::kPadV2: return input == 1;
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax: return input == 1;
    case OpKind::kSplit: return input == 0;
    case OpKind::kSplitV: return input == 1 || input == 2;
    case OpKind::kStridedSlice: return input >= 1;
    case OpKind::kSlice: return input >= 1;
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor: return input == 1;
    case OpKind::kExpandDims: return input == 1;
    case OpKind::kTransposeConv: return input == 0;
    case OpKind::kGather: return input == 1;
    default: return false;
  }
}

bool IsWeightOperand(OpKind k, size_t input) {
  switch (k) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kFullyConnected:
      return input >= 1;
    case OpKind::kTransposeConv: return input == 1 || input == 3;
    case OpKind::kUnidirectionalSequenceLstm: return input >= 1;
    default: return false;
  }
}

bool StrideLimited(EthosUFamily f) { return f != EthosUFamily::kU85; }

std::string Dims(const std::vector<int32_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

// 4-D NHWC view of a feature map (rank 1..4); false when the rank is above 4.
bool As4D(const std::vector<int32_t>& s, int32_t* n, int32_t* h, int32_t* w, int32_t* c) {
  if (s.size() > 4) return false;
  std::vector<int32_t> d(4 - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  *n = d[0], *h = d[1], *w = d[2], *c = d[3];
  return true;
}

template <typename T>
const T* AttrsOrNull(const Operator& op) {
  return std::get_if<T>(&op.attrs);
}

// Minimum operand count and the attribute struct each kind needs before it can be inspected.
int MinInputs(OpKind k) {
  switch (k) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kFullyConnected:
    case OpKind::kBatchMatMul: case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul:
    case OpKind::kDiv: case OpKind::kMaximum: case OpKind::kMinimum:
    case OpKind::kSquaredDifference: case OpKind::kPrelu: case OpKind::kTranspose:
    case OpKind::kPad: case OpKind::kPadV2: case OpKind::kSplit: case OpKind::kGather:
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax:
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor:
      return 2;
    case OpKind::kTransposeConv: case OpKind::kSplitV: case OpKind::kSlice:
      return 3;
    case OpKind::kStridedSlice:
      return 4;
    default:
      return 1;
  }
}

bool AttrsMatch(const Operator& op) {
  switch (op.kind) {
    case OpKind::kConv2D: return std::holds_alternative<Conv2DAttrs>(op.attrs);
    case OpKind::kDepthwiseConv2D: return std::holds_alternative<DepthwiseConv2DAttrs>(op.attrs);
    case OpKind::kTransposeConv: return std::holds_alternative<TransposeConvAttrs>(op.attrs);
    case OpKind::kMaxPool2D: case OpKind::kAveragePool2D:
      return std::holds_alternative<Pool2DAttrs>(op.attrs);
    default: return true;
  }
}

// Checks weights/bias of a convolution-like op (doc 10.1).
void CheckWeights(const Subgraph& sg, const Operator& op, int w_index, int b_index,
                  bool ifm16, EthosUFamily fam, std::vector<std::string>* r) {
  if (w_index < 0 || w_index >= static_cast<int>(op.inputs.size()) ||
      op.inputs[w_index] == kNoTensor) {
    r->push_back("weights tensor missing");
    return;
  }
  const Tensor& w = sg.tensors[op.inputs[w_index]];
  if (!w.is_constant()) {
    r->push_back(absl::StrCat("weights '", w.name, "' are not constant (NPU needs constant weights)"));
    return;
  }
  if (w.dtype != DType::kInt8 && w.dtype != DType::kUInt8) {
    r->push_back(absl::StrCat("weights '", w.name, "' are ", DT(w.dtype),
                              " (NPU needs 8-bit weights)"));
    return;
  }
  if (w.quant.empty()) {
    r->push_back(absl::StrCat("weights '", w.name, "' are not quantized"));
    return;
  }
  // Sum of |w - zp| per output channel (output channel: dim 0 for OHWI/[out,in], last for 1HWC).
  if (!w.shape.empty() && w.data.size == w.num_bytes()) {
    const bool dw = op.kind == OpKind::kDepthwiseConv2D;
    const int64_t n = w.num_elements();
    const int64_t oc = dw ? w.shape.back() : w.shape.front();
    if (oc > 0 && n % oc == 0) {
      std::vector<int64_t> sums(static_cast<size_t>(oc), 0);
      const int64_t inner = n / oc;
      // Element i belongs to channel i % oc (depthwise) or i / inner; walked channel-major.
      const int64_t ch_stride = dw ? 1 : inner, elem_stride = dw ? oc : 1;
      for (int64_t ch = 0; ch < oc; ++ch) {
        const int64_t zp_idx = w.quant.zero_point.size() > 1 ? ch : 0;
        const int64_t zp = w.quant.zero_point.empty() ? 0
                           : w.quant.zero_point[std::min<size_t>(
                                 static_cast<size_t>(zp_idx), w.quant.zero_point.size() - 1)];
        int64_t sum = 0;
        for (int64_t j = 0, i = ch * ch_stride; j < inner; ++j, i += elem_stride) {
          const int64_t v = w.dtype == DType::kInt8 ? int64_t{w.data.as<int8_t>()[i]}
                                                    : int64_t{w.data.bytes()[i]};
          sum += v > zp ? v - zp : zp - v;
        }
        sums[static_cast<size_t>(ch)] = sum;
      }
      const int64_t limit = (fam == EthosUFamily::kU85 && ifm16) ? 2130706432 : 8323072;
      const int64_t mx = *std::max_element(sums.begin(), sums.end());
      if (mx > limit) {
        r->push_back(absl::StrCat("sum of absolute weights per output channel is ", mx,
                                  " > ", limit));
      }
    }
  }
  if (b_index < static_cast<int>(op.inputs.size()) && op.inputs[b_index] != kNoTensor) {
    const Tensor& b = sg.tensors[op.inputs[b_index]];
    if (!b.is_constant()) {
      r->push_back(absl::StrCat("bias '", b.name, "' is not constant"));
    } else if (b.dtype != DType::kInt32 && b.dtype != DType::kInt64) {
      r->push_back(absl::StrCat("bias '", b.name, "' is ", DT(b.dtype),
                                " (NPU needs int32 or int64 bias)"));
    } else if (b.dtype == DType::kInt64 && b.data.size == b.num_bytes()) {
      const int64_t limit = fam == EthosUFamily::kU85 ? (int64_t{1} << 48) - 1
                                                      : (int64_t{1} << 40) - 1;
      for (int64_t i = 0; i < b.num_elements(); ++i) {
        const int64_t v = b.data.as<int64_t>()[i];
        if (v >= limit || v <= -limit) {
          r->push_back(absl::StrCat("int64 bias value ", v, " exceeds the NPU's bias range"));
          break;
        }
      }
    }
  }
}

void CheckStride(int32_t sh, int32_t sw, int32_t dh, int32_t dw, Padding pad, bool depthwise_or_fc,
                 EthosUFamily fam, std::vector<std::string>* r) {
  if (sh < 1 || sw < 1) {
    r->push_back(absl::StrCat("stride ", sh, "x", sw, " must be positive"));
    return;
  }
  if (sh > 3 || sw > 3) {
    if (depthwise_or_fc) {
      if (StrideLimited(fam)) {
        r->push_back(absl::StrCat("stride ", sh, "x", sw, " > 3 not supported on ",
                                  EthosUFamilyTitle(fam)));
      }
    } else if (!(dh == 1 && dw == 1 && pad == Padding::kValid)) {
      r->push_back(absl::StrCat("stride ", sh, "x", sw,
                                " > 3 needs dilation 1 and VALID padding"));
    }
  }
}

// Operator ids in range (step 0): false when an operand index is out of range.
bool CheckOperandIndices(const Subgraph& sg, const Operator& op, std::vector<std::string>* r) {
  const int nt = static_cast<int>(sg.tensors.size());
  for (int32_t t : op.inputs) {
    if (t != kNoTensor && (t < 0 || t >= nt)) {
      r->push_back(absl::StrCat("input tensor index ", t, " out of range"));
      return false;
    }
  }
  for (int32_t t : op.outputs) {
    if (t < 0 || t >= nt) {
      r->push_back(absl::StrCat("output tensor index ", t, " out of range"));
      return false;
    }
  }
  return true;
}

// Operator type (step 1): false when the family's list (or Vela's opaque list) lacks it.
bool CheckOperatorType(const Operator& op, EthosUFamily fam, std::vector<std::string>* r) {
  bool listed = InU55List(op.kind);
  if (fam == EthosUFamily::kU85 && (op.kind == OpKind::kDiv || op.kind == OpKind::kGather)) {
    listed = true;
  }
  if (op.kind == OpKind::kOpaque) {
    if (!OpaqueSupported(op.opaque_name, fam)) {
      r->push_back(absl::StrCat("operator ", op.opaque_name.empty() ? "(unnamed custom op)"
                                                                    : op.opaque_name,
                                " is not supported by Vela on ", EthosUFamilyTitle(fam),
                                " (mica does not model it either)"));
      return false;
    }
    // U85 reverses along any axis given as a constant (Vela runs REVERSE_V2 as one Reverse
    // operation: a copy with reversed strides, lowered as data movement); U55/U65 refuse most
    // axes ("unsupported reverse mask").
    if (fam == EthosUFamily::kU85 && op.opaque_name == "REVERSE_V2" && op.inputs.size() == 2 &&
        op.outputs.size() == 1) {
      return true;
    }
    // Supported by Vela but not modelled by mica: keep it on the NPU list only if typed.
    r->push_back(absl::StrCat("operator ", op.opaque_name,
                              " is supported by Vela but not modelled by mica; costed as CPU"));
    return false;
  }
  if (!listed) {
    r->push_back(absl::StrCat("operator ", OpName(op), " is not supported on ",
                              EthosUFamilyTitle(fam)));
    return false;
  }
  return true;
}

// Generic (step 2): at least one input and one output; well-formed operands and attributes.
bool CheckArity(const Operator& op, std::vector<std::string>* r) {
  int n_in = 0;
  for (int32_t t : op.inputs) n_in += t != kNoTensor;
  if (n_in == 0 || op.outputs.empty()) {
    r->push_back("operator needs at least one input and one output");
    return false;
  }
  if (static_cast<int>(op.inputs.size()) < MinInputs(op.kind) || !AttrsMatch(op)) {
    r->push_back(absl::StrCat("malformed ", OpName(op), " (missing operands or attributes)"));
    return false;
  }
  for (int i = 0; i < MinInputs(op.kind); ++i) {
    if (op.inputs[i] == kNoTensor && !(op.kind == OpKind::kTransposeConv && i == 3)) {
      r->push_back(absl::StrCat("malformed ", OpName(op), ": required input ", i, " is absent"));
      return false;
    }
  }
  return true;
}

// Returns the feature-map operands of `op`: inputs that are neither weights nor shapes, then
// the outputs.
std::vector<int32_t> FeatureMapOperands(const Operator& op) {
  std::vector<int32_t> fms;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const int32_t t = op.inputs[i];
    if (t == kNoTensor || IsShapeOperand(op.kind, i) || IsWeightOperand(op.kind, i)) continue;
    fms.push_back(t);
  }
  for (int32_t t : op.outputs) fms.push_back(t);
  return fms;
}

// Data type of one feature map (step 3). Sets *ifm16 for a 16-bit input.
void CheckFeatureMapType(const Operator& op, const Tensor& t, bool is_output, EthosUFamily fam,
                         bool* ifm16, std::vector<std::string>* r) {
  const bool u85 = fam == EthosUFamily::kU85;
  const char* role = is_output ? "output" : "input";
  switch (t.dtype) {
    case DType::kInt8:
    case DType::kUInt8:
      break;
    case DType::kInt16:
      if (!is_output) *ifm16 = true;
      break;
    case DType::kInt32:
      if (!u85 && !Supports32Bit(op.kind) &&
          !(op.kind == OpKind::kArgMax && is_output)) {
        r->push_back(absl::StrCat(role, " '", t.name, "' is int32: ", OpName(op),
                                  " supports only 8/16-bit feature maps on ",
                                  EthosUFamilyTitle(fam)));
      }
      break;
    case DType::kInt64:
      if (op.kind != OpKind::kArgMax) {
        r->push_back(absl::StrCat(role, " '", t.name, "' is int64 (only ARG_MAX output may be)"));
      }
      break;
    case DType::kBool:
      if (!u85) {
        r->push_back(absl::StrCat(role, " '", t.name, "' is bool (supported on Ethos-U85 only)"));
      }
      break;
    default:
      r->push_back(absl::StrCat(role, " '", t.name, "' is ", DT(t.dtype),
                                ": the NPU runs integer feature maps only (int8/uint8/int16"
                                ", quantize the model)"));
      break;
  }
}

// Static shape, rank and dimension limits of one feature map (step 3).
void CheckFeatureMapShape(const Operator& op, const Tensor& t, bool is_output,
                          std::vector<std::string>* r) {
  const char* role = is_output ? "output" : "input";
  for (size_t d = 0; d < t.shape_signature.size(); ++d) {
    if (d > 0 && t.shape_signature[d] < 0) {
      r->push_back(absl::StrCat(role, " '", t.name, "' has a dynamic dimension ", d,
                                " (only the batch axis may be dynamic)"));
      break;
    }
  }
  const size_t max_rank = (op.kind == OpKind::kTranspose || op.kind == OpKind::kReshape ||
                           op.kind == OpKind::kSqueeze || op.kind == OpKind::kExpandDims ||
                           op.kind == OpKind::kPack || op.kind == OpKind::kUnpack)
                              ? 8 : 4;
  if (t.shape.size() > max_rank) {
    r->push_back(absl::StrCat(role, " '", t.name, "' has rank ", t.shape.size(), " > ",
                              max_rank));
  }
  for (int32_t d : t.shape) {
    if (d > 65536) {
      r->push_back(absl::StrCat(role, " '", t.name, "' shape ", Dims(t.shape),
                                " has a dimension > 65536"));
      break;
    }
  }
}

// Quantization of one feature map (step 3).
void CheckFeatureMapQuant(const Operator& op, const Tensor& t, bool is_output, EthosUFamily fam,
                          std::vector<std::string>* r) {
  const bool u85 = fam == EthosUFamily::kU85;
  const char* role = is_output ? "output" : "input";
  const bool integer = t.dtype == DType::kInt8 || t.dtype == DType::kUInt8 ||
                       t.dtype == DType::kInt16;
  if (integer && !QuantExempt(op.kind)) {
    if (t.quant.empty()) {
      r->push_back(absl::StrCat(role, " '", t.name, "' has no quantization parameters"));
    } else {
      // Vela's scale rule: the output's scale must be a normal positive float32 (the IFM/OFM
      // rescale divides by it); an input's scale only has to be finite (an all-zero constant
      // operand may carry scale 0 and still runs on the NPU).
      for (float s : t.quant.scale) {
        if (!std::isfinite(s)) {
          r->push_back(absl::StrCat(role, " '", t.name, "' has a non-finite scale"));
          break;
        }
        if (is_output && s < std::numeric_limits<float>::min()) {
          r->push_back(absl::StrCat(role, " '", t.name, "' has quantization scale ", s,
                                    "; the minimum supported is ",
                                    std::numeric_limits<float>::min()));
          break;
        }
      }
      if (t.quant.per_channel() && !PerAxisAllowed(op.kind)) {
        r->push_back(absl::StrCat(role, " '", t.name, "' is per-axis quantized; ", OpName(op),
                                  " supports per-tensor only"));
      }
      for (int64_t zp : t.quant.zero_point) {
        if (t.dtype == DType::kUInt8 && zp < 0) {
          r->push_back(absl::StrCat(role, " '", t.name, "' unsigned with negative zero point"));
          break;
        }
        // U85 (Vela's rule): IFM zero points int8 -128..127, uint8 0..255, others 0; OFM zero
        // points signed -128..127, unsigned 0..255.
        const bool bad_in = !is_output && ((t.dtype == DType::kInt8 && (zp < -128 || zp > 127)) ||
                                           (t.dtype == DType::kUInt8 && zp > 255) ||
                                           (t.dtype == DType::kInt16 && zp != 0));
        const bool bad_out = is_output && (zp < -128 || zp > 255 ||
                                           (t.dtype != DType::kUInt8 && zp > 127));
        if (u85 && (bad_in || bad_out)) {
          r->push_back(absl::StrCat(role, " '", t.name, "' zero point ", zp, " out of range"));
          break;
        }
      }
    }
  }
  // U85: an int16 IFM's zero point must be 0 for every operator, QUANTIZE included (Vela's
  // "IFM ZeroPoint out of range").
  if (u85 && !is_output && t.dtype == DType::kInt16 && QuantExempt(op.kind)) {
    for (int64_t zp : t.quant.zero_point) {
      if (zp != 0) {
        r->push_back(absl::StrCat(role, " '", t.name, "' zero point ", zp, " out of range"));
        break;
      }
    }
  }
  if (t.dtype == DType::kInt32 && !t.quant.empty()) {
    for (int64_t zp : t.quant.zero_point) {
      if (zp != 0) {
        r->push_back(absl::StrCat(role, " '", t.name, "' is int32 with a non-zero zero point"));
        break;
      }
    }
  }
}

// What the op-specific checks (step 4) read.
struct OpCheck {
  const Subgraph& sg;
  const Operator& op;
  const Tensor& ifm;
  const Tensor& ofm;
  EthosUFamily fam;
  bool u85;
  bool ifm16;
  std::vector<std::string>* r;
};

void CheckConvolution(const OpCheck& x) {
  const bool depthwise = x.op.kind == OpKind::kDepthwiseConv2D;
  int32_t sh = 1, sw = 1, dh = 1, dw = 1;
  Padding pad = Padding::kValid;
  if (depthwise) {
    const auto* a = AttrsOrNull<DepthwiseConv2DAttrs>(x.op);
    if (!a) { x.r->push_back("DEPTHWISE_CONV_2D without attributes"); return; }
    sh = a->stride_h, sw = a->stride_w, dh = a->dilation_h, dw = a->dilation_w, pad = a->padding;
  } else {
    const auto* a = AttrsOrNull<Conv2DAttrs>(x.op);
    if (!a) { x.r->push_back("CONV_2D without attributes"); return; }
    sh = a->stride_h, sw = a->stride_w, dh = a->dilation_h, dw = a->dilation_w, pad = a->padding;
  }
  CheckStride(sh, sw, dh, dw, pad, depthwise, x.fam, x.r);
  CheckWeights(x.sg, x.op, 1, 2, x.ifm16, x.fam, x.r);
  int32_t n, h, w, c;
  if (As4D(x.ifm.shape, &n, &h, &w, &c) && n != 1) {
    x.r->push_back(absl::StrCat("batch size ", n, " > 1 not supported for ",
                                depthwise ? "DEPTHWISE_CONV_2D" : "CONV_2D"));
  }
}

void CheckTransposeConv(const OpCheck& x) {
  const auto* a = AttrsOrNull<TransposeConvAttrs>(x.op);
  if (!a) { x.r->push_back("TRANSPOSE_CONV without attributes"); return; }
  CheckWeights(x.sg, x.op, 1, 3, x.ifm16, x.fam, x.r);
  // U55/U65 (Vela's rule): strides W x H of 1x1 or 2x2, 2x1 when the IFM and the kernel are
  // one row high, 1x2 when they are one column wide. U85 has no such restriction.
  int32_t n, h, w, c, n2, h2, w2, c2;
  const Tensor& wt0 = x.sg.tensors[x.op.inputs[1]];
  const int32_t k_h = wt0.shape.size() == 4 ? wt0.shape[1] : 1;
  const int32_t k_w = wt0.shape.size() == 4 ? wt0.shape[2] : 1;
  const bool shape4 = As4D(x.ifm.shape, &n, &h, &w, &c);
  const bool ok_stride = x.u85 || (a->stride_h == 1 && a->stride_w == 1) ||
                         (a->stride_h == 2 && a->stride_w == 2) ||
                         (a->stride_w == 2 && a->stride_h == 1 && shape4 && h == 1 && k_h == 1) ||
                         (a->stride_w == 1 && a->stride_h == 2 && shape4 && w == 1 && k_w == 1);
  if (!ok_stride) {
    x.r->push_back(absl::StrCat("TRANSPOSE_CONV stride WxH ", a->stride_w, "x", a->stride_h,
                                " (U55/U65: 1x1, 2x2, 2x1 with IFM and kernel height 1, or 1x2 "
                                "with IFM and kernel width 1)"));
  } else if (As4D(x.ifm.shape, &n, &h, &w, &c) && As4D(x.ofm.shape, &n2, &h2, &w2, &c2)) {
    const Tensor& wt = x.sg.tensors[x.op.inputs[1]];
    const int32_t kh = wt.shape.size() == 4 ? wt.shape[1] : 1;
    const int32_t kw = wt.shape.size() == 4 ? wt.shape[2] : 1;
    const int64_t sh = a->stride_h, sw = a->stride_w;  // int64: no overflow with huge shapes
    const bool same = a->padding == Padding::kSame && h2 == h * sh && w2 == w * sw;
    const bool valid = a->padding == Padding::kValid &&
                       h2 == h * sh + std::max<int64_t>(kh - sh, 0) &&
                       w2 == w * sw + std::max<int64_t>(kw - sw, 0);
    if (!same && !valid) {
      x.r->push_back("TRANSPOSE_CONV output shape does not match IFM x stride (SAME) or "
                     "IFM x stride + (kernel - stride) (VALID)");
    }
  }
}

void CheckFullyConnected(const OpCheck& x) {
  CheckWeights(x.sg, x.op, 1, 2, x.ifm16, x.fam, x.r);
  const Tensor& wt = x.sg.tensors[x.op.inputs[1]];
  if (wt.shape.size() < 2) x.r->push_back("FULLY_CONNECTED weights must be [out, in]");
}

void CheckPooling(const OpCheck& x) {
  const auto* a = AttrsOrNull<Pool2DAttrs>(x.op);
  if (!a) { x.r->push_back("pooling without attributes"); return; }
  const bool avg = x.op.kind == OpKind::kAveragePool2D;
  if (avg && a->padding == Padding::kSame) {
    if (a->filter_w > 8 || a->filter_h > 8) {
      x.r->push_back(absl::StrCat("AVERAGE_POOL_2D SAME padding with kernel ", a->filter_h, "x",
                                  a->filter_w, " (> 8x8)"));
    }
  } else {
    if (int64_t{a->filter_w} * a->filter_h > 65536 || a->filter_h > 256) {
      x.r->push_back(absl::StrCat("pooling kernel ", a->filter_h, "x", a->filter_w,
                                  " too large (W*H <= 65536, H <= 256)"));
    }
  }
  if (StrideLimited(x.fam) || a->stride_h < 1 || a->stride_w < 1) {
    CheckStride(a->stride_h, a->stride_w, 1, 1, a->padding, false, x.fam, x.r);
  }
  int32_t n, h, w, c;
  if (As4D(x.ifm.shape, &n, &h, &w, &c) && n != 1) {
    x.r->push_back(absl::StrCat("batch size ", n, " > 1 not supported for pooling"));
  }
}

void CheckMean(const OpCheck& x) {
  const Tensor& ifm = x.ifm;
  int32_t n, h, w, c;
  if (!As4D(ifm.shape, &n, &h, &w, &c)) return;
  if (n != 1) x.r->push_back("MEAN needs batch 1");
  if (ifm.dtype == DType::kInt32) x.r->push_back("MEAN input must be 8/16-bit");
  if (x.op.inputs.size() < 2 || x.op.inputs[1] == kNoTensor) return;
  const Tensor& ax = x.sg.tensors[x.op.inputs[1]];
  if (!ax.is_constant() || ax.dtype != DType::kInt32) {
    x.r->push_back("MEAN axes must be constant");
    return;
  }
  const int rank = static_cast<int>(ifm.shape.size());
  int64_t reduced = 1;
  bool depth = false;
  for (int64_t i = 0; i < ax.num_elements(); ++i) {
    int v = ax.data.as<int32_t>()[i];
    if (v < 0) v += rank;
    if (v < 0 || v >= rank) continue;
    reduced *= ifm.shape[v];
    if (ifm.shape[v] >= 4096) x.r->push_back("MEAN reduced axis >= 4096");
    if (v == rank - 1 && rank >= 2) depth = true;
  }
  if (reduced > 16777216) x.r->push_back("MEAN reduces more than 16777216 elements");
  if (depth && !(h == 1 || w == 1 || c == 1)) {
    x.r->push_back("MEAN over the depth axis needs one of H, W, C to be 1");
  }
}

void CheckSoftmax(const OpCheck& x) {
  int32_t n, h, w, c;
  if (As4D(x.ifm.shape, &n, &h, &w, &c) && int64_t{h} * w >= 65536) {
    x.r->push_back("SOFTMAX IFM W*H >= 65536");
  }
  // Vela 5.2 also runs an 8-bit IFM into an int16 OFM.
  const bool to16 = x.ofm.dtype == DType::kInt16 &&
                    (x.ifm.dtype == DType::kInt8 || x.ifm.dtype == DType::kUInt8);
  if (x.ifm.dtype != x.ofm.dtype && !to16) {
    x.r->push_back("SOFTMAX input and output types differ");
  }
}

void CheckMinMax(const OpCheck& x) {
  for (int32_t t : x.op.inputs) {
    if (t != kNoTensor && x.sg.tensors[t].quant != x.ofm.quant) {
      x.r->push_back(absl::StrCat(OpName(x.op), " inputs must be quantized like the output"));
      break;
    }
  }
}

void CheckResize(const OpCheck& x) {
  int32_t n, h, w, c, n2, h2, w2, c2;
  if (!As4D(x.ifm.shape, &n, &h, &w, &c) || !As4D(x.ofm.shape, &n2, &h2, &w2, &c2)) return;
  const auto* a = AttrsOrNull<ResizeAttrs>(x.op);
  const bool align = a && a->align_corners;
  auto factor = [&](int32_t in, int32_t out) -> int32_t {
    if (in <= 0) return 0;
    if (align && in > 1 && (out - 1) % (in - 1) == 0) return (out - 1) / (in - 1);
    return out % in == 0 ? out / in : 0;
  };
  const int32_t fh = h == 1 && h2 == 1 ? 1 : factor(h, h2);
  const int32_t fw = w == 1 && w2 == 1 ? 1 : factor(w, w2);
  auto pow2 = [](int32_t f) { return f > 0 && (f & (f - 1)) == 0; };
  bool ok;
  if (x.u85 && x.op.kind == OpKind::kResizeNearestNeighbor) {
    // U85's resize runs nearest-neighbour at any scale (Vela keeps a 48 -> 64 one on the
    // NPU while it refuses the same scale for bilinear).
    ok = true;
  } else if (x.u85) {
    ok = pow2(fh) && pow2(fw) && fh <= (align ? 2048 : 1024) && fw <= (align ? 2048 : 1024);
  } else {
    ok = (fh == fw || fh == 1 || fw == 1) && pow2(fh) && pow2(fw) && fh <= 8 && fw <= 8;
    if (ok && x.op.kind == OpKind::kResizeBilinear && a && a->half_pixel_centers &&
        (std::max(fh, fw) != 2)) {
      ok = false;
    }
  }
  if (!ok) {
    x.r->push_back(absl::StrCat(OpName(x.op), " scale ", h, "x", w, " -> ", h2, "x", w2,
                                x.u85 ? " (needs a power-of-two factor)"
                                      : " (needs a 2x/4x/8x integer factor)"));
  }
}

void CheckTranspose(const OpCheck& x) {
  if (x.op.inputs.size() < 2 || x.op.inputs[1] == kNoTensor ||
      !x.sg.tensors[x.op.inputs[1]].is_constant()) {
    x.r->push_back("TRANSPOSE permutation must be constant");
    return;
  }
  if (x.ifm.shape.size() > 8) x.r->push_back("TRANSPOSE rank > 8");
  if (!x.u85) {
    int64_t prod = 1;
    for (size_t i = 0; i + 1 < x.ifm.shape.size(); ++i) prod *= x.ifm.shape[i];
    if (prod > 65536 && x.ifm.shape.size() > 2) {
      x.r->push_back("TRANSPOSE outer axes product > 65536");
    }
  }
}

void CheckGather(const OpCheck& x) {
  const auto* a = AttrsOrNull<GatherAttrs>(x.op);
  if (a && a->axis != a->batch_dims) x.r->push_back("GATHER needs axis == batch_dims");
}

void CheckLstm(const OpCheck& x) {
  if (x.ifm.dtype != DType::kInt8 && x.ifm.dtype != DType::kInt16) {
    x.r->push_back("UNIDIRECTIONAL_SEQUENCE_LSTM needs int8/int16 input");
  }
}

// Op-specific constraints (step 4), by operator family.
// BATCH_MATMUL on U55/U65 (Vela's rule for a matmul or an FC with dynamic weights): int8 IFM.
void CheckBatchMatMul(const OpCheck& x) {
  if (!x.u85 && x.ifm.dtype != DType::kInt8) {
    x.r->push_back(absl::StrCat("BATCH_MATMUL with a ", std::string(DTypeName(x.ifm.dtype)),
                                " IFM (", EthosUFamilyTitle(x.fam), ": int8 only)"));
  }
}

void CheckOpSpecific(const OpCheck& x) {
  switch (x.op.kind) {
    case OpKind::kBatchMatMul: return CheckBatchMatMul(x);
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D: return CheckConvolution(x);
    case OpKind::kTransposeConv: return CheckTransposeConv(x);
    case OpKind::kFullyConnected: return CheckFullyConnected(x);
    case OpKind::kAveragePool2D:
    case OpKind::kMaxPool2D: return CheckPooling(x);
    case OpKind::kMean: return CheckMean(x);
    case OpKind::kSoftmax: return CheckSoftmax(x);
    case OpKind::kMaximum:
    case OpKind::kMinimum: return CheckMinMax(x);
    case OpKind::kResizeBilinear:
    case OpKind::kResizeNearestNeighbor: return CheckResize(x);
    case OpKind::kTranspose: return CheckTranspose(x);
    case OpKind::kGather: return CheckGather(x);
    case OpKind::kUnidirectionalSequenceLstm: return CheckLstm(x);
    default: return;
  }
}

}  // namespace

std::vector<std::string> OpCompatibility(const Subgraph& sg, int op_index,
                                         const EthosUConfig& config) {
  std::vector<std::string> r;
  if (op_index < 0 || op_index >= static_cast<int>(sg.ops.size())) {
    r.push_back(absl::StrCat("operator index ", op_index, " out of range"));
    return r;
  }
  const Operator& op = sg.ops[op_index];
  const EthosUFamily fam = config.family;
  // GELU (a custom-coded builtin to mica's IR): Vela 5.2 runs it as a LUT when its IFM and OFM
  // are both int8 or both uint8.
  const bool gelu = op.kind == OpKind::kOpaque && op.opaque_name == "GELU";
  if (gelu) {
    if (!CheckOperandIndices(sg, op, &r)) return r;
    if (op.inputs.empty() || op.inputs[0] == kNoTensor || op.outputs.empty()) {
      r.push_back("GELU needs one input and one output");
      return r;
    }
    const DType in = sg.tensors[op.inputs[0]].dtype, out = sg.tensors[op.outputs[0]].dtype;
    if (in != out || (in != DType::kInt8 && in != DType::kUInt8)) {
      r.push_back(absl::StrCat("GELU input ", std::string(DTypeName(in)), ", output ",
                               std::string(DTypeName(out)),
                               ": IFM and OFM data types must match and be int8 or uint8"));
      return r;
    }
  } else if (!CheckOperandIndices(sg, op, &r) || !CheckOperatorType(op, fam, &r) ||
             !CheckArity(op, &r)) {
    return r;
  }
  // 3. Feature-map data types, static shapes, ranks, quantization.
  bool ifm16 = false;
  const std::vector<int32_t> fms = FeatureMapOperands(op);
  for (size_t k = 0; k < fms.size(); ++k) {
    const Tensor& t = sg.tensors[fms[k]];
    const bool is_output = k >= fms.size() - op.outputs.size();
    CheckFeatureMapType(op, t, is_output, fam, &ifm16, &r);
    CheckFeatureMapShape(op, t, is_output, &r);
    CheckFeatureMapQuant(op, t, is_output, fam, &r);
  }
  if (!r.empty()) return r;
  // 4. Op-specific.
  const Tensor& ifm = sg.tensors[fms.empty() ? op.inputs[0] : fms[0]];
  const Tensor& ofm = sg.tensors[op.outputs[0]];
  CheckOpSpecific(OpCheck{sg, op, ifm, ofm, fam, fam == EthosUFamily::kU85, ifm16, &r});
  return r;
}

}  // namespace ethosu

std::vector<std::string> EthosUCompatibility(const Graph& graph, int op_index,
                                             const EthosUConfig& config) {
  if (graph.subgraphs.empty()) return {"graph has no subgraph"};
  return ethosu::OpCompatibility(graph.main(), op_index, config);
}

}  // namespace estimate
}  // namespace mica
