// The shared models on QEMU through the runner firmware, bit-exact on three builds: Cortex-M55
// with MVE and without MVE/DSP (mps3-an547), Cortex-M4 with DSP (mps2-an386). Each run
// self-checks against the golden outputs (Test_result: PASS); a corrupted expected output must
// give FAIL with the right index. Skips with a message when the shared folder, QEMU or the
// firmware (arm-none-eabi-gcc) is absent.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "mica/estimate/target.h"
#include "mica/estimate/tflm_arena.h"
#include "mica/fvp/simulator.h"
#include "mica/fvp/subprocess.h"
#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "mica/runtime/plan.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;

const char* const kModels[] = {
    "mlperf-tiny/ad_autoencoder_int8", "mlperf-tiny/ic_resnet8_int8",
    "mlperf-tiny/kws_ds_cnn_int8",     "mlperf-tiny/vww_mobilenet_v1_025_int8",
    "more/seanet_conv0",               "more/simple_add_model",
    "more/micro_speech_lstm",          "more/keyword_scrambled",
    "more/force_int_quant",            "more/face_landmarks_192",
};

// Returns the firmware of `build`, or "" (with a WARN) when something needed is missing.
std::string Firmware(const std::string& build) {
  if (testing::SharedDir().empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return "";
  }
  if (fvp::FindProgram("qemu-system-arm").empty()) {
    WARN("skipped: qemu-system-arm is not installed");
    return "";
  }
  const std::string elf = std::string(MICA_FIRMWARE_DIR) + "/" + build + "/firmware/mica_runner.elf";
  if (!fs::exists(elf)) {
    WARN("skipped: no runner firmware at " << elf << " (arm-none-eabi-gcc missing?)");
    return "";
  }
  return elf;
}

std::vector<uint8_t> Read(const std::string& p) { return testing::ReadFile(p); }

void RunBuild(const std::string& build, kernels::Isa isa) {
  const std::string elf = Firmware(build);
  if (elf.empty()) return;
  auto options = fvp::QemuOptionsFor(build);
  REQUIRE(options.ok());
  options->firmware = elf;
  options->timeout = absl::Seconds(120);
  fvp::QemuSimulator qemu(*options);
  const std::string shared = testing::SharedDir();
  for (const char* name : kModels) {
    INFO(build << " " << name);
    auto graph = LoadModel(shared + "/models/" + name + ".tflite");
    REQUIRE(graph.ok());
    auto plan = runtime::CompilePlan(*graph, {isa});
    REQUIRE(plan.ok());
    const std::string golden = shared + "/golden/" + name + "/seed1/";
    fvp::SimulationRequest req;
    req.plan = plan->bytes;
    for (int32_t i = 0; i < static_cast<int32_t>(graph->subgraphs[0].inputs.size()); ++i) {
      req.inputs.push_back(Read(golden + "input_" + std::to_string(i) + ".bin"));
    }
    for (int32_t i = 0; i < static_cast<int32_t>(graph->subgraphs[0].outputs.size()); ++i) {
      req.expected.push_back(Read(golden + "output_" + std::to_string(i) + ".bin"));
    }
    req.per_op_counts = false;
    auto r = qemu.Run(req);
    if (!r.ok()) FAIL(r.status().message());
    REQUIRE(r->passed.has_value());
    CHECK(*r->passed);
    CHECK(r->outputs == req.expected);
    CHECK(r->total_instructions > 0);
    std::cout << "qemu " << build << " " << name << ": " << (*r->passed ? "PASS" : "FAIL") << ", "
              << r->total_instructions << " instructions, arena " << r->arena_bytes << " bytes\n";
  }
}

TEST_CASE("shared models run bit-exactly on QEMU: Cortex-M55 MVE", "[device][qemu]") {
  RunBuild("m55-mve", kernels::Isa::kMve);
}
TEST_CASE("shared models run bit-exactly on QEMU: Cortex-M4 DSP", "[device][qemu]") {
  RunBuild("m4-dsp", kernels::Isa::kDsp);
}
TEST_CASE("shared models run bit-exactly on QEMU: Cortex-M55 scalar", "[device][qemu]") {
  RunBuild("m55-scalar", kernels::Isa::kScalar);
}

