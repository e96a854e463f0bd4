// Target profiles: the built-ins (MLIA's configurations under MLIA's names), user profiles,
// per-profile options, and errors that name the file and the field.
#include "mica/estimate/target.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "mica/estimate/ethos_u.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("Built-in profiles: all eighteen parse, in display order", "[target]") {
  std::vector<std::string> names = BuiltinTargetNames();
  const std::vector<std::string> expected = {
      "ethos-u55-32",  "ethos-u55-64",   "ethos-u55-128",  "ethos-u55-256", "ethos-u65-256",
      "ethos-u65-512", "ethos-u85-128",  "ethos-u85-256",  "ethos-u85-512", "ethos-u85-1024",
      "ethos-u85-2048", "cortex-m0",     "cortex-m3",      "cortex-m4",     "cortex-m7",
      "cortex-m33",    "cortex-m55",     "cortex-m85"};
  CHECK(names == expected);
  std::vector<TargetProfile> all = BuiltinTargets();
  REQUIRE(all.size() == expected.size());
  for (const TargetProfile& p : all) {
    CAPTURE(p.name);
    CHECK(!p.description.empty());
    CHECK(p.clock_hz() > 0);
    CHECK(Contains(p.origin, "libestimate/targets/" + p.name + ".textproto"));
    if (p.kind == TargetKind::kEthosU) {
      // "ethos-u55-256" -> family u55, 256 MACs.
      std::string family = p.name.substr(6, 3);
      CHECK(family == EthosUFamilyName(p.ethos_u.family));
      CHECK(std::to_string(p.ethos_u.macs) == p.name.substr(10));
      CHECK(ValidateEthosUConfig(p.ethos_u).ok());
      CHECK(p.cortex_m.cpu == (p.ethos_u.family == EthosUFamily::kU55 ? "cortex-m55"
                                                                      : "cortex-m85"));
      CHECK(!p.ethos_u.platform.empty());
    } else {
      CHECK(p.cortex_m.cpu == p.name);
      CHECK(p.cortex_m.sram_bytes > 0);
      CHECK(p.cortex_m.flash_bytes > 0);
    }
  }
}

TEST_CASE("Built-in Ethos-U profiles mean MLIA's profiles of the same name", "[target]") {
  struct Row {
    const char* name;
    const char* system;
    const char* mode;
    int64_t arena_cache;
    double clock;
  };
  // MLIA's target-profile TOMLs (mlia-ethos-u 0.1.0; U55-32/64 as its U55 profiles), the cache
  // size of Dedicated_Sram from MLIA's vela.ini, the core clocks from vela.ini.
  const Row rows[] = {
      {"ethos-u55-32", "Ethos_U55_High_End_Embedded", "Shared_Sram", 0, 500e6},
      {"ethos-u55-64", "Ethos_U55_High_End_Embedded", "Shared_Sram", 0, 500e6},
      {"ethos-u55-128", "Ethos_U55_High_End_Embedded", "Shared_Sram", 0, 500e6},
      {"ethos-u55-256", "Ethos_U55_High_End_Embedded", "Shared_Sram", 0, 500e6},
      {"ethos-u65-256", "Ethos_U65_High_End", "Dedicated_Sram", 393216, 1e9},
      {"ethos-u65-512", "Ethos_U65_High_End", "Dedicated_Sram", 393216, 1e9},
      {"ethos-u85-128", "Ethos_U85_SYS_DRAM_Low", "Dedicated_Sram", 393216, 500e6},
      {"ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram", 393216, 1e9},
      {"ethos-u85-512", "Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram", 393216, 1e9},
      {"ethos-u85-1024", "Ethos_U85_SYS_DRAM_High", "Dedicated_Sram", 393216, 1e9},
      {"ethos-u85-2048", "Ethos_U85_SYS_DRAM_High", "Dedicated_Sram", 393216, 1e9},
  };
  for (const Row& r : rows) {
    CAPTURE(r.name);
    auto p = FindTargetProfile(r.name);
    REQUIRE(p.ok());
    CHECK(p->ethos_u.system.name == r.system);
    CHECK(p->ethos_u.memory_mode.name == r.mode);
    CHECK(p->ethos_u.memory_mode.arena_cache_bytes == r.arena_cache);
    CHECK(p->clock_hz() == r.clock);
    CHECK(p->cli_flag == "--target-profile");
    CHECK(p->cli_value == r.name);
  }
  auto u55 = FindTargetProfile("ethos-u55-256");
  REQUIRE(u55.ok());
  CHECK(u55->ethos_u.system.axi1.area == MemoryArea::kOffChipFlash);
  CHECK(u55->ethos_u.system.axi1.clock_scale == 0.125);
  CHECK(u55->ethos_u.memory_mode.const_axi == 1);
  CHECK(u55->ethos_u.memory_mode.arena_axi == 0);
  auto u65 = FindTargetProfile("ethos-u65-256");
  REQUIRE(u65.ok());
  CHECK(u65->ethos_u.system.axi1.area == MemoryArea::kDram);
  CHECK(u65->ethos_u.system.axi1.clock_scale == 0.234375);
  CHECK(u65->ethos_u.memory_mode.const_axi == 1);
  CHECK(u65->ethos_u.memory_mode.arena_axi == 1);
  CHECK(u65->ethos_u.memory_mode.cache_axi == 0);
}

