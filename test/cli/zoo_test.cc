// `mica zoo`: writes loadable float and int8 models whose structure matches the builders,
// reproducibly per seed; usage errors.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli/cli_util.h"
#include "mica/model/analysis.h"
#include "mica/model/load.h"
#include "mica/model/zoo.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::RunMica;

TEST_CASE("mica zoo writes float and int8 models that load and match the builders") {
  const std::string dir = testing::TempDir("zoo-cli");
  const testing::CliResult r = RunMica({"zoo", "--output-dir", dir, "--seed", "3",
                                        "--calibration-samples", "2", "--model", "kws_ds_cnn",
                                        "--model", "ad_autoencoder"});
  CAPTURE(r.out, r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());  // no progress when stderr is not a terminal
  CHECK(r.out.find("2,656,768") != std::string::npos);
  CHECK(r.out.find("264,192") != std::string::npos);
  for (const std::string name : {"kws_ds_cnn", "ad_autoencoder"}) {
    CAPTURE(name);
    auto f = LoadModel(dir + "/" + name + "_float.tflite");
    auto q = LoadModel(dir + "/" + name + "_int8.tflite");
    REQUIRE(f.ok());
    REQUIRE(q.ok());
    auto built = zoo::Build(name, 3);
    REQUIRE(built.ok());
    CHECK(AnalyzeCost(f->main()).total_macs == AnalyzeCost(built->main()).total_macs);
    CHECK(AnalyzeCost(q->main()).total_macs == AnalyzeCost(built->main()).total_macs);
    REQUIRE(f->main().ops.size() == built->main().ops.size());
    REQUIRE(q->main().ops.size() == built->main().ops.size());
    // The float file carries exactly the seeded weights.
    const Operator& op0 = built->main().ops[0];
    const Tensor& w_built = built->main().tensors[static_cast<size_t>(op0.inputs[1])];
    const Tensor& w_file = f->main().tensors[static_cast<size_t>(f->main().ops[0].inputs[1])];
    REQUIRE(w_file.data.size == w_built.data.size);
    CHECK(std::memcmp(w_file.data.bytes(), w_built.data.bytes(), w_built.data.size) == 0);
    // The int8 file is int8 end to end, with per-channel conv weights.
    const Subgraph& qs = q->main();
    CHECK(qs.tensors[static_cast<size_t>(qs.inputs[0])].dtype == DType::kInt8);
    CHECK(qs.tensors[static_cast<size_t>(qs.outputs[0])].dtype == DType::kInt8);
    for (const Tensor& t : qs.tensors) {
      CAPTURE(t.name);
      CHECK(t.dtype != DType::kFloat32);
    }
    if (qs.ops[0].kind == OpKind::kConv2D) {
      const Tensor& qw = qs.tensors[static_cast<size_t>(qs.ops[0].inputs[1])];
      CHECK(qw.quant.per_channel());
      CHECK(qw.quant.scale.size() == 64);
    }
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/ic_resnet8_float.tflite"));
  // The int8 model tracks the float one (the command reports the SQNR per model).
  CHECK(r.out.find(" dB") != std::string::npos);

  // Same seed, same bytes.
  const std::string dir2 = testing::TempDir("zoo-cli-again");
  REQUIRE(RunMica({"zoo", "--output-dir", dir2, "--seed", "3", "--calibration-samples", "2", "--model",
                   "kws_ds_cnn"})
              .exit_code == 0);
  for (const std::string file : {"kws_ds_cnn_float.tflite", "kws_ds_cnn_int8.tflite"}) {
    CAPTURE(file);
    CHECK(testing::ReadFile(dir + "/" + file) == testing::ReadFile(dir2 + "/" + file));
  }
}

TEST_CASE("mica zoo shows progress on a terminal") {
  if (!std::filesystem::exists("/usr/bin/script")) {
    WARN("script(1) absent: skipped the terminal progress test");
    return;
  }
  // script(1) runs the command on a pseudo-terminal: stderr is a terminal there.
  const std::string dir = testing::TempDir("zoo-cli-tty");
  const std::string cmd = testing::ShellQuote(MICA_CLI_PATH) + " zoo --output-dir " +
                          testing::ShellQuote(dir) +
                          " --calibration-samples 2 --model ad_autoencoder";
  const testing::CliResult r = testing::RunBinary("/usr/bin/script", {"-qec", cmd, "/dev/null"});
  CAPTURE(r.out, r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("mica zoo: [1/1] ad_autoencoder: calibrating 2/2") != std::string::npos);
  CHECK(r.out.find("checking int8 against float") != std::string::npos);
  CHECK(r.out.find("wrote 2 files") != std::string::npos);
}

TEST_CASE("mica zoo usage errors") {
  CHECK(RunMica({"zoo"}).exit_code == 2);
  CHECK(RunMica({"zoo", "--output-dir", "x", "--seed", "minus"}).exit_code == 2);
  CHECK(RunMica({"zoo", "--output-dir", "x", "--calibration-samples", "0"}).exit_code == 2);
  const testing::CliResult r = RunMica({"zoo", "--output-dir", "x", "--model", "resnet50"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("resnet50") != std::string::npos);
  // A path that cannot be a directory is a failure, not a usage error.
  const std::string dir = testing::TempDir("zoo-cli-bad");
  { std::ofstream(dir + "/file") << "x"; }
  const testing::CliResult f = RunMica({"zoo", "--output-dir", dir + "/file/sub"});
  CHECK(f.exit_code == 1);
  CHECK(testing::CountLines(f.err) == 1);
}

}  // namespace
}  // namespace mica
