// The Ethos-U estimator stage by stage (libestimate/src/ethos_u/stages.h): each stage's result
// on small hand-built graphs, and EstimateEthosU as the stages run in order.
#include "ethos_u/stages.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "estimate/ethos_u_net.h"
#include "ethos_u/model.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/target.h"
#include "testing/catch.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

// Everything up to (and including) lowering, for one graph and profile.
struct Lowering {
  Arch arch;
  MemSystem ms;
  Lowered lw;
};

Lowering LowerFor(const Net& n, const TargetProfile& p) {
  absl::StatusOr<Arch> arch = MakeArch(p.ethos_u.family, p.ethos_u.macs);
  REQUIRE(arch.ok());
  absl::StatusOr<Lowered> lw = Lower(n.graph(), p.ethos_u, *arch);
  REQUIRE(lw.ok());
  return Lowering{*arch, MakeMemSystem(p.ethos_u), *std::move(lw)};
}

// x -> CONV 3x3 (w) -> y -> CONV 3x3 (the same w) -> z: two NPU ops sharing one weight tensor.
Net TwoConvsSharingWeights() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 12, 12, 8});
  const int32_t w = n.Weights("w", {8, 3, 3, 8}, 21);
  const int32_t b = n.Bias("b", 8);
  const int32_t y = n.Tensor8("y", {1, 10, 10, 8});
  const int32_t z = n.Tensor8("z", {1, 8, 8, 8});
  Conv2DAttrs a;
  a.activation = Activation::kRelu;
  n.Op(OpKind::kConv2D, a, {x, w, b}, {y});
  n.Op(OpKind::kConv2D, a, {y, w, b}, {z});
  n.Io({x}, {z});
  return n;
}

// x -> CONV 1x1 -> y; y + s -> out (s a second graph input): the ADD can chain on U85.
Net ConvThenAdd() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 16});
  const int32_t s = n.Tensor8("s", {1, 8, 8, 16});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 16});
  const int32_t out = n.Tensor8("out", {1, 8, 8, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w", {16, 1, 1, 16}, 4), n.Bias("b", 16)},
       {y});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {y, s}, {out});
  n.Io({x, s}, {out});
  return n;
}

// x -> CONV -> y -> custom op (CPU) -> z -> CONV -> out.
Net CpuOpBetweenConvs() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 8});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 8});
  const int32_t z = n.Tensor8("z", {1, 8, 8, 8});
  const int32_t out = n.Tensor8("out", {1, 8, 8, 8});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w1", {8, 1, 1, 8}, 1), n.Bias("b1", 8)},
       {y});
  n.Op(OpKind::kOpaque, std::monostate{}, {y}, {z});
  n.sg().ops.back().opaque_name = "MyCustomOp";
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {z, n.Weights("w2", {8, 1, 1, 8}, 2), n.Bias("b2", 8)},
       {out});
  n.Io({x}, {out});
  return n;
}

// [0] CONV x -> y; [1] custom op (CPU) y -> z; [2] CONV x -> w (needs nothing from the CPU
// op); [3] ADD z + w -> out.
Net NpuWorkAfterCpuOp() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 8});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 8});
  const int32_t z = n.Tensor8("z", {1, 8, 8, 8});
  const int32_t w = n.Tensor8("w", {1, 8, 8, 8});
  const int32_t out = n.Tensor8("out", {1, 8, 8, 8});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w1", {8, 1, 1, 8}, 1), n.Bias("b1", 8)},
       {y});
  n.Op(OpKind::kOpaque, std::monostate{}, {y}, {z});
  n.sg().ops.back().opaque_name = "MyCustomOp";
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w2", {8, 1, 1, 8}, 2), n.Bias("b2", 8)},
       {w});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {z, w}, {out});
  n.Io({x}, {out});
  return n;
}

