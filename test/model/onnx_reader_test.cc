// ONNX reader: tiny ModelProtos built in-test → IR kinds, attributes, shapes and weight layouts.
// Expected weight values are recomputed here from the ONNX tensors by index (NCHW/OIHW → NHWC /
// OHWI / 1HWO / [out,in]), independently of the importer's code.
#include <cmath>
#include <limits>
#include <random>

#include "model/onnx_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using onnx_test::AttrF;
using onnx_test::AttrI;
using onnx_test::AttrInts;
using onnx_test::AttrS;
using onnx_test::Floats;
using onnx_test::Ints;
using onnx_test::KindNames;
using onnx_test::OnnxBuilder;
using onnx_test::RandomFloats;
using onnx_test::Shape;
using onnx_test::TensorIndex;
using V = std::vector<int32_t>;

Graph MustLoad(const OnnxBuilder& b) {
  auto g = b.Load();
  INFO(g.status().message());
  REQUIRE(g.ok());
  return *std::move(g);
}

// Loads a model with one unsupported node: it becomes an opaque operator whose name is the
// ONNX op type and whose reason says why (the file is not refused; `run` refuses it).
std::string OpaqueReason(const OnnxBuilder& b, const std::string& op_type) {
  auto g = b.Load();
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  for (const Operator& op : g->main().ops) {
    if (op.kind == OpKind::kOpaque && op.opaque_name == op_type) return op.opaque_reason;
  }
  FAIL("no opaque " + op_type);
  return "";
}


TEST_CASE("onnx: conv + batchnorm + relu folds into one CONV_2D with OHWI weights") {
  const uint64_t seed = testing::TestSeed(1234);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int64_t c = 3, m = 4, k = 3;
  const auto w = RandomFloats(rng, m * c * k * k);
  const auto bias = RandomFloats(rng, m);
  const auto scale = RandomFloats(rng, m, 0.5f, 2.0f);
  const auto beta = RandomFloats(rng, m);
  const auto mean = RandomFloats(rng, m);
  const auto var = RandomFloats(rng, m, 0.1f, 3.0f);
  const float eps = 1e-3f;

  OnnxBuilder b(13);
  b.Input("x", {1, c, 5, 6});
  b.Init("w", {m, c, k, k}, w);
  b.Init("b", {m}, bias, /*raw=*/false);
  b.Init("scale", {m}, scale);
  b.Init("beta", {m}, beta);
  b.Init("mean", {m}, mean);
  b.Init("var", {m}, var);
  auto& conv = b.Node("Conv", {"x", "w", "b"}, {"c"}, "conv1");
  AttrInts(conv, "pads", {1, 1, 1, 1});
  AttrInts(conv, "kernel_shape", {k, k});
  auto& bn = b.Node("BatchNormalization", {"c", "scale", "beta", "mean", "var"}, {"bn"});
  AttrF(bn, "epsilon", eps);
  b.Node("Relu", {"bn"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  CAPTURE(KindNames(sg));
  REQUIRE(sg.ops.size() == 1);
  const Operator& op = sg.ops[0];
  REQUIRE(op.kind == OpKind::kConv2D);
  const auto& a = op.Attrs<Conv2DAttrs>();
  CHECK(a.padding == Padding::kSame);
  CHECK(a.activation == Activation::kRelu);
  CHECK(a.stride_h == 1);
  CHECK(Shape(sg, sg.inputs[0]) == V{1, 5, 6, 3});
  CHECK(Shape(sg, op.outputs[0]) == V{1, 5, 6, 4});
  CHECK(sg.tensors[sg.outputs[0]].name == "y");
  CHECK(Shape(sg, op.inputs[1]) == V{4, 3, 3, 3});
  const auto wf = Floats(sg, op.inputs[1]);
  const auto bf = Floats(sg, op.inputs[2]);
  for (int64_t o = 0; o < m; ++o) {
    const float s = scale[o] / std::sqrt(var[o] + eps);
    CHECK(bf[o] == Approx((bias[o] - mean[o]) * s + beta[o]).epsilon(1e-5));
    for (int64_t y = 0; y < k; ++y)
      for (int64_t x = 0; x < k; ++x)
        for (int64_t i = 0; i < c; ++i) {
          const float want = w[((o * c + i) * k + y) * k + x] * s;
          CHECK(wf[((o * k + y) * k + x) * c + i] == Approx(want).epsilon(1e-5));
        }
  }
}

TEST_CASE("onnx: batchnorm with a second consumer of the conv output is not folded") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 4, 4});
  b.Init("w", {2, 2, 1, 1}, {1, 2, 3, 4});
  for (const char* p : {"s", "bb", "mu", "var"}) b.Init(p, {2}, {1.0f, 2.0f});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("BatchNormalization", {"c", "s", "bb", "mu", "var"}, {"bn"});
  b.Node("Add", {"bn", "c"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  CAPTURE(KindNames(sg));
  REQUIRE(KindNames(sg) == "CONV_2D,MUL,ADD,ADD");
  // Per-channel MUL constant in NHWC broadcasts along the last axis: [C].
  const auto mul = Floats(sg, sg.ops[1].inputs[1]);
  REQUIRE(mul.size() == 2);
  CHECK(mul[0] == Approx(1.0f / std::sqrt(1.0f + 1e-5f)));
  CHECK(mul[1] == Approx(2.0f / std::sqrt(2.0f + 1e-5f)));
  // Conv weights unchanged: OIHW [2,2,1,1] -> OHWI [2,1,1,2] is the same order.
  CHECK(Floats(sg, sg.ops[0].inputs[1]) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("onnx: depthwise conv (group == C_in, C_out = C_in*M)") {
  const uint64_t seed = testing::TestSeed(77);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int64_t c = 3, mult = 2, m = c * mult, kh = 3, kw = 2;
  const auto w = RandomFloats(rng, m * kh * kw);
  OnnxBuilder b(13);
  b.Input("x", {1, c, 8, 8});
  b.Init("w", {m, 1, kh, kw}, w);
  auto& n = b.Node("Conv", {"x", "w"}, {"y"}, "dw");
  AttrI(n, "group", c);
  AttrInts(n, "strides", {2, 2});
  AttrS(n, "auto_pad", "VALID");
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(sg.ops.size() == 1);
  REQUIRE(sg.ops[0].kind == OpKind::kDepthwiseConv2D);
  const auto& a = sg.ops[0].Attrs<DepthwiseConv2DAttrs>();
  CHECK(a.depth_multiplier == 2);
  CHECK(a.padding == Padding::kValid);
  CHECK(a.stride_w == 2);
  CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{1, 3, 4, 6});  // (8-3)/2+1, (8-2)/2+1
  CHECK(Shape(sg, sg.ops[0].inputs[1]) == V{1, 3, 2, 6});
  const auto wf = Floats(sg, sg.ops[0].inputs[1]);
  for (int64_t o = 0; o < m; ++o)
    for (int64_t y = 0; y < kh; ++y)
      for (int64_t x = 0; x < kw; ++x) {
        CHECK(wf[(y * kw + x) * m + o] == w[(o * kh + y) * kw + x]);
      }
  // Zero bias is materialised so later folding has somewhere to go.
  CHECK(Floats(sg, sg.ops[0].inputs[2]) == std::vector<float>(6, 0.0f));
}

TEST_CASE("onnx: grouped ConvTranspose loads as an opaque operator saying why") {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 8, 8});
  b.Init("w", {4, 1, 1, 1}, std::vector<float>(4, 1.0f));
  auto& n = b.Node("ConvTranspose", {"x", "w"}, {"y"}, "grouped_deconv");
  AttrI(n, "group", 2);
  b.Output("y");
  CHECK_THAT(OpaqueReason(b, "ConvTranspose"), Catch::Contains("group=2"));
}

