// Cortex-M cost model: calibration against CMSIS-NN's instruction counts on QEMU
// (../shared/reference/cmsis-nn/kernels.csv, read at run time), properties, and the whole-model
// estimate on a graph built here.
#include "mica/estimate/cortex_m.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "mica/estimate/target.h"
#include "mica/kernels/conv.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

using kernels::Isa;

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : line) {
    if (ch == ',') {
      out.push_back(cur);
      cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

// softmax diff_min per case name, parsed from nn_anchor_cases.h (last number of the entry).
std::map<std::string, int32_t> SoftmaxDiffMins(const std::string& header_path) {
  std::ifstream in(header_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::map<std::string, int32_t> out;
  std::regex entry(R"re(\{"(softmax_[a-z0-9_]+)"[^}]*?(-?\d+)\s*\})re");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry);
       it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = std::stoi((*it)[2]);
  }
  return out;
}

// Builds the kernel work from kernels.csv's kernel and shape columns, e.g.
// "conv3x3_16to16_32x32 [32x32x16 k3x3 s1 p1 -> 32x32x16]".
bool ParseWork(const std::string& kernel, const std::string& shape,
               const std::map<std::string, int32_t>& diff_mins, CortexMWork* w) {
  std::smatch m;
  const std::string name = shape.substr(0, shape.find(' '));
  std::regex conv(
      R"re(\[(\d+)x(\d+)x(\d+) k(\d+)x(\d+)(?: s(\d+))?(?: p(\d+)(?:x(\d+))?)? -> (\d+)x(\d+)x(\d+)\])re");
  if (std::regex_search(shape, m, conv)) {
    w->in_h = std::stoi(m[1]);
    w->in_w = std::stoi(m[2]);
    w->in_c = std::stoi(m[3]);
    w->k_h = std::stoi(m[4]);
    w->k_w = std::stoi(m[5]);
    w->stride_h = w->stride_w = m[6].matched ? std::stoi(m[6]) : 1;
    w->pad_h = m[7].matched ? std::stoi(m[7]) : 0;
    w->pad_w = m[8].matched ? std::stoi(m[8]) : w->pad_h;
    w->out_h = std::stoi(m[9]);
    w->out_w = std::stoi(m[10]);
    w->out_c = std::stoi(m[11]);
    w->elements = int64_t{w->out_h} * w->out_w * w->out_c;
    if (kernel.find("depthwise") != std::string::npos) {
      w->kind = OpKind::kDepthwiseConv2D;
    } else if (kernel.find("convolve") != std::string::npos) {
      w->kind = OpKind::kConv2D;
    } else if (kernel.find("avgpool") != std::string::npos) {
      w->kind = OpKind::kAveragePool2D;
    } else if (kernel.find("max_pool") != std::string::npos) {
      w->kind = OpKind::kMaxPool2D;
    } else {
      return false;
    }
    return true;
  }
  std::regex fc(R"re(\[(\d+) -> (\d+)\]$)re");
  if (kernel == "arm_fully_connected_s8" && std::regex_search(shape, m, fc)) {
    w->kind = OpKind::kFullyConnected;
    w->in_c = std::stoi(m[1]);
    w->out_c = std::stoi(m[2]);
    w->elements = w->out_c;
    w->macs = int64_t{w->in_c} * w->out_c;
    return true;
  }
  std::regex add(R"re(\[(\d+)x(\d+)x(\d+) \+ )re");
  if (kernel == "arm_elementwise_add_s8" && std::regex_search(shape, m, add)) {
    w->kind = OpKind::kAdd;
    w->elements = int64_t{std::stoi(m[1])} * std::stoi(m[2]) * std::stoi(m[3]);
    return true;
  }
  std::regex softmax(R"re(\[(\d+)x(\d+)\])re");
  if (kernel == "arm_softmax_s8" && std::regex_search(shape, m, softmax)) {
    w->kind = OpKind::kSoftmax;
    w->rows = std::stoi(m[1]);
    w->elements = w->rows * std::stoi(m[2]);
    auto it = diff_mins.find(name);
    w->softmax_diff_min = it == diff_mins.end() ? 0 : it->second;
    return true;
  }
  return false;
}

TEST_CASE("Cortex-M model is within 10% of CMSIS-NN kernel counts (25% on other DSP cores)", "[cortex_m]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipped the CMSIS-NN calibration check");
    return;
  }
  const std::string dir = shared + "/reference/cmsis-nn/";
  std::ifstream in(dir + "kernels.csv");
  if (!in.good()) {
    WARN("kernels.csv absent: skipped the CMSIS-NN calibration check");
    return;
  }
  auto diff_mins = SoftmaxDiffMins(dir + "nn_anchor_cases.h");
  REQUIRE(diff_mins.count("softmax_1x10") == 1);

  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = SplitCsv(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  for (const char* c : {"kernel", "shape", "variant", "cpu", "instructions"}) {
    REQUIRE(col.count(c) == 1);
  }

  int checked = 0, skipped = 0;
  double worst = 0, sum_abs = 0;
  std::string worst_row;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = SplitCsv(line);
    REQUIRE(f.size() == header.size());
    const std::string kernel = f[col["kernel"]], shape = f[col["shape"]];
    const std::string variant = f[col["variant"]], cpu_col = f[col["cpu"]];
    CortexMWork w;
    if (!ParseWork(kernel, shape, diff_mins, &w)) {
      // arm_vector_sum_s8 is MVE FC's one-time prepare step, not a per-inference kernel.
      ++skipped;
      continue;
    }
    Isa isa = variant == "mve" ? Isa::kMve : variant == "dsp" ? Isa::kDsp : Isa::kScalar;
    CortexMConfig cpu;
    cpu.cpu = cpu_col.substr(0, cpu_col.find('+'));
    const double measured = std::stod(f[col["instructions"]]);
    CortexMOpCost cost = CortexMKernelCost(w, isa, cpu);
    const double err = (cost.instructions - measured) / measured;
    CAPTURE(kernel, shape, variant, cpu_col, measured, cost.instructions, cost.kernel);
    // The builds the estimate targets (M55-MVE, M4-DSP, M55 scalar) within 10 %; the DSP
    // bodies on the other cores share the M4's constants, within 25 %.
    const bool target_build = cpu_col == "cortex-m55" || cpu_col == "cortex-m4" ||
                              cpu_col == "cortex-m55+nomve+nodsp";
    CHECK(std::fabs(err) <= (target_build ? 0.10 : 0.25));
    std::printf("  %-40s %-6s %-24s measured %9.0f model %9.0f  %+6.1f%%\n",
                shape.substr(0, shape.find(' ')).c_str(), variant.c_str(), cpu_col.c_str(),
                measured, cost.instructions, 100 * err);
    ++checked;
    sum_abs += std::fabs(err);
    if (std::fabs(err) > worst) {
      worst = std::fabs(err);
      worst_row = shape + " " + variant + " " + cpu_col;
    }
  }
  std::printf("cortex-m model vs CMSIS-NN: %d rows, mean |error| %.1f%%, worst %.1f%% (%s)\n",
              checked, 100 * sum_abs / std::max(1, checked), 100 * worst, worst_row.c_str());
  CHECK(checked >= 70);
  CHECK(skipped <= 2);
}

