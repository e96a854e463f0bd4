// LoadTflite on hostile input: truncated files, bit flips and hand-crafted flatbuffers with bad
// indices, shapes, sizes, orders and attributes. Each must give a one-line error naming the
// file and what is wrong, never a crash (the suite runs under ASan/UBSan).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "testing/compare.h"
#include "mica/model/load.h"
#include "model/tflite_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::BuildFlatbuffer;
using testing::FbModel;
using testing::FbOp;
using testing::Share;
namespace tfl = testing::tfl;

constexpr const char* kOrigin = "hostile.tflite";

std::string LoadError(const std::vector<uint8_t>& bytes) {
  absl::StatusOr<Graph> g = LoadTflite(Share(bytes), kOrigin);
  if (g.ok()) return "";
  return std::string(g.status().message());
}

void CheckOneLineError(const std::string& msg) {
  CHECK_FALSE(msg.empty());
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.rfind(kOrigin, 0) == 0);  // starts with the file name
}

// A loaded graph is always valid and writes/re-reads to an equal graph.
void CheckLoadedIsSound(const std::vector<uint8_t>& bytes) {
  absl::StatusOr<Graph> g = LoadTflite(Share(bytes), kOrigin);
  if (!g.ok()) {
    CheckOneLineError(std::string(g.status().message()));
    return;
  }
  REQUIRE(ValidateGraph(*g).ok());
  absl::StatusOr<std::vector<uint8_t>> written = WriteTflite(*g);
  REQUIRE(written.ok());
  absl::StatusOr<Graph> again = LoadTflite(Share(*written), "again.tflite");
  REQUIRE(again.ok());
  CHECK(GraphDifference(*g, *again) == "");
}

TEST_CASE("LoadTflite refuses empty, tiny and non-TFLite input", "[tflite][hostile]") {
  CheckOneLineError(LoadError({}));
  CheckOneLineError(LoadError({'T', 'F', 'L', '3'}));
  std::vector<uint8_t> not_tflite(64, 0xab);
  CHECK_THAT(LoadError(not_tflite), Catch::Contains("TFL3"));
  absl::StatusOr<Graph> null_bytes = LoadTflite(nullptr, kOrigin);
  CHECK_FALSE(null_bytes.ok());
}

TEST_CASE("LoadTflite refuses every truncation of a model", "[tflite][hostile]") {
  const std::vector<uint8_t> full = BuildFlatbuffer(testing::ConvModel());
  REQUIRE(LoadError(full).empty());
  for (size_t n = 0; n < full.size(); ++n) {
    CAPTURE(n);
    const std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    CheckOneLineError(LoadError(cut));
  }
}

TEST_CASE("LoadTflite survives truncations of a real model", "[tflite][hostile]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared models not found; skipped");
    return;
  }
  const std::vector<uint8_t> full =
      testing::ReadFile(shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite");
  const uint64_t seed = testing::TestSeed(0x7f11e);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200; ++i) {
    const size_t n = std::uniform_int_distribution<size_t>(0, full.size() - 1)(rng);
    CAPTURE(n);
    CheckOneLineError(LoadError(std::vector<uint8_t>(full.begin(), full.begin() + n)));
  }
}

TEST_CASE("LoadTflite survives random bit flips", "[tflite][hostile]") {
  const uint64_t seed = testing::TestSeed(0xb17f11b);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint8_t>> bases = {BuildFlatbuffer(testing::ConvModel())};
  const std::string shared = testing::SharedDir();
  if (!shared.empty()) {
    bases.push_back(testing::ReadFile(shared + "/models/more/simple_add_model.tflite"));
    bases.push_back(testing::ReadFile(shared + "/models/more/keyword_scrambled.tflite"));
  }
  int loaded = 0, refused = 0;
  for (const auto& base : bases) {
    for (int i = 0; i < 600; ++i) {
      std::vector<uint8_t> bytes = base;
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) {
        const size_t at = rng() % bytes.size();
        bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      CAPTURE(i);
      absl::StatusOr<Graph> g = LoadTflite(Share(bytes), kOrigin);
      g.ok() ? ++loaded : ++refused;
      CheckLoadedIsSound(bytes);
    }
  }
  // Both outcomes occur: flips in weights load, flips in structure are refused.
  CHECK(loaded > 0);
  CHECK(refused > 0);
}

