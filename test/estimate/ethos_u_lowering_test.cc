// Operator lowerings of the Ethos-U estimator that follow Vela's per-layer tables (lower.cc):
// LSTM, SOFTMAX, CONCATENATION in place (NHWC at depth offsets that are not multiples of 16),
// RESIZE_BILINEAR, PRELU, shallow elementwise views, unfused and fused table lookups, slices
// read in place, depth multipliers (with Vela's transpose decomposition), U85 transpose
// convolutions as output phases (NHWC only when strided in width), grouped convolutions,
// reshapes that keep or break bricks, SPLIT as views, dilations above 2, the byte-based
// feature-map traffic of perf.cc, and the schedule-time slack of buffered weights.
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

// Vela's tables list 26 rows per step, 4 of them the LUT activations fused into the ADDs, and
// two state copies once.
TEST_CASE("lowering: an LSTM is Vela's 22 operations per time step", "[ethos_u]") {
  const Net n = LstmNet(5);
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  const std::vector<std::string> names = Names(r.lw, 0);
  REQUIRE(names.size() == 5 * 22 + 2);
  // The first step: h copied in place; per gate (output, input, cell, forget) 2 FC + ADD
  // (+ clamp for the sigmoid gates, + MUL after the cell gate); the cell update: c copied in
  // place (first step only), MUL, ADD, clamp, tanh, output MUL; h copied into the output row.
  const std::vector<std::string> step = {
      "Lstm/MemoryCopy",     "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Mul",            "Lstm/FullyConnected", "Lstm/FullyConnected", "Lstm/Add",
      "Lstm/Clamp",          "Lstm/MemoryCopy",     "Lstm/Mul",            "Lstm/Add",
      "Lstm/Clamp",          "Lstm/Tanh",           "Lstm/Mul",            "Lstm/MemoryCopy"};
  for (size_t k = 0; k < step.size(); ++k) CHECK(names[k] == step[k]);
  // Later steps: no state copy before the cell update.
  CHECK(names[step.size() + 16] == "Lstm/Mul");
  // The input FCs read the step's row of the input sequence in place (no copy); the output row
  // is written by the step's last copy, from h.
  const Subgraph& g = n.graph().main();
  const int32_t xin = r.lw.fmap_of_tensor[g.ops[0].inputs[0]];
  const int32_t yout = r.lw.fmap_of_tensor[g.ops[0].outputs[0]];
  CHECK(r.lw.ops[2].ifm.id == xin);
  CHECK(r.lw.ops[23].ofm.id == yout);
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

TEST_CASE("lowering: SOFTMAX works on elementwise views and adds a full-shape constant",
          "[ethos_u]") {
  const Run r = LowerAndCost(SoftmaxNet(32, 32, 4), Profile(EthosUFamily::kU55, 256));
  // The reduced elementwise steps see Vela's view of the 32 x 32 x 1 sums, 8 x 8 x 16: no
  // 16-deep padding of a depth-1 map.
  int reduced = 0;
  for (const NpuOp& op : r.lw.ops) {
    if (op.name == "Softmax/CLZ") {
      CHECK(op.ofm.shape.h == 8);
      CHECK(op.ofm.shape.w == 8);
      CHECK(op.ofm.shape.c == 16);
      ++reduced;
    }
  }
  CHECK(reduced == 1);
  // A transformer's [4, 16, 16] scores keep their shape (depth 16), their sums are [2, 2, 16].
  const Run t = LowerAndCost(SoftmaxNet(4, 16, 16), Profile(EthosUFamily::kU55, 256));
  for (const NpuOp& op : t.lw.ops) {
    if (op.name == "Softmax/CLZ") CHECK((op.ofm.shape.h == 2 && op.ofm.shape.w == 2));
    if (op.name == "Softmax/Asr") CHECK((op.ofm.shape.h == 4 && op.ofm.shape.c == 16));
  }
  // The ADD before the final shift adds a zero constant of the full shape (its IFM, 4 bytes
  // per element) read from the constants' memory to the product.
  const size_t n = r.lw.ops.size();
  REQUIRE(n >= 3);
  const NpuOp& add = r.lw.ops[n - 2];
  CHECK(add.name == "Softmax/Add");
  CHECK(add.has_ifm2);
  CHECK(add.ifm.id < 0);
  CHECK_FALSE(add.ifm.scalar);
  CHECK(add.ifm.shape.elements() == 32 * 32 * 4);
  CHECK(add.ifm2.id == r.lw.ops[n - 3].ofm.id);
  CHECK(r.costs[n - 2].bytes[static_cast<int>(r.ms.const_area)] >= 4.0 * 32 * 32 * 4);
  CHECK(r.lw.ops.back().name == "Softmax/Asr");
  // The final shift takes the shift computed from the CLZ (reduced map, broadcast over depth).
  const NpuOp& fin = r.lw.ops.back();
  CHECK(fin.has_ifm2);
  CHECK(fin.ifm2.shape.c == 1);
  CHECK(fin.ifm2.shape.elements() == 32 * 32);
  // Maps written in one view and read in another are stored NHWC: the exponentials (written
  // 32 x 32 x 4, shifted in the 16 x 16 x 16 view) and their sum (written 32 x 32 x 1, read
  // 8 x 8 x 16).
  for (const NpuOp& op : r.lw.ops) {
    if (op.name == "Softmax/ReduceSum") {
      CHECK(r.lw.fmaps[op.ifm.id].format == Format::kNhwc);
      CHECK(r.lw.fmaps[op.ofm.id].format == Format::kNhwc);
    }
  }
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
      CHECK(dw.ifm.shape.h == 9);
      CHECK(dw.ifm.shape.w == 7);
      CHECK(dw.kh == 2);
      CHECK(dw.kw == 2);
      CHECK(dw.acc32);
      CHECK(dw.macs == 4 * 15 * 11 * 32);
      CHECK(r.costs[k].total > 0);
    }
    // The padded map and the output the phases write every second element of are NHWC.
    CHECK(r.lw.fmaps[r.lw.ops[5].ifm.id].format == Format::kNhwc);
    CHECK(r.lw.fmaps[r.lw.ops[5].ofm.id].format == Format::kNhwc);
  }
  // U85 resizes natively: one operation at the output unit's rate, 16 x 12 x 32 elements of
  // 0.25 cycles on U85-256 (8-bit), or more when its one-row blocks wait on memory (the
  // default profile's IFM and OFM are in DRAM).
  const Run u85 = LowerAndCost(ResizeNet(8, 6, 32, DType::kInt8), Profile(EthosUFamily::kU85, 256));
  REQUIRE(u85.lw.ops.size() == 1);
  CHECK(u85.lw.ops[0].hw == HwOp::kElementwise);
  CHECK(u85.lw.ops[0].upscale == 2);
  CHECK(u85.costs[0].op_cycles >= 0.25 * 16 * 12 * 32);
  CHECK(u85.costs[0].op_cycles < 2 * 0.25 * 16 * 12 * 32);
  CHECK(u85.costs[0].block.ofm_block.h == 1);
  CHECK(u85.costs[0].block.ofm_block.w == 28);
  CHECK(u85.costs[0].block.ofm_block.c == 16);
}

