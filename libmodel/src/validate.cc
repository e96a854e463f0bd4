// ValidateGraph: the semantic invariants every consumer of a Graph relies on.
#include "validate.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "mica/model/op_info.h"
#include "mica/model/shape_inference.h"

namespace mica {
namespace internal {

size_t AttrsIndexFor(OpKind kind) { return GetOpInfo(kind).attrs_index; }

std::string QuoteForMessage(std::string_view s) {
  constexpr size_t kMaxLen = 64;
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kMaxLen; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out.push_back(c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c));
  }
  if (s.size() > kMaxLen) out += "...";
  out += "'";
  return out;
}

std::string OpLabel(const Operator& op) {
  if (!IsKnownOpKind(op.kind)) return absl::StrCat("kind ", static_cast<int>(op.kind));
  if (op.kind == OpKind::kOpaque) return QuoteForMessage(op.opaque_name);
  return std::string(OpKindName(op.kind));
}

std::string FilePrefix(const Graph& graph) {
  return graph.source_path.empty() ? std::string() : absl::StrCat(graph.source_path, ": ");
}

}  // namespace internal

namespace {

using internal::QuoteForMessage;

bool IsKnownDType(DType t) {
  return static_cast<uint8_t>(t) <= static_cast<uint8_t>(DType::kUInt32);
}
bool IsKnownPadding(Padding p) { return p == Padding::kSame || p == Padding::kValid; }
bool IsKnownActivation(Activation a) {
  return static_cast<uint8_t>(a) <= static_cast<uint8_t>(Activation::kSignBit);
}

std::string ShapeString(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

class Validator {
 public:
  explicit Validator(const Graph& graph) : graph_(graph), file_(internal::FilePrefix(graph)) {}

  absl::Status Run() {
    if (graph_.subgraphs.empty()) return Error("model has no subgraphs");
    for (size_t s = 0; s < graph_.subgraphs.size(); ++s) {
      MICA_RETURN_IF_ERROR(CheckSubgraph(s, graph_.subgraphs[s]));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, what));
  }

  std::string TensorWhere(size_t s, size_t t) const {
    const Subgraph& sg = graph_.subgraphs[s];
    return absl::StrCat("subgraph ", s, ", tensor ", t, " (", QuoteForMessage(sg.tensors[t].name),
                        "): ");
  }

  std::string OpWhere(size_t s, size_t o) const {
    return absl::StrCat("subgraph ", s, ", operator ", o, " (",
                        internal::OpLabel(graph_.subgraphs[s].ops[o]), "): ");
  }

  absl::Status CheckTensor(size_t s, size_t t, const Tensor& tensor) const {
    auto fail = [&](const std::string& what) { return Error(TensorWhere(s, t) + what); };
    if (!IsKnownDType(tensor.dtype)) {
      return fail(absl::StrCat("unknown dtype code ", static_cast<int>(tensor.dtype)));
    }
    if (tensor.shape.size() > internal::kMaxRank) {
      return fail(absl::StrCat("rank ", tensor.shape.size(), " exceeds mica's limit of ",
                               internal::kMaxRank));
    }
    uint64_t elements = 1;
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      const int32_t dim = tensor.shape[d];
      if (dim < 0) {
        return fail(
            absl::StrCat("dimension ", d, " of shape ", ShapeString(tensor.shape), " is negative"));
      }
      elements *= static_cast<uint64_t>(dim);
      if (elements > internal::kMaxTensorBytes) break;  // stays well inside uint64
    }
    const uint64_t bytes =
        elements > internal::kMaxTensorBytes ? elements : DTypeBytes(tensor.dtype, elements);
    if (bytes > internal::kMaxTensorBytes) {
      return fail(absl::StrCat("shape ", ShapeString(tensor.shape), " of ",
                               std::string(DTypeName(tensor.dtype)), " exceeds mica's limit of ",
                               internal::kMaxTensorBytes, " bytes"));
    }
    if (!tensor.shape_signature.empty()) {
      if (tensor.shape_signature.size() != tensor.shape.size()) {
        return fail(absl::StrCat("shape signature ", ShapeString(tensor.shape_signature),
                                 " has a different rank from shape ", ShapeString(tensor.shape)));
      }
      for (size_t d = 0; d < tensor.shape.size(); ++d) {
        const int32_t sig = tensor.shape_signature[d];
        if (sig != -1 && sig != tensor.shape[d]) {
          return fail(absl::StrCat("shape signature ", ShapeString(tensor.shape_signature),
                                   " disagrees with shape ", ShapeString(tensor.shape)));
        }
      }
    }
    if (tensor.is_constant() && tensor.data.size != bytes) {
      return fail(absl::StrCat("constant data is ", tensor.data.size, " bytes but shape ",
                               ShapeString(tensor.shape), " of ",
                               std::string(DTypeName(tensor.dtype)), " needs ", bytes));
    }
    return CheckQuant(s, t, tensor);
  }