TEST_CASE("onnx: conv pads that are neither SAME nor VALID get an explicit PAD") {
  OnnxBuilder b(13);
  b.Input("x", {1, 1, 6, 6});
  b.Init("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto& n = b.Node("Conv", {"x", "w"}, {"y"});
  AttrInts(n, "pads", {2, 0, 1, 3});  // top, left, bottom, right
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "PAD,CONV_2D");
  CHECK(Ints(sg, sg.ops[0].inputs[1]) == V{0, 0, 2, 1, 0, 3, 0, 0});
  CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{1, 9, 9, 1});
  CHECK(sg.ops[1].Attrs<Conv2DAttrs>().padding == Padding::kValid);
  CHECK(Shape(sg, sg.ops[1].outputs[0]) == V{1, 7, 7, 1});

  // SAME_LOWER with an odd total pad puts the extra row first: not TFLite SAME either.
  OnnxBuilder b2(13);
  b2.Input("x", {1, 1, 6, 6});
  b2.Init("w", {1, 1, 2, 2}, std::vector<float>(4, 1.0f));
  auto& n2 = b2.Node("Conv", {"x", "w"}, {"y"});
  AttrS(n2, "auto_pad", "SAME_LOWER");
  b2.Output("y");
  Graph g2 = MustLoad(b2);
  REQUIRE(KindNames(g2.main()) == "PAD,CONV_2D");
  CHECK(Ints(g2.main(), g2.main().ops[0].inputs[1]) == V{0, 0, 1, 0, 1, 0, 0, 0});
  CHECK(Shape(g2.main(), g2.main().outputs[0]) == V{1, 6, 6, 1});
}

