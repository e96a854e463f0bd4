// Ethos-U estimator unit tests on hand-built graphs: the worked example of
// ethos-u-performance-model.md section 11.2, placement reasons, configuration checks and
// monotonicity properties.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "estimate/ethos_u_net.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

TEST_CASE("ethos_u reproduces the worked example of the performance note", "[ethos_u]") {
  // Section 11.2: CONV_2D 1x1, IFM 1x64x64x16 int8 -> OFM 1x64x64x8, no activation, U55-256
  // with its default system (High_End_Embedded, Shared_Sram). Block 4x64x8 (16 blocks). The
  // note (Vela 5.1.0) charges the no-activation quirk (AO 1 cycle/output: 34 240 op cycles);
  // Vela 5.2.0 no longer does: out[7] = 0.25 cycles/output, 512 x 16 + 256 + 288 + 544 = 9 280
  // op cycles plus the un-hidden weight DMA max((enc + 80)/1 + 64, ...) on the first op, and
  // the op is SRAM-bound. Vela 5.2.0 on this graph (written by WriteTflite): 12 730 total,
  // 9 632 NPU cycles, SRAM-bound too.
  Net n = ConvNet(64, 64, 16, 8, 1, Activation::kNone, 7);
  absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU55, 256));
  REQUIRE(e.ok());
  REQUIRE(e->ops.size() == 1);
  const double enc = static_cast<double>(e->weights_encoded_bytes);
  CAPTURE(enc);
  CHECK(enc > 0);
  const double dma = enc + 80 + 64;
  CHECK(e->npu_cycles == Approx(9280 + dma).margin(0.5));
  const int sram = static_cast<int>(MemoryArea::kSram);
  const int flash = static_cast<int>(MemoryArea::kOffChipFlash);
  // SRAM: IFM 65 536 + OFM 32 768 + DMA'd weights written + 16 re-reads; 8 B/cycle.
  CHECK(e->access_cycles[sram] == Approx((65536 + 32768 + 17 * enc) / 8).margin(0.5));
  CHECK(e->total_cycles == Approx(e->access_cycles[sram]).margin(0.5));
  CHECK(e->total_cycles == Approx(12730).epsilon(0.03));
  CHECK(e->npu_cycles == Approx(9632).epsilon(0.03));
  // Flash: weights once + scales re-read per block (16 x 80 B); 1 B/cycle.
  CHECK(e->access_cycles[flash] == Approx(enc + 16 * 80).margin(0.5));
  CHECK(e->ops[0].bottleneck == Bottleneck::kSram);
  CHECK(e->macs == 64 * 64 * 16 * 8);
  CHECK(e->weights_original_bytes == 128);
  CHECK(e->npu_ops == 1);
  CHECK(e->cpu_ops == 0);
}

TEST_CASE("ethos_u charges no activation cost to operators without one (Vela 5.2)",
          "[ethos_u]") {
  // Vela 5.2.0 gives the same cycles with and without a fused ReLU here (12 730 both): the
  // output unit's cost is out[7] = 0.25 cycles/output either way.
  Net plain = ConvNet(64, 64, 16, 8, 1, Activation::kNone, 7);
  Net relu = ConvNet(64, 64, 16, 8, 1, Activation::kRelu, 7);
  const TargetProfile p = Profile(EthosUFamily::kU55, 256);
  absl::StatusOr<Estimate> a = EstimateEthosU(plain.graph(), p);
  absl::StatusOr<Estimate> b = EstimateEthosU(relu.graph(), p);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->npu_cycles == Approx(b->npu_cycles).margin(0.5));
  CHECK(a->total_cycles == Approx(b->total_cycles).margin(0.5));
}

