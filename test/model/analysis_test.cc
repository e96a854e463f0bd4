// Analysis: hand-computed MACs and bytes, topological order, lifetimes and arena peaks.
#include "mica/model/analysis.h"

#include <algorithm>

#include "mica/model/builder.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

TEST_CASE("MACs and operand bytes of matrix operators are hand-computed values") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 8, 8, 3});
  Conv2DAttrs same;
  same.padding = Padding::kSame;
  const int32_t c = b.Conv2D(x, b.HeWeights("cw", {16, 3, 3, 3}), b.RandomBias("cb", 16), same);
  DepthwiseConv2DAttrs dwa;
  dwa.padding = Padding::kSame;
  dwa.stride_h = dwa.stride_w = 2;
  const int32_t d = b.DepthwiseConv2D(c, b.HeWeights("dw", {1, 3, 3, 16}, true), kNoTensor, dwa);
  const int32_t r = b.Reshape(d, {1, -1});
  const int32_t f = b.FullyConnected(r, b.HeWeights("fw", {10, 256}), b.RandomBias("fb", 10));
  const int32_t a = b.Add(f, f);
  // TRANSPOSE_CONV: output_shape, filter OHWI [3,3,3,8], input [1,4,4,8].
  const int32_t ti = b.Input("ti", {1, 4, 4, 8});
  const int32_t os = b.Int32Constant("os", {4}, {1, 8, 8, 3});
  TransposeConvAttrs ta;
  ta.padding = Padding::kSame;
  ta.stride_h = ta.stride_w = 2;
  b.AddOp(OpKind::kTransposeConv, ta, {os, b.HeWeights("tw", {3, 3, 3, 8}), ti});
  const int32_t m1 = b.Input("m1", {2, 3, 4});
  const int32_t m2 = b.Input("m2", {2, 4, 5});
  b.AddOp(OpKind::kBatchMatMul, BatchMatMulAttrs{}, {m1, m2});
  b.Output(a);
  auto g = b.Build();
  REQUIRE(g.ok());
  const GraphCost cost = AnalyzeCost(g->main());
  REQUIRE(cost.ops.size() == 7);
  CHECK(cost.ops[0].macs == 8 * 8 * 16 * 27);        // 27,648
  CHECK(cost.ops[0].weight_bytes == 16 * 27 * 4 + 16 * 4);
  CHECK(cost.ops[0].input_bytes == 8 * 8 * 3 * 4);
  CHECK(cost.ops[0].output_bytes == 8 * 8 * 16 * 4);
  CHECK(cost.ops[1].macs == 4 * 4 * 16 * 9);         // stride 2: 4x4 outputs
  CHECK(cost.ops[1].weight_bytes == 9 * 16 * 4);
  CHECK(cost.ops[2].macs == 0);                      // reshape
  CHECK(cost.ops[2].output_elements == 256);
  CHECK(cost.ops[2].weight_bytes == 8);              // the int32 [2] shape operand
  CHECK(cost.ops[3].macs == 10 * 256);
  CHECK(cost.ops[4].macs == 0);                      // add
  CHECK(cost.ops[4].output_elements == 10);
  CHECK(cost.ops[4].input_bytes == 80);
  CHECK(cost.ops[5].macs == 4 * 4 * 8 * 3 * 3 * 3);  // 3,456
  CHECK(cost.ops[6].macs == 2 * 3 * 5 * 4);          // 120
  CHECK(cost.total_macs == 27648 + 2304 + 2560 + 3456 + 120);
  const int64_t consts = (16 * 27 + 16 + 9 * 16 + 10 * 256 + 10 + 3 * 3 * 3 * 8) * 4 + 8 + 16;
  CHECK(cost.unique_constant_bytes == consts);
  CHECK(cost.total_weight_bytes == consts);
}

TEST_CASE("Grouped convolution MACs use the filter depth") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 4, 4, 8});
  const int32_t c = b.Conv2D(x, b.HeWeights("w", {8, 1, 1, 2}), kNoTensor, Conv2DAttrs{});
  b.Output(c);
  auto g = b.Build();
  REQUIRE(g.ok());
  CHECK(AnalyzeOp(g->main(), g->main().ops[0]).macs == 4 * 4 * 8 * 2);
}

