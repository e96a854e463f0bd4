// TFLite builtin options <-> attributes: one codec per options table,
// dispatched by the op table. Reading keeps the reader's hostile-input rules:
// the options' union type must be the kind's table, enum fields must be in
// range, and every error is one line naming file and op.
#include "tflite/tflite_options.h"

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"

namespace mica {
namespace tflite {

// The op table names options tables bare (column OPTIONS); they resolve in
// here.
namespace schema {
using namespace ::mica::tflite_fb;  // NOLINT(build/namespaces)
// The OPTIONS entry of kinds for which TFLite has no options table.
struct NoOptions {};
}  // namespace schema

namespace {

namespace fb = ::mica::tflite_fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

absl::StatusOr<Activation> ActivationFrom(int8_t a, const OptionsReadContext &c) {
  if (a < fb::ActivationFunctionType_MIN || a > fb::ActivationFunctionType_MAX) {
    return c.Error(absl::StrCat("unknown fused activation code ", a));
  }
  switch (static_cast<fb::ActivationFunctionType>(a)) {
    case fb::ActivationFunctionType_NONE: return Activation::kNone;
    case fb::ActivationFunctionType_RELU: return Activation::kRelu;
    case fb::ActivationFunctionType_RELU_N1_TO_1: return Activation::kReluN1To1;
    case fb::ActivationFunctionType_RELU6: return Activation::kRelu6;
    case fb::ActivationFunctionType_TANH: return Activation::kTanh;
    case fb::ActivationFunctionType_SIGN_BIT: return Activation::kSignBit;
  }
  return Activation::kNone;
}

absl::StatusOr<Padding> PaddingFrom(int8_t p, const OptionsReadContext &c) {
  if (p == fb::Padding_SAME) return Padding::kSame;
  if (p == fb::Padding_VALID) return Padding::kValid;
  return c.Error(absl::StrCat("unknown padding code ", p));
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

// Codec<O>: the attributes options table O holds. Read(o, ctx, &attrs) fills
// attrs from a present table (fields in the order errors should be reported);
// Write(b, attrs) builds the table with the generated Create function, so
// written files stay byte for byte the same. Absent() gives the attributes of
// an operator whose options are absent.
template <typename O>
struct Codec;

template <typename Attrs>
struct CodecBase {
  static Attrs Absent() { return Attrs{}; }
};

template <>
struct Codec<fb::Conv2DOptions> : CodecBase<Conv2DAttrs> {
  static absl::Status Read(const fb::Conv2DOptions &o, const OptionsReadContext &c,
                           Conv2DAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->padding, PaddingFrom(o.padding(), c));
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->stride_w = o.stride_w();
    a->stride_h = o.stride_h();
    a->dilation_w = o.dilation_w_factor();
    a->dilation_h = o.dilation_h_factor();
    return absl::OkStatus();
  }
  static Offset<fb::Conv2DOptions> Write(FlatBufferBuilder &b, const Conv2DAttrs &a) {
    return fb::CreateConv2DOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                   TfliteActivation(a.activation), a.dilation_w, a.dilation_h);
  }
};

template <>
struct Codec<fb::DepthwiseConv2DOptions> : CodecBase<DepthwiseConv2DAttrs> {
  static absl::Status Read(const fb::DepthwiseConv2DOptions &o, const OptionsReadContext &c,
                           DepthwiseConv2DAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->padding, PaddingFrom(o.padding(), c));
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->stride_w = o.stride_w();
    a->stride_h = o.stride_h();
    a->dilation_w = o.dilation_w_factor();
    a->dilation_h = o.dilation_h_factor();
    a->depth_multiplier = o.depth_multiplier();
    return absl::OkStatus();
  }
  static Offset<fb::DepthwiseConv2DOptions> Write(FlatBufferBuilder &b,
                                                  const DepthwiseConv2DAttrs &a) {
    return fb::CreateDepthwiseConv2DOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                            a.depth_multiplier, TfliteActivation(a.activation),
                                            a.dilation_w, a.dilation_h);
  }
};

