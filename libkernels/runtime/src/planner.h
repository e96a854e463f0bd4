// Private: lays out the activation tensors of a subgraph in one arena.
#ifndef MICA_RUNTIME_PLANNER_H_
#define MICA_RUNTIME_PLANNER_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/runtime/executor.h"

namespace mica {
namespace runtime {
namespace internal {

struct ArenaPlan {
  std::vector<ArenaSlot> slots;
  size_t arena_bytes = 0;
};

// Lays out every non-constant, non-variable tensor the subgraph uses with libmodel's planner
// (mica/model/analysis.h). Tensors whose lifetimes overlap never share bytes, so an operator's
// outputs never alias its inputs.
absl::StatusOr<ArenaPlan> PlanArena(const Subgraph& sg, size_t alignment);

}  // namespace internal
}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_PLANNER_H_