TEST_CASE("Cortex-M model is within 10% of TFLite Micro + CMSIS-NN whole-model counts",
          "[cortex_m]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipped the TFLite Micro totals check");
    return;
  }
  std::ifstream in(shared + "/reference/tflm-cmsis-nn/totals.csv");
  if (!in.good()) {
    WARN("totals.csv absent: skipped the TFLite Micro totals check");
    return;
  }
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header = SplitCsv(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  // Build -> the profile whose kernel variant and code generation it measures (the scalar
  // build is Armv8-M scalar code: the Armv7-M scalar profile's formulas, factor 1).
  const std::map<std::string, std::string> profile_of = {
      {"mve-m55", "cortex-m55"}, {"dsp-m4", "cortex-m4"}, {"scalar-m55", "cortex-m3"}};
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::vector<std::string> f = SplitCsv(line);
    auto it = profile_of.find(f[col["build"]]);
    if (it == profile_of.end()) continue;  // TFLM's reference kernels: not what mica models
    const std::string model = shared + "/models/mlperf-tiny/" + f[col["model"]] + ".tflite";
    absl::StatusOr<Graph> g = LoadModel(model);
    REQUIRE(g.ok());
    auto p = FindTargetProfile(it->second);
    REQUIRE(p.ok());
    auto e = EstimateCortexM(*g, *p);
    REQUIRE(e.ok());
    double instructions = 0;  // QEMU counts instructions: no flash wait states
    for (const OpEstimate& o : e->ops) instructions += o.compute_cycles;
    const double measured = std::stod(f[col["instructions_per_inference"]]);
    const double err = instructions / measured - 1;
    CAPTURE(f[col["model"]], f[col["build"]], measured, instructions);
    CHECK(std::fabs(err) <= 0.10);
    std::printf("  %-28s %-11s measured %10.0f model %10.0f  %+6.1f%%\n", f[col["model"]].c_str(),
                f[col["build"]].c_str(), measured, instructions, 100 * err);
    ++checked;
  }
  CHECK(checked == 12);
}