TEST_CASE("ethos_u U85 streams both operands of a binary op through one channel (Vela 5.2)",
          "[ethos_u]") {
  // One ADD (1x64x64x8) and one MUL (1x48x48x16) of two graph inputs: every map lives in DRAM
  // (Dedicated_Sram) and the ops are bound by DRAM reads. Vela 5.2.0 on these graphs with
  // each profile's system config (our probes, not corpus models): the cycles are both
  // operands' bytes over the IFM-stream channel's latency-limited bandwidth (doc 6.4).
  struct Case {
    OpKind kind;
    int32_t h, w, c;
    const char* profile;
    double vela;
  };
  const Case cases[] = {
      {OpKind::kAdd, 64, 64, 8, "ethos-u85-128", 320000},
      {OpKind::kAdd, 64, 64, 8, "ethos-u85-256", 196923},
      {OpKind::kAdd, 64, 64, 8, "ethos-u85-512", 160000},
      {OpKind::kAdd, 64, 64, 8, "ethos-u85-1024", 80000},
      {OpKind::kMul, 48, 48, 16, "ethos-u85-128", 44999},
      {OpKind::kMul, 48, 48, 16, "ethos-u85-512", 22499},
      {OpKind::kMul, 48, 48, 16, "ethos-u85-2048", 11249},
  };
  for (const Case& c : cases) {
    Net n;
    const int32_t a = n.Tensor8("a", {1, c.h, c.w, c.c});
    const int32_t b = n.Tensor8("b", {1, c.h, c.w, c.c});
    const int32_t y = n.Tensor8("y", {1, c.h, c.w, c.c});
    n.Op(c.kind, ElementwiseAttrs{}, {a, b}, {y});
    n.Io({a, b}, {y});
    absl::StatusOr<TargetProfile> p = FindTargetProfile(c.profile);
    REQUIRE(p.ok());
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), *p);
    REQUIRE(e.ok());
    CAPTURE(c.profile, c.h, c.w, c.c);
    CHECK(e->total_cycles == Approx(c.vela).epsilon(0.001));
  }
}

TEST_CASE("ethos_u U85 uses 2:4 sparse weights only without a -128 weight (Vela 5.2)",
          "[ethos_u]") {
  // A 7x7 convolution of a 2-channel IFM: every group of four IFM channels is half padding,
  // so the weights satisfy 2:4 sparsity and Vela 5.2 encodes them sparse (half the MAC
  // cycles) -- unless one weight is -128, which its sparse format does not take (our probes:
  // the same graph with one weight set to -128 compiles dense, to -127 stays sparse).
  auto conv = [](int8_t special) {
    Net n;
    const int32_t x = n.Tensor8("ifm", {1, 16, 40, 2});
    std::vector<int8_t> w(16 * 7 * 7 * 2);
    std::mt19937 rng(5);
    for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(rng() % 255) - 127);
    w[5] = special;
    const int32_t wt = n.Int8Weights("w", {16, 7, 7, 2}, w);
    const int32_t b = n.Bias("b", 16);
    const int32_t y = n.Tensor8("ofm", {1, 10, 34, 16});
    n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, wt, b}, {y});
    n.Io({x}, {y});
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU85, 128));
    REQUIRE(e.ok());
    REQUIRE(e->ops.size() == 1);
    return e->ops[0].compute_cycles;
  };
  const double sparse = conv(-127);
  const double dense = conv(-128);
  CAPTURE(sparse, dense);
  CHECK(dense > 1.6 * sparse);
}

// Small hand-made U85 weight tensors and Vela 5.2.0's encoded size of each (its summary's
// total_npu_encoded_weights: the weight streams, without the scales, on the graphs
// "[.u85-weights-write]" writes; OFM depths of 16 or less, so Vela encodes the weights in one
// depth slice). The values mix zeros and small and large weights so that palettes, zero runs
// and several Golomb-Rice parameters all occur.
struct U85WeightCase {
  const char* name;
  OpKind kind;
  std::vector<int32_t> ifm, w_shape, ofm;
  int32_t stride;
  int32_t macs;
  int64_t vela;  // Vela 5.2.0's encoded weight bytes
};

