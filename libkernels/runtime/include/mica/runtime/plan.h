// mica runtime — compiles a Graph into a device plan (.mplan, mica/device/plan_format.h).
//
// The plan is what the host executor's lowering prepares (the same LowerOp and arena planner
// Executor::Create runs), serialised: per operator its kernel-core entry, parameter block and
// multiplier arrays, the planner's arena offsets, scratch and constant data. The device
// runtime (mica/device/runtime.h) verifies and executes it.
//
//   MICA_ASSIGN_OR_RETURN(mica::runtime::CompiledPlan plan,
//                         mica::runtime::CompilePlan(graph, {mica::kernels::Isa::kMve}));
#ifndef MICA_RUNTIME_PLAN_H_
#define MICA_RUNTIME_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"

namespace mica {
namespace runtime {

struct PlanOptions {
  // The ISA of the firmware that will run the plan (sizes scratch for its bodies).
  kernels::Isa isa = kernels::Isa::kMve;
  int32_t subgraph = 0;
};

struct CompiledPlan {
  std::vector<uint8_t> bytes;
  size_t arena_bytes = 0;       // what the device must provide (activations+scratch+state)
  size_t activation_bytes = 0;  // the planner's part
  size_t scratch_bytes = 0;
  size_t state_bytes = 0;
  size_t constant_bytes = 0;
  std::vector<std::string> op_names;  // per plan op, the model operator's name
};

// Unimplemented naming the operator when the device runtime has no kernel for one (float32
// operators other than QUANTIZE / DEQUANTIZE have none; data movement other than reshape, pad,
// concatenation, transpose, slices and splits neither); InvalidArgument when the plan would not pass the
// device's VerifyPlan (checked before returning).
absl::StatusOr<CompiledPlan> CompilePlan(const Graph& graph, const PlanOptions& options);

// The plan as C source: `alignas(16) const unsigned char <symbol>[] = {...};` and its size.
std::string PlanToC(const std::vector<uint8_t>& plan, const std::string& symbol);

// Maps a target profile's CPU ("cortex-m55", "cortex-m4", ...) to the best ISA it has.
kernels::Isa IsaOfCpu(const std::string& cpu);

}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_PLAN_H_