// Hand-crafted models, each broken in one way. `expect` must appear in the error.
struct Case {
  const char* name;
  std::function<void(FbModel&)> mutate;
  std::vector<const char*> expect;
};

testing::FbOptionsFn ConvOptions(int8_t padding, int32_t stride_w, int32_t stride_h,
                                 int8_t activation, int32_t dilation_w = 1,
                                 int32_t dilation_h = 1) {
  return [=](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(
        tfl::BuiltinOptions_Conv2DOptions,
        tfl::CreateConv2DOptions(b, static_cast<tfl::Padding>(padding), stride_w, stride_h,
                                 static_cast<tfl::ActivationFunctionType>(activation), dilation_w,
                                 dilation_h)
            .Union());
  };
}

FbOp Relu(int32_t in, int32_t out) {
  FbOp op;
  op.builtin_code = 19;
  op.inputs = {in};
  op.outputs = {out};
  return op;
}

const std::vector<Case>& HostileCases() {
  static const auto* cases = new std::vector<Case>{
      {"operator code index out of range",
       [](FbModel& m) { m.ops[0].opcode_index = 5; },
       {"operator 0", "operator code index 5"}},
      {"invalid builtin code",
       [](FbModel& m) {
         m.ops[0].builtin_code = -5;
         m.ops[0].deprecated_code = -5;
       },
       {"invalid builtin code -5"}},
      {"operator input index out of range",
       [](FbModel& m) { m.ops[0].inputs[0] = 99; },
       {"subgraph 0, operator 0 (CONV_2D)", "input 0 refers to tensor 99"}},
      {"operator input index negative",
       [](FbModel& m) { m.ops[0].inputs[0] = -7; },
       {"operator 0", "tensor -7"}},
      {"operator output index out of range",
       [](FbModel& m) { m.ops[0].outputs = {4}; },
       {"output 0 refers to tensor 4"}},
      {"graph input index out of range",
       [](FbModel& m) { m.inputs = {12}; },
       {"subgraph 0: input 0 refers to tensor 12"}},
      {"graph output index negative",
       [](FbModel& m) { m.outputs = {-1}; },
       {"subgraph 0: output 0 refers to tensor -1"}},
      {"buffer index out of range",
       [](FbModel& m) { m.tensors[1].buffer = 40; },
       {"tensor 1 ('filter')", "buffer 40"}},
      {"huge shape",
       [](FbModel& m) {
         m.tensors[3].shape = {65536, 65536, 65536, 4};
       },
       {"tensor 3 ('output')", "exceeds mica's limit"}},
      {"int32-max dimensions",
       [](FbModel& m) {
         m.tensors[3].shape = {2147483647, 2147483647, 2147483647, 2147483647};
       },
       {"tensor 3 ('output')", "exceeds"}},
      {"negative dimension",
       [](FbModel& m) {
         m.tensors[3].shape = {1, -5, 3, 4};
       },
       {"tensor 3 ('output')", "negative"}},
      {"rank above the limit",
       [](FbModel& m) { m.tensors[3].shape = {1, 1, 1, 1, 1, 1, 1, 1, 1}; },
       {"rank 9"}},
      {"constant buffer one byte short",
       [](FbModel& m) { m.buffers[1].data->pop_back(); },
       {"tensor 1 ('filter')", "constant data is 71 bytes", "needs 72"}},
      {"constant buffer too long",
       [](FbModel& m) { m.buffers[2].data->push_back(0); },
       {"tensor 2 ('bias')", "17 bytes"}},
      {"operator reads a tensor produced later",
       [](FbModel& m) {
         m.tensors.push_back(testing::MakeTensor({1, 2, 3, 4}, tfl::TensorType_INT8, 0, "late"));
         m.ops.insert(m.ops.begin(), Relu(3, 4));
         m.outputs = {4};
       },
       {"operator 0 (RELU)", "reads tensor 3", "before any operator produces it"}},
      {"two operators in a cycle",
       [](FbModel& m) {
         m.tensors.push_back(testing::MakeTensor({1, 5, 5, 2}, tfl::TensorType_INT8, 0, "loop"));
         m.ops[0].inputs[0] = 4;
         m.ops.push_back(Relu(3, 4));
       },
       {"operator 0 (CONV_2D)", "reads tensor 4 ('loop')", "cycle"}},
      {"tensor produced twice",
       [](FbModel& m) { m.ops.push_back(Relu(0, 3)); },
       {"operator 1 (RELU)", "tensor 3 ('output')", "already produced"}},
      {"operator writes a graph input",
       [](FbModel& m) { m.ops.push_back(Relu(3, 0)); },
       {"operator 1 (RELU)", "already produced"}},
      {"operator writes a constant",
       [](FbModel& m) { m.ops.push_back(Relu(3, 2)); },
       {"operator 1 (RELU)", "writes constant tensor 2 ('bias')"}},
      {"graph output never produced",
       [](FbModel& m) { m.ops.clear(); },
       {"output 0 is tensor 3 ('output')", "no operator produces"}},
      {"required input absent",
       [](FbModel& m) { m.ops[0].inputs[1] = -1; },
       {"operator 0 (CONV_2D)", "required input 1 is absent"}},
      {"too few inputs",
       [](FbModel& m) { m.ops[0].inputs = {0}; },
       {"operator 0 (CONV_2D)", "has 1 inputs; expects 2 to 3"}},
      {"too many outputs",
       [](FbModel& m) {
         m.tensors.push_back(testing::MakeTensor({1}, tfl::TensorType_INT8, 0, "extra"));
         m.ops[0].outputs = {3, 4};
       },
       {"has 2 outputs; expects 1"}},
      {"per-channel scale count differs from the channels",
       [](FbModel& m) {
         m.tensors[1].scale = {0.1f, 0.2f, 0.3f};
         m.tensors[1].zero_point = {0, 0, 0};
       },
       {"tensor 1 ('filter')", "3 scales along axis 0"}},
      {"scales and zero points differ in count",
       [](FbModel& m) {
         m.tensors[1].zero_point = {0, 0};
       },
       {"tensor 1 ('filter')", "4 scales but 2 zero points"}},
      {"scales without zero points",
       [](FbModel& m) { m.tensors[0].zero_point.clear(); },
       {"tensor 0 ('input')", "1 scales but 0 zero points"}},
      {"quantized axis out of range",
       [](FbModel& m) { m.tensors[1].quantized_dimension = 7; },
       {"tensor 1 ('filter')", "quantized axis 7"}},
      {"negative quantized axis on a per-channel tensor",
       [](FbModel& m) { m.tensors[1].quantized_dimension = -1; },
       {"tensor 1 ('filter')", "quantized axis -1"}},
      {"int8 zero point out of range",
       [](FbModel& m) { m.tensors[0].zero_point = {300}; },
       {"tensor 0 ('input')", "zero point 0 is 300"}},
      {"negative scale",
       [](FbModel& m) { m.tensors[0].scale = {-1.0f}; },
       {"tensor 0 ('input')", "scale 0 is -1"}},
      {"NaN scale",
       [](FbModel& m) { m.tensors[3].scale = {std::numeric_limits<float>::quiet_NaN()}; },
       {"tensor 3 ('output')", "must be finite"}},
      {"stride 0",
       [](FbModel& m) {
         m.ops[0].options = ConvOptions(tfl::Padding_VALID, 0, 1, tfl::ActivationFunctionType_NONE);
       },
       {"operator 0 (CONV_2D)", "stride_w is 0; must be >= 1"}},
      {"negative dilation",
       [](FbModel& m) {
         m.ops[0].options =
             ConvOptions(tfl::Padding_VALID, 1, 1, tfl::ActivationFunctionType_NONE, 1, -1);
       },
       {"dilation_h is -1"}},
      {"unknown fused activation",
       [](FbModel& m) { m.ops[0].options = ConvOptions(tfl::Padding_VALID, 1, 1, 9); },
       {"operator 0 (CONV_2D)", "fused activation code 9"}},
      {"unknown padding",
       [](FbModel& m) {
         m.ops[0].options = ConvOptions(5, 1, 1, tfl::ActivationFunctionType_NONE);
       },
       {"padding code 5"}},
      {"options of the wrong type",
       [](FbModel& m) {
         m.ops[0].options = [](flatbuffers::FlatBufferBuilder& b) {
           return std::make_pair(tfl::BuiltinOptions_Pool2DOptions,
                                 tfl::CreatePool2DOptions(b).Union());
         };
       },
       {"operator 0 (CONV_2D)", "builtin options have type 5", "Conv2DOptions"}},
      {"conv input of rank 3",
       [](FbModel& m) {
         m.tensors[0].shape = {5, 5, 2};
       },
       {"operator 0 (CONV_2D)", "input has shape [5,5,2]; must be rank 4"}},
      {"conv channels not a multiple of the filter's",
       [](FbModel& m) {
         m.tensors[0].shape = {1, 5, 5, 3};
       },
       {"operator 0 (CONV_2D)", "not a multiple"}},
      {"schema version 2", [](FbModel& m) { m.version = 2; }, {"schema version 2"}},
      {"no subgraphs", [](FbModel& m) { m.extra_subgraphs = -1; }, {"no subgraphs"}},
      {"string tensors",
       [](FbModel& m) { m.tensors[3].type = tfl::TensorType_STRING; },
       {"tensor 3 ('output')", "STRING", "not supported"}},
      {"unknown element type",
       [](FbModel& m) { m.tensors[3].type = 99; },
       {"tensor 3 ('output')", "code 99"}},
      {"metadata buffer out of range",
       [](FbModel& m) {
         m.metadata = {{"meta", 77}};
       },
       {"metadata 'meta'", "buffer 77"}},
      {"external buffer past the end of the file",
       [](FbModel& m) {
         m.buffers[1] = {std::nullopt, uint64_t{1} << 40, 72};
       },
       {"buffer 1", "outside"}},
      {"external buffer size overflows",
       [](FbModel& m) {
         m.buffers[1] = {std::nullopt, 16, ~uint64_t{0}};
       },
       {"buffer 1", "outside"}},
      {"custom options past the end of the file",
       [](FbModel& m) {
         FbOp custom;
         custom.builtin_code = 32;
         custom.custom_code = "Evil";
         custom.inputs = {3};
         custom.outputs = {0};
         custom.large_custom_options_offset = uint64_t{1} << 30;
         custom.large_custom_options_size = 8;
         m.ops.push_back(custom);
       },
       {"operator 1 ('Evil')", "custom options"}},
      {"shape signature disagrees with the shape",
       [](FbModel& m) {
         m.tensors[0].shape_signature = std::vector<int32_t>{2, 5, 5, 2};
       },
       {"tensor 0 ('input')", "disagrees"}},
      {"control characters in a tensor name",
       [](FbModel& m) {
         m.tensors[3].name = "evil\nname\r";
         m.tensors[3].shape = {1, -2, 3, 4};
       },
       {"tensor 3 ('evil?name?')"}},
  };
  return *cases;
}