std::vector<U85WeightCase> U85WeightCases() {
  constexpr OpKind kFc = OpKind::kFullyConnected, kConv = OpKind::kConv2D,
                   kDw = OpKind::kDepthwiseConv2D;
  return {
      // Depth-first (fully connected, 1x1), part-kernel (3x3, strided 5x5) and depthwise
      // traversals; one to four core streams; micro-blocks 8 to 64 deep.
      {"fc40x16", kFc, {1, 40}, {16, 40}, {1, 16}, 1, 256, 528},
      {"fc40x16", kFc, {1, 40}, {16, 40}, {1, 16}, 1, 2048, 736},
      {"conv3x3_c8_o16", kConv, {1, 12, 12, 8}, {16, 3, 3, 8}, {1, 10, 10, 16}, 1, 256, 960},
      {"conv3x3_c8_o16", kConv, {1, 12, 12, 8}, {16, 3, 3, 8}, {1, 10, 10, 16}, 1, 1024, 1072},
      {"conv5x5_s2_c24_o12", kConv, {1, 15, 15, 24}, {12, 5, 5, 24}, {1, 6, 6, 12}, 2, 512,
       5552},
      {"conv1x1_c80_o16", kConv, {1, 8, 8, 80}, {16, 1, 1, 80}, {1, 8, 8, 16}, 1, 128, 1008},
      {"dw3x3_c16", kDw, {1, 12, 12, 16}, {1, 3, 3, 16}, {1, 10, 10, 16}, 1, 256, 112},
      {"dw3x3_c16", kDw, {1, 12, 12, 16}, {1, 3, 3, 16}, {1, 10, 10, 16}, 1, 2048, 192},
      {"dw5x5_c12", kDw, {1, 12, 12, 12}, {1, 5, 5, 12}, {1, 8, 8, 12}, 1, 1024, 336},
      // A depth multiplier of 2: two depthwise parts, each with every second channel.
      {"dw3x3_m2_c8", kDw, {1, 12, 12, 8}, {1, 3, 3, 16}, {1, 10, 10, 16}, 1, 1024, 256},
      {"dw3x3_m2_c8", kDw, {1, 12, 12, 8}, {1, 3, 3, 16}, {1, 10, 10, 16}, 1, 256, 160},
  };
}

Net U85WeightNet(const U85WeightCase& c) {
  Net n;
  const int32_t x = n.Tensor8("ifm", c.ifm);
  int64_t count = 1;
  for (int32_t d : c.w_shape) count *= d;
  std::vector<int8_t> w(static_cast<size_t>(count));
  std::mt19937 rng(11);
  for (int8_t& v : w) {
    const uint32_t r = rng() % 16;
    v = static_cast<int8_t>(r < 6 ? 0 : r < 12 ? static_cast<int>(rng() % 9) - 4
                                               : static_cast<int>(rng() % 255) - 127);
  }
  const int32_t wt = n.Int8Weights("w", c.w_shape, w);
  const int32_t b = n.Bias("b", c.ofm.back());
  const int32_t y = n.Tensor8("ofm", c.ofm);
  OpAttrs attrs;
  if (c.kind == OpKind::kConv2D) {
    Conv2DAttrs a;
    a.stride_h = a.stride_w = c.stride;
    attrs = a;
  } else if (c.kind == OpKind::kDepthwiseConv2D) {
    DepthwiseConv2DAttrs a;
    a.stride_h = a.stride_w = c.stride;
    a.depth_multiplier = c.ofm.back() / c.ifm.back();
    attrs = a;
  } else {
    attrs = FullyConnectedAttrs{};
  }
  n.Op(c.kind, attrs, {x, wt, b}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("ethos_u U85 encodes small weight tensors to Vela's size (Vela 5.2)", "[ethos_u]") {
  for (const U85WeightCase& c : U85WeightCases()) {
    const Net n = U85WeightNet(c);
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU85, c.macs));
    REQUIRE(e.ok());
    CAPTURE(c.name, c.macs, e->weights_encoded_bytes);
    REQUIRE(e->npu_ops == 1);
    CHECK(e->weights_encoded_bytes == c.vela);
  }
}

// MEAN over H and W of 1 x h x w x c: Vela sums with a depthwise convolution by a kernel of
// ones that it makes itself (h x w taps, in 8x8 sub-kernels on U85).
Net U85MeanNet(int32_t h, int32_t w, int32_t c) {
  Net n;
  const int32_t x = n.Tensor8("ifm", {1, h, w, c});
  const int32_t axes = n.Ints("axes", {2}, {1, 2});
  const int32_t y = n.Tensor8("ofm", {1, 1, 1, c});
  n.Op(OpKind::kMean, ReduceAttrs{true}, {x, axes}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("ethos_u U85 encodes MEAN's kernel of ones to Vela's size (Vela 5.2)", "[ethos_u]") {
  // Vela 5.2.0's total_npu_encoded_weights on U85MeanNet(12, 12, 64) (written by the test
  // below): 12 x 12 taps in four sub-kernels of 8x8, 8x4, 4x8 and 4x4.
  const struct {
    int32_t macs;
    int64_t vela;
  } cases[] = {{256, 1376}, {1024, 2240}, {2048, 2240}};
  const Net n = U85MeanNet(12, 12, 64);
  for (const auto& c : cases) {
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU85, c.macs));
    REQUIRE(e.ok());
    CAPTURE(c.macs, e->weights_encoded_bytes);
    CHECK(e->weights_encoded_bytes == c.vela);
  }
}