TEST_CASE("lowering: a bilinear resize written into a depth concatenation costs its depth",
          "[ethos_u]") {
  // x [1, 6, 6, 64] -> RESIZE_BILINEAR x2 -> concatenated over depth with a [1, 12, 12, 48]
  // graph input -> 1x1 convolution: Vela sizes the four phases with the concatenation's 112
  // channels.
  Net n;
  const int32_t x = n.Tensor8("x", {1, 6, 6, 64});
  const int32_t u = n.Tensor8("u", {1, 12, 12, 64});
  const int32_t a = n.Tensor8("a", {1, 12, 12, 48});
  const int32_t y = n.Tensor8("y", {1, 12, 12, 112});
  ResizeAttrs ra;
  ra.half_pixel_centers = true;
  n.Op(OpKind::kResizeBilinear, ra, {x, n.Weights("size", {2}, 1, DType::kInt32)}, {u});
  ConcatenationAttrs ca;
  ca.axis = 3;
  n.Op(OpKind::kConcatenation, ca, {u, a}, {y});
  const int32_t z = n.Tensor8("z", {1, 12, 12, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{},
       {y, n.Weights("w", {16, 1, 1, 112}, 3), n.Bias("bias", 16)}, {z});
  n.Io({x, a}, {z});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU65, 256));
  int phases = 0;
  for (const NpuOp& op : r.lw.ops) {
    if (op.name != "ResizeBilinear/DepthwiseConv2D") continue;
    ++phases;
    CHECK(op.ofm.shape.c == 112);
    CHECK(op.ifm.shape.c == 64);
    CHECK(op.scale_bytes == 10 * 112);
    CHECK(op.macs == 4 * 11 * 11 * 112);
  }
  CHECK(phases == 4);
}