template <>
struct Codec<fb::TransposeConvOptions> : CodecBase<TransposeConvAttrs> {
  static absl::Status Read(const fb::TransposeConvOptions &o, const OptionsReadContext &c,
                           TransposeConvAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->padding, PaddingFrom(o.padding(), c));
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->stride_w = o.stride_w();
    a->stride_h = o.stride_h();
    return absl::OkStatus();
  }
  static Offset<fb::TransposeConvOptions> Write(FlatBufferBuilder &b, const TransposeConvAttrs &a) {
    return fb::CreateTransposeConvOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h,
                                          TfliteActivation(a.activation));
  }
};

template <>
struct Codec<fb::FullyConnectedOptions> : CodecBase<FullyConnectedAttrs> {
  static absl::Status Read(const fb::FullyConnectedOptions &o, const OptionsReadContext &c,
                           FullyConnectedAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->keep_num_dims = o.keep_num_dims();
    if (o.weights_format() != 0) {
      return c.Unsupported(
          absl::StrCat("shuffled weights format ", o.weights_format(), " is not supported"));
    }
    return absl::OkStatus();
  }
  static Offset<fb::FullyConnectedOptions> Write(FlatBufferBuilder &b,
                                                 const FullyConnectedAttrs &a) {
    return fb::CreateFullyConnectedOptions(b, TfliteActivation(a.activation), 0, a.keep_num_dims);
  }
};

template <>
struct Codec<fb::BatchMatMulOptions> : CodecBase<BatchMatMulAttrs> {
  static absl::Status Read(const fb::BatchMatMulOptions &o, const OptionsReadContext &,
                           BatchMatMulAttrs *a) {
    a->adj_x = o.adj_x();
    a->adj_y = o.adj_y();
    return absl::OkStatus();
  }
  static Offset<fb::BatchMatMulOptions> Write(FlatBufferBuilder &b, const BatchMatMulAttrs &a) {
    return fb::CreateBatchMatMulOptions(b, a.adj_x, a.adj_y);
  }
};

// ADD, SUB, MUL, DIV: a fused activation only.
template <typename O>
struct ElementwiseCodec : CodecBase<ElementwiseAttrs> {
  static absl::Status Read(const O &o, const OptionsReadContext &c, ElementwiseAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    return absl::OkStatus();
  }
};
template <>
struct Codec<fb::AddOptions> : ElementwiseCodec<fb::AddOptions> {
  static auto Write(FlatBufferBuilder &b, const ElementwiseAttrs &a) {
    return fb::CreateAddOptions(b, TfliteActivation(a.activation));
  }
};
template <>
struct Codec<fb::SubOptions> : ElementwiseCodec<fb::SubOptions> {
  static auto Write(FlatBufferBuilder &b, const ElementwiseAttrs &a) {
    return fb::CreateSubOptions(b, TfliteActivation(a.activation));
  }
};
template <>
struct Codec<fb::MulOptions> : ElementwiseCodec<fb::MulOptions> {
  static auto Write(FlatBufferBuilder &b, const ElementwiseAttrs &a) {
    return fb::CreateMulOptions(b, TfliteActivation(a.activation));
  }
};
template <>
struct Codec<fb::DivOptions> : ElementwiseCodec<fb::DivOptions> {
  static auto Write(FlatBufferBuilder &b, const ElementwiseAttrs &a) {
    return fb::CreateDivOptions(b, TfliteActivation(a.activation));
  }
};

template <>
struct Codec<fb::Pool2DOptions> : CodecBase<Pool2DAttrs> {
  static absl::Status Read(const fb::Pool2DOptions &o, const OptionsReadContext &c,
                           Pool2DAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->padding, PaddingFrom(o.padding(), c));
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->stride_w = o.stride_w();
    a->stride_h = o.stride_h();
    a->filter_w = o.filter_width();
    a->filter_h = o.filter_height();
    return absl::OkStatus();
  }
  static Offset<fb::Pool2DOptions> Write(FlatBufferBuilder &b, const Pool2DAttrs &a) {
    return fb::CreatePool2DOptions(b, TflitePadding(a.padding), a.stride_w, a.stride_h, a.filter_w,
                                   a.filter_h, TfliteActivation(a.activation));
  }
};