// Writes the graphs of the tests above for Vela (MICA_U85_WEIGHTS_DIR, default /tmp).
TEST_CASE("ethos_u U85 weight-size graphs for Vela", "[.u85-weights-write]") {
  const char* dir = std::getenv("MICA_U85_WEIGHTS_DIR");
  std::vector<std::pair<std::string, Net>> nets;
  for (const U85WeightCase& c : U85WeightCases()) nets.emplace_back(c.name, U85WeightNet(c));
  nets.emplace_back("mean_12x12x64", U85MeanNet(12, 12, 64));
  for (const auto& [name, n] : nets) {
    absl::StatusOr<std::vector<uint8_t>> bytes = WriteTflite(n.graph());
    REQUIRE(bytes.ok());
    const std::string path = std::string(dir ? dir : "/tmp") + "/" + name + ".tflite";
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes->data()),
              static_cast<std::streamsize>(bytes->size()));
    REQUIRE(out.good());
  }
}

TEST_CASE("ethos_u places float and unsupported operators on the CPU with reasons",
          "[ethos_u]") {
  SECTION("float model") {
    Net n = ConvNet(8, 8, 4, 4, 3, Activation::kNone, 3, DType::kFloat32);
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU55, 128));
    REQUIRE(e.ok());
    REQUIRE(e->ops.size() == 1);
    CHECK(e->ops[0].placement == Placement::kCpu);
    REQUIRE(!e->ops[0].reasons.empty());
    CHECK(e->ops[0].reasons[0].find("float32") != std::string::npos);
    CHECK(e->ops[0].total_cycles == 0);
    CHECK(e->cpu_ops == 1);
    CHECK(e->npu_ops == 0);
  }
  SECTION("custom operator") {
    Net n;
    const int32_t x = n.Tensor8("x", {1, 4, 4, 4});
    const int32_t y = n.Tensor8("y", {1, 4, 4, 4});
    n.Op(OpKind::kOpaque, std::monostate{}, {x}, {y});
    n.sg().ops.back().opaque_name = "MyCustomOp";
    n.Io({x}, {y});
    const std::vector<std::string> r =
        EthosUCompatibility(n.graph(), 0, Profile(EthosUFamily::kU85, 256).ethos_u);
    REQUIRE(!r.empty());
    CHECK(r[0].find("MyCustomOp") != std::string::npos);
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU85, 256));
    REQUIRE(e.ok());
    CHECK(e->cpu_ops == 1);
  }
  SECTION("DIV is U85-only; depthwise stride 4 is U85-only") {
    Net n;
    const int32_t a = n.Tensor8("a", {1, 8, 8, 16});
    const int32_t b = n.Tensor8("b", {1, 8, 8, 16});
    const int32_t c = n.Tensor8("c", {1, 8, 8, 16});
    n.Op(OpKind::kDiv, ElementwiseAttrs{}, {a, b}, {c});
    const int32_t w = n.Weights("w", {1, 3, 3, 16}, 5);
    const int32_t bias = n.Bias("bias", 16);
    const int32_t d = n.Tensor8("d", {1, 2, 2, 16});
    DepthwiseConv2DAttrs dw;
    dw.stride_h = dw.stride_w = 4;
    dw.padding = Padding::kSame;
    n.Op(OpKind::kDepthwiseConv2D, dw, {c, w, bias}, {d});
    n.Io({a, b}, {d});
    const EthosUConfig u55 = Profile(EthosUFamily::kU55, 256).ethos_u;
    const EthosUConfig u85 = Profile(EthosUFamily::kU85, 256).ethos_u;
    CHECK(!EthosUCompatibility(n.graph(), 0, u55).empty());
    CHECK(EthosUCompatibility(n.graph(), 0, u85).empty());
    CHECK(!EthosUCompatibility(n.graph(), 1, u55).empty());
    CHECK(EthosUCompatibility(n.graph(), 1, u85).empty());
    absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU55, 256));
    REQUIRE(e.ok());
    CHECK(e->cpu_ops == 2);
    absl::StatusOr<Estimate> e85 = EstimateEthosU(n.graph(), Profile(EthosUFamily::kU85, 256));
    REQUIRE(e85.ok());
    CHECK(e85->npu_ops == 2);
    CHECK(e85->total_cycles > 0);
  }
  SECTION("SAME average pool with a kernel above 8x8") {
    Net n;
    const int32_t x = n.Tensor8("x", {1, 16, 16, 8});
    const int32_t y = n.Tensor8("y", {1, 16, 16, 8});
    Pool2DAttrs p;
    p.padding = Padding::kSame;
    p.filter_h = p.filter_w = 9;
    n.Op(OpKind::kAveragePool2D, p, {x}, {y});
    n.Io({x}, {y});
    CHECK(!EthosUCompatibility(n.graph(), 0, Profile(EthosUFamily::kU55, 64).ethos_u).empty());
  }
  SECTION("out-of-range op index") {
    Net n = ConvNet(8, 8, 4, 4, 3, Activation::kNone, 3);
    CHECK(!EthosUCompatibility(n.graph(), 5, Profile(EthosUFamily::kU55, 64).ethos_u).empty());
  }
}

