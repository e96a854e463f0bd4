// libFuzzer target: the device plan verifier (mica/device/runtime.h). Hostile plan bytes must
// be refused by VerifyPlan with a status, never crash; a plan it accepts must run (RunPlan)
// from an arena of the size it declares without any out-of-bounds access, undefined behaviour
// or crash, whatever status the kernels return.
//
// The plan's CRC-32 would stop almost every mutant at the checksum, so the harness rewrites
// the checksum of inputs that carry the plan magic before verifying them (except inputs whose
// size is a multiple of 7, which keep theirs, so the checksum path stays covered).
// LLVMFuzzerCustomMutator sets one aligned 32-bit word of the fixed tables or the parameter
// blocks to an interesting value (0, 1, -1, limits, sizes), the fields a hostile plan would
// forge.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "mica/device/plan_format.h"
#include "mica/device/runtime.h"

namespace {

using mica::device::PlanHeader;

// Arenas above this are not allocated (the verifier still runs): keeps every execution fast.
constexpr uint32_t kMaxArena = 8u << 20;

void FixChecksum(uint8_t* b, size_t size) {
  if (size < sizeof(PlanHeader)) return;
  PlanHeader h;
  std::memcpy(&h, b, sizeof(h));
  if (h.magic != mica::device::kPlanMagic || h.total_bytes > size || h.total_bytes < 16) return;
  h.crc32 = mica::device::Crc32(b + 16, h.total_bytes - 16);
  std::memcpy(b, &h, sizeof(h));
}

}  // namespace

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 3 == 0 || size < sizeof(PlanHeader) + 8) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  static const uint32_t kValues[] = {0u,          1u,          2u,          3u,
                                     4u,          7u,          8u,          16u,
                                     255u,        256u,        0x7FFFu,     0x8000u,
                                     0xFFFFu,     0x10000u,    0x7FFFFFFFu, 0x80000000u,
                                     0xFFFFFFFFu, 0xFFFFFFF0u, 0xFFFFFF80u, 0x40000000u};
  const size_t words = size / 4;
  // Half the time a word of the header and tables (first 1 KiB), else anywhere.
  const size_t limit = rng() % 2 == 0 && words > 256 ? 256 : words;
  const size_t w = rng() % limit;
  uint32_t v = kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
  if (rng() % 4 == 0) v = static_cast<uint32_t>(size) + (rng() % 64) - 32;
  std::memcpy(data + 4 * w, &v, 4);
  return size;
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A 16-byte aligned copy, as a device holds its plan.
  std::vector<uint64_t> storage((size + 15) / 8 + 2);
  uint8_t* plan_bytes = reinterpret_cast<uint8_t*>(storage.data());
  if (size > 0) std::memcpy(plan_bytes, data, size);
  if (size % 7 != 0) FixChecksum(plan_bytes, size);

  mica::device::Plan plan;
  uint32_t where = 0;
  const mica::device::PlanStatus st = mica::device::VerifyPlan(plan_bytes, size, &plan, &where);
  if (mica::device::PlanStatusName(st) == nullptr) std::abort();
  if (st != mica::device::PlanStatus::kOk) return 0;
  if (plan.arena_bytes() > kMaxArena) return 0;

  std::vector<uint64_t> arena_storage(plan.arena_bytes() / 8 + 3);
  uint8_t* arena = reinterpret_cast<uint8_t*>(arena_storage.data());
  if (reinterpret_cast<uintptr_t>(arena) % 16 != 0) arena += 8;
  // Deterministic input bytes.
  for (uint32_t i = 0; i < plan.num_inputs(); ++i) {
    const mica::device::TensorRecord& t = plan.tensor(plan.input(i));
    uint8_t* p = mica::device::TensorData(plan, arena, plan.input(i));
    if (p == nullptr || t.loc == static_cast<uint8_t>(mica::device::TensorLoc::kConst)) continue;
    for (uint32_t k = 0; k < t.bytes; ++k) p[k] = static_cast<uint8_t>(k * 37u + i);
  }
  uint32_t failed = 0;
  (void)mica::device::RunPlan(plan, arena, plan.arena_bytes(), nullptr, &failed);
  return 0;
}