CortexMWork Conv(int in_c, int out_c, int k, int hw) {
  CortexMWork w;
  w.kind = OpKind::kConv2D;
  w.in_h = w.in_w = w.out_h = w.out_w = hw;
  w.in_c = in_c;
  w.out_c = out_c;
  w.k_h = w.k_w = k;
  w.pad_h = w.pad_w = k / 2;
  w.weight_bytes = int64_t{out_c} * k * k * in_c;
  return w;
}

TEST_CASE("Cortex-M cost properties", "[cortex_m]") {
  CortexMConfig m4;
  m4.cpu = "cortex-m4";
  m4.has_dsp = m4.has_fpu = true;
  for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve}) {
    CAPTURE(kernels::IsaName(isa));
    // More MACs never means fewer cycles.
    double prev = 0;
    for (int c : {4, 8, 16, 32, 64}) {
      double cyc = CortexMKernelCost(Conv(c, 16, 3, 16), isa, m4).cycles;
      CHECK(cyc > prev);
      prev = cyc;
    }
    // MACs are counted exactly.
    CHECK(CortexMKernelCost(Conv(8, 16, 3, 10), isa, m4).macs == 10 * 10 * 16 * 9 * 8);
  }
  // Vector and DSP kernels beat scalar ones on convolution.
  CortexMWork w = Conv(32, 32, 3, 16);
  double s = CortexMKernelCost(w, Isa::kScalar, m4).instructions;
  double d = CortexMKernelCost(w, Isa::kDsp, m4).instructions;
  double v = CortexMKernelCost(w, Isa::kMve, m4).instructions;
  CHECK(v < d);
  CHECK(d < s);

  // Flash wait states add cycles on weight loads only.
  CortexMConfig slow = m4;
  slow.flash_wait_states = 3;
  CortexMOpCost fast_cost = CortexMKernelCost(w, Isa::kDsp, m4);
  CortexMOpCost slow_cost = CortexMKernelCost(w, Isa::kDsp, slow);
  CHECK(fast_cost.flash_wait_cycles == 0);
  // DSP convolution: one 4-byte weight load shared by two pixels = MACs / 8 loads.
  CHECK(slow_cost.flash_wait_cycles == Approx(3.0 * slow_cost.macs / 8));
  CHECK(slow_cost.cycles == Approx(fast_cost.cycles + slow_cost.flash_wait_cycles));

  // Armv6-M runs more instructions than Armv7-M for the same scalar kernel.
  CortexMConfig m0, m3;
  m0.cpu = "cortex-m0";
  m3.cpu = "cortex-m3";
  CHECK(CortexMKernelCost(w, Isa::kScalar, m0).instructions ==
        Approx(1.6 * CortexMKernelCost(w, Isa::kScalar, m3).instructions));

  // Float without an FPU is soft-float: far slower, and says so.
  CortexMWork f = w;
  f.dtype = DType::kFloat32;
  CortexMOpCost soft = CortexMKernelCost(f, Isa::kScalar, m3);
  CortexMOpCost hard = CortexMKernelCost(f, Isa::kDsp, m4);
  CHECK(soft.cycles > 5 * hard.cycles);
  bool noted = false;
  for (const std::string& n : soft.notes) noted |= n.find("soft-float") != std::string::npos;
  CHECK(noted);
  CHECK(soft.kernel.find("_f32") != std::string::npos);

  // Scratch comes from the kernels' own sizing for the same shape and variant.
  kernels::ConvParams cp;
  cp.input = {1, 16, 16, 32};
  cp.filter = {32, 3, 3, 32};
  cp.output = {1, 16, 16, 32};
  cp.padding = {1, 1};
  for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve}) {
    CHECK(CortexMKernelCost(w, isa, m4).scratch_bytes ==
          static_cast<int64_t>(kernels::ConvScratchBytes(cp, isa)));
  }
  CHECK(CortexMKernelCost(Conv(32, 32, 1, 8), Isa::kDsp, m4).kernel ==
        "arm_convolve_1x1_s8_fast/dsp");
}

