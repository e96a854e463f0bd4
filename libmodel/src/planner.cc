#include "mica/model/planner.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mica {
namespace {

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Places lifetimes[i] for i in `order`, each at the lowest offset (a multiple of `alignment`)
// that clears every placed, time-overlapping tensor of `size[j]` bytes. The placed tensors are
// indexed by the steps they live at, so each placement looks only at the tensors live during its
// own range: linear in the operator count for chains (a scan over every placed tensor made a
// 100,000-op model quadratic). Lifetimes the index cannot hold (an empty range, or steps far
// beyond the tensor count) take the plain scan; both find the same conflicts, so the plan is the
// same. The index is one flat array sized once (each step's slots are the tensors that can live
// there), so the hill climb's thousands of placements allocate nothing.
class GapFinder {
 public:
  GapFinder(const std::vector<TensorLifetime>& lifetimes, const std::vector<size_t>& size,
            size_t alignment)
      : lifetimes_(lifetimes), size_(size), alignment_(alignment) {
    const size_t n = lifetimes.size();
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
    // The index holds every placed tensor once per step it lives: many long-lived tensors (a
    // graph with thousands of outputs written early) would make it quadratic in memory, so
    // past 2^26 slots the plain scan serves.
    if (indexed) {
      int64_t slots = 0;
      for (size_t j = 0; j < n && slots <= (int64_t{1} << 26); ++j) {
        if (size_[j] > 0) slots += int64_t{lifetimes[j].last_op} - lifetimes[j].first_op + 1;
      }
      if (slots > (int64_t{1} << 26)) indexed = false;
    }
    indexed_ = indexed;
    lo_ = lo;
    if (indexed_) {
      const size_t steps = static_cast<size_t>(hi - lo + 1);
      slot_begin_.assign(steps + 1, 0);
      for (size_t j = 0; j < n; ++j) {
        if (size_[j] == 0) continue;
        for (int64_t t = lifetimes[j].first_op; t <= lifetimes[j].last_op; ++t) {
          ++slot_begin_[static_cast<size_t>(t - lo_) + 1];
        }
      }
      for (size_t t = 0; t < steps; ++t) slot_begin_[t + 1] += slot_begin_[t];
      slots_.resize(slot_begin_[steps]);
      slot_count_.resize(steps);
      seen_.assign(n, 0);
    } else {
      placed_.reserve(n);
    }
    conflicts_.reserve(n);
  }

  // Places order[p] for every p; the first `keep` entries keep the offsets `offset` already
  // holds for them (they must be what this placement gives them, as after a swap at `keep`).
  void Place(const std::vector<size_t>& order, size_t keep, std::vector<size_t>& offset) {
    std::fill(slot_count_.begin(), slot_count_.end(), 0);
    placed_.clear();
    for (size_t p = 0; p < order.size(); ++p) {
      const size_t i = order[p];
      if (p >= keep) offset[i] = Lowest(i, offset);
      Insert(i);
    }
  }

 private:
  size_t Lowest(size_t i, const std::vector<size_t>& offset) {
    conflicts_.clear();
    const TensorLifetime& li = lifetimes_[i];
    if (indexed_) {
      ++stamp_;
      for (int64_t t = li.first_op; t <= li.last_op; ++t) {
        const size_t s = static_cast<size_t>(t - lo_);
        const size_t* slot = slots_.data() + slot_begin_[s];
        for (size_t k = 0; k < slot_count_[s]; ++k) {
          const size_t j = slot[k];
          if (seen_[j] != stamp_) {
            seen_[j] = stamp_;
            conflicts_.push_back(j);
          }
        }
      }
    } else {
      for (size_t j : placed_) {
        if (size_[j] > 0 && lifetimes_[j].Overlaps(li)) conflicts_.push_back(j);
      }
    }
    std::sort(conflicts_.begin(), conflicts_.end(),
              [&](size_t x, size_t y) { return offset[x] < offset[y]; });
    size_t candidate = 0;
    for (size_t j : conflicts_) {
      if (candidate + size_[i] <= offset[j]) break;
      candidate = std::max(candidate, RoundUp(offset[j] + size_[j], alignment_));
    }
    return candidate;
  }

  void Insert(size_t i) {
    if (!indexed_) {
      placed_.push_back(i);
      return;
    }
    if (size_[i] == 0) return;
    for (int64_t t = lifetimes_[i].first_op; t <= lifetimes_[i].last_op; ++t) {
      const size_t s = static_cast<size_t>(t - lo_);
      slots_[slot_begin_[s] + slot_count_[s]++] = i;
    }
  }

  const std::vector<TensorLifetime>& lifetimes_;
  const std::vector<size_t>& size_;
  size_t alignment_;
  bool indexed_ = false;
  int64_t lo_ = 0;
  std::vector<size_t> slot_begin_, slots_, slot_count_;  // steps' slots (indexed)
  std::vector<uint64_t> seen_;  // stamp of the last placement that collected tensor j
  uint64_t stamp_ = 0;
  std::vector<size_t> placed_, conflicts_;
};

std::vector<size_t> FirstGap(const std::vector<TensorLifetime>& lifetimes,
                             const std::vector<size_t>& order, const std::vector<size_t>& size,
                             size_t alignment) {
  std::vector<size_t> offset(lifetimes.size(), 0);
  GapFinder(lifetimes, size, alignment).Place(order, 0, offset);
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
  GapFinder finder(lifetimes, size, alignment);
  std::vector<size_t> best_offset(n, 0);
  finder.Place(order, 0, best_offset);
  size_t best = Peak(best_offset, size);
  std::vector<size_t> offset;
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
    // Placements before the first swapped position are unchanged: only the rest is searched.
    offset = best_offset;
    finder.Place(order, std::min(a, b), offset);
    const size_t peak = Peak(offset, size);
    if (peak > best) {
      std::swap(order[a], order[b]);
      ++stale;
      continue;
    }
    stale = peak < best ? 0 : stale + 1;
    best = peak;
    std::swap(best_offset, offset);
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
