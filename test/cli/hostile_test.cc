// Hostile input through the `mica` binary (issue 16): unary activations whose output is
// declared smaller or larger than their input (`run` once wrote past the output buffer),
// resource bombs under a memory limit, and the messages for bad target configs, absurd clocks,
// huge ONNX dimensions and too-deep nesting.
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "cli/cli_util.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;
using mica::testing::CliResult;
using mica::testing::CountLines;
using mica::testing::RunBinary;
using mica::testing::RunMica;

const std::string kCorpus = std::string(MICA_TEST_DATA_DIR) + "/../fuzz/corpus";

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A .npy (version 1.0) of `n` zero values of `descr` ('|i1' int8, '<i2' int16), shape (1, n).
void WriteZerosNpy(const std::string& path, const std::string& descr, int32_t n) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1, " +
                       std::to_string(n) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out += std::string(static_cast<size_t>(n) * (descr == "|i1" ? 1 : 2), '\0');
  WriteText(path, out);
}

// One quantized unary activation: input [1, in_n], output [1, out_n], dtype int8 or int16.
// `attrs` overrides the operator's attributes (e.g. a softmax's beta).
std::vector<uint8_t> UnaryModel(OpKind kind, DType dtype, int32_t in_n, int32_t out_n,
                                const OpAttrs& attrs = {}) {
  Graph g;
  g.subgraphs.emplace_back();
  Subgraph& sg = g.subgraphs.back();
  const bool logistic_like = kind == OpKind::kLogistic || kind == OpKind::kTanh;
  auto tensor = [&](const std::string& name, int32_t n, bool output) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    // The output is written as [1, 1, n] (the same elements: a valid file) and its last
    // dimension patched below, since mica's writer refuses a graph that does not validate.
    t.shape = output ? std::vector<int32_t>{1, 1, n} : std::vector<int32_t>{1, n};
    if (dtype == DType::kInt8) {
      t.quant.scale = {output && logistic_like ? 1.0f / 256 : 0.05f};
      t.quant.zero_point = {output && kind == OpKind::kLogistic ? -128 : 0};
    } else {
      t.quant.scale = {output && logistic_like ? 1.0f / 32768 : 0.001f};
      t.quant.zero_point = {0};
    }
    sg.tensors.push_back(t);
    return static_cast<int32_t>(sg.tensors.size()) - 1;
  };
  const int32_t x = tensor("x", in_n, false);
  const int32_t y = tensor("y", in_n, true);
  Operator op;
  op.kind = kind;
  if (kind == OpKind::kLeakyRelu) op.attrs = LeakyReluAttrs{0.1f};
  if (!std::holds_alternative<std::monostate>(attrs)) op.attrs = attrs;
  op.inputs = {x};
  op.outputs = {y};
  sg.ops.push_back(op);
  sg.inputs = {x};
  sg.outputs = {y};
  absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(g);
  INFO(bytes.status().message());
  REQUIRE(bytes.ok());
  if (out_n != in_n) {
    // The output's shape vector [3][1][1][in_n] (little-endian int32) is unique in the file.
    const int32_t want[4] = {3, 1, 1, in_n};
    std::vector<uint8_t>& b = *bytes;
    size_t found = 0, at = 0;
    for (size_t i = 0; i + sizeof want <= b.size(); i += 4) {
      if (std::memcmp(b.data() + i, want, sizeof want) == 0) ++found, at = i;
    }
    REQUIRE(found == 1);
    std::memcpy(b.data() + at + 12, &out_n, 4);
  }
  return *bytes;
}

// Runs `mica args...` with its address space limited to `mb` megabytes: `ulimit -v` in a
// normal build; in an ASan build (which reserves terabytes of shadow memory, so `ulimit -v`
// cannot apply) ASan's own limits: any allocation above `mb` fails like an out-of-memory
// `new`, and the process dies if its resident set exceeds `mb`.
CliResult RunMicaLimited(const std::vector<std::string>& args, int mb) {
#if defined(__SANITIZE_ADDRESS__)
  return RunMica(args, {"ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=" +
                        std::to_string(mb) + ":hard_rss_limit_mb=" + std::to_string(mb)});
#else
  std::vector<std::string> sh = {"-c", "ulimit -v " + std::to_string(mb * 1024) +
                                           " && exec \"$0\" \"$@\"",
                                 MICA_CLI_PATH};
  sh.insert(sh.end(), args.begin(), args.end());
  return RunBinary("/bin/sh", sh);
#endif
}