// x (1 x 32 x 32 x 16) -> CONV 3x3 -> a -> CONV 3x3 -> b -> CONV 3x3 -> out (same padding):
// 16 KiB feature maps, so an op's IFM and OFM need 32 KiB.
Net ThreeConvs32() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 32, 32, 16});
  const int32_t a = n.Tensor8("a", {1, 32, 32, 16});
  const int32_t b = n.Tensor8("b", {1, 32, 32, 16});
  const int32_t out = n.Tensor8("out", {1, 32, 32, 16});
  Conv2DAttrs c;
  c.padding = Padding::kSame;
  n.Op(OpKind::kConv2D, c, {x, n.Weights("w1", {16, 3, 3, 16}, 1), n.Bias("b1", 16)}, {a});
  n.Op(OpKind::kConv2D, c, {a, n.Weights("w2", {16, 3, 3, 16}, 2), n.Bias("b2", 16)}, {b});
  n.Op(OpKind::kConv2D, c, {b, n.Weights("w3", {16, 3, 3, 16}, 3), n.Bias("b3", 16)}, {out});
  n.Io({x}, {out});
  return n;
}

// U65 with a dedicated SRAM of `cache` bytes (0: unlimited).
TargetProfile DedicatedU65(int64_t cache) {
  TargetProfile p = Profile(EthosUFamily::kU65, 256);
  REQUIRE(SetVelaConfig(&p, "Ethos_U65_High_End", "Dedicated_Sram").ok());
  p.ethos_u.memory_mode.arena_cache_bytes = cache;
  return p;
}

TEST_CASE("stage lower: one NPU op per convolution, CPU reasons for the rest", "[ethos_u]") {
  Net n = CpuOpBetweenConvs();
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(l.lw.cpu_reasons.size() == 3);
  CHECK(l.lw.cpu_reasons[0].empty());
  CHECK(!l.lw.cpu_reasons[1].empty());
  CHECK(l.lw.cpu_reasons[2].empty());
  REQUIRE(l.lw.ops.size() == 2);
  CHECK(l.lw.ops[0].src_op == 0);
  CHECK(l.lw.ops[1].src_op == 2);
  CHECK(l.lw.ops[0].hw == HwOp::kConvolution);
}

TEST_CASE("stage weights: each weight tensor is encoded once", "[ethos_u]") {
  Net n = TwoConvsSharingWeights();
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(l.lw.ops.size() == 2);
  const WeightTotals w = EncodeWeights(n.sg(), l.arch, &l.lw);
  CHECK(w.original_bytes == 8 * 3 * 3 * 8);  // counted once, not per op
  CHECK(w.encoded_bytes > 0);
  CHECK(l.lw.ops[0].encoded_weight_bytes == w.encoded_bytes);
  CHECK(l.lw.ops[1].encoded_weight_bytes == w.encoded_bytes);
  CHECK(w.const_bytes == Align16(w.encoded_bytes) + Align16(l.lw.ops[0].scale_bytes));
  CHECK(l.lw.ops[0].scale_bytes == 8 * 10);
  CHECK_FALSE(l.lw.ops[0].sparse24);  // U55: no sparse format
  CHECK(Align16(1) == 16);
  CHECK(Align16(32) == 32);
}

TEST_CASE("stage schedule: one step per NPU op and per CPU op", "[ethos_u]") {
  Net n = CpuOpBetweenConvs();
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  CHECK(s.steps == 3);
  CHECK(s.step_of_npu == std::vector<int32_t>{0, 2});
  REQUIRE(s.cpu_fmaps.size() == 4);
  CHECK(s.cpu_fmaps[0].empty());
  CHECK(s.cpu_fmaps[1].size() == 2);  // the custom op reads y and writes z
  CHECK(s.cpu_fmaps[2].empty());
}

TEST_CASE("stage schedule: NPU work that is ready runs ahead of a CPU op", "[ethos_u]") {
  Net n = NpuWorkAfterCpuOp();
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
  // Depth first from the output, the ADD's last input first: CONV [2], then CONV [0] and the
  // CPU op it feeds.
  CHECK(RunOrder(n.sg(), l.lw) == std::vector<int32_t>{2, 0, 1, 3});
  REQUIRE(l.lw.ops.size() == 3);  // CONV, CONV, ADD
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  CHECK(s.steps == 4);
  CHECK(s.step_of_npu == std::vector<int32_t>{1, 0, 3});
  CHECK(s.cpu_step[2]);
  // Without a CPU op the file's order stands.
  Net m = TwoConvsSharingWeights();
  Lowering k = LowerFor(m, Profile(EthosUFamily::kU55, 256));
  CHECK(RunOrder(m.sg(), k.lw) == std::vector<int32_t>{0, 1});
}

