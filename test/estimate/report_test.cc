// Report content: top operators, memory fit, advice order.
#include "mica/estimate/report.h"

#include <string>
#include <vector>

#include "testing/catch.h"

namespace mica {
namespace estimate {
namespace {

OpEstimate Op(int index, const char* name, double cycles, Bottleneck b = Bottleneck::kCompute,
              Placement p = Placement::kNpu) {
  OpEstimate o;
  o.op_index = index;
  o.op_name = name;
  o.output_name = std::string("out") + std::to_string(index);
  o.total_cycles = cycles;
  o.bottleneck = b;
  o.placement = p;
  return o;
}

Graph EmptyInt8Graph(int ops) {
  Graph g;
  Subgraph sg;
  Tensor t;
  t.dtype = DType::kInt8;
  t.shape = {1, 4};
  sg.tensors = {t, t};
  for (int i = 0; i < ops; ++i) {
    Operator op;
    op.kind = OpKind::kRelu;
    op.inputs = {0};
    op.outputs = {1};
    sg.ops.push_back(op);
  }
  g.subgraphs.push_back(sg);
  return g;
}

TEST_CASE("TopOperators sorts by cycles, keeps ties in order, drops zero-cost ops", "[report]") {
  Estimate e;
  e.ops = {Op(0, "A", 10), Op(1, "B", 50), Op(2, "C", 0), Op(3, "D", 50), Op(4, "E", 30)};
  e.total_cycles = 140;
  auto top = TopOperators(e, 3);
  REQUIRE(top.size() == 3);
  CHECK(top[0].op_index == 1);
  CHECK(top[1].op_index == 3);
  CHECK(top[2].op_index == 4);
  CHECK(top[0].share == Approx(50.0 / 140));
  CHECK(TopOperators(e, 10).size() == 4);
  CHECK(TopOperators(e, 0).empty());
}

TEST_CASE("MemoryFits compares with the profile's memories", "[report]") {
  auto p = FindTargetProfile("cortex-m0");  // 32 KiB SRAM, 256 KiB flash
  REQUIRE(p.ok());
  Estimate e;
  e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] = 40 * 1024;
  e.memory_used_bytes[static_cast<int>(MemoryArea::kOnChipFlash)] = 100 * 1024;
  auto fits = MemoryFits(e, *p);
  REQUIRE(fits.size() == 2);
  CHECK_FALSE(fits[0].fits());
  CHECK(fits[0].capacity_bytes == 32 * 1024);
  CHECK(fits[1].fits());
  auto u55 = FindTargetProfile("ethos-u55-256");  // Shared_Sram: no staging limit
  REQUIRE(u55.ok());
  CHECK(MemoryFits(e, *u55).empty());
}

TEST_CASE("Advice comes in the order a user should act", "[report]") {
  auto p = FindTargetProfile("ethos-u55-256");
  REQUIRE(p.ok());
  Estimate e;
  e.ops = {Op(0, "CONV_2D", 600, Bottleneck::kOffChipFlash), Op(1, "ADD", 100),
           Op(2, "CUSTOM_OP", 300, Bottleneck::kCompute, Placement::kCpu),
           Op(3, "CUSTOM_OP", 0, Bottleneck::kCompute, Placement::kCpu)};
  e.ops[2].reasons = {"'a;b;c/very/long/name/of/a/tensor/that/goes/on/and/on' is custom"};
  e.total_cycles = 1000;
  e.npu_cycles = 700;
  e.cpu_cycles = 300;
  e.npu_ops = 2;
  e.cpu_ops = 2;
  Graph g = EmptyInt8Graph(4);
  std::vector<Advice> advice = Advise(g, *p, e);
  REQUIRE(advice.size() >= 4);
  // Non-decreasing category: compatibility, then memory, then performance.
  for (size_t i = 1; i < advice.size(); ++i) {
    CHECK(static_cast<int>(advice[i - 1].category) <= static_cast<int>(advice[i].category));
  }
  CHECK(advice[0].category == AdviceCategory::kCompatibility);
  CHECK(advice[0].message.find("2 of 4 operators fall back") != std::string::npos);
  CHECK(advice[0].message.find("30%") != std::string::npos);
  CHECK(advice[1].message.find("CUSTOM_OP x2 (#2, #3)") != std::string::npos);
  CHECK(advice[1].message.find("is custom") != std::string::npos);
  CHECK(advice[1].message.find("'...") != std::string::npos);
  CHECK(advice[1].message.find("a;b;") == std::string::npos);
  bool memory = false, perf = false;
  for (const Advice& a : advice) {
    if (a.category == AdviceCategory::kMemory) {
      memory = true;
      CHECK(a.message.find("60% of the cycles") != std::string::npos);
      CHECK(a.message.find("off_chip_flash") != std::string::npos);
    }
    if (a.category == AdviceCategory::kPerformance &&
        a.message.find("#0 CONV_2D") != std::string::npos) {
      perf = true;
    }
  }
  CHECK(memory);
  CHECK(perf);
  for (const Advice& a : advice) CHECK(a.message.find('\n') == std::string::npos);
}

TEST_CASE("Advice reports a model that does not fit a Cortex-M", "[report]") {
  auto p = FindTargetProfile("cortex-m0");
  REQUIRE(p.ok());
  Estimate e;
  e.ops = {Op(0, "CONV_2D", 100), Op(1, "CONV_2D", 100)};
  e.total_cycles = 200;
  e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] = 64 * 1024;
  auto advice = Advise(EmptyInt8Graph(2), *p, e);
  REQUIRE_FALSE(advice.empty());
  CHECK(advice[0].category == AdviceCategory::kMemory);
  CHECK(advice[0].message.find("64.0 KiB of SRAM") != std::string::npos);
  CHECK(advice[0].message.find("32.0 KiB") != std::string::npos);
}

TEST_CASE("CompactNames shortens quoted tensor names only", "[report]") {
  CHECK(CompactNames("input 'a;b;conv/Relu' is float32") == "input 'conv/Relu' is float32");
  CHECK(CompactNames("no quotes here") == "no quotes here");
  CHECK(CompactNames("unbalanced 'quote") == "unbalanced 'quote");
  std::string longname(60, 'x');
  std::string shortened = CompactNames("'" + longname + "'");
  CHECK(shortened.size() == 42);
  CHECK(shortened.rfind("'...", 0) == 0);
}

TEST_CASE("MAC utilisation counts NPU MACs against the NPU's peak", "[report]") {
  auto p = FindTargetProfile("ethos-u55-128");
  REQUIRE(p.ok());
  Estimate e;
  e.ops = {Op(0, "CONV_2D", 100), Op(1, "FC", 100, Bottleneck::kCompute, Placement::kCpu)};
  e.ops[0].macs = 6400;
  e.ops[1].macs = 1000000;  // on the CPU: not counted
  e.npu_cycles = 100;
  CHECK(MacUtilisation(e, *p) == Approx(6400.0 / (100 * 128)));
  auto m = FindTargetProfile("cortex-m4");
  REQUIRE(m.ok());
  CHECK(MacUtilisation(e, *m) == 0);
}

}  // namespace
}  // namespace estimate
}  // namespace mica