TEST_CASE("ethos_u rejects bad configurations with errors", "[ethos_u]") {
  Net n = ConvNet(8, 8, 4, 4, 3, Activation::kRelu, 3);
  TargetProfile cpu;
  cpu.kind = TargetKind::kCortexM;
  CHECK(EstimateEthosU(n.graph(), cpu).status().code() == absl::StatusCode::kInvalidArgument);
  TargetProfile p = Profile(EthosUFamily::kU55, 256);
  p.ethos_u.macs = 100;
  CHECK(EstimateEthosU(n.graph(), p).status().code() == absl::StatusCode::kInvalidArgument);
  p = Profile(EthosUFamily::kU55, 256);
  absl::StatusOr<MemoryMode> ded = VelaMemoryMode("Dedicated_Sram");
  REQUIRE(ded.ok());
  p.ethos_u.memory_mode = *ded;  // feature maps on the flash port: invalid
  CHECK(EstimateEthosU(n.graph(), p).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(VelaSystemConfig("Ethos_U99").status().code() == absl::StatusCode::kNotFound);
  CHECK(VelaMemoryMode("Huge_Sram").status().code() == absl::StatusCode::kNotFound);
  CHECK(!DefaultEthosUConfig(EthosUFamily::kU65, 128).ok());
  Graph empty;
  CHECK(!EstimateEthosU(empty, Profile(EthosUFamily::kU55, 256)).ok());
}

TEST_CASE("ethos_u Vela system configs and memory modes", "[ethos_u]") {
  CHECK(VelaSystemConfigNames().size() == 11);
  CHECK(VelaMemoryModeNames().size() == 6);
  for (const std::string& name : VelaSystemConfigNames()) {
    absl::StatusOr<SystemConfig> s = VelaSystemConfig(name);
    REQUIRE(s.ok());
    CHECK(s->name == name);
  }
  absl::StatusOr<SystemConfig> mid = VelaSystemConfig("Ethos_U65_Mid_End");
  REQUIRE(mid.ok());
  CHECK(mid->core_clock_hz == 500e6);
  CHECK(mid->axi1.area == MemoryArea::kDram);
  CHECK(mid->axi1.clock_scale * mid->axi_width_bytes == Approx(7.5));  // B/cycle
  absl::StatusOr<SystemConfig> high = VelaSystemConfig("Ethos_U85_SYS_DRAM_High");
  REQUIRE(high.ok());
  CHECK(high->axi0.ports_used * high->axi0.clock_scale * high->axi_width_bytes == Approx(64));
  absl::StatusOr<MemoryMode> m = VelaMemoryMode("Dedicated_Sram_512KB");
  REQUIRE(m.ok());
  CHECK(m->arena_cache_bytes == 524288);
  CHECK(VelaDefaultSystemConfigName(EthosUFamily::kU65) == "Ethos_U65_Client_Server");
  CHECK(VelaDefaultMemoryModeName(EthosUFamily::kU55) == "Shared_Sram");
}

TEST_CASE("ethos_u Sram_Only puts constants in on-chip flash", "[ethos_u]") {
  Net n = ConvNet(16, 16, 16, 32, 3, Activation::kRelu, 11);
  TargetProfile p = Profile(EthosUFamily::kU55, 128);
  absl::StatusOr<MemoryMode> m = VelaMemoryMode("Sram_Only");
  REQUIRE(m.ok());
  p.ethos_u.memory_mode = *m;
  absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), p);
  REQUIRE(e.ok());
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kOnChipFlash)] > 0);
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kOffChipFlash)] == 0);
  CHECK(e->access_cycles[static_cast<int>(MemoryArea::kOffChipFlash)] == 0);
  // Feature maps: 16x16x16 input and 14x14x32 output live together in SRAM.
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] >= 16 * 16 * 16 + 14 * 14 * 32);
}

