// Device plans on the host: the plan compiler serialises the executor's lowering, the device
// runtime (the same freestanding sources the firmware runs) verifies and executes it, and the
// outputs equal the shared goldens byte for byte. Also: a verifier that rejects every
// corruption before anything runs.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include "mica/device/runtime.h"
#include "mica/runtime/executor.h"
#include "mica/model/load.h"
#include "mica/runtime/plan.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;
using device::PlanStatus;

// The shared models the device runtime runs (integer graphs).
const char* const kModels[] = {
    "mlperf-tiny/ad_autoencoder_int8", "mlperf-tiny/ic_resnet8_int8",
    "mlperf-tiny/kws_ds_cnn_int8",     "mlperf-tiny/vww_mobilenet_v1_025_int8",
    "more/seanet_conv0",               "more/simple_add_model",
    "more/micro_speech_lstm",          "more/keyword_scrambled",
    "more/force_int_quant",            "more/face_landmarks_192",
};

// 16-byte aligned copy of the plan and an aligned arena.
struct Aligned {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
  explicit Aligned(size_t n) : storage(n + 16) {
    data = storage.data() + (16 - reinterpret_cast<uintptr_t>(storage.data()) % 16) % 16;
  }
};

TEST_CASE("plans of the shared models run bit-exactly in the device runtime", "[device]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  for (const char* name : kModels) {
    const std::string model = shared + "/models/" + name + ".tflite";
    const std::string golden = shared + "/golden/" + name + "/seed1/";
    auto graph = LoadModel(model);
    REQUIRE(graph.ok());
    for (kernels::Isa isa : {kernels::Isa::kScalar, kernels::Isa::kDsp, kernels::Isa::kMve}) {
      INFO(name << " plan for " << kernels::IsaName(isa));
      auto compiled = runtime::CompilePlan(*graph, {isa});
      REQUIRE(compiled.ok());
      Aligned plan_bytes(compiled->bytes.size());
      std::memcpy(plan_bytes.data, compiled->bytes.data(), compiled->bytes.size());
      device::Plan plan;
      REQUIRE(device::VerifyPlan(plan_bytes.data, compiled->bytes.size(), &plan) ==
              PlanStatus::kOk);
      Aligned arena(plan.arena_bytes());
      for (uint32_t i = 0; i < plan.num_inputs(); ++i) {
        const auto in = testing::ReadFile(golden + "input_" + std::to_string(i) + ".bin");
        REQUIRE(in.size() == plan.tensor(plan.input(i)).bytes);
        std::memcpy(device::TensorData(plan, arena.data, plan.input(i)), in.data(), in.size());
      }
      int ops = 0;
      device::RunHooks hooks;
      hooks.user = &ops;
      hooks.after_op = [](void* u, uint32_t, const device::OpRecord&) { ++*static_cast<int*>(u); };
      REQUIRE(device::RunPlan(plan, arena.data, plan.arena_bytes(), &hooks) == PlanStatus::kOk);
      CHECK(ops == static_cast<int>(plan.num_ops()));
      for (uint32_t i = 0; i < plan.num_outputs(); ++i) {
        const auto want = testing::ReadFile(golden + "output_" + std::to_string(i) + ".bin");
        const uint8_t* got = device::TensorData(plan, arena.data, plan.output(i));
        REQUIRE(want.size() == plan.tensor(plan.output(i)).bytes);
        CHECK(std::memcmp(got, want.data(), want.size()) == 0);
      }
    }
  }
}

// Every model of the project's corpus (test/corpus/models) that compiles into a plan runs in
// the device runtime with the host executor's outputs, byte for byte (seeded inputs; the scalar
// plan, the bodies the host has; the DSP and MVE plans compile and verify, and run on QEMU). Graphs with an operator the device runtime lacks are counted, not failed.
TEST_CASE("corpus plans give the host executor's outputs in the device runtime", "[device]") {
  const std::string dir = testing::SourceDir() + "/test/corpus/models";
  if (!fs::is_directory(dir)) {
    WARN("skipped: no corpus at " << dir);
    return;
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".tflite") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  int compiled_models = 0;
  for (const std::string& file : files) {
    auto graph = LoadModel(file);
    REQUIRE(graph.ok());
    auto first = runtime::CompilePlan(*graph, {kernels::Isa::kScalar});
    if (!first.ok()) {
      INFO(file << ": " << first.status().message());
      CHECK(first.status().code() == absl::StatusCode::kUnimplemented);
      continue;
    }
    ++compiled_models;
    auto exec = runtime::Executor::Create(*graph);
    REQUIRE(exec.ok());
    const Subgraph& sg = graph->main();
    std::vector<runtime::HostTensor> inputs;
    uint64_t state = 0x9E3779B97F4A7C15ull ^ files.size();
    for (int32_t t : sg.inputs) {
      runtime::HostTensor h;
      h.dtype = sg.tensors[t].dtype;
      h.shape = sg.tensors[t].shape;
      h.bytes.resize(sg.tensors[t].num_bytes());
      for (uint8_t& b : h.bytes) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        b = static_cast<uint8_t>(state >> 56);
      }
      if (h.dtype == DType::kFloat32) {  // finite floats in [-2, 2)
        for (size_t k = 0; k + 4 <= h.bytes.size(); k += 4) {
          const float f = static_cast<float>(static_cast<int8_t>(h.bytes[k])) / 64.0f;
          std::memcpy(h.bytes.data() + k, &f, 4);
        }
      }
      inputs.push_back(std::move(h));
    }
    auto host = (*exec)->Run(inputs);
    REQUIRE(host.ok());
    // The DSP and MVE plans compile and verify; the host runs the scalar bodies, so it runs
    // the scalar plan (whose scratch is sized for them).
    for (kernels::Isa isa : {kernels::Isa::kDsp, kernels::Isa::kMve}) {
      INFO(file << " plan for " << kernels::IsaName(isa));
      CHECK(runtime::CompilePlan(*graph, {isa}).ok());
    }
    {
      INFO(file << " scalar plan");
      const runtime::CompiledPlan* compiled = &*first;
      Aligned plan_bytes(compiled->bytes.size());
      std::memcpy(plan_bytes.data, compiled->bytes.data(), compiled->bytes.size());
      device::Plan plan;
      REQUIRE(device::VerifyPlan(plan_bytes.data, compiled->bytes.size(), &plan) ==
              PlanStatus::kOk);
      Aligned arena(plan.arena_bytes());
      for (uint32_t i = 0; i < plan.num_inputs(); ++i) {
        REQUIRE(inputs[i].bytes.size() == plan.tensor(plan.input(i)).bytes);
        std::memcpy(device::TensorData(plan, arena.data, plan.input(i)), inputs[i].bytes.data(),
                    inputs[i].bytes.size());
      }
      REQUIRE(device::RunPlan(plan, arena.data, plan.arena_bytes()) == PlanStatus::kOk);
      for (uint32_t i = 0; i < plan.num_outputs(); ++i) {
        const std::vector<uint8_t>& want = (*host)[i].bytes;
        REQUIRE(want.size() == plan.tensor(plan.output(i)).bytes);
        CHECK(std::memcmp(device::TensorData(plan, arena.data, plan.output(i)), want.data(),
                          want.size()) == 0);
      }
    }
  }
  std::cout << "corpus: " << compiled_models << " of " << files.size()
            << " models compile into device plans and match the host executor\n";
  CHECK(compiled_models >= 76);
}

