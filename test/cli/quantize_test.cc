// `mica quantize`: each scheme on a float model (written by `mica zoo`), the float fallback,
// --exclude, --io, calibration formats, malformed calibration data (clear one-line errors, no
// file written), the per-layer report, and that the files load, run (`mica run`) and place on
// the NPU (`mica check`) like TensorFlow's quantized models.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "mica/base/file.h"
#include "mica/model/builder.h"
#include "mica/model/load.h"
#include "model/onnx_test_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::RunMica;
namespace fs = std::filesystem;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// TempDir wipes its folder: ctest runs the test cases in parallel processes, so each process
// gets its own folders.
std::string Dir(const std::string& tag) {
  return testing::TempDir(tag + "-" + std::to_string(getpid()));
}

// A version 1.0 .npy file of `dtype_descr` ("<f4", "|i1") and `shape` holding `bytes`.
void WriteNpy(const std::string& path, const std::string& descr, const std::vector<int32_t>& shape,
              const std::vector<uint8_t>& bytes) {
  std::string dims;
  for (int32_t d : shape) dims += std::to_string(d) + ",";
  if (shape.size() > 1) dims.pop_back();
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  f.put(static_cast<char>(len & 0xFF));
  f.put(static_cast<char>(len >> 8));
  f << header;
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> FloatBytes(size_t n, uint64_t seed, float lo = 0.0f, float hi = 1.0f) {
  SeededRng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = lo + (hi - lo) * rng.Uniform01();
  std::vector<uint8_t> b(n * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// Float KWS (49x10x1 input) written once by `mica zoo`.
const std::string& KwsFloat() {
  static const std::string path = [] {
    const std::string dir = Dir("quantize-zoo");
    CliResult r = RunMica({"zoo", "--output-dir", dir, "--model", "kws_ds_cnn",
                           "--calibration-samples", "1"});
    REQUIRE(r.exit_code == 0);
    return dir + "/kws_ds_cnn_float.tflite";
  }();
  return path;
}

// A calibration folder of `n` .npy files (one 1x49x10x1 sample each) for the KWS model.
std::string KwsCalibration(int n) {
  const std::string dir = Dir("quantize-calib-" + std::to_string(n));
  for (int i = 0; i < n; ++i) {
    WriteNpy(dir + "/s" + std::to_string(i) + ".npy", "<f4", {1, 49, 10, 1},
             FloatBytes(490, 100 + static_cast<uint64_t>(i), -1.0f, 1.0f));
  }
  return dir;
}

// Parses a number after "key": in JSON text (first occurrence after `from`).
double JsonNumber(const std::string& json, const std::string& key, size_t from = 0) {
  const size_t at = json.find("\"" + key + "\":", from);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

TEST_CASE("mica quantize: each scheme writes a model mica loads and runs", "[quantize]") {
  const std::string calib = KwsCalibration(4);
  const std::string dir = Dir("quantize-schemes");
  double a8w8_sqnr = 0;
  for (const std::string scheme : {"a8w8", "a16w8", "a8w4"}) {
    CAPTURE(scheme);
    const std::string out = dir + "/kws_" + scheme + ".tflite";
    CliResult r = RunMica({"quantize", KwsFloat(), "--calibration", calib, "-o", out, "--scheme",
                           scheme, "--json"});
    CAPTURE(r.out, r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(Has(r.out, "\"schema\": \"mica.quantize/1\""));
    CHECK(Has(r.out, "\"samples\": 4"));
    auto g = LoadModel(out);
    REQUIRE(g.ok());
    const Subgraph& sg = g->main();
    const Tensor& in = sg.tensors[static_cast<size_t>(sg.inputs[0])];
    const Tensor& w = sg.tensors[static_cast<size_t>(sg.ops[0].inputs[1])];
    const Tensor& bias = sg.tensors[static_cast<size_t>(sg.ops[0].inputs[2])];
    CHECK(sg.ops[0].kind == OpKind::kConv2D);
    CHECK(w.quant.per_channel());
    for (const Tensor& t : sg.tensors) CHECK(t.dtype != DType::kFloat32);
    if (scheme == "a16w8") {
      CHECK(in.dtype == DType::kInt16);
      CHECK(in.quant.zero_point[0] == 0);
      CHECK(w.dtype == DType::kInt8);
      CHECK(bias.dtype == DType::kInt64);
    } else {
      CHECK(in.dtype == DType::kInt8);
      CHECK(w.dtype == (scheme == "a8w4" ? DType::kInt4 : DType::kInt8));
      CHECK(bias.dtype == DType::kInt32);
    }
    const double sqnr = JsonNumber(r.out, "sqnr_db", r.out.find("\"outputs\""));
    if (scheme == "a8w4") {
      // mica has no int4 kernels: the report evaluates an int8 copy of the int4 values; the
      // file itself loads and checks (its int4 convolutions go to the CPU), `mica run` refuses.
      CHECK(Has(r.out, "\"evaluation\": null"));
      CHECK(Has(r.out, "\"bits\": 4"));
      CHECK(sqnr > 10.0);
      CHECK(sqnr < a8w8_sqnr);
      CliResult c = RunMica({"check", out, "-t", "ethos-u55-128", "--compatibility"});
      CHECK(c.exit_code == 0);
      CHECK(Has(c.out, "int4 (NPU needs 8-bit weights)"));
      continue;
    }
    CHECK(sqnr > 25.0);
    if (scheme == "a8w8") a8w8_sqnr = sqnr;
    if (scheme == "a16w8") CHECK(sqnr > a8w8_sqnr + 10.0);
    // Every operator places on the NPU (int16 biases stay below Vela's 2^40 bound).
    CliResult c = RunMica({"check", out, "-t", "ethos-u55-128", "--compatibility", "--json"});
    CHECK(c.exit_code == 0);
    CHECK_FALSE(Has(c.out, "\"placement\": \"cpu\""));
    // `mica run` on the file, with a raw input of the input's dtype and size.
    const std::string input = dir + "/in_" + scheme + ".bin";
    REQUIRE(WriteFileBytes(input, std::vector<uint8_t>(static_cast<size_t>(in.num_bytes()), 3)).ok());
    CliResult run = RunMica({"run", out, "--input", input, "--output-dir", dir + "/run_" + scheme});
    CAPTURE(run.err);
    CHECK(run.exit_code == 0);
    CHECK(fs::exists(dir + "/run_" + scheme + "/output_0.bin"));
  }
}

TEST_CASE("mica quantize: the text report lists every layer and the worst ones", "[quantize]") {
  const std::string out = Dir("quantize-text") + "/q.tflite";
  CliResult r = RunMica({"quantize", KwsFloat(), "--calibration", KwsCalibration(2), "-o", out,
                         "--observer", "percentile=99.9"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "observer percentile=99.9"));
  CHECK(Has(r.out, "SQNR dB"));
  CHECK(Has(r.out, "DEPTHWISE_CONV_2D"));
  CHECK(Has(r.out, "int8 per-channel"));
  CHECK(Has(r.out, "layers that lose most"));
  CHECK(Has(r.out, "output 'softmax': SQNR"));
  for (const std::string obs : {"minmax", "ema", "mse"}) {
    CliResult o = RunMica({"quantize", KwsFloat(), "--calibration", "random=2", "-o", out,
                           "--observer", obs});
    CAPTURE(obs, o.err);
    CHECK(o.exit_code == 0);
    CHECK(Has(o.err, "warning: random calibration data"));
  }
  CHECK(RunMica({"quantize", KwsFloat(), "--calibration", "random", "-o", out, "--observer",
                 "median"}).exit_code == 2);
  CHECK(RunMica({"quantize", KwsFloat(), "--calibration", "random", "-o", out, "--scheme",
                 "a4w4"}).exit_code == 2);
}

TEST_CASE("mica quantize: operators without an integer rule stay float, with the reason",
          "[quantize]") {
  GraphBuilder b("fallback", 3);
  const int32_t x = b.Input("x", {1, 16});
  const int32_t h = b.FullyConnected(x, b.HeWeights("fc1/w", {16, 16}), b.RandomBias("fc1/b", 16),
                                     {}, "fc1");
  const int32_t e = b.Unary(OpKind::kExp, h, "exp");
  const int32_t y = b.FullyConnected(e, b.HeWeights("fc2/w", {4, 16}), b.RandomBias("fc2/b", 4),
                                     {}, "fc2");
  b.Output(b.Softmax(y, 1.0f, "probs"));
  auto g = b.Build();
  REQUIRE(g.ok());
  auto bytes = WriteTflite(*g);
  REQUIRE(bytes.ok());
  const std::string dir = Dir("quantize-fallback");
  REQUIRE(WriteFileBytes(dir + "/f.tflite", *bytes).ok());
  WriteNpy(dir + "/calib.npy", "<f4", {8, 16}, FloatBytes(128, 7, -1.0f, 1.0f));

  CliResult r = RunMica({"quantize", dir + "/f.tflite", "--calibration", dir + "/calib.npy", "-o",
                         dir + "/q.tflite", "--exclude", "SOFTMAX"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "Operators kept in float32:"));
  CHECK(Has(r.out, "#1 EXP: the quantizer has no integer rule for this operator"));
  CHECK(Has(r.out, "#3 SOFTMAX: excluded (--exclude)"));
  auto q = LoadModel(dir + "/q.tflite");
  REQUIRE(q.ok());
  int dequantize = 0, quantize = 0;
  for (const Operator& op : q->main().ops) {
    dequantize += op.kind == OpKind::kDequantize;
    quantize += op.kind == OpKind::kQuantize;
    if (op.kind == OpKind::kExp || op.kind == OpKind::kSoftmax) {
      CHECK(q->main().tensors[static_cast<size_t>(op.outputs[0])].dtype == DType::kFloat32);
    }
    if (op.kind == OpKind::kFullyConnected) {
      CHECK(q->main().tensors[static_cast<size_t>(op.outputs[0])].dtype == DType::kInt8);
    }
  }
  CHECK(dequantize == 2);  // before EXP and before SOFTMAX
  CHECK(quantize == 1);    // after EXP
  // The graph output is SOFTMAX's float output; the input stays int8.
  const Tensor& out = q->main().tensors[static_cast<size_t>(q->main().outputs[0])];
  CHECK(out.dtype == DType::kFloat32);
  REQUIRE(WriteFileBytes(dir + "/in.bin", std::vector<uint8_t>(16, 5)).ok());
  CliResult run = RunMica({"run", dir + "/q.tflite", "--input", dir + "/in.bin", "--output-dir",
                           dir + "/run"});
  CAPTURE(run.err);
  CHECK(run.exit_code == 0);

  // JSON names the fallbacks too; an --exclude that matches nothing is a usage error.
  CliResult j = RunMica({"quantize", dir + "/f.tflite", "--calibration", dir + "/calib.npy", "-o",
                         dir + "/q2.tflite", "--json", "--exclude", "fc2"});
  CHECK(j.exit_code == 0);
  CHECK(Has(j.out, "\"kind\": \"EXP\""));
  CHECK(Has(j.out, "\"reason\": \"excluded (--exclude)\""));
  CliResult bad = RunMica({"quantize", dir + "/f.tflite", "--calibration", dir + "/calib.npy",
                           "-o", dir + "/q3.tflite", "--exclude", "nothing_named_so"});
  CHECK(bad.exit_code == 2);
  CHECK(Has(bad.err, "no operator has that index, type or output tensor name"));
  CHECK_FALSE(fs::exists(dir + "/q3.tflite"));
}

TEST_CASE("mica quantize: --io float and uint8 put conversions at the edges", "[quantize]") {
  const std::string dir = Dir("quantize-io");
  for (const std::string io : {"float", "uint8"}) {
    CAPTURE(io);
    const std::string out = dir + "/q_" + io + ".tflite";
    CliResult r = RunMica({"quantize", KwsFloat(), "--calibration", "random=2", "-o", out, "--io", io});
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    auto g = LoadModel(out);
    REQUIRE(g.ok());
    const Subgraph& sg = g->main();
    const DType want = io == "float" ? DType::kFloat32 : DType::kUInt8;
    CHECK(sg.tensors[static_cast<size_t>(sg.inputs[0])].dtype == want);
    CHECK(sg.tensors[static_cast<size_t>(sg.outputs[0])].dtype == want);
    CHECK(sg.ops.front().kind == OpKind::kQuantize);
  }
  CHECK(RunMica({"quantize", KwsFloat(), "--calibration", "random", "-o", dir + "/x.tflite",
                 "--io", "uint8", "--scheme", "a16w8"}).exit_code == 2);
}

TEST_CASE("mica quantize: calibration formats (stacked .npy, .npz, raw)", "[quantize]") {
  const std::string dir = Dir("quantize-formats");
  const std::string out = dir + "/q.tflite";
  WriteNpy(dir + "/stacked.npy", "<f4", {3, 49, 10, 1}, FloatBytes(3 * 490, 1));
  CliResult r = RunMica({"quantize", KwsFloat(), "--calibration", dir + "/stacked.npy", "-o", out,
                         "--json"});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "\"samples\": 3"));
  const std::string raw_dir = Dir("quantize-raw");
  REQUIRE(WriteFileBytes(raw_dir + "/two.raw", FloatBytes(2 * 490, 2)).ok());
  r = RunMica({"quantize", KwsFloat(), "--calibration", raw_dir, "-o", out, "--json"});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "\"samples\": 2"));
  // An .npz as np.savez writes it: stored zip entries named <array>.npy.
  const std::string npy = dir + "/stacked.npy";
  auto body = ReadFileBytes(npy);
  REQUIRE(body.ok());
  std::vector<uint8_t> zip;
  auto le16 = [&](uint32_t v) { zip.push_back(v & 0xFF); zip.push_back((v >> 8) & 0xFF); };
  auto le32 = [&](uint32_t v) { le16(v & 0xFFFF); le16(v >> 16); };
  const std::string name = "arr_0.npy";
  le32(0x04034b50); le16(20); le16(0); le16(0); le16(0); le16(0); le32(0);
  le32(static_cast<uint32_t>((*body)->size())); le32(static_cast<uint32_t>((*body)->size()));
  le16(static_cast<uint32_t>(name.size())); le16(0);
  zip.insert(zip.end(), name.begin(), name.end());
  zip.insert(zip.end(), (*body)->begin(), (*body)->end());
  REQUIRE(WriteFileBytes(dir + "/calib.npz", zip).ok());
  r = RunMica({"quantize", KwsFloat(), "--calibration", dir + "/calib.npz", "-o", out, "--json"});
  CAPTURE(r.err);
  CHECK(r.exit_code == 0);
  CHECK(Has(r.out, "\"samples\": 3"));
  // Compressed entries are refused by name.
  zip[8] = 8;
  REQUIRE(WriteFileBytes(dir + "/compressed.npz", zip).ok());
  r = RunMica({"quantize", KwsFloat(), "--calibration", dir + "/compressed.npz", "-o", out});
  CHECK(r.exit_code == 1);
  CHECK(Has(r.err, "np.savez_compressed"));
}

TEST_CASE("mica quantize: malformed calibration data gives one clear line and no file",
          "[quantize]") {
  const std::string dir = Dir("quantize-bad");
  const std::string out = dir + "/never.tflite";
  const std::string empty = Dir("quantize-empty");
  WriteNpy(dir + "/shape.npy", "<f4", {1, 10, 49, 2}, FloatBytes(980, 1));
  WriteNpy(dir + "/type.npy", "|i1", {1, 49, 10, 1}, std::vector<uint8_t>(490, 1));
  REQUIRE(WriteFileBytes(dir + "/short.raw", std::vector<uint8_t>(100, 0)).ok());
  struct Case {
    std::string data, want;
  };
  const std::vector<Case> cases = {
      {dir + "/shape.npy", "shape [1,10,49,2] does not match input"},
      {dir + "/type.npy", "holds int8 data; calibration needs float32"},
      {empty, "holds no files"},
      {dir + "/short.raw", "100 bytes of raw data is not a whole number of float32 samples"},
      {dir + "/missing", "does not exist"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.data);
    CliResult r = RunMica({"quantize", KwsFloat(), "--calibration", c.data, "-o", out});
    CAPTURE(r.err);
    CHECK(r.exit_code == 1);
    CHECK(Has(r.err, c.want));
    CHECK(testing::CountLines(r.err) == 1);
    CHECK_FALSE(fs::exists(out));
  }
  CHECK(RunMica({"quantize", KwsFloat(), "-o", out}).exit_code == 2);
  CHECK(RunMica({"quantize", KwsFloat(), "--calibration", "random=0", "-o", out}).exit_code == 2);
  // An int8 model is refused: it is already quantized.
  const std::string qdir = Dir("quantize-twice");
  REQUIRE(RunMica({"quantize", KwsFloat(), "--calibration", "random=1", "-o", qdir + "/q.tflite"})
              .exit_code == 0);
  CliResult twice = RunMica({"quantize", qdir + "/q.tflite", "--calibration", "random", "-o", out});
  CHECK(twice.exit_code == 1);
  CHECK(Has(twice.err, "already quantized"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("mica quantize: the MLPerf Tiny float models place on the NPU like TF's int8 ones",
          "[quantize]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty() || !fs::exists(shared + "/models/mlperf-tiny/kws_ds_cnn_float.tflite")) {
    WARN("shared models absent: skipped");
    return;
  }
  const std::string dir = Dir("quantize-npu");
  for (const std::string m : {"kws_ds_cnn", "ad_autoencoder", "ic_resnet8", "vww_mobilenet_v1_025"}) {
    CAPTURE(m);
    const std::string out = dir + "/" + m + ".tflite";
    CliResult q = RunMica({"quantize", shared + "/models/mlperf-tiny/" + m + "_float.tflite",
                           "--calibration", "random=2", "-o", out});
    CAPTURE(q.err);
    REQUIRE(q.exit_code == 0);
    auto count = [](const std::string& json, const std::string& what) {
      int n = 0;
      for (size_t at = json.find(what); at != std::string::npos; at = json.find(what, at + 1)) ++n;
      return n;
    };
    CliResult mine = RunMica({"check", out, "-t", "ethos-u55-128", "--compatibility", "--json"});
    CliResult tf = RunMica({"check", shared + "/models/mlperf-tiny/" + m + "_int8.tflite", "-t",
                            "ethos-u55-128", "--compatibility", "--json"});
    REQUIRE(mine.exit_code == 0);
    REQUIRE(tf.exit_code == 0);
    CHECK(count(mine.out, "\"placement\": \"npu\"") == count(tf.out, "\"placement\": \"npu\""));
    CHECK(count(mine.out, "\"placement\": \"cpu\"") == 0);
  }
}

TEST_CASE("mica quantize takes a float ONNX model", "[quantize]") {
  // Conv (NCHW, as ONNX writes it) + Relu + Flatten + Gemm, float weights, built here.
  onnx_test::OnnxBuilder b;
  b.Input("x", {1, 3, 8, 8});
  std::vector<float> w(4 * 3 * 3 * 3), bias(4), fc(10 * 4 * 8 * 8), fc_bias(10);
  SeededRng rng(7);
  for (float& v : w) v = static_cast<float>(rng.Uniform01()) - 0.5f;
  for (float& v : bias) v = 0.1f * static_cast<float>(rng.Uniform01());
  for (float& v : fc) v = 0.1f * (static_cast<float>(rng.Uniform01()) - 0.5f);
  for (float& v : fc_bias) v = 0.01f;
  b.Init("w", {4, 3, 3, 3}, w);
  b.Init("b", {4}, bias);
  b.Init("fc", {10, 4 * 8 * 8}, fc);
  b.Init("fcb", {10}, fc_bias);
  auto& conv = b.Node("Conv", {"x", "w", "b"}, {"c"});
  onnx_test::AttrInts(conv, "pads", {1, 1, 1, 1});
  b.Node("Relu", {"c"}, {"r"});
  b.Node("Flatten", {"r"}, {"f"});
  auto& gemm = b.Node("Gemm", {"f", "fc", "fcb"}, {"y"});
  onnx_test::AttrI(gemm, "transB", 1);
  b.Output("y");
  const std::string dir = Dir("quantize-onnx");
  const std::string in = dir + "/small.onnx", out = dir + "/small_int8.tflite";
  auto bytes = b.Bytes();
  REQUIRE(WriteFileBytes(in, *bytes).ok());

  CliResult q = RunMica({"quantize", in, "--calibration", "random=8", "-o", out});
  CAPTURE(q.out, q.err);
  REQUIRE(q.exit_code == 0);
  absl::StatusOr<Graph> g = LoadModel(out);
  REQUIRE(g.ok());
  bool int8_conv = false, int8_fc = false;
  for (const Operator& op : g->main().ops) {
    const DType in_type = g->main().tensors[op.inputs[0]].dtype;
    if (op.kind == OpKind::kConv2D) int8_conv = in_type == DType::kInt8;
    if (op.kind == OpKind::kFullyConnected) int8_fc = in_type == DType::kInt8;
  }
  CHECK(int8_conv);
  CHECK(int8_fc);
}

}  // namespace
}  // namespace mica