// An unrolled recurrence as a converter may list it: [0] CONV x -> u1 and [1] CONV x -> u2
// (both steps' input projections) first, then [2] ADD u1 + s -> h1 and [3] ADD u2 + h1 -> out.
TEST_CASE("stage schedule: Vela's depth-first order runs a step's projection before the step",
          "[ethos_u]") {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 1, 1, 16});
  const int32_t s = n.Tensor8("s", {1, 1, 1, 16});
  const int32_t u1 = n.Tensor8("u1", {1, 1, 1, 16});
  const int32_t u2 = n.Tensor8("u2", {1, 1, 1, 16});
  const int32_t h1 = n.Tensor8("h1", {1, 1, 1, 16});
  const int32_t out = n.Tensor8("out", {1, 1, 1, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w1", {16, 1, 1, 16}, 1), n.Bias("b1", 16)},
       {u1});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w2", {16, 1, 1, 16}, 2), n.Bias("b2", 16)},
       {u2});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {u1, s}, {h1});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {u2, h1}, {out});
  n.Io({x, s}, {out});
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
  CHECK(RunOrder(n.sg(), l.lw) == std::vector<int32_t>{0, 2, 1, 3});
}

TEST_CASE("stage cascades: ops run in stripes when their maps would not fit the SRAM",
          "[ethos_u]") {
  Net n = ThreeConvs32();
  const int64_t limit = 24 * 1024;
  const TargetProfile p = DedicatedU65(limit);
  Lowering l = LowerFor(n, p);
  EncodeWeights(n.sg(), l.arch, &l.lw);
  Schedule s = ScheduleSteps(n.sg(), l.lw);
  REQUIRE(l.lw.ops.size() == 3);
  const std::vector<int32_t> rows = BuildCascades(n.sg(), p.ethos_u, l.ms, &s, &l.lw);
  // One cascade: the three ops share one time step.
  CHECK(s.steps == 1);
  CHECK(s.step_of_npu == std::vector<int32_t>{0, 0, 0});
  REQUIRE(rows.size() == 3);
  // Every op produces the same rows per stripe (stride 1), at most half the OFM.
  CHECK(rows[0] > 0);
  CHECK(rows[0] == rows[1]);
  CHECK(rows[1] == rows[2]);
  CHECK(rows[2] <= 16);
  // a and b are rolling buffers: room for a producer stripe and a consumer stripe (rows + 2
  // input rows of the 3x3 kernel), rounded to whole consumer stripes; 32 x 16 bytes a row.
  const int64_t in_rows = rows[1] + 2;
  const int64_t buf_rows = (rows[0] + in_rows + in_rows - 1) / in_rows * in_rows;
  for (int k : {1, 2}) {
    const FeatureMap& mid = l.lw.fmaps[RootFmap(l.lw, l.lw.ops[k].ifm.id)];
    CHECK(mid.rolling_bytes == buf_rows * 32 * 16);
  }
  CHECK(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ifm.id)].rolling_bytes == 0);  // graph input
  PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
  for (int k : {1, 2}) {
    CHECK(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[k].ifm.id)].area == MemoryArea::kSram);
  }
  // The whole estimate: SRAM within the cache; DRAM holds only the graph's input and output.
  absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), p);
  REQUIRE(e.ok());
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] > 0);
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] <= limit);
  CHECK(e->arena_bytes == 2 * 32 * 32 * 16);
}

