// ValidateGraph on graphs built in memory: each rule accepts the valid case and names the
// operator or tensor at fault in one line.
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "testing/catch.h"

namespace mica {
namespace {

Tensor T(std::vector<int32_t> shape, DType dtype = DType::kFloat32, std::string name = "") {
  Tensor t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.name = std::move(name);
  return t;
}

// One operator whose inputs are graph inputs and whose outputs are graph outputs.
Graph OneOp(OpKind kind, OpAttrs attrs, std::vector<std::vector<int32_t>> ins,
            std::vector<std::vector<int32_t>> outs) {
  Graph g;
  g.source_path = "built.tflite";
  g.subgraphs.emplace_back();
  Subgraph& sg = g.main();
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  for (auto& s : ins) {
    op.inputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.inputs.push_back(op.inputs.back());
    sg.tensors.push_back(T(s, DType::kFloat32, "in" + std::to_string(sg.inputs.size() - 1)));
  }
  for (auto& s : outs) {
    op.outputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.outputs.push_back(op.outputs.back());
    sg.tensors.push_back(T(s, DType::kFloat32, "out" + std::to_string(sg.outputs.size() - 1)));
  }
  sg.ops.push_back(std::move(op));
  return g;
}

std::string Error(const Graph& g) {
  const absl::Status s = ValidateGraph(g);
  return s.ok() ? "" : std::string(s.message());
}

const std::vector<int32_t> kAct = {1, 8, 8, 4};

Graph Conv() {
  return OneOp(OpKind::kConv2D, Conv2DAttrs{}, {kAct, {6, 3, 3, 4}, {6}}, {{1, 6, 6, 6}});
}

struct Rule {
  const char* name;
  std::function<Graph()> make;
  std::vector<const char*> expect;  // empty: the graph is valid
};

TEST_CASE("ValidateGraph accepts valid graphs and names what is wrong", "[validate]") {
  const std::vector<Rule> rules = {
      {"valid conv", [] { return Conv(); }, {}},
      {"no subgraphs", [] { return Graph{}; }, {"no subgraphs"}},
      {"attribute type does not match the kind",
       [] {
         Graph g = Conv();
         g.main().ops[0].attrs = Pool2DAttrs{};
         return g;
       },
       {"built.tflite: subgraph 0, operator 0 (CONV_2D)", "attributes have the wrong type"}},
      {"missing attributes",
       [] {
         Graph g = Conv();
         g.main().ops[0].attrs = std::monostate{};
         return g;
       },
       {"attributes have the wrong type"}},
      {"unknown operator kind",
       [] {
         Graph g = Conv();
         g.main().ops[0].kind = static_cast<OpKind>(999);
         return g;
       },
       {"operator 0 (kind 999)", "unknown operator kind"}},
      {"opaque operator without a name",
       [] { return OneOp(OpKind::kOpaque, std::monostate{}, {kAct}, {kAct}); },
       {"opaque operator has no name"}},
      {"unknown dtype",
       [] {
         Graph g = Conv();
         g.main().tensors[3].dtype = static_cast<DType>(77);
         return g;
       },
       {"tensor 3 ('out0')", "unknown dtype code 77"}},
      {"int4 constants round up to whole bytes",
       [] {
         Graph g = Conv();
         Tensor& w = g.main().tensors[1];
         w.dtype = DType::kInt4;
         w.data = g.AddConstData(std::vector<uint8_t>((6 * 3 * 3 * 4 + 1) / 2));
         return g;
       },
       {}},
      {"shape signature of another rank",
       [] {
         Graph g = Conv();
         g.main().tensors[0].shape_signature = {-1, 8, 8};
         return g;
       },
       {"tensor 0 ('in0')", "different rank"}},
      {"intermediate out of range",
       [] {
         Graph g = Conv();
         g.main().ops[0].intermediates = {9};
         return g;
       },
       {"intermediate 0 refers to tensor 9"}},
      {"zero-element and variable tensors may be read without a producer",
       [] {
         Graph g = OneOp(OpKind::kAdd, ElementwiseAttrs{}, {kAct}, {kAct});
         Subgraph& sg = g.main();
         sg.tensors.push_back(T({1, 8, 8, 4}, DType::kFloat32, "state"));
         sg.tensors.back().is_variable = true;
         sg.ops[0].inputs.push_back(2);
         Operator pad;
         pad.kind = OpKind::kPad;
         pad.inputs = {1, 3};
         pad.outputs = {4};
         sg.tensors.push_back(T({0, 2}, DType::kInt32, "no_paddings"));
         sg.tensors.push_back(T({1, 8, 8, 4}, DType::kFloat32, "padded"));
         sg.ops.push_back(pad);
         return g;
       },
       {}},
      {"a non-constant tensor nobody produces",
       [] {
         Graph g = Conv();
         g.main().inputs = {0, 2};  // filter (tensor 1) is neither input, constant nor produced
         return g;
       },
       {"operator 0 (CONV_2D)", "reads tensor 1 ('in1')"}},
      {"opaque operators may read workspace tensors nobody writes",
       [] {
         Graph g = OneOp(OpKind::kOpaque, std::monostate{}, {kAct}, {kAct});
         g.main().ops[0].opaque_name = "ethos-u";
         g.main().tensors.push_back(T({1024}, DType::kInt8, "scratch"));
         g.main().ops[0].inputs.push_back(2);
         return g;
       },
       {}},
      {"depthwise multiplier negative",
       [] {
         DepthwiseConv2DAttrs a;
         a.depth_multiplier = -1;
         return OneOp(OpKind::kDepthwiseConv2D, a, {kAct, {1, 3, 3, 4}}, {kAct});
       },
       {"depth_multiplier is -1"}},
      {"pool filter 0",
       [] {
         Pool2DAttrs a;
         a.filter_h = 0;
         return OneOp(OpKind::kMaxPool2D, a, {kAct}, {kAct});
       },
       {"operator 0 (MAX_POOL_2D)", "filter_h is 0"}},
      {"softmax beta infinite",
       [] {
         return OneOp(OpKind::kSoftmax, SoftmaxAttrs{std::numeric_limits<float>::infinity()},
                      {{1, 4}}, {{1, 4}});
       },
       {"beta is not finite"}},
      {"leaky relu alpha NaN",
       [] { return OneOp(OpKind::kLeakyRelu, LeakyReluAttrs{std::nanf("")}, {kAct}, {kAct}); },
       {"alpha is not finite"}},
      {"reshape new_shape below -1",
       [] {
         return OneOp(OpKind::kReshape, ReshapeAttrs{{2, -2}}, {kAct}, {{2, 128}});
       },
       {"new_shape has dimension -2"}},
      {"squeeze dim outside the rank",
       [] { return OneOp(OpKind::kSqueeze, SqueezeAttrs{{4}}, {kAct}, {kAct}); },
       {"squeeze dim 4 is outside [-4, 4)"}},
      {"concatenation axis outside the rank",
       [] {
         return OneOp(OpKind::kConcatenation, ConcatenationAttrs{-5, Activation::kNone},
                      {kAct, kAct}, {{1, 8, 8, 8}});
       },
       {"axis -5 is outside [-4, 4)"}},
      {"split count differs from the outputs",
       [] {
         return OneOp(OpKind::kSplit, SplitAttrs{3}, {{}, kAct}, {kAct, kAct});
       },
       {"num_splits is 3 but there are 2 outputs"}},
      {"pack count differs from the inputs",
       [] {
         return OneOp(OpKind::kPack, PackAttrs{3, 0}, {{4}, {4}}, {{2, 4}});
       },
       {"values_count is 3 but there are 2 inputs"}},
      {"unpack axis outside the rank",
       [] {
         return OneOp(OpKind::kUnpack, PackAttrs{2, 2}, {{2, 4}}, {{4}, {4}});
       },
       {"axis 2 is outside [-2, 2)"}},
      {"gather axis outside the rank",
       [] {
         return OneOp(OpKind::kGather, GatherAttrs{7, 0}, {kAct, {2}}, {kAct});
       },
       {"axis 7"}},
      {"block size 0",
       [] { return OneOp(OpKind::kSpaceToDepth, SpaceDepthAttrs{0}, {kAct}, {kAct}); },
       {"block_size is 0"}},
      {"arg max to float",
       [] {
         return OneOp(OpKind::kArgMax, ArgMinMaxAttrs{DType::kFloat32}, {kAct, {}}, {{1, 8, 8}});
       },
       {"output_type must be int32 or int64, not float32"}},
      {"svdf filters not a multiple of the rank",
       [] {
         return OneOp(OpKind::kSvdf, SvdfAttrs{3, Activation::kNone, false},
                      {{1, 8}, {4, 8}, {4, 10}, {2}, {1, 40}}, {{1, 2}});
       },
       {"operator 0 (SVDF)", "not a multiple of rank 3"}},
      {"lstm without a required weight",
       [] {
         std::vector<std::vector<int32_t>> ins(24, {4, 4});
         Graph g = OneOp(OpKind::kUnidirectionalSequenceLstm, LstmAttrs{}, ins, {{1, 3, 4}});
         g.main().ops[0].inputs[1] = kNoTensor;  // input-to-input weights: optional (CIFG)
         g.main().ops[0].inputs[6] = kNoTensor;  // recurrent-to-forget weights: required
         return g;
       },
       {"operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM)", "required input 6 is absent"}},
      {"lstm cell clip NaN",
       [] {
         LstmAttrs a;
         a.cell_clip = std::nanf("");
         return OneOp(OpKind::kUnidirectionalSequenceLstm, a,
                      std::vector<std::vector<int32_t>>(20, {4, 4}), {{1, 3, 4}});
       },
       {"cell_clip is invalid"}},
      {"fully connected weights of rank 3",
       [] {
         return OneOp(OpKind::kFullyConnected, FullyConnectedAttrs{}, {{1, 16}, {4, 4, 4}},
                      {{1, 4}});
       },
       {"weights has shape [4,4,4]; must be rank 2"}},
      {"activation code out of range",
       [] {
         return OneOp(OpKind::kAdd, ElementwiseAttrs{static_cast<Activation>(42)}, {kAct, kAct},
                      {kAct});
       },
       {"operator 0 (ADD)", "unknown fused activation code 42"}},
      {"padding code out of range",
       [] {
         Conv2DAttrs a;
         a.padding = static_cast<Padding>(9);
         return OneOp(OpKind::kConv2D, a, {kAct, {6, 3, 3, 4}}, {{1, 6, 6, 6}});
       },
       {"unknown padding code 9"}},
      {"per-tensor quantization on a scalar",
       [] {
         Graph g = OneOp(OpKind::kQuantize, std::monostate{}, {{}}, {{}});
         g.main().tensors[1].dtype = DType::kInt8;
         g.main().tensors[1].quant = {{0.5f}, {0}, 0};
         return g;
       },
       {}},
      {"uint8 zero point out of range",
       [] {
         Graph g = OneOp(OpKind::kQuantize, std::monostate{}, {kAct}, {kAct});
         g.main().tensors[1].dtype = DType::kUInt8;
         g.main().tensors[1].quant = {{0.5f}, {-1}, 0};
         return g;
       },
       {"tensor 1 ('out0')", "zero point 0 is -1, outside the uint8 range"}},
      {"zero points without scales",
       [] {
         Graph g = Conv();
         g.main().tensors[0].quant.zero_point = {0};
         return g;
       },
       {"zero points given without scales"}},
      {"long tensor names are cut",
       [] {
         Graph g = Conv();
         g.main().tensors[3].name = std::string(1000, 'x');
         g.main().tensors[3].shape = {1, -1, 6, 6};
         return g;
       },
       {"tensor 3 ('xxxxxxxx", "...'): dimension 1"}},
  };
  for (const Rule& r : rules) {
    CAPTURE(r.name);
    const std::string msg = Error(r.make());
    CAPTURE(msg);
    if (r.expect.empty()) {
      CHECK(msg.empty());
      continue;
    }
    REQUIRE_FALSE(msg.empty());
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.size() < 400);
    for (const char* e : r.expect) CHECK_THAT(msg, Catch::Contains(e));
  }
}

TEST_CASE("ValidateGraph: the tensor size cap holds without overflow", "[validate]") {
  Graph g = OneOp(OpKind::kQuantize, std::monostate{}, {kAct}, {kAct});
  const std::vector<std::vector<int32_t>> too_big = {
      {46341, 46341},                        // 2^31.0001 float32 bytes
      {1 << 30, 1 << 30, 1 << 30, 1 << 30},  // overflows 64 bits if multiplied
      {2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647, 2147483647,
       2147483647}};
  for (const auto& shape : too_big) {
    g.main().tensors[1].shape = shape;
    CHECK_THAT(Error(g), Catch::Contains("exceeds mica's limit"));
  }
  // (input and output agree: the declared output shape is checked against the input's)
  g.main().tensors[0].shape = g.main().tensors[1].shape = {0, 2147483647, 2147483647};
  CHECK(Error(g) == "");  // zero elements: fine
  g.main().tensors[0].dtype = g.main().tensors[1].dtype = DType::kInt8;
  g.main().tensors[0].shape = g.main().tensors[1].shape = {1 << 15, 1 << 16};
  CHECK(Error(g) == "");  // exactly 2^31 bytes: the cap itself
}

}  // namespace
}  // namespace mica