TEST_CASE("lowering: a CONV_2D of under 8 channels runs its activation on its own",
          "[ethos_u]") {
  // Vela 5.2: a 16 x 16 x 4 convolution with ReLU is a Conv2D and a Relu operation (the
  // latter in the elementwise view, 8 x 8 x 16: 864 cycles on U55-256); 8 channels and more
  // keep the activation fused.
  for (int32_t cout : {4, 8}) {
    const Net n = ConvNet(18, 18, 8, cout, 3, Activation::kRelu, 7);
    const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
    if (cout < 8) {
      REQUIRE(r.lw.ops.size() == 2);
      CHECK(r.lw.ops[0].act == Act::kNone);
      CHECK(r.lw.ops[1].name == "Conv2D/Activation");
      CHECK(r.lw.ops[1].act == Act::kRelu);
      CHECK(r.lw.ops[1].ofm.shape.c == 16);  // the elementwise view of 16 x 16 x 4
      // The convolution's result, read back in that view, is stored NHWC.
      CHECK(r.lw.fmaps[r.lw.ops[0].ofm.id].format == Format::kNhwc);
    } else {
      REQUIRE(r.lw.ops.size() == 1);
      CHECK(r.lw.ops[0].act == Act::kRelu);
    }
  }
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

TEST_CASE("lowering: a shallow elementwise op runs in Vela's refactored view", "[ethos_u]") {
  const Run r = LowerAndCost(AddNet(64, 64, 1), Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 1);
  const NpuOp& op = r.lw.ops[0];
  // 4096 elements: depth 16 from the prime factors, the rest 256 split as 16 x 16.
  for (const FmRef* f : {&op.ofm, &op.ifm, &op.ifm2}) {
    CHECK(f->shape.h == 16);
    CHECK(f->shape.w == 16);
    CHECK(f->shape.c == 16);
  }
  // Full bursts: the SRAM sees the 3 x 4096 bytes moved (read as depth 1, each 8-byte read
  // would cost a 32-byte burst: 4x on the reads).
  CHECK(r.costs[0].bytes[static_cast<int>(MemoryArea::kSram)] <= 1.05 * 3 * 4096);
  // Vela's verbose schedules for single-operation models: 60 elements -> [1, 1, 60];
  // [1, 10, 10, 3] -> [5, 1, 60]; [1, 12, 9, 2] -> [3, 3, 24]; [1, 5, 5, 7] -> [7, 1, 25];
  // [1, 540, 4] (rank 3) -> [15, 9, 16].
  struct Case {
    int32_t h, w, c, vh, vw, vc;
  };
  for (const Case& k : {Case{6, 10, 1, 1, 1, 60}, Case{10, 10, 3, 5, 1, 60},
                        Case{12, 9, 2, 3, 3, 24}, Case{5, 5, 7, 7, 1, 25},
                        Case{1, 540, 4, 15, 9, 16}}) {
    const Run v = LowerAndCost(AddNet(k.h, k.w, k.c), Profile(EthosUFamily::kU55, 256));
    CHECK(v.lw.ops[0].ofm.shape.h == k.vh);
    CHECK(v.lw.ops[0].ofm.shape.w == k.vw);
    CHECK(v.lw.ops[0].ofm.shape.c == k.vc);
  }
  // Depth 8 and more keeps its shape.
  const Run d = LowerAndCost(AddNet(7, 7, 20), Profile(EthosUFamily::kU55, 256));
  CHECK(d.lw.ops[0].ofm.shape.h == 7);
  CHECK(d.lw.ops[0].ofm.shape.c == 20);
}

// x [1, 48, 48, 16] -> conv -> c; LOGISTIC(c) and c * LOGISTIC(c) (SiLU: the conv output has
// two readers, so the sigmoid cannot be fused into it).
Net SiluNet() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 48, 48, 16});
  const int32_t c = n.Tensor8("c", {1, 48, 48, 16});
  const int32_t s = n.Tensor8("s", {1, 48, 48, 16});
  const int32_t y = n.Tensor8("y", {1, 48, 48, 16});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w", {16, 1, 1, 16}, 3), n.Bias("b", 16)},
       {c});
  n.Op(OpKind::kLogistic, std::monostate{}, {c}, {s});
  n.Op(OpKind::kMul, ElementwiseAttrs{}, {c, s}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("cost: an unfused sigmoid costs its own rate, not the activation unit's LUT rate",
          "[ethos_u]") {
  const Run r = LowerAndCost(SiluNet(), Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 3);
  const NpuOp& lut = r.lw.ops[1];
  CHECK(lut.lut_op);
  CHECK(lut.needs_lut);
  // Vela 5.2: 18624 cycles for this 48 x 48 x 16 sigmoid on U55-256 (0.5 per element, the
  // pooling rate); act[0] would make it 1.0 per element.
  CHECK(r.costs[1].op_cycles < 0.55 * 48 * 48 * 16);
  CHECK(r.costs[1].op_cycles > 0.45 * 48 * 48 * 16);
}

TEST_CASE("lowering: U55/U65 broadcast one operand of a doubly broadcast MUL by an ADD first",
          "[ethos_u]") {
  // [1, 16, 1] x [64] -> [1, 16, 64] (a layer norm's rsqrt times gamma).
  Net n;
  const int32_t a = n.Tensor8("a", {1, 16, 1});
  const int32_t y = n.Tensor8("y", {1, 16, 64});
  n.Op(OpKind::kMul, ElementwiseAttrs{}, {a, n.Weights("gamma", {64}, 5)}, {y});
  n.Io({a}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 2);
  CHECK(r.lw.ops[0].ew == EwKind::kAdd);
  CHECK(r.lw.ops[0].ofm.shape.elements() == 16 * 64);
  CHECK(r.lw.ops[1].ew == EwKind::kMul);
  CHECK(r.lw.ops[1].ifm.id == r.lw.ops[0].ofm.id);
  // Vela (U55-256): 0.75 cycles per element for the ADD, its full-shape constant from flash.
  CHECK(r.costs[0].op_cycles == 768);
  CHECK(r.costs[0].bytes[static_cast<int>(r.ms.const_area)] >= 1024);
  const Run u85 = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
  CHECK(u85.lw.ops.size() == 1);
}

TEST_CASE("lowering: RSQRT and GELU fuse into their producer as table lookups", "[ethos_u]") {
  Net n;
  const int32_t a = n.Tensor8("a", {1, 16, 64});
  const int32_t b = n.Tensor8("b", {1, 16, 64});
  const int32_t s = n.Tensor8("s", {1, 16, 64});
  const int32_t y = n.Tensor8("y", {1, 16, 64});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {a, b}, {s});
  n.Op(OpKind::kRsqrt, std::monostate{}, {s}, {y});
  n.Io({a, b}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 1);
  CHECK(r.lw.ops[0].act == Act::kLut);
  CHECK(r.lw.ops[0].needs_lut);
  CHECK_FALSE(r.lw.ops[0].lut_op);
  CHECK(r.lw.ir_note[1].find("fused") != std::string::npos);
}

// x [1, 108, 8] -> three channel slices (unit strides) -> LOGISTIC / MUL by a scalar / ... ->
// CONCATENATION over depth at offsets 2 and 4 -> y (a YOLO head).
Net YoloHeadNet() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 6, 6, 24});
  const int32_t c = n.Tensor8("c", {1, 6, 6, 24});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w", {24, 1, 1, 24}, 3), n.Bias("b", 24)},
       {c});
  const int32_t r = n.Tensor8("r", {1, 108, 8});
  n.Op(OpKind::kReshape, std::monostate{}, {c, n.Ints("shape", {3}, {1, 108, 8})}, {r});
  std::vector<int32_t> parts;
  const int32_t begins[3] = {0, 2, 4}, sizes[3] = {2, 2, 4};
  for (int k = 0; k < 3; ++k) {
    const std::string i = std::to_string(k);
    const int32_t sl = n.Tensor8("slice" + i, {1, 108, sizes[k]});
    n.Op(OpKind::kStridedSlice, StridedSliceAttrs{},
         {r, n.Ints("begin" + i, {3}, {0, 0, begins[k]}),
          n.Ints("end" + i, {3}, {1, 108, begins[k] + sizes[k]}), n.Ints("strides" + i, {3}, {1, 1, 1})},
         {sl});
    const int32_t act = n.Tensor8("act" + i, {1, 108, sizes[k]});
    n.Op(OpKind::kLogistic, std::monostate{}, {sl}, {act});
    const int32_t m = n.Tensor8("mul" + i, {1, 108, sizes[k]});
    n.Op(OpKind::kMul, ElementwiseAttrs{}, {act, n.Weights("k" + i, {1}, 7)}, {m});
    parts.push_back(m);
  }
  const int32_t y = n.Tensor8("y", {1, 108, 8});
  ConcatenationAttrs ca;
  ca.axis = 2;
  n.Op(OpKind::kConcatenation, ca, parts, {y});
  const int32_t z = n.Tensor8("z", {1, 108, 8});
  n.Op(OpKind::kLogistic, std::monostate{}, {y}, {z});
  n.Io({x}, {z});
  return n;
}

