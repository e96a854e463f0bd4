// mica runner: the firmware QEMU (or an FVP) runs. A bundle (mica/device/bundle.h) loaded at
// MICA_BUNDLE_ADDR holds a plan, inputs and optionally expected outputs; the runner verifies
// the plan, runs it from the arena at MICA_ARENA_ADDR, prints instruction counts measured with
// the exact FPGAIO/-icount method, the outputs (on request) and, with expected outputs,
// `Test_result: PASS` or `Test_result: FAIL` with per output the first differing index, the
// number of differing elements and the largest difference (of the values; for float32 outputs,
// compared bit-exactly, in units in the last place).
//
// Output lines (parsed by libfvp's QemuSimulator; everything else is ignored):
//   MICA begin board=<b> isa=<i>       MICA plan ops=<n> arena=<bytes> plan=<bytes>
//   MICA op <i> <NAME> <instructions>  MICA total <instructions>
//   MICA output <i> <bytes> <hex>      MICA check <i> first=<idx> diffs=<n> maxdiff=<d>
//   Test_result: PASS|FAIL             MICA end <status>
//   MICA error <message>
#include <cstddef>
#include <cstdint>

#include "mica/device/bundle.h"
#include "mica/device/runtime.h"
#include "semihost.h"

extern "C" uint32_t mica_insn_now();

namespace {

using namespace mica;
using namespace mica::fw;

constexpr uint32_t kMaxOps = 1024;
uint32_t g_op_insn[kMaxOps];
uint32_t g_calibration = 0;  // what two back-to-back mica_insn_now() calls measure
uint32_t g_t0 = 0;

void Before(void*, uint32_t, const device::OpRecord&) { g_t0 = mica_insn_now(); }
void After(void*, uint32_t op, const device::OpRecord&) {
  const uint32_t t1 = mica_insn_now();
  if (op < kMaxOps) g_op_insn[op] = t1 - g_t0 - g_calibration;
}

[[noreturn]] void Fail(const char* what, const char* detail = nullptr) {
  Puts("MICA error ");
  Puts(what);
  if (detail != nullptr) {
    Puts(": ");
    Puts(detail);
  }
  Puts("\nMICA end 2\n");
  Exit(2);
}

void Copy(uint8_t* dst, const uint8_t* src, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) dst[i] = src[i];
}

int64_t Element(const uint8_t* p, uint32_t i, uint8_t dtype) {
  switch (static_cast<device::PlanDType>(dtype)) {
    case device::PlanDType::kInt8: return reinterpret_cast<const int8_t*>(p)[i];
    case device::PlanDType::kInt16: return reinterpret_cast<const int16_t*>(p)[i];
    case device::PlanDType::kInt32: return reinterpret_cast<const int32_t*>(p)[i];
    case device::PlanDType::kInt64: return reinterpret_cast<const int64_t*>(p)[i];
    case device::PlanDType::kFloat32: {
      // Bit-exact comparison; the difference is in units in the last place (the bit pattern
      // mapped to a monotonic integer: -0.0 and +0.0 are one apart).
      const int32_t bits = reinterpret_cast<const int32_t*>(p)[i];
      return bits < 0 ? int64_t{INT32_MIN} - 1 - bits : int64_t{bits};
    }
    default: return p[i];
  }
}

uint32_t ElemBytes(uint8_t dtype) {
  switch (static_cast<device::PlanDType>(dtype)) {
    case device::PlanDType::kInt16: return 2;
    case device::PlanDType::kInt32: case device::PlanDType::kFloat32: return 4;
    case device::PlanDType::kInt64: return 8;
    default: return 1;
  }
}

}  // namespace

extern "C" void mica_fault(const uint32_t* frame) {
  const uint32_t cfsr = *reinterpret_cast<volatile uint32_t*>(0xE000ED28);
  Puts("MICA error fault CFSR=");
  PutU(cfsr);
  Puts(" PC=");
  PutU(frame[6]);
  Puts(" LR=");
  PutU(frame[5]);
  Puts("\nMICA end 3\n");
  Exit(3);
}

extern "C" void mica_exit(int status) { Exit(status); }

