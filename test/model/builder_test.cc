// GraphBuilder and shape inference: hand-computed shapes, sticky errors, seeded weights.
#include "mica/model/builder.h"

#include <cmath>
#include <cstring>

#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using Shape = std::vector<int32_t>;

const Shape& ShapeOf(const GraphBuilder& b, int32_t t) {
  return b.subgraph().tensors.at(static_cast<size_t>(t)).shape;
}

TEST_CASE("SeededRng reproduces the published SplitMix64 stream") {
  // Reference values of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
  SeededRng rng(0);
  CHECK(rng.Next() == 0xE220A8397B1DCDAFull);
  CHECK(rng.Next() == 0x6E789E6AA1B965F4ull);
  CHECK(rng.Next() == 0x06C45D188009454Full);
  SeededRng a(42), b(42);
  for (int i = 0; i < 1000; ++i) {
    const float u = a.Uniform01();
    REQUIRE(u >= 0.0f);
    REQUIRE(u < 1.0f);
    REQUIRE(u == b.Uniform01());
  }
}

TEST_CASE("ConvOutputSize follows TFLite SAME/VALID rules") {
  CHECK(ConvOutputSize(49, 10, 2, 1, Padding::kSame) == 25);
  CHECK(ConvOutputSize(10, 4, 2, 1, Padding::kSame) == 5);
  CHECK(ConvOutputSize(49, 10, 2, 1, Padding::kValid) == 20);  // floor(39/2)+1
  CHECK(ConvOutputSize(10, 4, 2, 1, Padding::kValid) == 4);
  CHECK(ConvOutputSize(7, 3, 1, 2, Padding::kValid) == 3);  // effective filter 5
  CHECK(ConvOutputSize(7, 3, 1, 3, Padding::kValid) == 1);  // effective filter 7
  CHECK(ConvOutputSize(7, 3, 1, 4, Padding::kValid) == 0);  // does not fit
  CHECK(ConvOutputSize(96, 3, 2, 1, Padding::kSame) == 48);
  CHECK(ConvOutputSize(5, 3, 2, 1, Padding::kSame) == 3);
}

TEST_CASE("Builder infers convolution, pool and FC shapes") {
  GraphBuilder b("t", 3);
  const int32_t x = b.Input("x", {1, 49, 10, 1});
  Conv2DAttrs ca;
  ca.padding = Padding::kSame;
  ca.stride_h = ca.stride_w = 2;
  const int32_t c = b.Conv2D(x, b.HeWeights("w", {64, 10, 4, 1}), b.RandomBias("b", 64), ca);
  CHECK(ShapeOf(b, c) == Shape{1, 25, 5, 64});
  ca.padding = Padding::kValid;
  const int32_t cv = b.Conv2D(x, b.HeWeights("w2", {8, 10, 4, 1}), kNoTensor, ca);
  CHECK(ShapeOf(b, cv) == Shape{1, 20, 4, 8});
  Conv2DAttrs dil;
  dil.dilation_h = 2;
  dil.dilation_w = 3;
  const int32_t cd = b.Conv2D(x, b.HeWeights("w3", {4, 3, 3, 1}), kNoTensor, dil);
  CHECK(ShapeOf(b, cd) == Shape{1, 45, 4, 4});  // 49-5+1, 10-7+1

  DepthwiseConv2DAttrs da;
  da.padding = Padding::kSame;
  da.depth_multiplier = 2;
  const int32_t d =
      b.DepthwiseConv2D(c, b.HeWeights("dw", {1, 3, 3, 128}, true), b.RandomBias("db", 128), da);
  CHECK(ShapeOf(b, d) == Shape{1, 25, 5, 128});

  Pool2DAttrs pa;
  pa.filter_h = 25;
  pa.filter_w = 5;
  pa.stride_h = pa.stride_w = 1;
  const int32_t p = b.AveragePool2D(d, pa);
  CHECK(ShapeOf(b, p) == Shape{1, 1, 1, 128});
  Pool2DAttrs mp;
  mp.padding = Padding::kSame;
  mp.filter_h = mp.filter_w = 2;
  mp.stride_h = mp.stride_w = 2;
  CHECK(ShapeOf(b, b.MaxPool2D(d, mp)) == Shape{1, 13, 3, 128});

  // FULLY_CONNECTED flattens everything but the depth.
  const int32_t fc = b.FullyConnected(p, b.HeWeights("fw", {12, 128}), b.RandomBias("fb", 12));
  CHECK(ShapeOf(b, fc) == Shape{1, 12});
  const int32_t sm = b.Softmax(fc);
  CHECK(ShapeOf(b, sm) == Shape{1, 12});
  b.Output(sm);
  auto g = b.Build();
  REQUIRE(g.ok());
  CHECK(g->source_format == ModelFormat::kBuilt);
  CHECK(g->main().inputs == std::vector<int32_t>{x});
  CHECK(g->main().outputs == std::vector<int32_t>{sm});
  CHECK(g->main().ops.size() == 8);
  CHECK(g->main().ops[0].kind == OpKind::kConv2D);
  CHECK(g->main().ops[0].Attrs<Conv2DAttrs>().stride_h == 2);
  CHECK(g->main().ops[1].inputs[2] == kNoTensor);  // no bias
}