// A hand-made subgraph: tensors with given byte sizes (int8 [n]) and ops as (inputs, outputs).
Subgraph MakeChain(const std::vector<int32_t>& sizes,
                   const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>& ops,
                   std::vector<int32_t> inputs, std::vector<int32_t> outputs) {
  Subgraph sg;
  for (size_t i = 0; i < sizes.size(); ++i) {
    Tensor t;
    t.name = "t" + std::to_string(i);
    t.dtype = DType::kInt8;
    t.shape = {sizes[i]};
    sg.tensors.push_back(t);
  }
  for (const auto& [in, out] : ops) {
    Operator op;
    op.kind = OpKind::kRelu;
    op.inputs = in;
    op.outputs = out;
    sg.ops.push_back(op);
  }
  sg.inputs = std::move(inputs);
  sg.outputs = std::move(outputs);
  return sg;
}

bool NoConflicts(const std::vector<TensorLifetime>& lts, const ArenaPlan& plan) {
  for (size_t i = 0; i < lts.size(); ++i) {
    for (size_t j = i + 1; j < lts.size(); ++j) {
      if (!lts[i].Overlaps(lts[j]) || lts[i].bytes == 0 || lts[j].bytes == 0) continue;
      const auto& a = plan.allocations[i];
      const auto& c = plan.allocations[j];
      if (a.offset < c.offset + c.bytes && c.offset < a.offset + a.bytes) return false;
    }
  }
  return true;
}

TEST_CASE("Lifetimes and arena of a chain") {
  // t0(100) -> op0 -> t1(200) -> op1 -> t2(50) -> op2 -> t3(30)
  const Subgraph sg = MakeChain({100, 200, 50, 30}, {{{0}, {1}}, {{1}, {2}}, {{2}, {3}}}, {0}, {3});
  const auto lts = ComputeLifetimes(sg);
  REQUIRE(lts.size() == 4);
  CHECK((lts[0].first_op == 0 && lts[0].last_op == 0));
  CHECK((lts[1].first_op == 0 && lts[1].last_op == 1));
  CHECK((lts[2].first_op == 1 && lts[2].last_op == 2));
  CHECK((lts[3].first_op == 2 && lts[3].last_op == 2));
  CHECK(PeakLiveBytes(lts) == 300);

  // Alignment 1: t1@0, t0@200, t2@200, t3@0 -> peak 300, the optimum (t0+t1 live at op0).
  auto p1 = PlanArena(sg, ArenaOptions{1});
  REQUIRE(p1.ok());
  CHECK(p1->peak_bytes == 300);
  CHECK(p1->allocations[1].offset == 0);
  CHECK(p1->allocations[0].offset == 200);
  CHECK(p1->allocations[2].offset == 200);
  CHECK(p1->allocations[3].offset == 0);
  // Alignment 16 rounds the second slot up to 208.
  auto p16 = PlanArena(sg);
  REQUIRE(p16.ok());
  CHECK(p16->alignment == 16);
  CHECK(p16->allocations[0].offset == 208);
  CHECK(p16->peak_bytes == 308);
}

TEST_CASE("Arena of a residual block keeps the skip tensor alive") {
  // x(64) -> op0 -> a(32) -> op1 -> b(32); op2: y(64) = add(b, x)
  const Subgraph sg =
      MakeChain({64, 32, 32, 64}, {{{0}, {1}}, {{1}, {2}}, {{2, 0}, {3}}}, {0}, {3});
  const auto lts = ComputeLifetimes(sg);
  CHECK((lts[0].first_op == 0 && lts[0].last_op == 2));
  CHECK(PeakLiveBytes(lts) == 160);  // x + b + y at op2
  auto plan = PlanArena(sg, ArenaOptions{1});
  REQUIRE(plan.ok());
  CHECK(plan->peak_bytes == 160);
  CHECK(plan->allocations[0].offset == 0);    // x (largest, first)
  CHECK(plan->allocations[3].offset == 64);   // y next to x
  CHECK(plan->allocations[1].offset == 64);   // a shares y's slot (a dies before y is born)
  CHECK(plan->allocations[2].offset == 128);  // b conflicts with x, a and y
  CHECK(NoConflicts(lts, *plan));
}