template <>
struct Codec<fb::ReducerOptions> : CodecBase<ReduceAttrs> {
  static absl::Status Read(const fb::ReducerOptions &o, const OptionsReadContext &,
                           ReduceAttrs *a) {
    a->keep_dims = o.keep_dims();
    return absl::OkStatus();
  }
  static Offset<fb::ReducerOptions> Write(FlatBufferBuilder &b, const ReduceAttrs &a) {
    return fb::CreateReducerOptions(b, a.keep_dims);
  }
};

template <>
struct Codec<fb::SoftmaxOptions> : CodecBase<SoftmaxAttrs> {
  static absl::Status Read(const fb::SoftmaxOptions &o, const OptionsReadContext &,
                           SoftmaxAttrs *a) {
    a->beta = o.beta();
    return absl::OkStatus();
  }
  static Offset<fb::SoftmaxOptions> Write(FlatBufferBuilder &b, const SoftmaxAttrs &a) {
    return fb::CreateSoftmaxOptions(b, a.beta);
  }
};

template <>
struct Codec<fb::LeakyReluOptions> : CodecBase<LeakyReluAttrs> {
  static absl::Status Read(const fb::LeakyReluOptions &o, const OptionsReadContext &,
                           LeakyReluAttrs *a) {
    a->alpha = o.alpha();
    return absl::OkStatus();
  }
  static Offset<fb::LeakyReluOptions> Write(FlatBufferBuilder &b, const LeakyReluAttrs &a) {
    return fb::CreateLeakyReluOptions(b, a.alpha);
  }
};

template <>
struct Codec<fb::ReshapeOptions> : CodecBase<ReshapeAttrs> {
  static absl::Status Read(const fb::ReshapeOptions &o, const OptionsReadContext &c,
                           ReshapeAttrs *a) {
    a->new_shape = c.int32s(o.new_shape());
    return absl::OkStatus();
  }
  static Offset<fb::ReshapeOptions> Write(FlatBufferBuilder &b, const ReshapeAttrs &a) {
    // An absent new_shape stays absent: TFLite then takes the shape from the
    // second input.
    return fb::CreateReshapeOptions(b, a.new_shape.empty() ? 0 : b.CreateVector(a.new_shape));
  }
};

template <>
struct Codec<fb::SqueezeOptions> : CodecBase<SqueezeAttrs> {
  static absl::Status Read(const fb::SqueezeOptions &o, const OptionsReadContext &c,
                           SqueezeAttrs *a) {
    a->squeeze_dims = c.int32s(o.squeeze_dims());
    return absl::OkStatus();
  }
  static Offset<fb::SqueezeOptions> Write(FlatBufferBuilder &b, const SqueezeAttrs &a) {
    return fb::CreateSqueezeOptions(b, b.CreateVector(a.squeeze_dims));
  }
};

template <>
struct Codec<fb::ConcatenationOptions> : CodecBase<ConcatenationAttrs> {
  static absl::Status Read(const fb::ConcatenationOptions &o, const OptionsReadContext &c,
                           ConcatenationAttrs *a) {
    a->axis = o.axis();
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    return absl::OkStatus();
  }
  static Offset<fb::ConcatenationOptions> Write(FlatBufferBuilder &b, const ConcatenationAttrs &a) {
    return fb::CreateConcatenationOptions(b, a.axis, TfliteActivation(a.activation));
  }
};

// SPLIT, SPLIT_V: the number of outputs.
template <typename O>
struct SplitCodec : CodecBase<SplitAttrs> {
  static absl::Status Read(const O &o, const OptionsReadContext &, SplitAttrs *a) {
    a->num_splits = o.num_splits();
    return absl::OkStatus();
  }
};
template <>
struct Codec<fb::SplitOptions> : SplitCodec<fb::SplitOptions> {
  static auto Write(FlatBufferBuilder &b, const SplitAttrs &a) {
    return fb::CreateSplitOptions(b, a.num_splits);
  }
};
template <>
struct Codec<fb::SplitVOptions> : SplitCodec<fb::SplitVOptions> {
  static auto Write(FlatBufferBuilder &b, const SplitAttrs &a) {
    return fb::CreateSplitVOptions(b, a.num_splits);
  }
};

