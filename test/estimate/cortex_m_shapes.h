// The calibration shapes of mica's Cortex-M estimate for its own kernels: single-operator int8
// models over a grid of shapes (channels 1..256, kernels 1x1..5x5, strides 1 and 2, fully
// connected 8..1024 deep, elementwise, pools, softmax; depthwise with a channel multiplier,
// grouped and 1xN convolutions, broadcasting add/mul, activation functions, mean, pad,
// transpose, PRELU, int16 (16x8) conv/depthwise/fully connected/softmax, QUANTIZE/DEQUANTIZE
// at float or uint8 edges, and a hand-quantized SVDF), built and quantized in-process with a
// fixed seed. bench/cortex_m_vs_qemu.py writes them to files (the "[.cortex-m-shapes-write]"
// case), measures them on QEMU beside the corpus, and the coefficients of the cost table are
// solved from these shapes only; the corpus and the shared models validate them.
#ifndef MICA_TEST_ESTIMATE_CORTEX_M_SHAPES_H_
#define MICA_TEST_ESTIMATE_CORTEX_M_SHAPES_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/base/status_macros.h"
#include "mica/model/builder.h"
#include "mica/model/load.h"
#include "mica/quant/observer.h"
#include "mica/quant/quantize.h"
#include "mica/runtime/executor.h"