TEST_CASE("stage cascades: none where the maps fit", "[ethos_u]") {
  Net n = ThreeConvs32();
  for (int64_t cache : {int64_t{0}, int64_t{48 * 1024}}) {
    const TargetProfile p = DedicatedU65(cache);
    Lowering l = LowerFor(n, p);
    EncodeWeights(n.sg(), l.arch, &l.lw);
    Schedule s = ScheduleSteps(n.sg(), l.lw);
    const std::vector<int32_t> rows = BuildCascades(n.sg(), p.ethos_u, l.ms, &s, &l.lw);
    CHECK(rows == std::vector<int32_t>{0, 0, 0});
    CHECK(s.steps == 3);
    for (const FeatureMap& fm : l.lw.fmaps) CHECK(fm.rolling_bytes == 0);
  }
  // Shared_Sram: the arena is the SRAM; never cascaded.
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  Lowering l = LowerFor(n, p);
  Schedule s = ScheduleSteps(n.sg(), l.lw);
  CHECK(BuildCascades(n.sg(), p.ethos_u, l.ms, &s, &l.lw) == std::vector<int32_t>{0, 0, 0});
}

TEST_CASE("stage cost: weight buffers only where they fit a limited SRAM", "[ethos_u]") {
  Net n = ThreeConvs32();
  for (int64_t cache : {int64_t{1024}, int64_t{4096}, int64_t{1 << 20}}) {
    const TargetProfile p = DedicatedU65(cache);
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), p);
    REQUIRE(e.ok());
    CAPTURE(cache);
    CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] <= cache);
  }
}

TEST_CASE("stage chain: U85 runs the ADD in the convolution's chain", "[ethos_u]") {
  Net n = ConvThenAdd();
  SECTION("U85") {
    Lowering l = LowerFor(n, Profile(EthosUFamily::kU85, 256));
    REQUIRE(l.lw.ops.size() == 2);
    const int32_t mid = RootFmap(l.lw, l.lw.ops[0].ofm.id);
    const int32_t add_out = l.lw.ops[1].ofm.id;
    ChainU85(l.arch, ScheduleSteps(n.sg(), l.lw), &l.lw);
    CHECK(l.lw.ops[1].chained_into == 0);
    CHECK(l.lw.ops[0].ofm.id == add_out);       // the head writes the chain's output
    CHECK(l.lw.fmaps[mid].bytes == 0);          // the intermediate is never stored
    CHECK(l.lw.ops[0].extra_reads.size() == 1);  // the ADD's other input streams in
    CHECK(l.lw.ops[0].chain_ao_extra > 0);
  }
  SECTION("U55 never chains") {
    Lowering l = LowerFor(n, Profile(EthosUFamily::kU55, 256));
    ChainU85(l.arch, ScheduleSteps(n.sg(), l.lw), &l.lw);
    for (const NpuOp& op : l.lw.ops) CHECK(op.chained_into == -1);
  }
}

TEST_CASE("stage placement: live ranges and areas of feature maps", "[ethos_u]") {
  Net n = TwoConvsSharingWeights();
  SECTION("Shared_Sram: everything in the SRAM arena") {
    const TargetProfile p = Profile(EthosUFamily::kU55, 256);
    Lowering l = LowerFor(n, p);
    const Schedule s = ScheduleSteps(n.sg(), l.lw);
    PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
    const FeatureMap& x = l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ifm.id)];
    const FeatureMap& y = l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ofm.id)];
    const FeatureMap& z = l.lw.fmaps[RootFmap(l.lw, l.lw.ops[1].ofm.id)];
    CHECK((x.first == 0 && x.last == 0));
    CHECK((y.first == 0 && y.last == 1));
    CHECK((z.first == 1 && z.last == 1));
    CHECK(x.area == MemoryArea::kSram);
    CHECK(y.area == MemoryArea::kSram);
    CHECK(z.area == MemoryArea::kSram);
  }
  SECTION("Dedicated_Sram: intermediates staged in SRAM, graph I/O in DRAM") {
    TargetProfile p = Profile(EthosUFamily::kU65, 256);
    REQUIRE(SetVelaConfig(&p, "Ethos_U65_High_End", "Dedicated_Sram").ok());
    Lowering l = LowerFor(n, p);
    const Schedule s = ScheduleSteps(n.sg(), l.lw);
    PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
    CHECK(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ifm.id)].area == MemoryArea::kDram);
    CHECK(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ofm.id)].area == MemoryArea::kSram);
    CHECK(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[1].ofm.id)].area == MemoryArea::kDram);
  }
}