// A small int8 graph: conv 3x3 (8->16) on 10x10, then a reshape and softmax.
Graph SmallGraph() {
  Graph g;
  g.source_format = ModelFormat::kBuilt;
  Subgraph sg;
  auto add_tensor = [&](const std::string& name, std::vector<int32_t> shape, DType dt) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = dt;
    t.quant.scale = {0.0625f};
    t.quant.zero_point = {0};
    sg.tensors.push_back(t);
    return static_cast<int32_t>(sg.tensors.size() - 1);
  };
  int32_t in = add_tensor("in", {1, 10, 10, 8}, DType::kInt8);
  int32_t w = add_tensor("w", {16, 3, 3, 8}, DType::kInt8);
  int32_t b = add_tensor("b", {16}, DType::kInt32);
  int32_t c = add_tensor("conv", {1, 10, 10, 16}, DType::kInt8);
  int32_t r = add_tensor("flat", {1, 1600}, DType::kInt8);
  int32_t o = add_tensor("out", {1, 1600}, DType::kInt8);
  sg.tensors[w].data = g.AddConstData(std::vector<uint8_t>(16 * 9 * 8, 1));
  sg.tensors[b].data = g.AddConstData(std::vector<uint8_t>(16 * 4, 0));
  Operator conv;
  conv.kind = OpKind::kConv2D;
  Conv2DAttrs ca;
  ca.padding = Padding::kSame;
  conv.attrs = ca;
  conv.inputs = {in, w, b};
  conv.outputs = {c};
  Operator reshape;
  reshape.kind = OpKind::kReshape;
  reshape.attrs = ReshapeAttrs{{1, 1600}};
  reshape.inputs = {c};
  reshape.outputs = {r};
  Operator softmax;
  softmax.kind = OpKind::kSoftmax;
  softmax.attrs = SoftmaxAttrs{1.0f};
  softmax.inputs = {r};
  softmax.outputs = {o};
  sg.ops = {conv, reshape, softmax};
  sg.inputs = {in};
  sg.outputs = {o};
  g.subgraphs.push_back(std::move(sg));
  return g;
}

TEST_CASE("Cortex-M whole-model estimate", "[cortex_m]") {
  Graph g = SmallGraph();
  auto p = FindTargetProfile("cortex-m4");
  REQUIRE(p.ok());
  auto e = EstimateCortexM(g, *p);
  REQUIRE(e.ok());
  REQUIRE(e->ops.size() == 3);
  // Op 0 is the kernel cost of a padded 3x3 conv.
  CortexMWork w = Conv(8, 16, 3, 10);
  CortexMOpCost expect = CortexMKernelCost(w, Isa::kDsp, p->cortex_m);
  CHECK(e->ops[0].kernel == "arm_convolve_s8/dsp");
  CHECK(e->ops[0].total_cycles == Approx(expect.cycles));
  CHECK(e->ops[0].macs == 100 * 16 * 72);
  CHECK(e->ops[2].kernel == "arm_softmax_s8/dsp");
  double sum = 0;
  for (const OpEstimate& o : e->ops) sum += o.total_cycles;
  CHECK(e->total_cycles == Approx(sum));
  CHECK(e->cpu_cycles == Approx(sum));
  CHECK(e->npu_cycles == 0);
  CHECK(e->macs == 100 * 16 * 72);
  // Arena by hand: in (800) and conv (1600) live together at op 0; conv and flat (1600) at
  // op 1; flat and out (1600) at op 2 -> peak 3200.
  CHECK(e->arena_bytes == 3200);
  kernels::ConvParams cp;
  cp.input = {1, 10, 10, 8};
  cp.filter = {16, 3, 3, 8};
  cp.output = {1, 10, 10, 16};
  cp.padding = {1, 1};
  CHECK(e->scratch_bytes == static_cast<int64_t>(kernels::ConvScratchBytes(cp, Isa::kDsp)));
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] == 3200 + e->scratch_bytes);
  CHECK(e->weights_original_bytes == 16 * 72 + 64);
  CHECK(e->code_bytes > kCortexMRuntimeCodeBytes);
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kOnChipFlash)] ==
        e->weights_original_bytes + e->code_bytes);
  CHECK(e->clock_hz == p->cortex_m.clock_hz);
}

