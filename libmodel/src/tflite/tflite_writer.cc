// WriteTflite: a mica Graph becomes a TFLite flatbuffer (schema version 3).
//
// The graph is validated first, so a malformed graph gives an error, never a broken file.
// Constants are written as 16-byte aligned buffers (tensors sharing one view share one
// buffer); operator codes are deduplicated by (code, custom name, version).
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "tflite/tflite_ops.h"
#include "tflite_schema_generated.h"
#include "validate.h"

namespace mica {
namespace {

namespace fb = ::mica::tflite_fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint32_t kSchemaVersion = 3;
constexpr size_t kBufferAlignment = 16;  // what the format's schema asks for buffer data
// The builder cannot grow past 2 GiB; leave room for everything that is not constant data.
constexpr uint64_t kMaxFlatbufferBytes = FLATBUFFERS_MAX_BUFFER_SIZE;

fb::TensorType TfliteType(DType t) {
  switch (t) {
    case DType::kFloat32: return fb::TensorType_FLOAT32;
    case DType::kInt8: return fb::TensorType_INT8;
    case DType::kUInt8: return fb::TensorType_UINT8;
    case DType::kInt16: return fb::TensorType_INT16;
    case DType::kInt32: return fb::TensorType_INT32;
    case DType::kInt64: return fb::TensorType_INT64;
    case DType::kBool: return fb::TensorType_BOOL;
    case DType::kInt4: return fb::TensorType_INT4;
    case DType::kFloat16: return fb::TensorType_FLOAT16;
  }
  return fb::TensorType_FLOAT32;
}

fb::ActivationFunctionType TfliteActivation(Activation a) {
  switch (a) {
    case Activation::kNone: return fb::ActivationFunctionType_NONE;
    case Activation::kRelu: return fb::ActivationFunctionType_RELU;
    case Activation::kReluN1To1: return fb::ActivationFunctionType_RELU_N1_TO_1;
    case Activation::kRelu6: return fb::ActivationFunctionType_RELU6;
    case Activation::kTanh: return fb::ActivationFunctionType_TANH;
    case Activation::kSignBit: return fb::ActivationFunctionType_SIGN_BIT;
  }
  return fb::ActivationFunctionType_NONE;
}

fb::Padding TflitePadding(Padding p) {
  return p == Padding::kSame ? fb::Padding_SAME : fb::Padding_VALID;
}

// An operator's builtin options: union type and table offset.
struct BuiltinOptions {
  fb::BuiltinOptions type = fb::BuiltinOptions_NONE;
  Offset<void> table;
};

template <typename T>
BuiltinOptions Opt(Offset<T> table) {
  return {fb::BuiltinOptionsTraits<T>::enum_value, table.Union()};
}

BuiltinOptions WriteOptions(FlatBufferBuilder& b, const Operator& op) {
  switch (op.kind) {
    case OpKind::kConv2D: {
      const auto& a = op.Attrs<Conv2DAttrs>();
      return Opt(fb::CreateConv2DOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                         TfliteActivation(a.activation), a.dilation_w,
                                         a.dilation_h));
    }
    case OpKind::kDepthwiseConv2D: {
      const auto& a = op.Attrs<DepthwiseConv2DAttrs>();
      return Opt(fb::CreateDepthwiseConv2DOptions(
          b, TflitePadding(a.padding), a.stride_w, a.stride_h, a.depth_multiplier,
          TfliteActivation(a.activation), a.dilation_w, a.dilation_h));
    }
    case OpKind::kTransposeConv: {
      const auto& a = op.Attrs<TransposeConvAttrs>();
      return Opt(fb::CreateTransposeConvOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                                TfliteActivation(a.activation)));
    }
    case OpKind::kFullyConnected: {
      const auto& a = op.Attrs<FullyConnectedAttrs>();
      return Opt(
          fb::CreateFullyConnectedOptions(b, TfliteActivation(a.activation), 0, a.keep_num_dims));
    }
    case OpKind::kBatchMatMul: {
      const auto& a = op.Attrs<BatchMatMulAttrs>();
      return Opt(fb::CreateBatchMatMulOptions(b, a.adj_x, a.adj_y));
    }
    case OpKind::kAdd:
      return Opt(
          fb::CreateAddOptions(b, TfliteActivation(op.Attrs<ElementwiseAttrs>().activation)));
    case OpKind::kSub:
      return Opt(
          fb::CreateSubOptions(b, TfliteActivation(op.Attrs<ElementwiseAttrs>().activation)));
    case OpKind::kMul:
      return Opt(
          fb::CreateMulOptions(b, TfliteActivation(op.Attrs<ElementwiseAttrs>().activation)));
    case OpKind::kDiv:
      return Opt(
          fb::CreateDivOptions(b, TfliteActivation(op.Attrs<ElementwiseAttrs>().activation)));
    case OpKind::kMaximum:
    case OpKind::kMinimum: return Opt(fb::CreateMaximumMinimumOptions(b));
    case OpKind::kSquaredDifference: return Opt(fb::CreateSquaredDifferenceOptions(b));
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D: {
      const auto& a = op.Attrs<Pool2DAttrs>();
      return Opt(fb::CreatePool2DOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                         a.filter_w, a.filter_h, TfliteActivation(a.activation)));
    }
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
      return Opt(fb::CreateReducerOptions(b, op.Attrs<ReduceAttrs>().keep_dims));
    case OpKind::kSoftmax: return Opt(fb::CreateSoftmaxOptions(b, op.Attrs<SoftmaxAttrs>().beta));
    case OpKind::kLeakyRelu:
      return Opt(fb::CreateLeakyReluOptions(b, op.Attrs<LeakyReluAttrs>().alpha));
    case OpKind::kHardSwish: return Opt(fb::CreateHardSwishOptions(b));
    case OpKind::kExp: return Opt(fb::CreateExpOptions(b));
    case OpKind::kAbs: return Opt(fb::CreateAbsOptions(b));
    case OpKind::kNeg: return Opt(fb::CreateNegOptions(b));
    case OpKind::kReshape: {
      const auto& a = op.Attrs<ReshapeAttrs>();
      // An absent new_shape stays absent: TFLite then takes the shape from the second input.
      return Opt(
          fb::CreateReshapeOptions(b, a.new_shape.empty() ? 0 : b.CreateVector(a.new_shape)));
    }
    case OpKind::kSqueeze:
      return Opt(
          fb::CreateSqueezeOptions(b, b.CreateVector(op.Attrs<SqueezeAttrs>().squeeze_dims)));
    case OpKind::kExpandDims: return Opt(fb::CreateExpandDimsOptions(b));
    case OpKind::kTranspose: return Opt(fb::CreateTransposeOptions(b));
    case OpKind::kPad: return Opt(fb::CreatePadOptions(b));
    case OpKind::kPadV2: return Opt(fb::CreatePadV2Options(b));
    case OpKind::kConcatenation: {
      const auto& a = op.Attrs<ConcatenationAttrs>();
      return Opt(fb::CreateConcatenationOptions(b, a.axis, TfliteActivation(a.activation)));
    }
    case OpKind::kSplit: return Opt(fb::CreateSplitOptions(b, op.Attrs<SplitAttrs>().num_splits));
    case OpKind::kSplitV: return Opt(fb::CreateSplitVOptions(b, op.Attrs<SplitAttrs>().num_splits));
    case OpKind::kStridedSlice: {
      const auto& a = op.Attrs<StridedSliceAttrs>();
      return Opt(fb::CreateStridedSliceOptions(b, a.begin_mask, a.end_mask, a.ellipsis_mask,
                                               a.new_axis_mask, a.shrink_axis_mask, a.offset));
    }
    case OpKind::kSlice: return Opt(fb::CreateSliceOptions(b));
    case OpKind::kGather: {
      const auto& a = op.Attrs<GatherAttrs>();
      return Opt(fb::CreateGatherOptions(b, a.axis, a.batch_dims));
    }
    case OpKind::kPack: {
      const auto& a = op.Attrs<PackAttrs>();
      return Opt(fb::CreatePackOptions(b, a.values_count, a.axis));
    }
    case OpKind::kUnpack: {
      const auto& a = op.Attrs<PackAttrs>();
      return Opt(fb::CreateUnpackOptions(b, a.values_count, a.axis));
    }
    case OpKind::kResizeNearestNeighbor: {
      const auto& a = op.Attrs<ResizeAttrs>();
      return Opt(fb::CreateResizeNearestNeighborOptions(b, a.align_corners, a.half_pixel_centers));
    }
    case OpKind::kResizeBilinear: {
      const auto& a = op.Attrs<ResizeAttrs>();
      return Opt(fb::CreateResizeBilinearOptions(b, a.align_corners, a.half_pixel_centers));
    }
    case OpKind::kSpaceToDepth:
      return Opt(fb::CreateSpaceToDepthOptions(b, op.Attrs<SpaceDepthAttrs>().block_size));
    case OpKind::kDepthToSpace:
      return Opt(fb::CreateDepthToSpaceOptions(b, op.Attrs<SpaceDepthAttrs>().block_size));
    case OpKind::kArgMax:
      return Opt(fb::CreateArgMaxOptions(b, TfliteType(op.Attrs<ArgMinMaxAttrs>().output_type)));
    case OpKind::kArgMin:
      return Opt(fb::CreateArgMinOptions(b, TfliteType(op.Attrs<ArgMinMaxAttrs>().output_type)));
    case OpKind::kQuantize: return Opt(fb::CreateQuantizeOptions(b));
    case OpKind::kDequantize: return Opt(fb::CreateDequantizeOptions(b));
    case OpKind::kSvdf: {
      const auto& a = op.Attrs<SvdfAttrs>();
      return Opt(fb::CreateSVDFOptions(b, a.rank, TfliteActivation(a.activation),
                                       a.asymmetric_quantize_inputs));
    }
    case OpKind::kUnidirectionalSequenceLstm: {
      const auto& a = op.Attrs<LstmAttrs>();
      return Opt(fb::CreateUnidirectionalSequenceLSTMOptions(
          b, TfliteActivation(a.activation), a.cell_clip, a.proj_clip, a.time_major,
          a.asymmetric_quantize_inputs, a.diagonal_recurrent_tensors));
    }
    default: return {};  // no options table (LOGISTIC, RELU, PRELU, opaque builtins, ...)
  }
}

