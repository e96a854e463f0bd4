// Writes a small seed corpus for fuzz_tflite with mica's own writer: one single-operator model
// per OpKind (so every options table is in the corpus), a quantized model with constants,
// metadata and a dynamic batch, and opaque/custom operators.
//
//   mica_fuzz_seeds OUT_DIR
#include <cstdio>
#include <string>
#include <vector>

#include "mica/model/graph.h"
#include "mica/model/load.h"

namespace {

using mica::DType;
using mica::Graph;
using mica::OpKind;
using Shape = std::vector<int32_t>;

constexpr int32_t kAbsent = -1;  // marks an absent optional input in the tables below

struct Seed {
  const char* name;
  OpKind kind;
  mica::OpAttrs attrs;
  std::vector<Shape> inputs;  // Shape{kAbsent}: absent optional input
  std::vector<Shape> outputs;
};

Graph SingleOp(const Seed& s) {
  Graph g;
  g.subgraphs.emplace_back();
  mica::Subgraph& sg = g.main();
  mica::Operator op;
  op.kind = s.kind;
  op.attrs = s.attrs;
  if (s.kind == OpKind::kOpaque) op.opaque_name = s.name;
  for (const Shape& shape : s.inputs) {
    if (shape == Shape{kAbsent}) {
      op.inputs.push_back(mica::kNoTensor);
      continue;
    }
    mica::Tensor t;
    t.shape = shape;
    t.name = "in" + std::to_string(op.inputs.size());
    op.inputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.inputs.push_back(op.inputs.back());
    sg.tensors.push_back(t);
  }
  for (const Shape& shape : s.outputs) {
    mica::Tensor t;
    t.shape = shape;
    t.name = "out" + std::to_string(op.outputs.size());
    if (s.kind == OpKind::kArgMax || s.kind == OpKind::kArgMin) t.dtype = DType::kInt32;
    op.outputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.outputs.push_back(op.outputs.back());
    sg.tensors.push_back(t);
  }
  sg.ops.push_back(op);
  return g;
}

std::vector<Seed> Seeds() {
  const Shape a = {1, 4, 4, 2};
  std::vector<Seed> seeds = {
      {"conv",
       OpKind::kConv2D,
       mica::Conv2DAttrs{mica::Padding::kSame, 2, 1, 1, 2, mica::Activation::kRelu},
       {a, {3, 3, 3, 2}, {3}},
       {{1, 4, 2, 3}}},
      {"dwconv",
       OpKind::kDepthwiseConv2D,
       mica::DepthwiseConv2DAttrs{},
       {a, {1, 3, 3, 2}, {kAbsent}},
       {{1, 2, 2, 2}}},
      {"tconv",
       OpKind::kTransposeConv,
       mica::TransposeConvAttrs{},
       {{4}, {2, 3, 3, 2}, a},
       {{1, 4, 4, 2}}},
      {"fc",
       OpKind::kFullyConnected,
       mica::FullyConnectedAttrs{mica::Activation::kRelu6, true},
       {{1, 8}, {3, 8}, {3}},
       {{1, 3}}},
      {"bmm",
       OpKind::kBatchMatMul,
       mica::BatchMatMulAttrs{false, true},
       {{1, 2, 3}, {1, 4, 3}},
       {{1, 2, 4}}},
      {"add", OpKind::kAdd, mica::ElementwiseAttrs{}, {a, a}, {a}},
      {"sub", OpKind::kSub, mica::ElementwiseAttrs{}, {a, a}, {a}},
      {"mul", OpKind::kMul, mica::ElementwiseAttrs{}, {a, a}, {a}},
      {"div", OpKind::kDiv, mica::ElementwiseAttrs{}, {a, a}, {a}},
      {"max", OpKind::kMaximum, std::monostate{}, {a, a}, {a}},
      {"min", OpKind::kMinimum, std::monostate{}, {a, a}, {a}},
      {"sqdiff", OpKind::kSquaredDifference, std::monostate{}, {a, a}, {a}},
      {"maxpool",
       OpKind::kMaxPool2D,
       mica::Pool2DAttrs{mica::Padding::kValid, 2, 2, 2, 2, mica::Activation::kNone},
       {a},
       {{1, 2, 2, 2}}},
      {"avgpool", OpKind::kAveragePool2D, mica::Pool2DAttrs{}, {a}, {a}},
      {"mean", OpKind::kMean, mica::ReduceAttrs{true}, {a, {2}}, {{1, 1, 1, 2}}},
      {"sum", OpKind::kSum, mica::ReduceAttrs{}, {a, {1}}, {{1, 4, 2}}},
      {"reducemax", OpKind::kReduceMax, mica::ReduceAttrs{}, {a, {1}}, {{1, 4, 2}}},
      {"softmax", OpKind::kSoftmax, mica::SoftmaxAttrs{}, {{1, 5}}, {{1, 5}}},
      {"logistic", OpKind::kLogistic, std::monostate{}, {a}, {a}},
      {"tanh", OpKind::kTanh, std::monostate{}, {a}, {a}},
      {"relu", OpKind::kRelu, std::monostate{}, {a}, {a}},
      {"relu6", OpKind::kRelu6, std::monostate{}, {a}, {a}},
      {"relun1", OpKind::kReluN1To1, std::monostate{}, {a}, {a}},
      {"leaky", OpKind::kLeakyRelu, mica::LeakyReluAttrs{}, {a}, {a}},
      {"hswish", OpKind::kHardSwish, std::monostate{}, {a}, {a}},
      {"prelu", OpKind::kPrelu, std::monostate{}, {a, {2}}, {a}},
      {"exp", OpKind::kExp, std::monostate{}, {a}, {a}},
      {"log", OpKind::kLog, std::monostate{}, {a}, {a}},
      {"sqrt", OpKind::kSqrt, std::monostate{}, {a}, {a}},
      {"rsqrt", OpKind::kRsqrt, std::monostate{}, {a}, {a}},
      {"abs", OpKind::kAbs, std::monostate{}, {a}, {a}},
      {"neg", OpKind::kNeg, std::monostate{}, {a}, {a}},
      {"reshape", OpKind::kReshape, mica::ReshapeAttrs{{1, 32}}, {a, {2}}, {{1, 32}}},
      {"squeeze", OpKind::kSqueeze, mica::SqueezeAttrs{{0}}, {a}, {{4, 4, 2}}},
      {"expand", OpKind::kExpandDims, std::monostate{}, {a, {}}, {{1, 1, 4, 4, 2}}},
      {"transpose", OpKind::kTranspose, std::monostate{}, {a, {4}}, {a}},
      {"pad", OpKind::kPad, std::monostate{}, {a, {4, 2}}, {a}},
      {"padv2", OpKind::kPadV2, std::monostate{}, {a, {4, 2}, {}}, {a}},
      {"concat",
       OpKind::kConcatenation,
       mica::ConcatenationAttrs{3, mica::Activation::kNone},
       {a, a},
       {{1, 4, 4, 4}}},
      {"split", OpKind::kSplit, mica::SplitAttrs{2}, {{}, a}, {{1, 4, 4, 1}, {1, 4, 4, 1}}},
      {"splitv", OpKind::kSplitV, mica::SplitAttrs{2}, {a, {2}, {}}, {{1, 4, 4, 1}, {1, 4, 4, 1}}},
      {"stridedslice",
       OpKind::kStridedSlice,
       mica::StridedSliceAttrs{1, 1, 0, 0, 0, false},
       {a, {4}, {4}, {4}},
       {a}},
      {"slice", OpKind::kSlice, std::monostate{}, {a, {4}, {4}}, {a}},
      {"gather", OpKind::kGather, mica::GatherAttrs{1, 0}, {a, {2}}, {{1, 2, 4, 2}}},
      {"pack", OpKind::kPack, mica::PackAttrs{2, 0}, {{4}, {4}}, {{2, 4}}},
      {"unpack", OpKind::kUnpack, mica::PackAttrs{2, 0}, {{2, 4}}, {{4}, {4}}},
      {"resizenn", OpKind::kResizeNearestNeighbor, mica::ResizeAttrs{}, {a, {2}}, {{1, 8, 8, 2}}},
      {"resizebl",
       OpKind::kResizeBilinear,
       mica::ResizeAttrs{false, true},
       {a, {2}},
       {{1, 8, 8, 2}}},
      {"s2d", OpKind::kSpaceToDepth, mica::SpaceDepthAttrs{2}, {a}, {{1, 2, 2, 8}}},
      {"d2s", OpKind::kDepthToSpace, mica::SpaceDepthAttrs{2}, {{1, 2, 2, 8}}, {a}},
      {"argmax", OpKind::kArgMax, mica::ArgMinMaxAttrs{}, {a, {}}, {{1, 4, 4}}},
      {"argmin", OpKind::kArgMin, mica::ArgMinMaxAttrs{}, {a, {}}, {{1, 4, 4}}},
      {"quantize", OpKind::kQuantize, std::monostate{}, {a}, {a}},
      {"dequantize", OpKind::kDequantize, std::monostate{}, {a}, {a}},
      {"svdf",
       OpKind::kSvdf,
       mica::SvdfAttrs{2, mica::Activation::kRelu, false},
       {{1, 8}, {4, 8}, {4, 5}, {kAbsent}, {1, 20}},
       {{1, 2}}},
      {"CUMSUM", OpKind::kOpaque, std::monostate{}, {a, {}}, {a}},
      {"MyCustomOp", OpKind::kOpaque, std::monostate{}, {a}, {a, a}},
  };
  Seed lstm{"lstm", OpKind::kUnidirectionalSequenceLstm, mica::LstmAttrs{}, {}, {{1, 3, 4}}};
  for (int i = 0; i < 24; ++i) {
    const bool required =
        i == 0 || (i >= 2 && i <= 4) || (i >= 6 && i <= 8) || (i >= 13 && i <= 15) || i >= 18;
    lstm.inputs.push_back(required ? Shape{4, 4} : Shape{kAbsent});
  }
  seeds.push_back(lstm);
  return seeds;
}

// An int8 convolution with per-channel weights, bias, metadata and a dynamic batch.
Graph QuantizedConv() {
  Seed s{"qconv",
         OpKind::kConv2D,
         mica::Conv2DAttrs{},
         {{1, 5, 5, 2}, {4, 3, 3, 2}, {4}},
         {{1, 3, 3, 4}}};
  Graph g = SingleOp(s);
  g.description = "mica fuzz seed";
  g.metadata["min_runtime_version"] = "1.14.0";
  mica::Subgraph& sg = g.main();
  sg.inputs = {0};
  sg.tensors[0].dtype = DType::kInt8;
  sg.tensors[0].shape_signature = {-1, 5, 5, 2};
  sg.tensors[0].quant = {{0.5f}, {-3}, 0};
  sg.tensors[1].dtype = DType::kInt8;
  sg.tensors[1].quant = {{0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0};
  std::vector<uint8_t> w(72);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(i * 13);
  sg.tensors[1].data = g.AddConstData(w);
  sg.tensors[2].dtype = DType::kInt32;
  sg.tensors[2].quant = {{0.05f, 0.1f, 0.15f, 0.2f}, {0, 0, 0, 0}, 0};
  sg.tensors[2].data = g.AddConstData(std::vector<uint8_t>(16, 1));
  sg.tensors[3].dtype = DType::kInt8;
  sg.tensors[3].quant = {{0.25f}, {5}, 0};
  return g;
}

bool Write(const std::string& dir, const std::string& name, const Graph& g) {
  absl::StatusOr<std::vector<uint8_t>> bytes = mica::WriteTflite(g);
  if (!bytes.ok()) {
    std::fprintf(stderr, "seed %s: %s\n", name.c_str(),
                 std::string(bytes.status().message()).c_str());
    return false;
  }
  const absl::Status st = mica::WriteFileBytes(dir + "/" + name + ".tflite", *bytes);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", std::string(st.message()).c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  int failures = 0;
  int written = 0;
  for (const Seed& s : Seeds()) {
    Write(dir, s.name, SingleOp(s)) ? ++written : ++failures;
  }
  Write(dir, "qconv", QuantizedConv()) ? ++written : ++failures;
  std::printf("wrote %d seeds to %s\n", written, dir.c_str());
  return failures == 0 ? 0 : 1;
}
