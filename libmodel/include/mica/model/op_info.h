// mica — facts about each operator kind, from the one table in
// mica/model/ops.inc.
//
// Every part of mica that needs to know what an operator is (its name, TFLite
// code, arity, which operands are weights, whether it only moves data) asks
// here instead of keeping its own list, so adding an operator means adding one
// table row.
//
//   const OpInfo& info = GetOpInfo(op.kind);
//   if (info.category == OpCategory::kDataMovement) { ... }
//   if (IsOptionalInput(op.kind, 2)) { ... }        // CONV_2D's bias
//   OpKind k = OpKindFromTfliteBuiltin(3);          // OpKind::kConv2D
#ifndef MICA_MODEL_OP_INFO_H_
#define MICA_MODEL_OP_INFO_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "mica/model/op.h"

namespace mica {

// What an operator does, coarsely.
enum class OpCategory : uint8_t {
  kUnknown,            // OPAQUE
  kConvLike,           // convolutions and matrix products: MACs over weights
  kElementwiseBinary,  // two broadcast operands, one output (ADD, MAXIMUM, ...)
  kElementwiseUnary,   // one operand, elementwise math (EXP, ABS, ...)
  kActivation,         // activation functions (RELU, LOGISTIC, SOFTMAX, PRELU, ...)
  kPooling,            // windowed pooling (MAX_POOL_2D, AVERAGE_POOL_2D)
  kReduction,          // reduce along axes (MEAN, SUM, REDUCE_MAX, ARG_MAX, ...)
  kDataMovement,       // moves elements without arithmetic, for any element type
                       // (RESHAPE, TRANSPOSE, PAD, CONCATENATION, SLICE, GATHER,
                       // PACK, ...)
  kSpatial,            // resampling and block rearrangement of images (RESIZE_*,
                       // SPACE_TO_DEPTH)
  kQuantization,       // QUANTIZE, DEQUANTIZE
  kRecurrent,          // operators with state over time steps (SVDF, LSTM)
};

// Returns the category's lower-case name ("data-movement").
std::string_view OpCategoryName(OpCategory c);

// Bits of OpInfo::traits.
enum OpTrait : uint32_t {
  // Output 0 has input 0's shape (elementwise unary ops, most activations,
  // (de)quantize).
  kSameShape = 1u << 0,
  // Needs exp/log/sqrt-class math (a LUT or a polynomial in integer kernels).
  kTranscendental = 1u << 1,
  // Moves data as contiguous runs ("rows") of the input: the cost is in bytes
  // and rows.
  kCopiesRows = 1u << 2,
  // Places each output element by index arithmetic (a permutation or a
  // nearest-sample
  // gather): the cost is per element. TRANSPOSE is data movement that does
  // this.
  kRemapsElements = 1u << 3,
  // Elementwise math or activation: output element i depends only on the (broadcast)
  // input elements at i. QUANTIZE and DEQUANTIZE, elementwise too, are conversions instead
  // (category kQuantization); SOFTMAX normalizes whole rows.
  kElementwise = 1u << 4,
};

// A set of operand indices (bit i: input i). Operands past 31 are in no mask
// but kAllOperands.
using OperandMask = uint32_t;
inline constexpr OperandMask kAllOperands = ~OperandMask{0};
constexpr OperandMask OperandBit(int i) { return OperandMask{1} << i; }
constexpr OperandMask OperandRange(int first, int last) {
  return ((OperandMask{1} << (last - first + 1)) - 1) << first;
}
// UNIDIRECTIONAL_SEQUENCE_LSTM's optional inputs: all but the input (0), the
// input-to-{forget,cell,output} (2-4) and recurrent-to-{forget,cell,output}
// (6-8) weights, the {forget,cell,output} gate biases (13-15) and the output
// and cell states (18, 19).
inline constexpr OperandMask kLstmOptional =
    OperandRange(0, 23) & ~(OperandBit(0) | OperandRange(2, 4) | OperandRange(6, 8) |
                            OperandRange(13, 15) | OperandBit(18) | OperandBit(19));

// The facts of one operator kind: one row of mica/model/ops.inc.
struct OpInfo {
  OpKind kind;
  std::string_view name;  // TFLite builtin spelling ("CONV_2D")
  int32_t tflite_code;    // TFLite BuiltinOperator, -1 when none
  size_t attrs_index;     // OpAttrs alternative (0: std::monostate, no attributes)
  OpCategory category;
  int min_inputs, max_inputs;  // max -1: unbounded
  int min_outputs, max_outputs;
  OperandMask optional_inputs;  // inputs that may be absent (kNoTensor)
  OperandMask weights;          // constant weight operands
  OperandMask bias;             // bias operands
  OperandMask params;           // constant integer operands: shapes, axes, paddings, sizes
  OperandMask state;            // variable state tensors
  uint32_t traits;              // OpTrait bits
  std::string_view onnx;        // corresponding ONNX operator, "" when none
  std::string_view executorch;  // corresponding ExecuTorch Edge operator, "" when none
};

// Number of OpKind enumerators (table rows).
inline constexpr size_t kNumOpKinds = 0
#define MICA_OP(...) +1
#include "mica/model/ops.inc"
#undef MICA_OP
    ;

// Returns true when `kind` is one of the OpKind enumerators.
constexpr bool IsKnownOpKind(OpKind kind) { return static_cast<size_t>(kind) < kNumOpKinds; }

// Returns the facts of `kind`; `kind` must be known (IsKnownOpKind).
const OpInfo &GetOpInfo(OpKind kind);

// Returns true when operators of `kind` have the trait bit `t` (false for
// unknown kinds).
bool HasOpTrait(OpKind kind, OpTrait t);

// Returns the category of `kind` (kUnknown for kOpaque and unknown kinds).
OpCategory GetOpCategory(OpKind kind);

// Returns true when input `i` of an operator of `kind` may be absent
// (kNoTensor).
bool IsOptionalInput(OpKind kind, size_t i);

// Returns the input that carries the data (activation) an operator of `kind`
// works on: the first input that is not weights, bias or a parameter
// (TRANSPOSE_CONV: 2, SPLIT: 1).
int DataInput(OpKind kind);

// Returns the kind named `name` (the canonical spelling, "CONV_2D"), or
// nullopt.
std::optional<OpKind> OpKindFromName(std::string_view name);

// Returns the kind of TFLite builtin `code`, or OpKind::kOpaque when mica has
// none for it.
OpKind OpKindFromTfliteBuiltin(int32_t code);

}  // namespace mica

#endif  // MICA_MODEL_OP_INFO_H_