TEST_CASE("onnx: Gemm MLP -> FULLY_CONNECTED with [out,in] weights, alpha/beta, fused relu") {
  const uint64_t seed = testing::TestSeed(99);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const auto w1 = RandomFloats(rng, 4 * 8);  // transB=1: [N=4, K=8]
  const auto c1 = RandomFloats(rng, 4);
  const auto w2 = RandomFloats(rng, 4 * 3);  // transB=0: [K=4, N=3]
  OnnxBuilder b(13);
  b.Input("x", {1, 8});
  b.Init("w1", {4, 8}, w1);
  b.Init("c1", {4}, c1);
  b.Init("w2", {4, 3}, w2);
  auto& g1 = b.Node("Gemm", {"x", "w1", "c1"}, {"h"});
  AttrI(g1, "transB", 1);
  AttrF(g1, "alpha", 0.5f);
  AttrF(g1, "beta", 2.0f);
  b.Node("Relu", {"h"}, {"hr"});
  b.Node("Gemm", {"hr", "w2"}, {"logits"});
  b.Node("Softmax", {"logits"}, {"p"});
  b.Output("p");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "FULLY_CONNECTED,FULLY_CONNECTED,SOFTMAX");
  CHECK(sg.ops[0].Attrs<FullyConnectedAttrs>().activation == Activation::kRelu);
  CHECK(sg.ops[1].Attrs<FullyConnectedAttrs>().activation == Activation::kNone);
  const auto f1 = Floats(sg, sg.ops[0].inputs[1]);
  for (size_t i = 0; i < w1.size(); ++i) CHECK(f1[i] == 0.5f * w1[i]);
  const auto b1 = Floats(sg, sg.ops[0].inputs[2]);
  for (int j = 0; j < 4; ++j) CHECK(b1[j] == 2.0f * c1[j]);
  CHECK(Shape(sg, sg.ops[1].inputs[1]) == V{3, 4});
  const auto f2 = Floats(sg, sg.ops[1].inputs[1]);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 4; ++i) CHECK(f2[j * 4 + i] == w2[i * 3 + j]);
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 3});
}

TEST_CASE("onnx: MatMul + Add becomes FULLY_CONNECTED with bias; non-const B -> BATCH_MATMUL") {
  OnnxBuilder b(13);
  b.Input("x", {2, 5, 3});
  b.Input("z", {2, 4, 6});
  b.Init("w", {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  b.Init("bias", {4}, {0.5f, 1.5f, 2.5f, 3.5f});
  b.Node("MatMul", {"x", "w"}, {"mm"});
  b.Node("Add", {"bias", "mm"}, {"h"});
  b.Node("MatMul", {"h", "z"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "FULLY_CONNECTED,BATCH_MATMUL");
  CHECK(sg.ops[0].Attrs<FullyConnectedAttrs>().keep_num_dims);
  CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{2, 5, 4});
  CHECK(Floats(sg, sg.ops[0].inputs[1]) ==
        std::vector<float>{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12});
  CHECK(Floats(sg, sg.ops[0].inputs[2]) == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
  CHECK(Shape(sg, sg.outputs[0]) == V{2, 5, 6});
}

TEST_CASE("onnx: conv followed by a [C,1,1] Add folds into the conv bias") {
  OnnxBuilder b(13);
  b.Input("x", {1, 1, 4, 4});
  b.Init("w", {2, 1, 1, 1}, {1, 1});
  b.Init("cb", {2, 1, 1}, {3, 4});
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Add", {"c", "cb"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  REQUIRE(KindNames(g.main()) == "CONV_2D");
  CHECK(Floats(g.main(), g.main().ops[0].inputs[2]) == std::vector<float>{3, 4});
}

TEST_CASE("onnx: pools") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 7, 7});
  auto& mp = b.Node("MaxPool", {"x"}, {"p1"});
  AttrInts(mp, "kernel_shape", {3, 3});
  AttrInts(mp, "strides", {2, 2});
  AttrS(mp, "auto_pad", "SAME_UPPER");
  auto& ap = b.Node("AveragePool", {"p1"}, {"p2"});
  AttrInts(ap, "kernel_shape", {2, 2});
  AttrInts(ap, "strides", {2, 2});
  b.Node("GlobalAveragePool", {"p2"}, {"p3"});
  b.Output("p3");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "MAX_POOL_2D,AVERAGE_POOL_2D,MEAN");
  const auto& a0 = sg.ops[0].Attrs<Pool2DAttrs>();
  CHECK(a0.padding == Padding::kSame);
  CHECK(a0.filter_h == 3);
  CHECK(a0.stride_w == 2);
  CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{1, 4, 4, 2});
  CHECK(sg.ops[1].Attrs<Pool2DAttrs>().padding == Padding::kValid);
  CHECK(Shape(sg, sg.ops[1].outputs[0]) == V{1, 2, 2, 2});
  CHECK(Ints(sg, sg.ops[2].inputs[1]) == V{1, 2});
  CHECK(sg.ops[2].Attrs<ReduceAttrs>().keep_dims);
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 1, 1, 2});
}

