// int8 lowering of operators the goldens do not cover (transpose conv, batch matmul, mean,
// depth multipliers, pads, ...): a float graph is calibrated through the executor, quantized by
// libquant, and the int8 graph's dequantized output must match the float graph run on the same
// (dequantized) input within quantization error, for every kernel variant the host runs.
// Wrong multipliers, offsets or paddings give errors of the order of the output range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "mica/model/builder.h"
#include "mica/quant/observer.h"
#include "mica/quant/quantize.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace runtime {
namespace {

HostTensor F32(const std::vector<int32_t>& shape, const std::vector<float>& v) {
  HostTensor h{DType::kFloat32, shape, std::vector<uint8_t>(v.size() * 4)};
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

std::vector<float> AsFloats(const HostTensor& h) {
  std::vector<float> v(h.bytes.size() / 4);
  std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
  return v;
}

// Builds a float graph with `build` (which adds inputs, ops and outputs), calibrates, quantizes
// and compares.
void CheckQuantizedMatchesFloat(const std::string& what,
                                const std::function<void(GraphBuilder&)>& build,
                                uint64_t seed) {
  CAPTURE(what, seed);
  GraphBuilder b(what, seed);
  build(b);
  auto fg = b.Build();
  if (!fg.ok()) FAIL(std::string(fg.status().message()));
  const Subgraph& fsg = fg->main();
  auto fexec = Executor::Create(*fg);
  if (!fexec.ok()) FAIL(std::string(fexec.status().message()));

  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto sample = [&]() {
    std::vector<HostTensor> in;
    for (int32_t t : fsg.inputs) {
      std::vector<float> v(static_cast<size_t>(fsg.tensors[t].num_elements()));
      for (float& x : v) x = dist(rng);
      in.push_back(F32(fsg.tensors[t].shape, v));
    }
    return in;
  };
  // Calibrate on random samples plus the test sample itself, so no activation of the test run
  // leaves its calibrated range (saturation is not what this test measures).
  const std::vector<HostTensor> test_sample = sample();
  quant::RangeCollector ranges;
  (*fexec)->SetTensorObserver([&](int32_t t, const TensorView& v) {
    if (v.dtype == DType::kFloat32) ranges.Observe(t, v.as<float>(), v.num_elements());
  });
  for (int i = 0; i < 8; ++i) REQUIRE((*fexec)->Run(sample()).ok());
  REQUIRE((*fexec)->Run(test_sample).ok());
  (*fexec)->SetTensorObserver(nullptr);
  auto qg = quant::QuantizeGraph(*fg, ranges.ranges());
  if (!qg.ok()) FAIL(std::string(qg.status().message()));
  const Subgraph& qsg = qg->main();

  // The test sample quantized with the int8 inputs' parameters, and dequantized again for the
  // float graph so both graphs see the same values.
  std::vector<HostTensor> qin, fin;
  for (size_t i = 0; i < qsg.inputs.size(); ++i) {
    const Tensor& qt = qsg.tensors[qsg.inputs[i]];
    REQUIRE(qt.dtype == DType::kInt8);
    const std::vector<float> x = AsFloats(test_sample[i]);
    HostTensor q{DType::kInt8, qt.shape, std::vector<uint8_t>(qt.num_bytes())};
    std::vector<float> f(q.bytes.size());
    for (size_t j = 0; j < q.bytes.size(); ++j) {
      const int v = static_cast<int>(std::clamp<long>(
          std::lround(x[j] / qt.quant.scale[0]) + qt.quant.zero_point[0], -128, 127));
      q.bytes[j] = static_cast<uint8_t>(static_cast<int8_t>(v));
      f[j] = qt.quant.scale[0] * static_cast<float>(v - qt.quant.zero_point[0]);
    }
    qin.push_back(std::move(q));
    fin.push_back(F32(fsg.tensors[fsg.inputs[i]].shape, f));
  }
  auto fout = (*fexec)->Run(fin);
  REQUIRE(fout.ok());
  const std::vector<float> want = AsFloats((*fout)[0]);
  const Tensor& qo = qsg.tensors[qsg.outputs[0]];
  REQUIRE(qo.dtype == DType::kInt8);
  float range = 0;
  for (float v : want) range = std::max(range, std::fabs(v));
  for (kernels::Isa isa : HostIsas()) {
    CAPTURE(kernels::IsaName(isa));
    ExecutorOptions o;
    o.isa = isa;
    auto qexec = Executor::Create(*qg, o);
    if (!qexec.ok()) FAIL(std::string(qexec.status().message()));
    auto qout = (*qexec)->Run(qin);
    if (!qout.ok()) FAIL(std::string(qout.status().message()));
    REQUIRE((*qout)[0].bytes.size() == want.size());
    const float s = qo.quant.scale[0];
    const int64_t zp = qo.quant.zero_point[0];
    double max_err = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const float got = s * static_cast<float>(static_cast<int8_t>((*qout)[0].bytes[i]) - zp);
      max_err = std::max(max_err, static_cast<double>(std::fabs(got - want[i])));
    }
    CAPTURE(max_err, s, range);
    CHECK(max_err <= 3.0 * s + 0.03 * range);
  }
}

TEST_CASE("int8 lowering: convolutions, pads, pools, means", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(201);
  CheckQuantizedMatchesFloat("conv same stride2 dilation", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {1, 9, 7, 3});
    Conv2DAttrs a;
    a.padding = Padding::kSame;
    a.stride_h = 2;
    a.dilation_w = 2;
    a.activation = Activation::kRelu6;
    b.Output(b.Conv2D(x, b.HeWeights("w", {5, 3, 3, 3}), b.RandomBias("b", 5), a));
  }, seed);
  CheckQuantizedMatchesFloat("depthwise multiplier 2", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {1, 6, 6, 3});
    DepthwiseConv2DAttrs a;
    a.padding = Padding::kSame;
    a.depth_multiplier = 2;
    b.Output(b.DepthwiseConv2D(x, b.HeWeights("w", {1, 3, 3, 6}, true), b.RandomBias("b", 6), a));
  }, seed + 1);
  CheckQuantizedMatchesFloat("pad, average pool, mean, fully connected", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {1, 5, 5, 4});
    int32_t t = b.Pad(x, {{0, 0}, {1, 1}, {0, 2}, {0, 0}});
    Pool2DAttrs pa;
    pa.filter_h = pa.filter_w = 2;
    pa.stride_h = pa.stride_w = 1;
    pa.padding = Padding::kSame;
    t = b.AveragePool2D(t, pa);
    t = b.Mean(t, {1, 2}, false);
    b.Output(b.FullyConnected(t, b.HeWeights("w", {3, 4}), b.RandomBias("b", 3)));
  }, seed + 2);
  CheckQuantizedMatchesFloat("max pool, add broadcast, mul", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {1, 6, 6, 2});
    Pool2DAttrs pa;
    pa.filter_h = pa.filter_w = 3;
    pa.stride_h = pa.stride_w = 2;
    pa.padding = Padding::kValid;
    const int32_t p = b.MaxPool2D(x, pa);
    const int32_t y = b.Input("y", {2});
    b.Output(b.Mul(b.Add(p, y), p));
  }, seed + 3);
}

