// EstimateModel dispatch: Cortex-M profiles get the Cortex-M model; Ethos-U profiles get the NPU
// model with CPU-placed operators costed on the host CPU.
#include "mica/estimate/estimate.h"

#include <string>
#include <vector>

#include "mica/estimate/cortex_m.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

// conv 3x3 (4->8) on 8x8 then softmax; `dtype` float32 makes every op CPU-only on Ethos-U.
Graph TwoOpGraph(DType dtype) {
  Graph g;
  g.source_format = ModelFormat::kBuilt;
  Subgraph sg;
  auto add = [&](const std::string& name, std::vector<int32_t> shape, DType dt) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    if (dt == DType::kInt8) {
      t.quant.scale = {0.05f};
      t.quant.zero_point = {0};
    }
    sg.tensors.push_back(t);
    return static_cast<int32_t>(sg.tensors.size() - 1);
  };
  DType bias = dtype == DType::kInt8 ? DType::kInt32 : dtype;
  int32_t in = add("in", {1, 8, 8, 4}, dtype);
  int32_t w = add("w", {8, 3, 3, 4}, dtype);
  int32_t b = add("b", {8}, bias);
  int32_t c = add("conv", {1, 8, 8, 8}, dtype);
  int32_t o = add("out", {1, 8, 8, 8}, dtype);
  size_t wbytes = sg.tensors[w].num_bytes();
  sg.tensors[w].data = g.AddConstData(std::vector<uint8_t>(wbytes, 0));
  sg.tensors[b].data = g.AddConstData(std::vector<uint8_t>(sg.tensors[b].num_bytes(), 0));
  if (dtype == DType::kInt8) sg.tensors[w].quant.scale = {0.01f};
  Operator conv;
  conv.kind = OpKind::kConv2D;
  Conv2DAttrs ca;
  ca.padding = Padding::kSame;
  conv.attrs = ca;
  conv.inputs = {in, w, b};
  conv.outputs = {c};
  Operator sm;
  sm.kind = OpKind::kSoftmax;
  sm.attrs = SoftmaxAttrs{1.0f};
  sm.inputs = {c};
  sm.outputs = {o};
  sg.ops = {conv, sm};
  sg.inputs = {in};
  sg.outputs = {o};
  g.subgraphs.push_back(std::move(sg));
  return g;
}

TEST_CASE("EstimateModel on a Cortex-M profile is the Cortex-M model", "[estimate]") {
  Graph g = TwoOpGraph(DType::kInt8);
  auto p = FindTargetProfile("cortex-m7");
  REQUIRE(p.ok());
  auto a = EstimateModel(g, *p);
  auto b = EstimateCortexM(g, *p);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->total_cycles == b->total_cycles);
  CHECK(a->target == "cortex-m7");
  CHECK(a->backend == "mica");
  CHECK(a->cpu_ops == 2);
  CHECK(a->npu_ops == 0);
}

TEST_CASE("EstimateModel costs Ethos-U fallbacks on the host CPU", "[estimate]") {
  Graph g = TwoOpGraph(DType::kFloat32);
  auto p = FindTargetProfile("ethos-u55-128");
  REQUIRE(p.ok());
  auto e = EstimateModel(g, *p);
  REQUIRE(e.ok());
  REQUIRE(e->ops.size() == 2);
  // Float feature maps: both operators stay on the CPU, with reasons.
  double expect_host = 0;
  for (int i = 0; i < 2; ++i) {
    CAPTURE(i);
    const OpEstimate& o = e->ops[i];
    CHECK(o.placement == Placement::kCpu);
    CHECK_FALSE(o.reasons.empty());
    auto c = CortexMOpCostFor(g, i, p->cortex_m);
    REQUIRE(c.ok());
    expect_host += c->cycles;
    // Host cycles are converted to the NPU clock (500 MHz NPU, 400 MHz M55 host).
    CHECK(o.total_cycles == Approx(c->cycles * p->clock_hz() / p->cortex_m.clock_hz));
    CHECK(o.kernel.find("on cortex-m55") != std::string::npos);
  }
  CHECK(e->cpu_ops == 2);
  CHECK(e->host_cpu_cycles == Approx(expect_host));
  CHECK(e->host_clock_hz == p->cortex_m.clock_hz);
  CHECK(e->cpu_cycles == Approx(expect_host * 500.0 / 400.0));
  CHECK(e->total_cycles >= e->cpu_cycles);
  CHECK(e->npu_cycles == 0);
  CHECK_FALSE(e->notes.empty());
}

TEST_CASE("EstimateModel keeps int8 operators on the NPU", "[estimate]") {
  Graph g = TwoOpGraph(DType::kInt8);
  auto p = FindTargetProfile("ethos-u55-256");
  REQUIRE(p.ok());
  auto e = EstimateModel(g, *p);
  REQUIRE(e.ok());
  CHECK(e->ops[0].placement == Placement::kNpu);
  CHECK(e->cpu_cycles == 0);
  CHECK(e->host_cpu_cycles == 0);
  CHECK(e->total_cycles > 0);
}

TEST_CASE("EstimateModel on the MLPerf Tiny models, every profile", "[estimate]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared dir absent: skipped MLPerf Tiny estimates");
    return;
  }
  for (const char* model : {"kws_ds_cnn_int8", "ic_resnet8_int8", "vww_mobilenet_v1_025_int8",
                            "ad_autoencoder_int8", "kws_ds_cnn_float"}) {
    auto g = LoadModel(shared + "/models/mlperf-tiny/" + model + ".tflite");
    if (!g.ok()) {
      WARN(std::string("cannot load ") + model + ": " + std::string(g.status().message()));
      continue;
    }
    for (const TargetProfile& p : BuiltinTargets()) {
      CAPTURE(model, p.name);
      auto e = EstimateModel(*g, p);
      REQUIRE(e.ok());
      CHECK(e->total_cycles > 0);
      CHECK(e->ops.size() == g->main().ops.size());
      CHECK(e->npu_ops + e->cpu_ops == static_cast<int>(e->ops.size()));
      double sum = 0;
      for (const OpEstimate& o : e->ops) sum += o.total_cycles;
      if (p.kind == TargetKind::kCortexM) CHECK(sum == Approx(e->total_cycles));
    }
  }
}

}  // namespace
}  // namespace estimate
}  // namespace mica