TEST_CASE("onnx: pool pads that are not SAME") {
  SECTION("max pool pads with -inf then VALID") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 4, 4});
    auto& mp = b.Node("MaxPool", {"x"}, {"y"});
    AttrInts(mp, "kernel_shape", {2, 2});
    AttrInts(mp, "strides", {2, 2});
    AttrInts(mp, "pads", {1, 1, 1, 1});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "PADV2,MAX_POOL_2D");
    CHECK(Floats(sg, sg.ops[0].inputs[2])[0] == std::numeric_limits<float>::lowest());
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 3, 3, 1});
  }
  SECTION("ceil_mode max pool extends the trailing pad") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 5, 5});
    auto& mp = b.Node("MaxPool", {"x"}, {"y"});
    AttrInts(mp, "kernel_shape", {2, 2});
    AttrInts(mp, "strides", {2, 2});
    AttrI(mp, "ceil_mode", 1);
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    // floor: 2x2, ceil: 3x3. TFLite SAME for in=5,k=2,s=2 pads (0,1): exactly SAME.
    REQUIRE(KindNames(sg) == "MAX_POOL_2D");
    CHECK(sg.ops[0].Attrs<Pool2DAttrs>().padding == Padding::kSame);
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 3, 3, 1});
  }
  SECTION("average pool counting pads pads with zeros") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 4, 4});
    auto& ap = b.Node("AveragePool", {"x"}, {"y"});
    AttrInts(ap, "kernel_shape", {3, 3});
    AttrInts(ap, "pads", {1, 1, 1, 1});
    AttrI(ap, "count_include_pad", 1);
    b.Output("y");
    Graph g = MustLoad(b);
    REQUIRE(KindNames(g.main()) == "PAD,AVERAGE_POOL_2D");
  }
  SECTION("average pool excluding pads with SAME-equal pads is SAME") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 4, 4});
    auto& ap = b.Node("AveragePool", {"x"}, {"y"});
    AttrInts(ap, "kernel_shape", {3, 3});
    AttrInts(ap, "pads", {1, 1, 1, 1});
    b.Output("y");
    Graph g = MustLoad(b);
    REQUIRE(KindNames(g.main()) == "AVERAGE_POOL_2D");
    CHECK(g.main().ops[0].Attrs<Pool2DAttrs>().padding == Padding::kSame);
  }
  SECTION("average pool excluding non-SAME pads: PAD, AVERAGE_POOL_2D, per-position rescale") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 4, 4});
    auto& ap = b.Node("AveragePool", {"x"}, {"y"}, "avg_odd");
    AttrInts(ap, "kernel_shape", {3, 3});
    AttrInts(ap, "pads", {2, 0, 0, 0});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "PAD,AVERAGE_POOL_2D,MUL");
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 4, 2, 1});
    // Real rows per window: 1, 2, 3, 3; real columns: 3, 3. Rescale = 9 / (rows * cols).
    CHECK(Floats(sg, sg.ops[2].inputs[1]) == std::vector<float>{3, 3, 1.5f, 1.5f, 1, 1, 1, 1});
  }
  SECTION("average pool window entirely in padding loads as an opaque operator") {
    OnnxBuilder b(13);
    b.Input("x", {1, 1, 4, 4});
    auto& ap = b.Node("AveragePool", {"x"}, {"y"}, "avg_all_pad");
    AttrInts(ap, "kernel_shape", {2, 2});
    AttrInts(ap, "pads", {2, 0, 0, 0});
    b.Output("y");
    CHECK_THAT(OpaqueReason(b, "AveragePool"), Catch::Contains("entirely in the padding"));
  }
}

TEST_CASE("onnx: Flatten of an NHWC activation restores NCHW order before the Gemm") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 3, 3});
  b.Init("w", {2, 2, 1, 1}, {1, 0, 0, 1});
  b.Init("fc", {5, 18}, std::vector<float>(90, 0.25f));
  b.Node("Conv", {"x", "w"}, {"c"});
  b.Node("Flatten", {"c"}, {"f"});
  auto& gm = b.Node("Gemm", {"f", "fc"}, {"y"});
  AttrI(gm, "transB", 1);
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "CONV_2D,TRANSPOSE,RESHAPE,FULLY_CONNECTED");
  CHECK(Ints(sg, sg.ops[1].inputs[1]) == V{0, 3, 1, 2});
  CHECK(Shape(sg, sg.ops[1].outputs[0]) == V{1, 2, 3, 3});
  CHECK(Shape(sg, sg.ops[2].outputs[0]) == V{1, 18});
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 5});
}

TEST_CASE("onnx: Flatten after a global pool needs no transpose") {
  OnnxBuilder b(13);
  b.Input("x", {1, 8, 5, 5});
  b.Node("GlobalAveragePool", {"x"}, {"g"});
  b.Node("Flatten", {"g"}, {"f"});
  b.Output("f");
  Graph g = MustLoad(b);
  REQUIRE(KindNames(g.main()) == "MEAN,RESHAPE");
  CHECK(Shape(g.main(), g.main().outputs[0]) == V{1, 8});
}

