#include "mica/model/planner.h"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mica {
namespace {

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Places lifetimes[i] for i in `order`, each at the lowest offset (a multiple of `alignment`)
// that clears every placed, time-overlapping tensor of `size[j]` bytes; returns the offsets,
// parallel to `lifetimes`. The placed tensors are indexed by the steps they live at, so each
// placement looks only at the tensors live during its own range: linear in the operator count
// for chains (a scan over every placed tensor made a 100,000-op model quadratic). Lifetimes the
// index cannot hold (an empty range, or steps far beyond the tensor count) take the plain scan;
// both find the same conflicts, so the plan is the same.
std::vector<size_t> FirstGap(const std::vector<TensorLifetime>& lifetimes,
                             const std::vector<size_t>& order, const std::vector<size_t>& size,
                             size_t alignment) {
  const size_t n = lifetimes.size();
  std::vector<size_t> offset(n, 0);
  int64_t lo = 0, hi = -1;
  bool indexed = n > 0;
  for (const TensorLifetime& l : lifetimes) {
    if (l.last_op < l.first_op) indexed = false;
    if (hi < lo) {
      lo = l.first_op;
      hi = l.last_op;
    }
    lo = std::min<int64_t>(lo, l.first_op);
    hi = std::max<int64_t>(hi, l.last_op);
  }
  if (indexed && hi - lo > 4 * static_cast<int64_t>(n) + 1024) indexed = false;
  std::vector<std::vector<size_t>> live_at(indexed ? static_cast<size_t>(hi - lo + 1) : 0);
  std::vector<size_t> seen(indexed ? n : 0, n);  // last placement that collected tensor j
  std::vector<size_t> placed, conflicts;
  for (size_t i : order) {
    conflicts.clear();
    if (indexed) {
      for (int64_t t = lifetimes[i].first_op; t <= lifetimes[i].last_op; ++t) {
        for (size_t j : live_at[static_cast<size_t>(t - lo)]) {
          if (seen[j] != i) {
            seen[j] = i;
            conflicts.push_back(j);
          }
        }
      }
    } else {
      for (size_t j : placed) {
        if (size[j] > 0 && lifetimes[j].Overlaps(lifetimes[i])) conflicts.push_back(j);
      }
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](size_t x, size_t y) { return offset[x] < offset[y]; });
    size_t candidate = 0;
    for (size_t j : conflicts) {
      if (candidate + size[i] <= offset[j]) break;
      candidate = std::max(candidate, RoundUp(offset[j] + size[j], alignment));
    }
    offset[i] = candidate;
    if (indexed) {
      if (size[i] > 0) {
        for (int64_t t = lifetimes[i].first_op; t <= lifetimes[i].last_op; ++t) {
          live_at[static_cast<size_t>(t - lo)].push_back(i);
        }
      }
    } else {
      placed.push_back(i);
    }
  }
  return offset;
}

ArenaPlan MakePlan(const std::vector<TensorLifetime>& lifetimes, const std::vector<size_t>& offset,
                   const std::vector<size_t>& size, size_t alignment);

// mica's first fit: largest first (ties: earlier first_op, lower tensor), offsets aligned,
// sizes as given.
ArenaPlan PlanFirstFit(const std::vector<TensorLifetime>& lifetimes, size_t alignment) {
  std::vector<size_t> size(lifetimes.size());
  for (size_t i = 0; i < size.size(); ++i) size[i] = lifetimes[i].bytes;
  std::vector<size_t> order(lifetimes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const TensorLifetime& l = lifetimes[x];
    const TensorLifetime& r = lifetimes[y];
    if (l.bytes != r.bytes) return l.bytes > r.bytes;
    if (l.first_op != r.first_op) return l.first_op < r.first_op;
    return l.tensor < r.tensor;
  });
  return MakePlan(lifetimes, FirstGap(lifetimes, order, size, alignment), size, alignment);
}

absl::StatusOr<ArenaPlan> PlanTflmGreedy(const std::vector<TensorLifetime>& lifetimes,
                                         size_t alignment) {
  std::vector<size_t> size(lifetimes.size());
  for (size_t i = 0; i < size.size(); ++i) size[i] = RoundUp(lifetimes[i].bytes, alignment);
  std::vector<size_t> order(lifetimes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return size[x] > size[y]; });
  return MakePlan(lifetimes, FirstGap(lifetimes, order, size, alignment), size, alignment);
}

// Fills an ArenaPlan from offsets and the (rounded) sizes the peak is measured with.
ArenaPlan MakePlan(const std::vector<TensorLifetime>& lifetimes, const std::vector<size_t>& offset,
                   const std::vector<size_t>& size, size_t alignment) {
  ArenaPlan plan;
  plan.alignment = alignment;
  for (size_t i = 0; i < lifetimes.size(); ++i) {
    plan.allocations.push_back(ArenaAllocation{lifetimes[i].tensor, offset[i], lifetimes[i].bytes});
    plan.peak_bytes = std::max(plan.peak_bytes, offset[i] + size[i]);
  }
  std::stable_sort(
      plan.allocations.begin(), plan.allocations.end(),
      [](const ArenaAllocation& x, const ArenaAllocation& y) { return x.tensor < y.tensor; });
  return plan;
}