template <>
struct Codec<fb::StridedSliceOptions> : CodecBase<StridedSliceAttrs> {
  static absl::Status Read(const fb::StridedSliceOptions &o, const OptionsReadContext &,
                           StridedSliceAttrs *a) {
    a->begin_mask = o.begin_mask();
    a->end_mask = o.end_mask();
    a->ellipsis_mask = o.ellipsis_mask();
    a->new_axis_mask = o.new_axis_mask();
    a->shrink_axis_mask = o.shrink_axis_mask();
    a->offset = o.offset();
    return absl::OkStatus();
  }
  static Offset<fb::StridedSliceOptions> Write(FlatBufferBuilder &b, const StridedSliceAttrs &a) {
    return fb::CreateStridedSliceOptions(b, a.begin_mask, a.end_mask, a.ellipsis_mask,
                                         a.new_axis_mask, a.shrink_axis_mask, a.offset);
  }
};

template <>
struct Codec<fb::PackOptions> : CodecBase<PackAttrs> {
  static absl::Status Read(const fb::PackOptions &o, const OptionsReadContext &, PackAttrs *a) {
    a->values_count = o.values_count();
    a->axis = o.axis();
    return absl::OkStatus();
  }
  static Offset<fb::PackOptions> Write(FlatBufferBuilder &b, const PackAttrs &a) {
    return fb::CreatePackOptions(b, a.values_count, a.axis);
  }
};

template <>
struct Codec<fb::UnpackOptions> : CodecBase<PackAttrs> {
  static absl::Status Read(const fb::UnpackOptions &o, const OptionsReadContext &, PackAttrs *a) {
    a->values_count = o.num();
    a->axis = o.axis();
    return absl::OkStatus();
  }
  static Offset<fb::UnpackOptions> Write(FlatBufferBuilder &b, const PackAttrs &a) {
    return fb::CreateUnpackOptions(b, a.values_count, a.axis);
  }
};

template <>
struct Codec<fb::GatherOptions> : CodecBase<GatherAttrs> {
  static absl::Status Read(const fb::GatherOptions &o, const OptionsReadContext &, GatherAttrs *a) {
    a->axis = o.axis();
    a->batch_dims = o.batch_dims();
    return absl::OkStatus();
  }
  static Offset<fb::GatherOptions> Write(FlatBufferBuilder &b, const GatherAttrs &a) {
    return fb::CreateGatherOptions(b, a.axis, a.batch_dims);
  }
};

// RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR: corner alignment.
template <typename O>
struct ResizeCodec : CodecBase<ResizeAttrs> {
  static absl::Status Read(const O &o, const OptionsReadContext &, ResizeAttrs *a) {
    a->align_corners = o.align_corners();
    a->half_pixel_centers = o.half_pixel_centers();
    return absl::OkStatus();
  }
};
template <>
struct Codec<fb::ResizeNearestNeighborOptions> : ResizeCodec<fb::ResizeNearestNeighborOptions> {
  static auto Write(FlatBufferBuilder &b, const ResizeAttrs &a) {
    return fb::CreateResizeNearestNeighborOptions(b, a.align_corners, a.half_pixel_centers);
  }
};
template <>
struct Codec<fb::ResizeBilinearOptions> : ResizeCodec<fb::ResizeBilinearOptions> {
  static auto Write(FlatBufferBuilder &b, const ResizeAttrs &a) {
    return fb::CreateResizeBilinearOptions(b, a.align_corners, a.half_pixel_centers);
  }
};

