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

namespace mica {
namespace runtime {
namespace {

// ---- int16 activations: hand-built one-operator graphs against float math ------------------

Tensor Q16(const std::string& name, std::vector<int32_t> shape, float scale,
           DType dtype = DType::kInt16) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  t.quant.scale = {scale};
  t.quant.zero_point = {0};
  return t;
}

struct Int16Case {
  Graph g;
  std::vector<std::vector<int16_t>> inputs;
};

// Adds tensors and one operator; inputs are the non-constant tensors in order.
int32_t AddTensor(Graph* g, Tensor t) {
  g->main().tensors.push_back(std::move(t));
  return static_cast<int32_t>(g->main().tensors.size() - 1);
}

std::vector<float> Deq16(const HostTensor& h, float scale) {
  std::vector<float> v(h.bytes.size() / 2);
  for (size_t i = 0; i < v.size(); ++i) {
    int16_t q;
    std::memcpy(&q, &h.bytes[2 * i], 2);
    v[i] = scale * q;
  }
  return v;
}

HostTensor I16(const std::vector<int32_t>& shape, const std::vector<int16_t>& v) {
  HostTensor h{DType::kInt16, shape, std::vector<uint8_t>(v.size() * 2)};
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

// Runs a one-op int16 graph: `op` reads tensors `ins` (graph inputs: `graph_inputs`) and
// writes tensor `out`; compares with `want` (float) within `tol`.
void RunInt16(Graph g, Operator op, const std::vector<int32_t>& graph_inputs,
              const std::vector<std::vector<int16_t>>& values, const std::vector<float>& want,
              double tol) {
  Subgraph& sg = g.main();
  sg.inputs = graph_inputs;
  sg.outputs = op.outputs;
  sg.ops.push_back(op);
  const float s_out = sg.tensors[op.outputs[0]].quant.scale[0];
  for (kernels::Isa isa : HostIsas()) {
    CAPTURE(kernels::IsaName(isa));
    ExecutorOptions o;
    o.isa = isa;
    auto exec = Executor::Create(g, o);
    if (!exec.ok()) FAIL(std::string(exec.status().message()));
    std::vector<HostTensor> in;
    for (size_t i = 0; i < graph_inputs.size(); ++i) {
      in.push_back(I16(sg.tensors[graph_inputs[i]].shape, values[i]));
    }
    auto out = (*exec)->Run(in);
    if (!out.ok()) FAIL(std::string(out.status().message()));
    const std::vector<float> got = Deq16((*out)[0], s_out);
    REQUIRE(got.size() == want.size());
    double max_err = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double clamped = std::min(std::max<double>(want[i], -32768.0 * s_out), 32767.0 * s_out);
      max_err = std::max(max_err, std::fabs(got[i] - clamped));
    }
    CAPTURE(max_err, s_out);
    CHECK(max_err <= tol);
  }
}

std::vector<int16_t> RandomI16(std::mt19937_64& rng, size_t n, int limit) {
  std::uniform_int_distribution<int> d(-limit, limit);
  std::vector<int16_t> v(n);
  for (int16_t& x : v) x = static_cast<int16_t>(d(rng));
  return v;
}

Graph Empty() {
  Graph g;
  g.source_format = ModelFormat::kBuilt;
  g.subgraphs.emplace_back();
  return g;
}

TEST_CASE("int16 lowering: add, mul, activations, softmax, pools, mean, fully connected",
          "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(401);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const float s_in = 1.0f / 4096, s_in2 = 1.0f / 8192;
  SECTION("add / mul with broadcast") {
    for (OpKind kind : {OpKind::kAdd, OpKind::kMul}) {
      CAPTURE(OpKindName(kind));
      Graph g = Empty();
      const int32_t a = AddTensor(&g, Q16("a", {2, 5}, s_in));
      const int32_t b = AddTensor(&g, Q16("b", {5}, s_in2));
      const float s_out = kind == OpKind::kAdd ? 1.0f / 2048 : 1.0f / 1024;
      const int32_t y = AddTensor(&g, Q16("y", {2, 5}, s_out));
      Operator op;
      op.kind = kind;
      op.attrs = ElementwiseAttrs{};
      op.inputs = {a, b};
      op.outputs = {y};
      const auto av = RandomI16(rng, 10, 20000), bv = RandomI16(rng, 5, 20000);
      std::vector<float> want;
      for (int i = 0; i < 10; ++i) {
        const float x = s_in * av[i], z = s_in2 * bv[i % 5];
        want.push_back(kind == OpKind::kAdd ? x + z : x * z);
      }
      RunInt16(g, op, {a, b}, {av, bv}, want, 1.01 * s_out);
    }
  }
  SECTION("logistic / tanh") {
    for (OpKind kind : {OpKind::kLogistic, OpKind::kTanh}) {
      CAPTURE(OpKindName(kind));
      Graph g = Empty();
      const int32_t x = AddTensor(&g, Q16("x", {64}, s_in));
      const int32_t y = AddTensor(&g, Q16("y", {64}, 1.0f / 32768));
      Operator op;
      op.kind = kind;
      op.inputs = {x};
      op.outputs = {y};
      const auto xv = RandomI16(rng, 64, 32767);
      std::vector<float> want;
      for (int16_t q : xv) {
        const double v = s_in * q;
        want.push_back(static_cast<float>(kind == OpKind::kLogistic ? 1 / (1 + std::exp(-v))
                                                                    : std::tanh(v)));
      }
      RunInt16(g, op, {x}, {xv}, want, 8.0 / 32768);
    }
  }
  SECTION("softmax") {
    Graph g = Empty();
    const int32_t x = AddTensor(&g, Q16("x", {3, 10}, s_in));
    const int32_t y = AddTensor(&g, Q16("y", {3, 10}, 1.0f / 32768));
    Operator op;
    op.kind = OpKind::kSoftmax;
    op.attrs = SoftmaxAttrs{1.0f};
    op.inputs = {x};
    op.outputs = {y};
    const auto xv = RandomI16(rng, 30, 12000);
    std::vector<float> want;
    for (int r = 0; r < 3; ++r) {
      double mx = -1e9, sum = 0;
      for (int i = 0; i < 10; ++i) mx = std::max(mx, static_cast<double>(s_in * xv[r * 10 + i]));
      for (int i = 0; i < 10; ++i) sum += std::exp(s_in * xv[r * 10 + i] - mx);
      for (int i = 0; i < 10; ++i) {
        want.push_back(static_cast<float>(std::exp(s_in * xv[r * 10 + i] - mx) / sum));
      }
    }
    RunInt16(g, op, {x}, {xv}, want, 2e-3);
  }
  SECTION("average / max pool and mean") {
    for (OpKind kind : {OpKind::kAveragePool2D, OpKind::kMaxPool2D, OpKind::kMean}) {
      CAPTURE(OpKindName(kind));
      Graph g = Empty();
      const int32_t x = AddTensor(&g, Q16("x", {1, 4, 4, 2}, s_in));
      Operator op;
      op.kind = kind;
      op.inputs = {x};
      int32_t y;
      if (kind == OpKind::kMean) {
        Tensor axes;
        axes.name = "axes";
        axes.dtype = DType::kInt32;
        axes.shape = {2};
        const int32_t ax[2] = {1, 2};
        axes.data = g.AddConstData(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(ax),
                                                        reinterpret_cast<const uint8_t*>(ax) + 8));
        op.inputs.push_back(AddTensor(&g, axes));
        op.attrs = ReduceAttrs{false};
        y = AddTensor(&g, Q16("y", {1, 2}, s_in));
      } else {
        Pool2DAttrs a;
        a.filter_h = a.filter_w = 2;
        a.stride_h = a.stride_w = 2;
        op.attrs = a;
        y = AddTensor(&g, Q16("y", {1, 2, 2, 2}, s_in));
      }
      op.outputs = {y};
      const auto xv = RandomI16(rng, 32, 30000);
      std::vector<float> want;
      if (kind == OpKind::kMean) {
        for (int c = 0; c < 2; ++c) {
          double s = 0;
          for (int i = 0; i < 16; ++i) s += s_in * xv[i * 2 + c];
          want.push_back(static_cast<float>(s / 16));
        }
      } else {
        for (int oy = 0; oy < 2; ++oy)
          for (int ox = 0; ox < 2; ++ox)
            for (int c = 0; c < 2; ++c) {
              double s = 0, m = -1e9;
              for (int ky = 0; ky < 2; ++ky)
                for (int kx = 0; kx < 2; ++kx) {
                  const double v = s_in * xv[((oy * 2 + ky) * 4 + ox * 2 + kx) * 2 + c];
                  s += v / 4;
                  m = std::max(m, v);
                }
              want.push_back(static_cast<float>(kind == OpKind::kMaxPool2D ? m : s));
            }
      }
      RunInt16(g, op, {x}, {xv}, want, 1.01 * s_in);
    }
  }
  SECTION("fully connected 16x8 with int64 bias") {
    Graph g = Empty();
    const int32_t x = AddTensor(&g, Q16("x", {2, 8}, s_in));
    Tensor w = Q16("w", {3, 8}, 0.01f, DType::kInt8);
    std::vector<int8_t> wv(24);
    std::uniform_int_distribution<int> wd(-127, 127);
    for (int8_t& v : wv) v = static_cast<int8_t>(wd(rng));
    w.data = g.AddConstData(std::vector<uint8_t>(wv.begin(), wv.end()));
    const int32_t wi = AddTensor(&g, w);
    Tensor b = Q16("b", {3}, s_in * 0.01f, DType::kInt64);
    const int64_t bv[3] = {100000, -50000, 7};
    b.data = g.AddConstData(std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(bv),
                                                 reinterpret_cast<const uint8_t*>(bv) + 24));
    const int32_t bi = AddTensor(&g, b);
    const float s_out = 1.0f / 512;
    const int32_t y = AddTensor(&g, Q16("y", {2, 3}, s_out));
    Operator op;
    op.kind = OpKind::kFullyConnected;
    op.attrs = FullyConnectedAttrs{};
    op.inputs = {x, wi, bi};
    op.outputs = {y};
    const auto xv = RandomI16(rng, 16, 30000);
    std::vector<float> want;
    for (int r = 0; r < 2; ++r)
      for (int o = 0; o < 3; ++o) {
        double acc = static_cast<double>(bv[o]) * s_in * 0.01;
        for (int i = 0; i < 8; ++i) acc += (s_in * xv[r * 8 + i]) * (0.01 * wv[o * 8 + i]);
        want.push_back(static_cast<float>(acc));
      }
    RunInt16(g, op, {x}, {xv}, want, 1.01 * s_out);
  }
}

}  // namespace
}  // namespace runtime
}  // namespace mica
