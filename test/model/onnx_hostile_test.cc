// ONNX reader on malformed and hostile input: every case gives an error naming the problem
// (and the node, where there is one), never a crash.
#include <random>
#include <string>

#include "model/onnx_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using onnx_test::AttrI;
using onnx_test::AttrInts;
using onnx_test::OnnxBuilder;

// A small valid model: conv + bn + relu + pool + flatten + gemm.
OnnxBuilder SmallModel() {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 6, 6});
  b.Init("w", {4, 2, 3, 3}, std::vector<float>(72, 0.1f));
  for (const char* p : {"s", "bb", "mu", "var"}) b.Init(p, {4}, {1, 1, 1, 1});
  b.Init("fc", {3, 4}, std::vector<float>(12, 0.2f));
  b.Node("Conv", {"x", "w"}, {"c"}, "conv");
  b.Node("BatchNormalization", {"c", "s", "bb", "mu", "var"}, {"bn"}, "bn");
  b.Node("Relu", {"bn"}, {"r"}, "relu");
  b.Node("GlobalAveragePool", {"r"}, {"g"}, "gap");
  b.Node("Flatten", {"g"}, {"f"}, "flatten");
  AttrI(b.Node("Gemm", {"f", "fc"}, {"y"}, "fc"), "transB", 1);
  b.Output("y");
  return b;
}

// The error of a refused model, or, for a model that loads with unsupported nodes as opaque
// operators (unsupported is not invalid), their reasons, which name the node.
std::string LoadError(const OnnxBuilder& b) {
  auto g = b.Load();
  if (!g.ok()) return std::string(g.status().message());
  std::string reasons;
  for (const Operator& op : g->main().ops) {
    if (op.kind == OpKind::kOpaque) reasons += op.opaque_reason + "\n";
  }
  INFO("loaded without opaque operators");
  REQUIRE_FALSE(reasons.empty());
  return reasons;
}

TEST_CASE("onnx hostile: the small model itself loads") {
  auto g = SmallModel().Load();
  INFO(g.status().message());
  REQUIRE(g.ok());
  CHECK(g->main().ops.size() == 4);  // CONV_2D(+bn+relu), MEAN, RESHAPE, FULLY_CONNECTED
}

TEST_CASE("onnx hostile: empty, garbage and truncated bytes") {
  CHECK_FALSE(LoadOnnx(std::make_shared<const std::vector<uint8_t>>(), "e.onnx").ok());
  CHECK_FALSE(LoadOnnx(nullptr, "null.onnx").ok());
  const std::vector<uint8_t> garbage = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x34};
  auto g = LoadOnnx(std::make_shared<const std::vector<uint8_t>>(garbage), "garbage.onnx");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("garbage.onnx"));

  const auto full = SmallModel().Bytes();
  int errors = 0;
  for (size_t len = 0; len < full->size(); ++len) {
    auto part = std::make_shared<const std::vector<uint8_t>>(full->begin(), full->begin() + len);
    auto r = LoadOnnx(part, "trunc.onnx");
    if (!r.ok()) ++errors;
  }
  // Almost every prefix is an error; a few may end exactly on a field boundary and still
  // describe a (different, valid) model. None may crash.
  CHECK(errors > static_cast<int>(full->size()) * 9 / 10);
}

TEST_CASE("onnx hostile: random bit flips never crash") {
  const uint64_t seed = testing::TestSeed(2024);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const auto full = SmallModel().Bytes();
  for (int iter = 0; iter < 300; ++iter) {
    auto bytes = *full;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    auto r = LoadOnnx(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), "flip.onnx");
    if (!r.ok()) CHECK_THAT(std::string(r.status().message()), Catch::Contains("flip.onnx"));
  }
}