namespace mica {
namespace estimate {
namespace shapes {

// How a shape is quantized: int8 activations (the default), int16 activations (16x8),
// float32 graph inputs/outputs (QUANTIZE / DEQUANTIZE at the edges), or uint8 inputs/outputs
// (requantizing QUANTIZE at the edges).
enum class Io { kInt8, kInt16, kFloat, kUint8 };

struct Shape {
  std::string name;
  std::function<void(GraphBuilder&)> build;  // adds one operator (inputs and output included)
  Io io = Io::kInt8;
  // Set for shapes built already quantized (operators the quantization pass does not cover):
  // called on the built graph, which is then used as is.
  std::function<void(Graph&)> finish = nullptr;
};

// Deterministic bytes for hand-quantized constants (values in [-range, range] per element of
// `width` bytes, little-endian).
inline std::vector<uint8_t> PatternBytes(int64_t n, int width, int range, uint32_t seed) {
  std::vector<uint8_t> out;
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const int32_t v = static_cast<int32_t>((x >> 8) % static_cast<uint32_t>(2 * range + 1)) - range;
    for (int b = 0; b < width; ++b) out.push_back(static_cast<uint8_t>((v >> (8 * b)) & 0xff));
  }
  return out;
}

// An int8 SVDF with int16 time weights and state (TFLite Micro's integer SVDF), built already
// quantized: input [batch, in], F = units x rank filters, memory M.
inline void SvdfModel(GraphBuilder& b, int batch, int in, int units, int rank, int memory) {
  const int f = units * rank;
  const int32_t x = b.Input("x", {batch, in}, DType::kInt8);
  const int32_t wf = b.Constant("wf", {f, in}, DType::kInt8, PatternBytes(int64_t{f} * in, 1, 100, 3));
  const int32_t wt =
      b.Constant("wt", {f, memory}, DType::kInt16, PatternBytes(int64_t{f} * memory, 2, 20000, 5));
  const int32_t bias = b.Constant("bias", {units}, DType::kInt32, PatternBytes(units, 4, 5000, 7));
  const int32_t state = b.Input("state", {batch, f * memory}, DType::kInt16);
  b.Intermediate("y", {batch, units}, DType::kInt8);
  (void)x, (void)wf, (void)wt, (void)bias, (void)state;
}

// Adds the SVDF operator (the builder has no shape inference for it) and the quantization.
inline void FinishSvdf(Graph& g, int rank) {
  Subgraph& sg = g.main();
  auto index = [&](const char* name) {
    for (size_t i = 0; i < sg.tensors.size(); ++i) {
      if (sg.tensors[i].name == name) return static_cast<int32_t>(i);
    }
    return kNoTensor;
  };
  Operator op;
  op.kind = OpKind::kSvdf;
  SvdfAttrs a;
  a.rank = rank;
  a.activation = Activation::kRelu;
  op.attrs = a;
  op.inputs = {index("x"), index("wf"), index("wt"), index("bias"), index("state")};
  op.outputs = {index("y")};
  sg.ops.push_back(op);
  sg.outputs = {index("y")};
  auto quant = [](Tensor& t, float scale, int64_t zp) {
    t.quant.scale = {scale};
    t.quant.zero_point = {zp};
  };
  for (Tensor& t : sg.tensors) {
    if (t.name == "x") quant(t, 0.05f, 3);
    else if (t.name == "wf") quant(t, 0.004f, 0);
    else if (t.name == "wt") quant(t, 0.00003f, 0);
    else if (t.name == "bias") quant(t, 0.0002f, 0);
    else if (t.name == "state") quant(t, 0.0008f, 0), t.is_variable = true;
    else quant(t, 0.02f, -128);
  }
  // The state is a variable tensor, not a graph input.
  std::vector<int32_t> inputs;
  for (int32_t i : sg.inputs) {
    if (sg.tensors[static_cast<size_t>(i)].name != "state") inputs.push_back(i);
  }
  sg.inputs = inputs;
}

inline void ConvModel(GraphBuilder& b, int hw, int cin, int cout, int k, int stride) {
  const int32_t x = b.Input("x", {1, hw, hw, cin});
  Conv2DAttrs a;
  a.padding = Padding::kSame;
  a.stride_h = a.stride_w = stride;
  b.Output(b.Conv2D(x, b.HeWeights("w", {cout, k, k, cin}), b.RandomBias("b", cout), a));
}

inline void DepthwiseModel(GraphBuilder& b, int hw, int c, int k, int stride) {
  const int32_t x = b.Input("x", {1, hw, hw, c});
  DepthwiseConv2DAttrs a;
  a.padding = Padding::kSame;
  a.stride_h = a.stride_w = stride;
  b.Output(b.DepthwiseConv2D(x, b.HeWeights("w", {1, k, k, c}, true), b.RandomBias("b", c), a));
}

inline void FcModel(GraphBuilder& b, int rows, int k, int n) {
  const int32_t x = b.Input("x", {rows, k});
  b.Output(b.FullyConnected(x, b.HeWeights("w", {n, k}), b.RandomBias("b", n)));
}

inline void PoolModel(GraphBuilder& b, bool max, int h, int w, int c, int k, int stride,
                      bool same = false) {
  const int32_t x = b.Input("x", {1, h, w, c});
  Pool2DAttrs a;
  if (same) a.padding = Padding::kSame;
  a.filter_h = a.filter_w = k;
  a.stride_h = a.stride_w = stride;
  b.Output(max ? b.MaxPool2D(x, a) : b.AveragePool2D(x, a));
}

inline std::vector<Shape> CalibrationShapes() {
  std::vector<Shape> s;
  auto conv = [&](int hw, int cin, int cout, int k, int stride) {
    s.push_back({"shape_conv" + std::to_string(k) + "x" + std::to_string(k) + "s" +
                     std::to_string(stride) + "_" + std::to_string(hw) + "x" + std::to_string(cin) +
                     "to" + std::to_string(cout),
                 [=](GraphBuilder& b) { ConvModel(b, hw, cin, cout, k, stride); }});
  };
  conv(16, 1, 8, 3, 1);
  conv(16, 3, 8, 3, 2);
  conv(12, 3, 16, 3, 1);
  conv(16, 8, 16, 3, 1);
  conv(8, 16, 32, 3, 1);
  conv(8, 24, 24, 3, 2);
  conv(6, 32, 32, 3, 1);
  conv(4, 64, 64, 3, 1);
  conv(8, 5, 12, 5, 1);
  conv(6, 40, 20, 3, 1);
  conv(10, 2, 6, 5, 2);
  conv(16, 16, 32, 3, 1);
  conv(12, 32, 64, 3, 2);
  conv(10, 48, 24, 3, 1);
  conv(20, 8, 8, 3, 1);
  conv(6, 64, 96, 3, 1);
  conv(24, 4, 16, 3, 2);
  // Channels not a multiple of 4 (the DSP body's two-pixel path).
  conv(12, 6, 16, 3, 1);
  conv(10, 7, 12, 3, 2);
  conv(8, 10, 24, 3, 1);
  conv(16, 3, 32, 3, 2);
  conv(6, 18, 16, 3, 1);
  // 1x1 stride 1 (the 1x1 family) and stride 2 (im2col).
  conv(16, 8, 16, 1, 1);
  conv(8, 16, 48, 1, 1);
  conv(8, 24, 24, 1, 1);
  conv(6, 32, 64, 1, 1);
  conv(4, 64, 128, 1, 1);
  conv(4, 128, 32, 1, 1);
  conv(2, 256, 256, 1, 1);
  conv(3, 200, 40, 1, 1);
  conv(10, 3, 20, 1, 1);
  conv(12, 10, 7, 1, 1);
  conv(8, 32, 32, 1, 2);
  // Kernel height 1 (1-D convolutions over a 1 x W input).
  auto conv1d = [&](int w, int cin, int cout, int k, int stride) {
    s.push_back({"shape_conv1x" + std::to_string(k) + "s" + std::to_string(stride) + "_" +
                     std::to_string(w) + "x" + std::to_string(cin) + "to" + std::to_string(cout),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, 1, w, cin});
                   Conv2DAttrs a;
                   a.padding = Padding::kSame;
                   a.stride_h = 1;
                   a.stride_w = stride;
                   b.Output(b.Conv2D(x, b.HeWeights("w", {cout, 1, k, cin}),
                                     b.RandomBias("b", cout), a));
                 }});
  };
  conv1d(49, 40, 32, 5, 2);
  conv1d(25, 32, 48, 5, 2);
  conv1d(32, 8, 16, 3, 1);
  conv1d(20, 3, 8, 7, 1);
  conv1d(16, 64, 64, 3, 1);
  conv1d(6, 4, 4, 3, 1);
  // Tiny ones pin the per-call costs.
  conv(3, 4, 4, 3, 1);
  conv(2, 8, 8, 1, 1);
  conv(1, 16, 4, 1, 1);
  conv(4, 2, 3, 3, 2);
  auto dw = [&](int hw, int c, int k, int stride) {
    s.push_back({"shape_dw" + std::to_string(k) + "x" + std::to_string(k) + "s" +
                     std::to_string(stride) + "_" + std::to_string(hw) + "x" + std::to_string(c),
                 [=](GraphBuilder& b) { DepthwiseModel(b, hw, c, k, stride); }});
  };
  dw(16, 8, 3, 1);
  dw(16, 16, 3, 2);
  dw(8, 32, 3, 1);
  dw(8, 64, 3, 2);
  dw(4, 128, 3, 1);
  dw(4, 256, 3, 1);
  dw(10, 24, 3, 1);
  dw(12, 12, 3, 1);
  dw(8, 40, 5, 1);
  dw(12, 3, 3, 1);
  dw(6, 72, 5, 2);
  dw(3, 8, 3, 1);
  dw(2, 4, 3, 2);
  auto fc = [&](int rows, int k, int n) {
    s.push_back({"shape_fc_" + std::to_string(rows) + "x" + std::to_string(k) + "to" +
                     std::to_string(n),
                 [=](GraphBuilder& b) { FcModel(b, rows, k, n); }});
  };
  fc(1, 64, 10);
  fc(1, 128, 32);
  fc(1, 256, 64);
  fc(1, 640, 128);
  fc(1, 100, 20);
  fc(1, 33, 7);
  fc(1, 1024, 16);
  fc(1, 16, 256);
  fc(1, 8, 8);
  fc(4, 64, 64);
  fc(1, 300, 2);
  fc(1, 4, 2);
  auto ew = [&](bool mul, int h, int w, int c) {
    s.push_back({std::string(mul ? "shape_mul_" : "shape_add_") + std::to_string(h) + "x" +
                     std::to_string(w) + "x" + std::to_string(c),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, h, w, c});
                   const int32_t y = b.Input("y", {1, h, w, c});
                   b.Output(mul ? b.Mul(x, y) : b.Add(x, y));
                 }});
  };
  ew(false, 8, 8, 16);
  ew(false, 5, 7, 3);
  ew(false, 16, 16, 32);
  ew(false, 1, 1, 100);
  ew(false, 1, 1, 4);
  ew(true, 8, 8, 16);
  ew(true, 5, 7, 3);
  auto pool = [&](bool max, int h, int w, int c, int k, int stride) {
    s.push_back({std::string(max ? "shape_maxpool" : "shape_avgpool") + std::to_string(k) + "s" +
                     std::to_string(stride) + "_" + std::to_string(h) + "x" + std::to_string(w) +
                     "x" + std::to_string(c),
                 [=](GraphBuilder& b) { PoolModel(b, max, h, w, c, k, stride); }});
  };
  pool(false, 8, 8, 32, 8, 8);
  pool(false, 4, 4, 100, 4, 4);
  pool(false, 16, 16, 8, 2, 2);
  pool(false, 12, 12, 3, 3, 3);
  pool(true, 16, 16, 8, 2, 2);
  pool(true, 8, 8, 32, 2, 2);
  pool(true, 15, 15, 16, 3, 2);
  pool(true, 6, 6, 100, 2, 2);
  pool(false, 2, 2, 4, 2, 2);
  pool(true, 2, 2, 4, 2, 2);
  pool(false, 7, 7, 64, 7, 7);
  pool(false, 24, 24, 12, 2, 2);
  // SAME padding: windows cut at the borders.
  auto pool_same = [&](bool max, int h, int c, int k, int stride) {
    s.push_back({std::string(max ? "shape_maxpool" : "shape_avgpool") + std::to_string(k) + "s" +
                     std::to_string(stride) + "same_" + std::to_string(h) + "x" +
                     std::to_string(h) + "x" + std::to_string(c),
                 [=](GraphBuilder& b) { PoolModel(b, max, h, h, c, k, stride, true); }});
  };
  pool_same(false, 16, 16, 3, 1);
  pool_same(false, 10, 40, 3, 1);
  pool_same(false, 9, 8, 3, 2);
  pool_same(true, 17, 24, 3, 2);
  pool_same(true, 12, 16, 3, 1);
  auto softmax = [&](int rows, int n) {
    s.push_back({"shape_softmax_" + std::to_string(rows) + "x" + std::to_string(n),
                 [=](GraphBuilder& b) {
                   b.Output(b.Softmax(b.Input("x", {rows, n})));
                 }});
  };
  softmax(1, 2);
  softmax(1, 10);
  softmax(1, 100);
  softmax(8, 16);
  // Logits from a fully connected layer: a wider input range, so fewer inputs within diff_min
  // of the maximum take the exponential.
  auto fc_softmax = [&](int k, int n) {
    s.push_back({"shape_fc_softmax_" + std::to_string(k) + "to" + std::to_string(n),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, k});
                   const int32_t w = b.RandomConstant("w", {n, k}, -2.0f, 2.0f);
                   b.Output(b.Softmax(b.FullyConnected(x, w, b.RandomBias("b", n))));
                 }});
  };
  fc_softmax(64, 10);
  fc_softmax(256, 12);
  fc_softmax(32, 40);
  // Depthwise with a channel multiplier > 1 (the scalar body on every variant).
  auto dwm = [&](int hw, int c, int m, int k, int stride) {
    s.push_back({"shape_dwm" + std::to_string(m) + "_" + std::to_string(k) + "x" +
                     std::to_string(k) + "s" + std::to_string(stride) + "_" + std::to_string(hw) +
                     "x" + std::to_string(c),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, hw, hw, c});
                   DepthwiseConv2DAttrs a;
                   a.padding = Padding::kSame;
                   a.stride_h = a.stride_w = stride;
                   a.depth_multiplier = m;
                   b.Output(b.DepthwiseConv2D(x, b.HeWeights("w", {1, k, k, c * m}, true),
                                              b.RandomBias("b", c * m), a));
                 }});
  };
  dwm(12, 8, 2, 3, 1);
  dwm(8, 16, 4, 5, 1);
  dwm(16, 6, 3, 3, 2);
  dwm(10, 3, 8, 3, 1);
  dwm(3, 4, 2, 3, 1);
  dwm(16, 8, 2, 7, 2);
  dwm(12, 4, 4, 5, 1);
  dwm(20, 6, 2, 3, 1);
  dwm(8, 12, 2, 3, 2);
  dwm(14, 3, 3, 5, 2);
  // Grouped convolution (filter channels = input channels / groups).
  auto gconv = [&](int hw, int cin, int cout, int groups, int k, int stride) {
    s.push_back({"shape_gconv" + std::to_string(k) + "x" + std::to_string(k) + "s" +
                     std::to_string(stride) + "g" + std::to_string(groups) + "_" +
                     std::to_string(hw) + "x" + std::to_string(cin) + "to" + std::to_string(cout),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, hw, hw, cin});
                   Conv2DAttrs a;
                   a.padding = Padding::kSame;
                   a.stride_h = a.stride_w = stride;
                   b.Output(b.Conv2D(x, b.HeWeights("w", {cout, k, k, cin / groups}),
                                     b.RandomBias("b", cout), a));
                 }});
  };
  gconv(8, 16, 16, 2, 3, 1);
  gconv(8, 24, 24, 3, 3, 2);
  gconv(6, 32, 32, 4, 3, 1);
  gconv(12, 16, 32, 8, 3, 1);
  gconv(8, 48, 48, 6, 1, 1);
  gconv(3, 8, 8, 2, 3, 1);
  // Broadcasting elementwise: a per-channel vector (squeeze-excitation) and a scalar.
  auto bcast = [&](bool mul, int h, int w, int c, bool scalar) {
    s.push_back({std::string(mul ? "shape_bmul_" : "shape_badd_") + std::to_string(h) + "x" +
                     std::to_string(w) + "x" + std::to_string(c) + (scalar ? "by1" : "byc"),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, h, w, c});
                   const int32_t y = b.Input("y", {1, 1, 1, scalar ? 1 : c});
                   b.Output(mul ? b.Mul(x, y) : b.Add(x, y));
                 }});
  };
  bcast(true, 8, 8, 16, false);
  bcast(true, 16, 16, 24, false);
  bcast(true, 6, 5, 3, true);
  bcast(false, 8, 8, 16, false);
  bcast(false, 16, 16, 24, false);
  bcast(false, 6, 5, 3, true);
  // Activation functions (one scalar body each).
  auto unary = [&](OpKind kind, const char* tag, int h, int w, int c) {
    s.push_back({std::string("shape_") + tag + "_" + std::to_string(h) + "x" + std::to_string(w) +
                     "x" + std::to_string(c),
                 [=](GraphBuilder& b) { b.Output(b.Unary(kind, b.Input("x", {1, h, w, c}))); }});
  };
  for (auto [kind, tag] : {std::pair<OpKind, const char*>{OpKind::kHardSwish, "hswish"},
                           {OpKind::kLeakyRelu, "leaky"},
                           {OpKind::kRelu, "relu"},
                           {OpKind::kRelu6, "relu6"},
                           {OpKind::kLogistic, "logistic"},
                           {OpKind::kTanh, "tanh"}}) {
    unary(kind, tag, 16, 16, 16);
    unary(kind, tag, 5, 7, 3);
    unary(kind, tag, 1, 1, 8);
    // Logistic and tanh tabulate from 512 elements on: sizes on both sides.
    if (kind == OpKind::kLogistic || kind == OpKind::kTanh) {
      unary(kind, tag, 10, 10, 4);
      unary(kind, tag, 8, 8, 16);
    }
  }
  // Mean over the spatial axes (global average) and over the channels.
  auto mean = [&](int h, int w, int c, bool spatial) {
    s.push_back({"shape_mean_" + std::to_string(h) + "x" + std::to_string(w) + "x" +
                     std::to_string(c) + (spatial ? "_hw" : "_c"),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, h, w, c});
                   b.Output(b.Mean(x, spatial ? std::vector<int32_t>{1, 2}
                                              : std::vector<int32_t>{3}, true));
                 }});
  };
  mean(8, 8, 32, true);
  mean(3, 3, 100, true);
  mean(16, 16, 8, true);
  mean(8, 8, 16, false);
  // Zero padding of the spatial axes.
  // (int16 PAD reuses the shape below, with int16 input and output.)
  auto pad_shape = [](int h, int w, int c, int p0, int p1) {
    return Shape{"shape_pad_" + std::to_string(h) + "x" + std::to_string(w) + "x" +
                     std::to_string(c) + "_" + std::to_string(p0) + std::to_string(p1),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, h, w, c});
                   b.Output(b.Pad(x, {{0, 0}, {p0, p1}, {p0, p1}, {0, 0}}));
                 }};
  };
  auto pad = [&](int h, int w, int c, int p0, int p1) {
    s.push_back(pad_shape(h, w, c, p0, p1));
  };
  pad(16, 16, 8, 1, 1);
  pad(8, 8, 32, 0, 1);
  pad(12, 12, 3, 2, 2);
  pad(4, 4, 64, 1, 1);
  // Transpose: swapped spatial axes (runs of channels) and a channel shuffle (runs of two).
  auto transpose = [&](std::vector<int32_t> shape, std::vector<int32_t> perm, const char* tag) {
    s.push_back({std::string("shape_transpose_") + tag,
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", shape);
                   const int32_t p =
                       b.Int32Constant("perm", {static_cast<int32_t>(perm.size())}, perm);
                   b.Output(b.AddOp(OpKind::kTranspose, std::monostate{}, {x, p}, 1)[0]);
                 }});
  };
  transpose({1, 8, 12, 16}, {0, 2, 1, 3}, "hw_8x12x16");
  transpose({1, 8, 8, 2, 12}, {0, 1, 2, 4, 3}, "shuffle_8x8x2x12");
  transpose({1, 4, 6, 3, 2}, {0, 1, 2, 4, 3}, "shuffle_4x6x3x2");
  transpose({1, 6, 5, 8}, {0, 3, 1, 2}, "chw_6x5x8");
  transpose({1, 16, 4, 64}, {0, 2, 1, 3}, "hw_16x4x64");
  transpose({1, 3, 20, 4}, {0, 2, 1, 3}, "hw_3x20x4");
  // MINIMUM / MAXIMUM of two same-shape tensors.
  // Built already quantized: the operands and the result share one scale and zero point.
  auto minmax = [&](bool max, int h, int w, int c) {
    Shape sh{std::string(max ? "shape_maximum_" : "shape_minimum_") + std::to_string(h) + "x" +
                 std::to_string(w) + "x" + std::to_string(c),
             [=](GraphBuilder& b) {
               const int32_t x = b.Input("x", {1, h, w, c}, DType::kInt8);
               const int32_t y = b.Input("y", {1, h, w, c}, DType::kInt8);
               b.Output(b.AddOp(max ? OpKind::kMaximum : OpKind::kMinimum, std::monostate{},
                                {x, y}, 1)[0]);
             }};
    sh.finish = [](Graph& g) {
      for (Tensor& t : g.main().tensors) {
        t.dtype = DType::kInt8;
        t.quant.scale = {0.05f};
        t.quant.zero_point = {-3};
      }
    };
    s.push_back(std::move(sh));
  };
  minmax(true, 8, 8, 16);
  minmax(true, 5, 7, 3);
  minmax(true, 16, 16, 32);
  minmax(false, 1, 1, 100);
  minmax(false, 6, 6, 9);
  // PRELU with a per-channel slope.
  auto prelu = [&](int h, int w, int c) {
    s.push_back({"shape_prelu_" + std::to_string(h) + "x" + std::to_string(w) + "x" +
                     std::to_string(c),
                 [=](GraphBuilder& b) {
                   const int32_t x = b.Input("x", {1, h, w, c});
                   const int32_t a = b.RandomConstant("alpha", {1, 1, c}, 0.0f, 0.5f);
                   b.Output(b.AddOp(OpKind::kPrelu, std::monostate{}, {x, a}, 1)[0]);
                 }});
  };
  prelu(16, 16, 16);
  prelu(5, 7, 3);
  prelu(1, 1, 8);
  // SVDF (int8 input and output, int16 time weights and state), built already quantized.
  auto svdf = [&](int batch, int in, int units, int rank, int memory) {
    Shape sh{"shape_svdf_" + std::to_string(batch) + "x" + std::to_string(in) + "_u" +
                 std::to_string(units) + "r" + std::to_string(rank) + "m" + std::to_string(memory),
             [=](GraphBuilder& b) { SvdfModel(b, batch, in, units, rank, memory); }};
    sh.finish = [rank](Graph& g) { FinishSvdf(g, rank); };
    s.push_back(std::move(sh));
  };
  svdf(1, 40, 32, 2, 8);
  svdf(1, 64, 16, 1, 32);
  svdf(1, 16, 64, 1, 4);
  svdf(2, 32, 24, 2, 10);
  svdf(1, 8, 4, 1, 2);
  // Quantization at the graph's edges around a RELU6 (a clamp): float32 -> int8 QUANTIZE and
  // int8 -> float32 DEQUANTIZE, or uint8 <-> int8 requantizing QUANTIZE.
  auto edges = [&](Io io, int h, int w, int c) {
    s.push_back({std::string(io == Io::kFloat ? "shape_fio_" : "shape_u8io_") + std::to_string(h) +
                     "x" + std::to_string(w) + "x" + std::to_string(c),
                 [=](GraphBuilder& b) {
                   b.Output(b.Unary(OpKind::kRelu6, b.Input("x", {1, h, w, c})));
                 },
                 io});
  };
  for (Io io : {Io::kFloat, Io::kUint8}) {
    edges(io, 16, 16, 16);
    edges(io, 5, 7, 3);
    edges(io, 1, 1, 8);
  }
  // int16 activations (16x8): convolution, fully connected, softmax.
  auto s16 = [&](Shape sh) {
    sh.name += "_i16";
    sh.io = Io::kInt16;
    s.push_back(std::move(sh));
  };
  auto pad16 = [&](int h, int w, int c, int p0, int p1) { s16(pad_shape(h, w, c, p0, p1)); };
  pad16(16, 16, 8, 1, 1);
  pad16(12, 12, 3, 2, 2);
  pad16(8, 8, 32, 0, 1);
  auto conv16 = [&](int hw, int cin, int cout, int k, int stride) {
    s16({"shape_conv" + std::to_string(k) + "x" + std::to_string(k) + "s" +
             std::to_string(stride) + "_" + std::to_string(hw) + "x" + std::to_string(cin) + "to" +
             std::to_string(cout),
         [=](GraphBuilder& b) { ConvModel(b, hw, cin, cout, k, stride); }});
  };
  conv16(16, 3, 8, 3, 2);
  conv16(8, 16, 32, 3, 1);
  conv16(6, 32, 32, 3, 1);
  conv16(8, 5, 12, 5, 1);
  conv16(8, 16, 48, 1, 1);
  conv16(4, 64, 128, 1, 1);
  conv16(3, 4, 4, 3, 1);
  conv16(10, 3, 20, 1, 1);
  // Few channels under a large kernel: the per-tap and per-row loop costs.
  conv16(12, 2, 8, 7, 1);
  conv16(10, 1, 4, 5, 1);
  conv16(9, 2, 16, 3, 1);
  conv16(12, 8, 16, 3, 1);
  conv16(16, 16, 16, 3, 2);
  conv16(10, 24, 24, 3, 1);
  conv16(8, 32, 64, 3, 1);
  conv16(20, 4, 8, 3, 1);
  auto dw16 = [&](int hw, int c, int k, int stride) {
    s16({"shape_dw" + std::to_string(k) + "x" + std::to_string(k) + "s" + std::to_string(stride) +
             "_" + std::to_string(hw) + "x" + std::to_string(c),
         [=](GraphBuilder& b) { DepthwiseModel(b, hw, c, k, stride); }});
  };
  dw16(16, 8, 3, 1);
  dw16(8, 32, 3, 2);
  dw16(4, 128, 3, 1);
  dw16(8, 40, 5, 1);
  dw16(12, 3, 3, 1);
  dw16(3, 8, 3, 1);
  auto fc16 = [&](int rows, int k, int n) {
    s16({"shape_fc_" + std::to_string(rows) + "x" + std::to_string(k) + "to" + std::to_string(n),
         [=](GraphBuilder& b) { FcModel(b, rows, k, n); }});
  };
  fc16(1, 64, 10);
  fc16(1, 256, 64);
  fc16(1, 33, 7);
  fc16(4, 64, 64);
  fc16(1, 640, 128);
  fc16(1, 4, 2);
  auto softmax16 = [&](int rows, int n) {
    s16({"shape_softmax_" + std::to_string(rows) + "x" + std::to_string(n),
         [=](GraphBuilder& b) { b.Output(b.Softmax(b.Input("x", {rows, n}))); }});
  };
  softmax16(1, 10);
  softmax16(1, 100);
  softmax16(8, 16);
  softmax16(1, 2);
  return s;
}

