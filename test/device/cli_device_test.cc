// The device commands end to end through the built `mica` binary: `mica compile` (plan and C
// array) and `mica run --target-profile` on QEMU giving the host's outputs.
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "mica/device/runtime.h"
#include "mica/fvp/subprocess.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;

fvp::ProcessResult Mica(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {MICA_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = fvp::RunProcess(argv, absl::Seconds(120));
  REQUIRE(r.ok());
  return *r;
}

TEST_CASE("mica compile writes a verifiable plan and a C array", "[device][cli]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  const std::string dir = testing::TempDir("mica_compile");
  const std::string model = shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite";
  auto r = Mica({"compile", model, "-t", "cortex-m4", "-o", dir + "/kws.mplan"});
  INFO(r.stdout_text << r.stderr_text);
  REQUIRE(r.exit_code == 0);
  CHECK(r.stdout_text.find("isa dsp") != std::string::npos);
  const std::vector<uint8_t> bytes = testing::ReadFile(dir + "/kws.mplan");
  std::vector<uint8_t> aligned(bytes.size() + 16);
  uint8_t* p = aligned.data() + (16 - reinterpret_cast<uintptr_t>(aligned.data()) % 16) % 16;
  std::copy(bytes.begin(), bytes.end(), p);
  device::Plan plan;
  CHECK(device::VerifyPlan(p, bytes.size(), &plan) == device::PlanStatus::kOk);
  CHECK(plan.header->isa == static_cast<uint8_t>(kernels::Isa::kDsp));

  r = Mica({"compile", model, "-o", dir + "/kws.c", "--format", "c", "--symbol", "kws_plan"});
  REQUIRE(r.exit_code == 0);
  const std::vector<uint8_t> c = testing::ReadFile(dir + "/kws.c");
  const std::string text(c.begin(), c.end());
  CHECK(text.find("const unsigned char kws_plan[") != std::string::npos);
  CHECK(text.find("kws_plan_size") != std::string::npos);

  // A float graph: one line naming the operator the device cannot run.
  r = Mica({"compile", shared + "/models/mlperf-tiny/ad_autoencoder_float.tflite", "-o",
            dir + "/f.mplan"});
  CHECK(r.exit_code == 1);
  CHECK(r.stderr_text.find("operator #0") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/f.mplan"));
}

TEST_CASE("mica run --target-profile gives the host's outputs from QEMU", "[device][cli][qemu]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  if (fvp::FindProgram("qemu-system-arm").empty() ||
      !fs::exists(std::string(MICA_FIRMWARE_DIR) + "/m55-mve/firmware/mica_runner.elf")) {
    WARN("skipped: qemu-system-arm or the runner firmware is missing");
    return;
  }
  const std::string dir = testing::TempDir("mica_run_target");
  const std::string name = "mlperf-tiny/ic_resnet8_int8";
  const std::string model = shared + "/models/" + name + ".tflite";
  const std::string golden = shared + "/golden/" + name + "/seed1";
  auto host = Mica({"run", model, "--input", golden + "/input_0.bin", "--output", dir + "/host"});
  REQUIRE(host.exit_code == 0);
  auto dev = Mica({"run", model, "-t", "cortex-m55", "--input", golden + "/input_0.bin",
                   "--output-dir", dir + "/qemu", "--compare", golden, "--profile"});
  INFO(dev.stdout_text << dev.stderr_text);
  REQUIRE(dev.exit_code == 0);
  CHECK(dev.stdout_text.find("Test_result: PASS") != std::string::npos);
  CHECK(dev.stdout_text.find("per inference (exact, QEMU -icount)") != std::string::npos);
  CHECK(dev.stdout_text.find("op 15 SOFTMAX") != std::string::npos);
  CHECK(testing::ReadFile(dir + "/qemu/output_0.bin") == testing::ReadFile(dir + "/host/output_0.bin"));
  CHECK(testing::ReadFile(dir + "/qemu/output_0.npy") == testing::ReadFile(dir + "/host/output_0.npy"));

  auto check = Mica({"check", model, "-t", "cortex-m55", "--performance", "--backend", "qemu"});
  INFO(check.stdout_text << check.stderr_text);
  REQUIRE(check.exit_code == 0);
  CHECK(check.stdout_text.find("Measured on QEMU mps3-an547") != std::string::npos);
  CHECK(check.stdout_text.find("total (one inference)") != std::string::npos);

  // The same measurements in the JSON report (libestimate/REPORT.md, `measured`).
  auto json = Mica({"check", model, "-t", "cortex-m55", "--backend", "qemu", "--json"});
  INFO(json.stdout_text << json.stderr_text);
  REQUIRE(json.exit_code == 0);
  const std::string& j = json.stdout_text;
  CHECK(j.find("\"measured\": [") != std::string::npos);
  CHECK(j.find("\"backend\": \"qemu\"") != std::string::npos);
  CHECK(j.find("\"build\": \"m55-mve\"") != std::string::npos);
  CHECK(j.find("\"unit\": \"instructions\"") != std::string::npos);
  std::smatch total;
  REQUIRE(std::regex_search(j, total, std::regex("\"total_instructions\": ([0-9]+)")));
  const int64_t total_instructions = std::stoll(total[1]);
  CHECK(total_instructions > 1000000);
  // One row per operator (ResNet-8: 16), each counted; their sum is the inference minus the
  // runtime's own loop and hooks.
  const std::regex op_re("\"name\": \"[A-Z_0-9]+\", \"instructions\": ([0-9]+)");
  int64_t sum = 0;
  int ops = 0;
  for (auto it = std::sregex_iterator(j.begin(), j.end(), op_re); it != std::sregex_iterator();
       ++it) {
    const int64_t n = std::stoll((*it)[1]);
    CHECK(n > 0);
    sum += n;
    ++ops;
  }
  CHECK(ops == 16);
  CHECK(sum <= total_instructions);
  CHECK(sum * 10 >= total_instructions * 9);
}

TEST_CASE("mica run X.bpte -t PROFILE checks the bundled outputs on QEMU",
          "[device][cli][qemu][executorch]") {
  if (fvp::FindProgram("qemu-system-arm").empty() ||
      !fs::exists(std::string(MICA_FIRMWARE_DIR) + "/m55-mve/firmware/mica_runner.elf")) {
    WARN("skipped: qemu-system-arm or the runner firmware is missing");
    return;
  }
  const std::string data = testing::SourceDir() + "/test/executorch/";
  const std::string dir = testing::TempDir("mica_run_bpte_target");
  // ExecuTorch Cortex-M int8 programs (float in, float out through quantize/dequantize): the
  // device runtime's outputs equal the expected outputs ExecuTorch recorded, on every build.
  const std::pair<const char*, const char*> cases[] = {
      {"cortex-m55", "(build m55-mve, variant mve)"},
      {"cortex-m4", "(build m4-dsp, variant dsp)"},
      {"cortex-m33", "(build m33-dsp, variant dsp)"},
      {"cortex-m0", "(build m55-scalar, variant scalar)"},
  };
  for (const auto& [target, build] : cases) {
    auto r = Mica({"run", data + "ds_cnn.bpte", "-t", target, "--output-dir", dir + "/" + target});
    INFO(target << "\n" << r.stdout_text << r.stderr_text);
    CHECK(r.exit_code == 0);
    CHECK(r.stdout_text.find(std::string("on ") + target + ": QEMU ") != std::string::npos);
    CHECK(r.stdout_text.find(build) != std::string::npos);
    CHECK(r.stdout_text.find("output 0: float32 [1,12], 12 elements: identical bytes") !=
          std::string::npos);
    CHECK(r.stdout_text.find("Test_result: PASS") != std::string::npos);
    CHECK(testing::ReadFile(dir + "/" + target + "/output_0.bin") ==
          testing::ReadFile(data + "ds_cnn.expected.bin"));
  }
  auto ae = Mica({"run", data + "deep_autoencoder.bpte", "-t", "cortex-m55"});
  INFO(ae.stdout_text << ae.stderr_text);
  CHECK(ae.exit_code == 0);
  CHECK(ae.stdout_text.find("640 elements: identical bytes") != std::string::npos);
  // tiny_conv's expected output comes from ExecuTorch's Python reference, whose average pool
  // rounds a .5 tie otherwise (test/executorch/README.md): FAIL, with the host's very bytes.
  auto host = Mica({"run", data + "tiny_conv.bpte", "--output-dir", dir + "/tc_host"});
  auto dev = Mica({"run", data + "tiny_conv.bpte", "-t", "cortex-m55", "--output-dir",
                   dir + "/tc_qemu"});
  INFO(dev.stdout_text << dev.stderr_text);
  CHECK(host.exit_code == 1);
  CHECK(dev.exit_code == 1);
  CHECK(dev.stdout_text.find("5 differ (first at index 0") != std::string::npos);
  CHECK(dev.stdout_text.find("Test_result: FAIL") != std::string::npos);
  CHECK(testing::ReadFile(dir + "/tc_qemu/output_0.bin") ==
        testing::ReadFile(dir + "/tc_host/output_0.bin"));
  // A float program: the device runtime has no float kernels; one line names the operator.
  auto f = Mica({"run", data + "tiny_float.bpte", "-t", "cortex-m55"});
  CHECK(f.exit_code == 1);
  CHECK(f.stderr_text.find("the device runtime has no float32 kernel") != std::string::npos);
  CHECK(f.stdout_text.find("Test_result") == std::string::npos);
  // Options that do not apply to a bundled program on the device.
  auto u = Mica({"run", data + "ds_cnn.bpte", "-t", "cortex-m55", "--compare", dir});
  CHECK(u.exit_code == 2);
}

TEST_CASE("mica check --backend corstone-300 drives an FVP on PATH, or says what is missing",
          "[device][cli][corstone]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  const std::string model = shared + "/models/mlperf-tiny/ad_autoencoder_int8.tflite";
  const std::string dir = fs::absolute(testing::TempDir("fake_fvp_path")).string();
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  setenv("PATH", (dir + ":/usr/bin:/bin").c_str(), 1);
  auto missing = Mica({"check", model, "-t", "cortex-m55", "--backend", "corstone-300"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.stderr_text.find("FVP_Corstone_SSE-300_Ethos-U55 not found") != std::string::npos);
  // A fake FVP: replays a recorded-format transcript with the runner's lines.
  const std::string fvp = dir + "/FVP_Corstone_SSE-300_Ethos-U55";
  std::ofstream(fvp) << "#!/bin/sh\n"
                        "printf 'MICA begin board=mps3-an547 isa=mve\\r\\nMICA plan ops=10 arena=768 plan=9\\r\\n'\n"
                        "printf 'MICA total 190686\\r\\nMICA end 0\\r\\nApplication exit code: 0.\\r\\n'\n"
                        "printf 'cpu0                                    :  36.57 MIPS (      512345 Inst)\\r\\n'\n";
  chmod(fvp.c_str(), 0755);
  auto run = Mica({"check", model, "-t", "cortex-m55", "--backend", "corstone-300"});
  setenv("PATH", old_path.c_str(), 1);
  INFO(run.stdout_text << run.stderr_text);
  if (!fs::exists(std::string(MICA_FIRMWARE_DIR) + "/m55-mve/firmware/mica_runner.elf")) {
    WARN("skipped the FVP run: no runner firmware");
    return;
  }
  REQUIRE(run.exit_code == 0);
  CHECK(run.stdout_text.find("Measured on fvp corstone-300") != std::string::npos);
  CHECK(run.stdout_text.find("cpu0: 512345 instructions") != std::string::npos);
}

}  // namespace
}  // namespace mica