TEST_CASE("Builder infers elementwise broadcast and data movement shapes") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 4, 4, 8});
  const int32_t y = b.Input("y", {1, 4, 1, 8});
  CHECK(ShapeOf(b, b.Add(x, b.RandomConstant("c", {8}, -1, 1))) == Shape{1, 4, 4, 8});
  CHECK(ShapeOf(b, b.Mul(y, x, Activation::kRelu)) == Shape{1, 4, 4, 8});
  CHECK(ShapeOf(b, b.Reshape(x, {-1, 8})) == Shape{16, 8});
  CHECK(ShapeOf(b, b.Reshape(x, {2, -1, 4})) == Shape{2, 16, 4});
  CHECK(ShapeOf(b, b.Concatenation({x, y}, 2)) == Shape{1, 4, 5, 8});
  CHECK(ShapeOf(b, b.Concatenation({x, x}, -1)) == Shape{1, 4, 4, 16});
  CHECK(ShapeOf(b, b.Mean(x, {1, 2}, true)) == Shape{1, 1, 1, 8});
  CHECK(ShapeOf(b, b.Mean(x, {1, 2}, false)) == Shape{1, 8});
  CHECK(ShapeOf(b, b.Pad(x, {{0, 0}, {1, 1}, {2, 0}, {0, 3}})) == Shape{1, 6, 6, 11});
  CHECK(ShapeOf(b, b.Unary(OpKind::kRelu6, x)) == Shape{1, 4, 4, 8});
  const int32_t perm = b.Int32Constant("perm", {4}, {0, 3, 1, 2});
  CHECK(ShapeOf(b, b.AddOp(OpKind::kTranspose, {}, {x, perm})[0]) == Shape{1, 8, 4, 4});
  CHECK(ShapeOf(b, b.AddOp(OpKind::kSqueeze, SqueezeAttrs{{0}}, {x})[0]) == Shape{4, 4, 8});
  const int32_t m = b.Input("m", {2, 3, 4});
  const int32_t n = b.Input("n", {4, 5});
  CHECK(ShapeOf(b, b.AddOp(OpKind::kBatchMatMul, BatchMatMulAttrs{}, {m, n})[0]) ==
        Shape{2, 3, 5});
  REQUIRE(b.status().ok());
  // Reshape stores the resolved target both as option and as a constant shape operand.
  const Operator& r = b.subgraph().ops[2];
  CHECK(r.Attrs<ReshapeAttrs>().new_shape == Shape{16, 8});
  const Tensor& shape_t = b.subgraph().tensors[static_cast<size_t>(r.inputs[1])];
  REQUIRE(shape_t.is_constant());
  REQUIRE(shape_t.shape == Shape{2});
  CHECK(shape_t.data.as<int32_t>()[0] == 16);
  CHECK(shape_t.data.as<int32_t>()[1] == 8);
}