TEST_CASE("int8 lowering: transpose conv and batch matmul", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(202);
  CheckQuantizedMatchesFloat("transpose conv", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {1, 4, 3, 3});
    TransposeConvAttrs a;
    a.padding = Padding::kSame;
    a.stride_h = a.stride_w = 2;
    const int32_t shape = b.Int32Constant("shape", {4}, {1, 8, 6, 2});
    const int32_t w = b.HeWeights("w", {2, 3, 3, 3});
    b.Output(b.AddOp(OpKind::kTransposeConv, a, {shape, w, x})[0]);
  }, seed);
  CheckQuantizedMatchesFloat("batch matmul adj_y", [](GraphBuilder& b) {
    const int32_t l = b.Input("l", {2, 3, 5});
    const int32_t r = b.Input("r", {2, 4, 5});
    BatchMatMulAttrs a;
    a.adj_y = true;
    b.Output(b.AddOp(OpKind::kBatchMatMul, a, {l, r})[0]);
  }, seed + 1);
  CheckQuantizedMatchesFloat("softmax after fully connected", [](GraphBuilder& b) {
    const int32_t x = b.Input("x", {2, 6});
    b.Output(b.Softmax(b.FullyConnected(x, b.HeWeights("w", {5, 6}), b.RandomBias("b", 5))));
  }, seed + 2);
}

}  // namespace
}  // namespace runtime
}  // namespace mica
