// Operator lowerings of the Ethos-U estimator that follow Vela's per-layer tables (lower.cc):
// LSTM, SOFTMAX, CONCATENATION in place, RESIZE_BILINEAR, PRELU, depth-1 elementwise, and the
// byte-based feature-map traffic of perf.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "estimate/ethos_u_net.h"
#include "ethos_u/model.h"
#include "ethos_u/stages.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/target.h"
#include "testing/catch.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

struct Run {
  Arch arch;
  MemSystem ms;
  Lowered lw;
  std::vector<OpCost> costs;
};

// Lowers `n` for `p` and costs every NPU op, as EstimateEthosU does.
Run LowerAndCost(const Net& n, const TargetProfile& p) {
  absl::StatusOr<Arch> arch = MakeArch(p.ethos_u.family, p.ethos_u.macs);
  REQUIRE(arch.ok());
  absl::StatusOr<Lowered> lw = Lower(n.graph(), p.ethos_u, *arch);
  REQUIRE(lw.ok());
  Run r{*arch, MakeMemSystem(p.ethos_u), *std::move(lw), {}};
  const Subgraph& sg = n.graph().main();
  EncodeWeights(sg, r.arch, &r.lw);
  const Schedule schedule = ScheduleSteps(sg, r.lw);
  ChainU85(r.arch, schedule, &r.lw);
  PlaceFeatureMaps(sg, p.ethos_u, r.ms, schedule, &r.lw);
  const std::vector<BlockConfig> blocks = ChooseBlocks(r.arch, r.lw);
  r.costs = CostOps(r.arch, r.ms, r.lw, schedule, blocks);
  return r;
}

std::vector<std::string> Names(const Lowered& lw, int32_t src) {
  std::vector<std::string> out;
  for (const NpuOp& op : lw.ops) {
    if (op.src_op == src) out.push_back(op.name);
  }
  return out;
}

// x [1, steps, 8] -> UNIDIRECTIONAL_SEQUENCE_LSTM (16 units) -> y [1, steps, 16].
Net LstmNet(int32_t steps) {
  Net n;
  const int32_t nin = 8, units = 16;
  const int32_t x = n.Tensor8("x", {1, steps, nin});
  std::vector<int32_t> in(24, kNoTensor);
  in[0] = x;
  for (int g = 0; g < 4; ++g) {
    in[1 + g] = n.Weights("wi" + std::to_string(g), {units, nin}, 10 + g);
    in[5 + g] = n.Weights("wr" + std::to_string(g), {units, units}, 20 + g);
    in[12 + g] = n.Bias("b" + std::to_string(g), units);
  }
  in[18] = n.Tensor8("h_state", {1, units});
  in[19] = n.Tensor8("c_state", {1, units}, DType::kInt16);
  const int32_t y = n.Tensor8("y", {1, steps, units});
  n.Op(OpKind::kUnidirectionalSequenceLstm, LstmAttrs{}, in, {y});
  n.Io({x}, {y});
  return n;
}

// Vela's tables list 27 rows per step, 4 of them the LUT activations fused into the ADDs.
TEST_CASE("lowering: an LSTM is Vela's 23 operations per time step", "[ethos_u]") {
  const Net n = LstmNet(5);
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  const std::vector<std::string> names = Names(r.lw, 0);
  REQUIRE(names.size() == 5 * 23);
  // One step: input copy; per gate 2 FC + ADD (+ clamp for the sigmoid gates, + MUL after the
  // cell gate); the cell update: copy, MUL, ADD, clamp, tanh, output MUL.
  const std::vector<std::string> step = {
      "Lstm/MemoryCopy",     "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Mul",            "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/MemoryCopy",     "Lstm/Mul",            "Lstm/Add",
      "Lstm/Clamp",          "Lstm/Tanh",           "Lstm/Mul"};
  for (size_t k = 0; k < step.size(); ++k) CHECK(names[k] == step[k]);
  // Every FC reads its weight tensor (encoded once, streamed every step).
  int fcs = 0;
  for (const NpuOp& op : r.lw.ops) {
    if (op.hw == HwOp::kVectorProduct) {
      ++fcs;
      CHECK(op.weight_tensor >= 0);
      CHECK(op.encoded_weight_bytes > 0);
    }
  }
  CHECK(fcs == 5 * 8);
  // The state tensors are persistent: stored like graph tensors (arena memory, NHWC).
  const Subgraph& sg = n.graph().main();
  for (int k : {18, 19}) {
    const int32_t f = r.lw.fmap_of_tensor[sg.ops[0].inputs[k]];
    REQUIRE(f >= 0);
    CHECK(r.lw.fmaps[f].graph_io);
  }
  // More steps, proportionally more cycles.
  const Run r10 = LowerAndCost(LstmNet(10), Profile(EthosUFamily::kU55, 256));
  double c5 = 0, c10 = 0;
  for (const OpCost& c : r.costs) c5 += c.total;
  for (const OpCost& c : r10.costs) c10 += c.total;
  CHECK(c10 > 1.8 * c5);
  CHECK(c10 < 2.2 * c5);
}