TEST_CASE("Cortex-M estimate with mica's own kernels", "[cortex_m]") {
  Graph g = SmallGraph();
  auto p = FindTargetProfile("cortex-m4");
  REQUIRE(p.ok());
  auto tflm = EstimateCortexM(g, *p);
  auto mica = EstimateCortexM(g, *p, Runtime::kMica);
  REQUIRE(tflm.ok());
  REQUIRE(mica.ok());
  REQUIRE(mica->ops.size() == 3);
  CHECK(mica->ops[0].kernel == "mica_conv/dsp");
  CHECK(mica->ops[1].kernel == "mica_copy/dsp");
  CHECK(mica->ops[2].kernel == "mica_softmax/dsp");
  // The figures are the table's: the terms times the coefficients, plus the dispatch.
  auto w = DescribeCortexMWork(g, 0);
  REQUIRE(w.ok());
  const CortexMMicaTerms t = CortexMMicaTermsFor(*w, Isa::kDsp);
  std::array<double, kCortexMMicaTerms> coef{}, dispatch{};
  REQUIRE(CortexMMicaCoefficients(t.family, Isa::kDsp, &coef));
  REQUIRE(CortexMMicaCoefficients("dispatch", Isa::kDsp, &dispatch));
  double expect = dispatch[0];
  for (int i = 0; i < kCortexMMicaTerms; ++i) expect += coef[i] * t.terms[i];
  CHECK(mica->ops[0].compute_cycles == Approx(expect));
  CHECK(mica->ops[0].compute_cycles != Approx(tflm->ops[0].compute_cycles));
  // Memory and flash wait states do not depend on whose kernels run.
  CHECK(mica->arena_bytes == tflm->arena_bytes);
  CHECK(mica->ops[0].access_cycles[static_cast<int>(MemoryArea::kOnChipFlash)] ==
        Approx(tflm->ops[0].access_cycles[static_cast<int>(MemoryArea::kOnChipFlash)]));
  // More MACs never cost fewer instructions, on every variant.
  for (Isa isa : {Isa::kScalar, Isa::kDsp, Isa::kMve}) {
    double prev = 0;
    for (int c : {4, 8, 16, 32, 64, 128}) {
      const double cyc = CortexMKernelCost(Conv(c, 16, 3, 16), isa, p->cortex_m,
                                           Runtime::kMica).instructions;
      CHECK(cyc > prev);
      prev = cyc;
    }
  }
  // Work without a measured mica kernel keeps CMSIS-NN's cost and says so.
  CortexMWork mean;  // SUM: no calibration shape measures mica's reduce-sum
  mean.kind = OpKind::kSum;
  mean.elements = 64;
  mean.bytes = 4096;
  const CortexMOpCost m = CortexMKernelCost(mean, Isa::kDsp, p->cortex_m, Runtime::kMica);
  bool noted = false;
  for (const std::string& n : m.notes) noted |= n.find("no measured mica kernel") != std::string::npos;
  CHECK(noted);
  CHECK(m.instructions > CortexMKernelCost(mean, Isa::kDsp, p->cortex_m).instructions);
}

TEST_CASE("Cortex-M softmax diff_min follows TFLite's input radius", "[cortex_m]") {
  // CMSIS-NN reference cases: input scale 0.0625 -> -248, 0.15 -> -124 (beta 1).
  Graph g = SmallGraph();
  auto w = DescribeCortexMWork(g, 2);
  REQUIRE(w.ok());
  CHECK(w->softmax_diff_min == -248);
  g.main().tensors[4].quant.scale = {0.15f};
  w = DescribeCortexMWork(g, 2);
  REQUIRE(w.ok());
  CHECK(w->softmax_diff_min == -124);
  CHECK(w->rows == 1);
  CHECK(w->elements == 1600);
}

TEST_CASE("Cortex-M estimate rejects bad operators with a message", "[cortex_m]") {
  Graph g = SmallGraph();
  g.main().tensors[1].shape = {16, 72};  // conv filter of rank 2
  auto p = FindTargetProfile("cortex-m55");
  REQUIRE(p.ok());
  auto e = EstimateCortexM(g, *p);
  REQUIRE_FALSE(e.ok());
  CHECK(std::string(e.status().message()).find("operator 0 (CONV_2D)") != std::string::npos);
  CHECK(std::string(e.status().message()).find("filter 'w'") != std::string::npos);
}

}  // namespace
}  // namespace estimate
}  // namespace mica
