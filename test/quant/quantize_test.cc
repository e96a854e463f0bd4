// QuantizeGraph: parameter placement on small graphs, errors, float I/O, concat sharing, and a
// numeric check of a quantized FC against an independent integer reference.
#include "mica/quant/quantize.h"

#include <algorithm>
#include <cmath>

#include "mica/model/builder.h"
#include "mica/model/load.h"
#include "mica/model/zoo.h"
#include "mica/quant/metrics.h"
#include "mica/quant/quant_params.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace quant {
namespace {

// Gives every non-constant float tensor a range [-(i+1), 2(i+1)] (deterministic, distinct).
TensorRanges FakeRanges(const Graph& g) {
  TensorRanges r;
  const auto& ts = g.main().tensors;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].is_constant() && ts[i].dtype == DType::kFloat32) {
      r[static_cast<int32_t>(i)] = {-static_cast<float>(i + 1), 2.0f * static_cast<float>(i + 1)};
    }
  }
  return r;
}

struct ConvNet {
  Graph g;
  int32_t input, conv, flat, fc, softmax;
};

ConvNet MakeConvNet() {
  GraphBuilder b("convnet", 9);
  ConvNet n;
  n.input = b.Input("input", {1, 4, 4, 2});
  Conv2DAttrs ca;
  ca.padding = Padding::kSame;
  ca.activation = Activation::kRelu;
  n.conv = b.Conv2D(n.input, b.HeWeights("conv/w", {4, 3, 3, 2}), b.RandomBias("conv/b", 4), ca,
                    "conv");
  DepthwiseConv2DAttrs da;
  da.padding = Padding::kSame;
  const int32_t dw =
      b.DepthwiseConv2D(n.conv, b.HeWeights("dw/w", {1, 3, 3, 4}, true), b.RandomBias("dw/b", 4),
                        da, "dw");
  n.flat = b.Reshape(dw, {1, 64}, "flat");
  n.fc = b.FullyConnected(n.flat, b.HeWeights("fc/w", {3, 64}), b.RandomBias("fc/b", 3), {}, "fc");
  n.softmax = b.Softmax(n.fc, 1.0f, "softmax");
  b.Output(n.softmax);
  auto g = b.Build();
  REQUIRE(g.ok());
  n.g = std::move(*g);
  return n;
}

TEST_CASE("QuantizeGraph places TFLite-style parameters") {
  ConvNet n = MakeConvNet();
  const TensorRanges ranges = FakeRanges(n.g);
  auto q = QuantizeGraph(n.g, ranges);
  REQUIRE(q.ok());
  const Subgraph& sg = q->main();
  REQUIRE(sg.ops.size() == n.g.main().ops.size());
  for (const Tensor& t : sg.tensors) {
    CAPTURE(t.name);
    CHECK(t.dtype != DType::kFloat32);
  }
  const Tensor& in = sg.tensors[static_cast<size_t>(sg.inputs[0])];
  CHECK(in.dtype == DType::kInt8);
  const QuantParams want_in = ChooseAsymmetricParams(ranges.at(n.input).min, ranges.at(n.input).max);
  CHECK(in.quant.scale == std::vector<float>{want_in.scale});
  CHECK(in.quant.zero_point == std::vector<int64_t>{want_in.zero_point});

  // Conv: per-channel weights on axis 0, bias scale = input scale x weight scale.
  const Operator& conv = sg.ops[0];
  const Tensor& w = sg.tensors[static_cast<size_t>(conv.inputs[1])];
  const Tensor& b = sg.tensors[static_cast<size_t>(conv.inputs[2])];
  CHECK(w.dtype == DType::kInt8);
  REQUIRE(w.quant.scale.size() == 4);
  CHECK(w.quant.axis == 0);
  CHECK(w.quant.zero_point == std::vector<int64_t>(4, 0));
  CHECK(b.dtype == DType::kInt32);
  REQUIRE(b.quant.scale.size() == 4);
  for (size_t c = 0; c < 4; ++c) CHECK(b.quant.scale[c] == want_in.scale * w.quant.scale[c]);
  // Each channel's largest weight maps to +-127.
  for (int c = 0; c < 4; ++c) {
    int m = 0;
    for (int i = 0; i < 18; ++i) m = std::max(m, std::abs(static_cast<int>(w.data.as<int8_t>()[c * 18 + i])));
    CHECK(m == 127);
  }
  CHECK(conv.version == 3);

  // Depthwise: per-channel on axis 3.
  const Tensor& dw = sg.tensors[static_cast<size_t>(sg.ops[1].inputs[1])];
  CHECK(dw.quant.axis == 3);
  CHECK(dw.quant.scale.size() == 4);
  // Reshape shares its input's parameters; FC weights are per tensor.
  const Tensor& dw_out = sg.tensors[static_cast<size_t>(sg.ops[1].outputs[0])];
  const Tensor& flat = sg.tensors[static_cast<size_t>(sg.ops[2].outputs[0])];
  CHECK(flat.quant == dw_out.quant);
  CHECK(sg.tensors[static_cast<size_t>(sg.ops[2].inputs[1])].dtype == DType::kInt32);
  const Tensor& fw = sg.tensors[static_cast<size_t>(sg.ops[3].inputs[1])];
  CHECK(fw.quant.scale.size() == 1);
  CHECK(sg.ops[3].version == 4);
  // Softmax output fixed at 1/256, -128.
  const Tensor& out = sg.tensors[static_cast<size_t>(sg.outputs[0])];
  CHECK(out.quant.scale == std::vector<float>{1.0f / 256});
  CHECK(out.quant.zero_point == std::vector<int64_t>{-128});
  // The float weights are gone and nothing points into the float graph's buffers.
  CHECK(sg.tensors.size() == n.g.main().tensors.size());
  for (const Tensor& t : sg.tensors) {
    if (!t.is_constant()) continue;
    for (const auto& buf : n.g.storage) {
      CHECK_FALSE((t.data.bytes() >= buf->data() && t.data.bytes() < buf->data() + buf->size()));
    }
  }
  CHECK(q->source_format == ModelFormat::kBuilt);
}