TEST_CASE("onnx: PyTorch-style flatten via Shape/Gather/Unsqueeze/Concat/Reshape folds") {
  OnnxBuilder b(11);
  b.Input("x", {1, 4, 1, 1});
  b.Node("Shape", {"x"}, {"s"});
  auto& c0 = b.Node("Constant", {}, {"zero"});
  auto* a = c0.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_int64_data(0);
  b.Node("Gather", {"s", "zero"}, {"n"});
  auto& u = b.Node("Unsqueeze", {"n"}, {"n1"});
  AttrInts(u, "axes", {0});
  b.InitI64("minus1", {1}, {-1});
  auto& cat = b.Node("Concat", {"n1", "minus1"}, {"shape"});
  AttrI(cat, "axis", 0);
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  REQUIRE(KindNames(g.main()) == "RESHAPE");
  CHECK(Shape(g.main(), g.main().outputs[0]) == V{1, 4});
}

TEST_CASE("onnx: Concat on NHWC activations remaps the channel axis") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 4, 4});
  b.Init("w1", {3, 2, 1, 1}, std::vector<float>(6, 1.0f));
  b.Init("w2", {5, 2, 1, 1}, std::vector<float>(10, 1.0f));
  b.Node("Conv", {"x", "w1"}, {"a"});
  b.Node("Conv", {"x", "w2"}, {"b"});
  auto& cat = b.Node("Concat", {"a", "b"}, {"y"});
  AttrI(cat, "axis", 1);
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "CONV_2D,CONV_2D,CONCATENATION");
  CHECK(sg.ops[2].Attrs<ConcatenationAttrs>().axis == 3);
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 4, 4, 8});

  OnnxBuilder b2(13);
  b2.Input("p", {2, 3});
  b2.Input("q", {2, 5});
  auto& c2 = b2.Node("Concat", {"p", "q"}, {"y"});
  AttrI(c2, "axis", -1);
  b2.Output("y");
  Graph g2 = MustLoad(b2);
  CHECK(g2.main().ops[0].Attrs<ConcatenationAttrs>().axis == 1);
  CHECK(Shape(g2.main(), g2.main().outputs[0]) == V{2, 8});
}

TEST_CASE("onnx: Clip variants across opsets") {
  auto clip_model = [](int64_t opset, float lo, float hi, bool after_conv, bool omit_min = false) {
    OnnxBuilder b(opset);
    b.Input("x", {1, 2, 3, 3});
    std::string src = "x";
    if (after_conv) {
      b.Init("w", {2, 2, 1, 1}, {1, 0, 0, 1});
      b.Node("Conv", {"x", "w"}, {"c"});
      src = "c";
    }
    if (opset < 11) {
      auto& n = b.Node("Clip", {src}, {"y"});
      AttrF(n, "min", lo);
      AttrF(n, "max", hi);
    } else {
      b.Init("lo", {}, {lo});
      b.Init("hi", {}, {hi});
      b.Node("Clip", {src, omit_min ? "" : "lo", "hi"}, {"y"});
    }
    b.Output("y");
    return b;
  };
  {
    Graph g = MustLoad(clip_model(6, 0, 6, true));
    REQUIRE(KindNames(g.main()) == "CONV_2D");
    CHECK(g.main().ops[0].Attrs<Conv2DAttrs>().activation == Activation::kRelu6);
  }
  {
    Graph g = MustLoad(clip_model(13, 0, 6, true));
    REQUIRE(KindNames(g.main()) == "CONV_2D");
    CHECK(g.main().ops[0].Attrs<Conv2DAttrs>().activation == Activation::kRelu6);
  }
  CHECK(KindNames(MustLoad(clip_model(13, -1, 1, false)).main()) == "RELU_N1_TO_1");
  CHECK(KindNames(MustLoad(clip_model(13, 0, 6, false)).main()) == "RELU6");
  CHECK(KindNames(MustLoad(clip_model(13, 0, std::numeric_limits<float>::infinity(), false))
                      .main()) == "RELU");
  {
    Graph g = MustLoad(clip_model(11, 0.5f, 2.0f, false));
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "MAXIMUM,MINIMUM");
    CHECK(Floats(sg, sg.ops[0].inputs[1]) == std::vector<float>{0.5f});
    CHECK(Floats(sg, sg.ops[1].inputs[1]) == std::vector<float>{2.0f});
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 3, 3, 2});
  }
  CHECK(KindNames(MustLoad(clip_model(13, 0, 3, false, true)).main()) == "MINIMUM");
}

