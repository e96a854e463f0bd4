// mica — ONNX → mica IR conversion (private to libmodel).
//
// OnnxImporter walks a parsed ModelProto's graph in node order and emits mica operators in
// TFLite conventions: activations channels-last, conv filters OHWI, depthwise filters 1HW(C*M),
// fully-connected weights [out, in].
//
// Layout tracking. Every ONNX value is described by a `Value`: its logical (ONNX) shape and,
// once materialised, the mica tensor holding it. A rank-4 value may be held "nhwc": the mica
// tensor holds the logical NCHW value permuted to NHWC. Convolutions, pools and batch norm
// produce nhwc values; ops whose semantics depend on element order (Reshape, Flatten, Squeeze,
// Unsqueeze, MatMul, opset<13 Softmax) first restore ONNX order with a TRANSPOSE, or use the
// nhwc tensor directly when the permutation does not move any element (e.g. H = W = 1, as
// after a global pool). Axis-carrying ops (Concat, Transpose, Pad, Softmax) remap their axes.
//
// Folding. BatchNormalization directly after a Conv/ConvTranspose/Gemm/MatMul whose output has
// no other consumer is folded into that op's weights and bias; a Relu/Clip(0,6)/Clip(-1,1)
// directly after Conv/Gemm/Add/Sub/Mul under the same condition becomes the op's fused
// activation. Shape arithmetic on constants (Shape, Gather, Concat, Unsqueeze, Cast, ...)
// is evaluated at import time.
//
// Expressing ONNX in TFLite ops. Conv/pool pads that are not exactly TFLite SAME or VALID get
// an explicit PAD (-lowest for MaxPool); AveragePool excluding such pads becomes PAD + VALID
// AVERAGE_POOL_2D + MUL by a per-position count rescale. Depthwise convs (group == C_in) map to
// DEPTHWISE_CONV_2D; other groups to SPLIT + one CONV_2D per group + CONCATENATION. A Flatten
// of an NHWC activation inserts TRANSPOSE back to NCHW before the RESHAPE (rather than permuting
// the next Gemm's weights), so the IR computes exactly ONNX's values whatever follows.
//
// Unknown operators are rejected (Unimplemented) naming the node and op type: importing ONNX
// is a conversion, and the shape of an unknown op's output cannot be tracked. So are 1-D and
// 3-D convolution/pooling, non-constant padding modes and non-float activations.
#ifndef MICA_MODEL_ONNX_ONNX_IMPORTER_H_
#define MICA_MODEL_ONNX_ONNX_IMPORTER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mica/model/graph.h"

namespace mica {
namespace onnx_import {

// Largest element count of any tensor the importer creates (activations or constants).
inline constexpr int64_t kMaxElements = int64_t{1} << 31;
// Largest single dimension (mica's tensor shapes are int32).
inline constexpr int64_t kMaxDim = 2147483647;
// Largest total element count of constants the importer computes itself (folding): 2^24
// elements (at most 128 MB of int64 values, plus their float copy), far above the shape
// arithmetic and fill constants of any model that fits a microcontroller, and small enough that
// a tiny hostile file (ConstantOfShape with a huge shape) cannot exhaust memory.
inline constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

// One ONNX value (graph input, initializer or node output).
struct Value {
  std::vector<int64_t> shape;  // logical ONNX dims
  int32_t tensor = kNoTensor;  // mica tensor once materialised
  bool nhwc = false;           // tensor holds the rank-4 NCHW value in NHWC order
  // Constants (initializers, Constant nodes, folded shape arithmetic), in logical order.
  bool is_const = false;
  bool is_int = false;  // integer constant: `ints`; float constant: `floats`
  std::vector<float> floats;
  std::vector<int64_t> ints;
  // An int8/uint8/int16/int32/bool constant keeps its little-endian bytes in `packed` (element
  // type `packed_dtype`) and `ints` stays empty until a folding converter calls Unpack(): so a
  // model's integer weights take their file size in memory, not 8x (int64) of it, and reach
  // the graph (opaque operators' operands) in their own type.
  // `packed` views the ModelProto's raw_data (alive for the whole import) or `packed_owner`.
  std::string_view packed;
  std::shared_ptr<const std::string> packed_owner;
  DType packed_dtype = DType::kInt64;

  int64_t num_elements() const;
  bool is_packed() const { return packed_dtype != DType::kInt64; }
  // Widens `packed` into `ints` (no-op when not packed).
  void Unpack();
  size_t rank() const { return shape.size(); }
};

// Context of the node being converted, for attributes and error messages.
class NodeCtx {
 public:
  NodeCtx(const onnx::NodeProto& node, int index, const std::string& origin);

  const onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  // Returns "node 'name' (OpType #index)".
  const std::string& label() const { return label_; }

