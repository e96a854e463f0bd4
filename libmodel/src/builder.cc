#include "mica/model/builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "mica/model/op_info.h"
#include "mica/model/shape_inference.h"

namespace mica {
namespace {

// Elements above this are refused (as in shape inference): it keeps all byte counts
// comfortably inside int64/size_t.
constexpr int64_t kMaxElements = int64_t{1} << 31;

}  // namespace

uint64_t SeededRng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SeededRng::Uniform01() {
  return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);
}

GraphBuilder::GraphBuilder(std::string name, uint64_t seed) : rng_(seed) {
  graph_.subgraphs.emplace_back();
  graph_.main().name = std::move(name);
  graph_.source_format = ModelFormat::kBuilt;
}

void GraphBuilder::Fail(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

bool GraphBuilder::CheckShape(const std::string& what, const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) {
    if (d < 0) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(what, ": negative dimension in ", ShapeStr(shape))));
      return false;
    }
    n *= d;
    if (n > kMaxElements) {
      Fail(absl::InvalidArgumentError(absl::StrCat(what, ": shape ", ShapeStr(shape),
                                                   " too large")));
      return false;
    }
  }
  return true;
}

int32_t GraphBuilder::AddTensorImpl(const std::string& name, std::vector<int32_t> shape,
                                    DType dtype) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  graph_.main().tensors.push_back(std::move(t));
  return static_cast<int32_t>(graph_.main().tensors.size() - 1);
}

int32_t GraphBuilder::Input(const std::string& name, std::vector<int32_t> shape, DType dtype) {
  const int32_t t = AddTensorImpl(name, std::move(shape), dtype);
  if (t != kNoTensor) graph_.main().inputs.push_back(t);
  return t;
}

int32_t GraphBuilder::Intermediate(const std::string& name, std::vector<int32_t> shape,
                                   DType dtype) {
  return AddTensorImpl(name, std::move(shape), dtype);
}

int32_t GraphBuilder::Constant(const std::string& name, std::vector<int32_t> shape, DType dtype,
                               std::vector<uint8_t> bytes) {
  const int32_t t = AddTensorImpl(name, std::move(shape), dtype);
  if (t == kNoTensor) return t;
  Tensor& tensor = graph_.main().tensors[static_cast<size_t>(t)];
  if (bytes.size() != tensor.num_bytes()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(name, ": constant has ", bytes.size(),
                                                 " bytes, shape ", ShapeStr(tensor.shape), " ",
                                                 std::string(DTypeName(dtype)), " needs ",
                                                 tensor.num_bytes())));
    graph_.main().tensors.pop_back();
    return kNoTensor;
  }
  tensor.data = graph_.AddConstData(std::move(bytes));
  return t;
}

int32_t GraphBuilder::FloatConstant(const std::string& name, std::vector<int32_t> shape,
                                    const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Constant(name, std::move(shape), DType::kFloat32, std::move(bytes));
}

int32_t GraphBuilder::Int32Constant(const std::string& name, std::vector<int32_t> shape,
                                    const std::vector<int32_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Constant(name, std::move(shape), DType::kInt32, std::move(bytes));
}

int32_t GraphBuilder::HeWeights(const std::string& name, std::vector<int32_t> shape,
                                bool depthwise) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  int64_t fan_in = 1;
  const size_t last = depthwise ? std::min<size_t>(3, shape.size()) : shape.size();
  for (size_t i = 1; i < last; ++i) fan_in *= shape[i];
  if (fan_in < 1) fan_in = 1;
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in));
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng_.Symmetric(limit);
  return FloatConstant(name, std::move(shape), v);
}

int32_t GraphBuilder::RandomBias(const std::string& name, int32_t n, float limit) {
  return RandomConstant(name, {n}, -limit, limit);
}

int32_t GraphBuilder::RandomConstant(const std::string& name, std::vector<int32_t> shape,
                                     float lo, float hi) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = lo + (hi - lo) * rng_.Uniform01();
  return FloatConstant(name, std::move(shape), v);
}

void GraphBuilder::Output(int32_t tensor) {
  if (!status_.ok()) return;
  if (tensor < 0 || static_cast<size_t>(tensor) >= graph_.main().tensors.size()) {
    Fail(absl::InvalidArgumentError(absl::StrCat("Output: no tensor ", tensor)));
    return;
  }
  graph_.main().outputs.push_back(tensor);
}