  absl::Status CheckQuant(size_t s, size_t t, const Tensor& tensor) const {
    const Quantization& q = tensor.quant;
    auto fail = [&](const std::string& what) {
      return Error(TensorWhere(s, t) + "quantization: " + what);
    };
    if (q.scale.empty()) {
      if (!q.zero_point.empty()) return fail("zero points given without scales");
      return absl::OkStatus();
    }
    if (q.zero_point.size() != q.scale.size()) {
      return fail(
          absl::StrCat(q.scale.size(), " scales but ", q.zero_point.size(), " zero points"));
    }
    const auto rank = static_cast<int64_t>(tensor.shape.size());
    if (q.per_channel()) {
      if (q.axis < 0 || q.axis >= rank) {
        return fail(absl::StrCat("quantized axis ", q.axis, " is outside shape ",
                                 ShapeString(tensor.shape)));
      }
      if (static_cast<size_t>(tensor.shape[q.axis]) != q.scale.size()) {
        return fail(absl::StrCat(q.scale.size(), " scales along axis ", q.axis, " of shape ",
                                 ShapeString(tensor.shape), " (needs ", tensor.shape[q.axis], ")"));
      }
    }
    // Per-tensor quantization has no axis: TFLite Micro and Vela ignore quantized_dimension
    // there (converters write e.g. 3 on rank-1 biases), so any value is accepted.
    int64_t zp_min = std::numeric_limits<int64_t>::min();
    int64_t zp_max = std::numeric_limits<int64_t>::max();
    switch (tensor.dtype) {
      case DType::kInt8: zp_min = -128, zp_max = 127; break;
      case DType::kUInt8: zp_min = 0, zp_max = 255; break;
      case DType::kInt16: zp_min = -32768, zp_max = 32767; break;
      case DType::kInt4: zp_min = -8, zp_max = 7; break;
      default: break;
    }
    for (size_t i = 0; i < q.scale.size(); ++i) {
      if (!std::isfinite(q.scale[i]) || q.scale[i] < 0.0f) {
        return fail(
            absl::StrCat("scale ", i, " is ", q.scale[i], "; must be finite and non-negative"));
      }
      if (q.zero_point[i] < zp_min || q.zero_point[i] > zp_max) {
        return fail(absl::StrCat("zero point ", i, " is ", q.zero_point[i], ", outside the ",
                                 std::string(DTypeName(tensor.dtype)), " range"));
      }
    }
    return absl::OkStatus();
  }

  // The tensor `op` reads or writes at `index`, or null when absent or out of range.
  const Tensor* In(const Subgraph& sg, const Operator& op, size_t i) const {
    if (i >= op.inputs.size() || op.inputs[i] < 0) return nullptr;
    return &sg.tensors[op.inputs[i]];
  }