TEST_CASE("the plan verifier rejects corrupted plans", "[device]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  auto graph = LoadModel(shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite");
  REQUIRE(graph.ok());
  auto compiled = runtime::CompilePlan(*graph, {kernels::Isa::kScalar});
  REQUIRE(compiled.ok());
  const std::vector<uint8_t>& good = compiled->bytes;
  Aligned buf(good.size());
  device::Plan plan;
  auto verify = [&](const std::vector<uint8_t>& b, size_t size) {
    std::memcpy(buf.data, b.data(), b.size());
    return device::VerifyPlan(buf.data, size, &plan);
  };
  CHECK(verify(good, good.size()) == PlanStatus::kOk);
  CHECK(verify(good, good.size() - 1) == PlanStatus::kTruncated);
  CHECK(verify(good, 40) == PlanStatus::kTruncated);
  std::vector<uint8_t> b = good;
  b[0] ^= 1;
  CHECK(verify(b, b.size()) == PlanStatus::kBadMagic);
  b = good;
  b[4] = 9;
  CHECK(verify(b, b.size()) == PlanStatus::kBadVersion);
  // Every single-byte flip after the checksum field is caught by the CRC.
  for (size_t at : {size_t{16}, size_t{100}, good.size() / 2, good.size() - 1}) {
    b = good;
    b[at] ^= 0x40;
    CHECK(verify(b, b.size()) == PlanStatus::kBadChecksum);
  }
  // A CRC-valid plan whose op reads past a tensor: caught by the per-op checks.
  b = good;
  device::PlanHeader h;
  std::memcpy(&h, b.data(), sizeof(h));
  device::TensorRecord t;
  const uint32_t in = [&] {
    uint32_t v;
    std::memcpy(&v, b.data() + h.io_offset, 4);
    return v;
  }();
  std::memcpy(&t, b.data() + h.tensors_offset + in * sizeof(t), sizeof(t));
  t.bytes -= 1;
  std::memcpy(b.data() + h.tensors_offset + in * sizeof(t), &t, sizeof(t));
  h.crc32 = device::Crc32(b.data() + 16, h.total_bytes - 16);
  std::memcpy(b.data(), &h, sizeof(h));
  uint32_t where = 99999;
  std::memcpy(buf.data, b.data(), b.size());
  CHECK(device::VerifyPlan(buf.data, b.size(), &plan, &where) == PlanStatus::kBadOp);
  CHECK(where == 0);
  // An arena smaller than the plan needs is refused before anything runs.
  REQUIRE(verify(good, good.size()) == PlanStatus::kOk);
  Aligned arena(plan.arena_bytes());
  CHECK(device::RunPlan(plan, arena.data, plan.arena_bytes() - 1) == PlanStatus::kArenaTooSmall);
  CHECK(device::RunPlan(plan, arena.data + 1, plan.arena_bytes()) == PlanStatus::kMisaligned);
}

TEST_CASE("float graphs report the operator the device cannot run", "[device]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("skipped: the shared reference directory (MICA_SHARED_DIR) is absent");
    return;
  }
  auto graph = LoadModel(shared + "/models/mlperf-tiny/ad_autoencoder_float.tflite");
  REQUIRE(graph.ok());
  auto compiled = runtime::CompilePlan(*graph, {kernels::Isa::kMve});
  REQUIRE_FALSE(compiled.ok());
  CHECK(compiled.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(compiled.status().message()).find("operator #0") != std::string::npos);
}

}  // namespace
}  // namespace mica