TEST_CASE("stage placement: an ADD writes its OFM in place of an IFM it alone reads",
          "[ethos_u]") {
  // x -> CONV -> a; x -> CONV -> b; a + b -> c; CONV c -> out.
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 16});
  const int32_t a = n.Tensor8("a", {1, 8, 8, 16});
  const int32_t b = n.Tensor8("b", {1, 8, 8, 16});
  const int32_t c = n.Tensor8("c", {1, 8, 8, 16});
  const int32_t out = n.Tensor8("out", {1, 8, 8, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w1", {16, 1, 1, 16}, 1), n.Bias("b1", 16)},
       {a});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w2", {16, 1, 1, 16}, 2), n.Bias("b2", 16)},
       {b});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {a, b}, {c});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {c, n.Weights("w3", {16, 1, 1, 16}, 3), n.Bias("b3", 16)},
       {out});
  n.Io({x}, {out});
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  Lowering l = LowerFor(n, p);
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
  const int32_t fa = RootFmap(l.lw, l.lw.fmap_of_tensor[a]);
  const int32_t fb = RootFmap(l.lw, l.lw.fmap_of_tensor[b]);
  const int32_t fc = RootFmap(l.lw, l.lw.fmap_of_tensor[c]);
  CHECK(fc == fa);  // c takes a's storage: a is read by the ADD alone, the first IFM tried
  CHECK(fb != fa);
  // One range: a, then c (CONV b runs first: Vela's order visits the ADD's last input first).
  CHECK((l.lw.fmaps[fa].first == 1 && l.lw.fmaps[fa].last == 3));
  // The graph's input and output never share: x is read by two ops, out is a graph output.
  CHECK(RootFmap(l.lw, l.lw.fmap_of_tensor[x]) != fa);
  CHECK(RootFmap(l.lw, l.lw.fmap_of_tensor[out]) != fa);
}

TEST_CASE("stage blocks: a block per op, none for chained ops", "[ethos_u]") {
  Net n = ConvThenAdd();
  Lowering l = LowerFor(n, Profile(EthosUFamily::kU85, 256));
  ChainU85(l.arch, ScheduleSteps(n.sg(), l.lw), &l.lw);
  const std::vector<BlockConfig> blocks = ChooseBlocks(l.arch, l.lw);
  REQUIRE(blocks.size() == 2);
  const BlockConfig direct = FindBlockConfig(l.arch, l.lw.ops[0]);
  CHECK(blocks[0].ofm_block.elements() > 0);
  CHECK(blocks[0].ofm_block.h == direct.ofm_block.h);
  CHECK(blocks[0].ofm_block.w == direct.ofm_block.w);
  CHECK(blocks[0].ofm_block.c == direct.ofm_block.c);
  CHECK(blocks[1].ofm_block.elements() == 1);  // default: chained into op 0
}

TEST_CASE("stage cost: a CPU op between NPU ops resets the weight-prefetch slack", "[ethos_u]") {
  Net n = CpuOpBetweenConvs();
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  Lowering l = LowerFor(n, p);
  EncodeWeights(n.sg(), l.arch, &l.lw);
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
  const std::vector<BlockConfig> blocks = ChooseBlocks(l.arch, l.lw);
  const std::vector<OpCost> costs = CostOps(l.arch, l.ms, l.lw, s, blocks);
  REQUIRE(costs.size() == 2);
  const bool can_buffer = l.ms.const_area != l.ms.staging_area;
  for (int k = 0; k < 2; ++k) {
    // Both ops start with no slack: the first is first, the second follows the CPU op.
    const OpCost direct = CostOp(l.arch, l.ms, l.lw, k, blocks[k], 0.0, can_buffer);
    CHECK(costs[k].total == direct.total);
    CHECK(costs[k].npu_cycles == direct.npu_cycles);
    CHECK(costs[k].total > 0);
    CHECK(costs[k].total >= costs[k].op_cycles);
  }
}

