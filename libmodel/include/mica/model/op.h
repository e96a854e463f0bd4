// mica — operators of the graph IR: a kind, typed attributes, inputs and outputs.
//
// Each OpKind that has attributes has one struct below; `Operator::attrs` holds it in a
// std::variant. Operators mica does not know are kept as OpKind::kOpaque with their original
// name, so compatibility reports can name them instead of failing the load.
//
//   if (op.kind == OpKind::kConv2D) {
//     const auto& a = op.Attrs<Conv2DAttrs>();
//     int stride_h = a.stride_h;
//   }
#ifndef MICA_MODEL_OP_H_
#define MICA_MODEL_OP_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mica/model/tensor.h"

namespace mica {

// The operator kinds, one per row of mica/model/ops.inc (kOpaque: unknown to mica; see
// Operator::opaque_name). mica/model/op_info.h holds the facts of each kind.
enum class OpKind : uint16_t {
#define MICA_OP(kind, ...) k##kind,
#include "mica/model/ops.inc"
#undef MICA_OP
};

// Returns the canonical upper-case name (TFLite builtin spelling: "CONV_2D", "ADD", ...).
std::string_view OpKindName(OpKind k);

enum class Padding : uint8_t { kSame, kValid };
enum class Activation : uint8_t { kNone, kRelu, kReluN1To1, kRelu6, kTanh, kSignBit };

std::string_view PaddingName(Padding p);
std::string_view ActivationName(Activation a);

struct Conv2DAttrs {
  Padding padding = Padding::kValid;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  Activation activation = Activation::kNone;
};

struct DepthwiseConv2DAttrs {
  Padding padding = Padding::kValid;
  int32_t stride_w = 1, stride_h = 1;
  int32_t dilation_w = 1, dilation_h = 1;
  int32_t depth_multiplier = 1;
  Activation activation = Activation::kNone;
};

// Inputs: output_shape (int32 [4]), filter (OHWI), input, optional bias.
struct TransposeConvAttrs {
  Padding padding = Padding::kValid;
  int32_t stride_w = 1, stride_h = 1;
  Activation activation = Activation::kNone;
};

struct FullyConnectedAttrs {
  Activation activation = Activation::kNone;
  bool keep_num_dims = false;
};

struct BatchMatMulAttrs {
  bool adj_x = false, adj_y = false;
};

// Add, Sub, Mul, Div (fused activation).
struct ElementwiseAttrs {
  Activation activation = Activation::kNone;
};

struct Pool2DAttrs {
  Padding padding = Padding::kValid;
  int32_t stride_w = 1, stride_h = 1;
  int32_t filter_w = 1, filter_h = 1;
  Activation activation = Activation::kNone;
};

// Mean, Sum, ReduceMax: axes are the second (constant) input.
struct ReduceAttrs {
  bool keep_dims = false;
};

struct SoftmaxAttrs {
  float beta = 1.0f;
};

struct LeakyReluAttrs {
  float alpha = 0.2f;
};

// Reshape: the target shape is the optional second input; `new_shape` mirrors the file's option.
struct ReshapeAttrs {
  std::vector<int32_t> new_shape;
};

struct SqueezeAttrs {
  std::vector<int32_t> squeeze_dims;
};

struct ConcatenationAttrs {
  int32_t axis = 0;
  Activation activation = Activation::kNone;
};

// Split: inputs (axis, input); SplitV: inputs (input, size_splits, axis).
struct SplitAttrs {
  int32_t num_splits = 1;
};

struct StridedSliceAttrs {
  int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0,
          shrink_axis_mask = 0;
  bool offset = false;
};

struct PackAttrs {
  int32_t values_count = 0;
  int32_t axis = 0;
};

struct GatherAttrs {
  int32_t axis = 0;
  int32_t batch_dims = 0;
};

struct ResizeAttrs {
  bool align_corners = false;
  bool half_pixel_centers = false;
};

struct SpaceDepthAttrs {
  int32_t block_size = 1;
};

struct ArgMinMaxAttrs {
  DType output_type = DType::kInt32;
};

struct SvdfAttrs {
  int32_t rank = 1;
  Activation activation = Activation::kNone;
  bool asymmetric_quantize_inputs = false;
};

struct LstmAttrs {
  Activation activation = Activation::kTanh;
  float cell_clip = 0.0f;
  float proj_clip = 0.0f;
  bool time_major = false;
  bool asymmetric_quantize_inputs = false;
  bool diagonal_recurrent_tensors = false;
};

using OpAttrs =
    std::variant<std::monostate, Conv2DAttrs, DepthwiseConv2DAttrs, TransposeConvAttrs,
                 FullyConnectedAttrs, BatchMatMulAttrs, ElementwiseAttrs, Pool2DAttrs,
                 ReduceAttrs, SoftmaxAttrs, LeakyReluAttrs, ReshapeAttrs, SqueezeAttrs,
                 ConcatenationAttrs, SplitAttrs, StridedSliceAttrs, PackAttrs, GatherAttrs,
                 ResizeAttrs, SpaceDepthAttrs, ArgMinMaxAttrs, SvdfAttrs, LstmAttrs>;

// Tensor index meaning "optional input not given" (TFLite's -1).
inline constexpr int32_t kNoTensor = -1;

struct Operator {
  OpKind kind = OpKind::kOpaque;
  std::string opaque_name;      // for kOpaque: the builtin or custom op name from the file
  std::vector<uint8_t> opaque_options;  // for kOpaque custom ops: raw custom options
  std::string opaque_reason;  // for kOpaque: why mica does not model it (empty: not known)
  // For kOpaque: the file named it by a custom code, not a builtin code. A custom operator may
  // carry a builtin's name ("HARD_SWISH") with other semantics; writers keep it custom.
  bool opaque_custom = false;
  int32_t version = 1;          // operator version recorded in the file
  std::vector<int32_t> inputs;  // tensor indices into the subgraph; kNoTensor when absent
  std::vector<int32_t> outputs;
  std::vector<int32_t> intermediates;  // TFLite intermediates (LSTM int8 uses them)
  OpAttrs attrs;

  // Returns the attributes as `T`; the caller must know the kind holds a `T`.
  template <typename T>
  const T& Attrs() const { return std::get<T>(attrs); }
  template <typename T>
  T& MutableAttrs() { return std::get<T>(attrs); }
  // Returns OpKindName(kind), or opaque_name for kOpaque.
  std::string_view name() const;
};

}  // namespace mica

#endif  // MICA_MODEL_OP_H_