extern "C" int main() {
  Puts("MICA begin board=" MICA_BOARD_NAME " isa=" MICA_ISA_NAME "\n");
  const auto* base = reinterpret_cast<const uint8_t*>(MICA_BUNDLE_ADDR);
  const auto& b = *reinterpret_cast<const device::BundleHeader*>(base);
  if (b.magic != device::kBundleMagic || b.version != device::kBundleVersion) {
    Fail("no bundle", "nothing loaded at the bundle address (QEMU -device loader)");
  }
  const uint64_t entries = uint64_t{b.num_inputs} + b.num_expected;
  if (b.total_bytes > MICA_BUNDLE_MAX || entries > 256 ||
      sizeof(b) + entries * sizeof(device::BundleEntry) > b.total_bytes ||
      b.plan_offset > b.total_bytes || b.plan_bytes > b.total_bytes - b.plan_offset) {
    Fail("bad bundle", "sections out of bounds");
  }
  const auto* e = reinterpret_cast<const device::BundleEntry*>(base + sizeof(b));
  for (uint32_t i = 0; i < entries; ++i) {
    if (e[i].offset > b.total_bytes || e[i].bytes > b.total_bytes - e[i].offset) {
      Fail("bad bundle", "tensor entry out of bounds");
    }
  }
  device::Plan plan;
  uint32_t where = 0;
  const device::PlanStatus vs = device::VerifyPlan(base + b.plan_offset, b.plan_bytes, &plan, &where);
  if (vs != device::PlanStatus::kOk) Fail("plan rejected", device::PlanStatusName(vs));
  if (b.num_inputs != plan.num_inputs()) Fail("bad bundle", "input count differs from the plan");
  if (b.num_expected != 0 && b.num_expected != plan.num_outputs()) {
    Fail("bad bundle", "expected-output count differs from the plan");
  }
  if (plan.arena_bytes() > MICA_ARENA_MAX) Fail("arena too large for this board");
  auto* arena = reinterpret_cast<uint8_t*>(MICA_ARENA_ADDR);
  Puts("MICA plan ops=");
  PutU(plan.num_ops());
  Puts(" arena=");
  PutU(plan.arena_bytes());
  Puts(" plan=");
  PutU(b.plan_bytes);
  Puts("\n");

  auto load_inputs = [&] {
    for (uint32_t i = 0; i < plan.num_inputs(); ++i) {
      const auto& rec = plan.tensor(plan.input(i));
      if (e[i].bytes != rec.bytes) Fail("bad bundle", "input size differs from the model");
      Copy(device::TensorData(plan, arena, plan.input(i)), base + e[i].offset, rec.bytes);
    }
  };
  // Calibration: two back-to-back reads.
  {
    const uint32_t a = mica_insn_now();
    const uint32_t c = mica_insn_now();
    g_calibration = c - a;
  }
  uint32_t failed = 0;
  // Run 1 (warm-up) with per-operator counts; run 2 timed as a whole, without hooks.
  if (b.flags & device::kBundlePerOpCounts) {
    load_inputs();
    device::RunHooks hooks;
    hooks.before_op = &Before;
    hooks.after_op = &After;
    const device::PlanStatus s = device::RunPlan(plan, arena, MICA_ARENA_MAX, &hooks, &failed);
    if (s != device::PlanStatus::kOk) Fail("run failed", device::PlanStatusName(s));
    for (uint32_t i = 0; i < plan.num_ops() && i < kMaxOps; ++i) {
      Puts("MICA op ");
      PutU(i);
      Puts(" ");
      Puts(device::PlanOpName(plan.ops[i].code));
      Puts(" ");
      PutU(g_op_insn[i]);
      Puts("\n");
    }
  }
  load_inputs();
  const uint32_t t0 = mica_insn_now();
  const device::PlanStatus s = device::RunPlan(plan, arena, MICA_ARENA_MAX, nullptr, &failed);
  const uint32_t t1 = mica_insn_now();
  if (s != device::PlanStatus::kOk) Fail("run failed", device::PlanStatusName(s));
  Puts("MICA total ");
  PutU(t1 - t0 - g_calibration);
  Puts("\n");

  if (b.flags & device::kBundlePrintOutputs) {
    for (uint32_t i = 0; i < plan.num_outputs(); ++i) {
      const auto& rec = plan.tensor(plan.output(i));
      Puts("MICA output ");
      PutU(i);
      Puts(" ");
      PutU(rec.bytes);
      Puts(" ");
      PutHexBytes(device::TensorData(plan, arena, plan.output(i)), rec.bytes);
      Puts("\n");
    }
  }
  int status = 0;
  if (b.num_expected > 0) {
    bool pass = true;
    for (uint32_t i = 0; i < plan.num_outputs(); ++i) {
      const auto& rec = plan.tensor(plan.output(i));
      const auto& want = e[b.num_inputs + i];
      const uint8_t* got = device::TensorData(plan, arena, plan.output(i));
      const uint32_t es = ElemBytes(rec.dtype);
      Puts("MICA check ");
      PutU(i);
      if (want.bytes != rec.bytes) {
        Puts(" size ");
        PutU(want.bytes);
        Puts(" expected, ");
        PutU(rec.bytes);
        Puts(" produced\n");
        pass = false;
        continue;
      }
      int64_t first = -1, max_diff = 0;
      uint32_t diffs = 0;
      for (uint32_t k = 0; k < rec.bytes / es; ++k) {
        const int64_t d = Element(got, k, rec.dtype) - Element(base + want.offset, k, rec.dtype);
        if (d == 0) continue;
        if (first < 0) first = k;
        ++diffs;
        const int64_t ad = d < 0 ? -d : d;
        if (ad > max_diff) max_diff = ad;
      }
      Puts(" first=");
      PutI(first);
      Puts(" diffs=");
      PutU(diffs);
      Puts(" maxdiff=");
      PutI(max_diff);
      Puts("\n");
      if (diffs != 0) pass = false;
    }
    Puts(pass ? "Test_result: PASS\n" : "Test_result: FAIL\n");
    status = pass ? 0 : 1;
  }
  Puts("MICA end ");
  PutU(static_cast<uint64_t>(status));
  Puts("\n");
  Exit(status);
}