TEST_CASE("QuantizeGraph per-tensor option") {
  ConvNet n = MakeConvNet();
  QuantizeOptions opt;
  opt.per_channel = false;
  auto q = QuantizeGraph(n.g, FakeRanges(n.g), opt);
  REQUIRE(q.ok());
  CHECK(q->main().tensors[static_cast<size_t>(q->main().ops[0].inputs[1])].quant.scale.size() == 1);
  CHECK(q->main().tensors[static_cast<size_t>(q->main().ops[0].inputs[2])].quant.scale.size() == 1);
}

TEST_CASE("QuantizeGraph errors name the tensor or operator") {
  ConvNet n = MakeConvNet();
  TensorRanges ranges = FakeRanges(n.g);
  ranges.erase(n.conv);
  auto q = QuantizeGraph(n.g, ranges);
  REQUIRE_FALSE(q.ok());
  CHECK(q.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(q.status().message()).find("'conv'") != std::string::npos);
  // Softmax's and reshape's outputs need no range.
  TensorRanges partial = FakeRanges(n.g);
  partial.erase(n.softmax);
  partial.erase(n.flat);
  CHECK(QuantizeGraph(n.g, partial).ok());

  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 4});
  b.Output(b.Unary(OpKind::kExp, b.Unary(OpKind::kRelu, x)));
  auto g = b.Build();
  REQUIRE(g.ok());
  auto e = QuantizeGraph(*g, FakeRanges(*g));
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(std::string(e.status().message()).find("operator 1 (EXP)") != std::string::npos);
}

TEST_CASE("QuantizeGraph float I/O adds QUANTIZE and DEQUANTIZE") {
  ConvNet n = MakeConvNet();
  QuantizeOptions opt;
  opt.float_io = true;
  auto q = QuantizeGraph(n.g, FakeRanges(n.g), opt);
  REQUIRE(q.ok());
  const Subgraph& sg = q->main();
  REQUIRE(sg.ops.size() == n.g.main().ops.size() + 2);
  CHECK(sg.ops.front().kind == OpKind::kQuantize);
  CHECK(sg.ops.back().kind == OpKind::kDequantize);
  const Tensor& in = sg.tensors[static_cast<size_t>(sg.inputs[0])];
  CHECK(in.dtype == DType::kFloat32);
  CHECK(in.name == "input");
  CHECK(sg.tensors[static_cast<size_t>(sg.ops.front().outputs[0])].name == "input_int8");
  CHECK(sg.tensors[static_cast<size_t>(sg.outputs[0])].dtype == DType::kFloat32);
  CHECK(sg.ops.front().outputs[0] == sg.ops[1].inputs[0]);
}

