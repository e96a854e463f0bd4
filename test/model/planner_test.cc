// Arena planner strategies: first fit is PlanArena's rule, TFLite Micro's greedy rounds sizes
// and breaks ties by tensor order; every strategy gives a conflict-free, aligned plan.
#include "mica/model/planner.h"

#include <vector>

#include "mica/model/builder.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

// True when no two tensors live at the same time share a byte of the arena.
bool NoConflicts(const std::vector<TensorLifetime>& lts, const ArenaPlan& plan) {
  for (size_t i = 0; i < lts.size(); ++i) {
    for (size_t j = i + 1; j < lts.size(); ++j) {
      if (!lts[i].Overlaps(lts[j]) || lts[i].bytes == 0 || lts[j].bytes == 0) continue;
      const ArenaAllocation& a = plan.allocations[i];
      const ArenaAllocation& c = plan.allocations[j];
      if (a.offset < c.offset + c.bytes && c.offset < a.offset + a.bytes) return false;
    }
  }
  return true;
}

// The lifetimes of a chain t0(100) -> t1(200) -> t2(50) -> t3(30), one op per arrow.
std::vector<TensorLifetime> Chain() {
  return {{0, 0, 0, 100}, {1, 0, 1, 200}, {2, 1, 2, 50}, {3, 2, 2, 30}};
}

TEST_CASE("Planner names") {
  CHECK(PlannerName(Planner::kFirstFit) == "first-fit");
  CHECK(PlannerName(Planner::kTflmGreedy) == "tflm-greedy");
}

TEST_CASE("First fit through the interface is PlanArena") {
  auto plan = PlanArena(Chain(), Planner::kFirstFit, ArenaOptions{16});
  REQUIRE(plan.ok());
  CHECK(plan->peak_bytes == 308);  // t1@0, t0@208 (offset rounded up), t2@208, t3@0
  CHECK(plan->allocations[0].offset == 208);
}

TEST_CASE("TFLite Micro greedy rounds every size up before placing") {
  // Aligned sizes 112, 208, 64, 32: t1@0, t0@208, t2@208, t3@0; peak 208 + 112.
  auto plan = PlanArena(Chain(), Planner::kTflmGreedy, ArenaOptions{16});
  REQUIRE(plan.ok());
  CHECK(plan->peak_bytes == 320);
  CHECK(plan->allocations[1].offset == 0);
  CHECK(plan->allocations[0].offset == 208);
  CHECK(plan->allocations[2].offset == 208);
  CHECK(plan->allocations[3].offset == 0);
  CHECK(plan->allocations[0].bytes == 100);  // the tensor's own size is reported
  // With alignment 1 both rules agree on this chain.
  auto one = PlanArena(Chain(), Planner::kTflmGreedy, ArenaOptions{1});
  REQUIRE(one.ok());
  CHECK(one->peak_bytes == 300);
}

TEST_CASE("Equal sizes: first fit prefers the earlier lifetime, TFLite Micro the lower tensor") {
  // t0 lives over ops 1-2, t1 over ops 0-1: they overlap at op 1.
  const std::vector<TensorLifetime> lts = {{0, 1, 2, 64}, {1, 0, 1, 64}};
  auto ff = PlanArena(lts, Planner::kFirstFit, ArenaOptions{1});
  auto tg = PlanArena(lts, Planner::kTflmGreedy, ArenaOptions{1});
  REQUIRE(ff.ok());
  REQUIRE(tg.ok());
  CHECK(ff->allocations[1].offset == 0);
  CHECK(ff->allocations[0].offset == 64);
  CHECK(tg->allocations[0].offset == 0);
  CHECK(tg->allocations[1].offset == 64);
  CHECK(ff->peak_bytes == 128);
  CHECK(tg->peak_bytes == 128);
}

TEST_CASE("Every planner gives aligned, conflict-free plans above the live lower bound") {
  const uint64_t seed = testing::TestSeed(20261201);
  CAPTURE(seed);
  SeededRng rng(seed);
  for (Planner planner : {Planner::kFirstFit, Planner::kTflmGreedy}) {
    CAPTURE(PlannerName(planner));
    for (int trial = 0; trial < 200; ++trial) {
      CAPTURE(trial);
      std::vector<TensorLifetime> lts;
      const int n = 1 + static_cast<int>(rng.Next() % 30);
      for (int i = 0; i < n; ++i) {
        const int32_t first = static_cast<int32_t>(rng.Next() % 20);
        const int32_t len = static_cast<int32_t>(rng.Next() % 6);
        lts.push_back(TensorLifetime{i, first, first + len, static_cast<size_t>(rng.Next() % 500)});
      }
      const size_t align = size_t{1} << (rng.Next() % 6);
      auto plan = PlanArena(lts, planner, ArenaOptions{align});
      REQUIRE(plan.ok());
      REQUIRE(plan->allocations.size() == lts.size());
      REQUIRE(NoConflicts(lts, *plan));
      for (const ArenaAllocation& a : plan->allocations) REQUIRE(a.offset % align == 0);
      REQUIRE(plan->peak_bytes >= PeakLiveBytes(lts));
      if (planner == Planner::kFirstFit) {
        auto direct = PlanArena(lts, ArenaOptions{align});
        REQUIRE(direct.ok());
        REQUIRE(direct->peak_bytes == plan->peak_bytes);
      }
    }
  }
}

TEST_CASE("Planners reject an alignment that is not a power of two") {
  CHECK_FALSE(PlanArena(Chain(), Planner::kFirstFit, ArenaOptions{3}).ok());
  CHECK_FALSE(PlanArena(Chain(), Planner::kTflmGreedy, ArenaOptions{0}).ok());
  CHECK_FALSE(PlanArena(Chain(), Planner::kTflmGreedy, ArenaOptions{12}).ok());
}

}  // namespace
}  // namespace mica