// Builds shape `s` as an int8 graph: float build, calibration over 4 seeded random inputs in
// [-1, 1), then the quantization pass (int8 inputs and outputs).
inline absl::StatusOr<Graph> BuildInt8(const Shape& s) {
  GraphBuilder b(s.name, /*seed=*/11);
  s.build(b);
  MICA_ASSIGN_OR_RETURN(Graph fg, b.Build());
  if (s.finish) {
    s.finish(fg);
    MICA_RETURN_IF_ERROR(ValidateGraph(fg));
    return fg;
  }
  MICA_ASSIGN_OR_RETURN(auto exec, runtime::Executor::Create(fg));
  quant::RangeCollector ranges;
  exec->SetTensorObserver([&](int32_t index, const runtime::TensorView& v) {
    if (v.dtype == DType::kFloat32) {
      ranges.Observe(index, v.as<float>(), static_cast<size_t>(v.num_elements()));
    }
  });
  SeededRng rng(29);
  for (int sample = 0; sample < 4; ++sample) {
    std::vector<runtime::HostTensor> inputs;
    for (int32_t in : fg.main().inputs) {
      const Tensor& t = fg.main().tensors[static_cast<size_t>(in)];
      runtime::HostTensor h;
      h.dtype = DType::kFloat32;
      h.shape = t.shape;
      std::vector<float> v(static_cast<size_t>(t.num_elements()));
      for (float& x : v) x = rng.Symmetric(1.0f);
      h.bytes.resize(v.size() * sizeof(float));
      std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
      inputs.push_back(std::move(h));
    }
    MICA_RETURN_IF_ERROR(exec->Run(inputs).status());
  }
  exec->SetTensorObserver(nullptr);
  quant::QuantizeOptions options;
  options.activations = s.io == Io::kInt16 ? quant::ActivationType::kInt16
                                           : quant::ActivationType::kInt8;
  options.float_io = s.io == Io::kFloat;
  options.uint8_io = s.io == Io::kUint8;
  return quant::QuantizeGraph(fg, ranges.ranges(), options);
}

}  // namespace shapes
}  // namespace estimate
}  // namespace mica

#endif  // MICA_TEST_ESTIMATE_CORTEX_M_SHAPES_H_