// x [1, h, w, c] -> SOFTMAX -> y.
Net SoftmaxNet(int32_t h, int32_t w, int32_t c) {
  Net n;
  const int32_t x = n.Tensor8("x", {1, h, w, c});
  const int32_t y = n.Tensor8("y", {1, h, w, c});
  n.Op(OpKind::kSoftmax, SoftmaxAttrs{}, {x}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("lowering: SOFTMAX works on flattened maps and adds a full-shape constant",
          "[ethos_u]") {
  const Run r = LowerAndCost(SoftmaxNet(32, 32, 4), Profile(EthosUFamily::kU55, 256));
  // The reduced elementwise steps see 1 x 1 x (H x W): no 16-deep padding of a depth-1 map.
  int reduced = 0;
  for (const NpuOp& op : r.lw.ops) {
    if (op.name == "Softmax/CLZ") {
      CHECK(op.ofm.shape.h == 1);
      CHECK(op.ofm.shape.w == 1);
      CHECK(op.ofm.shape.c == 32 * 32);
      ++reduced;
    }
  }
  CHECK(reduced == 1);
  // The rounding ADD before the final shift reads a constant of the full shape (4 bytes per
  // element) from the constants' memory.
  const size_t n = r.lw.ops.size();
  REQUIRE(n >= 3);
  const NpuOp& add = r.lw.ops[n - 2];
  CHECK(add.name == "Softmax/Add");
  CHECK(add.has_ifm2);
  CHECK(add.ifm2.id < 0);
  CHECK_FALSE(add.ifm2.scalar);
  CHECK(add.ifm2.shape.elements() == 32 * 32 * 4);
  CHECK(r.costs[n - 2].bytes[static_cast<int>(r.ms.const_area)] >= 4.0 * 32 * 32 * 4);
  CHECK(r.lw.ops.back().name == "Softmax/Asr");
  // A CLZ over 1024 elements costs about 1024 elements' worth, not 16 times as many.
  for (size_t k = 0; k < n; ++k) {
    if (r.lw.ops[k].name == "Softmax/CLZ") CHECK(r.costs[k].op_cycles < 2.0 * 1024);
  }
}

// a (graph input) and conv(b) -> CONCATENATION over depth -> conv -> z.
Net ConcatNet() {
  Net n;
  const int32_t a = n.Tensor8("a", {1, 8, 8, 16});
  const int32_t b = n.Tensor8("b", {1, 8, 8, 16});
  const int32_t c = n.Tensor8("c", {1, 8, 8, 16});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 32});
  const int32_t z = n.Tensor8("z", {1, 8, 8, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {b, n.Weights("w", {16, 1, 1, 16}, 3), n.Bias("bias", 16)},
       {c});
  ConcatenationAttrs ca;
  ca.axis = 3;
  n.Op(OpKind::kConcatenation, ca, {a, c}, {y});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {y, n.Weights("w2", {16, 1, 1, 32}, 4), n.Bias("b2", 16)},
       {z});
  n.Io({a, b}, {z});
  return n;
}

TEST_CASE("lowering: a concatenation input produced for it alone is written in place",
          "[ethos_u]") {
  const Run r = LowerAndCost(ConcatNet(), Profile(EthosUFamily::kU55, 256));
  const std::vector<std::string> names = Names(r.lw, 1);
  REQUIRE(names.size() == 2);
  // The graph input is copied into its slice; the convolution's output costs nothing more.
  CHECK(names[0] == "CONCATENATION/MemoryCopy");
  CHECK(names[1] == "CONCATENATION/InPlace");
  REQUIRE(r.lw.ops.size() == 4);  // conv, copy, in place, conv
  CHECK_FALSE(r.lw.ops[1].elided);
  CHECK(r.costs[1].total > 0);
  CHECK(r.lw.ops[2].elided);
  CHECK(r.costs[2].total == 0);
  // The in-place op passes the copy's slack on (nothing runs in between).
  CHECK(r.costs[2].slack_next == r.costs[1].slack_next);
  // It keeps the convolution's output live until the concatenation.
  const int32_t c = r.lw.fmap_of_tensor[2];
  REQUIRE(c >= 0);
  CHECK(r.lw.ops[2].ifm.id == c);
  CHECK(r.lw.fmaps[c].alias_of < 0);
}

