// Liberal, safe loading (issue 11): what TFLite Micro and Vela accept loads; unsupported is
// not invalid (uint32 tensors, unknown ONNX operators load and are reported); what execution
// needs is validated once, for every command.
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "model/onnx_test_util.h"
#include "model/tflite_test_util.h"
#include "testing/catch.h"

namespace mica {
namespace {

using testing::BuildFlatbuffer;
using testing::FbModel;
using testing::MakeTensor;
using testing::Share;
namespace tfl = testing::tfl;

absl::StatusOr<Graph> Load(const FbModel& m) {
  return LoadTflite(Share(BuildFlatbuffer(m)), "liberal.tflite");
}

TEST_CASE("liberal load: per-tensor quantization ignores quantized_dimension", "[liberal]") {
  // The bias of a widely used int8 model: per-tensor scale, quantized_dimension 3 on a
  // rank-1 shape. TFLite Micro and Vela run it; the axis means nothing for one scale.
  FbModel m = testing::ConvModel();
  m.tensors[1].scale = {0.1f};
  m.tensors[1].zero_point = {0};
  m.tensors[2].scale = {0.05f};
  m.tensors[2].zero_point = {0};
  m.tensors[2].quantized_dimension = 3;
  m.tensors[0].quantized_dimension = -1;
  auto g = Load(m);
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  CHECK(g->main().tensors[2].quant.axis == 3);  // kept as read (written back unchanged)
  CHECK(ValidateGraph(*g).ok());

  // Per-channel quantization still needs its axis inside the shape.
  m = testing::ConvModel();
  m.tensors[1].quantized_dimension = 4;
  auto bad = Load(m);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("tensor 1 ('filter')") && Catch::Contains("quantized axis 4"));
}

// input uint32 [1,4] -> CUSTOM 'SignalFrame' -> int8 [1,4] -> RESHAPE -> int8 [4]
FbModel Uint32Model() {
  FbModel m;
  m.tensors = {
      MakeTensor({1, 4}, tfl::TensorType_UINT32, 0, "samples"),
      MakeTensor({1, 4}, tfl::TensorType_INT8, 0, "frame", {0.5f}, {0}),
      MakeTensor({1}, tfl::TensorType_INT32, 1, "shape"),
      MakeTensor({4}, tfl::TensorType_INT8, 0, "out", {0.5f}, {0}),
  };
  m.buffers.push_back(testing::DataBuffer(testing::Bytes(std::vector<int32_t>{4})));
  testing::FbOp custom;
  custom.builtin_code = 32;  // CUSTOM
  custom.custom_code = "SignalFrame";
  custom.inputs = {0};
  custom.outputs = {1};
  testing::FbOp reshape;
  reshape.builtin_code = 22;  // RESHAPE
  reshape.inputs = {1, 2};
  reshape.outputs = {3};
  m.ops = {custom, reshape};
  m.inputs = {0};
  m.outputs = {3};
  return m;
}

TEST_CASE("liberal load: uint32 tensors load with their type", "[liberal]") {
  auto g = Load(Uint32Model());
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  const Tensor& t = g->main().tensors[0];
  CHECK(t.dtype == DType::kUInt32);
  CHECK(DTypeName(t.dtype) == "uint32");
  CHECK(t.num_bytes() == 16);
  // Writing and reading back keeps the type.
  auto bytes = WriteTflite(*g);
  REQUIRE(bytes.ok());
  auto again = LoadTflite(std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)),
                          "again.tflite");
  REQUIRE(again.ok());
  CHECK(again->main().tensors[0].dtype == DType::kUInt32);
}

// ---- one validation for every command ----------------------------------------------------

TEST_CASE("validation: declared output shapes must match shape inference", "[liberal]") {
  FbModel m = testing::ConvModel();  // [1,5,5,2] * [4,3,3,2], VALID, stride (1, 2) -> [1,2,3,4]
  REQUIRE(Load(m).ok());
  m.tensors[3].shape = {1, 3, 3, 4};
  auto g = Load(m);
  REQUIRE_FALSE(g.ok());
  CHECK(g.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(g.status().message()),
             Catch::Contains("operator 0 (CONV_2D)") &&
                 Catch::Contains("has shape [1,3,3,4] but its inputs give [1,2,3,4]"));
  // The same elements viewed with a dimension the file marks dynamic are accepted.
  m = testing::ConvModel();
  m.tensors[3].shape = {1, 2, 3, 4};
  m.tensors[3].shape_signature = std::vector<int32_t>{-1, 2, 3, 4};
  CHECK(Load(m).ok());
}

