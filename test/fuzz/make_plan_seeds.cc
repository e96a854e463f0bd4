// Writes the seed corpus of fuzz_plan: small graphs built with GraphBuilder, calibrated on the
// fp32 executor, quantized by libquant (float I/O, so QUANTIZE and DEQUANTIZE are in the plan)
// and compiled into device plans for the scalar, DSP and MVE ISAs. Between them the plans hold
// every record kind the common models use: conv, depthwise, pools, fully connected, softmax,
// add, mul, pad, reshape, quantize, dequantize, logistic, tanh, hard swish, relu,
// concatenation, mean.
//
//   mica_plan_seeds OUT_DIR
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "mica/base/file.h"
#include "mica/base/status_macros.h"
#include "mica/model/builder.h"
#include "mica/quant/observer.h"
#include "mica/quant/quantize.h"
#include "mica/runtime/executor.h"
#include "mica/runtime/plan.h"

namespace {

using mica::DType;
using mica::Graph;
using mica::GraphBuilder;

absl::StatusOr<Graph> ConvNet() {
  GraphBuilder b("seed_convnet", 3);
  int32_t x = b.Input("input", {1, 8, 8, 2});
  x = b.Pad(x, {{0, 0}, {1, 1}, {1, 1}, {0, 0}});
  x = b.Conv2D(x, b.HeWeights("c/w", {4, 3, 3, 2}), b.RandomBias("c/b", 4),
               {mica::Padding::kValid, 1, 1, 1, 1, mica::Activation::kRelu});
  x = b.DepthwiseConv2D(x, b.HeWeights("d/w", {1, 3, 3, 4}, true), b.RandomBias("d/b", 4),
                        {mica::Padding::kSame, 2, 2, 1, 1, 1, mica::Activation::kRelu6});
  const int32_t y = b.MaxPool2D(x, {mica::Padding::kValid, 2, 2, 2, 2});
  const int32_t z = b.AveragePool2D(x, {mica::Padding::kValid, 2, 2, 2, 2});
  x = b.Mul(b.Add(y, z), y);
  x = b.Reshape(x, {1, -1});
  x = b.FullyConnected(x, b.HeWeights("f/w", {5, 16}), b.RandomBias("f/b", 5));
  b.Output(b.Softmax(x));
  return b.Build();
}

absl::StatusOr<Graph> Activations() {
  GraphBuilder b("seed_activations", 5);
  int32_t x = b.Input("input", {1, 4, 4, 3});
  x = b.Conv2D(x, b.HeWeights("c/w", {6, 1, 1, 3}), b.RandomBias("c/b", 6),
               {mica::Padding::kValid, 1, 1, 1, 1, mica::Activation::kNone});
  const int32_t l = b.Unary(mica::OpKind::kLogistic, x);
  const int32_t t = b.Unary(mica::OpKind::kTanh, x);
  const int32_t h = b.Unary(mica::OpKind::kHardSwish, x);
  const int32_t r = b.Unary(mica::OpKind::kRelu6, b.Unary(mica::OpKind::kRelu, x));
  x = b.Concatenation({b.Add(l, t), b.Add(h, r)}, 3);
  b.Output(b.Mean(x, {1, 2}, false));
  return b.Build();
}

absl::StatusOr<Graph> Quantized(const Graph& fg) {
  MICA_ASSIGN_OR_RETURN(auto exec, mica::runtime::Executor::Create(fg));
  mica::quant::RangeCollector ranges;
  exec->SetTensorObserver([&](int32_t index, const mica::runtime::TensorView& v) {
    if (v.dtype == DType::kFloat32) {
      ranges.Observe(index, v.as<float>(), static_cast<size_t>(v.num_elements()));
    }
  });
  mica::SeededRng rng(11);
  const mica::Tensor& in = fg.main().tensors[fg.main().inputs.at(0)];
  for (int s = 0; s < 4; ++s) {
    mica::runtime::HostTensor h;
    h.dtype = DType::kFloat32;
    h.shape = in.shape;
    std::vector<float> v(static_cast<size_t>(in.num_elements()));
    for (float& f : v) f = rng.Symmetric(1.0f);
    h.bytes.resize(v.size() * sizeof(float));
    std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
    MICA_RETURN_IF_ERROR(exec->Run({h}).status());
  }
  exec->SetTensorObserver(nullptr);
  mica::quant::QuantizeOptions o;
  o.float_io = true;
  return mica::quant::QuantizeGraph(fg, ranges.ranges(), o);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: mica_plan_seeds OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  for (const auto& [name, build] : {std::pair{"convnet", &ConvNet},
                                    std::pair{"activations", &Activations}}) {
  absl::StatusOr<Graph> fg = build();
  absl::StatusOr<Graph> qg = fg.ok() ? Quantized(*fg) : fg;
  if (!qg.ok()) {
    std::fprintf(stderr, "mica_plan_seeds: %s\n", std::string(qg.status().message()).c_str());
    return 1;
  }
  for (mica::kernels::Isa isa :
       {mica::kernels::Isa::kScalar, mica::kernels::Isa::kDsp, mica::kernels::Isa::kMve}) {
    absl::StatusOr<mica::runtime::CompiledPlan> plan = mica::runtime::CompilePlan(*qg, {isa});
    if (!plan.ok()) {
      std::fprintf(stderr, "mica_plan_seeds: %s\n", std::string(plan.status().message()).c_str());
      return 1;
    }
    const std::string path =
        dir + "/seed-" + name + "-" + mica::kernels::IsaName(isa) + ".mplan";
    const absl::Status st = mica::WriteFileBytes(path, plan->bytes);
    if (!st.ok()) {
      std::fprintf(stderr, "mica_plan_seeds: %s\n", std::string(st.message()).c_str());
      return 1;
    }
    std::printf("%s: %zu bytes\n", path.c_str(), plan->bytes.size());
  }
  }
  return 0;
}
