// Device plans on the host: the plan compiler serialises the executor's lowering, the device
// runtime (the same freestanding sources the firmware runs) verifies and executes it, and the
// outputs equal the shared goldens byte for byte. Also: a verifier that rejects every
// corruption before anything runs.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "mica/device/runtime.h"
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
