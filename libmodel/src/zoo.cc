#include "mica/model/zoo.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "mica/model/builder.h"

namespace mica {
namespace zoo {
namespace {

// Convolution with He weights, a small random bias and fused activation.
int32_t ConvLayer(GraphBuilder& b, const std::string& name, int32_t x, int32_t out_ch,
                  int32_t kh, int32_t kw, int32_t stride, Activation act,
                  Padding padding = Padding::kSame) {
  const int32_t in_ch = b.status().ok() ? b.subgraph().tensors[static_cast<size_t>(x)].shape[3] : 1;
  const int32_t w = b.HeWeights(name + "/weights", {out_ch, kh, kw, in_ch});
  const int32_t bias = b.RandomBias(name + "/bias", out_ch);
  Conv2DAttrs a;
  a.padding = padding;
  a.stride_h = a.stride_w = stride;
  a.activation = act;
  return b.Conv2D(x, w, bias, a, name);
}

int32_t DepthwiseLayer(GraphBuilder& b, const std::string& name, int32_t x, int32_t stride,
                       Activation act) {
  const int32_t ch = b.status().ok() ? b.subgraph().tensors[static_cast<size_t>(x)].shape[3] : 1;
  const int32_t w = b.HeWeights(name + "/weights", {1, 3, 3, ch}, /*depthwise=*/true);
  const int32_t bias = b.RandomBias(name + "/bias", ch);
  DepthwiseConv2DAttrs a;
  a.padding = Padding::kSame;
  a.stride_h = a.stride_w = stride;
  a.activation = act;
  return b.DepthwiseConv2D(x, w, bias, a, name);
}

int32_t DenseLayer(GraphBuilder& b, const std::string& name, int32_t x, int32_t out,
                   Activation act) {
  const int32_t in = b.status().ok() ? b.subgraph().tensors[static_cast<size_t>(x)].shape.back() : 1;
  const int32_t w = b.HeWeights(name + "/weights", {out, in});
  const int32_t bias = b.RandomBias(name + "/bias", out);
  FullyConnectedAttrs a;
  a.activation = act;
  return b.FullyConnected(x, w, bias, a, name);
}

// Global average pool over the whole spatial extent, flatten, dense, softmax: the classifier
// head shared by KWS, VWW and ResNet-8.
int32_t ClassifierHead(GraphBuilder& b, int32_t x, int32_t classes) {
  if (!b.status().ok()) return kNoTensor;
  const auto& shape = b.subgraph().tensors[static_cast<size_t>(x)].shape;
  Pool2DAttrs pool;
  pool.padding = Padding::kValid;
  pool.filter_h = shape[1];
  pool.filter_w = shape[2];
  pool.stride_h = shape[1];
  pool.stride_w = shape[2];
  const int32_t channels = shape[3];
  const int32_t pooled = b.AveragePool2D(x, pool, "avgpool");
  const int32_t flat = b.Reshape(pooled, {1, channels}, "flatten");
  const int32_t logits = DenseLayer(b, "dense", flat, classes, Activation::kNone);
  return b.Softmax(logits, 1.0f, "softmax");
}

absl::StatusOr<Graph> Finish(GraphBuilder& b, int32_t out, const std::string& description) {
  b.Output(out);
  auto g = b.Build();
  if (!g.ok()) return g.status();
  g->description = description;
  g->metadata["producer"] = "mica zoo";
  return g;
}

}  // namespace

absl::StatusOr<Graph> BuildKwsDsCnn(uint64_t seed) {
  GraphBuilder b("kws_ds_cnn", seed);
  int32_t x = b.Input("input", {1, 49, 10, 1});
  x = ConvLayer(b, "conv_0", x, 64, 10, 4, 2, Activation::kRelu);  // -> 25x5x64
  for (int i = 1; i <= 4; ++i) {
    x = DepthwiseLayer(b, absl::StrCat("dw_", i), x, 1, Activation::kRelu);
    x = ConvLayer(b, absl::StrCat("pw_", i), x, 64, 1, 1, 1, Activation::kRelu);
  }
  return Finish(b, ClassifierHead(b, x, 12), "DS-CNN keyword spotting (MLPerf Tiny), seeded");
}

absl::StatusOr<Graph> BuildVwwMobileNetV1025(uint64_t seed) {
  GraphBuilder b("vww_mobilenet_v1_025", seed);
  int32_t x = b.Input("input", {1, 96, 96, 3});
  x = ConvLayer(b, "conv_0", x, 8, 3, 3, 2, Activation::kRelu);  // 32 * 0.25 -> 48x48x8
  // (stride, pointwise filters) of the 13 depthwise-separable blocks at width 0.25.
  struct Block {
    int32_t stride, filters;
  };
  const Block blocks[] = {{1, 16}, {2, 32},  {1, 32},  {2, 64},  {1, 64},  {2, 128}, {1, 128},
                          {1, 128}, {1, 128}, {1, 128}, {1, 128}, {2, 256}, {1, 256}};
  int i = 1;
  for (const Block& blk : blocks) {
    x = DepthwiseLayer(b, absl::StrCat("dw_", i), x, blk.stride, Activation::kRelu);
    x = ConvLayer(b, absl::StrCat("pw_", i), x, blk.filters, 1, 1, 1, Activation::kRelu);
    ++i;
  }
  return Finish(b, ClassifierHead(b, x, 2),
                "MobileNetV1 0.25 visual wake words (MLPerf Tiny), seeded");
}

absl::StatusOr<Graph> BuildIcResnet8(uint64_t seed) {
  GraphBuilder b("ic_resnet8", seed);
  int32_t x = b.Input("input", {1, 32, 32, 3});
  x = ConvLayer(b, "conv_0", x, 16, 3, 3, 1, Activation::kRelu);
  const int32_t widths[] = {16, 32, 64};
  for (int s = 0; s < 3; ++s) {
    const int32_t stride = s == 0 ? 1 : 2;
    const std::string p = absl::StrCat("stage_", s + 1);
    int32_t y = ConvLayer(b, p + "/conv_a", x, widths[s], 3, 3, stride, Activation::kRelu);
    y = ConvLayer(b, p + "/conv_b", y, widths[s], 3, 3, 1, Activation::kNone);
    // Stages that change width or resolution project the shortcut with a strided 1x1 conv.
    const int32_t shortcut =
        s == 0 ? x : ConvLayer(b, p + "/shortcut", x, widths[s], 1, 1, stride, Activation::kNone);
    x = b.Add(y, shortcut, Activation::kRelu, p + "/add");
  }
  return Finish(b, ClassifierHead(b, x, 10), "ResNet-8 CIFAR-10 (MLPerf Tiny), seeded");
}

absl::StatusOr<Graph> BuildAdAutoencoder(uint64_t seed) {
  GraphBuilder b("ad_autoencoder", seed);
  int32_t x = b.Input("input", {1, 640});
  const int32_t widths[] = {128, 128, 128, 128, 8, 128, 128, 128, 128};
  int i = 0;
  for (int32_t w : widths) x = DenseLayer(b, absl::StrCat("dense_", i++), x, w, Activation::kRelu);
  x = DenseLayer(b, absl::StrCat("dense_", i), x, 640, Activation::kNone);
  return Finish(b, x, "Deep autoencoder anomaly detection (MLPerf Tiny), seeded");
}

const std::vector<ZooModel>& Models() {
  static const std::vector<ZooModel> kModels = {
      {"kws_ds_cnn", "DS-CNN keyword spotting, 1x49x10x1, 12 classes", BuildKwsDsCnn},
      {"vww_mobilenet_v1_025", "MobileNetV1 0.25 visual wake words, 1x96x96x3, 2 classes",
       BuildVwwMobileNetV1025},
      {"ic_resnet8", "ResNet-8 CIFAR-10 image classification, 1x32x32x3, 10 classes",
       BuildIcResnet8},
      {"ad_autoencoder", "deep autoencoder anomaly detection, 1x640", BuildAdAutoencoder},
  };
  return kModels;
}

absl::StatusOr<Graph> Build(const std::string& name, uint64_t seed) {
  std::string names;
  for (const ZooModel& m : Models()) {
    if (name == m.name) return m.build(seed);
    absl::StrAppend(&names, names.empty() ? "" : ", ", m.name);
  }
  return absl::NotFoundError(absl::StrCat("no zoo model '", name, "' (have: ", names, ")"));
}

}  // namespace zoo
}  // namespace mica
