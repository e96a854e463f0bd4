#include "planner.h"

#include "mica/base/status_macros.h"
#include "mica/model/analysis.h"

namespace mica {
namespace runtime {
namespace internal {

absl::StatusOr<ArenaPlan> PlanArena(const Subgraph& sg, size_t alignment) {
  // libmodel's planner: lifetimes in stored op order, largest first, first fit. Tensors whose
  // lifetimes overlap never share bytes, so an operator's outputs never alias its inputs.
  ArenaOptions options;
  options.alignment = alignment;
  MICA_ASSIGN_OR_RETURN(mica::ArenaPlan plan, mica::PlanArena(sg, options));
  ArenaPlan out;
  out.arena_bytes = plan.peak_bytes;
  for (const ArenaAllocation& a : plan.allocations) {
    out.slots.push_back({a.tensor, a.offset, sg.tensors[a.tensor].num_bytes()});
  }
  return out;
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