  absl::Status CheckAttrs(size_t s, size_t o) const {
    const Subgraph& sg = graph_.subgraphs[s];
    const Operator& op = sg.ops[o];
    auto fail = [&](const std::string& what) { return Error(OpWhere(s, o) + what); };
    auto at_least = [&](const char* name, int64_t v, int64_t min) -> absl::Status {
      if (v < min) return fail(absl::StrCat(name, " is ", v, "; must be >= ", min));
      return absl::OkStatus();
    };
    auto rank_is = [&](const char* role, const Tensor* t, size_t rank) -> absl::Status {
      if (t != nullptr && t->shape.size() != rank) {
        return fail(
            absl::StrCat(role, " has shape ", ShapeString(t->shape), "; must be rank ", rank));
      }
      return absl::OkStatus();
    };
    auto activation_ok = [&](Activation a) -> absl::Status {
      if (!IsKnownActivation(a)) {
        return fail(absl::StrCat("unknown fused activation code ", static_cast<int>(a)));
      }
      return absl::OkStatus();
    };
    auto padding_ok = [&](Padding p) -> absl::Status {
      if (!IsKnownPadding(p)) {
        return fail(absl::StrCat("unknown padding code ", static_cast<int>(p)));
      }
      return absl::OkStatus();
    };
    auto axis_in = [&](const char* name, int64_t axis, int64_t rank) -> absl::Status {
      if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
        return fail(absl::StrCat(name, " ", axis, " is outside [", -rank, ", ", rank, ")"));
      }
      return absl::OkStatus();
    };
    const Tensor* in0 = In(sg, op, 0);
    const Tensor* in1 = In(sg, op, 1);
    const Tensor* out0 = op.outputs.empty() ? nullptr : &sg.tensors[op.outputs[0]];