size_t Peak(const std::vector<size_t>& offset, const std::vector<size_t>& size) {
  size_t peak = 0;
  for (size_t i = 0; i < offset.size(); ++i) peak = std::max(peak, offset[i] + size[i]);
  return peak;
}

constexpr int kHillClimbPatience = 5000;       // swaps in a row without improvement
constexpr int kHillClimbMaxIterations = 99999;  // swaps in all

// HillClimb's initial order: highest urgency (the largest total live size at any step the
// range spans) first, then longer ranges, earlier start, larger size, lower index.
std::vector<size_t> UrgencyOrder(const std::vector<TensorLifetime>& lifetimes,
                                 const std::vector<size_t>& size) {
  const size_t n = lifetimes.size();
  int32_t last_step = 0;
  for (const TensorLifetime& l : lifetimes) last_step = std::max(last_step, l.last_op);
  std::vector<size_t> live(static_cast<size_t>(last_step) + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t t = std::max(lifetimes[i].first_op, 0); t <= lifetimes[i].last_op; ++t) {
      live[static_cast<size_t>(t)] += size[i];
    }
  }
  std::vector<size_t> urgency(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t t = std::max(lifetimes[i].first_op, 0); t <= lifetimes[i].last_op; ++t) {
      urgency[i] = std::max(urgency[i], live[static_cast<size_t>(t)]);
    }
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const TensorLifetime& a = lifetimes[x];
    const TensorLifetime& b = lifetimes[y];
    return std::make_tuple(-static_cast<int64_t>(urgency[x]), -(a.last_op - a.first_op),
                           a.first_op, -static_cast<int64_t>(size[x]), x) <
           std::make_tuple(-static_cast<int64_t>(urgency[y]), -(b.last_op - b.first_op),
                           b.first_op, -static_cast<int64_t>(size[y]), y);
  });
  return order;
}

absl::StatusOr<ArenaPlan> PlanHillClimb(const std::vector<TensorLifetime>& lifetimes,
                                        size_t alignment) {
  const size_t n = lifetimes.size();
  std::vector<size_t> size(n);
  std::vector<TensorLifetime> rounded = lifetimes;
  for (size_t i = 0; i < n; ++i) {
    size[i] = RoundUp(lifetimes[i].bytes, alignment);
    rounded[i].bytes = size[i];
  }
  const size_t lower_bound = PeakLiveBytes(rounded);
  std::vector<size_t> order = UrgencyOrder(lifetimes, size);
  std::vector<size_t> best_offset = FirstGap(lifetimes, order, size, alignment);
  size_t best = Peak(best_offset, size);
  std::mt19937 rng;  // default seed: deterministic plans
  std::vector<size_t> position(n), candidates;
  int stale = 0;
  for (int iter = 0; iter < kHillClimbMaxIterations && best > lower_bound &&
                     stale < kHillClimbPatience;
       ++iter) {
    for (size_t p = 0; p < n; ++p) position[order[p]] = p;
    // The top-most range and the time-overlapping ranges placed below it.
    size_t top = order[0];
    for (size_t i : order) {
      if (best_offset[i] + size[i] > best_offset[top] + size[top]) top = i;
    }
    candidates.assign(1, position[top]);
    for (size_t i = 0; i < n; ++i) {
      if (i != top && size[i] > 0 && lifetimes[i].Overlaps(lifetimes[top]) &&
          best_offset[i] < best_offset[top]) {
        candidates.push_back(position[i]);
      }
    }
    if (candidates.size() < 2) break;  // nothing below the top range to reorder
    // Two distinct candidates, drawn uniformly.
    const size_t m = candidates.size();
    const size_t ia = rng() % m;
    const size_t ib = (ia + 1 + rng() % (m - 1)) % m;
    const size_t a = candidates[ia], b = candidates[ib];
    std::swap(order[a], order[b]);
    std::vector<size_t> offset = FirstGap(lifetimes, order, size, alignment);
    const size_t peak = Peak(offset, size);
    if (peak > best) {
      std::swap(order[a], order[b]);
      ++stale;
      continue;
    }
    stale = peak < best ? 0 : stale + 1;
    best = peak;
    best_offset = std::move(offset);
  }
  return MakePlan(lifetimes, best_offset, size, alignment);
}

}  // namespace

std::string_view PlannerName(Planner planner) {
  switch (planner) {
    case Planner::kFirstFit: return "first-fit";
    case Planner::kTflmGreedy: return "tflm-greedy";
    case Planner::kHillClimb: return "hillclimb";
  }
  return "unknown";
}

absl::StatusOr<ArenaPlan> PlanArena(const std::vector<TensorLifetime>& lifetimes, Planner planner,
                                    const ArenaOptions& options) {
  const size_t a = options.alignment;
  if (a == 0 || (a & (a - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena alignment ", a, " is not a power of two"));
  }
  switch (planner) {
    case Planner::kFirstFit: return PlanFirstFit(lifetimes, a);
    case Planner::kTflmGreedy: return PlanTflmGreedy(lifetimes, a);
    case Planner::kHillClimb: return PlanHillClimb(lifetimes, a);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown arena planner ", static_cast<int>(planner)));
}

}  // namespace mica
