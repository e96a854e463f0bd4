// Hostile attribute values through every consumer of a graph (issue 16, section 2): huge
// convolution strides and dilations through the Ethos-U and Cortex-M estimators and the
// runtime's lowering, and int64 biases at the edge of their range through the 16x8
// requantization. Built with -DMICA_SANITIZE=address,undefined these prove the absence of
// signed overflow; in any build they prove a clear error or a sane estimate, never a crash.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ethos_u_net.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"

namespace mica {
namespace estimate {
namespace {

constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();

// One op with a window (conv, depthwise conv or pool) over a 1x8x8x4 IFM: SAME padding, so
// the declared 1x1 output is the right shape for any stride of 8 or more.
Net WindowNet(OpKind kind, int32_t stride, int32_t dilation) {
  Net n;
  const int32_t x = n.Tensor8("ifm", {1, 8, 8, 4});
  const int32_t y = n.Tensor8("ofm", {1, 1, 1, 4});
  if (kind == OpKind::kConv2D) {
    const int32_t w = n.Weights("w", {4, 3, 3, 4}, 7);
    Conv2DAttrs a;
    a.padding = Padding::kSame;
    a.stride_h = a.stride_w = stride;
    a.dilation_h = a.dilation_w = dilation;
    n.Op(kind, a, {x, w, n.Bias("b", 4)}, {y});
  } else if (kind == OpKind::kDepthwiseConv2D) {
    const int32_t w = n.Weights("w", {1, 3, 3, 4}, 7);
    DepthwiseConv2DAttrs a;
    a.padding = Padding::kSame;
    a.stride_h = a.stride_w = stride;
    a.dilation_h = a.dilation_w = dilation;
    n.Op(kind, a, {x, w, n.Bias("b", 4)}, {y});
  } else {
    Pool2DAttrs a;
    a.padding = Padding::kSame;
    a.stride_h = a.stride_w = stride;
    a.filter_h = a.filter_w = dilation;  // pools have no dilation: a huge window instead
    n.Op(kind, a, {x}, {y});
  }
  n.Io({x}, {y});
  return n;
}

// `n` estimated on the built-in profile `name`, which must accept it.
Estimate EstimateOn(const Net& n, const char* name) {
  absl::StatusOr<TargetProfile> p = FindTargetProfile(name);
  REQUIRE(p.ok());
  absl::StatusOr<Estimate> e = EstimateModel(n.graph(), *p);
  REQUIRE(e.ok());
  return *std::move(e);
}

// Whether the estimate's first operator carries a caveat naming `text`.
bool FirstOpCaveat(const Estimate& e, const char* text) {
  return !e.ops.empty() && !e.ops[0].notes.empty() &&
         e.ops[0].notes[0].find(text) != std::string::npos;
}

TEST_CASE("hostile: huge stride and dilation reach every estimator and the runtime safely") {
  const std::vector<int32_t> huge = {8, int32_t{1} << 20, int32_t{1} << 30, kInt32Max};
  for (OpKind kind : {OpKind::kConv2D, OpKind::kDepthwiseConv2D, OpKind::kMaxPool2D,
                      OpKind::kAveragePool2D}) {
    for (int32_t stride : huge) {
      for (int32_t dilation : {int32_t{1}, int32_t{1} << 30, kInt32Max}) {
        CAPTURE(static_cast<int>(kind), stride, dilation);
        Net n = WindowNet(kind, stride, dilation);
        for (const TargetProfile& p : BuiltinTargets()) {
          CAPTURE(p.name);
          absl::StatusOr<Estimate> e = EstimateModel(n.graph(), p);
          if (e.ok()) {
            CHECK(e->total_cycles >= 0);
          } else {
            CHECK_FALSE(std::string(e.status().message()).empty());
          }
        }
        auto exec = runtime::Executor::Create(n.graph(), {});
        if (!exec.ok()) {
          CHECK_FALSE(std::string(exec.status().message()).empty());
          continue;
        }
        runtime::HostTensor in;
        in.dtype = DType::kInt8;
        in.shape = {1, 8, 8, 4};
        in.bytes.assign(256, 3);
        auto out = (*exec)->Run({in});
        if (out.ok()) CHECK(out->at(0).bytes.size() == 4);
      }
    }
  }
}

TEST_CASE("hostile: a stride-4 convolution over a huge map is not split into millions of "
          "operations") {
  // Vela runs a stride above 3 as one convolution per OFM element; mica does too, up to a
  // bound (the last is costed for the rest). A 4096 x 4096 OFM (16.7 M elements) estimates at
  // once, with a caveat, and costs about what the same rate over every element costs.
  for (int32_t side : {64, 16384}) {
    Conv2DAttrs a;
    a.stride_h = a.stride_w = 4;
    const Net n = WeightedOpNet(OpKind::kConv2D, a, {1, side, side, 1}, {4, 4, 4, 1},
                                {1, side / 4, side / 4, 4}, 3);
    CAPTURE(side);
    const Estimate e = EstimateOn(n, "ethos-u55-256");
    REQUIRE(e.ops.size() == 1);
    CHECK(e.total_cycles > 0);
    CHECK(FirstOpCaveat(e, "stride above 3") == (side > 512));
  }
}

TEST_CASE("hostile: an LSTM over millions of time steps is not lowered step by step") {
  // Vela lowers an LSTM into 22 operations per step; mica does too, up to a bound (the last
  // lowered step is costed for the rest). 65,535 steps (a shape, no data) must estimate at
  // once, on the NPU, with a caveat; it was 1.4 million operations and minutes.
  for (int32_t steps : {8, 65535}) {
    const Net n = LstmNet(steps);
    CAPTURE(steps);
    const Estimate e = EstimateOn(n, "ethos-u85-256");
    REQUIRE(e.ops.size() == 1);
    CHECK(e.total_cycles > 0);
    CHECK(FirstOpCaveat(e, "time steps") == (steps > 128));
    CHECK(e.ops[0].placement == Placement::kNpu);
  }
}

TEST_CASE("hostile: a grouped convolution of 16,384 groups estimates at once") {
  // One NPU operation per group (Vela's lowering) over 16,384 groups of two channels.
  const int32_t groups = 16384;
  const Net n = WeightedOpNet(OpKind::kConv2D, Conv2DAttrs{}, {1, 4, 4, 2 * groups},
                              {2 * groups, 1, 1, 2}, {1, 4, 4, 2 * groups}, 3);
  for (const char* profile : {"ethos-u55-256", "ethos-u85-256"}) {
    CAPTURE(profile);
    CHECK(EstimateOn(n, profile).total_cycles > 0);
  }
}

// A 16x8 convolution (int16 activations, int8 weights) whose int64 bias holds `bias`.
Net Conv16x8(int64_t bias) {
  Net n;
  const int32_t x = n.Tensor8("ifm", {1, 4, 4, 2}, DType::kInt16);
  const int32_t w = n.Weights("w", {2, 1, 1, 2}, 3);
  const int32_t b = n.Tensor8("b", {2}, DType::kInt64);
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), &bias, 8);
  std::memcpy(bytes.data() + 8, &bias, 8);
  n.sg().tensors[b].data = const_cast<Graph&>(n.graph()).AddConstData(std::move(bytes));
  const int32_t y = n.Tensor8("ofm", {1, 4, 4, 2}, DType::kInt16);
  n.Op(OpKind::kConv2D, Conv2DAttrs{}, {x, w, b}, {y});
  n.Io({x}, {y});
  return n;
}

TEST_CASE("hostile: int64 biases at the edge of their range never overflow the requantization") {
  runtime::HostTensor in;
  in.dtype = DType::kInt16;
  in.shape = {1, 4, 4, 2};
  in.bytes.assign(64, 0);
  for (size_t i = 0; i < in.bytes.size(); i += 2) in.bytes[i + 1] = 0x7f;  // int16 ~ 32512

  // In range: runs (the largest bias the lowering accepts, both signs).
  for (int64_t bias : {int64_t{1} << 40, -(int64_t{1} << 40), int64_t{0}}) {
    CAPTURE(bias);
    Net n = Conv16x8(bias);
    auto exec = runtime::Executor::Create(n.graph(), {});
    INFO(exec.status().message());
    REQUIRE(exec.ok());
    auto out = (*exec)->Run({in});
    INFO(out.status().message());
    CHECK(out.ok());
  }
  // Out of range: a one-line error naming the bias, not undefined behaviour.
  for (int64_t bias : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                       (int64_t{1} << 40) + 1, int64_t{1} << 62}) {
    CAPTURE(bias);
    Net n = Conv16x8(bias);
    auto exec = runtime::Executor::Create(n.graph(), {});
    REQUIRE_FALSE(exec.ok());
    CHECK_THAT(std::string(exec.status().message()), Catch::Contains("bias 'b'") &&
                                                         Catch::Contains("out of range"));
    // The estimators never do the requantization's arithmetic; they must still not fail
    // badly on such a bias.
    for (const TargetProfile& p : BuiltinTargets()) {
      CAPTURE(p.name);
      absl::StatusOr<Estimate> e = EstimateModel(n.graph(), p);
      if (!e.ok()) CHECK_FALSE(std::string(e.status().message()).empty());
    }
  }
}

}  // namespace
}  // namespace estimate
}  // namespace mica