    switch (op.kind) {
      case OpKind::kConv2D: {
        const auto& a = op.Attrs<Conv2DAttrs>();
        MICA_RETURN_IF_ERROR(padding_ok(a.padding));
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        MICA_RETURN_IF_ERROR(at_least("stride_w", a.stride_w, 1));
        MICA_RETURN_IF_ERROR(at_least("stride_h", a.stride_h, 1));
        MICA_RETURN_IF_ERROR(at_least("dilation_w", a.dilation_w, 1));
        MICA_RETURN_IF_ERROR(at_least("dilation_h", a.dilation_h, 1));
        MICA_RETURN_IF_ERROR(rank_is("input", in0, 4));
        MICA_RETURN_IF_ERROR(rank_is("filter", in1, 4));
        MICA_RETURN_IF_ERROR(rank_is("output", out0, 4));
        if (in0 && in1) {
          const int32_t filter_in = in1->shape[3];
          if (filter_in <= 0 || in0->shape[3] % filter_in != 0) {
            return fail(absl::StrCat("input ", ShapeString(in0->shape),
                                     " channels are not a multiple of filter ",
                                     ShapeString(in1->shape), " input channels"));
          }
        }
        break;
      }
      case OpKind::kDepthwiseConv2D: {
        const auto& a = op.Attrs<DepthwiseConv2DAttrs>();
        MICA_RETURN_IF_ERROR(padding_ok(a.padding));
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        MICA_RETURN_IF_ERROR(at_least("stride_w", a.stride_w, 1));
        MICA_RETURN_IF_ERROR(at_least("stride_h", a.stride_h, 1));
        MICA_RETURN_IF_ERROR(at_least("dilation_w", a.dilation_w, 1));
        MICA_RETURN_IF_ERROR(at_least("dilation_h", a.dilation_h, 1));
        // TFLite derives the multiplier from the shapes; old converters wrote 0 here.
        MICA_RETURN_IF_ERROR(at_least("depth_multiplier", a.depth_multiplier, 0));
        MICA_RETURN_IF_ERROR(rank_is("input", in0, 4));
        MICA_RETURN_IF_ERROR(rank_is("filter", in1, 4));
        MICA_RETURN_IF_ERROR(rank_is("output", out0, 4));
        break;
      }
      case OpKind::kTransposeConv: {
        const auto& a = op.Attrs<TransposeConvAttrs>();
        MICA_RETURN_IF_ERROR(padding_ok(a.padding));
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        MICA_RETURN_IF_ERROR(at_least("stride_w", a.stride_w, 1));
        MICA_RETURN_IF_ERROR(at_least("stride_h", a.stride_h, 1));
        MICA_RETURN_IF_ERROR(rank_is("filter", in1, 4));
        MICA_RETURN_IF_ERROR(rank_is("input", In(sg, op, 2), 4));
        break;
      }
      case OpKind::kFullyConnected: {
        MICA_RETURN_IF_ERROR(activation_ok(op.Attrs<FullyConnectedAttrs>().activation));
        MICA_RETURN_IF_ERROR(rank_is("weights", in1, 2));
        break;
      }
      case OpKind::kAdd:
      case OpKind::kSub:
      case OpKind::kMul:
      case OpKind::kDiv:
        MICA_RETURN_IF_ERROR(activation_ok(op.Attrs<ElementwiseAttrs>().activation));
        break;
      case OpKind::kMaxPool2D:
      case OpKind::kAveragePool2D: {
        const auto& a = op.Attrs<Pool2DAttrs>();
        MICA_RETURN_IF_ERROR(padding_ok(a.padding));
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        MICA_RETURN_IF_ERROR(at_least("stride_w", a.stride_w, 1));
        MICA_RETURN_IF_ERROR(at_least("stride_h", a.stride_h, 1));
        MICA_RETURN_IF_ERROR(at_least("filter_w", a.filter_w, 1));
        MICA_RETURN_IF_ERROR(at_least("filter_h", a.filter_h, 1));
        MICA_RETURN_IF_ERROR(rank_is("input", in0, 4));
        MICA_RETURN_IF_ERROR(rank_is("output", out0, 4));
        break;
      }
      case OpKind::kSoftmax:
        if (!std::isfinite(op.Attrs<SoftmaxAttrs>().beta)) return fail("beta is not finite");
        break;
      case OpKind::kLeakyRelu:
        if (!std::isfinite(op.Attrs<LeakyReluAttrs>().alpha)) return fail("alpha is not finite");
        break;
      case OpKind::kReshape:
        for (int32_t d : op.Attrs<ReshapeAttrs>().new_shape) {
          if (d < -1) return fail(absl::StrCat("new_shape has dimension ", d));
        }
        break;
      case OpKind::kSqueeze:
        if (in0) {
          for (int32_t d : op.Attrs<SqueezeAttrs>().squeeze_dims) {
            MICA_RETURN_IF_ERROR(axis_in("squeeze dim", d, in0->shape.size()));
          }
        }
        break;
      case OpKind::kConcatenation: {
        const auto& a = op.Attrs<ConcatenationAttrs>();
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        if (out0) MICA_RETURN_IF_ERROR(axis_in("axis", a.axis, out0->shape.size()));
        break;
      }
      case OpKind::kSplit:
      case OpKind::kSplitV: {
        const auto& a = op.Attrs<SplitAttrs>();
        MICA_RETURN_IF_ERROR(at_least("num_splits", a.num_splits, 1));
        if (static_cast<size_t>(a.num_splits) != op.outputs.size()) {
          return fail(absl::StrCat("num_splits is ", a.num_splits, " but there are ",
                                   op.outputs.size(), " outputs"));
        }
        break;
      }
      case OpKind::kPack:
      case OpKind::kUnpack: {
        const auto& a = op.Attrs<PackAttrs>();
        const size_t n = op.kind == OpKind::kPack ? op.inputs.size() : op.outputs.size();
        if (a.values_count < 1 || static_cast<size_t>(a.values_count) != n) {
          return fail(absl::StrCat("values_count is ", a.values_count, " but there are ", n,
                                   op.kind == OpKind::kPack ? " inputs" : " outputs"));
        }
        if (in0) {
          const int64_t rank =
              static_cast<int64_t>(in0->shape.size()) + (op.kind == OpKind::kPack ? 1 : 0);
          MICA_RETURN_IF_ERROR(axis_in("axis", a.axis, rank));
        }
        break;
      }
      case OpKind::kGather: {
        const auto& a = op.Attrs<GatherAttrs>();
        if (in0) MICA_RETURN_IF_ERROR(axis_in("axis", a.axis, in0->shape.size()));
        break;
      }
      case OpKind::kSpaceToDepth:
      case OpKind::kDepthToSpace:
        MICA_RETURN_IF_ERROR(at_least("block_size", op.Attrs<SpaceDepthAttrs>().block_size, 1));
        break;
      case OpKind::kArgMax:
      case OpKind::kArgMin: {
        const DType t = op.Attrs<ArgMinMaxAttrs>().output_type;
        if (t != DType::kInt32 && t != DType::kInt64) {
          return fail(
              absl::StrCat("output_type must be int32 or int64, not ",
                           IsKnownDType(t) ? std::string(DTypeName(t)) : std::string("unknown")));
        }
        break;
      }
      case OpKind::kSvdf: {
        const auto& a = op.Attrs<SvdfAttrs>();
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        MICA_RETURN_IF_ERROR(at_least("rank", a.rank, 1));
        MICA_RETURN_IF_ERROR(rank_is("feature weights", in1, 2));
        if (in1 && in1->shape[0] % a.rank != 0) {
          return fail(absl::StrCat("feature weights ", ShapeString(in1->shape),
                                   " filters are not a multiple of rank ", a.rank));
        }
        break;
      }
      case OpKind::kUnidirectionalSequenceLstm: {
        const auto& a = op.Attrs<LstmAttrs>();
        MICA_RETURN_IF_ERROR(activation_ok(a.activation));
        if (!std::isfinite(a.cell_clip) || a.cell_clip < 0) return fail("cell_clip is invalid");
        if (!std::isfinite(a.proj_clip) || a.proj_clip < 0) return fail("proj_clip is invalid");
        break;
      }
      default: break;
    }
    return absl::OkStatus();
  }

  // The declared output shapes against shape inference (where mica implements it), RESHAPE's
  // element count, constant GATHER indices: what execution relies on, checked once for every
  // command. Liberal where TFLite Micro is: a dimension the file marks dynamic (-1 in the shape
  // signature) may differ, and an output may drop or add size-1 dimensions (a view of the
  // same elements, as converters write for FULLY_CONNECTED and reductions).
  absl::Status CheckShapes(size_t s, size_t o) const {
    const Subgraph& sg = graph_.subgraphs[s];
    const Operator& op = sg.ops[o];
    auto fail = [&](const std::string& what) { return Error(OpWhere(s, o) + what); };
    if (op.kind == OpKind::kOpaque || op.outputs.empty()) return absl::OkStatus();
    const Tensor* in0 = In(sg, op, 0);
    const Tensor& out0 = sg.tensors[op.outputs[0]];
    if (op.kind == OpKind::kReshape) {
      // TFLite Micro takes the output tensor's shape and checks only the element count.
      if (in0 != nullptr && in0->num_elements() != out0.num_elements()) {
        return fail(absl::StrCat("cannot reshape ", ShapeString(in0->shape), " (",
                                 in0->num_elements(), " elements) to output ",
                                 ShapeString(out0.shape), " (", out0.num_elements(),
                                 " elements)"));
      }
      return absl::OkStatus();
    }
    if (op.kind == OpKind::kGather && in0 != nullptr) {
      const Tensor* idx = In(sg, op, 1);
      const int64_t rank = static_cast<int64_t>(in0->shape.size());
      int64_t axis = op.Attrs<GatherAttrs>().axis;
      if (axis < 0) axis += rank;
      if (idx != nullptr && idx->is_constant() && axis >= 0 && axis < rank) {
        const int64_t size = in0->shape[static_cast<size_t>(axis)];
        const int64_t n = idx->num_elements();
        for (int64_t i = 0; i < n; ++i) {
          int64_t v = 0;
          if (idx->dtype == DType::kInt32) {
            int32_t x;
            std::memcpy(&x, idx->data.bytes() + 4 * i, 4);
            v = x;
          } else if (idx->dtype == DType::kInt64) {
            std::memcpy(&v, idx->data.bytes() + 8 * i, 8);
          } else {
            return fail(absl::StrCat("indices must be int32 or int64, not ",
                                     std::string(DTypeName(idx->dtype))));
          }
          if (v < 0 || v >= size) {
            return fail(absl::StrCat("constant index ", i, " is ", v, ", outside [0, ", size,
                                     ") of axis ", axis, " of ", ShapeString(in0->shape)));
          }
        }
      }
    }
    const absl::StatusOr<std::vector<std::vector<int32_t>>> inferred =
        InferOutputShapes(sg, op);
    if (!inferred.ok()) {
      if (inferred.status().code() == absl::StatusCode::kUnimplemented) return absl::OkStatus();
      std::string msg(inferred.status().message());
      const std::string prefix = absl::StrCat(std::string(op.name()), ": ");
      if (msg.compare(0, prefix.size(), prefix) == 0) msg.erase(0, prefix.size());
      return fail(msg);
    }
    for (size_t i = 0; i < op.outputs.size() && i < inferred->size(); ++i) {
      const Tensor& out = sg.tensors[op.outputs[i]];
      const std::vector<int32_t>& want = (*inferred)[i];
      if (out.shape == want) continue;
      int64_t want_n = 1;
      for (int32_t d : want) want_n *= d;
      bool ok = false;
      if (out.shape.size() != want.size()) {
        ok = want_n == out.num_elements();  // the same elements, size-1 dimensions differ
      } else {
        ok = true;
        for (size_t d = 0; d < want.size(); ++d) {
          const bool dynamic =
              d < out.shape_signature.size() && out.shape_signature[d] == -1;
          if (out.shape[d] != want[d] && !dynamic) ok = false;
        }
      }
      if (!ok) {
        return fail(absl::StrCat("output ", i, " (", QuoteForMessage(out.name), ") has shape ",
                                 ShapeString(out.shape), " but its inputs give ",
                                 ShapeString(want)));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckOp(size_t s, size_t o, std::vector<uint8_t>& available,
                       std::vector<uint8_t>& produced) const {
    const Subgraph& sg = graph_.subgraphs[s];
    const Operator& op = sg.ops[o];
    auto fail = [&](const std::string& what) { return Error(OpWhere(s, o) + what); };
    if (!IsKnownOpKind(op.kind)) {
      return fail(absl::StrCat("unknown operator kind ", static_cast<int>(op.kind)));
    }
    if (op.kind == OpKind::kOpaque && op.opaque_name.empty()) {
      return fail("opaque operator has no name");
    }
    const size_t want = internal::AttrsIndexFor(op.kind);
    if (op.attrs.index() != want) {
      return fail(absl::StrCat("attributes have the wrong type (variant index ", op.attrs.index(),
                               ", expected ", want, ")"));
    }
    // Arity (max -1: unbounded) and which inputs may be absent come from the op table.
    const OpInfo& ar = GetOpInfo(op.kind);
    const auto n_in = static_cast<int64_t>(op.inputs.size());
    const auto n_out = static_cast<int64_t>(op.outputs.size());
    auto expects = [](int min, int max) {
      return absl::StrCat(min, max == min ? ""
                               : max < 0  ? " or more"
                                          : absl::StrCat(" to ", max));
    };
    if (n_in < ar.min_inputs || (ar.max_inputs >= 0 && n_in > ar.max_inputs)) {
      return fail(absl::StrCat("has ", n_in, " inputs; expects ",
                               expects(ar.min_inputs, ar.max_inputs)));
    }
    if (n_out < ar.min_outputs || (ar.max_outputs >= 0 && n_out > ar.max_outputs)) {
      return fail(absl::StrCat("has ", n_out, " outputs; expects ",
                               expects(ar.min_outputs, ar.max_outputs)));
    }
    const auto n_tensors = static_cast<int64_t>(sg.tensors.size());
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int32_t t = op.inputs[i];
      if (t == kNoTensor) {
        if (!IsOptionalInput(op.kind, i)) {
          return fail(absl::StrCat("required input ", i, " is absent"));
        }
        continue;
      }
      if (t < 0 || t >= n_tensors) {
        return fail(
            absl::StrCat("input ", i, " refers to tensor ", t, "; the subgraph has ", n_tensors));
      }
      // Operators mica does not know may take workspace tensors nobody writes (e.g. the
      // scratch buffers of Vela's ethos-u operator), so only known kinds are held to order.
      if (!available[t] && op.kind != OpKind::kOpaque) {
        return fail(absl::StrCat("input ", i, " reads tensor ", t, " (",
                                 QuoteForMessage(sg.tensors[t].name),
                                 ") before any operator produces it (cycle or missing producer)"));
      }
    }
    for (size_t i = 0; i < op.intermediates.size(); ++i) {
      const int32_t t = op.intermediates[i];
      if (t < 0 || t >= n_tensors) {
        return fail(absl::StrCat("intermediate ", i, " refers to tensor ", t, "; the subgraph has ",
                                 n_tensors));
      }
    }
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      const int32_t t = op.outputs[i];
      if (t < 0 || t >= n_tensors) {
        return fail(
            absl::StrCat("output ", i, " refers to tensor ", t, "; the subgraph has ", n_tensors));
      }
      const Tensor& tensor = sg.tensors[t];
      if (produced[t]) {
        return fail(absl::StrCat("output ", i, " writes tensor ", t, " (",
                                 QuoteForMessage(tensor.name), ") which is already produced"));
      }
      if (tensor.is_constant()) {
        return fail(absl::StrCat("output ", i, " writes constant tensor ", t, " (",
                                 QuoteForMessage(tensor.name), ")"));
      }
      produced[t] = 1;
    }
    MICA_RETURN_IF_ERROR(CheckAttrs(s, o));
    MICA_RETURN_IF_ERROR(CheckShapes(s, o));
    for (int32_t t : op.outputs) available[t] = 1;
    return absl::OkStatus();
  }

  absl::Status CheckSubgraph(size_t s, const Subgraph& sg) const {
    const auto n_tensors = static_cast<int64_t>(sg.tensors.size());
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      MICA_RETURN_IF_ERROR(CheckTensor(s, t, sg.tensors[t]));
    }
    // Tensors readable before any operator runs: graph inputs, constants, state variables,
    // and zero-element tensors (which hold nothing to read).
    std::vector<uint8_t> available(sg.tensors.size(), 0);
    std::vector<uint8_t> produced(sg.tensors.size(), 0);
    for (size_t t = 0; t < sg.tensors.size(); ++t) {
      const Tensor& tensor = sg.tensors[t];
      available[t] = tensor.is_constant() || tensor.is_variable || tensor.num_elements() == 0;
    }
    for (size_t i = 0; i < sg.inputs.size(); ++i) {
      const int32_t t = sg.inputs[i];
      if (t < 0 || t >= n_tensors) {
        return Error(absl::StrCat("subgraph ", s, ": input ", i, " refers to tensor ", t,
                                  "; the subgraph has ", n_tensors));
      }
      available[t] = 1;
      produced[t] = 1;  // an operator writing a graph input would be a second producer
    }
    for (size_t o = 0; o < sg.ops.size(); ++o) {
      MICA_RETURN_IF_ERROR(CheckOp(s, o, available, produced));
    }
    for (size_t i = 0; i < sg.outputs.size(); ++i) {
      const int32_t t = sg.outputs[i];
      if (t < 0 || t >= n_tensors) {
        return Error(absl::StrCat("subgraph ", s, ": output ", i, " refers to tensor ", t,
                                  "; the subgraph has ", n_tensors));
      }
      if (!available[t]) {
        return Error(absl::StrCat("subgraph ", s, ": output ", i, " is tensor ", t, " (",
                                  QuoteForMessage(sg.tensors[t].name),
                                  ") which no operator produces"));
      }
    }
    return absl::OkStatus();
  }

  const Graph& graph_;
  const std::string file_;
};

}  // namespace

absl::Status ValidateGraph(const Graph& graph) { return Validator(graph).Run(); }

}  // namespace mica