// Corpus models (test/corpus/models) with the operators the shared models lack (MEAN, the
// activations, PRELU, CONCATENATION, STRIDED_SLICE, SPLIT, TRANSPOSE, uint8 QUANTIZE, int16
// graphs), bit-exact on QEMU against the host executor's outputs for seeded inputs, on the
// three builds.
TEST_CASE("corpus models run bit-exactly on QEMU against the host executor", "[device][qemu]") {
  const char* const kCorpus[] = {
      "activation_hswish_64",   "activation_prelu_64",  "activation_silu_64_i16",
      "activation_linear_64",   "activation_leaky_64_s24", "activation_relu6_64_i16",
      "detector_ssd_96_p50",    "pad_conv_sym_s2_64_u8", "unet_deconv_s2_64",
      "audio_tcn_64x32",        "rnn_lstm32_20x16",     "residual_csp_split_64",
      "shufflenet_g2_64",  // TRANSPOSE (the *_i16 models above: conv / depthwise / FC 16x8)
  };
  const std::string dir = testing::SourceDir() + "/test/corpus/models/";
  for (const auto& [build, isa] : {std::pair{"m55-mve", kernels::Isa::kMve},
                                   std::pair{"m4-dsp", kernels::Isa::kDsp},
                                   std::pair{"m55-scalar", kernels::Isa::kScalar}}) {
    const std::string elf = Firmware(build);
    if (elf.empty()) return;
    auto options = fvp::QemuOptionsFor(build);
    REQUIRE(options.ok());
    options->firmware = elf;
    options->timeout = absl::Seconds(120);
    fvp::QemuSimulator qemu(*options);
    for (const char* name : kCorpus) {
      INFO(build << " " << name);
      auto graph = LoadModel(dir + name + ".tflite");
      REQUIRE(graph.ok());
      auto plan = runtime::CompilePlan(*graph, {isa});
      REQUIRE(plan.ok());
      const Subgraph& sg = graph->main();
      std::vector<runtime::HostTensor> inputs;
      uint64_t state = 0x2545F4914F6CDD1Dull;
      for (int32_t t : sg.inputs) {
        runtime::HostTensor h;
        h.dtype = sg.tensors[t].dtype;
        h.shape = sg.tensors[t].shape;
        h.bytes.resize(sg.tensors[t].num_bytes());
        for (uint8_t& b : h.bytes) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          b = static_cast<uint8_t>(state >> 56);
        }
        inputs.push_back(std::move(h));
      }
      auto exec = runtime::Executor::Create(*graph);
      REQUIRE(exec.ok());
      auto host = (*exec)->Run(inputs);
      REQUIRE(host.ok());
      fvp::SimulationRequest req;
      req.plan = plan->bytes;
      for (const auto& h : inputs) req.inputs.push_back(h.bytes);
      for (const auto& h : *host) req.expected.push_back(h.bytes);
      req.per_op_counts = false;
      auto r = qemu.Run(req);
      if (!r.ok()) FAIL(r.status().message());
      REQUIRE(r->passed.has_value());
      CHECK(*r->passed);
      std::cout << "qemu " << build << " corpus/" << name << ": "
                << (*r->passed ? "PASS" : "FAIL") << ", " << r->total_instructions
                << " instructions, arena " << r->arena_bytes << " bytes\n";
    }
  }
}