TEST_CASE("onnx: Pad remaps pads on NHWC tensors; attribute form before opset 11") {
  {
    OnnxBuilder b(11);
    b.Input("x", {1, 2, 3, 3});
    b.Init("w", {2, 2, 1, 1}, {1, 0, 0, 1});
    b.InitI64("pads", {8}, {0, 0, 1, 2, 0, 0, 3, 4});
    b.Node("Conv", {"x", "w"}, {"c"});
    b.Node("Pad", {"c", "pads"}, {"y"});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "CONV_2D,PAD");
    CHECK(Ints(sg, sg.ops[1].inputs[1]) == V{0, 0, 1, 3, 2, 4, 0, 0});
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 7, 9, 2});
  }
  {
    OnnxBuilder b(2);
    b.Input("x", {2, 3});
    auto& n = b.Node("Pad", {"x"}, {"y"});
    AttrInts(n, "pads", {0, 1, 0, 2});
    AttrF(n, "value", 1.5f);
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "PADV2");
    CHECK(Ints(sg, sg.ops[0].inputs[1]) == V{0, 0, 1, 2});
    CHECK(Floats(sg, sg.ops[0].inputs[2]) == std::vector<float>{1.5f});
    CHECK(Shape(sg, sg.outputs[0]) == V{2, 6});
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3});
    b.InitI64("pads", {4}, {0, 1, 0, 1});
    auto& n = b.Node("Pad", {"x", "pads"}, {"y"}, "reflect_pad");
    AttrS(n, "mode", "reflect");
    b.Output("y");
    CHECK_THAT(OpaqueReason(b, "Pad"), Catch::Contains("reflect"));
  }
}

TEST_CASE("onnx: Squeeze/Unsqueeze axes as attribute (opset 11) and input (opset 13)") {
  for (int64_t opset : {11, 13}) {
    CAPTURE(opset);
    OnnxBuilder b(opset);
    b.Input("x", {3, 1, 4});
    if (opset >= 13) {
      b.InitI64("ax1", {1}, {1});
      b.InitI64("ax2", {2}, {0, -1});
      b.Node("Squeeze", {"x", "ax1"}, {"s"});
      b.Node("Unsqueeze", {"s", "ax2"}, {"y"});
    } else {
      AttrInts(b.Node("Squeeze", {"x"}, {"s"}), "axes", {1});
      AttrInts(b.Node("Unsqueeze", {"s"}, {"y"}), "axes", {0, -1});
    }
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "SQUEEZE,RESHAPE");
    CHECK(sg.ops[0].Attrs<SqueezeAttrs>().squeeze_dims == V{1});
    CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{3, 4});
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 3, 4, 1});
  }
}

TEST_CASE("onnx: Softmax axis semantics before and after opset 13") {
  {
    // Opset 11: axis=1 coerces [2,3,4] to [2,12].
    OnnxBuilder b(11);
    b.Input("x", {2, 3, 4});
    b.Node("Softmax", {"x"}, {"y"});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "RESHAPE,SOFTMAX,RESHAPE");
    CHECK(Shape(sg, sg.ops[0].outputs[0]) == V{2, 12});
    CHECK(Shape(sg, sg.outputs[0]) == V{2, 3, 4});
  }
  {
    // Opset 13: default axis -1 is the innermost.
    OnnxBuilder b(13);
    b.Input("x", {2, 3, 4});
    b.Node("Softmax", {"x"}, {"y"});
    b.Output("y");
    CHECK(KindNames(MustLoad(b).main()) == "SOFTMAX");
  }
  {
    // Opset 13 over channels of an NHWC activation: channels are innermost physically.
    OnnxBuilder b(13);
    b.Input("x", {1, 3, 2, 2});
    auto& n = b.Node("Softmax", {"x"}, {"y"});
    AttrI(n, "axis", 1);
    b.Output("y");
    Graph g = MustLoad(b);
    CHECK(KindNames(g.main()) == "SOFTMAX");
    CHECK(Shape(g.main(), g.main().outputs[0]) == V{1, 2, 2, 3});
  }
  {
    OnnxBuilder b(13);
    b.Input("x", {2, 3, 4});
    auto& n = b.Node("Softmax", {"x"}, {"y"}, "mid_softmax");
    AttrI(n, "axis", 1);
    b.Output("y");
    CHECK_THAT(OpaqueReason(b, "Softmax"), Catch::Contains("softmax over axis"));
  }
}

TEST_CASE("onnx: a channels-last input fed through Transpose stays NHWC with no transposes") {
  OnnxBuilder b(13);
  b.Input("image", {1, 8, 8, 3});
  b.Init("w", {4, 3, 3, 3}, std::vector<float>(108, 0.5f));
  AttrInts(b.Node("Transpose", {"image"}, {"nchw"}), "perm", {0, 3, 1, 2});
  auto& conv = b.Node("Conv", {"nchw", "w"}, {"c"});
  AttrS(conv, "auto_pad", "SAME_UPPER");
  AttrInts(b.Node("Transpose", {"c"}, {"y"}), "perm", {0, 2, 3, 1});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "CONV_2D");
  CHECK(Shape(sg, sg.inputs[0]) == V{1, 8, 8, 3});
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 8, 8, 4});
  CHECK(sg.tensors[sg.outputs[0]].name == "y");
}