TEST_CASE("Concatenation shares one set of parameters") {
  GraphBuilder b("cat", 4);
  const int32_t x = b.Input("x", {1, 2, 2, 3});
  const int32_t c1 = b.Conv2D(x, b.HeWeights("w1", {2, 1, 1, 3}), kNoTensor, {}, "c1");
  const int32_t c2 = b.Conv2D(x, b.HeWeights("w2", {3, 1, 1, 3}), kNoTensor, {}, "c2");
  const int32_t cat = b.Concatenation({c1, c2, x}, 3, "cat");
  b.Output(cat);
  auto g = b.Build();
  REQUIRE(g.ok());
  TensorRanges r;
  r[x] = {-1, 1};
  r[c1] = {-4, 1};
  r[c2] = {-1, 6};
  r[cat] = {-4, 6};
  auto q = QuantizeGraph(*g, r);
  REQUIRE(q.ok());
  const QuantParams shared = ChooseAsymmetricParams(-4, 6);
  const Subgraph& sg = q->main();
  // c1 and c2 take the shared parameters; the graph input x is requantized by a QUANTIZE.
  REQUIRE(sg.ops.size() == 4);
  CHECK(sg.ops[2].kind == OpKind::kQuantize);
  const Operator& concat = sg.ops[3];
  REQUIRE(concat.kind == OpKind::kConcatenation);
  for (int32_t t : concat.inputs) {
    CAPTURE(sg.tensors[static_cast<size_t>(t)].name);
    CHECK(sg.tensors[static_cast<size_t>(t)].quant.scale == std::vector<float>{shared.scale});
    CHECK(sg.tensors[static_cast<size_t>(t)].quant.zero_point ==
          std::vector<int64_t>{shared.zero_point});
  }
  const QuantParams xin = ChooseAsymmetricParams(-1, 1);
  CHECK(sg.tensors[static_cast<size_t>(sg.inputs[0])].quant.scale == std::vector<float>{xin.scale});
}

// Independent integer reference for an int8 FULLY_CONNECTED (real-valued rescale).
std::vector<int8_t> ReferenceFcInt8(const std::vector<int8_t>& x, const Tensor& in,
                                    const Tensor& w, const Tensor& bias, const Tensor& out,
                                    int rows, int depth, bool relu) {
  std::vector<int8_t> y(static_cast<size_t>(rows));
  const double in_s = in.quant.scale[0], w_s = w.quant.scale[0], out_s = out.quant.scale[0];
  const int64_t in_zp = in.quant.zero_point[0], out_zp = out.quant.zero_point[0];
  for (int r = 0; r < rows; ++r) {
    int64_t acc = bias.data.as<int32_t>()[r];
    for (int d = 0; d < depth; ++d) {
      acc += (x[static_cast<size_t>(d)] - in_zp) * w.data.as<int8_t>()[r * depth + d];
    }
    double v = std::round(static_cast<double>(acc) * in_s * w_s / out_s) + static_cast<double>(out_zp);
    v = std::clamp(v, relu ? static_cast<double>(out_zp) : -128.0, 127.0);
    y[static_cast<size_t>(r)] = static_cast<int8_t>(v);
  }
  return y;
}