// SPACE_TO_DEPTH, DEPTH_TO_SPACE: the block size.
template <typename O>
struct SpaceDepthCodec : CodecBase<SpaceDepthAttrs> {
  static absl::Status Read(const O &o, const OptionsReadContext &, SpaceDepthAttrs *a) {
    a->block_size = o.block_size();
    return absl::OkStatus();
  }
};
template <>
struct Codec<fb::SpaceToDepthOptions> : SpaceDepthCodec<fb::SpaceToDepthOptions> {
  static auto Write(FlatBufferBuilder &b, const SpaceDepthAttrs &a) {
    return fb::CreateSpaceToDepthOptions(b, a.block_size);
  }
};
template <>
struct Codec<fb::DepthToSpaceOptions> : SpaceDepthCodec<fb::DepthToSpaceOptions> {
  static auto Write(FlatBufferBuilder &b, const SpaceDepthAttrs &a) {
    return fb::CreateDepthToSpaceOptions(b, a.block_size);
  }
};

// ARG_MAX, ARG_MIN: the index type, INT64 when the options are absent (as
// TFLite).
template <typename O>
struct ArgMinMaxCodec {
  static ArgMinMaxAttrs Absent() { return ArgMinMaxAttrs{DType::kInt64}; }
  static absl::Status Read(const O &o, const OptionsReadContext &c, ArgMinMaxAttrs *a) {
    absl::StatusOr<DType> t = DTypeFromTflite(o.output_type());
    if (!t.ok()) return c.Error(absl::StrCat("output_type: ", t.status().message()));
    a->output_type = *t;
    return absl::OkStatus();
  }
};
template <>
struct Codec<fb::ArgMaxOptions> : ArgMinMaxCodec<fb::ArgMaxOptions> {
  static auto Write(FlatBufferBuilder &b, const ArgMinMaxAttrs &a) {
    return fb::CreateArgMaxOptions(b, TfliteType(a.output_type));
  }
};
template <>
struct Codec<fb::ArgMinOptions> : ArgMinMaxCodec<fb::ArgMinOptions> {
  static auto Write(FlatBufferBuilder &b, const ArgMinMaxAttrs &a) {
    return fb::CreateArgMinOptions(b, TfliteType(a.output_type));
  }
};

template <>
struct Codec<fb::SVDFOptions> : CodecBase<SvdfAttrs> {
  static absl::Status Read(const fb::SVDFOptions &o, const OptionsReadContext &c, SvdfAttrs *a) {
    a->rank = o.rank();
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->asymmetric_quantize_inputs = o.asymmetric_quantize_inputs();
    return absl::OkStatus();
  }
  static Offset<fb::SVDFOptions> Write(FlatBufferBuilder &b, const SvdfAttrs &a) {
    return fb::CreateSVDFOptions(b, a.rank, TfliteActivation(a.activation),
                                 a.asymmetric_quantize_inputs);
  }
};

template <>
struct Codec<fb::UnidirectionalSequenceLSTMOptions> : CodecBase<LstmAttrs> {
  static absl::Status Read(const fb::UnidirectionalSequenceLSTMOptions &o,
                           const OptionsReadContext &c, LstmAttrs *a) {
    MICA_ASSIGN_OR_RETURN(a->activation, ActivationFrom(o.fused_activation_function(), c));
    a->cell_clip = o.cell_clip();
    a->proj_clip = o.proj_clip();
    a->time_major = o.time_major();
    a->asymmetric_quantize_inputs = o.asymmetric_quantize_inputs();
    a->diagonal_recurrent_tensors = o.diagonal_recurrent_tensors();
    return absl::OkStatus();
  }
  static Offset<fb::UnidirectionalSequenceLSTMOptions> Write(FlatBufferBuilder &b,
                                                             const LstmAttrs &a) {
    return fb::CreateUnidirectionalSequenceLSTMOptions(
        b, TfliteActivation(a.activation), a.cell_clip, a.proj_clip, a.time_major,
        a.asymmetric_quantize_inputs, a.diagonal_recurrent_tensors);
  }
};