TEST_CASE("Vela's memory modes: Dedicated_Sram has no cache limit, the sized ones do",
          "[target]") {
  // Vela 5.1.0's vela.ini: Dedicated_Sram sets no arena_cache_size; _256KB/_384KB/_512KB do.
  const std::pair<const char*, int64_t> rows[] = {{"Sram_Only", 0},
                                                  {"Shared_Sram", 0},
                                                  {"Dedicated_Sram", 0},
                                                  {"Dedicated_Sram_256KB", 262144},
                                                  {"Dedicated_Sram_384KB", 393216},
                                                  {"Dedicated_Sram_512KB", 524288}};
  for (const auto& [name, bytes] : rows) {
    CAPTURE(name);
    auto m = VelaMemoryMode(name);
    REQUIRE(m.ok());
    CHECK(m->arena_cache_bytes == bytes);
  }
  // Vela's command-line defaults stay available.
  CHECK(VelaDefaultSystemConfigName(EthosUFamily::kU65) == "Ethos_U65_Client_Server");
  CHECK(VelaDefaultMemoryModeName(EthosUFamily::kU85) == "Dedicated_Sram_384KB");
}

TEST_CASE("Built-in Cortex-M profiles have the CPU's features", "[target]") {
  struct Row {
    const char* name;
    bool dsp, mve, fpu;
  };
  const Row rows[] = {{"cortex-m0", false, false, false}, {"cortex-m3", false, false, false},
                      {"cortex-m4", true, false, true},   {"cortex-m7", true, false, true},
                      {"cortex-m33", true, false, true},  {"cortex-m55", true, true, true},
                      {"cortex-m85", true, true, true}};
  for (const Row& r : rows) {
    CAPTURE(r.name);
    auto p = FindTargetProfile(r.name);
    REQUIRE(p.ok());
    CHECK(p->kind == TargetKind::kCortexM);
    CHECK(p->cortex_m.has_dsp == r.dsp);
    CHECK(p->cortex_m.has_mve == r.mve);
    CHECK(p->cortex_m.has_fpu == r.fpu);
  }
}

TEST_CASE("Unknown profile names list the valid ones", "[target]") {
  auto p = FindTargetProfile("ethos-u99");
  REQUIRE_FALSE(p.ok());
  CHECK(absl::IsNotFound(p.status()));
  CHECK(Contains(std::string(p.status().message()), "ethos-u55-32"));
  CHECK(Contains(std::string(p.status().message()), "cortex-m85"));
}

TEST_CASE("User profiles start from a base and override fields", "[target]") {
  auto p = ParseTargetProfile(R"pb(
    base: "ethos-u55-128"
    name: "my-u55"
    ethos_u {
      system_config { name: "Ethos_U55_Deep_Embedded" axi1 { clock_scale: 0.25 } }
      memory_mode { name: "Sram_Only" }
    }
    host_cpu: "cortex-m85"
    host { clock_hz: 200e6 }
  )pb", "my.textproto");
  REQUIRE(p.ok());
  CHECK(p->name == "my-u55");
  CHECK(p->ethos_u.macs == 128);
  CHECK(p->ethos_u.system.core_clock_hz == 200e6);  // Deep_Embedded
  CHECK(p->ethos_u.system.axi1.clock_scale == 0.25);
  CHECK(Contains(p->ethos_u.system.name, "customised"));
  CHECK(p->ethos_u.memory_mode.name == "Sram_Only");
  CHECK(p->ethos_u.memory_mode.const_axi == 0);
  CHECK(p->cortex_m.cpu == "cortex-m85");
  CHECK(p->cortex_m.clock_hz == 200e6);
  CHECK(p->origin == "my.textproto");

  // From scratch: family defaults (Vela's) and the CPU's features.
  auto u85 = ParseTargetProfile("name: 'x' ethos_u { family: 'u85' macs: 512 }", "x.txt");
  REQUIRE(u85.ok());
  CHECK(u85->ethos_u.system.name == "Ethos_U85_SYS_DRAM_Mid");
  CHECK(u85->ethos_u.memory_mode.name == "Dedicated_Sram_384KB");
  auto m33 = ParseTargetProfile("name: 'b' cortex_m { cpu: 'cortex-m33' clock_hz: 64e6 }", "b");
  REQUIRE(m33.ok());
  CHECK(m33->cortex_m.has_dsp);
  CHECK_FALSE(m33->cortex_m.has_mve);
  CHECK(m33->clock_hz() == 64e6);
}