TEST_CASE("lowering: slices are read in place; a concatenation at depth offsets 2 and 4 is NHWC",
          "[ethos_u]") {
  const Net n = YoloHeadNet();
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 64));
  const Subgraph& sg = n.graph().main();
  for (int32_t i = 0; i < static_cast<int32_t>(sg.ops.size()); ++i) {
    if (sg.ops[i].kind != OpKind::kStridedSlice) continue;
    CHECK(Names(r.lw, i).empty());  // no operation
    const int32_t f = r.lw.fmap_of_tensor[sg.ops[i].outputs[0]];
    REQUIRE(f >= 0);
    const int32_t in = r.lw.fmap_of_tensor[sg.ops[i].inputs[0]];
    REQUIRE(in >= 0);
    const int32_t root = r.lw.fmaps[in].alias_of >= 0 ? r.lw.fmaps[in].alias_of : in;
    CHECK(r.lw.fmaps[f].alias_of == root);  // the slice is a view of the input's storage
  }
  for (const NpuOp& op : r.lw.ops) {
    if (op.name != "LOGISTIC" && op.name != "MUL") continue;
    if (op.ofm.id == r.lw.fmap_of_tensor[sg.outputs[0]]) continue;
    // A window of the reshaped conv output, or a map written into the concatenation: the
    // op keeps its [1, 108, C] shape (no refactored view).
    CHECK(op.ofm.shape.w == 108);
  }
  // The MULs write their slices in place, NHWC (no 16-deep padding of a 2-deep map): a MUL of
  // 216 elements costs Vela's 324 cycles on U55-64, not 108 x 16 x 1.5.
  int muls = 0;
  for (size_t k = 0; k < r.lw.ops.size(); ++k) {
    const NpuOp& op = r.lw.ops[k];
    if (op.name != "MUL" || op.ofm.shape.c != 2) continue;
    ++muls;
    const FeatureMap& f = r.lw.fmaps[op.ofm.id];
    CHECK(f.format == Format::kNhwc);
    CHECK(r.costs[k].op_cycles == 324);
  }
  CHECK(muls == 2);
  const int32_t y = r.lw.fmap_of_tensor[sg.ops.back().inputs[0]];
  REQUIRE(y >= 0);
  CHECK(r.lw.fmaps[y].format == Format::kNhwc);
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

TEST_CASE("lowering: a graph input's QUANTIZE runs as rows of 16-deep bricks", "[ethos_u]") {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 64, 64, 3}, DType::kUInt8);
  const int32_t q = n.Tensor8("q", {1, 64, 64, 3});
  n.sg().tensors[x].quant.zero_point = {100};  // not the zero-point-only (no-op) case
  const int32_t y = n.Tensor8("y", {1, 62, 62, 8});
  n.Op(OpKind::kQuantize, std::monostate{}, {x}, {q});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {q, n.Weights("w", {8, 3, 3, 3}, 7), n.Bias("b", 8)},
       {y});
  n.Io({x}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 2);
  const NpuOp& rescale = r.lw.ops[0];
  CHECK(rescale.ofm.shape.h == 64);
  CHECK(rescale.ofm.shape.w == 64 * 3 / 16);
  CHECK(rescale.ofm.shape.c == 16);
  // The pooling rate of full 2 x 2 x 8 micro-blocks: about half a cycle per element.
  CHECK(r.costs[0].op_cycles < 0.6 * 64 * 64 * 3);
}

TEST_CASE("lowering: SQUARED_DIFFERENCE is copies into int32, rescales, SUB and MULs",
          "[ethos_u]") {
  for (bool rank3 : {true, false}) {
    Net n;
    const std::vector<int32_t> big = rank3 ? std::vector<int32_t>{1, 16, 64}
                                           : std::vector<int32_t>{1, 4, 16, 64};
    const std::vector<int32_t> small = rank3 ? std::vector<int32_t>{1, 16, 1}
                                             : std::vector<int32_t>{1, 4, 16, 1};
    const int32_t a = n.Tensor8("a", big);
    const int32_t m = n.Tensor8("m", small);
    const int32_t y = n.Tensor8("y", big);
    n.Op(OpKind::kSquaredDifference, std::monostate{}, {a, m}, {y});
    n.Io({a, m}, {y});
    const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
    std::vector<std::string> want = {"MemoryCopy", "Mul", "MemoryCopy", "Mul", "Sub", "Mul"};
    if (rank3) want.push_back("Add");  // the full-shape int32 constant of rank < 4 tensors
    want.push_back("Mul");
    REQUIRE(r.lw.ops.size() == want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      CHECK(r.lw.ops[k].name == "SquaredDifference/" + want[k]);
    }
    CHECK(r.lw.ops[0].ofm.bits == 32);              // copies widen to int32
    CHECK(r.lw.ops[0].ofm.shape.c == (rank3 ? 16 : 64));  // the depth-1 input, in depth
    CHECK(r.lw.ops.back().ofm.bits == 8);
  }
}

TEST_CASE("lowering: BATCH_MATMUL transposes B unless given transposed; U85 per batch",
          "[ethos_u]") {
  for (bool adj_y : {false, true}) {
    Net n;
    const int32_t a = n.Tensor8("a", {1, 4, 16, 8});
    const int32_t b = n.Tensor8("b", adj_y ? std::vector<int32_t>{1, 4, 12, 8}
                                           : std::vector<int32_t>{1, 4, 8, 12});
    const int32_t y = n.Tensor8("y", {1, 4, 16, 12});
    BatchMatMulAttrs at;
    at.adj_y = adj_y;
    n.Op(OpKind::kBatchMatMul, at, {a, b}, {y});
    n.Io({a, b}, {y});
    const Run u55 = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
    REQUIRE(u55.lw.ops.size() == (adj_y ? 1u : 2u));
    if (!adj_y) CHECK(u55.lw.ops[0].hw == HwOp::kTranspose);
    CHECK(u55.lw.ops.back().hw == HwOp::kMatMul);
    CHECK(u55.lw.ops.back().ifm.shape.c == 8);  // K
    const Run u85 = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
    int matmuls = 0;
    for (const NpuOp& op : u85.lw.ops) matmuls += op.hw == HwOp::kMatMul;
    CHECK(matmuls == 4);  // one per batch (head)
  }
}