// x [1, h, w, c] -> RESIZE_BILINEAR x2.
Net ResizeNet(int32_t h, int32_t w, int32_t c, DType t) {
  Net n;
  const int32_t x = n.Tensor8("x", {1, h, w, c}, t);
  const int32_t y = n.Tensor8("y", {1, 2 * h, 2 * w, c}, t);
  const int32_t size = n.Weights("size", {2}, 1, DType::kInt32);  // a constant (values unused)
  ResizeAttrs ra;
  ra.half_pixel_centers = true;
  n.Op(OpKind::kResizeBilinear, ra, {x, size}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("lowering: RESIZE_BILINEAR x2 is copies and four depthwise convolutions on U55/U65",
          "[ethos_u]") {
  for (DType t : {DType::kInt8, DType::kInt16}) {
    const Run r = LowerAndCost(ResizeNet(8, 6, 32, t), Profile(EthosUFamily::kU55, 128));
    REQUIRE(r.lw.ops.size() == 9);
    for (int k = 0; k < 5; ++k) CHECK(r.lw.ops[k].name == "ResizeBilinear/MemoryCopy");
    CHECK(r.lw.ops[0].ofm.shape.h == 8);  // the interior
    for (int k = 5; k < 9; ++k) {
      const NpuOp& dw = r.lw.ops[k];
      CHECK(dw.hw == HwOp::kDepthwise);
      CHECK(dw.ofm.shape.h == 15);
      CHECK(dw.ofm.shape.w == 11);
      CHECK(dw.kh == (t == DType::kInt16 ? 2 : 3));
      CHECK(r.costs[k].total > 0);
    }
  }
  // U85 resizes natively: one operation.
  const Run u85 = LowerAndCost(ResizeNet(8, 6, 32, DType::kInt8), Profile(EthosUFamily::kU85, 256));
  CHECK(u85.lw.ops.size() == 1);
}

TEST_CASE("lowering: PRELU is a rescale MUL, a MUL by alpha and a MAXIMUM", "[ethos_u]") {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 16});
  const int32_t al = n.Weights("alpha", {1, 1, 16}, 5);
  const int32_t y = n.Tensor8("y", {1, 8, 8, 16});
  n.Op(OpKind::kPrelu, std::monostate{}, {x, al}, {y});
  n.Io({x}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 128));
  REQUIRE(r.lw.ops.size() == 3);
  CHECK(r.lw.ops[0].ew == EwKind::kMul);
  CHECK(r.lw.ops[0].ifm2.scalar);
  CHECK(r.lw.ops[1].ew == EwKind::kMul);
  CHECK_FALSE(r.lw.ops[1].ifm2.scalar);
  CHECK(r.lw.ops[2].ew == EwKind::kMinMax);
  for (const NpuOp& op : r.lw.ops) CHECK(op.hw == HwOp::kElementwise);
}

// a + b of shape [1, h, w, c] (graph tensors, NHWC).
Net AddNet(int32_t h, int32_t w, int32_t c, DType t = DType::kInt8) {
  Net n;
  const int32_t a = n.Tensor8("a", {1, h, w, c}, t);
  const int32_t b = n.Tensor8("b", {1, h, w, c}, t);
  const int32_t y = n.Tensor8("y", {1, h, w, c}, t);
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {a, b}, {y});
  n.Io({a, b}, {y});
  return n;
}

TEST_CASE("lowering: a depth-1 elementwise op runs with H x W moved into depth", "[ethos_u]") {
  const Run r = LowerAndCost(AddNet(64, 64, 1), Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 1);
  const NpuOp& op = r.lw.ops[0];
  CHECK(op.ofm.shape.c == 64 * 64);
  CHECK(op.ifm.shape.c == 64 * 64);
  CHECK(op.ifm2.shape.c == 64 * 64);
  // Full-burst reads: the SRAM sees less than twice the 3 x 4096 bytes moved (read as depth 1,
  // each 8-byte read would cost a 32-byte burst: 4x on the reads).
  CHECK(r.costs[0].bytes[static_cast<int>(MemoryArea::kSram)] < 2.0 * 3 * 4096);
  // With depth, no change of view.
  const Run d = LowerAndCost(AddNet(8, 8, 16), Profile(EthosUFamily::kU55, 256));
  CHECK(d.lw.ops[0].ofm.shape.c == 16);
}

TEST_CASE("cost: feature-map traffic is in bytes for 16-bit maps on U55/U65 too", "[ethos_u]") {
  for (EthosUFamily f : {EthosUFamily::kU55, EthosUFamily::kU65}) {
    const Run r8 = LowerAndCost(AddNet(16, 16, 32, DType::kInt8), Profile(f, 256));
    const Run r16 = LowerAndCost(AddNet(16, 16, 32, DType::kInt16), Profile(f, 256));
    double b8 = 0, b16 = 0;
    for (double b : r8.costs[0].bytes) b8 += b;
    for (double b : r16.costs[0].bytes) b16 += b;
    // Counted in elements (Vela 5.1 on U55/U65), the 16-bit op would move no more than the
    // 8-bit one (whose NHWC write is burst-inflated where the 16-bit one's is not).
    CHECK(b8 > 0);
    CHECK(b16 >= 1.5 * b8);
  }
}

}  // namespace
}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