bool GraphBuilder::CheckOperands(const std::vector<int32_t>& inputs, bool allow_absent,
                                 OpKind kind) {
  if (!status_.ok()) return false;
  for (int32_t t : inputs) {
    if (t == kNoTensor && allow_absent) continue;
    if (t < 0 || static_cast<size_t>(t) >= graph_.main().tensors.size()) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(std::string(OpKindName(kind)), ": operand ", t, " is not a tensor of this graph")));
      return false;
    }
  }
  return true;
}

std::string GraphBuilder::OpName(OpKind kind, const std::string& name) const {
  if (!name.empty()) return name;
  std::string k(OpKindName(kind));
  std::transform(k.begin(), k.end(), k.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  return absl::StrCat(k, "_", graph_.main().ops.size());
}

std::vector<int32_t> GraphBuilder::AddOp(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                                         int num_outputs, const std::string& name) {
  if (!CheckOperands(inputs, true, kind)) return std::vector<int32_t>(num_outputs, kNoTensor);
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.inputs = std::move(inputs);
  auto shapes = InferOutputShapes(graph_.main(), op);
  if (!shapes.ok()) {
    Fail(absl::Status(shapes.status().code(),
                      absl::StrCat(OpName(kind, name), ": ", shapes.status().message())));
    return std::vector<int32_t>(num_outputs, kNoTensor);
  }
  if (static_cast<int>(shapes->size()) != num_outputs) {
    Fail(absl::InvalidArgumentError(absl::StrCat(OpName(kind, name), ": operator has ",
                                                 shapes->size(), " outputs, asked for ",
                                                 num_outputs)));
    return std::vector<int32_t>(num_outputs, kNoTensor);
  }
  // The output takes the dtype of the data operand (TRANSPOSE_CONV's data is input 2).
  const auto data_input = static_cast<size_t>(DataInput(kind));
  DType dtype = graph_.main().tensors[static_cast<size_t>(op.inputs[data_input])].dtype;
  if (kind == OpKind::kDequantize) dtype = DType::kFloat32;
  if (kind == OpKind::kQuantize) dtype = DType::kInt8;
  const std::string base = OpName(kind, name);
  for (int i = 0; i < num_outputs; ++i) {
    op.outputs.push_back(AddTensorImpl(i == 0 ? base : absl::StrCat(base, ":", i),
                                       (*shapes)[static_cast<size_t>(i)], dtype));
  }
  std::vector<int32_t> outs = op.outputs;
  graph_.main().ops.push_back(std::move(op));
  return outs;
}

void GraphBuilder::AddOpWithOutputs(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                                    std::vector<int32_t> outputs) {
  if (!CheckOperands(inputs, true, kind) || !CheckOperands(outputs, false, kind)) return;
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  auto shapes = InferOutputShapes(graph_.main(), op);
  if (!shapes.ok()) {
    Fail(shapes.status());
    return;
  }
  if (shapes->size() != op.outputs.size()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(std::string(OpKindName(kind)), ": wrong output count")));
    return;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor& t = graph_.main().tensors[static_cast<size_t>(op.outputs[i])];
    if (t.shape != (*shapes)[i]) {
      Fail(absl::InvalidArgumentError(absl::StrCat(std::string(OpKindName(kind)), ": output '", t.name,
                                                   "' has shape ", ShapeStr(t.shape),
                                                   ", inference gives ",
                                                   ShapeStr((*shapes)[i]))));
      return;
    }
  }
  graph_.main().ops.push_back(std::move(op));
}

int32_t GraphBuilder::Conv2D(int32_t input, int32_t filter, int32_t bias,
                             const Conv2DAttrs& attrs, const std::string& name) {
  return AddOp(OpKind::kConv2D, attrs, {input, filter, bias}, 1, name)[0];
}

int32_t GraphBuilder::DepthwiseConv2D(int32_t input, int32_t filter, int32_t bias,
                                      const DepthwiseConv2DAttrs& attrs,
                                      const std::string& name) {
  return AddOp(OpKind::kDepthwiseConv2D, attrs, {input, filter, bias}, 1, name)[0];
}

int32_t GraphBuilder::FullyConnected(int32_t input, int32_t weights, int32_t bias,
                                     const FullyConnectedAttrs& attrs, const std::string& name) {
  return AddOp(OpKind::kFullyConnected, attrs, {input, weights, bias}, 1, name)[0];
}