TEST_CASE("lowering: a 1-D causal PAD before a convolution is hardware padding", "[ethos_u]") {
  // x [1, 32, 8] -> PAD (left 4) -> [1, 36, 8] -> EXPAND_DIMS -> [1, 1, 36, 8] -> CONV 1x3
  // dilation 2 -> [1, 1, 32, 8].
  Net n;
  const int32_t x = n.Tensor8("x", {1, 32, 8});
  const int32_t p = n.Tensor8("p", {1, 36, 8});
  const int32_t e = n.Tensor8("e", {1, 1, 36, 8});
  const int32_t y = n.Tensor8("y", {1, 1, 32, 8});
  const int32_t pads = n.Ints("pads", {3, 2}, {0, 0, 4, 0, 0, 0});
  const int32_t axis = n.Ints("axis", {1}, {1});
  n.Op(OpKind::kPad, std::monostate{}, {x, pads}, {p});
  n.Op(OpKind::kExpandDims, std::monostate{}, {p, axis}, {e});
  Conv2DAttrs ca;
  ca.dilation_w = 2;
  n.Op(OpKind::kConv2D, ca, {e, n.Weights("w", {8, 1, 3, 8}, 2), n.Bias("b", 8)}, {y});
  n.Io({x}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 1);  // the convolution only
  CHECK(r.lw.ops[0].hw == HwOp::kConvolution);
}

// x [1, 25, 5, 32] -> DEPTHWISE_CONV_2D 3x3 SAME, depth multiplier 2, ReLU -> y [1, 25, 5, 64].
Net DepthMultiplierNet() {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 25, 5, 32});
  const int32_t w = n.Weights("w", {1, 3, 3, 64}, 7);
  const int32_t b = n.Bias("b", 64);
  const int32_t y = n.Tensor8("y", {1, 25, 5, 64});
  DepthwiseConv2DAttrs a;
  a.padding = Padding::kSame;
  a.depth_multiplier = 2;
  a.activation = Activation::kRelu;
  n.Op(OpKind::kDepthwiseConv2D, a, {x, w, b}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("lowering: a depth multiplier is M depthwise convolutions and Vela's transposes",
          "[ethos_u]") {
  const Net n = DepthMultiplierNet();
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 9);
  for (int k = 0; k < 2; ++k) {
    const NpuOp& dw = r.lw.ops[k];
    CHECK(dw.hw == HwOp::kDepthwise);
    CHECK(dw.ifm.shape.c == 32);
    CHECK(dw.ofm.shape.c == 32);
    CHECK(dw.macs == 9 * 25 * 5 * 32);
    CHECK(dw.act == Act::kNone);
  }
  // [M, H, W, C] -> [H, W, C, M] by Vela's selection sort of axes, as its command stream for
  // this shape shows: seven 3-D transposes (IFM view -> OFM view).
  const Shape3 views[7][2] = {{{2, 25, 160}, {25, 2, 160}}, {{25, 2, 160}, {2, 25, 160}},
                              {{50, 5, 32}, {50, 32, 5}},   {{2, 800, 5}, {5, 800, 2}},
                              {{125, 32, 2}, {125, 2, 32}}, {{5, 25, 64}, {25, 5, 64}},
                              {{125, 2, 32}, {125, 32, 2}}};
  for (int k = 0; k < 7; ++k) {
    const NpuOp& t = r.lw.ops[2 + k];
    CHECK(t.hw == HwOp::kTranspose);
    CHECK(t.ifm.shape.h == views[k][0].h);
    CHECK(t.ifm.shape.w == views[k][0].w);
    CHECK(t.ifm.shape.c == views[k][0].c);
    CHECK(t.ofm.shape.h == views[k][1].h);
    CHECK(t.ofm.shape.w == views[k][1].w);
    CHECK(t.ofm.shape.c == views[k][1].c);
    if (k > 0) CHECK(t.ifm.id == r.lw.ops[1 + k].ofm.id);
  }
  // The activation runs in the last transpose, which writes the OFM.
  CHECK(r.lw.ops[8].act == Act::kRelu);
  CHECK(r.lw.ops[8].ofm.id == r.lw.fmap_of_tensor[n.graph().main().outputs[0]]);
  // Vela's per-layer cycles for these transposes on U55-256 (burst-limited NHWC reads and
  // writes): 2032 NPU cycles each, 4032 for the two with a 2-deep side.
  const double npu[7] = {2032, 2032, 2032, 4032, 4032, 2032, 2032};
  for (int k = 0; k < 7; ++k) CHECK(r.costs[2 + k].npu_cycles == npu[k]);
  // U85: the output unit writes the OFM in 16-byte bricks of depth; a transpose into depth 2
  // ([2, 800, 5] -> [5, 800, 2]) takes 8 times the time of its element count.
  const Run u85 = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
  REQUIRE(u85.lw.ops.size() == 9);
  CHECK(u85.costs[5].op_cycles >= 5 * 800 * 16 * u85.arch.ao_act[1]);
  CHECK(u85.costs[2].op_cycles < 2 * 25 * 160 * u85.arch.ao_act[1] * 1.5);
}