TEST_CASE("onnx hostile: missing initializer and dangling inputs name the node") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 4, 4});
  b.Node("Conv", {"x", "no_such_weights"}, {"y"}, "conv_missing_w");
  b.Output("y");
  std::string msg = LoadError(b);
  CHECK_THAT(msg, Catch::Contains("conv_missing_w") && Catch::Contains("no_such_weights"));

  OnnxBuilder b2(13);
  b2.Input("x", {1, 4});
  b2.Node("Relu", {"later"}, {"y"}, "early_relu");
  b2.Node("Relu", {"x"}, {"later"}, "late_relu");
  b2.Output("y");
  msg = LoadError(b2);
  CHECK_THAT(msg, Catch::Contains("early_relu") && Catch::Contains("not produced"));

  OnnxBuilder b3(13);
  b3.Input("x", {1, 4});
  b3.Node("Relu", {"x"}, {"y"});
  b3.Output("nowhere");
  CHECK_THAT(LoadError(b3), Catch::Contains("nowhere"));
}

TEST_CASE("onnx hostile: non-constant weights and wrong ranks") {
  OnnxBuilder b(13);
  b.Input("x", {1, 2, 4, 4});
  b.Input("w", {4, 2, 3, 3});
  b.Node("Conv", {"x", "w"}, {"y"}, "conv_dyn_w");
  b.Output("y");
  CHECK_THAT(LoadError(b), Catch::Contains("conv_dyn_w") && Catch::Contains("constant"));

  OnnxBuilder b2(13);
  b2.Input("x", {1, 8});
  b2.Init("w", {4, 8, 1, 1}, std::vector<float>(32, 1));
  b2.Node("Conv", {"x", "w"}, {"y"}, "conv_on_2d");
  b2.Output("y");
  CHECK_THAT(LoadError(b2), Catch::Contains("conv_on_2d") && Catch::Contains("[1,8]"));

  OnnxBuilder b3(13);
  b3.Input("x", {1, 2, 4, 4});
  b3.Init("w", {4, 3, 3, 3}, std::vector<float>(108, 1));  // C/group mismatch
  b3.Node("Conv", {"x", "w"}, {"y"}, "conv_bad_c");
  b3.Output("y");
  CHECK_THAT(LoadError(b3), Catch::Contains("conv_bad_c"));

  OnnxBuilder b4(13);
  b4.Input("x", {1, 2, 2, 2});
  b4.Init("w", {1, 2, 5, 5}, std::vector<float>(50, 1));  // kernel larger than input
  b4.Node("Conv", {"x", "w"}, {"y"}, "conv_big_k");
  b4.Output("y");
  CHECK_THAT(LoadError(b4), Catch::Contains("conv_big_k"));

  OnnxBuilder b5(13);
  b5.Input("x", {2, 3});
  b5.Input("z", {2, 5});
  b5.Node("Add", {"x", "z"}, {"y"}, "bad_broadcast");
  b5.Output("y");
  CHECK_THAT(LoadError(b5), Catch::Contains("bad_broadcast"));

  OnnxBuilder b6(13);
  b6.Input("x", {2, 3});
  b6.InitI64("shape", {2}, {4, 4});
  b6.Node("Reshape", {"x", "shape"}, {"y"}, "bad_reshape");
  b6.Output("y");
  CHECK_THAT(LoadError(b6), Catch::Contains("bad_reshape"));
}

