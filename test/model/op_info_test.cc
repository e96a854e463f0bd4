// The operator-facts table (mica/model/ops.inc): its rows are consistent with
// each other, with TFLite's own enum, and with what ValidateGraph accepts.
#include "mica/model/op_info.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "mica/model/load.h"
#include "testing/catch.h"
#include "tflite_schema_generated.h"

namespace mica {
namespace {

namespace tfl = ::mica::tflite_fb;

std::vector<OpKind> AllKinds() {
  std::vector<OpKind> kinds;
  for (size_t k = 0; k < kNumOpKinds; ++k) kinds.push_back(static_cast<OpKind>(k));
  return kinds;
}

// Returns OpAttrs holding a default-constructed alternative `index`.
template <size_t I = 0>
OpAttrs AttrsWithIndex(size_t index) {
  if constexpr (I < std::variant_size_v<OpAttrs>) {
    if (index == I) return OpAttrs(std::in_place_index<I>);
    return AttrsWithIndex<I + 1>(index);
  } else {
    return OpAttrs();
  }
}

// One operator of `kind` with `n_in` inputs (input `absent` is kNoTensor) and
// `n_out` outputs.
Graph OneOp(OpKind kind, int n_in, int n_out, int absent = -1) {
  Graph g;
  g.source_path = "table.tflite";
  g.subgraphs.emplace_back();
  Subgraph &sg = g.main();
  Operator op;
  op.kind = kind;
  op.attrs = AttrsWithIndex(GetOpInfo(kind).attrs_index);
  if (kind == OpKind::kOpaque) op.opaque_name = "SOMETHING";
  for (int i = 0; i < n_in; ++i) {
    if (i == absent) {
      op.inputs.push_back(kNoTensor);
      continue;
    }
    Tensor t;
    t.name = "in" + std::to_string(i);
    t.shape = {1, 4, 4, 4};
    op.inputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.inputs.push_back(op.inputs.back());
    sg.tensors.push_back(t);
  }
  for (int i = 0; i < n_out; ++i) {
    Tensor t;
    t.name = "out" + std::to_string(i);
    t.shape = {1, 4, 4, 4};
    op.outputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.outputs.push_back(op.outputs.back());
    sg.tensors.push_back(t);
  }
  sg.ops.push_back(std::move(op));
  return g;
}

std::string Message(const Graph &g) {
  const absl::Status s = ValidateGraph(g);
  return s.ok() ? "" : std::string(s.message());
}

bool Contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("Op table rows are in OpKind order with unique canonical names", "[op_info]") {
  std::set<std::string_view> names;
  for (OpKind k : AllKinds()) {
    const OpInfo &info = GetOpInfo(k);
    CAPTURE(info.name);
    CHECK(info.kind == k);
    CHECK(OpKindName(k) == info.name);
    CHECK(names.insert(info.name).second);
    REQUIRE(!info.name.empty());
    for (char c : info.name) {
      CHECK((std::isupper(static_cast<unsigned char>(c)) ||
             std::isdigit(static_cast<unsigned char>(c)) || c == '_'));
    }
    REQUIRE(OpKindFromName(info.name).has_value());
    CHECK(*OpKindFromName(info.name) == k);
  }
  CHECK_FALSE(OpKindFromName("NOT_AN_OP").has_value());
  CHECK_FALSE(IsKnownOpKind(static_cast<OpKind>(kNumOpKinds)));
  CHECK(OpKindName(static_cast<OpKind>(kNumOpKinds)) == "UNKNOWN");
}

TEST_CASE("Every TFLite builtin code in the op table maps back to its kind", "[op_info]") {
  std::set<int32_t> codes;
  for (OpKind k : AllKinds()) {
    const OpInfo &info = GetOpInfo(k);
    CAPTURE(info.name);
    if (k == OpKind::kOpaque) {
      CHECK(info.tflite_code == -1);
      continue;
    }
    REQUIRE(info.tflite_code >= 0);
    CHECK(codes.insert(info.tflite_code).second);
    CHECK(OpKindFromTfliteBuiltin(info.tflite_code) == k);
    // mica's canonical name is TFLite's name for the code: an opaque operator
    // carrying the name is written with the code (through the writer's own list
    // of builtin names).
    Graph g = OneOp(OpKind::kOpaque, 1, 1);
    g.main().ops[0].opaque_name = std::string(info.name);
    absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(g);
    REQUIRE(bytes.ok());
    const tfl::Model *model = tfl::GetModel(bytes->data());
    REQUIRE(model->operator_codes()->size() == 1);
    CHECK(model->operator_codes()->Get(0)->builtin_code() == info.tflite_code);
  }
  CHECK(OpKindFromTfliteBuiltin(-1) == OpKind::kOpaque);
  CHECK(OpKindFromTfliteBuiltin(32) == OpKind::kOpaque);  // CUSTOM
  CHECK(OpKindFromTfliteBuiltin(100000) == OpKind::kOpaque);
}

TEST_CASE("ValidateGraph accepts exactly the table's input and output counts", "[op_info]") {
  for (OpKind k : AllKinds()) {
    const OpInfo &info = GetOpInfo(k);
    CAPTURE(info.name);
    const int in_hi = info.max_inputs < 0 ? info.min_inputs + 3 : info.max_inputs + 1;
    for (int n = std::max(0, info.min_inputs - 1); n <= in_hi; ++n) {
      CAPTURE(n);
      const bool ok = n >= info.min_inputs && (info.max_inputs < 0 || n <= info.max_inputs);
      const std::string msg = Message(OneOp(k, n, std::max(info.min_outputs, 1)));
      CHECK_FALSE(Contains(msg, "wrong type"));
      CHECK(Contains(msg, " inputs; expects ") == !ok);
    }
    const int out_hi = info.max_outputs < 0 ? info.min_outputs + 3 : info.max_outputs + 1;
    for (int n = std::max(0, info.min_outputs - 1); n <= out_hi; ++n) {
      CAPTURE(n);
      const bool ok = n >= info.min_outputs && (info.max_outputs < 0 || n <= info.max_outputs);
      const std::string msg = Message(OneOp(k, info.min_inputs, n));
      CHECK(Contains(msg, " outputs; expects ") == !ok);
    }
  }
}

TEST_CASE("ValidateGraph lets exactly the table's optional inputs be absent", "[op_info]") {
  for (OpKind k : AllKinds()) {
    const OpInfo &info = GetOpInfo(k);
    CAPTURE(info.name);
    const int n = info.max_inputs < 0 ? info.min_inputs + 2 : info.max_inputs;
    for (int i = 0; i < n; ++i) {
      CAPTURE(i);
      const std::string msg = Message(OneOp(k, n, std::max(info.min_outputs, 1), i));
      CHECK(Contains(msg, "required input " + std::to_string(i) + " is absent") ==
            !IsOptionalInput(k, static_cast<size_t>(i)));
    }
  }
}

TEST_CASE("Op table operand roles and traits are consistent", "[op_info]") {
  for (OpKind k : AllKinds()) {
    const OpInfo &info = GetOpInfo(k);
    CAPTURE(info.name);
    CHECK(info.min_inputs >= 0);
    CHECK((info.max_inputs < 0 || info.max_inputs >= info.min_inputs));
    CHECK((info.max_outputs < 0 || info.max_outputs >= info.min_outputs));
    CHECK(info.attrs_index < std::variant_size_v<OpAttrs>);
    if (k == OpKind::kOpaque) continue;
    // Roles name existing operands, and no operand has two roles.
    const OperandMask in_range =
        info.max_inputs < 0 ? kAllOperands : OperandRange(0, info.max_inputs - 1);
    const OperandMask roles[] = {info.weights, info.bias, info.params, info.state};
    OperandMask seen = 0;
    for (OperandMask r : roles) {
      CHECK((r & ~in_range) == 0);
      CHECK((r & seen) == 0);
      seen |= r;
    }
    CHECK((info.optional_inputs & ~in_range) == 0);
    // Required inputs come first: an optional input never precedes the minimum
    // count.
    CHECK((info.optional_inputs & OperandRange(0, info.min_inputs - 1) &
           ~(info.bias | info.weights | info.state)) == 0);
    // The data input is a real, required operand.
    CHECK(DataInput(k) < info.min_inputs);
    CHECK_FALSE(IsOptionalInput(k, static_cast<size_t>(DataInput(k))));

    const bool rows = HasOpTrait(k, kCopiesRows);
    const bool remaps = HasOpTrait(k, kRemapsElements);
    CHECK_FALSE((rows && remaps));
    if (info.category == OpCategory::kDataMovement) CHECK((rows || remaps));
    if (rows) CHECK(info.category == OpCategory::kDataMovement);
    if (remaps) {
      CHECK((info.category == OpCategory::kDataMovement || info.category == OpCategory::kSpatial));
    }
    if (HasOpTrait(k, kSameShape)) {
      CHECK(info.max_inputs == 1);
      CHECK(info.max_outputs == 1);
    }
    if (HasOpTrait(k, kElementwise)) {
      CHECK((info.category == OpCategory::kElementwiseBinary ||
             info.category == OpCategory::kElementwiseUnary ||
             info.category == OpCategory::kActivation));
      CHECK(info.max_outputs == 1);
    }
    if (info.category == OpCategory::kElementwiseUnary) CHECK(HasOpTrait(k, kElementwise));
    if (info.category == OpCategory::kElementwiseBinary) {
      CHECK(HasOpTrait(k, kElementwise));
      CHECK(info.min_inputs == 2);
      CHECK(info.max_inputs == 2);
      CHECK(info.max_outputs == 1);
    }
    CHECK(OpCategoryName(info.category) != "unknown");
  }
}

TEST_CASE(
    "Data movement: the runtime's set and the Cortex-M row-copy set "
    "differ by TRANSPOSE",
    "[op_info]") {
  // The runtime lowers every kDataMovement op to type-agnostic byte kernels;
  // the Cortex-M model costs kCopiesRows ops per byte and row, and TRANSPOSE
  // (kRemapsElements) per element.
  std::set<std::string_view> moves, rows;
  for (OpKind k : AllKinds()) {
    if (GetOpCategory(k) == OpCategory::kDataMovement) moves.insert(OpKindName(k));
    if (HasOpTrait(k, kCopiesRows)) rows.insert(OpKindName(k));
  }
  const std::set<std::string_view> want_rows = {
      "RESHAPE", "SQUEEZE",       "EXPAND_DIMS", "PAD",    "PADV2", "CONCATENATION", "SPLIT",
      "SPLIT_V", "STRIDED_SLICE", "SLICE",       "GATHER", "PACK",  "UNPACK"};
  std::set<std::string_view> want_moves = want_rows;
  want_moves.insert("TRANSPOSE");
  CHECK(rows == want_rows);
  CHECK(moves == want_moves);
}

TEST_CASE("Elementwise ops: one operand, or two that broadcast", "[op_info]") {
  std::set<std::string_view> unary, binary;
  for (OpKind k : AllKinds()) {
    if (!HasOpTrait(k, kElementwise)) continue;
    (GetOpInfo(k).max_inputs == 1 ? unary : binary).insert(OpKindName(k));
  }
  const std::set<std::string_view> want_unary = {
      "LOGISTIC",   "TANH", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "HARD_SWISH",
      "EXP",        "LOG",  "SQRT", "RSQRT", "ABS",          "NEG"};
  const std::set<std::string_view> want_binary = {
      "ADD", "SUB", "MUL", "DIV", "MAXIMUM", "MINIMUM", "SQUARED_DIFFERENCE", "PRELU"};
  CHECK(unary == want_unary);
  CHECK(binary == want_binary);
}

TEST_CASE("Op table masks and lookups", "[op_info]") {
  CHECK(OperandRange(1, 3) == 0b1110u);
  CHECK(OperandBit(0) == 1u);
  CHECK(IsOptionalInput(OpKind::kConv2D, 2));
  CHECK_FALSE(IsOptionalInput(OpKind::kConv2D, 1));
  CHECK(IsOptionalInput(OpKind::kOpaque, 40));
  CHECK_FALSE(IsOptionalInput(OpKind::kConcatenation, 40));
  CHECK(DataInput(OpKind::kTransposeConv) == 2);
  CHECK(DataInput(OpKind::kSplit) == 1);
  CHECK(DataInput(OpKind::kConv2D) == 0);
  CHECK(GetOpCategory(static_cast<OpKind>(kNumOpKinds + 3)) == OpCategory::kUnknown);
  CHECK_FALSE(HasOpTrait(static_cast<OpKind>(kNumOpKinds + 3), kSameShape));
  CHECK(OpCategoryName(OpCategory::kDataMovement) == "data-movement");
}

}  // namespace
}  // namespace mica