TEST_CASE("Builder errors are sticky and name the problem") {
  SECTION("broadcast mismatch") {
    GraphBuilder b;
    const int32_t x = b.Input("x", {1, 4, 4, 8});
    const int32_t c = b.RandomConstant("c", {3}, 0, 1);
    const int32_t bad = b.Add(x, c, Activation::kNone, "bad_add");
    CHECK(bad == kNoTensor);
    // Later calls do nothing and keep the first error.
    CHECK(b.Unary(OpKind::kRelu, bad) == kNoTensor);
    CHECK(b.Input("late", {1}) == kNoTensor);
    auto g = b.Build();
    REQUIRE_FALSE(g.ok());
    CHECK(g.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(g.status().message()).find("bad_add") != std::string::npos);
    CHECK(std::string(g.status().message()).find("broadcast") != std::string::npos);
  }
  SECTION("constant size mismatch") {
    GraphBuilder b;
    CHECK(b.Constant("k", {2, 2}, DType::kFloat32, std::vector<uint8_t>(15)) == kNoTensor);
    CHECK(std::string(b.status().message()).find("k: constant has 15 bytes") == 0);
  }
  SECTION("negative dimension") {
    GraphBuilder b;
    CHECK(b.Input("x", {1, -3}) == kNoTensor);
    CHECK_FALSE(b.Build().ok());
  }
  SECTION("filter larger than a VALID input") {
    GraphBuilder b;
    const int32_t x = b.Input("x", {1, 3, 3, 1});
    CHECK(b.Conv2D(x, b.HeWeights("w", {1, 5, 5, 1}), kNoTensor, Conv2DAttrs{}) == kNoTensor);
    CHECK_FALSE(b.status().ok());
  }
  SECTION("reshape element count") {
    GraphBuilder b;
    const int32_t x = b.Input("x", {1, 10});
    CHECK(b.Reshape(x, {3, -1}) == kNoTensor);
    CHECK(std::string(b.status().message()).find("cannot reshape") != std::string::npos);
  }
  SECTION("unknown operand index") {
    GraphBuilder b;
    CHECK(b.Unary(OpKind::kRelu, 7) == kNoTensor);
    CHECK_FALSE(b.status().ok());
  }
  SECTION("mismatched attributes") {
    GraphBuilder b;
    const int32_t x = b.Input("x", {1, 4, 4, 1});
    CHECK(b.AddOp(OpKind::kConv2D, Pool2DAttrs{}, {x, b.HeWeights("w", {1, 1, 1, 1})})[0] ==
          kNoTensor);
    CHECK(std::string(b.status().message()).find("attributes") != std::string::npos);
  }
}

TEST_CASE("Builder constants live in graph storage and weights are seeded He-uniform") {
  const uint64_t seed = testing::TestSeed(11);
  CAPTURE(seed);
  auto make = [](uint64_t s) {
    GraphBuilder b("w", s);
    const int32_t x = b.Input("x", {1, 2, 2, 50});
    const int32_t w = b.HeWeights("w", {30, 1, 1, 50});
    b.Output(b.Conv2D(x, w, kNoTensor, Conv2DAttrs{}));
    return b.Build();
  };
  auto g1 = make(seed), g2 = make(seed), g3 = make(seed + 1);
  REQUIRE(g1.ok());
  REQUIRE(g2.ok());
  REQUIRE(g3.ok());
  const Tensor& w1 = g1->main().tensors[1];
  const Tensor& w2 = g2->main().tensors[1];
  const Tensor& w3 = g3->main().tensors[1];
  REQUIRE(w1.is_constant());
  REQUIRE(w1.data.size == 30 * 50 * 4);
  CHECK(std::memcmp(w1.data.bytes(), w2.data.bytes(), w1.data.size) == 0);
  CHECK(std::memcmp(w1.data.bytes(), w3.data.bytes(), w1.data.size) != 0);
  // The view points into one of the Graph's own buffers.
  bool owned = false;
  for (const auto& buf : g1->storage) {
    owned |= w1.data.bytes() >= buf->data() && w1.data.bytes() + w1.data.size <= buf->data() + buf->size();
  }
  CHECK(owned);
  // He uniform: |w| < sqrt(6/50), with a spread that fills the range.
  const float limit = std::sqrt(6.0f / 50.0f);
  float lo = 1, hi = -1;
  double sum = 0;
  for (int i = 0; i < 1500; ++i) {
    const float v = w1.data.as<float>()[i];
    REQUIRE(std::fabs(v) <= limit);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  CHECK(lo < -0.9f * limit);
  CHECK(hi > 0.9f * limit);
  CHECK(std::fabs(sum / 1500) < 0.05 * limit);
  // A copy of the Graph shares the constant bytes.
  Graph copy = *g1;
  CHECK(copy.main().tensors[1].data.bytes() == w1.data.bytes());
}

TEST_CASE("InferOutputShapes reports unsupported ops") {
  Subgraph sg;
  Operator op;
  op.kind = OpKind::kGather;
  auto r = InferOutputShapes(sg, op);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace mica
