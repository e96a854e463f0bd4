// ONNX files that declare more than they carry (issue 16, sections 3 and 6): memory bombs that
// a tiny file could make the importer allocate, dimensions beyond int32, and valid files nested
// past mica's parse limit. Each gets a clear error before any large allocation.
//
// The same models are committed as regression inputs in test/fuzz/corpus/fuzz_onnx/ (replayed
// by fuzz.replay.onnx and read by the CLI tests under a memory limit). To regenerate them:
//   MICA_WRITE_ONNX_CORPUS=test/fuzz/corpus/fuzz_onnx mica_model_test "[.write-corpus]"
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "model/onnx_test_util.h"
#include "testing/catch.h"

namespace mica {
namespace {

using onnx_test::AttrI;
using onnx_test::OnnxBuilder;

std::string LoadError(const OnnxBuilder& b) {
  auto g = b.Load();
  REQUIRE_FALSE(g.ok());
  return std::string(g.status().message());
}

// ConstantOfShape filling `count` float values: a ~100-byte file asking for 4 * count bytes.
OnnxBuilder ConstantOfShapeBomb(int64_t count) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  b.InitI64("shape", {1}, {count});
  auto& n = b.Node("ConstantOfShape", {"shape"}, {"c"}, "bomb");
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_dims(1);
  a->mutable_t()->add_float_data(0.5f);
  b.Node("Add", {"x", "c"}, {"y"}, "add");
  b.Output("y");
  return b;
}

// Many ConstantOfShape nodes, each within the per-node bound, that together would exceed it.
OnnxBuilder ManySmallBombs(int nodes, int64_t each) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  b.InitI64("shape", {1}, {each});
  for (int i = 0; i < nodes; ++i) {
    b.Node("ConstantOfShape", {"shape"}, {"c" + std::to_string(i)}, "fill" + std::to_string(i));
  }
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y");
  return b;
}

// A graph input with one dimension of `d`.
OnnxBuilder HugeDim(int64_t d) {
  OnnxBuilder b(13);
  b.Input("x", {1, d});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y");
  return b;
}

// A valid model whose node carries an `If` branch nested `levels` deep (each level adds a
// NodeProto, an AttributeProto and a GraphProto to the message nesting).
OnnxBuilder DeeplyNested(int levels) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  b.Node("Relu", {"x"}, {"y"}, "relu");
  b.Output("y");
  onnx::NodeProto* node = b.graph().add_node();
  node->set_op_type("If");
  node->set_name("if0");
  node->add_input("x");
  node->add_output("z");
  for (int i = 0; i < levels; ++i) {
    auto* a = node->add_attribute();
    a->set_name("then_branch");
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name("level" + std::to_string(i));
    node = g->add_node();
    node->set_op_type(i + 1 == levels ? "Identity" : "If");
    node->add_input("x");
    node->add_output("z");
  }
  return b;
}

TEST_CASE("onnx limits: ConstantOfShape bombs are refused before allocating") {
  for (int64_t count : {int64_t{1} << 25, int64_t{1} << 28, int64_t{1} << 31, int64_t{1} << 40}) {
    CAPTURE(count);
    const std::string e = LoadError(ConstantOfShapeBomb(count));
    CHECK_THAT(e, Catch::Contains("bomb"));
    CHECK((e.find("constant folding") != std::string::npos ||
           e.find("too large") != std::string::npos));
  }
  // The budget is over the whole model, not per node: 64 nodes of 2^20 elements each.
  const std::string e = LoadError(ManySmallBombs(64, int64_t{1} << 20));
  CHECK_THAT(e, Catch::Contains("constant folding would create more than"));
  // A reasonable fill still loads.
  auto ok = ConstantOfShapeBomb(4).Load();
  INFO(ok.status().message());
  CHECK(ok.ok());
}

TEST_CASE("onnx limits: dimensions beyond int32 are reported with their real value") {
  const std::string e = LoadError(HugeDim(int64_t{1} << 31));
  CHECK_THAT(e, Catch::Contains("2147483648"));
  CHECK_THAT(e, !Catch::Contains("-2147483648"));
  const std::string e2 = LoadError(HugeDim(int64_t{1} << 40));
  CHECK_THAT(e2, Catch::Contains("1099511627776"));
}