TEST_CASE("cli hostile: unary activations with a wrongly sized output are refused", "[cli]") {
  const std::string dir = mica::testing::TempDir("cli-hostile-unary");
  const std::vector<std::pair<OpKind, const char*>> ops = {
      {OpKind::kRelu, "relu"},           {OpKind::kRelu6, "relu6"},
      {OpKind::kReluN1To1, "relu_n1_to_1"}, {OpKind::kLeakyRelu, "leaky_relu"},
      {OpKind::kHardSwish, "hard_swish"},  {OpKind::kLogistic, "logistic"},
      {OpKind::kTanh, "tanh"}};
  for (const auto& [kind, name] : ops) {
    for (DType dtype : {DType::kInt8, DType::kInt16}) {
      const char* dt = dtype == DType::kInt8 ? "int8" : "int16";
      // The well-formed model runs; output smaller and larger than the input are refused.
      for (const auto& [in_n, out_n] : std::vector<std::pair<int32_t, int32_t>>{
               {64, 64}, {4096, 16}, {16, 4096}}) {
        CAPTURE(name, dt, in_n, out_n);
        const std::string model = dir + "/" + name + "_" + dt + "_" + std::to_string(in_n) +
                                   "_" + std::to_string(out_n) + ".tflite";
        const std::vector<uint8_t> bytes = UnaryModel(kind, dtype, in_n, out_n);
        std::ofstream(model, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        const std::string out_dir = dir + "/out_" + name + "_" + dt + std::to_string(out_n);
        fs::remove_all(out_dir);
        const std::string input = model + ".npy";
        WriteZerosNpy(input, dtype == DType::kInt8 ? "|i1" : "<i2", in_n);
        const CliResult r = RunMica({"run", model, "--input", input, "--output-dir", out_dir});
        INFO(r.err);
        // TFLite has no int16 HARD_SWISH; mica refuses it whatever the shapes.
        const bool unsupported = kind == OpKind::kHardSwish && dtype == DType::kInt16;
        if (in_n == out_n && !unsupported) {
          CHECK(r.exit_code == 0);
          CHECK(fs::exists(out_dir + "/output_0.bin"));
        } else {
          CHECK(r.exit_code == 1);
          CHECK(CountLines(r.err) == 1);
          CHECK_THAT(r.err, Catch::Contains(model));
          // One validation serves every command: the loader refuses the declared shape.
          if (!unsupported) CHECK_THAT(r.err, Catch::Contains("has shape"));
          CHECK_FALSE(fs::exists(out_dir + "/output_0.bin"));  // nothing left behind
        }
      }
    }
  }
}

TEST_CASE("cli hostile: an operator `run` cannot prepare is named with the model and reason",
          "[cli]") {
  // An int8 softmax whose beta x input scale is too small for TFLite's fixed-point softmax
  // (its multiplier would need a right shift): once "Softmax: kernel rejected its arguments"
  // at run time, with neither model nor reason.
  const std::string dir = mica::testing::TempDir("cli-hostile-softmax");
  const std::string model = dir + "/softmax_tiny_beta.tflite";
  const std::vector<uint8_t> bytes =
      UnaryModel(OpKind::kSoftmax, DType::kInt8, 16, 16, SoftmaxAttrs{1e-9f});
  std::ofstream(model, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  WriteZerosNpy(dir + "/x.npy", "|i1", 16);
  const CliResult r = RunMica({"run", model, "--input", dir + "/x.npy", "--output-dir", dir + "/out"});
  INFO(r.err);
  CHECK(r.exit_code == 1);
  CHECK(CountLines(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains(model) && Catch::Contains("operator #0 (SOFTMAX)") &&
                        Catch::Contains("too small for the int8 softmax"));
}

TEST_CASE("cli hostile: resource bombs end in a one-line error under a memory limit", "[cli]") {
  std::vector<std::string> bombs;
  for (const char* sub : {"fuzz_onnx", "fuzz_tflite"}) {
    for (const auto& e : fs::directory_iterator(kCorpus + "/" + sub)) {
      if (e.path().filename().string().rfind("regress-", 0) == 0) bombs.push_back(e.path());
    }
  }
  REQUIRE(bombs.size() >= 5);
  const std::string dir = mica::testing::TempDir("cli-hostile-bomb");
  WriteZerosNpy(dir + "/x.npy", "|i1", 4);
  for (const std::string& f : bombs) {
    for (const std::vector<std::string>& cmd :
         {std::vector<std::string>{"inspect", f},
          std::vector<std::string>{"check", f, "--target-profile", "ethos-u55-256",
                                   "--performance"},
          std::vector<std::string>{"run", f, "--input", dir + "/x.npy", "--output-dir",
                                   dir + "/out"}}) {
      CAPTURE(f, cmd[0]);
      const CliResult r = RunMicaLimited(cmd, 1024);
      INFO(r.err);
      CHECK((r.exit_code == 0 || r.exit_code == 1));  // never 134 (bad_alloc) or a signal
      CHECK_THAT(r.err, !Catch::Contains("bad_alloc"));
      if (r.exit_code == 1) CHECK(CountLines(r.err) == 1);
    }
  }
  // TFLite activations are shapes, not data: a small file may declare a 1.5 GB tensor. `inspect`
  // and `check` only plan it; `run` must refuse the arena it cannot have with one line.
  const std::string big = dir + "/huge_activation.tflite";
  const std::vector<uint8_t> bytes =
      UnaryModel(OpKind::kRelu, DType::kInt8, 3 << 29, 3 << 29);
  std::ofstream(big, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  WriteZerosNpy(dir + "/tiny.npy", "|i1", 4);
  for (const std::vector<std::string>& cmd :
       {std::vector<std::string>{"inspect", big},
        std::vector<std::string>{"check", big, "--target-profile", "cortex-m55", "--performance"},
        std::vector<std::string>{"run", big, "--input", dir + "/tiny.npy", "--output-dir",
                                 dir + "/out"}}) {
    CAPTURE(cmd[0]);
    const CliResult r = RunMicaLimited(cmd, 1024);
    INFO(r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    CHECK_THAT(r.err, !Catch::Contains("bad_alloc"));
    if (r.exit_code == 1) CHECK(CountLines(r.err) == 1);
  }
}

TEST_CASE("cli hostile: ONNX dimension 2^31 and too-deep nesting are named truly", "[cli]") {
  CliResult r = RunMica({"inspect", kCorpus + "/fuzz_onnx/regress-dim-2pow31.onnx"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("2147483648") && !Catch::Contains("-2147483648"));
  r = RunMica({"inspect", kCorpus + "/fuzz_onnx/regress-nesting-too-deep.onnx"});
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("levels deep") && !Catch::Contains("corrupt"));
}

TEST_CASE("cli hostile: a bad --target-config is a failure (exit 1); clocks are bounded",
          "[cli]") {
  const std::string model = mica::testing::SharedDir().empty()
                                ? std::string()
                                : mica::testing::SharedDir() +
                                      "/models/mlperf-tiny/kws_ds_cnn_int8.tflite";
  if (model.empty()) {
    WARN("no shared models; skipped");
    return;
  }
  const std::string dir = mica::testing::TempDir("cli-hostile-config");
  WriteText(dir + "/garbage.cfg", "garbage {{{\n");
  CliResult r = RunMica({"check", model, "--target-config", dir + "/garbage.cfg"});
  CHECK(r.exit_code == 1);
  CHECK(CountLines(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("garbage.cfg"));
  r = RunMica({"check", model, "--target-config", dir + "/missing.cfg"});
  CHECK(r.exit_code == 1);
  // A usage mistake stays exit 2.
  r = RunMica({"check", model, "--target-profile", "no-such-target"});
  CHECK(r.exit_code == 2);

  const std::vector<std::pair<std::string, std::string>> clocks = {
      {"cortex_m_tiny.cfg",
       "name: \"tiny\"\ncortex_m { cpu: \"cortex-m4\" clock_hz: 1e-300 }\n"},
      {"cortex_m_huge.cfg", "name: \"huge\"\ncortex_m { cpu: \"cortex-m4\" clock_hz: 1e300 }\n"},
      {"ethos_tiny.cfg",
       "name: \"npu\"\nethos_u { family: \"u55\" macs: 128 system_config { core_clock_hz: 1e-300 "
       "} }\n"},
  };
  for (const auto& [file, text] : clocks) {
    CAPTURE(file);
    WriteText(dir + "/" + file, text);
    r = RunMica({"check", model, "--target-config", dir + "/" + file, "--performance"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(CountLines(r.err) == 1);
    CHECK_THAT(r.err, Catch::Contains("1 kHz to 10 GHz"));
  }
  WriteText(dir + "/ok.cfg", "name: \"ok\"\ncortex_m { cpu: \"cortex-m4\" clock_hz: 1e3 }\n");
  r = RunMica({"check", model, "--target-config", dir + "/ok.cfg", "--performance"});
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

}  // namespace
}  // namespace mica