// x [1, 16, 16, 16] -> TRANSPOSE_CONV 3x3 stride 2 SAME (8 filters) -> y [1, 32, 32, 8], the
// second TRANSPOSE_CONV of the corpus model transpose_conv_s2_32.
Net TransposeConvNet(Activation act) {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 16, 16, 16});
  const int32_t shape = n.Ints("shape", {4}, {1, 32, 32, 8});
  const int32_t w = n.Weights("w", {8, 3, 3, 16}, 5);
  const int32_t b = n.Bias("b", 8);
  const int32_t y = n.Tensor8("y", {1, 32, 32, 8});
  TransposeConvAttrs a;
  a.padding = Padding::kSame;
  a.stride_h = a.stride_w = 2;
  a.activation = act;
  n.Op(OpKind::kTransposeConv, a, {shape, w, x, b}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("lowering: a U85 transpose convolution is one stride-1 convolution per output phase",
          "[ethos_u]") {
  const Net n = TransposeConvNet(Activation::kNone);
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
  REQUIRE(r.lw.ops.size() == 4);
  // Vela 5.2's command stream for this operator: phases (0,0), (0,1), (1,0), (1,1) with 2x2,
  // 2x1, 1x2 and 1x1 taps, each sized as the OFM area from its origin; its MAC counts.
  const int32_t taps[4][2] = {{2, 2}, {2, 1}, {1, 2}, {1, 1}};
  const int32_t area[4][2] = {{32, 32}, {32, 31}, {31, 32}, {31, 31}};
  const int64_t macs[4] = {524288, 253952, 253952, 123008};
  const int32_t y = r.lw.fmap_of_tensor[n.graph().main().outputs[0]];
  int64_t encoded = 0;
  for (int k = 0; k < 4; ++k) {
    const NpuOp& op = r.lw.ops[k];
    CHECK(op.hw == HwOp::kConvolution);
    CHECK(op.upscale == 1);
    CHECK((op.sh == 1 && op.sw == 1));
    CHECK(op.kh == taps[k][0]);
    CHECK(op.kw == taps[k][1]);
    CHECK(op.ofm.shape.h == area[k][0]);
    CHECK(op.ofm.shape.w == area[k][1]);
    CHECK(op.ofm.shape.c == 8);
    CHECK(op.ifm.shape.h == 16);
    CHECK(op.macs == macs[k]);
    CHECK(op.ofm.id == y);
    // The phase's own taps: the tensor's (ty0 + 2y, tx0 + 2x).
    CHECK(op.weight_view);
    CHECK(op.w_ty0 == k / 2);
    CHECK(op.w_tx0 == k % 2);
    CHECK(op.encoded_weight_bytes > 0);
    encoded += op.encoded_weight_bytes;
  }
  // Four sub-kernels of 4, 2, 2 and 1 taps: together no bigger than the 9-tap kernel's stream
  // plus a stream header each.
  CHECK(encoded < 3 * 8 * 9 * 16);
  CHECK(r.lw.fmaps[y].format == Format::kNhwc);  // written with strides
  // A fused activation runs afterwards from the phases' map into the OFM.
  const Net relu = TransposeConvNet(Activation::kRelu);
  const Run ra = LowerAndCost(relu, Profile(EthosUFamily::kU85, 256));
  REQUIRE(ra.lw.ops.size() == 5);
  const int32_t ya = ra.lw.fmap_of_tensor[relu.graph().main().outputs[0]];
  for (int k = 0; k < 4; ++k) CHECK(ra.lw.ops[k].ofm.id == ra.lw.ops[4].ifm.id);
  CHECK(ra.lw.ops[4].ofm.id == ya);
  CHECK(ra.lw.ops[4].act == Act::kRelu);
  CHECK(ra.lw.fmaps[ra.lw.ops[4].ifm.id].format == Format::kNhwc);
  // U55 keeps one convolution over the upscaled IFM.
  const Run u55 = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(u55.lw.ops.size() == 1);
  CHECK(u55.lw.ops[0].upscale == 2);
}

TEST_CASE("lowering: grouped convolution parts read NHWC slices and their own kernels",
          "[ethos_u]") {
  // x -> CONV_2D 1x1 -> t [1, 16, 16, 32] -> CONV_2D 3x3 stride 2, 4 groups of 8, ReLU -> y.
  Net n;
  const int32_t x = n.Tensor8("x", {1, 16, 16, 16});
  const int32_t t = n.Tensor8("t", {1, 16, 16, 32});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 32});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w0", {32, 1, 1, 16}, 3), n.Bias("b0", 32)},
       {t});
  Conv2DAttrs ga;
  ga.padding = Padding::kSame;
  ga.stride_h = ga.stride_w = 2;
  ga.activation = Activation::kRelu;
  const int32_t w = n.Weights("w", {32, 3, 3, 8}, 4);
  n.Op(OpKind::kConv2D, ga, {t, w, n.Bias("b", 32)}, {y});
  n.Io({x}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
  REQUIRE(r.lw.ops.size() == 6);
  const int32_t tf = r.lw.fmap_of_tensor[t];
  CHECK(r.lw.fmaps[tf].format == Format::kNhwc);
  for (int g = 0; g < 4; ++g) {
    const NpuOp& op = r.lw.ops[1 + g];
    CHECK(op.ifm.id == tf);
    CHECK(op.ifm.shape.c == 8);
    CHECK(op.ofm.shape.c == 8);
    CHECK(op.weight_tensor == w);
    CHECK(op.weight_view);
    CHECK(op.w_oc0 == 8 * g);
    CHECK(op.scale_bytes == 80);
    CHECK(op.encoded_weight_bytes > 0);
    CHECK(op.ofm.id == r.lw.ops[5].ifm.id);
  }
  CHECK(r.lw.fmaps[r.lw.ops[5].ifm.id].format == Format::kNhwc);
  CHECK(r.lw.ops[5].ofm.id == r.lw.fmap_of_tensor[y]);
  CHECK(r.lw.ops[5].act == Act::kRelu);
  // The weights count once in the original bytes.
  Lowered again = r.lw;
  const WeightTotals wt = EncodeWeights(n.graph().main(), r.arch, &again);
  CHECK(wt.original_bytes == 32 * 16 + 32 * 9 * 8);
}