TEST_CASE("ethos_u properties: more MACs never fewer cycles; bigger NPU never slower",
          "[ethos_u][property]") {
  const uint64_t seed = testing::TestSeed(20261130);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 24; ++iter) {
    const int32_t h = 4 + static_cast<int32_t>(rng() % 28);
    const int32_t w = 4 + static_cast<int32_t>(rng() % 28);
    const int32_t cin = 8 * (1 + static_cast<int32_t>(rng() % 8));
    const int32_t cout = 8 * (1 + static_cast<int32_t>(rng() % 8));
    const int32_t k = (rng() % 2) ? 3 : 1;
    CAPTURE(iter, h, w, cin, cout, k);
    Net small = ConvNet(h + k - 1, w + k - 1, cin, cout, k, Activation::kRelu, 1);
    Net big = ConvNet(h + k - 1, w + k - 1, cin, 2 * cout, k, Activation::kRelu, 1);
    for (EthosUFamily f : {EthosUFamily::kU55, EthosUFamily::kU85}) {
      const int32_t macs = f == EthosUFamily::kU55 ? 128 : 256;
      absl::StatusOr<Estimate> a = EstimateEthosU(small.graph(), Profile(f, macs));
      absl::StatusOr<Estimate> b = EstimateEthosU(big.graph(), Profile(f, macs));
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      CAPTURE(static_cast<int>(f), a->npu_cycles, b->npu_cycles, a->total_cycles, b->total_cycles);
      CHECK(b->macs == 2 * a->macs);
      CHECK(b->npu_cycles >= a->npu_cycles);
      // Totals with DRAM-resident graph tensors (U85 default) can shrink when a bigger OFM
      // picks a block with fewer IFM re-reads, as in Vela's own model; check totals on U55.
      if (f == EthosUFamily::kU55) CHECK(b->total_cycles >= a->total_cycles);
    }
    // Compute-bound (SRAM only) convolution on U55: 32 >= 64 >= 128 >= 256 MACs in cycles.
    double prev = 1e300;
    for (int32_t macs : {32, 64, 128, 256}) {
      TargetProfile p = Profile(EthosUFamily::kU55, macs);
      absl::StatusOr<MemoryMode> m = VelaMemoryMode("Sram_Only");
      REQUIRE(m.ok());
      p.ethos_u.memory_mode = *m;
      absl::StatusOr<Estimate> e = EstimateEthosU(big.graph(), p);
      REQUIRE(e.ok());
      CAPTURE(macs, e->npu_cycles, prev);
      CHECK(e->npu_cycles <= prev * 1.02);
      prev = e->npu_cycles;
    }
  }
}

}  // namespace
}  // namespace estimate
}  // namespace mica

namespace mica {
namespace estimate {
namespace {

TEST_CASE("ethos_u survives every operator kind with odd operands", "[ethos_u]") {
  const int last = static_cast<int>(OpKind::kUnidirectionalSequenceLstm);
  for (int k = 0; k <= last; ++k) {
    for (int variant = 0; variant < 3; ++variant) {
      Net n;
      const int32_t x = n.Tensor8("x", {1, 4, 4, 8});
      const int32_t w = n.Weights("w", {8, 1, 1, 8}, 3);
      const int32_t y = n.Tensor8("y", variant == 2 ? std::vector<int32_t>{1, 4, 4, 8, 2}
                                                    : std::vector<int32_t>{1, 4, 4, 8});
      std::vector<int32_t> in = {x};
      if (variant >= 1) in.push_back(w);
      n.Op(static_cast<OpKind>(k), std::monostate{}, in, {y});
      n.Io({x}, {y});
      CAPTURE(k, variant);
      for (EthosUFamily f : {EthosUFamily::kU55, EthosUFamily::kU85}) {
        absl::StatusOr<Estimate> e = EstimateEthosU(n.graph(), Profile(f, 256));
        if (e.ok()) CHECK(e->ops.size() == 1);
      }
    }
  }
}

}  // namespace
}  // namespace estimate
}  // namespace mica
