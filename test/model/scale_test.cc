// Issue 16, section 5: graph passes must be linear in the operator count (a 100,000-op ONNX
// chain took 11 s in `inspect`: the arena planner scanned every placed tensor for each new
// one, and the lower bound summed every lifetime at every step). The assertion is on the
// growth, not on a figure: the process CPU time of loading, lifetimes and planning for a
// 100,000-op chain against a 25,000-op chain. Linear passes give a ratio near 4; one quadratic
// pass gives 16. The best of three runs of each size keeps noise out.
#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "mica/model/analysis.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"
#include "mica/model/planner.h"
#include "model/onnx_test_util.h"
#include "testing/catch.h"

namespace mica {
namespace {

using onnx_test::OnnxBuilder;

// x -> Relu -> Relu -> ... (`n` nodes) -> y.
OnnxBuilder OnnxChain(int n) {
  OnnxBuilder b(13);
  b.Input("x", {1, 4});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i + 1 == n ? "y" : "t" + std::to_string(i);
    b.Node(i % 2 ? "Relu" : "Neg", {prev}, {out}, "n" + std::to_string(i));
    prev = out;
  }
  b.Output("y");
  return b;
}

// Process CPU seconds of load + lifetimes + every planner but hill climbing (bounded by its
// own iteration cap) + the lower bound, for an `n`-op chain; the best of three.
double PassSeconds(int n, size_t* ops) {
  const auto bytes = OnnxChain(n).Bytes();
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    const std::clock_t start = std::clock();
    absl::StatusOr<Graph> g = LoadOnnx(bytes, "chain.onnx");
    REQUIRE(g.ok());
    const Subgraph& sg = g->main();
    *ops = sg.ops.size();
    const std::vector<TensorLifetime> lifetimes = ComputeLifetimes(sg);
    for (Planner p : {Planner::kFirstFit, Planner::kTflmGreedy}) {
      absl::StatusOr<ArenaPlan> plan = PlanArena(lifetimes, p, ArenaOptions{});
      REQUIRE(plan.ok());
      CHECK(plan->peak_bytes == 32);  // two 16-byte tensors live at any step
    }
    CHECK(PeakLiveBytes(lifetimes) == 32);
    best = std::min(best, static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return best;
}

TEST_CASE("scale: graph passes over a 100,000-op chain grow linearly") {
  size_t small_ops = 0, big_ops = 0;
  const double small = PassSeconds(25000, &small_ops);
  const double big = PassSeconds(100000, &big_ops);
  CHECK(small_ops == 25000);
  CHECK(big_ops == 100000);
  INFO("25,000 ops: " << small << " s, 100,000 ops: " << big << " s");
  CHECK(big < 10 * std::max(small, 0.01));
}

TEST_CASE("scale: a chain writes for the benchmark", "[.write-chain]") {
  const char* path = std::getenv("MICA_WRITE_CHAIN");
  REQUIRE(path != nullptr);
  const auto bytes = OnnxChain(100000).Bytes();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
}

}  // namespace
}  // namespace mica