TEST_CASE("lowering: a U85 transpose convolution strided in height only keeps bricks",
          "[ethos_u]") {
  // The 2x2 phases write every other column: NHWC (above). 2x1 phases write whole rows into
  // an NHCWB16 map, as in Vela 5.2's command stream (transpose_conv_s21_32x16, U85-2048).
  Net n;
  const int32_t x = n.Tensor8("x", {1, 16, 16, 16});
  const int32_t shape = n.Ints("shape", {4}, {1, 32, 16, 8});
  const int32_t y = n.Tensor8("y", {1, 32, 16, 8});
  const int32_t z = n.Tensor8("z", {1, 32, 16, 8});
  TransposeConvAttrs a;
  a.padding = Padding::kSame;
  a.stride_h = 2;
  a.stride_w = 1;
  n.Op(OpKind::kTransposeConv, a, {shape, n.Weights("w", {8, 3, 3, 16}, 5), x, n.Bias("b", 8)},
       {y});
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {y, n.Weights("w1", {8, 1, 1, 8}, 6), n.Bias("b1", 8)},
       {z});
  n.Io({x}, {z});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU85, 256));
  REQUIRE(r.lw.ops.size() == 3);  // two phases and the 1x1 convolution
  const int32_t fy = r.lw.fmap_of_tensor[y];
  CHECK(r.lw.ops[0].ofm.id == fy);
  CHECK(r.lw.ops[1].ofm.id == fy);
  CHECK(r.lw.fmaps[fy].format == Format::kNhcwb16);
}

TEST_CASE("lowering: a RESHAPE that moves the width to the height leaves its input NHWC",
          "[ethos_u]") {
  // A 1-D convolution's [1, 128, 16] output read by a pooling as [128, 1, 16]: bricks keep their
  // layout only for equal width and depth, so Vela stores the map NHWC
  // (audio_conv1d_pool_128x8_i16); a reshape that keeps both leaves it NHCWB16.
  for (const bool move_width : {true, false}) {
    Net n;
    const int32_t x = n.Tensor8("x", {1, 1, 128, 8});
    const int32_t t = n.Tensor8("t", {1, 1, 128, 16});
    const int32_t u = n.Tensor8("u", move_width ? std::vector<int32_t>{1, 128, 1, 16}
                                                : std::vector<int32_t>{1, 128, 16});
    const int32_t y = n.Tensor8("y", move_width ? std::vector<int32_t>{1, 64, 1, 16}
                                                : std::vector<int32_t>{1, 1, 64, 16});
    n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, n.Weights("w", {16, 1, 1, 8}, 7), n.Bias("b", 16)},
         {t});
    n.Op(OpKind::kReshape, ReshapeAttrs{}, {t}, {u});
    Pool2DAttrs pa;
    pa.filter_h = move_width ? 2 : 1;
    pa.filter_w = move_width ? 1 : 2;
    pa.stride_h = pa.filter_h;
    pa.stride_w = pa.filter_w;
    n.Op(OpKind::kMaxPool2D, pa, {u}, {y});
    n.Io({x}, {y});
    const Run r = LowerAndCost(n, Profile(EthosUFamily::kU65, 256));
    CAPTURE(move_width);
    const int32_t ft = r.lw.fmap_of_tensor[t];
    CHECK(r.lw.fmaps[ft].format == (move_width ? Format::kNhwc : Format::kNhcwb16));
  }
}

TEST_CASE("perf: a buffered op keeps the slack of the schedule before the maps move to SRAM",
          "[ethos_u]") {
  // x -> CONV_2D 1x1 16 -> 16 -> CONV_2D 1x1 16 -> 32 -> t -> grouped CONV_2D 3x3 (t NHWC).
  // On U65-256 (Dedicated_Sram) Vela schedules with the maps in DRAM: there the second
  // convolution writes t NHWC in 16-byte pieces (x8 on 128-byte DRAM bursts) and takes 17279
  // cycles, the first 4470. Both slacks stay when t moves to SRAM, so the second op's NPU
  // cycles are its weight DMA - 4470 + 17279: Vela 5.2 reports 13569 (weights of 976 bytes,
  // DMA 760), against about 3400 for the op alone.
  Net n;
  const int32_t x = n.Tensor8("x", {1, 16, 16, 16});
  const int32_t s = n.Tensor8("s", {1, 16, 16, 16});
  const int32_t t = n.Tensor8("t", {1, 16, 16, 32});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 32});
  Conv2DAttrs relu;
  relu.activation = Activation::kRelu;
  n.Op(OpKind::kConv2D, relu, {x, n.Weights("w0", {16, 1, 1, 16}, 3), n.Bias("b0", 16)}, {s});
  n.Op(OpKind::kConv2D, relu, {s, n.Weights("w1", {32, 1, 1, 16}, 4), n.Bias("b1", 32)}, {t});
  Conv2DAttrs ga = relu;
  ga.padding = Padding::kSame;
  ga.stride_h = ga.stride_w = 2;
  n.Op(OpKind::kConv2D, ga, {t, n.Weights("w", {32, 3, 3, 8}, 5), n.Bias("b", 32)}, {y});
  n.Io({x}, {y});
  absl::StatusOr<TargetProfile> p = FindTargetProfile("ethos-u65-256");
  REQUIRE(p.ok());
  absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), *p);
  REQUIRE(e.ok());
  REQUIRE(e->ops.size() == 3);
  CHECK(e->ops[1].compute_cycles == Approx(13569).epsilon(0.02));
  // U55 (Shared_Sram): the maps never move, the op costs what it costs.
  absl::StatusOr<Estimate> u55 = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU55, 256));
  REQUIRE(u55.ok());
  CHECK(u55->ops[1].compute_cycles < 5000);
}

TEST_CASE("lowering: a SPLIT runs no operation; its outputs are views of the input",
          "[ethos_u]") {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 8, 8, 32});
  const int32_t axis = n.Weights("axis", {1}, 1, DType::kInt32);
  const int32_t a = n.Tensor8("a", {1, 8, 8, 16});
  const int32_t b = n.Tensor8("b", {1, 8, 8, 16});
  const int32_t y = n.Tensor8("y", {1, 8, 8, 16});
  SplitAttrs sa;
  sa.num_splits = 2;
  n.Op(OpKind::kSplit, sa, {axis, x}, {a, b});
  n.Op(OpKind::kAdd, ElementwiseAttrs{}, {a, b}, {y});
  n.Io({x}, {y});
  const Run r = LowerAndCost(n, Profile(EthosUFamily::kU55, 256));
  REQUIRE(r.lw.ops.size() == 1);  // the ADD only
  CHECK(Names(r.lw, 0).empty());
  const int32_t fx = r.lw.fmap_of_tensor[x];
  CHECK(r.lw.fmaps[r.lw.fmap_of_tensor[a]].alias_of == fx);
  CHECK(r.lw.fmaps[r.lw.fmap_of_tensor[b]].alias_of == fx);
}