TEST_CASE("Quantized FC matches the float FC (SQNR) through an integer reference") {
  const uint64_t seed = testing::TestSeed(1234);
  CAPTURE(seed);
  const int depth = 32, rows = 16;
  GraphBuilder b("fc", seed);
  const int32_t x = b.Input("x", {1, depth});
  FullyConnectedAttrs fa;
  fa.activation = Activation::kRelu;
  const int32_t wt = b.HeWeights("w", {rows, depth});
  const int32_t bt = b.RandomBias("b", rows, 1.0f);
  const int32_t y = b.FullyConnected(x, wt, bt, fa, "y");
  b.Output(y);
  auto g = b.Build();
  REQUIRE(g.ok());
  const Subgraph& fsg = g->main();
  const float* W = fsg.tensors[static_cast<size_t>(wt)].data.as<float>();
  const float* B = fsg.tensors[static_cast<size_t>(bt)].data.as<float>();
  auto float_fc = [&](const std::vector<float>& in) {
    std::vector<float> out(rows);
    for (int r = 0; r < rows; ++r) {
      double acc = B[r];
      for (int d = 0; d < depth; ++d) acc += static_cast<double>(in[d]) * W[r * depth + d];
      out[static_cast<size_t>(r)] = std::max(0.0f, static_cast<float>(acc));
    }
    return out;
  };
  SeededRng rng(seed);
  std::vector<std::vector<float>> samples;
  RangeCollector rc;
  for (int s = 0; s < 20; ++s) {
    std::vector<float> in(depth);
    for (float& v : in) v = rng.Symmetric(2.0f);
    const std::vector<float> out = float_fc(in);
    rc.Observe(x, in.data(), in.size());
    rc.Observe(y, out.data(), out.size());
    samples.push_back(in);
  }
  auto q = QuantizeGraph(*g, rc.ranges());
  REQUIRE(q.ok());
  const Subgraph& qsg = q->main();
  const Operator& op = qsg.ops[0];
  const Tensor& qin = qsg.tensors[static_cast<size_t>(op.inputs[0])];
  const Tensor& qout = qsg.tensors[static_cast<size_t>(op.outputs[0])];
  std::vector<float> ref_all, got_all;
  for (const auto& in : samples) {
    const QuantParams ip{qin.quant.scale[0], static_cast<int32_t>(qin.quant.zero_point[0])};
    std::vector<int8_t> xq(depth);
    for (int d = 0; d < depth; ++d) xq[static_cast<size_t>(d)] = QuantizeValue(in[static_cast<size_t>(d)], ip);
    const std::vector<int8_t> yq =
        ReferenceFcInt8(xq, qin, qsg.tensors[static_cast<size_t>(op.inputs[1])],
                        qsg.tensors[static_cast<size_t>(op.inputs[2])], qout, rows, depth, true);
    const std::vector<float> deq = DequantizeInt8(
        yq.data(), yq.size(),
        QuantParams{qout.quant.scale[0], static_cast<int32_t>(qout.quant.zero_point[0])});
    const std::vector<float> ref = float_fc(in);
    ref_all.insert(ref_all.end(), ref.begin(), ref.end());
    got_all.insert(got_all.end(), deq.begin(), deq.end());
  }
  const ErrorMetrics m = CompareToReference(ref_all.data(), got_all.data(), ref_all.size());
  CAPTURE(m.sqnr_db, m.max_abs_error);
  CHECK(m.sqnr_db > 30.0);
  // Error stays within a few output steps.
  CHECK(m.max_abs_error < 2.0 * qout.quant.scale[0]);
}

}  // namespace
}  // namespace quant
}  // namespace mica