TEST_CASE("validation: RESHAPE element counts and constant GATHER indices", "[liberal]") {
  FbModel m = Uint32Model();
  m.tensors[3].shape = {5};
  auto g = Load(m);
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()),
             Catch::Contains("operator 1 (RESHAPE)") && Catch::Contains("cannot reshape [1,4]"));

  // GATHER of params [3,2] with constant indices {0, 3}: 3 is outside axis 0.
  FbModel gm;
  gm.tensors = {
      MakeTensor({3, 2}, tfl::TensorType_INT8, 0, "params", {0.5f}, {0}),
      MakeTensor({2}, tfl::TensorType_INT32, 1, "indices"),
      MakeTensor({2, 2}, tfl::TensorType_INT8, 0, "out", {0.5f}, {0}),
  };
  gm.buffers.push_back(testing::DataBuffer(testing::Bytes(std::vector<int32_t>{0, 3})));
  testing::FbOp gather;
  gather.builtin_code = 36;  // GATHER
  gather.inputs = {0, 1};
  gather.outputs = {2};
  gm.ops = {gather};
  gm.inputs = {0};
  gm.outputs = {2};
  auto bad = Load(gm);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("operator 0 (GATHER)") && Catch::Contains("constant index 1 is 3"));
  gm.buffers[1] = testing::DataBuffer(testing::Bytes(std::vector<int32_t>{0, 2}));
  CHECK(Load(gm).ok());
}

// ---- ONNX: unsupported nodes load as opaque operators ------------------------------------

using onnx_test::OnnxBuilder;

const Operator* FindOpaque(const Graph& g) {
  for (const Operator& op : g.main().ops) {
    if (op.kind == OpKind::kOpaque) return &op;
  }
  return nullptr;
}

TEST_CASE("onnx: an unsupported node loads as an opaque operator with a reason", "[liberal]") {
  OnnxBuilder b(13);
  b.Input("x", {1, 8});
  b.Node("Relu", {"x"}, {"r"}, "relu");
  b.InitI64("starts", {1}, {2});
  b.InitI64("ends", {1}, {6});
  b.InitI64("axes", {1}, {1});
  b.Node("Slice", {"r", "starts", "ends", "axes"}, {"s"}, "my_slice");
  b.Node("Relu", {"s"}, {"y"}, "relu2");
  // The model declares the Slice output's shape: the rest of the graph converts.
  auto* vi = b.graph().add_value_info();
  vi->set_name("s");
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(1);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  b.Output("y");
  auto g = b.Load();
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  const Operator* op = FindOpaque(*g);
  REQUIRE(op != nullptr);
  CHECK(op->opaque_name == "Slice");
  CHECK_THAT(op->opaque_reason, Catch::Contains("not supported"));
  const Subgraph& sg = g->main();
  CHECK(sg.tensors[op->outputs[0]].shape == std::vector<int32_t>{1, 4});
  CHECK(sg.tensors[sg.outputs[0]].shape == std::vector<int32_t>{1, 4});
  CHECK(ValidateGraph(*g).ok());
}

TEST_CASE("onnx: without declared shapes the reason says so; consumers follow", "[liberal]") {
  OnnxBuilder b(13);
  b.Input("x", {1, 4, 8, 8});
  b.Node("Einsum", {"x"}, {"e"}, "my_einsum");
  b.Init("w", {2, 4, 1, 1}, std::vector<float>(8, 0.5f));
  b.Node("Conv", {"e", "w"}, {"y"}, "conv_after");
  b.Output("y");
  auto g = b.Load();
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  int opaque = 0;
  for (const Operator& op : g->main().ops) {
    if (op.kind != OpKind::kOpaque) continue;
    ++opaque;
    CHECK_THAT(op.opaque_reason, Catch::Contains("no shape"));
  }
  CHECK(opaque == 2);  // the Einsum, and the Conv reading its unknown shape
  // Invalid models stay invalid: a node reading a value nobody produces.
  OnnxBuilder bad(13);
  bad.Input("x", {1, 4});
  bad.Node("Einsum", {"nowhere"}, {"y"}, "orphan");
  bad.Output("y");
  auto e = bad.Load();
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(std::string(e.status().message()), Catch::Contains("nowhere"));
}

TEST_CASE("onnx: integer graph inputs load with their type", "[liberal]") {
  OnnxBuilder b(13);
  b.Input("ids", {1, 3}, onnx::TensorProto::INT64);
  b.Node("Einsum", {"ids"}, {"y"}, "consumer");
  b.Output("y");
  auto g = b.Load();
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  CHECK(g->main().tensors[g->main().inputs[0]].dtype == DType::kInt64);
}

}  // namespace
}  // namespace mica
