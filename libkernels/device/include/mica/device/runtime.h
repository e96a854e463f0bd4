// mica device runtime — verifies a compiled plan (mica/device/plan_format.h) and executes it
// from one caller-provided arena. Freestanding: no heap, exceptions, RTTI or Abseil; the
// operators call the kernel core's public entries, which pick the best body the build's ISA
// has (the same sources the host executor runs).
//
//   mica::device::Plan plan;
//   if (mica::device::VerifyPlan(bytes, size, &plan) != PlanStatus::kOk) ...
//   memcpy(mica::device::TensorData(plan, arena, plan.input(0)), in, n);
//   mica::device::RunHooks hooks{&BeforeOp, &AfterOp, &counters};
//   mica::device::RunPlan(plan, arena, arena_bytes, &hooks);
#ifndef MICA_DEVICE_RUNTIME_H_
#define MICA_DEVICE_RUNTIME_H_

#include <cstddef>
#include <cstdint>

#include "mica/device/plan_format.h"

namespace mica {
namespace device {

enum class PlanStatus : uint8_t {
  kOk = 0,
  kTruncated,       // shorter than its header says, or a section out of bounds
  kBadMagic,        // not a plan
  kBadVersion,      // a plan of another format version
  kBadChecksum,     // CRC mismatch
  kMisaligned,      // plan or arena not 16-byte aligned, or a misaligned section
  kBadTensor,       // a tensor record outside the arena or the plan
  kBadOp,           // unknown op code, wrong parameter size or operand that does not fit
  kArenaTooSmall,   // the caller's arena is smaller than the plan needs
  kKernelError,     // a kernel rejected its arguments
};
const char* PlanStatusName(PlanStatus s);

// A verified plan (a view into the caller's bytes; nothing is copied).
struct Plan {
  const uint8_t* base = nullptr;
  const PlanHeader* header = nullptr;
  const TensorRecord* tensors = nullptr;
  const OpRecord* ops = nullptr;
  const uint32_t* io = nullptr;

  uint32_t num_ops() const { return header->num_ops; }
  uint32_t num_inputs() const { return header->num_inputs; }
  uint32_t num_outputs() const { return header->num_outputs; }
  uint32_t input(uint32_t i) const { return io[i]; }
  uint32_t output(uint32_t i) const { return io[header->num_inputs + i]; }
  uint32_t arena_bytes() const { return header->arena_bytes; }
  const TensorRecord& tensor(uint32_t t) const { return tensors[t]; }
};

// Checks everything before use: header, checksum, every table inside the plan, every tensor
// inside the arena or the plan, every op's code, parameter size and operand sizes against its
// parameters. On kBadOp/kBadTensor `*where` (if given) is the offending op or tensor index.
PlanStatus VerifyPlan(const void* data, size_t size, Plan* plan, uint32_t* where = nullptr);

// Memory of tensor `t` (in the arena, or in the plan for constants; nullptr for kNone).
uint8_t* TensorData(const Plan& plan, uint8_t* arena, uint32_t t);

// Per-operator hooks (counters, tracing); either may be null.
struct RunHooks {
  void (*before_op)(void* user, uint32_t op, const OpRecord& rec) = nullptr;
  void (*after_op)(void* user, uint32_t op, const OpRecord& rec) = nullptr;
  void* user = nullptr;
};

// Fills state tensors, then runs every op. Inputs must have been written to their
// TensorData() first. The arena must be 16-byte aligned and at least plan.arena_bytes().
PlanStatus RunPlan(const Plan& plan, uint8_t* arena, size_t arena_bytes,
                   const RunHooks* hooks = nullptr, uint32_t* failed_op = nullptr);

}  // namespace device
}  // namespace mica

#endif  // MICA_DEVICE_RUNTIME_H_