TEST_CASE("Profile errors name the file and the field", "[target]") {
  struct Case {
    const char* text;
    const char* expect;  // substring of the message after "f.textproto"
  };
  const Case cases[] = {
      {"name: 'a' ethos_u { family: 'u99' macs: 256 }", "field ethos_u.family"},
      {"name: 'a' ethos_u { family: 'u55' macs: 100 }", "field ethos_u"},
      {"name: 'a' ethos_u { family: 'u55' }", "field ethos_u.macs"},
      {"base: 'ethos-u55-256' ethos_u { memory_mode { name: 'Fast' } }",
       "field ethos_u.memory_mode.name"},
      {"base: 'ethos-u55-256' ethos_u { system_config { name: 'Big' } }",
       "field ethos_u.system_config.name"},
      {"base: 'ethos-u55-256' ethos_u { memory_mode { arena_axi: 3 } }",
       "field ethos_u.memory_mode.arena_axi"},
      {"base: 'ethos-u55-256' ethos_u { system_config { axi0 { area: 'tcm' } } }",
       "field ethos_u.system_config.axi0.area"},
      {"base: 'nope'", "field base"},
      {"base: 'cortex-m4' ethos_u { macs: 256 }", "field ethos_u"},
      {"base: 'cortex-m4' cortex_m { clock_hz: -1 }", "field cortex_m.clock_hz"},
      {"base: 'cortex-m4' cortex_m { mve: true }", "field cortex_m.mve"},
      {"name: 'a' cortex_m { cpu: 'cortex-m99' }", "field cortex_m.cpu"},
      {"base: 'cortex-m4' host_cpu: 'cortex-m55'", "field host_cpu"},
      {"base: 'ethos-u55-256' host_cpu: 'ethos-u55-32'", "field host_cpu"},
      {"name: 'a'", "needs `base"},
      {"ethos_u { family: 'u55' macs: 256 }", "field name"},
      {"base: 'cortex-m4' frequency: 3", "f.textproto:1:"},  // unknown field: line:column
      {"base: 'cortex-m4'\ncortex_m { clock_hz: }", "2:"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto p = ParseTargetProfile(c.text, "f.textproto");
    REQUIRE_FALSE(p.ok());
    std::string msg(p.status().message());
    CAPTURE(msg);
    CHECK(msg.rfind("f.textproto", 0) == 0);
    CHECK(Contains(msg, c.expect));
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("Profiles load from files", "[target]") {
  std::string dir = testing::TempDir("target_test");
  std::string path = dir + "/board.textproto";
  {
    std::ofstream f(path);
    f << "# a board\nbase: \"cortex-m7\"\nname: \"board\"\ncortex_m { flash_wait_states: 5 }\n";
  }
  auto p = LoadTargetProfileFile(path);
  REQUIRE(p.ok());
  CHECK(p->name == "board");
  CHECK(p->cortex_m.flash_wait_states == 5);
  CHECK(p->origin == path);
  auto missing = LoadTargetProfileFile(dir + "/missing.textproto");
  REQUIRE_FALSE(missing.ok());
  CHECK(Contains(std::string(missing.status().message()), "missing.textproto"));
}

TEST_CASE("SetVelaConfig switches to Vela's named configs and validates", "[target]") {
  auto p = FindTargetProfile("ethos-u65-512");
  REQUIRE(p.ok());
  REQUIRE(SetVelaConfig(&*p, "Ethos_U65_Client_Server", "Dedicated_Sram").ok());
  CHECK(p->ethos_u.system.name == "Ethos_U65_Client_Server");
  CHECK(p->ethos_u.memory_mode.arena_cache_bytes == 0);  // Vela's Dedicated_Sram
  // A system config of another family is refused, naming the family's own.
  auto u55 = FindTargetProfile("ethos-u55-256");
  REQUIRE(u55.ok());
  absl::Status wrong = SetVelaConfig(&*u55, "Ethos_U65_High_End", "");
  CHECK(absl::IsInvalidArgument(wrong));
  CHECK(Contains(std::string(wrong.message()), "Ethos_U55_Deep_Embedded"));
  // Dedicated_Sram puts U55 feature maps in flash: refused.
  CHECK_FALSE(SetVelaConfig(&*u55, "", "Dedicated_Sram").ok());
  // Feature maps in flash are refused.
  auto q = FindTargetProfile("ethos-u65-512");
  REQUIRE(q.ok());
  absl::Status s = SetVelaConfig(&*q, "Ethos_U65_Embedded", "");
  CHECK_FALSE(s.ok());
  CHECK(SetVelaConfig(&*q, "Ethos_U65_Embedded", "Shared_Sram").ok());
  CHECK(absl::IsNotFound(SetVelaConfig(&*q, "Nope", "")));
  auto m = FindTargetProfile("cortex-m4");
  REQUIRE(m.ok());
  CHECK(absl::IsInvalidArgument(SetVelaConfig(&*m, "Ethos_U55_Deep_Embedded", "")));
}

TEST_CASE("Profile specs carry their own Ethos-U configuration", "[target]") {
  auto p = FindTargetProfileSpec(
      "ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode=Dedicated_Sram_384KB");
  REQUIRE(p.ok());
  CHECK(p->name ==
        "ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode=Dedicated_Sram_384KB");
  CHECK(p->cli_value == "ethos-u65-512");
  CHECK(p->ethos_u.system.name == "Ethos_U65_Client_Server");
  CHECK(p->ethos_u.memory_mode.name == "Dedicated_Sram_384KB");
  CHECK(p->ethos_u.memory_mode.arena_cache_bytes == 393216);
  auto q = FindTargetProfileSpec("ethos-u85-256:memory-mode=Dedicated_Sram,arena-cache-size=0");
  REQUIRE(q.ok());
  CHECK(q->ethos_u.system.name == "Ethos_U85_SYS_DRAM_Mid");
  CHECK(q->ethos_u.memory_mode.arena_cache_bytes == 0);
  auto plain = FindTargetProfileSpec("ethos-u55-64");
  REQUIRE(plain.ok());
  CHECK(plain->name == "ethos-u55-64");

  std::string name;
  ProfileOptions o;
  REQUIRE(SplitProfileSpec("C:/boards/x.textproto", &name, &o).ok());  // no '=': a path
  CHECK(name == "C:/boards/x.textproto");
  CHECK(o.empty());
  REQUIRE(SplitProfileSpec("b.textproto:arena-cache-size=1024", &name, &o).ok());
  CHECK(name == "b.textproto");
  CHECK(o.arena_cache_bytes == 1024);
  CHECK(ProfileOptionsText(o) == "arena-cache-size=1024");

  const std::pair<const char*, const char*> bad[] = {
      {"ethos-u65-512:memory=Sram_Only", "unknown option 'memory'"},
      {"ethos-u65-512:memory-mode=Sram_Only,memory-mode=Shared_Sram", "given twice"},
      {"ethos-u65-512:memory-mode=", "needs a value"},
      {"ethos-u65-512:arena-cache-size=big", "byte count"},
      {"ethos-u55-256:system-config=Ethos_U65_High_End", "not for"},
      {"ethos-u55-256:memory-mode=Dedicated_Sram", "flash"},
      {"ethos-u55-256:memory-mode=Fast", "unknown Vela memory mode"},
      {"cortex-m4:memory-mode=Sram_Only", "Cortex-M"},
      {"ethos-u99:memory-mode=Sram_Only", "unknown target profile"},
  };
  for (const auto& [spec, expect] : bad) {
    CAPTURE(spec);
    auto r = FindTargetProfileSpec(spec);
    REQUIRE_FALSE(r.ok());
    CAPTURE(r.status().message());
    CHECK(Contains(std::string(r.status().message()), expect));
    CHECK(std::string(r.status().message()).find('\n') == std::string::npos);
  }
}

TEST_CASE("A profile file's arena cache size keeps the mode's name, a named system must fit",
          "[target]") {
  auto p = ParseTargetProfile(
      "base: 'ethos-u65-256' ethos_u { memory_mode { name: 'Dedicated_Sram' "
      "arena_cache_bytes: 131072 } }",
      "c.textproto");
  REQUIRE(p.ok());
  CHECK(p->ethos_u.memory_mode.name == "Dedicated_Sram");
  CHECK(p->ethos_u.memory_mode.arena_cache_bytes == 131072);
  auto moved = ParseTargetProfile(
      "base: 'ethos-u65-256' ethos_u { memory_mode { arena_axi: 0 } }", "c.textproto");
  REQUIRE(moved.ok());
  CHECK(Contains(moved->ethos_u.memory_mode.name, "customised"));
  auto wrong = ParseTargetProfile(
      "base: 'ethos-u55-256' ethos_u { system_config { name: 'Ethos_U85_SYS_DRAM_Mid' } }",
      "c.textproto");
  REQUIRE_FALSE(wrong.ok());
  CHECK(Contains(std::string(wrong.status().message()), "field ethos_u.system_config.name"));
}

}  // namespace
}  // namespace estimate
}  // namespace mica
