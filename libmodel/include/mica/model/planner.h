// mica — one interface over the activation-arena planners that estimates and the runtime need.
//
// Every strategy takes the same input (tensor lifetimes in execution-order positions, see
// ComputeLifetimes) and gives the same output (an ArenaPlan: one offset per tensor and the
// arena's peak), so callers choose a rule by name and compare the figures:
//
//   std::vector<mica::TensorLifetime> lts = mica::ComputeLifetimes(sg);
//   MICA_ASSIGN_OR_RETURN(mica::ArenaPlan ours, mica::PlanArena(lts, mica::Planner::kFirstFit));
//   MICA_ASSIGN_OR_RETURN(mica::ArenaPlan tflm, mica::PlanArena(lts, mica::Planner::kTflmGreedy));
//   MICA_ASSIGN_OR_RETURN(mica::ArenaPlan vela, mica::PlanArena(lts, mica::Planner::kHillClimb));
//   std::cout << ours.peak_bytes << " vs TFLite Micro " << tflm.peak_bytes << "\n";
#ifndef MICA_MODEL_PLANNER_H_
#define MICA_MODEL_PLANNER_H_

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/analysis.h"

namespace mica {

// The placement rules available.
enum class Planner {
  // mica's first fit (PlanArena without a strategy): tensors largest first (ties: earlier
  // first_op, then lower tensor index), each at the lowest offset, rounded up to the
  // alignment, that collides with no placed tensor whose lifetime overlaps. Sizes stay as
  // given, so the peak is max(offset + bytes).
  kFirstFit,
  // TFLite Micro's GreedyMemoryPlanner, as its documentation describes it: every size is first
  // rounded up to the alignment, buffers are sorted by that size, largest first, with a stable
  // sort (ties keep the order the buffers were added in, which is tensor order here), and each
  // goes into the first gap, walking placed buffers that overlap it in time in offset order,
  // that is large enough. The peak is max(offset + aligned size): what TFLite Micro reserves.
  kTflmGreedy,
  // Vela 5.1.0's HillClimb tensor allocator, as the Ethos-U performance-model note (section 8.3)
  // describes it: sizes rounded up to
  // the alignment; first fit in an order of highest "urgency" first (the largest total live
  // size at any step the range spans), then longer ranges, earlier start, larger size (then
  // lower tensor index). Until the peak reaches the lower bound (PeakLiveBytes of the rounded
  // sizes), it swaps two ranges in the order, both drawn from the top-most range and the
  // time-overlapping ranges placed below it, with std::mt19937 at its default seed, and keeps
  // a swap unless it raises the peak; it stops after 5000 swaps in a row without improvement
  // or 99 999 swaps in all. Which swaps are drawn is mica's choice, so a plan (not the rule)
  // may differ from Vela's. The peak is max(offset + aligned size).
  kHillClimb,
};

// Returns the strategy's name as used in reports and flags ("first-fit", "tflm-greedy",
// "hillclimb").
std::string_view PlannerName(Planner planner);

// Places `lifetimes` in one arena with `planner`. The plan's allocations are ordered by tensor
// index and carry the tensors' own byte counts. InvalidArgument when the alignment is not a
// power of two.
absl::StatusOr<ArenaPlan> PlanArena(const std::vector<TensorLifetime>& lifetimes, Planner planner,
                                    const ArenaOptions& options = {});

}  // namespace mica

#endif  // MICA_MODEL_PLANNER_H_