class TfliteWriter {
 public:
  explicit TfliteWriter(const Graph& graph) : graph_(graph) {}

  absl::StatusOr<std::vector<uint8_t>> Write() {
    MICA_RETURN_IF_ERROR(ValidateGraph(graph_));
    MICA_RETURN_IF_ERROR(CheckSize());

    buffers_.push_back(fb::CreateBuffer(b_));  // buffers[0]: the empty sentinel
    std::vector<Offset<fb::SubGraph>> subgraphs;
    for (size_t s = 0; s < graph_.subgraphs.size(); ++s) {
      MICA_ASSIGN_OR_RETURN(Offset<fb::SubGraph> sg, WriteSubgraph(s, graph_.subgraphs[s]));
      subgraphs.push_back(sg);
    }
    std::vector<Offset<fb::Metadata>> metadata;
    for (const auto& [name, value] : graph_.metadata) {
      const auto index = static_cast<uint32_t>(buffers_.size());
      buffers_.push_back(DataBuffer(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
      metadata.push_back(fb::CreateMetadata(b_, b_.CreateString(name), index));
    }
    const auto model = fb::CreateModel(
        b_, kSchemaVersion, b_.CreateVector(opcodes_), b_.CreateVector(subgraphs),
        graph_.description.empty() ? 0 : b_.CreateString(graph_.description),
        b_.CreateVector(buffers_), 0, metadata.empty() ? 0 : b_.CreateVector(metadata));
    fb::FinishModelBuffer(b_, model);
    return std::vector<uint8_t>(b_.GetBufferPointer(), b_.GetBufferPointer() + b_.GetSize());
  }

 private:
  // Refuses graphs whose constants alone would overflow a flatbuffer (the large-model
  // extension, data after the flatbuffer, is read but not written).
  absl::Status CheckSize() const {
    uint64_t total = 0;
    for (const Subgraph& sg : graph_.subgraphs) {
      total += 256 * (sg.tensors.size() + sg.ops.size());
      for (const Tensor& t : sg.tensors) {
        total += t.data.size + kBufferAlignment + t.name.size() +
                 8 * (t.quant.scale.size() + t.quant.zero_point.size());
      }
    }
    for (const auto& [name, value] : graph_.metadata) total += name.size() + value.size() + 64;
    total += graph_.description.size();
    if (total >= kMaxFlatbufferBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(internal::FilePrefix(graph_), "model needs about ", total,
                       " bytes, more than a TFLite flatbuffer holds (", kMaxFlatbufferBytes, ")"));
    }
    return absl::OkStatus();
  }

  Offset<fb::Buffer> DataBuffer(const uint8_t* data, size_t size) {
    b_.ForceVectorAlignment(size, sizeof(uint8_t), kBufferAlignment);
    return fb::CreateBuffer(b_, b_.CreateVector(data, size));
  }

  uint32_t ConstantBuffer(const ConstData& data) {
    const auto key = std::make_pair(data.ptr, data.size);
    auto it = const_buffers_.find(key);
    if (it != const_buffers_.end()) return it->second;
    const auto index = static_cast<uint32_t>(buffers_.size());
    buffers_.push_back(DataBuffer(data.ptr, data.size));
    const_buffers_.emplace(key, index);
    return index;
  }

  absl::StatusOr<uint32_t> OpcodeIndex(const Operator& op, const std::string& where) {
    int32_t code = -1;
    std::string custom;
    if (op.kind == OpKind::kOpaque) {
      code = tflite::BuiltinCodeFromName(op.opaque_name);
      if (code < 0) {
        code = tflite::kCustomCode;
        custom = op.opaque_name;
      }
    } else {
      code = tflite::BuiltinFromKind(op.kind);
      if (code < 0) {
        return absl::UnimplementedError(
            absl::StrCat(internal::FilePrefix(graph_), where, "has no TFLite builtin"));
      }
    }
    const auto key = std::make_tuple(code, custom, op.version);
    auto it = opcode_index_.find(key);
    if (it != opcode_index_.end()) return it->second;
    const auto index = static_cast<uint32_t>(opcodes_.size());
    const auto deprecated = static_cast<int8_t>(code < tflite::kPlaceholderForGreaterOpCodes
                                                    ? code
                                                    : tflite::kPlaceholderForGreaterOpCodes);
    opcodes_.push_back(fb::CreateOperatorCode(
        b_, deprecated, custom.empty() ? 0 : b_.CreateString(custom), op.version, code));
    opcode_index_.emplace(key, index);
    return index;
  }

  absl::StatusOr<Offset<fb::SubGraph>> WriteSubgraph(size_t s, const Subgraph& sg) {
    std::vector<Offset<fb::Tensor>> tensors;
    tensors.reserve(sg.tensors.size());
    for (const Tensor& t : sg.tensors) {
      const uint32_t buffer = t.is_constant() ? ConstantBuffer(t.data) : 0;
      Offset<fb::QuantizationParameters> quant = 0;
      if (!t.quant.empty()) {
        quant = fb::CreateQuantizationParameters(b_, 0, 0, b_.CreateVector(t.quant.scale),
                                                 b_.CreateVector(t.quant.zero_point),
                                                 fb::QuantizationDetails_NONE, 0, t.quant.axis);
      }
      tensors.push_back(fb::CreateTensor(
          b_, b_.CreateVector(t.shape), TfliteType(t.dtype), buffer, b_.CreateString(t.name), quant,
          t.is_variable, 0, t.shape_signature.empty() ? 0 : b_.CreateVector(t.shape_signature)));
    }
    std::vector<Offset<fb::Operator>> ops;
    ops.reserve(sg.ops.size());
    for (size_t o = 0; o < sg.ops.size(); ++o) {
      const Operator& op = sg.ops[o];
      const std::string where =
          absl::StrCat("subgraph ", s, ", operator ", o, " (", internal::OpLabel(op), "): ");
      MICA_ASSIGN_OR_RETURN(const uint32_t opcode, OpcodeIndex(op, where));
      const BuiltinOptions options = WriteOptions(b_, op);
      Offset<flatbuffers::Vector<uint8_t>> custom_options = 0;
      if (op.kind == OpKind::kOpaque && !op.opaque_options.empty()) {
        custom_options = b_.CreateVector(op.opaque_options);
      }
      ops.push_back(
          fb::CreateOperator(b_, opcode, b_.CreateVector(op.inputs), b_.CreateVector(op.outputs),
                             options.type, options.table, custom_options, 0, 0,
                             op.intermediates.empty() ? 0 : b_.CreateVector(op.intermediates)));
    }
    return fb::CreateSubGraph(b_, b_.CreateVector(tensors), b_.CreateVector(sg.inputs),
                              b_.CreateVector(sg.outputs), b_.CreateVector(ops),
                              sg.name.empty() ? 0 : b_.CreateString(sg.name));
  }

  const Graph& graph_;
  FlatBufferBuilder b_{1 << 16};
  std::vector<Offset<fb::Buffer>> buffers_;
  std::map<std::pair<const uint8_t*, size_t>, uint32_t> const_buffers_;
  std::vector<Offset<fb::OperatorCode>> opcodes_;
  std::map<std::tuple<int32_t, std::string, int32_t>, uint32_t> opcode_index_;
};

}  // namespace

absl::StatusOr<std::vector<uint8_t>> WriteTflite(const Graph& graph) {
  return TfliteWriter(graph).Write();
}

}  // namespace mica