TEST_CASE("onnx: Transpose of an NHWC activation uses the physical permutation") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 3, 4});  // becomes NHWC [1,3,4,2]
  b.Node("Relu", {"x"}, {"r"});
  AttrInts(b.Node("Transpose", {"r"}, {"y"}), "perm", {0, 1, 3, 2});  // logical [1,2,4,3]
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "RELU,TRANSPOSE");
  CHECK(Shape(sg, sg.inputs[0]) == V{1, 3, 4, 2});
  // The output is kept in ONNX order: out[j] = phys[kToNchw[perm[j]]] = [0,3,2,1].
  CHECK(Ints(sg, sg.ops[1].inputs[1]) == V{0, 3, 2, 1});
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 2, 4, 3});
}

TEST_CASE("onnx: ConvTranspose weights and padding") {
  const uint64_t seed = testing::TestSeed(5);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int64_t c = 2, m = 3, k = 4;
  const auto w = RandomFloats(rng, c * m * k * k);
  {
    // DCGAN-style k=4, s=2, p=1: output 2x input, leading pad 1 = TFLite SAME's.
    OnnxBuilder b(13);
    b.Input("x", {1, c, 5, 5});
    b.Init("w", {c, m, k, k}, w);
    auto& n = b.Node("ConvTranspose", {"x", "w"}, {"y"});
    AttrInts(n, "strides", {2, 2});
    AttrInts(n, "pads", {1, 1, 1, 1});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "TRANSPOSE_CONV");
    const Operator& op = sg.ops[0];
    CHECK(op.Attrs<TransposeConvAttrs>().padding == Padding::kSame);
    CHECK(Ints(sg, op.inputs[0]) == V{1, 10, 10, 3});
    CHECK(Shape(sg, op.inputs[1]) == V{3, 4, 4, 2});
    const auto wf = Floats(sg, op.inputs[1]);
    for (int64_t o = 0; o < m; ++o)
      for (int64_t y = 0; y < k; ++y)
        for (int64_t x = 0; x < k; ++x)
          for (int64_t i = 0; i < c; ++i)
            CHECK(wf[((o * k + y) * k + x) * c + i] == w[((i * m + o) * k + y) * k + x]);
  }
  {
    // k=3, s=2, p=1, output_padding=1: leading pad 1 but TFLite SAME's is 0 -> VALID + SLICE.
    OnnxBuilder b(13);
    b.Input("x", {1, c, 5, 5});
    b.Init("w", {c, m, 3, 3}, std::vector<float>(c * m * 9, 1.0f));
    auto& n = b.Node("ConvTranspose", {"x", "w"}, {"y"});
    AttrInts(n, "strides", {2, 2});
    AttrInts(n, "pads", {1, 1, 1, 1});
    AttrInts(n, "output_padding", {1, 1});
    b.Output("y");
    Graph g = MustLoad(b);
    const Subgraph& sg = g.main();
    REQUIRE(KindNames(sg) == "TRANSPOSE_CONV,SLICE");
    CHECK(sg.ops[0].Attrs<TransposeConvAttrs>().padding == Padding::kValid);
    CHECK(Ints(sg, sg.ops[0].inputs[0]) == V{1, 11, 11, 3});
    CHECK(Ints(sg, sg.ops[1].inputs[1]) == V{0, 1, 1, 0});
    CHECK(Shape(sg, sg.outputs[0]) == V{1, 10, 10, 3});
  }
}

TEST_CASE("onnx: elementwise with broadcast constants on NHWC activations") {
  OnnxBuilder b(13);
  b.Input("x", {1, 3, 2, 2});
  b.Init("cw", {3, 1, 1}, {1, 2, 3});
  b.Init("s", {}, {0.5f});
  b.Node("Mul", {"x", "cw"}, {"m"});
  b.Node("Sub", {"m", "s"}, {"d"});
  b.Node("Sigmoid", {"d"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "MUL,SUB,LOGISTIC");
  // [3,1,1] lifted to [1,3,1,1] and stored NHWC as [1,1,1,3].
  CHECK(Shape(sg, sg.ops[0].inputs[1]) == V{1, 1, 1, 3});
  CHECK(Floats(sg, sg.ops[0].inputs[1]) == std::vector<float>{1, 2, 3});
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 2, 2, 3});
}

TEST_CASE("onnx: other activations, Identity and Dropout") {
  OnnxBuilder b(14);
  b.Input("x", {1, 6});
  auto& lr = b.Node("LeakyRelu", {"x"}, {"a"});
  AttrF(lr, "alpha", 0.1f);
  b.Node("Identity", {"a"}, {"b"});
  b.Node("Dropout", {"b"}, {"c"});
  b.Node("HardSwish", {"c"}, {"d"});
  b.Node("Tanh", {"d"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "LEAKY_RELU,HARD_SWISH,TANH");
  CHECK(sg.ops[0].Attrs<LeakyReluAttrs>().alpha == 0.1f);
}

TEST_CASE("onnx: Reshape resolves 0 and -1; reshape of NHWC data goes through NCHW") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 3, 4});
  b.InitI64("shape", {3}, {0, -1, 4});
  b.Node("Reshape", {"x", "shape"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "TRANSPOSE,RESHAPE");
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 6, 4});
  CHECK(sg.ops[1].Attrs<ReshapeAttrs>().new_shape == V{1, 6, 4});
}