namespace mica {
namespace quant {
namespace {

std::string QuantKind(const Tensor& t) {
  if (t.quant.empty()) return "none";
  if (!t.quant.per_channel()) return "per-tensor";
  return "per-channel(" + std::to_string(t.quant.axis) + "," +
         std::to_string(t.quant.scale.size()) + ")";
}

TEST_CASE("Quantized zoo models carry the real MLPerf Tiny int8 models' quantization layout") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("MICA_SHARED_DIR absent: skipped the comparison with the real int8 models");
    return;
  }
  for (const auto& m : zoo::Models()) {
    CAPTURE(m.name);
    auto real = LoadModel(shared + "/models/mlperf-tiny/" + m.name + "_int8.tflite");
    if (!real.ok()) {
      WARN("cannot load the real " << m.name << " int8 model: " << real.status().message());
      continue;
    }
    auto fg = m.build(1);
    REQUIRE(fg.ok());
    auto q = QuantizeGraph(*fg, FakeRanges(*fg));
    REQUIRE(q.ok());
    // Compare operator by operator, ignoring QUANTIZE/DEQUANTIZE at the real model's edges.
    auto core = [](const Graph& g) {
      std::vector<const Operator*> v;
      for (const Operator& op : g.main().ops) {
        if (op.kind != OpKind::kQuantize && op.kind != OpKind::kDequantize) v.push_back(&op);
      }
      return v;
    };
    const auto ro = core(*real), qo = core(*q);
    REQUIRE(ro.size() == qo.size());
    for (size_t i = 0; i < ro.size(); ++i) {
      CAPTURE(i, std::string(ro[i]->name()));
      REQUIRE(ro[i]->kind == qo[i]->kind);
      REQUIRE(ro[i]->inputs.size() == qo[i]->inputs.size());
      for (size_t k = 0; k < ro[i]->inputs.size(); ++k) {
        CAPTURE(k);
        if (ro[i]->inputs[k] < 0 || qo[i]->inputs[k] < 0) {
          CHECK(ro[i]->inputs[k] == qo[i]->inputs[k]);
          continue;
        }
        const Tensor& rt = real->main().tensors[static_cast<size_t>(ro[i]->inputs[k])];
        const Tensor& qt = q->main().tensors[static_cast<size_t>(qo[i]->inputs[k])];
        CAPTURE(rt.name, qt.name);
        CHECK(rt.dtype == qt.dtype);
        CHECK(rt.shape == qt.shape);
        CHECK(rt.is_constant() == qt.is_constant());
        if (rt.dtype != DType::kInt32 || !rt.quant.empty()) CHECK(QuantKind(rt) == QuantKind(qt));
        if (rt.is_constant() && rt.dtype == DType::kInt8) {
          CHECK(std::all_of(rt.quant.zero_point.begin(), rt.quant.zero_point.end(),
                            [](int64_t z) { return z == 0; }) ==
                std::all_of(qt.quant.zero_point.begin(), qt.quant.zero_point.end(),
                            [](int64_t z) { return z == 0; }));
        }
      }
      const Tensor& rout = real->main().tensors[static_cast<size_t>(ro[i]->outputs[0])];
      const Tensor& qout = q->main().tensors[static_cast<size_t>(qo[i]->outputs[0])];
      CHECK(rout.dtype == qout.dtype);
      CHECK(QuantKind(rout) == QuantKind(qout));
      if (ro[i]->kind == OpKind::kSoftmax) CHECK(rout.quant == qout.quant);
    }
  }
}

}  // namespace
}  // namespace quant
}  // namespace mica