TEST_CASE("Graph outputs live to the end and unread tensors only at their producer") {
  // op0: t0 -> t1 (output, produced early); op1: t0 -> t2 (dead); op2: t0 -> t3 (output)
  const Subgraph sg =
      MakeChain({10, 20, 30, 40}, {{{0}, {1}}, {{0}, {2}}, {{0}, {3}}}, {0}, {1, 3});
  const auto lts = ComputeLifetimes(sg);
  CHECK((lts[1].first_op == 0 && lts[1].last_op == 2));
  CHECK((lts[2].first_op == 1 && lts[2].last_op == 1));
  CHECK((lts[0].first_op == 0 && lts[0].last_op == 2));
}

TEST_CASE("Arena planner never overlaps live tensors (random lifetimes)") {
  const uint64_t seed = testing::TestSeed(20261130);
  CAPTURE(seed);
  SeededRng rng(seed);
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
    auto plan = PlanArena(lts, ArenaOptions{align});
    REQUIRE(plan.ok());
    REQUIRE(NoConflicts(lts, *plan));
    size_t sum = 0;
    for (const auto& a : plan->allocations) {
      REQUIRE(a.offset % align == 0);
      sum += a.bytes + align;
    }
    REQUIRE(plan->peak_bytes >= PeakLiveBytes(lts));
    REQUIRE(plan->peak_bytes <= sum);
  }
  CHECK_FALSE(PlanArena(std::vector<TensorLifetime>{}, ArenaOptions{3}).ok());
}

TEST_CASE("Topological order and its check") {
  // Stored out of order: op0 reads t1 written by op1.
  Subgraph sg = MakeChain({4, 4, 4}, {{{1}, {2}}, {{0}, {1}}}, {0}, {2});
  const absl::Status bad = CheckTopologicalOrder(sg);
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.message()).find("operator 0") != std::string::npos);
  auto order = TopologicalOrder(sg);
  REQUIRE(order.ok());
  CHECK(*order == std::vector<int32_t>{1, 0});
  // Lifetimes follow the given order.
  const auto lts = ComputeLifetimes(sg, *order);
  CHECK((lts[1].first_op == 0 && lts[1].last_op == 1));

  // Already ordered graphs keep their order (lowest ready index first).
  Subgraph diamond =
      MakeChain({4, 4, 4, 4}, {{{0}, {1}}, {{0}, {2}}, {{1, 2}, {3}}}, {0}, {3});
  CHECK(CheckTopologicalOrder(diamond).ok());
  CHECK(*TopologicalOrder(diamond) == std::vector<int32_t>{0, 1, 2});

  Subgraph cycle = MakeChain({4, 4, 4}, {{{0, 2}, {1}}, {{1}, {2}}}, {0}, {2});
  auto c = TopologicalOrder(cycle);
  REQUIRE_FALSE(c.ok());
  CHECK(std::string(c.status().message()).find("cycle") != std::string::npos);

  Subgraph twice = MakeChain({4, 4}, {{{0}, {1}}, {{0}, {1}}}, {0}, {1});
  CHECK_FALSE(TopologicalOrder(twice).ok());
  Subgraph orphan = MakeChain({4, 4, 4}, {{{2}, {1}}}, {0}, {1});
  CHECK_FALSE(TopologicalOrder(orphan).ok());
  CHECK_FALSE(CheckTopologicalOrder(orphan).ok());
  Subgraph range = MakeChain({4}, {{{9}, {0}}}, {}, {0});
  CHECK_FALSE(TopologicalOrder(range).ok());
  CHECK_FALSE(PlanArena(range).ok());
}

TEST_CASE("Constants and variables are not in the arena") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 16});
  const int32_t y = b.FullyConnected(x, b.HeWeights("w", {4, 16}), b.RandomBias("b", 4));
  b.Output(y);
  auto g = b.Build();
  REQUIRE(g.ok());
  const auto lts = ComputeLifetimes(g->main());
  REQUIRE(lts.size() == 2);
  CHECK(lts[0].tensor == x);
  CHECK(lts[1].tensor == y);
  auto plan = PlanArena(g->main(), ArenaOptions{1});
  REQUIRE(plan.ok());
  CHECK(plan->peak_bytes == 64 + 16);
}

}  // namespace
}  // namespace mica