// Returns `fop`'s options as table O: null when absent, an error when of
// another type.
template <typename O>
absl::StatusOr<const O *> OptionsAs(const fb::Operator &fop, const OptionsReadContext &c) {
  const fb::BuiltinOptions type = fop.builtin_options_type();
  if (type == fb::BuiltinOptions_NONE) return nullptr;
  if (type != fb::BuiltinOptionsTraits<O>::enum_value) {
    return c.Error(
        absl::StrCat("builtin options have type ", static_cast<int>(type), ", expected ",
                     fb::EnumNameBuiltinOptions(fb::BuiltinOptionsTraits<O>::enum_value)));
  }
  return fop.template builtin_options_as<O>();
}

template <typename A, typename O>
absl::Status ReadAs(const fb::Operator &fop, const OptionsReadContext &c, Operator *op) {
  if constexpr (std::is_same_v<A, std::monostate>) {
    return absl::OkStatus();  // kinds without attributes ignore their options
  } else {
    A a = Codec<O>::Absent();
    MICA_ASSIGN_OR_RETURN(const O *o, OptionsAs<O>(fop, c));
    if (o != nullptr) MICA_RETURN_IF_ERROR(Codec<O>::Read(*o, c, &a));
    op->attrs = std::move(a);
    return absl::OkStatus();
  }
}

template <typename A, typename O>
BuiltinOptions WriteAs(FlatBufferBuilder &b, const Operator &op) {
  if constexpr (std::is_same_v<O, schema::NoOptions>) {
    return {};
  } else if constexpr (std::is_same_v<A, std::monostate>) {
    typename O::Builder empty(b);  // a table without fields (MaximumMinimumOptions, ...)
    return {fb::BuiltinOptionsTraits<O>::enum_value, empty.Finish().Union()};
  } else {
    return {fb::BuiltinOptionsTraits<O>::enum_value, Codec<O>::Write(b, op.Attrs<A>()).Union()};
  }
}

}  // namespace

absl::Status OptionsReadContext::Error(const std::string &what) const {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": ", where, what));
}

absl::Status OptionsReadContext::Unsupported(const std::string &what) const {
  return absl::UnimplementedError(absl::StrCat(origin, ": ", where, what));
}

absl::StatusOr<DType> DTypeFromTflite(int8_t t) {
  switch (t) {
    case fb::TensorType_FLOAT32: return DType::kFloat32;
    case fb::TensorType_FLOAT16: return DType::kFloat16;
    case fb::TensorType_INT32: return DType::kInt32;
    case fb::TensorType_UINT8: return DType::kUInt8;
    case fb::TensorType_INT64: return DType::kInt64;
    case fb::TensorType_BOOL: return DType::kBool;
    case fb::TensorType_INT16: return DType::kInt16;
    case fb::TensorType_INT8: return DType::kInt8;
    case fb::TensorType_INT4: return DType::kInt4;
    case fb::TensorType_UINT32: return DType::kUInt32;
    default: break;
  }
  const std::string name = t >= fb::TensorType_MIN && t <= fb::TensorType_MAX
                               ? fb::EnumNameTensorType(static_cast<fb::TensorType>(t))
                               : absl::StrCat("code ", t);
  return absl::UnimplementedError(absl::StrCat("element type ", name, " is not supported by mica"));
}

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
    case DType::kUInt32: return fb::TensorType_UINT32;
  }
  return fb::TensorType_FLOAT32;
}

absl::Status ReadBuiltinOptions(const fb::Operator &fop, const OptionsReadContext &ctx,
                                Operator *op) {
  switch (op->kind) {
#define MICA_OP(kind, name, code, options, attrs, ...) \
  case OpKind::k##kind:                                \
    return ReadAs<attrs, schema::options>(fop, ctx, op);
#include "mica/model/ops.inc"
#undef MICA_OP
  }
  return absl::OkStatus();
}

BuiltinOptions WriteBuiltinOptions(FlatBufferBuilder &b, const Operator &op) {
  switch (op.kind) {
#define MICA_OP(kind, name, code, options, attrs, ...) \
  case OpKind::k##kind:                                \
    return WriteAs<attrs, schema::options>(b, op);
#include "mica/model/ops.inc"
#undef MICA_OP
  }
  return {};
}

}  // namespace tflite
}  // namespace mica
