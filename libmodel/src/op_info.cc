// The operator-facts table (mica/model/ops.inc) as data, and the lookups over it.
#include "mica/model/op_info.h"

#include <array>

#include "validate.h"

namespace mica {
namespace {

// Rows are in OpKind order, so a kind's row is at its enumerator value.
constexpr std::array<OpInfo, kNumOpKinds> kOpTable = {{
// clang-format off
#define MICA_OP(kind, name, code, options, attrs, category, min_in, max_in, min_out, max_out,  \
                optional, weights, bias, params, state, traits, onnx, executorch)              \
  OpInfo{OpKind::k##kind, name, code, internal::kAttrIndex<attrs>, OpCategory::category,       \
         min_in, max_in, min_out, max_out, optional, weights, bias, params, state, traits,     \
         onnx, executorch},
// clang-format on
#include "mica/model/ops.inc"
#undef MICA_OP
}};

constexpr bool RowsInKindOrder() {
  for (size_t i = 0; i < kOpTable.size(); ++i) {
    if (static_cast<size_t>(kOpTable[i].kind) != i) return false;
  }
  return true;
}
static_assert(RowsInKindOrder(), "ops.inc rows must be in OpKind order");

}  // namespace

std::string_view OpCategoryName(OpCategory c) {
  switch (c) {
    case OpCategory::kUnknown: return "unknown";
    case OpCategory::kConvLike: return "conv-like";
    case OpCategory::kElementwiseBinary: return "elementwise-binary";
    case OpCategory::kElementwiseUnary: return "elementwise-unary";
    case OpCategory::kActivation: return "activation";
    case OpCategory::kPooling: return "pooling";
    case OpCategory::kReduction: return "reduction";
    case OpCategory::kDataMovement: return "data-movement";
    case OpCategory::kSpatial: return "spatial";
    case OpCategory::kQuantization: return "quantization";
    case OpCategory::kRecurrent: return "recurrent";
  }
  return "unknown";
}

const OpInfo& GetOpInfo(OpKind kind) {
  return kOpTable[IsKnownOpKind(kind) ? static_cast<size_t>(kind) : 0];
}

bool HasOpTrait(OpKind kind, OpTrait t) {
  return IsKnownOpKind(kind) && (GetOpInfo(kind).traits & t) != 0;
}

OpCategory GetOpCategory(OpKind kind) {
  return IsKnownOpKind(kind) ? GetOpInfo(kind).category : OpCategory::kUnknown;
}

bool IsOptionalInput(OpKind kind, size_t i) {
  const OperandMask optional = GetOpInfo(kind).optional_inputs;
  if (i >= 32) return optional == kAllOperands;
  return (optional & OperandBit(static_cast<int>(i))) != 0;
}

int DataInput(OpKind kind) {
  const OpInfo& info = GetOpInfo(kind);
  const OperandMask roles = info.weights | info.bias | info.params;
  for (int i = 0; i < 32; ++i) {
    if ((roles & OperandBit(i)) == 0) return i;
  }
  return 0;
}

std::optional<OpKind> OpKindFromName(std::string_view name) {
  for (const OpInfo& info : kOpTable) {
    if (info.name == name) return info.kind;
  }
  return std::nullopt;
}

OpKind OpKindFromTfliteBuiltin(int32_t code) {
  if (code < 0) return OpKind::kOpaque;
  for (const OpInfo& info : kOpTable) {
    if (info.tflite_code == code) return info.kind;
  }
  return OpKind::kOpaque;
}

}  // namespace mica