TEST_CASE("LoadTflite refuses hand-crafted hostile models with a precise message",
          "[tflite][hostile]") {
  REQUIRE(LoadError(BuildFlatbuffer(testing::ConvModel())).empty());
  for (const Case& c : HostileCases()) {
    CAPTURE(c.name);
    FbModel m = testing::ConvModel();
    c.mutate(m);
    const std::string msg = LoadError(BuildFlatbuffer(m));
    CAPTURE(msg);
    CheckOneLineError(msg);
    for (const char* e : c.expect) CHECK_THAT(msg, Catch::Contains(e));
  }
}

TEST_CASE("LoadTflite refuses files whose objects share data to amplify memory",
          "[tflite][hostile]") {
  // One tensor table with a 64 KiB name, referenced 2000 times: a 74 KB file that would
  // copy out 130 MB of names.
  flatbuffers::FlatBufferBuilder b;
  const auto tensor =
      tfl::CreateTensor(b, b.CreateVector(std::vector<int32_t>{1}), tfl::TensorType_INT8, 0,
                        b.CreateString(std::string(64 * 1024, 'n')));
  const std::vector<flatbuffers::Offset<tfl::Tensor>> tensors(2000, tensor);
  const auto sg = tfl::CreateSubGraph(b, b.CreateVector(tensors));
  const std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs = {sg};
  const std::vector<flatbuffers::Offset<tfl::Buffer>> buffers = {tfl::CreateBuffer(b)};
  tfl::FinishModelBuffer(
      b, tfl::CreateModel(b, 3, 0, b.CreateVector(subgraphs), 0, b.CreateVector(buffers)));
  const std::vector<uint8_t> bytes(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  REQUIRE(bytes.size() < 80 * 1024);
  const std::string msg = LoadError(bytes);
  CheckOneLineError(msg);
  CHECK_THAT(msg, Catch::Contains("share data far beyond the file's size"));
}

TEST_CASE("LoadTflite reads int64 zero points that are not 8-byte aligned",
          "[tflite][hostile][fuzz-finding]") {
  // libFuzzer (fuzz_tflite) found this: the verifier accepts a [long] vector at any multiple
  // of 4, and reading its elements through an int64 pointer is undefined behaviour. The same
  // bytes are kept in test/fuzz/corpus/fuzz_tflite/.
  FbModel m = testing::ConvModel();
  m.tensors[1].zero_point = {0, 0, 0, 0};
  m.tensors[1].misaligned_zero_point = true;
  m.tensors[0].zero_point = {-3};
  m.tensors[0].misaligned_zero_point = true;
  const std::vector<uint8_t> bytes = BuildFlatbuffer(m);
  // The file really holds misaligned elements (else this test would prove nothing).
  const tfl::Model* fm = tfl::GetModel(bytes.data());
  const auto* zp = fm->subgraphs()->Get(0)->tensors()->Get(0)->quantization()->zero_point();
  REQUIRE(zp != nullptr);
  REQUIRE((zp->Data() - bytes.data()) % 8 == 4);
  absl::StatusOr<Graph> g = LoadTflite(Share(bytes), kOrigin);
  REQUIRE(g.ok());
  CHECK(g->main().tensors[0].quant.zero_point == std::vector<int64_t>{-3});
  CHECK(g->main().tensors[1].quant.zero_point == std::vector<int64_t>{0, 0, 0, 0});
  CheckLoadedIsSound(bytes);
}

TEST_CASE("LoadTflite hands out aligned constant data even when the file's is not",
          "[tflite][hostile]") {
  // The bias buffer lives after the flatbuffer (the large-model extension) at an odd offset;
  // kernels and estimators read it as int32, so the loader must give them an aligned copy.
  FbModel m = testing::ConvModel();
  const std::vector<int32_t> bias = {100, -200, 300, -400};
  const std::vector<uint8_t> bias_bytes = testing::Bytes(bias);
  m.buffers[2] = testing::FbBuffer{};
  m.buffers[2].offset = 2;  // placeholder with the final size's encoding, patched below
  m.buffers[2].size = bias_bytes.size();
  const size_t fb_size = BuildFlatbuffer(m).size();
  m.buffers[2].offset = fb_size + 1;
  std::vector<uint8_t> bytes = BuildFlatbuffer(m);
  REQUIRE(bytes.size() == fb_size);
  bytes.push_back(0);
  bytes.insert(bytes.end(), bias_bytes.begin(), bias_bytes.end());
  absl::StatusOr<Graph> g = LoadTflite(Share(bytes), kOrigin);
  REQUIRE(g.ok());
  const ConstData& data = g->main().tensors[2].data;
  REQUIRE(data.size == bias_bytes.size());
  CHECK(reinterpret_cast<uintptr_t>(data.ptr) % alignof(int32_t) == 0);
  CHECK(std::vector<int32_t>(data.as<int32_t>(), data.as<int32_t>() + 4) == bias);
}

}  // namespace
}  // namespace mica