  // Returns an error of `code` whose message names the file and this node.
  absl::Status Error(absl::StatusCode code, const std::string& msg) const;
  absl::Status Invalid(const std::string& msg) const {
    return Error(absl::StatusCode::kInvalidArgument, msg);
  }
  absl::Status Unsupported(const std::string& msg) const {
    return Error(absl::StatusCode::kUnimplemented, msg);
  }

  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  absl::StatusOr<int64_t> Int(const std::string& name, int64_t fallback) const;
  absl::StatusOr<float> Float(const std::string& name, float fallback) const;
  absl::StatusOr<std::string> String(const std::string& name, const std::string& fallback) const;
  // Returns the INTS attribute, or `fallback` when absent.
  absl::StatusOr<std::vector<int64_t>> Ints(const std::string& name,
                                            std::vector<int64_t> fallback) const;
  absl::StatusOr<std::vector<float>> Floats(const std::string& name) const;
  const onnx::AttributeProto* Find(const std::string& name) const;

  // Returns the number of inputs, ignoring trailing empty names (omitted optionals).
  int num_inputs() const;
  // Returns true when input `i` is given (present and non-empty).
  bool HasInput(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }

 private:
  const onnx::NodeProto& node_;
  std::string origin_;
  std::string label_;
};

// Builds a mica Graph from an ONNX ModelProto.
class OnnxImporter {
 public:
  OnnxImporter(const onnx::ModelProto& model, std::string origin);

  absl::StatusOr<Graph> Import();

 private:
  // --- setup ---
  absl::Status ReadOpset();
  absl::Status ReadInitializers();
  absl::Status ReadInputs();
  absl::Status ReadOutputs();
  absl::Status ConvertNode(const NodeCtx& n);
  // Converts the node, or loads it as an opaque operator (with `reason`, output shapes from
  // the model's value_info where it declares them) when mica does not support it, so `check`
  // reports it instead of refusing the file. Invalid models stay errors.
  absl::Status ConvertOrOpaque(const NodeCtx& n);
  absl::Status AddOpaque(const NodeCtx& n, const std::string& reason);

  // --- values ---
  // Returns the value named by input `i` of the node; errors name the node when it is absent
  // or not produced by any earlier node, initializer or graph input.
  absl::StatusOr<Value*> In(const NodeCtx& n, int i);
  // Like In() but the value must be a float (or integer when `allow_int`) constant.
  absl::StatusOr<Value*> ConstIn(const NodeCtx& n, int i, const std::string& what);
  // Returns constant integer input `i` (or an error naming `what`).
  absl::StatusOr<std::vector<int64_t>> ConstInts(const NodeCtx& n, int i, const std::string& what);
  // Defines output `i` of the node.
  absl::Status SetOut(const NodeCtx& n, int i, Value v);
  // Number of consumers of a value (node inputs plus graph outputs).
  int Uses(const std::string& name) const;

  // --- tensors ---
  // Adds a float32 activation tensor with the given physical shape.
  absl::StatusOr<int32_t> AddTensor(const NodeCtx* n, const std::string& name,
                                    const std::vector<int64_t>& shape,
                                    DType dtype = DType::kFloat32);
  // Adds a float constant whose bytes are written when the graph is finished (so folding can
  // still edit them); returns the tensor index.
  absl::StatusOr<int32_t> AddFloatConst(const NodeCtx* n, const std::string& name,
                                        const std::vector<int64_t>& shape,
                                        std::vector<float> data);
  int32_t AddInt32Const(const std::string& name, const std::vector<int64_t>& shape,
                        const std::vector<int32_t>& data);
  // Adds a constant tensor of `dtype` holding `bytes` (little-endian); returns its index.
  int32_t AddConst(const std::string& name, const std::vector<int64_t>& shape, DType dtype,
                   std::vector<uint8_t> bytes);
  int32_t AddOp(OpKind kind, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                OpAttrs attrs = {});
  std::string UniqueName(const std::string& base);

  // --- layout ---
  // Returns a tensor holding `v` in NHWC order (rank 4 only); inserts a TRANSPOSE for plain
  // activations and permutes constant data.
  absl::StatusOr<int32_t> AsNhwc(const NodeCtx& n, const std::string& name, Value& v);
  // Returns a tensor holding `v` in logical ONNX order and shape.
  absl::StatusOr<int32_t> AsPlain(const NodeCtx& n, const std::string& name, Value& v);
  // Returns a tensor whose memory order is `v`'s logical order (its shape may be the NHWC
  // one): for reshape-like consumers that only see the flat element sequence.
  absl::StatusOr<int32_t> AsMemoryOrder(const NodeCtx& n, const std::string& name, Value& v);
  // Physical (mica) shape of a value.
  static std::vector<int64_t> PhysShape(const Value& v);