TEST_CASE("onnx limits: valid nesting past the parse limit is called too deep, not corrupt") {
  const std::string e = LoadError(DeeplyNested(16));
  CHECK_THAT(e, Catch::Contains("levels deep"));
  CHECK_THAT(e, !Catch::Contains("corrupt"));
  // Garbage is still called corrupt.
  const std::vector<uint8_t> garbage = {0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01};
  auto g = LoadOnnx(std::make_shared<const std::vector<uint8_t>>(garbage), "garbage.onnx");
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("corrupt"));
}

// An int8 weight of `count` elements (raw_data, or int32_data when `raw` is false) read by an
// operator mica does not convert (DequantizeLinear), so it reaches the graph as an operand.
OnnxBuilder Int8Weight(int64_t count, bool raw) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  auto* w = b.graph().add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::INT8);
  w->add_dims(count);
  if (raw) {
    std::string bytes(static_cast<size_t>(count), '\0');
    for (int64_t i = 0; i < count; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(i * 7);
    w->set_raw_data(bytes);
  } else {
    for (int64_t i = 0; i < count; ++i) w->add_int32_data(static_cast<int8_t>(i * 7));
  }
  b.Init("s", {}, {0.5f});
  b.Node("DequantizeLinear", {"w", "s"}, {"y"}, "dq");
  b.Output("y");
  return b;
}

TEST_CASE("onnx limits: integer initializers take their file size in memory, not 8x") {
  const int64_t count = int64_t{1} << 20;
  for (bool raw : {true, false}) {
    CAPTURE(raw);
    auto g = Int8Weight(count, raw).Load();
    REQUIRE(g.ok());
    const Subgraph& sg = g->main();
    const Operator* dq = nullptr;
    for (const Operator& op : sg.ops) {
      if (op.kind == OpKind::kOpaque && op.opaque_name == "DequantizeLinear") dq = &op;
    }
    REQUIRE(dq != nullptr);
    const Tensor& w = sg.tensors[dq->inputs[0]];
    // The operand keeps the file's type (int8, one byte each) and values.
    CHECK(w.dtype == DType::kInt8);
    REQUIRE(w.data.size == static_cast<size_t>(count));
    CHECK(w.data.as<int8_t>()[1] == 7);
    CHECK(w.data.as<int8_t>()[100] == static_cast<int8_t>(700));
    // Everything the graph keeps is about the file's weight bytes (it was 4x, as int32).
    size_t kept = 0;
    for (const auto& buf : g->storage) kept += buf->size();
    CHECK(kept < static_cast<size_t>(count) + 4096);
  }
  // Folding still sees the values: Cast(int8 constant) to float, then Add to an activation.
  OnnxBuilder b(13);
  b.Input("x", {3});
  auto* c = b.graph().add_initializer();
  c->set_name("c");
  c->set_data_type(onnx::TensorProto::INT8);
  c->add_dims(3);
  c->set_raw_data(std::string("\x01\xff\x80", 3));
  auto& cast = b.Node("Cast", {"c"}, {"cf"}, "cast");
  AttrI(cast, "to", onnx::TensorProto::FLOAT);
  b.Node("Add", {"x", "cf"}, {"y"}, "add");
  b.Output("y");
  auto g = b.Load();
  INFO(g.status().message());
  REQUIRE(g.ok());
  const Subgraph& sg = g->main();
  REQUIRE(sg.ops.size() == 1);
  CHECK(onnx_test::Floats(sg, sg.ops[0].inputs[1]) == std::vector<float>{1.0f, -1.0f, -128.0f});
}

TEST_CASE("onnx limits: write the regression corpus", "[.write-corpus]") {
  const char* dir = std::getenv("MICA_WRITE_ONNX_CORPUS");
  REQUIRE(dir != nullptr);
  auto write = [&](const std::string& name, const OnnxBuilder& b) {
    const auto bytes = b.Bytes();
    std::ofstream out(std::string(dir) + "/" + name, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes->data()),
              static_cast<std::streamsize>(bytes->size()));
    REQUIRE(out.good());
  };
  write("regress-constantofshape-bomb.onnx", ConstantOfShapeBomb(int64_t{1} << 31));
  write("regress-constantofshape-2gb.onnx", ConstantOfShapeBomb(int64_t{1} << 28));
  write("regress-constantofshape-many.onnx", ManySmallBombs(64, int64_t{1} << 20));
  write("regress-dim-2pow31.onnx", HugeDim(int64_t{1} << 31));
  write("regress-nesting-too-deep.onnx", DeeplyNested(16));
}

}  // namespace
}  // namespace mica