TEST_CASE("one model on QEMU's Cortex-M7 and Cortex-M33 boards", "[device][qemu]") {
  for (const char* build : {"m7-dsp", "m33-dsp"}) {
    const std::string elf = Firmware(build);
    if (elf.empty()) return;
    auto options = fvp::QemuOptionsFor(build);
    REQUIRE(options.ok());
    options->firmware = elf;
    const std::string shared = testing::SharedDir();
    const std::string name = "mlperf-tiny/kws_ds_cnn_int8";
    auto graph = LoadModel(shared + "/models/" + name + ".tflite");
    REQUIRE(graph.ok());
    auto plan = runtime::CompilePlan(*graph, {kernels::Isa::kDsp});
    REQUIRE(plan.ok());
    fvp::SimulationRequest req;
    req.plan = plan->bytes;
    req.inputs.push_back(Read(shared + "/golden/" + name + "/seed1/input_0.bin"));
    req.expected.push_back(Read(shared + "/golden/" + name + "/seed1/output_0.bin"));
    req.per_op_counts = false;
    auto r = fvp::QemuSimulator(*options).Run(req);
    if (!r.ok()) FAIL(r.status().message());
    INFO(build);
    REQUIRE(r->passed.has_value());
    CHECK(*r->passed);
    std::cout << "qemu " << build << " " << name << ": " << r->total_instructions
              << " instructions\n";
  }
}

// Issue 17 item 2: `mica check --runtime mica` reports the arena the device runtime reports on
// the target, to the byte (a model without state and one with SVDF state tensors; MVE and DSP
// plans, whose scratch differs).
TEST_CASE("check --runtime mica reports the arena the device runtime reports on QEMU",
          "[device][qemu]") {
  const std::string shared = testing::SharedDir();
  for (const auto& [build, profile] : {std::pair<std::string, std::string>{"m55-mve", "cortex-m55"},
                                       {"m4-dsp", "cortex-m4"}}) {
    const std::string elf = Firmware(build);
    if (elf.empty()) return;
    auto options = fvp::QemuOptionsFor(build);
    REQUIRE(options.ok());
    options->firmware = elf;
    auto target = estimate::FindTargetProfile(profile);
    REQUIRE(target.ok());
    for (const char* name : {"mlperf-tiny/kws_ds_cnn_int8", "more/keyword_scrambled"}) {
      INFO(build << " " << name);
      auto graph = LoadModel(shared + "/models/" + name + ".tflite");
      REQUIRE(graph.ok());
      estimate::Estimate e;
      REQUIRE(estimate::AddRuntimeMemory(*graph, *target, estimate::Runtime::kMica, &e).ok());
      CHECK(e.memory.basis.find("device runtime") != std::string::npos);
      const kernels::Isa isa = build == "m55-mve" ? kernels::Isa::kMve : kernels::Isa::kDsp;
      auto plan = runtime::CompilePlan(*graph, {isa});
      REQUIRE(plan.ok());
      fvp::SimulationRequest req;
      req.plan = plan->bytes;
      const std::string golden = shared + "/golden/" + name + "/seed1/";
      for (size_t i = 0; i < graph->subgraphs[0].inputs.size(); ++i) {
        req.inputs.push_back(Read(golden + "input_" + std::to_string(i) + ".bin"));
      }
      req.per_op_counts = false;
      auto r = fvp::QemuSimulator(*options).Run(req);
      if (!r.ok()) FAIL(r.status().message());
      CHECK(r->arena_bytes > 0);
      CHECK(e.memory.arena_bytes == static_cast<int64_t>(r->arena_bytes));
      std::cout << "arena " << build << " " << name << ": check --runtime mica "
                << e.memory.arena_bytes << " bytes, device " << r->arena_bytes << " bytes\n";
    }
  }
}