  // --- helpers used by several converters ---
  absl::StatusOr<int32_t> InsertPad(const NodeCtx& n, int32_t src,
                                    const std::vector<int64_t>& phys_shape,
                                    const std::vector<std::pair<int64_t, int64_t>>& pads,
                                    float value, std::vector<int64_t>* out_shape);
  absl::StatusOr<int32_t> InsertReshape(const NodeCtx& n, int32_t src,
                                        const std::vector<int64_t>& shape,
                                        const std::string& name);
  // Emits a unary op (same shape and layout as the input).
  absl::Status Unary(const NodeCtx& n, OpKind kind, OpAttrs attrs = {});
  // Tries to fuse `act` into the op producing input 0; returns true on success.
  absl::StatusOr<bool> TryFuseActivation(const NodeCtx& n, Activation act);

  // --- converters (onnx_ops.cc) ---
  absl::Status ConvertConv(const NodeCtx& n);
  absl::Status ConvertConvTranspose(const NodeCtx& n);
  absl::Status ConvertGemm(const NodeCtx& n);
  absl::Status ConvertMatMul(const NodeCtx& n);
  absl::Status ConvertBinary(const NodeCtx& n, OpKind kind);
  absl::Status ConvertClip(const NodeCtx& n);
  absl::Status ConvertRelu(const NodeCtx& n);
  absl::Status ConvertPool(const NodeCtx& n, bool is_max);
  absl::Status ConvertGlobalPool(const NodeCtx& n, bool is_max);
  absl::Status ConvertBatchNorm(const NodeCtx& n);
  absl::Status ConvertFlatten(const NodeCtx& n);
  absl::Status ConvertReshape(const NodeCtx& n);
  absl::Status ConvertTranspose(const NodeCtx& n);
  absl::Status ConvertConcat(const NodeCtx& n);
  absl::Status ConvertPad(const NodeCtx& n);
  absl::Status ConvertSoftmax(const NodeCtx& n);
  absl::Status ConvertSqueeze(const NodeCtx& n, bool unsqueeze);
  absl::Status ConvertIdentity(const NodeCtx& n);
  absl::Status ConvertConstant(const NodeCtx& n);
  absl::Status ConvertShape(const NodeCtx& n);
  absl::Status ConvertGather(const NodeCtx& n);
  absl::Status ConvertCast(const NodeCtx& n);
  absl::Status ConvertConstantOfShape(const NodeCtx& n);
  absl::Status ConvertSum(const NodeCtx& n);
  absl::Status ConvertReduce(const NodeCtx& n, OpKind kind);
  // Accounts for `count` elements of constant data created at import time (folding); errors
  // once a model asks for more than kMaxFoldedElements in total (a tiny hostile file could
  // otherwise request gigabytes through ConstantOfShape or broadcasting).
  absl::Status ChargeFolded(const NodeCtx& n, int64_t count);

  // A Conv/ConvTranspose/Gemm/MatMul output that BatchNormalization (or a following bias Add)
  // may fold into.
  // A grouped convolution has one (weights, bias) part per group, each owning an equal,
  // consecutive range of the output channels.
  struct Foldable {
    int32_t op = -1;
    std::vector<int32_t> weights;  // float constant tensors (pending data)
    std::vector<int32_t> biases;   // float constant tensors [channels / parts] (pending data)
    int64_t channels = 0;
    bool channel_innermost = false;  // depthwise 1HW(C*M); else channel is the outer dim
  };

  const onnx::ModelProto& model_;
  const onnx::GraphProto& graph_proto_;
  std::string origin_;
  int64_t opset_ = 0;
  Graph graph_;
  Subgraph* sg_ = nullptr;
  std::unordered_map<std::string, Value> values_;
  std::unordered_map<std::string, int> uses_;
  std::unordered_map<int32_t, std::vector<float>> pending_floats_;  // tensor -> data
  std::unordered_map<std::string, Foldable> foldable_;    // value name -> producer
  std::unordered_map<std::string, std::vector<int32_t>> fusable_act_;  // value -> op indices
  std::unordered_map<std::string, int32_t> nhwc_cache_, plain_cache_, memory_cache_;
  std::unordered_map<std::string, int> name_counts_;
  int64_t folded_elements_ = 0;
  // Values produced by opaque nodes whose shapes the model does not declare.
  std::unordered_map<std::string, bool> unknown_shape_;
  // Shapes and element types the model declares (value_info and graph outputs).
  std::unordered_map<std::string, const onnx::TypeProto*> declared_;
};

// Converts an ONNX TensorProto (initializer or Constant value) into a constant Value.
// `what` names it in error messages.
absl::StatusOr<Value> TensorToValue(const onnx::TensorProto& t, const std::string& what);

}  // namespace onnx_import
}  // namespace mica

#endif  // MICA_MODEL_ONNX_ONNX_IMPORTER_H_