TEST_CASE("onnx: symbolic batch resolves to 1 and is recorded in shape_signature") {
  OnnxBuilder b(13);
  b.Input("x", {-1, 3, 4, 4});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  Graph g = MustLoad(b);
  const Tensor& in = g.main().tensors[g.main().inputs[0]];
  CHECK(in.shape == V{1, 4, 4, 3});
  CHECK(in.shape_signature == V{-1, 4, 4, 3});
  CHECK(g.source_format == ModelFormat::kOnnx);
  CHECK(g.metadata.at("onnx_opset") == "13");
}

TEST_CASE("onnx: grouped conv -> SPLIT + per-group CONV_2D + CONCATENATION, BN folded") {
  const uint64_t seed = testing::TestSeed(31);
  CAPTURE(seed);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const int64_t c = 4, m = 6, g = 2, k = 3;
  const auto w = RandomFloats(rng, m * (c / g) * k * k);
  const auto scale = RandomFloats(rng, m, 0.5f, 2.0f);
  OnnxBuilder b(13);
  b.Input("x", {1, c, 5, 5});
  b.Init("w", {m, c / g, k, k}, w);
  b.Init("s", {m}, scale);
  b.Init("z", {m}, std::vector<float>(m, 0.0f));
  b.Init("one", {m}, std::vector<float>(m, 1.0f));
  auto& conv = b.Node("Conv", {"x", "w"}, {"c"}, "gconv");
  AttrI(conv, "group", g);
  AttrInts(conv, "pads", {1, 1, 1, 1});
  b.Node("BatchNormalization", {"c", "s", "z", "z", "one"}, {"bn"});
  b.Node("Relu", {"bn"}, {"y"});
  b.Output("y");
  Graph gr = MustLoad(b);
  const Subgraph& sg = gr.main();
  REQUIRE(KindNames(sg) == "SPLIT,CONV_2D,CONV_2D,CONCATENATION");
  CHECK(Ints(sg, sg.ops[0].inputs[0]) == V{3});
  CHECK(sg.ops[0].Attrs<SplitAttrs>().num_splits == 2);
  CHECK(sg.ops[3].Attrs<ConcatenationAttrs>().axis == 3);
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 5, 5, 6});
  const int64_t mg = m / g, cg = c / g;
  for (int64_t gi = 0; gi < g; ++gi) {
    const Operator& op = sg.ops[1 + gi];
    CHECK(op.Attrs<Conv2DAttrs>().activation == Activation::kRelu);
    CHECK(op.Attrs<Conv2DAttrs>().padding == Padding::kSame);
    CHECK(Shape(sg, op.inputs[0]) == V{1, 5, 5, 2});
    CHECK(Shape(sg, op.inputs[1]) == V{3, 3, 3, 2});
    const auto wf = Floats(sg, op.inputs[1]);
    for (int64_t o = 0; o < mg; ++o)
      for (int64_t y = 0; y < k; ++y)
        for (int64_t x = 0; x < k; ++x)
          for (int64_t i = 0; i < cg; ++i) {
            const int64_t go = gi * mg + o;
            const float s = scale[go] / std::sqrt(1.0f + 1e-5f);
            CHECK(wf[((o * k + y) * k + x) * cg + i] ==
                  Approx(w[((go * cg + i) * k + y) * k + x] * s).epsilon(1e-5));
          }
  }
}

TEST_CASE("onnx: Sum, PRelu, ReduceMean over H,W") {
  OnnxBuilder b(13);
  b.Input("x", {1, 3, 4, 4});
  b.Init("slope", {3, 1, 1}, {0.1f, 0.2f, 0.3f});
  b.Node("Sum", {"x", "x", "x"}, {"s"});
  b.Node("PRelu", {"s", "slope"}, {"p"});
  auto& rm = b.Node("ReduceMean", {"p"}, {"y"});
  AttrInts(rm, "axes", {2, 3});
  AttrI(rm, "keepdims", 0);
  b.Output("y");
  Graph g = MustLoad(b);
  const Subgraph& sg = g.main();
  REQUIRE(KindNames(sg) == "ADD,ADD,PRELU,MEAN");
  CHECK(Shape(sg, sg.ops[2].inputs[1]) == V{1, 1, 1, 3});
  CHECK(Ints(sg, sg.ops[3].inputs[1]) == V{1, 2});
  CHECK_FALSE(sg.ops[3].Attrs<ReduceAttrs>().keep_dims);
  CHECK(Shape(sg, sg.outputs[0]) == V{1, 3});
}

TEST_CASE("onnx: unknown operators load as opaque operators named by their op type") {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  b.Node("Einsum", {"x"}, {"y"}, "my_einsum");
  b.Output("y");
  CHECK_THAT(OpaqueReason(b, "Einsum"),
             Catch::Contains("'Einsum' is not supported") && Catch::Contains("no shape"));
}

}  // namespace
}  // namespace mica
