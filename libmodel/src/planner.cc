#include "mica/model/planner.h"

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mica {
namespace {

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Places lifetimes[i] for i in `order`, each at the lowest offset that clears every placed,
// time-overlapping tensor of `size[j]` bytes; returns the offsets, parallel to `lifetimes`.
std::vector<size_t> FirstGap(const std::vector<TensorLifetime>& lifetimes,
                             const std::vector<size_t>& order, const std::vector<size_t>& size) {
  std::vector<size_t> offset(lifetimes.size(), 0);
  std::vector<size_t> placed, conflicts;
  for (size_t i : order) {
    conflicts.clear();
    for (size_t j : placed) {
      if (size[j] > 0 && lifetimes[j].Overlaps(lifetimes[i])) conflicts.push_back(j);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](size_t x, size_t y) { return offset[x] < offset[y]; });
    size_t candidate = 0;
    for (size_t j : conflicts) {
      if (candidate + size[i] <= offset[j]) break;
      candidate = std::max(candidate, offset[j] + size[j]);
    }
    offset[i] = candidate;
    placed.push_back(i);
  }
  return offset;
}

absl::StatusOr<ArenaPlan> PlanTflmGreedy(const std::vector<TensorLifetime>& lifetimes,
                                         size_t alignment) {
  std::vector<size_t> size(lifetimes.size());
  for (size_t i = 0; i < size.size(); ++i) size[i] = RoundUp(lifetimes[i].bytes, alignment);
  std::vector<size_t> order(lifetimes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return size[x] > size[y]; });
  const std::vector<size_t> offset = FirstGap(lifetimes, order, size);
  ArenaPlan plan;
  plan.alignment = alignment;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    plan.allocations.push_back(ArenaAllocation{lifetimes[i].tensor, offset[i], lifetimes[i].bytes});
    plan.peak_bytes = std::max(plan.peak_bytes, offset[i] + size[i]);
  }
  std::stable_sort(plan.allocations.begin(), plan.allocations.end(),
                   [](const ArenaAllocation& x, const ArenaAllocation& y) { return x.tensor < y.tensor; });
  return plan;
}

}  // namespace

std::string_view PlannerName(Planner planner) {
  switch (planner) {
    case Planner::kFirstFit: return "first-fit";
    case Planner::kTflmGreedy: return "tflm-greedy";
  }
  return "unknown";
}

absl::StatusOr<ArenaPlan> PlanArena(const std::vector<TensorLifetime>& lifetimes, Planner planner,
                                    const ArenaOptions& options) {
  const size_t a = options.alignment;
  if (a == 0 || (a & (a - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("arena alignment ", a, " is not a power of two"));
  }
  switch (planner) {
    case Planner::kFirstFit: return PlanArena(lifetimes, options);
    case Planner::kTflmGreedy: return PlanTflmGreedy(lifetimes, a);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown arena planner ", static_cast<int>(planner)));
}

}  // namespace mica
