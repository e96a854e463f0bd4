// LoadTflite on real models (../shared/models) and on hand-crafted flatbuffers.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "model/tflite_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;
using testing::BuildFlatbuffer;
using testing::FbModel;
using testing::FbOp;
using testing::Share;
namespace tfl = testing::tfl;

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

std::map<std::string, int> OpHistogram(const Subgraph& sg) {
  std::map<std::string, int> h;
  for (const Operator& op : sg.ops) ++h[std::string(op.name())];
  return h;
}

// Operator histograms, input shapes and per-channel tensor counts as reported by an
// independent reader (the LiteRT interpreter) for the shared models.
struct Expected {
  std::map<std::string, int> ops;
  int tensors;
  int per_channel_tensors;
  std::vector<std::vector<int32_t>> input_shapes;
  std::vector<std::vector<int32_t>> input_signatures;  // empty entry: same as the shape
  DType input_dtype;
};

const std::map<std::string, Expected>& ExpectedModels() {
  static const auto* m = new std::map<std::string, Expected>{
      {"ad_autoencoder_float.tflite",
       {{{"FULLY_CONNECTED", 10}}, 31, 0, {{1, 640}}, {{-1, 640}}, DType::kFloat32}},
      {"ad_autoencoder_int8.tflite",
       {{{"FULLY_CONNECTED", 10}}, 31, 0, {{1, 640}}, {{-1, 640}}, DType::kInt8}},
      {"ic_resnet8_float.tflite",
       {{{"CONV_2D", 9},
         {"ADD", 3},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        38,
        0,
        {{1, 32, 32, 3}},
        {{-1, 32, 32, 3}},
        DType::kFloat32}},
      {"ic_resnet8_int8.tflite",
       {{{"CONV_2D", 9},
         {"ADD", 3},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        38,
        18,
        {{1, 32, 32, 3}},
        {{-1, 32, 32, 3}},
        DType::kInt8}},
      {"kws_ds_cnn_float.tflite",
       {{{"CONV_2D", 5},
         {"DEPTHWISE_CONV_2D", 4},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        35,
        0,
        {{1, 49, 10, 1}},
        {{-1, 49, 10, 1}},
        DType::kFloat32}},
      {"kws_ds_cnn_int8.tflite",
       {{{"CONV_2D", 5},
         {"DEPTHWISE_CONV_2D", 4},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        35,
        18,
        {{1, 49, 10, 1}},
        {{-1, 49, 10, 1}},
        DType::kInt8}},
      {"vww_mobilenet_v1_025_float.tflite",
       {{{"CONV_2D", 14},
         {"DEPTHWISE_CONV_2D", 13},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        89,
        0,
        {{1, 96, 96, 3}},
        {{-1, 96, 96, 3}},
        DType::kFloat32}},
      {"vww_mobilenet_v1_025_int8.tflite",
       {{{"CONV_2D", 14},
         {"DEPTHWISE_CONV_2D", 13},
         {"AVERAGE_POOL_2D", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        89,
        54,
        {{1, 96, 96, 3}},
        {{-1, 96, 96, 3}},
        DType::kInt8}},
      {"face_landmarks_192.tflite",
       {{{"QUANTIZE", 47},
         {"CONV_2D", 25},
         {"MUL", 23},
         {"MAXIMUM", 23},
         {"DEPTHWISE_CONV_2D", 20},
         {"ADD", 20},
         {"MAX_POOL_2D", 5},
         {"PAD", 3},
         {"DEQUANTIZE", 2}},
        269,
        72,
        {{1, 192, 192, 3}},
        {{}},
        DType::kFloat32}},
      {"force_int_quant.tflite",
       {{{"QUANTIZE", 1}, {"FULLY_CONNECTED", 4}, {"DEQUANTIZE", 1}},
        15,
        0,
        {{1, 36}},
        {{-1, 36}},
        DType::kFloat32}},
      {"keyword_scrambled.tflite",
       {{{"QUANTIZE", 2}, {"SVDF", 7}, {"FULLY_CONNECTED", 5}, {"SOFTMAX", 1}},
        54,
        0,
        {{1, 96}},
        {{}},
        DType::kInt16}},
      {"micro_speech_lstm.tflite",
       {{{"UNIDIRECTIONAL_SEQUENCE_LSTM", 1},
         {"RESHAPE", 1},
         {"FULLY_CONNECTED", 1},
         {"SOFTMAX", 1}},
        27,
        0,
        {{1, 49, 257}},
        {{}},
        DType::kInt8}},
      {"seanet_conv0.tflite", {{{"CONV_2D", 1}}, 4, 2, {{1, 8, 166, 2}}, {{}}, DType::kInt16}},
      {"simple_add_model.tflite",
       {{{"ADD", 1}},
        3,
        0,
        {{1, 128, 128, 1}, {1, 128, 128, 1}},
        {{-1, 128, 128, 1}, {-1, 128, 128, 1}},
        DType::kInt8}},
  };
  return *m;
}

TEST_CASE("LoadTflite reads every shared model as an independent reader sees it", "[tflite]") {
  const std::vector<std::string> models = SharedModels();
  if (models.empty()) {
    WARN("shared models not found (MICA_SHARED_DIR); skipped the real-model checks");
    return;
  }
  int checked = 0;
  for (const std::string& path : models) {
    CAPTURE(path);
    absl::StatusOr<Graph> g = LoadModel(path);
    INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
    REQUIRE(g.ok());
    REQUIRE(g->source_format == ModelFormat::kTflite);
    const Subgraph& sg = g->main();
    // No operator in the shared set is unknown to mica.
    for (const Operator& op : sg.ops) CHECK(op.kind != OpKind::kOpaque);

    const auto it = ExpectedModels().find(fs::path(path).filename().string());
    if (it == ExpectedModels().end()) continue;
    const Expected& e = it->second;
    ++checked;
    CHECK(OpHistogram(sg) == e.ops);
    CHECK(sg.tensors.size() == static_cast<size_t>(e.tensors));
    const auto per_channel = std::count_if(sg.tensors.begin(), sg.tensors.end(),
                                           [](const Tensor& t) { return t.quant.per_channel(); });
    CHECK(per_channel == e.per_channel_tensors);
    REQUIRE(sg.inputs.size() == e.input_shapes.size());
    for (size_t i = 0; i < sg.inputs.size(); ++i) {
      const Tensor& in = sg.tensors[sg.inputs[i]];
      CHECK(in.shape == e.input_shapes[i]);
      CHECK(in.shape_signature == e.input_signatures[i]);
      CHECK(in.dtype == e.input_dtype);
    }
    // Per-channel quantization runs along a real axis with one scale per channel.
    for (const Tensor& t : sg.tensors) {
      if (!t.quant.per_channel()) continue;
      REQUIRE(t.quant.axis >= 0);
      REQUIRE(static_cast<size_t>(t.quant.axis) < t.shape.size());
      CHECK(static_cast<size_t>(t.shape[t.quant.axis]) == t.quant.scale.size());
    }
    // Constants are views into the file bytes, not copies.
    REQUIRE(!g->storage.empty());
    const auto& file = *g->storage.front();
    for (const Tensor& t : sg.tensors) {
      if (!t.is_constant() || t.data.size == 0) continue;
      CHECK(t.data.ptr >= file.data());
      CHECK(t.data.ptr + t.data.size <= file.data() + file.size());
    }
  }
  CHECK(checked == static_cast<int>(ExpectedModels().size()));
}

TEST_CASE("LoadTflite: seanet conv0 carries 16x8 per-channel quantization", "[tflite]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared models not found; skipped");
    return;
  }
  absl::StatusOr<Graph> g = LoadModel(shared + "/models/more/seanet_conv0.tflite");
  REQUIRE(g.ok());
  const Subgraph& sg = g->main();
  REQUIRE(sg.ops.size() == 1);
  const Operator& conv = sg.ops[0];
  REQUIRE(conv.kind == OpKind::kConv2D);
  REQUIRE(conv.inputs.size() == 3);
  const Tensor& filter = sg.tensors[conv.inputs[1]];
  const Tensor& bias = sg.tensors[conv.inputs[2]];
  CHECK(sg.tensors[conv.inputs[0]].dtype == DType::kInt16);
  CHECK(filter.dtype == DType::kInt8);
  CHECK(bias.dtype == DType::kInt64);
  CHECK(filter.quant.axis == 0);
  CHECK(filter.quant.scale.size() == static_cast<size_t>(filter.shape[0]));
  CHECK(bias.quant.scale.size() == static_cast<size_t>(filter.shape[0]));
}

TEST_CASE("LoadTflite: micro_speech LSTM keeps its options and optional inputs", "[tflite]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared models not found; skipped");
    return;
  }
  absl::StatusOr<Graph> g = LoadModel(shared + "/models/more/micro_speech_lstm.tflite");
  REQUIRE(g.ok());
  const Subgraph& sg = g->main();
  const auto lstm = std::find_if(sg.ops.begin(), sg.ops.end(), [](const Operator& op) {
    return op.kind == OpKind::kUnidirectionalSequenceLstm;
  });
  REQUIRE(lstm != sg.ops.end());
  CHECK((lstm->inputs.size() == 20 || lstm->inputs.size() == 24));
  CHECK(std::count(lstm->inputs.begin(), lstm->inputs.end(), kNoTensor) > 0);
  const auto& a = lstm->Attrs<LstmAttrs>();
  CHECK(a.activation == Activation::kTanh);
  // The cell state input (18) is an int16 variable tensor.
  const Tensor& cell = sg.tensors[lstm->inputs[19]];
  CHECK(cell.is_variable);
  CHECK(cell.dtype == DType::kInt16);
}

TEST_CASE("LoadTflite: hand-built conv model reads attributes, quantization, constants",
          "[tflite]") {
  auto bytes = Share(BuildFlatbuffer(testing::ConvModel()));
  absl::StatusOr<Graph> g = LoadTflite(bytes, "conv.tflite");
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  CHECK(g->source_path == "conv.tflite");
  const Subgraph& sg = g->main();
  REQUIRE(sg.ops.size() == 1);
  const Operator& op = sg.ops[0];
  REQUIRE(op.kind == OpKind::kConv2D);
  CHECK(op.version == 3);
  const auto& a = op.Attrs<Conv2DAttrs>();
  CHECK(a.stride_w == 1);
  CHECK(a.stride_h == 2);
  CHECK(a.dilation_w == 1);  // schema default when the field is absent
  CHECK(a.dilation_h == 1);
  CHECK(a.padding == Padding::kValid);
  CHECK(a.activation == Activation::kRelu6);
  const Tensor& filter = sg.tensors[1];
  CHECK(filter.quant.scale == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  CHECK(filter.quant.axis == 0);
  REQUIRE(filter.is_constant());
  REQUIRE(filter.data.size == 72);
  CHECK(filter.data.as<int8_t>()[1] == -53);
  CHECK(filter.data.ptr >= bytes->data());
  CHECK(filter.data.ptr < bytes->data() + bytes->size());
  CHECK(reinterpret_cast<uintptr_t>(filter.data.ptr) % 16 == 0);
  const Tensor& bias = sg.tensors[2];
  REQUIRE(bias.is_constant());
  CHECK(bias.data.as<int32_t>()[3] == -400);
  CHECK(sg.tensors[0].quant.zero_point == std::vector<int64_t>{-3});
  CHECK_FALSE(sg.tensors[3].is_constant());
  // The Graph keeps the bytes alive after the caller lets go.
  bytes.reset();
  CHECK(g->main().tensors[2].data.as<int32_t>()[0] == 100);
}

TEST_CASE("LoadTflite: dynamic dimensions resolve to 1 and keep the signature", "[tflite]") {
  FbModel m;
  m.tensors = {testing::MakeTensor({1, 4}, tfl::TensorType_FLOAT32, 0, "a"),
               testing::MakeTensor({-1, 4}, tfl::TensorType_FLOAT32, 0, "b"),
               testing::MakeTensor({3, 4}, tfl::TensorType_FLOAT32, 0, "c")};
  m.tensors[0].shape_signature = std::vector<int32_t>{-1, 4};
  m.tensors[2].shape_signature = std::vector<int32_t>{3, 4};
  FbOp relu;
  relu.builtin_code = 19;  // RELU
  relu.inputs = {0};
  relu.outputs = {1};
  m.ops = {relu};
  m.inputs = {0, 2};
  m.outputs = {1};
  absl::StatusOr<Graph> g = LoadTflite(Share(BuildFlatbuffer(m)), "dyn.tflite");
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  const auto& t = g->main().tensors;
  CHECK(t[0].shape == std::vector<int32_t>{1, 4});
  CHECK(t[0].shape_signature == std::vector<int32_t>{-1, 4});
  CHECK(t[1].shape == std::vector<int32_t>{1, 4});
  CHECK(t[1].shape_signature == std::vector<int32_t>{-1, 4});
  CHECK(t[2].shape == std::vector<int32_t>{3, 4});
  CHECK(t[2].shape_signature.empty());  // equal to the shape
}

TEST_CASE("LoadTflite: operator codes, deprecated int8 codes, opaque and custom operators",
          "[tflite]") {
  FbModel m;
  m.tensors = {testing::MakeTensor({1, 8}, tfl::TensorType_FLOAT32, 0, "x"),
               testing::MakeTensor({1, 8}, tfl::TensorType_FLOAT32, 0, "y1"),
               testing::MakeTensor({1, 8}, tfl::TensorType_FLOAT32, 0, "y2"),
               testing::MakeTensor({1, 8}, tfl::TensorType_FLOAT32, 0, "y3"),
               testing::MakeTensor({1, 8}, tfl::TensorType_FLOAT32, 0, "y4")};
  FbOp old_style;  // pre-2.3 files: only the int8 field, builtin_code left at 0 (ADD)
  old_style.builtin_code = 0;
  old_style.deprecated_code = 21;  // RELU6
  old_style.inputs = {0};
  old_style.outputs = {1};
  FbOp cumsum;  // codes >= 127: placeholder in the int8 field
  cumsum.builtin_code = 128;
  cumsum.deprecated_code = 127;
  cumsum.inputs = {1};
  cumsum.outputs = {2};
  FbOp future;  // a builtin newer than mica
  future.builtin_code = 300;
  future.version = 4;
  future.inputs = {2};
  future.outputs = {3};
  FbOp custom;
  custom.builtin_code = 32;
  custom.custom_code = "TFLite_Detection_PostProcess";
  custom.custom_options = {1, 2, 3, 4, 5};
  custom.inputs = {3, -1};
  custom.outputs = {4};
  m.ops = {old_style, cumsum, future, custom};
  m.inputs = {0};
  m.outputs = {4};
  absl::StatusOr<Graph> g = LoadTflite(Share(BuildFlatbuffer(m)), "codes.tflite");
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  const auto& ops = g->main().ops;
  REQUIRE(ops.size() == 4);
  CHECK(ops[0].kind == OpKind::kRelu6);
  CHECK(ops[1].kind == OpKind::kOpaque);
  CHECK(ops[1].name() == "CUMSUM");
  CHECK(ops[2].kind == OpKind::kOpaque);
  CHECK(ops[2].name() == "BUILTIN_300");
  CHECK(ops[2].version == 4);
  CHECK(ops[3].kind == OpKind::kOpaque);
  CHECK(ops[3].name() == "TFLite_Detection_PostProcess");
  CHECK(ops[3].opaque_options == std::vector<uint8_t>{1, 2, 3, 4, 5});
  CHECK(ops[3].inputs == std::vector<int32_t>{3, kNoTensor});
}

TEST_CASE("LoadTflite: buffers stored after the flatbuffer (large-model extension)", "[tflite]") {
  FbModel m = testing::ConvModel();
  const std::vector<uint8_t> filter_bytes = *m.buffers[1].data;
  // Build once to learn the size, then point buffer 1 past the end, 16-aligned.
  m.buffers[1] = {std::nullopt, 1, 1};
  std::vector<uint8_t> probe = BuildFlatbuffer(m);
  const uint64_t offset = (probe.size() + 64 + 15) / 16 * 16;
  m.buffers[1] = {std::nullopt, offset, filter_bytes.size()};
  std::vector<uint8_t> bytes = BuildFlatbuffer(m);
  REQUIRE(bytes.size() <= offset);
  bytes.resize(offset, 0);
  bytes.insert(bytes.end(), filter_bytes.begin(), filter_bytes.end());
  absl::StatusOr<Graph> g = LoadTflite(Share(bytes), "large.tflite");
  INFO((g.ok() ? std::string("ok") : std::string(g.status().message())));
  REQUIRE(g.ok());
  const Tensor& filter = g->main().tensors[1];
  REQUIRE(filter.data.size == filter_bytes.size());
  CHECK(std::memcmp(filter.data.ptr, filter_bytes.data(), filter_bytes.size()) == 0);

  // One byte short of the data: refused, naming the buffer.
  bytes.pop_back();
  absl::StatusOr<Graph> bad = LoadTflite(Share(bytes), "large.tflite");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(std::string(bad.status().message()),
             Catch::Contains("large.tflite") && Catch::Contains("buffer 1"));
}

TEST_CASE("LoadTflite: description and text metadata are kept, binary metadata dropped",
          "[tflite]") {
  FbModel m = testing::ConvModel();
  const std::string version = "1.14.0";
  std::vector<uint8_t> text(version.begin(), version.end());
  text.resize(16, 0);  // converters pad the version string with NULs
  m.buffers.push_back(testing::DataBuffer(text));
  m.buffers.push_back(testing::DataBuffer({0x10, 0x00, 0x00, 0x00, 0x01, 0x02}));
  m.metadata = {{"min_runtime_version", 3}, {"CONVERSION_METADATA", 4}};
  m.description = "hand built";
  m.subgraph_name = "main";
  absl::StatusOr<Graph> g = LoadTflite(Share(BuildFlatbuffer(m)), "meta.tflite");
  REQUIRE(g.ok());
  CHECK(g->description == "hand built");
  CHECK(g->main().name == "main");
  CHECK(g->metadata == std::map<std::string, std::string>{{"min_runtime_version", "1.14.0"}});
}

TEST_CASE("LoadTflite: every subgraph is read", "[tflite]") {
  FbModel m = testing::ConvModel();
  m.extra_subgraphs = 2;
  absl::StatusOr<Graph> g = LoadTflite(Share(BuildFlatbuffer(m)), "multi.tflite");
  REQUIRE(g.ok());
  REQUIRE(g->subgraphs.size() == 3);
  CHECK(g->subgraphs[2].ops.size() == 1);
  CHECK(g->subgraphs[2].tensors[1].is_constant());
}

}  // namespace
}  // namespace mica