TEST_CASE("stage arenas: first-fit peaks of SRAM and arena ranges", "[ethos_u]") {
  Net n = TwoConvsSharingWeights();
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  Lowering l = LowerFor(n, p);
  EncodeWeights(n.sg(), l.arch, &l.lw);
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
  const std::vector<OpCost> costs = CostOps(l.arch, l.ms, l.lw, s, ChooseBlocks(l.arch, l.lw));
  const ArenaPeaks peaks = PlanArenas(l.lw, s, costs);
  const int64_t x = Align16(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ifm.id)].bytes);
  const int64_t y = Align16(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[0].ofm.id)].bytes);
  const int64_t z = Align16(l.lw.fmaps[RootFmap(l.lw, l.lw.ops[1].ofm.id)].bytes);
  // Shared_Sram: no weight buffering; x dies before z is born, so z reuses x's place.
  CHECK_FALSE(costs[0].weights_buffered);
  CHECK(peaks.sram == std::max(x + y, y + z));
  CHECK(peaks.arena == 0);
}

TEST_CASE("stage totals: the per-op roll-up matches the costs", "[ethos_u]") {
  Net n = CpuOpBetweenConvs();
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  Lowering l = LowerFor(n, p);
  const WeightTotals w = EncodeWeights(n.sg(), l.arch, &l.lw);
  const Schedule s = ScheduleSteps(n.sg(), l.lw);
  PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
  const std::vector<OpCost> costs = CostOps(l.arch, l.ms, l.lw, s, ChooseBlocks(l.arch, l.lw));
  const ArenaPeaks peaks{1000, 0};
  const Estimate e = Totals(p, n.sg(), l.lw, l.ms, w, peaks, costs);
  CHECK(e.npu_ops == 2);
  CHECK(e.cpu_ops == 1);
  REQUIRE(e.ops.size() == 3);
  CHECK(e.ops[1].placement == Placement::kCpu);
  CHECK(e.ops[0].total_cycles == costs[0].total);
  CHECK(e.ops[2].total_cycles == costs[1].total);
  CHECK(e.total_cycles == costs[0].total + costs[1].total);
  CHECK(e.macs == 2 * 8 * 8 * 8 * 8);
  CHECK(e.arena_bytes == 1000);
  CHECK(e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] == 1000);
  CHECK(e.memory_used_bytes[static_cast<int>(l.ms.const_area)] == w.const_bytes);
  CHECK(e.weights_original_bytes == 2 * 8 * 8);
}

TEST_CASE("EstimateEthosU is the stages in order", "[ethos_u]") {
  for (EthosUFamily f : {EthosUFamily::kU55, EthosUFamily::kU85}) {
    Net n = ConvThenAdd();
    const TargetProfile p = Profile(f, 256);
    Lowering l = LowerFor(n, p);
    const WeightTotals w = EncodeWeights(n.sg(), l.arch, &l.lw);
    Schedule s = ScheduleSteps(n.sg(), l.lw);
    ChainU85(l.arch, s, &l.lw);
    BuildCascades(n.sg(), p.ethos_u, l.ms, &s, &l.lw);
    PlaceFeatureMaps(n.sg(), p.ethos_u, l.ms, s, &l.lw);
    const std::vector<OpCost> costs = CostOps(l.arch, l.ms, l.lw, s, ChooseBlocks(l.arch, l.lw));
    const Estimate staged = Totals(p, n.sg(), l.lw, l.ms, w, PlanArenas(l.lw, s, costs), costs);
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), p);
    REQUIRE(e.ok());
    CHECK(e->total_cycles == staged.total_cycles);
    CHECK(e->arena_bytes == staged.arena_bytes);
    CHECK(e->weights_encoded_bytes == staged.weights_encoded_bytes);
  }
}

}  // namespace
}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
