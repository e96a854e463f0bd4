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
  CHECK(advice[0].severity == AdviceSeverity::kWarning);
}

bool HasText(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const Advice* FindAdvice(const std::vector<Advice>& advice, const std::string& part) {
  for (const Advice& a : advice) {
    if (HasText(a.message, part)) return &a;
  }
  return nullptr;
}

TEST_CASE("Advice only suggests configurations mica accepts for the target", "[report]") {
  // U55, flash-bound: everything in SRAM (Sram_Only), never Dedicated_Sram (feature maps in
  // flash, which mica rejects for U55).
  auto u55 = FindTargetProfile("ethos-u55-256");
  REQUIRE(u55.ok());
  Estimate e;
  e.ops = {Op(0, "CONV_2D", 800, Bottleneck::kOffChipFlash), Op(1, "ADD", 200)};
  e.total_cycles = 1000;
  e.npu_cycles = 300;
  std::vector<Advice> advice = Advise(EmptyInt8Graph(2), *u55, e, "m.tflite");
  const Advice* flash = FindAdvice(advice, "limited by off_chip_flash");
  REQUIRE(flash != nullptr);
  CHECK(flash->severity == AdviceSeverity::kWarning);
  CHECK(flash->command == std::vector<std::string>{"check", "m.tflite", "--target-profile",
                                                   "ethos-u55-256:memory-mode=Sram_Only",
                                                   "--performance"});
  CHECK(HasText(flash->message,
                "`mica check m.tflite --target-profile ethos-u55-256:memory-mode=Sram_Only "
                "--performance`"));
  for (const Advice& a : advice) {
    CAPTURE(a.message);
    CHECK_FALSE(HasText(a.message, "Dedicated_Sram"));
  }

  // U65 (MLIA's Dedicated_Sram, 384 KiB staging) with 450 KiB of feature maps: the next named
  // Dedicated_Sram size; DRAM-bound: feature maps back in SRAM (Shared_Sram).
  auto u65 = FindTargetProfile("ethos-u65-512");
  REQUIRE(u65.ok());
  Estimate d;
  d.ops = {Op(0, "CONV_2D", 800, Bottleneck::kDram), Op(1, "ADD", 200)};
  d.total_cycles = 1000;
  d.npu_cycles = 300;
  d.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] = 450 * 1024;
  advice = Advise(EmptyInt8Graph(2), *u65, d, "m.tflite");
  const Advice* spill = FindAdvice(advice, "staging area spills");
  REQUIRE(spill != nullptr);
  CHECK(spill->severity == AdviceSeverity::kWarning);
  REQUIRE(spill->command.size() == 5);
  CHECK(spill->command[3] == "ethos-u65-512:memory-mode=Dedicated_Sram_512KB");
  const Advice* dram = FindAdvice(advice, "limited by dram");
  REQUIRE(dram != nullptr);
  REQUIRE(dram->command.size() == 5);
  CHECK(dram->command[3] == "ethos-u65-512:memory-mode=Shared_Sram");
  // Beyond Vela's named sizes: an explicit arena cache size, rounded up to 64 KiB.
  d.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] = 600 * 1024;
  advice = Advise(EmptyInt8Graph(2), *u65, d, "m.tflite");
  spill = FindAdvice(advice, "staging area spills");
  REQUIRE(spill != nullptr);
  REQUIRE(spill->command.size() == 5);
  CHECK(spill->command[3] == "ethos-u65-512:arena-cache-size=655360");
  // Every suggested profile resolves, with the suggested configuration.
  auto fixed = FindTargetProfileSpec(spill->command[3]);
  REQUIRE(fixed.ok());
  CHECK(fixed->ethos_u.memory_mode.arena_cache_bytes == 655360);
  CHECK(fixed->ethos_u.system.name == "Ethos_U65_High_End");

  // A profile given with options keeps them in the suggestion.
  auto custom = FindTargetProfileSpec("ethos-u65-512:system-config=Ethos_U65_Client_Server");
  REQUIRE(custom.ok());
  advice = Advise(EmptyInt8Graph(2), *custom, d, "m.tflite");
  spill = FindAdvice(advice, "staging area spills");
  REQUIRE(spill != nullptr);
  REQUIRE(spill->command.size() == 5);
  CHECK(spill->command[3] ==
        "ethos-u65-512:system-config=Ethos_U65_Client_Server,arena-cache-size=655360");

  // Low MAC utilisation: the next smaller NPU of the family, side by side.
  auto u85 = FindTargetProfile("ethos-u85-2048");
  REQUIRE(u85.ok());
  Estimate small;
  small.ops = {Op(0, "CONV_2D", 1000)};
  small.ops[0].macs = 1000;
  small.macs = 1000;
  small.total_cycles = 1000;
  small.npu_cycles = 1000;
  advice = Advise(EmptyInt8Graph(1), *u85, small, "m.tflite");
  const Advice* util = FindAdvice(advice, "MAC utilisation");
  REQUIRE(util != nullptr);
  CHECK(util->severity == AdviceSeverity::kInfo);
  CHECK(util->command == std::vector<std::string>{"check", "m.tflite", "--target-profile",
                                                  "ethos-u85-2048", "--target-profile",
                                                  "ethos-u85-1024", "--performance"});
  // The smallest configuration has nothing smaller to suggest.
  auto u55_32 = FindTargetProfile("ethos-u55-32");
  REQUIRE(u55_32.ok());
  advice = Advise(EmptyInt8Graph(1), *u55_32, small, "m.tflite");
  util = FindAdvice(advice, "MAC utilisation");
  if (util != nullptr) CHECK(util->command.empty());

  // A profile made in code has no command-line name: no command, prose only.
  TargetProfile anon = *u65;
  anon.cli_flag.clear();
  advice = Advise(EmptyInt8Graph(2), anon, d, "m.tflite");
  for (const Advice& a : advice) CHECK(a.command.empty());
}

TEST_CASE("Float models are told how to get an int8 model today", "[report]") {
  Graph g = EmptyInt8Graph(1);
  for (Tensor& t : g.subgraphs[0].tensors) t.dtype = DType::kFloat32;
  Estimate e;
  e.ops = {Op(0, "RELU", 100, Bottleneck::kCompute, Placement::kCpu)};
  e.total_cycles = 100;
  e.cpu_ops = 1;
  for (const char* name : {"ethos-u55-128", "cortex-m4"}) {
    CAPTURE(name);
    auto p = FindTargetProfile(name);
    REQUIRE(p.ok());
    std::vector<Advice> advice = Advise(g, *p, e, "m.tflite");
    REQUIRE_FALSE(advice.empty());
    CHECK(advice[0].category == AdviceCategory::kCompatibility);
    CHECK(advice[0].severity ==
          (p->kind == TargetKind::kEthosU ? AdviceSeverity::kError : AdviceSeverity::kWarning));
    CHECK(HasText(advice[0].message, "TFLITE_BUILTINS_INT8"));
    CHECK(HasText(advice[0].message, "`mica quantize m.tflite --calibration random -o m_int8.tflite`"));
    CHECK(advice[0].command == std::vector<std::string>{"quantize", "m.tflite", "--calibration",
                                                        "random", "-o", "m_int8.tflite"});
  }
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
  CHECK(advice[0].severity == AdviceSeverity::kError);
  CHECK(advice[0].command == std::vector<std::string>{"targets"});
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