int32_t GraphBuilder::MaxPool2D(int32_t input, const Pool2DAttrs& attrs,
                                const std::string& name) {
  return AddOp(OpKind::kMaxPool2D, attrs, {input}, 1, name)[0];
}

int32_t GraphBuilder::AveragePool2D(int32_t input, const Pool2DAttrs& attrs,
                                    const std::string& name) {
  return AddOp(OpKind::kAveragePool2D, attrs, {input}, 1, name)[0];
}

int32_t GraphBuilder::Add(int32_t a, int32_t b, Activation act, const std::string& name) {
  return AddOp(OpKind::kAdd, ElementwiseAttrs{act}, {a, b}, 1, name)[0];
}

int32_t GraphBuilder::Mul(int32_t a, int32_t b, Activation act, const std::string& name) {
  return AddOp(OpKind::kMul, ElementwiseAttrs{act}, {a, b}, 1, name)[0];
}

int32_t GraphBuilder::Reshape(int32_t input, std::vector<int32_t> new_shape,
                              const std::string& name) {
  if (!CheckOperands({input}, false, OpKind::kReshape)) return kNoTensor;
  // Resolve -1 first so the stored option and shape operand hold the final shape, as TFLite
  // converters write them.
  Operator probe;
  probe.kind = OpKind::kReshape;
  probe.attrs = ReshapeAttrs{new_shape};
  probe.inputs = {input};
  auto shapes = InferOutputShapes(graph_.main(), probe);
  if (!shapes.ok()) {
    Fail(shapes.status());
    return kNoTensor;
  }
  const std::vector<int32_t> resolved = (*shapes)[0];
  const std::string base = OpName(OpKind::kReshape, name);
  const int32_t shape_t =
      Int32Constant(base + "/shape", {static_cast<int32_t>(resolved.size())}, resolved);
  return AddOp(OpKind::kReshape, ReshapeAttrs{resolved}, {input, shape_t}, 1, base)[0];
}

int32_t GraphBuilder::Concatenation(std::vector<int32_t> inputs, int32_t axis,
                                    const std::string& name) {
  return AddOp(OpKind::kConcatenation, ConcatenationAttrs{axis, Activation::kNone},
               std::move(inputs), 1, name)[0];
}

int32_t GraphBuilder::Mean(int32_t input, std::vector<int32_t> axes, bool keep_dims,
                           const std::string& name) {
  if (!status_.ok()) return kNoTensor;
  const std::string base = OpName(OpKind::kMean, name);
  const int32_t axes_t = Int32Constant(base + "/axes", {static_cast<int32_t>(axes.size())}, axes);
  return AddOp(OpKind::kMean, ReduceAttrs{keep_dims}, {input, axes_t}, 1, base)[0];
}

int32_t GraphBuilder::Softmax(int32_t input, float beta, const std::string& name) {
  return AddOp(OpKind::kSoftmax, SoftmaxAttrs{beta}, {input}, 1, name)[0];
}

int32_t GraphBuilder::Pad(int32_t input, std::vector<std::vector<int32_t>> paddings,
                          const std::string& name) {
  if (!status_.ok()) return kNoTensor;
  std::vector<int32_t> flat;
  for (const auto& p : paddings) {
    if (p.size() != 2) {
      Fail(absl::InvalidArgumentError("Pad: each padding needs (before, after)"));
      return kNoTensor;
    }
    flat.insert(flat.end(), p.begin(), p.end());
  }
  const std::string base = OpName(OpKind::kPad, name);
  const int32_t pads =
      Int32Constant(base + "/paddings", {static_cast<int32_t>(paddings.size()), 2}, flat);
  return AddOp(OpKind::kPad, std::monostate{}, {input, pads}, 1, base)[0];
}

int32_t GraphBuilder::Unary(OpKind kind, int32_t input, const std::string& name) {
  OpAttrs attrs;
  if (kind == OpKind::kLeakyRelu) attrs = LeakyReluAttrs{};
  if (kind == OpKind::kSoftmax) attrs = SoftmaxAttrs{};
  return AddOp(kind, attrs, {input}, 1, name)[0];
}

absl::StatusOr<Graph> GraphBuilder::Build() {
  if (!status_.ok()) return status_;
  Graph g = std::move(graph_);
  graph_ = Graph();
  graph_.subgraphs.emplace_back();
  graph_.source_format = ModelFormat::kBuilt;
  MICA_RETURN_IF_ERROR(ValidateGraph(g));
  return g;
}

}  // namespace mica