// x [1, 1, 64, 32] -> CONV_2D 1 x 3, dilation (1, d) -> y [1, 1, 64 - 2d, 32].
Net DilatedConvNet(int32_t d) {
  Net n;
  const int32_t x = n.Tensor8("x", {1, 1, 64, 32});
  const int32_t w = n.Weights("w", {32, 1, 3, 32}, 3);
  const int32_t b = n.Bias("b", 32);
  const int32_t y = n.Tensor8("y", {1, 1, 64 - 2 * d, 32});
  Conv2DAttrs a;
  a.dilation_w = d;
  n.Op(OpKind::kConv2D, a, {x, w, b}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("lowering: a dilation above 2 is a spread kernel with hardware dilation 1 or 2",
          "[ethos_u]") {
  struct Case {
    int32_t d, kw, dw;
  };
  // Vela's FixupDilationGT2: dilation 4 -> 5 taps at dilation 2, 8 -> 9 taps at 2, 3 -> 7
  // taps at 1; 2 stays native.
  for (const Case c : {Case{2, 3, 2}, Case{3, 7, 1}, Case{4, 5, 2}, Case{8, 9, 2}}) {
    const Run r = LowerAndCost(DilatedConvNet(c.d), Profile(EthosUFamily::kU55, 256));
    REQUIRE(r.lw.ops.size() == 1);
    const NpuOp& op = r.lw.ops[0];
    CHECK(op.kw == c.kw);
    CHECK(op.dw == c.dw);
    CHECK(op.kh == 1);
    CHECK(op.macs == int64_t{c.kw} * 32 * op.ofm.shape.elements());
  }
  // The zeros between the taps are encoded too: the spread kernel's stream is longer.
  const Run r2 = LowerAndCost(DilatedConvNet(2), Profile(EthosUFamily::kU55, 256));
  const Run r8 = LowerAndCost(DilatedConvNet(8), Profile(EthosUFamily::kU55, 256));
  CHECK(r8.lw.ops[0].encoded_weight_bytes > r2.lw.ops[0].encoded_weight_bytes);
}

TEST_CASE("lowering: a batched FULLY_CONNECTED runs its rows as an H x W map", "[ethos_u]") {
  // Vela 5.2 (probes, U55 and U85 alike): H = the largest divisor of the row count not above
  // its square root nor 16.
  const struct {
    int32_t rows, h, w;
  } cases[] = {{1, 1, 1}, {7, 1, 7}, {12, 3, 4}, {16, 4, 4}, {200, 10, 20}, {576, 16, 36},
               {900, 15, 60}, {1000, 10, 100}};
  for (const auto& c : cases) {
    const Net n = WeightedOpNet(OpKind::kFullyConnected, FullyConnectedAttrs{}, {1, c.rows, 32},
                                {8, 32}, {1, c.rows, 8}, 3);
    for (const char* profile : {"ethos-u55-256", "ethos-u85-256"}) {
      absl::StatusOr<TargetProfile> p = FindTargetProfile(profile);
      REQUIRE(p.ok());
      const Run r = LowerAndCost(n, *p);
      REQUIRE(r.lw.ops.size() == 1);
      CAPTURE(c.rows, profile);
      CHECK(r.lw.ops[0].ofm.shape.h == c.h);
      CHECK(r.lw.ops[0].ofm.shape.w == c.w);
      CHECK(r.lw.ops[0].ifm.shape.h == c.h);
      CHECK(r.lw.ops[0].ifm.shape.w == c.w);
      CHECK(r.lw.ops[0].ifm.shape.c == 32);
    }
  }
}

TEST_CASE("lowering: a CONV_2D with one channel per group is a depthwise convolution",
          "[ethos_u]") {
  // ConvNeXt's Conv2D(groups=C) 7x7: Vela 5.2's tables name it DepthwiseConv2D.
  const Net n = WeightedOpNet(OpKind::kConv2D, Conv2DAttrs{}, {1, 16, 16, 24}, {24, 7, 7, 1},
                              {1, 10, 10, 24}, 4);
  absl::StatusOr<TargetProfile> p = FindTargetProfile("ethos-u55-64");
  REQUIRE(p.ok());
  const Run r = LowerAndCost(n, *p);
  REQUIRE(r.lw.ops.size() == 1);
  CHECK(r.lw.ops[0].hw == HwOp::kDepthwise);
  CHECK(r.lw.ops[0].macs == int64_t{7} * 7 * 10 * 10 * 24);
  CHECK(r.lw.ops[0].encoded_weight_bytes > 0);
  CHECK(r.lw.ops[0].encoded_weight_bytes < 24 * 7 * 7 * 2);
}

TEST_CASE("lowering: a CONV_2D with a stride above 3 is one convolution per OFM element",
          "[ethos_u]") {
  // Vela 5.2 (probes, U55 and U85): stride 4 or 5 -> OFM H x W stride-1 convolutions over
  // kernel-sized windows with 1x1 OFMs.
  Conv2DAttrs a;
  a.stride_h = a.stride_w = 4;
  const Net n =
      WeightedOpNet(OpKind::kConv2D, a, {1, 32, 32, 3}, {24, 4, 4, 3}, {1, 8, 8, 24}, 4);
  for (const char* profile : {"ethos-u55-256", "ethos-u85-256"}) {
    absl::StatusOr<TargetProfile> p = FindTargetProfile(profile);
    REQUIRE(p.ok());
    const Run r = LowerAndCost(n, *p);
    CAPTURE(profile);
    REQUIRE(r.lw.ops.size() == 64);
    for (const NpuOp& op : r.lw.ops) {
      CHECK(op.sh == 1);
      CHECK(op.sw == 1);
      CHECK(op.ifm.shape.h == 4);
      CHECK(op.ifm.shape.w == 4);
      CHECK(op.ofm.shape.h == 1);
      CHECK(op.ofm.shape.w == 1);
      CHECK(op.ofm.shape.c == 24);
    }
  }
}

}  // namespace
}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