namespace mica {
namespace quant {
namespace {

TEST_CASE("QuantizeGraph int16 activations: symmetric, int64 conv biases, fixed softmax") {
  ConvNet n = MakeConvNet();
  QuantizeOptions opt;
  opt.activations = ActivationType::kInt16;
  auto q = QuantizeGraph(n.g, FakeRanges(n.g), opt);
  REQUIRE(q.ok());
  const Subgraph& sg = q->main();
  for (const Operator& op : sg.ops) {
    for (int32_t t : op.outputs) {
      const Tensor& y = sg.tensors[static_cast<size_t>(t)];
      CAPTURE(y.name);
      CHECK(y.dtype == DType::kInt16);
      CHECK(y.quant.zero_point[0] == 0);
    }
    if (op.kind == OpKind::kConv2D || op.kind == OpKind::kDepthwiseConv2D ||
        op.kind == OpKind::kFullyConnected) {
      CHECK(sg.tensors[static_cast<size_t>(op.inputs[1])].dtype == DType::kInt8);
      CHECK(sg.tensors[static_cast<size_t>(op.inputs[2])].dtype == DType::kInt64);
    }
  }
  const Tensor& probs = sg.tensors[static_cast<size_t>(sg.outputs[0])];
  CHECK(probs.quant.scale[0] == 1.0f / 32768);
  // The conv output range [-(k+1), 2(k+1)] becomes scale 2(k+1)/32767.
  const Tensor& conv_out = sg.tensors[static_cast<size_t>(sg.ops[0].outputs[0])];
  CHECK(conv_out.quant.scale[0] == Approx(2.0f * static_cast<float>(n.conv + 1) / 32767));
}

TEST_CASE("QuantizeGraph int4 weights: packed low nibble first, values in [-7, 7]") {
  GraphBuilder b("int4", 5);
  const int32_t x = b.Input("x", {1, 3});
  const std::vector<float> w = {0.7f, -0.35f, 0.1f, 0.0f, -0.7f, 0.2f};  // 2 x 3
  const int32_t wt = b.FloatConstant("w", {2, 3}, w);
  b.Output(b.FullyConnected(x, wt, kNoTensor, {}, "fc"));
  auto g = b.Build();
  REQUIRE(g.ok());
  QuantizeOptions opt;
  opt.weights = WeightType::kInt4;
  opt.per_channel_fc = true;
  auto r = QuantizeWithReport(*g, FakeRanges(*g), opt);
  REQUIRE(r.ok());
  const Subgraph& sg = r->graph.main();
  const Tensor& qw = sg.tensors[static_cast<size_t>(sg.ops[0].inputs[1])];
  REQUIRE(qw.dtype == DType::kInt4);
  REQUIRE(qw.data.size == 3);
  // Per-channel was asked for; int4 FULLY_CONNECTED stays per tensor (TFLite Micro).
  REQUIRE(qw.quant.scale.size() == 1);
  // Unpack and dequantize: each channel's values come back within half a step (or clipped).
  const uint8_t* p = qw.data.bytes();
  for (size_t i = 0; i < w.size(); ++i) {
    int v = (i % 2 ? p[i / 2] >> 4 : p[i / 2]) & 0x0F;
    if (v > 7) v -= 16;
    CHECK(v >= -7);
    const float s = qw.quant.scale[0];
    CHECK(std::fabs(static_cast<float>(v) * s - w[i]) <= 0.5f * s + 1e-6f +
                                                           (std::fabs(w[i]) > 7 * s ? std::fabs(w[i]) - 7 * s : 0));
  }
  REQUIRE(r->weights.size() == 1);
  CHECK(r->weights[0].bits == 4);
  CHECK(r->weights[0].channels == 1);
  CHECK(r->weights[0].elements == 6);
}

TEST_CASE("QuantizeWithReport keeps unsupported and excluded operators float") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 4});
  const int32_t r1 = b.Unary(OpKind::kRelu, x, "relu");
  const int32_t e = b.Unary(OpKind::kExp, r1, "exp");
  b.Output(b.Unary(OpKind::kRelu, e, "relu2"));
  auto g = b.Build();
  REQUIRE(g.ok());
  QuantizeOptions opt;
  opt.float_fallback = true;
  opt.keep_float = {2};
  auto r = QuantizeWithReport(*g, FakeRanges(*g), opt);
  REQUIRE(r.ok());
  REQUIRE(r->fallbacks.size() == 2);
  CHECK(r->fallbacks[0].op == 1);
  CHECK(r->fallbacks[0].op_name == "EXP");
  CHECK(r->fallbacks[1].reason == "excluded (--exclude)");
  const Subgraph& sg = r->graph.main();
  // RELU (int8) -> DEQUANTIZE -> EXP -> RELU2, both float; the output stays float.
  REQUIRE(sg.ops.size() == 4);
  CHECK(sg.ops[0].kind == OpKind::kRelu);
  CHECK(sg.ops[1].kind == OpKind::kDequantize);
  CHECK(sg.ops[2].kind == OpKind::kExp);
  CHECK(sg.tensors[static_cast<size_t>(sg.inputs[0])].dtype == DType::kInt8);
  CHECK(sg.tensors[static_cast<size_t>(sg.outputs[0])].dtype == DType::kFloat32);
  REQUIRE(r->source_tensor.size() == sg.tensors.size());
  CHECK(r->source_tensor[static_cast<size_t>(sg.outputs[0])] == g->main().outputs[0]);
  // Without float_fallback the old error stands.
  auto strict = QuantizeGraph(*g, FakeRanges(*g));
  CHECK(strict.status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("QuantizeWithReport int16: operators without a 16x8 kernel stay float") {
  GraphBuilder b;
  const int32_t x = b.Input("x", {1, 4});
  b.Output(b.Unary(OpKind::kHardSwish, b.Unary(OpKind::kRelu, x, "relu"), "hswish"));
  auto g = b.Build();
  REQUIRE(g.ok());
  QuantizeOptions opt;
  opt.activations = ActivationType::kInt16;
  auto strict = QuantizeWithReport(*g, FakeRanges(*g), opt);
  REQUIRE_FALSE(strict.ok());
  CHECK(std::string(strict.status().message()).find("no 16x8") != std::string::npos);
  opt.float_fallback = true;
  auto r = QuantizeWithReport(*g, FakeRanges(*g), opt);
  REQUIRE(r.ok());
  REQUIRE(r->fallbacks.size() == 1);
  CHECK(r->fallbacks[0].op_name == "HARD_SWISH");
  const Subgraph& sg = r->graph.main();
  CHECK(sg.tensors[static_cast<size_t>(sg.ops[0].outputs[0])].dtype == DType::kInt16);
  CHECK(sg.ops[1].kind == OpKind::kDequantize);
}

}  // namespace
}  // namespace quant
}  // namespace mica