// The M55-MVE runner and a request for shared model `name` (models/NAME.tflite) on its seed-1
// golden input; `golden` is the folder of its golden outputs. False when the firmware is absent.
bool MveGoldenRequest(const std::string& name, fvp::QemuOptions* options,
                      fvp::SimulationRequest* req, std::string* golden) {
  const std::string elf = Firmware("m55-mve");
  if (elf.empty()) return false;
  auto o = fvp::QemuOptionsFor("m55-mve");
  REQUIRE(o.ok());
  *options = *o;
  options->firmware = elf;
  const std::string shared = testing::SharedDir();
  auto graph = LoadModel(shared + "/models/" + name + ".tflite");
  REQUIRE(graph.ok());
  auto plan = runtime::CompilePlan(*graph, {kernels::Isa::kMve});
  REQUIRE(plan.ok());
  *golden = shared + "/golden/" + name + "/seed1/";
  req->plan = plan->bytes;
  req->inputs.push_back(Read(*golden + "input_0.bin"));
  req->per_op_counts = false;
  return true;
}

TEST_CASE("a corrupted expected output gives FAIL with the right index on QEMU", "[device][qemu]") {
  fvp::QemuOptions options;
  fvp::SimulationRequest req;
  std::string golden;
  if (!MveGoldenRequest("mlperf-tiny/ic_resnet8_int8", &options, &req, &golden)) return;
  std::vector<uint8_t> expected = Read(golden + "output_0.bin");
  REQUIRE(expected.size() > 7);
  // Two corrupted elements; the largest difference in int8 values, as the runner computes it.
  const std::vector<uint8_t> good = expected;
  expected[3] = static_cast<uint8_t>(good[3] ^ 0x05);
  expected[7] = static_cast<uint8_t>(good[7] ^ 0x02);
  auto diff = [&](size_t i) {
    return std::abs(int{static_cast<int8_t>(good[i])} - int{static_cast<int8_t>(expected[i])});
  };
  const int64_t max_diff = std::max(diff(3), diff(7));
  req.expected.push_back(expected);
  auto r = fvp::QemuSimulator(options).Run(req);
  if (!r.ok()) FAIL(r.status().message());
  REQUIRE(r->passed.has_value());
  CHECK_FALSE(*r->passed);
  REQUIRE(r->checks.size() == 1);
  CHECK(r->checks[0].first_difference == 3);
  CHECK(r->checks[0].differences == 2);
  CHECK(r->checks[0].max_difference == max_diff);
}

// A float32 output (face_landmarks_192's DEQUANTIZE): compared bit-exactly, element by
// element, the difference in units in the last place.
TEST_CASE("a corrupted float expected output gives FAIL with the element index on QEMU",
          "[device][qemu]") {
  fvp::QemuOptions options;
  fvp::SimulationRequest req;
  std::string golden;
  if (!MveGoldenRequest("more/face_landmarks_192", &options, &req, &golden)) return;
  std::vector<uint8_t> expected = Read(golden + "output_0.bin");
  REQUIRE(expected.size() >= 40);
  // The ordered integer of a float's bit pattern (as the runner computes it).
  auto ordered = [](const std::vector<uint8_t>& b, size_t i) {
    int32_t bits = 0;
    std::memcpy(&bits, b.data() + 4 * i, 4);
    return bits < 0 ? int64_t{INT32_MIN} - 1 - bits : int64_t{bits};
  };
  const std::vector<uint8_t> good = expected;
  expected[4 * 5] = static_cast<uint8_t>(good[4 * 5] ^ 0x01);  // element 5: 1 ULP
  expected[4 * 9 + 3] = static_cast<uint8_t>(good[4 * 9 + 3] ^ 0x80);  // element 9: sign
  const int64_t d9 = ordered(good, 9) - ordered(expected, 9);
  req.expected.push_back(expected);
  req.expected.push_back(Read(golden + "output_1.bin"));
  auto r = fvp::QemuSimulator(options).Run(req);
  if (!r.ok()) FAIL(r.status().message());
  REQUIRE(r->passed.has_value());
  CHECK_FALSE(*r->passed);
  REQUIRE(r->checks.size() == 2);
  CHECK(r->checks[0].first_difference == 5);
  CHECK(r->checks[0].differences == 2);
  CHECK(r->checks[0].max_difference == (d9 < 0 ? -d9 : d9));
  CHECK(r->checks[1].differences == 0);
}

}  // namespace
}  // namespace mica
