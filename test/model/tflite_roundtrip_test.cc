// WriteTflite: read -> write -> read is lossless; GraphDifference finds what differs.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "testing/compare.h"
#include "mica/model/load.h"
#include "model/tflite_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"
#include "tflite_schema_generated.h"

namespace mica {
namespace {

namespace fs = std::filesystem;
namespace tfl = ::mica::tflite_fb;
using testing::Share;

std::string Msg(const absl::Status& s) { return std::string(s.message()); }

absl::StatusOr<Graph> Reload(const Graph& g, std::vector<uint8_t>* written = nullptr) {
  absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(g);
  if (!bytes.ok()) return bytes.status();
  if (written != nullptr) *written = *bytes;
  return LoadTflite(Share(*std::move(bytes)), "rewritten.tflite");
}

std::vector<std::string> SharedModels() {
  std::vector<std::string> paths;
  const std::string shared = testing::SharedDir();
  if (shared.empty()) return paths;
  for (const char* sub : {"models/mlperf-tiny", "models/more"}) {
    const fs::path dir = fs::path(shared) / sub;
    if (!fs::is_directory(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir)) {
      if (e.path().extension() == ".tflite") paths.push_back(e.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST_CASE("TFLite round trip is lossless for every shared model", "[tflite]") {
  const std::vector<std::string> models = SharedModels();
  if (models.empty()) {
    WARN("shared models not found (MICA_SHARED_DIR); skipped");
    return;
  }
  // The rewritten files stay in the build tree for test/tools/tflite_crosscheck.py, which
  // runs them against the originals in an independent interpreter.
  const std::string out_dir = testing::TempDir("tflite_rewritten");
  for (const std::string& path : models) {
    CAPTURE(path);
    absl::StatusOr<Graph> original = LoadModel(path);
    REQUIRE(original.ok());
    std::vector<uint8_t> first;
    absl::StatusOr<Graph> again = Reload(*original, &first);
    INFO((again.ok() ? std::string("ok") : Msg(again.status())));
    REQUIRE(again.ok());
    CHECK(GraphDifference(*original, *again) == "");
    CHECK(WriteFileBytes(out_dir + "/" + fs::path(path).filename().string(), first).ok());
    // Writing is deterministic and idempotent: the reloaded graph writes the same bytes.
    absl::StatusOr<std::vector<uint8_t>> second = WriteTflite(*again);
    REQUIRE(second.ok());
    CHECK(*second == first);
    // Constants land 16-byte aligned in the written file, as the format asks.
    for (const Tensor& t : again->main().tensors) {
      if (t.is_constant() && t.data.size > 0) {
        CHECK(reinterpret_cast<uintptr_t>(t.data.ptr) % 16 == 0);
      }
    }
  }
}

TEST_CASE("TFLite load and round trip of models in MICA_EXTRA_MODELS (optional)", "[tflite]") {
  // Lets a developer try models mica has never seen: every *.tflite under the directory
  // named by MICA_EXTRA_MODELS must load (or be refused as unsupported with a message) and
  // round-trip losslessly.
  const char* extra = std::getenv("MICA_EXTRA_MODELS");
  if (extra == nullptr || !fs::is_directory(extra)) return;
  const std::string out_dir = testing::TempDir("tflite_rewritten_extra");
  for (const auto& e : fs::recursive_directory_iterator(extra)) {
    if (e.path().extension() != ".tflite") continue;
    const std::string path = e.path().string();
    CAPTURE(path);
    absl::StatusOr<Graph> g = LoadModel(path);
    if (!g.ok()) {
      WARN(path << ": " << Msg(g.status()));
      CHECK(g.status().code() == absl::StatusCode::kUnimplemented);
      continue;
    }
    size_t opaque = 0;
    for (const Subgraph& sg : g->subgraphs) {
      for (const Operator& op : sg.ops) opaque += op.kind == OpKind::kOpaque;
    }
    std::vector<uint8_t> written;
    absl::StatusOr<Graph> again = Reload(*g, &written);
    INFO((again.ok() ? std::string("ok") : Msg(again.status())));
    REQUIRE(again.ok());
    CHECK(GraphDifference(*g, *again) == "");
    CHECK(WriteFileBytes(out_dir + "/" + e.path().filename().string(), written).ok());
    WARN(path << ": " << g->subgraphs.size() << " subgraphs, " << g->main().ops.size()
              << " operators (" << opaque << " opaque), round trip ok");
  }
}

TEST_CASE("TFLite round trip through a file on disk", "[tflite]") {
  Graph g;
  {
    absl::StatusOr<Graph> conv =
        LoadTflite(Share(testing::BuildFlatbuffer(testing::ConvModel())), "conv.tflite");
    REQUIRE(conv.ok());
    g = *conv;
  }
  const std::string dir = testing::TempDir("tflite_roundtrip");
  const std::string path = dir + "/conv.tflite";
  absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(g);
  REQUIRE(bytes.ok());
  REQUIRE(WriteFileBytes(path, *bytes).ok());
  absl::StatusOr<Graph> loaded = LoadModel(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->source_path == path);
  CHECK(GraphDifference(g, *loaded) == "");
}

// ---- Every OpKind, with non-default attributes -------------------------------------------

Tensor MakeTensor(std::vector<int32_t> shape, DType dtype = DType::kFloat32) {
  Tensor t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

struct OpCase {
  OpKind kind;
  OpAttrs attrs;
  std::vector<std::vector<int32_t>> inputs;  // shapes; an empty shape list entry {-1} = absent
  std::vector<std::vector<int32_t>> outputs;
  DType output_dtype = DType::kFloat32;
};

Graph SingleOpGraph(const OpCase& c, const std::string& opaque_name = "") {
  Graph g;
  g.subgraphs.emplace_back();
  Subgraph& sg = g.main();
  sg.name = "single";
  Operator op;
  op.kind = c.kind;
  op.opaque_name = opaque_name;
  op.attrs = c.attrs;
  op.version = 2;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i] == std::vector<int32_t>{-1}) {
      op.inputs.push_back(kNoTensor);
      continue;
    }
    Tensor t = MakeTensor(c.inputs[i]);
    t.name = "in" + std::to_string(i);
    const auto index = static_cast<int32_t>(sg.tensors.size());
    sg.tensors.push_back(t);
    sg.inputs.push_back(index);
    op.inputs.push_back(index);
  }
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    Tensor t = MakeTensor(c.outputs[i], c.output_dtype);
    t.name = "out" + std::to_string(i);
    const auto index = static_cast<int32_t>(sg.tensors.size());
    sg.tensors.push_back(t);
    sg.outputs.push_back(index);
    op.outputs.push_back(index);
  }
  sg.ops.push_back(op);
  return g;
}

std::vector<OpCase> AllKindCases() {
  const std::vector<int32_t> act = {1, 8, 8, 4};
  const std::vector<int32_t> vec = {4};
  std::vector<OpCase> cases = {
      {OpKind::kConv2D,
       Conv2DAttrs{Padding::kSame, 2, 1, 1, 2, Activation::kRelu},
       {act, {6, 3, 3, 4}, {6}},
       {{1, 8, 4, 6}}},  // stride_w 2
      {OpKind::kDepthwiseConv2D,
       DepthwiseConv2DAttrs{Padding::kValid, 1, 2, 2, 1, 2, Activation::kRelu6},
       {act, {1, 3, 3, 8}, {-1}},
       {{1, 3, 4, 8}}},  // stride_h 2, dilation_w 2
      {OpKind::kTransposeConv,
       TransposeConvAttrs{Padding::kSame, 2, 3, Activation::kReluN1To1},
       {vec, {4, 3, 3, 2}, {1, 4, 4, 2}, {4}},
       {{1, 8, 12, 4}}},
      {OpKind::kFullyConnected,
       FullyConnectedAttrs{Activation::kTanh, true},
       {{1, 16}, {4, 16}, {-1}},
       {{1, 4}}},
      {OpKind::kBatchMatMul, BatchMatMulAttrs{true, false}, {{1, 3, 2}, {1, 3, 4}}, {{1, 2, 4}}},
      {OpKind::kAdd, ElementwiseAttrs{Activation::kRelu}, {act, act}, {act}},
      {OpKind::kSub, ElementwiseAttrs{Activation::kRelu6}, {act, act}, {act}},
      {OpKind::kMul, ElementwiseAttrs{Activation::kReluN1To1}, {act, act}, {act}},
      {OpKind::kDiv, ElementwiseAttrs{Activation::kSignBit}, {act, act}, {act}},
      {OpKind::kMaximum, std::monostate{}, {act, act}, {act}},
      {OpKind::kMinimum, std::monostate{}, {act, act}, {act}},
      {OpKind::kSquaredDifference, std::monostate{}, {act, act}, {act}},
      {OpKind::kMaxPool2D,
       Pool2DAttrs{Padding::kSame, 2, 3, 4, 5, Activation::kRelu},
       {act},
       {{1, 3, 4, 4}}},
      {OpKind::kAveragePool2D,
       Pool2DAttrs{Padding::kValid, 1, 1, 8, 8, Activation::kNone},
       {act},
       {{1, 1, 1, 4}}},
      {OpKind::kMean, ReduceAttrs{true}, {act, {2}}, {{1, 1, 1, 4}}},
      {OpKind::kSum, ReduceAttrs{false}, {act, {1}}, {{1, 8, 4}}},
      {OpKind::kReduceMax, ReduceAttrs{true}, {act, {1}}, {{1, 1, 8, 4}}},
      {OpKind::kSoftmax, SoftmaxAttrs{0.5f}, {{1, 10}}, {{1, 10}}},
      {OpKind::kLogistic, std::monostate{}, {act}, {act}},
      {OpKind::kTanh, std::monostate{}, {act}, {act}},
      {OpKind::kRelu, std::monostate{}, {act}, {act}},
      {OpKind::kRelu6, std::monostate{}, {act}, {act}},
      {OpKind::kReluN1To1, std::monostate{}, {act}, {act}},
      {OpKind::kLeakyRelu, LeakyReluAttrs{0.125f}, {act}, {act}},
      {OpKind::kHardSwish, std::monostate{}, {act}, {act}},
      {OpKind::kPrelu, std::monostate{}, {act, {4}}, {act}},
      {OpKind::kExp, std::monostate{}, {act}, {act}},
      {OpKind::kLog, std::monostate{}, {act}, {act}},
      {OpKind::kSqrt, std::monostate{}, {act}, {act}},
      {OpKind::kRsqrt, std::monostate{}, {act}, {act}},
      {OpKind::kAbs, std::monostate{}, {act}, {act}},
      {OpKind::kNeg, std::monostate{}, {act}, {act}},
      {OpKind::kReshape, ReshapeAttrs{{1, -1}}, {act, {2}}, {{1, 256}}},
      {OpKind::kSqueeze, SqueezeAttrs{{0, -2}}, {{1, 8, 1, 4}}, {{8, 4}}},
      {OpKind::kExpandDims, std::monostate{}, {{8, 4}, {}}, {{1, 8, 4}}},
      {OpKind::kTranspose, std::monostate{}, {act, {4}}, {{1, 4, 8, 8}}},
      {OpKind::kPad, std::monostate{}, {act, {4, 2}}, {{1, 10, 10, 4}}},
      {OpKind::kPadV2, std::monostate{}, {act, {4, 2}, {}}, {{1, 10, 10, 4}}},
      {OpKind::kConcatenation,
       ConcatenationAttrs{-1, Activation::kRelu},
       {act, act},
       {{1, 8, 8, 8}}},
      {OpKind::kSplit, SplitAttrs{2}, {{}, act}, {{1, 8, 8, 2}, {1, 8, 8, 2}}},
      {OpKind::kSplitV, SplitAttrs{3}, {act, {3}, {}}, {{1, 8, 8, 1}, {1, 8, 8, 1}, {1, 8, 8, 2}}},
      {OpKind::kStridedSlice,
       StridedSliceAttrs{1, 2, 0, 0, 8, true},
       {act, {4}, {4}, {4}},
       {{1, 4, 4}}},
      {OpKind::kSlice, std::monostate{}, {act, {4}, {4}}, {{1, 2, 2, 4}}},
      {OpKind::kGather, GatherAttrs{1, 0}, {act, {3}}, {{1, 3, 8, 4}}},
      {OpKind::kPack, PackAttrs{3, 1}, {{8, 4}, {8, 4}, {8, 4}}, {{8, 3, 4}}},
      {OpKind::kUnpack, PackAttrs{2, 0}, {{2, 8}}, {{8}, {8}}},
      {OpKind::kResizeNearestNeighbor, ResizeAttrs{true, false}, {act, {2}}, {{1, 16, 16, 4}}},
      {OpKind::kResizeBilinear, ResizeAttrs{false, true}, {act, {2}}, {{1, 16, 16, 4}}},
      {OpKind::kSpaceToDepth, SpaceDepthAttrs{2}, {act}, {{1, 4, 4, 16}}},
      {OpKind::kDepthToSpace, SpaceDepthAttrs{2}, {act}, {{1, 16, 16, 1}}},
      {OpKind::kArgMax, ArgMinMaxAttrs{DType::kInt32}, {act, {}}, {{1, 8, 8}}, DType::kInt32},
      {OpKind::kArgMin, ArgMinMaxAttrs{DType::kInt64}, {act, {}}, {{1, 8, 8}}, DType::kInt64},
      {OpKind::kQuantize, std::monostate{}, {act}, {act}},
      {OpKind::kDequantize, std::monostate{}, {act}, {act}},
      {OpKind::kSvdf,
       SvdfAttrs{2, Activation::kRelu, true},
       {{1, 8}, {4, 8}, {4, 10}, {-1}, {1, 40}},
       {{1, 2}}},
  };
  OpCase lstm{OpKind::kUnidirectionalSequenceLstm,
              LstmAttrs{Activation::kTanh, 10.0f, 0.0f, true, false, true},
              {},
              {{1, 3, 4}}};
  for (int i = 0; i < 24; ++i) {
    const bool required =
        i == 0 || (i >= 2 && i <= 4) || (i >= 6 && i <= 8) || (i >= 13 && i <= 15) || i >= 18;
    lstm.inputs.push_back(required ? std::vector<int32_t>{4, 4} : std::vector<int32_t>{-1});
  }
  cases.push_back(lstm);
  return cases;
}

TEST_CASE("TFLite round trip covers every OpKind with non-default attributes", "[tflite]") {
  std::vector<bool> covered(static_cast<size_t>(OpKind::kUnidirectionalSequenceLstm) + 1, false);
  for (const OpCase& c : AllKindCases()) {
    const Graph g = SingleOpGraph(c);
    CAPTURE(OpKindName(c.kind));
    const absl::Status valid = ValidateGraph(g);
    INFO(std::string(valid.message()));
    CHECK(valid.ok());
    if (!valid.ok()) continue;
    absl::StatusOr<Graph> again = Reload(g);
    INFO((again.ok() ? std::string("ok") : Msg(again.status())));
    REQUIRE(again.ok());
    CHECK(GraphDifference(g, *again) == "");
    covered[static_cast<size_t>(c.kind)] = true;
  }
  for (size_t k = 1; k < covered.size(); ++k) {
    CAPTURE(OpKindName(static_cast<OpKind>(k)));
    CHECK(covered[k]);
  }
}

TEST_CASE("TFLite round trip keeps opaque builtins and custom operators", "[tflite]") {
  OpCase c{OpKind::kOpaque, std::monostate{}, {{1, 8}, {}}, {{1, 8}}};
  for (const std::string name : {"CUMSUM", "BUILTIN_300", "MyCustomOp", "CUSTOM"}) {
    CAPTURE(name);
    Graph g = SingleOpGraph(c, name);
    Operator& op = g.main().ops[0];
    op.intermediates = {0};
    if (name == "MyCustomOp") op.opaque_options = {0xde, 0xad, 0xbe, 0xef};
    op.opaque_custom = name == "MyCustomOp" || name == "CUSTOM";
    std::vector<uint8_t> written;
    absl::StatusOr<Graph> again = Reload(g, &written);
    INFO((again.ok() ? std::string("ok") : Msg(again.status())));
    REQUIRE(again.ok());
    CHECK(GraphDifference(g, *again) == "");
  }
}

TEST_CASE("TFLite round trip keeps a custom operator named like a builtin custom", "[tflite]") {
  // A custom code may be any string, a builtin's name included, with other semantics (here
  // two outputs, which HARD_SWISH never has): it must be written back as the same custom code.
  OpCase c{OpKind::kOpaque, std::monostate{}, {{1, 8}}, {{1, 8}, {1, 8}}};
  Graph g = SingleOpGraph(c, "HARD_SWISH");
  g.main().ops[0].opaque_custom = true;
  std::vector<uint8_t> written;
  absl::StatusOr<Graph> again = Reload(g, &written);
  INFO((again.ok() ? std::string("ok") : Msg(again.status())));
  REQUIRE(again.ok());
  CHECK(GraphDifference(g, *again) == "");
  const tfl::Model* model = tfl::GetModel(written.data());
  REQUIRE(model->operator_codes()->size() == 1);
  CHECK(model->operator_codes()->Get(0)->builtin_code() == 32);
  REQUIRE(model->operator_codes()->Get(0)->custom_code() != nullptr);
  CHECK(model->operator_codes()->Get(0)->custom_code()->str() == "HARD_SWISH");
}

TEST_CASE("TFLite round trip keeps constants, quantization, signatures and metadata", "[tflite]") {
  Graph g;
  g.subgraphs.emplace_back();
  g.description = "built by the round-trip test";
  g.metadata = {{"min_runtime_version", "2.3.0"}, {"producer", "mica"}, {"empty", ""}};
  Subgraph& sg = g.main();
  Tensor in = MakeTensor({1, 16}, DType::kInt8);
  in.name = "in";
  in.shape_signature = {-1, 16};
  in.quant = {{0.5f}, {-128}, 0};
  Tensor w = MakeTensor({4, 16}, DType::kInt8);
  w.name = "w";
  std::vector<uint8_t> wbytes(64);
  for (size_t i = 0; i < wbytes.size(); ++i) wbytes[i] = static_cast<uint8_t>(i * 37);
  w.data = g.AddConstData(wbytes);
  w.quant = {{0.1f, 0.2f, 0.3f, 0.4f}, {0, 0, 0, 0}, 0};
  Tensor w_shared = w;  // shares the same bytes: written once
  w_shared.name = "w_shared";
  Tensor b = MakeTensor({4}, DType::kInt32);
  b.name = "b";
  b.data = g.AddConstData(std::vector<uint8_t>(16, 7));
  Tensor empty_shape = MakeTensor({0}, DType::kInt32);  // e.g. reshape-to-scalar operand
  empty_shape.name = "empty";
  empty_shape.data = g.AddConstData({});
  Tensor out = MakeTensor({1, 4}, DType::kInt8);
  out.name = "out";
  out.quant = {{0.25f}, {3}, 0};
  Tensor out2 = out;
  out2.name = "out2";
  sg.tensors = {in, w, b, out, w_shared, out2, empty_shape};
  Operator fc;
  fc.kind = OpKind::kFullyConnected;
  fc.attrs = FullyConnectedAttrs{Activation::kRelu, false};
  fc.version = 9;
  fc.inputs = {0, 1, 2};
  fc.outputs = {3};
  Operator fc2 = fc;
  fc2.inputs = {0, 4, kNoTensor};
  fc2.outputs = {5};
  sg.ops = {fc, fc2};
  sg.inputs = {0};
  sg.outputs = {3, 5};
  REQUIRE(ValidateGraph(g).ok());

  std::vector<uint8_t> written;
  absl::StatusOr<Graph> again = Reload(g, &written);
  INFO((again.ok() ? std::string("ok") : Msg(again.status())));
  REQUIRE(again.ok());
  CHECK(GraphDifference(g, *again) == "");
  CHECK(again->main().tensors[6].is_constant());
  // The shared weights were written once: both tensors view the same bytes in the file.
  CHECK(again->main().tensors[1].data.ptr == again->main().tensors[4].data.ptr);
}

TEST_CASE("WriteTflite refuses an invalid graph with a message", "[tflite]") {
  OpCase c{OpKind::kConv2D,
           Conv2DAttrs{Padding::kSame, 0, 1, 1, 1, Activation::kNone},
           {{1, 8, 8, 4}, {6, 3, 3, 4}},
           {{1, 8, 8, 6}}};
  Graph g = SingleOpGraph(c);
  absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(g);
  REQUIRE_FALSE(bytes.ok());
  CHECK_THAT(Msg(bytes.status()), Catch::Contains("stride_w"));
}

// ---- GraphDifference ----------------------------------------------------------------------

TEST_CASE("GraphDifference names the first difference", "[tflite][compare]") {
  absl::StatusOr<Graph> base =
      LoadTflite(Share(testing::BuildFlatbuffer(testing::ConvModel())), "conv.tflite");
  REQUIRE(base.ok());
  const Graph& a = *base;
  CHECK(GraphDifference(a, a) == "");
  Graph copy = a;
  copy.source_path = "elsewhere.tflite";
  copy.source_format = ModelFormat::kBuilt;
  CHECK(GraphDifference(a, copy) == "");  // provenance is not content

  struct Mutation {
    const char* expect;
    std::function<void(Graph&)> apply;
  };
  const std::vector<Mutation> mutations = {
      {"tensor 0 ('input'): name", [](Graph& g) { g.main().tensors[0].name = "x"; }},
      {"dtype", [](Graph& g) { g.main().tensors[3].dtype = DType::kUInt8; }},
      {"shape [1,2,3,4] vs [1,2,3,5]", [](Graph& g) { g.main().tensors[3].shape[3] = 5; }},
      {"shape signature",
       [](Graph& g) {
         g.main().tensors[0].shape_signature = {-1, 5, 5, 2};
       }},
      {"quantization scales", [](Graph& g) { g.main().tensors[1].quant.scale[2] = 0.31f; }},
      {"zero points", [](Graph& g) { g.main().tensors[0].quant.zero_point[0] = 0; }},
      {"quantized axis", [](Graph& g) { g.main().tensors[0].quant.axis = 1; }},
      {"is_variable", [](Graph& g) { g.main().tensors[3].is_variable = true; }},
      {"constant data differs at byte 5",
       [](Graph& g) {
         std::vector<uint8_t> bytes(g.main().tensors[1].data.ptr,
                                    g.main().tensors[1].data.ptr + g.main().tensors[1].data.size);
         bytes[5] ^= 1;
         g.main().tensors[1].data = g.AddConstData(bytes);
       }},
      {"not constant", [](Graph& g) { g.main().tensors[2].data = ConstData{}; }},
      {"operator 0 (CONV_2D): attribute stride_h 2 vs 1",
       [](Graph& g) { g.main().ops[0].MutableAttrs<Conv2DAttrs>().stride_h = 1; }},
      {"attribute activation",
       [](Graph& g) {
         g.main().ops[0].MutableAttrs<Conv2DAttrs>().activation = Activation::kNone;
       }},
      {"version", [](Graph& g) { g.main().ops[0].version = 1; }},
      {"inputs [0,1,2] vs [0,1,-1]", [](Graph& g) { g.main().ops[0].inputs[2] = kNoTensor; }},
      {"kind", [](Graph& g) { g.main().ops[0].kind = OpKind::kDepthwiseConv2D; }},
      {"subgraph 0: outputs", [](Graph& g) { g.main().outputs = {2}; }},
      {"description", [](Graph& g) { g.description = "changed"; }},
      {"metadata 'k' only in the second graph", [](Graph& g) { g.metadata["k"] = "v"; }},
      {"1 subgraphs vs 2", [](Graph& g) { g.subgraphs.push_back(g.main()); }},
  };
  for (const Mutation& m : mutations) {
    CAPTURE(m.expect);
    Graph b = a;
    m.apply(b);
    const std::string diff = GraphDifference(a, b);
    CHECK_THAT(diff, Catch::Contains(m.expect));
    CHECK(diff.find('\n') == std::string::npos);
  }
}

}  // namespace
}  // namespace mica