TEST_CASE("onnx hostile: huge dimensions and inconsistent initializer data") {
  OnnxBuilder b(13);
  b.Input("x", {1, 3, 100000, 100000});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  CHECK_THAT(LoadError(b), Catch::Contains("2^31"));

  OnnxBuilder b2(13);
  b2.Input("x", {1, 4});
  auto* t = b2.Init("w", {4, 4}, std::vector<float>(16, 1.0f));
  t->clear_dims();
  t->add_dims(int64_t{1} << 40);
  t->add_dims(4);
  b2.Node("MatMul", {"x", "w"}, {"y"});
  b2.Output("y");
  CHECK_THAT(LoadError(b2), Catch::Contains("initializer 'w'"));

  OnnxBuilder b3(13);
  b3.Input("x", {1, 4});
  auto* t3 = b3.Init("w", {4, 4}, std::vector<float>(16, 1.0f));
  t3->set_raw_data(std::string(10, '\0'));  // 10 bytes for 16 floats
  b3.Node("MatMul", {"x", "w"}, {"y"});
  b3.Output("y");
  CHECK_THAT(LoadError(b3), Catch::Contains("raw_data"));

  OnnxBuilder b4(13);
  b4.Input("x", {1, 4});
  auto* t4 = b4.Init("w", {4, 4}, std::vector<float>(16, 1.0f));
  t4->clear_raw_data();
  t4->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = t4->add_external_data();
  e->set_key("location");
  e->set_value("weights.bin");
  b4.Node("MatMul", {"x", "w"}, {"y"});
  b4.Output("y");
  CHECK_THAT(LoadError(b4), Catch::Contains("external data"));

  // Symbolic non-batch dims cannot be resolved.
  OnnxBuilder b5(13);
  b5.Input("x", {1, 3, 8, 8});
  b5.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()
      ->mutable_dim(2)->set_dim_param("H");
  b5.Node("Relu", {"x"}, {"y"});
  b5.Output("y");
  CHECK_THAT(LoadError(b5), Catch::Contains("symbolic"));

  // A huge pad is refused, not allocated.
  OnnxBuilder b6(13);
  b6.Input("x", {1, 4});
  b6.InitI64("pads", {4}, {0, int64_t{1} << 40, 0, 0});
  b6.Node("Pad", {"x", "pads"}, {"y"}, "huge_pad");
  b6.Output("y");
  CHECK_THAT(LoadError(b6), Catch::Contains("huge_pad"));

  // A huge stride / kernel attribute is refused.
  OnnxBuilder b7(13);
  b7.Input("x", {1, 1, 4, 4});
  AttrInts(b7.Node("MaxPool", {"x"}, {"y"}, "huge_pool"), "kernel_shape",
           {int64_t{1} << 40, 2});
  b7.Output("y");
  CHECK_THAT(LoadError(b7), Catch::Contains("huge_pool"));
}

TEST_CASE("onnx hostile: nodes without inputs (fuzzer find: Relu with no input)") {
  for (const char* op : {"Relu", "Clip", "Conv", "Add", "Sum", "Concat", "Flatten", "Identity"}) {
    CAPTURE(op);
    OnnxBuilder b(13);
    b.Input("x", {1, 4});
    b.Node(op, {}, {"y"}, "no_inputs");
    b.Output("y");
    CHECK_THAT(LoadError(b), Catch::Contains("no_inputs"));
  }
}

TEST_CASE("onnx hostile: missing opset, non-float inputs, duplicate outputs") {
  OnnxBuilder b(13);
  b.model().clear_opset_import();
  b.Input("x", {1, 4});
  b.Node("Relu", {"x"}, {"y"});
  b.Output("y");
  CHECK_THAT(LoadError(b), Catch::Contains("opset"));

  OnnxBuilder b2(13);
  b2.Input("x", {1, 4}, onnx::TensorProto::INT64);
  b2.Node("Relu", {"x"}, {"y"});
  b2.Output("y");
  CHECK_THAT(LoadError(b2), Catch::Contains("float32"));

  OnnxBuilder b3(13);
  b3.Input("x", {1, 4});
  b3.Node("Relu", {"x"}, {"y"});
  b3.Node("Relu", {"x"}, {"y"}, "second_writer");
  b3.Output("y");
  CHECK_THAT(LoadError(b3), Catch::Contains("second_writer"));

  OnnxBuilder b4(13);
  b4.Input("x", {1, 4});
  b4.Node("Relu", {"x"}, {"y"}).set_domain("com.microsoft");
  b4.Output("y");
  CHECK_THAT(LoadError(b4), Catch::Contains("com.microsoft"));
}

}  // namespace
}  // namespace mica
