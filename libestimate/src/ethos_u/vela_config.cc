// Vela's named system configurations and memory modes (facts from Vela 5.1.0's vela.ini), and
// validation of an Ethos-U configuration.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {
namespace {

struct MemRow {
  MemoryArea area;
  double clock_scale;
  int32_t burst;
  int32_t read_latency;
  int32_t write_latency;
  int32_t ports;
  int32_t max_reads;
  int32_t max_writes;
};

struct SysRow {
  const char* name;
  double clock_hz;
  int32_t axi_width;
  MemRow axi0;
  MemRow axi1;
};

constexpr MemoryArea kS = MemoryArea::kSram;
constexpr MemoryArea kD = MemoryArea::kDram;
constexpr MemoryArea kF = MemoryArea::kOffChipFlash;

// name, core clock, AXI width (B/cycle/port), AXI0, AXI1:
// {area, clock scale, burst B, read latency, write latency, ports, max reads, max writes}.
const SysRow kSystems[] = {
    {"Ethos_U55_Deep_Embedded", 200e6, 8, {kS, 1.0, 32, 32, 32, 1, 8, 8},
     {kF, 0.0625, 128, 64, 0, 1, 2, 0}},
    {"Ethos_U55_High_End_Embedded", 500e6, 8, {kS, 1.0, 32, 32, 32, 1, 4, 4},
     {kF, 0.125, 128, 64, 0, 1, 2, 0}},
    {"Ethos_U65_Embedded", 500e6, 16, {kS, 1.0, 32, 32, 32, 1, 8, 8},
     {kF, 0.0625, 128, 64, 0, 1, 2, 0}},
    {"Ethos_U65_Mid_End", 500e6, 16, {kS, 1.0, 32, 32, 32, 1, 8, 8},
     {kD, 0.46875, 128, 500, 250, 1, 12, 6}},
    {"Ethos_U65_High_End", 1e9, 16, {kS, 1.0, 32, 32, 32, 1, 16, 16},
     {kD, 0.234375, 128, 500, 250, 1, 24, 12}},
    {"Ethos_U65_Client_Server", 1e9, 16, {kS, 1.0, 32, 32, 32, 1, 16, 16},
     {kD, 0.75, 128, 500, 250, 1, 24, 12}},
    {"Ethos_U85_SYS_Flash_Low", 200e6, 16, {kS, 1.0, 64, 8, 8, 2, 8, 8},
     {kF, 0.0625, 128, 32, 0, 1, 2, 0}},
    {"Ethos_U85_SYS_Flash_High", 500e6, 16, {kS, 1.0, 64, 32, 32, 2, 8, 8},
     {kF, 0.0625, 128, 64, 0, 1, 2, 0}},
    {"Ethos_U85_SYS_DRAM_Low", 500e6, 16, {kS, 1.0, 64, 16, 16, 2, 8, 8},
     {kD, 0.46875, 128, 500, 250, 1, 24, 12}},
    {"Ethos_U85_SYS_DRAM_Mid", 1e9, 16, {kS, 1.0, 64, 32, 32, 2, 8, 8},
     {kD, 0.75, 128, 500, 250, 1, 64, 32}},
    {"Ethos_U85_SYS_DRAM_High", 1e9, 16, {kS, 1.0, 64, 32, 32, 4, 8, 8},
     {kD, 0.75, 128, 500, 250, 2, 64, 32}},
};

struct ModeRow {
  const char* name;
  int32_t const_axi, arena_axi, cache_axi;
  int64_t cache_bytes;
};

// Vela 5.1.0's vela.ini leaves Dedicated_Sram's arena_cache_size unset, so Vela uses its largest
// address offset (no limit, 0 here); the _256KB/_384KB/_512KB modes inherit it with a size.
// (MLIA's own vela.ini adds arena_cache_size=393216 to Dedicated_Sram: the built-in profiles
// carry that size themselves.)
const ModeRow kModes[] = {
    {"Sram_Only", 0, 0, 0, 0},
    {"Shared_Sram", 1, 0, 0, 0},
    {"Dedicated_Sram", 1, 1, 0, 0},
    {"Dedicated_Sram_256KB", 1, 1, 0, 262144},
    {"Dedicated_Sram_384KB", 1, 1, 0, 393216},
    {"Dedicated_Sram_512KB", 1, 1, 0, 524288},
};

MemoryConfig ToMemory(const MemRow& r) {
  MemoryConfig m;
  m.area = r.area;
  m.clock_scale = r.clock_scale;
  m.burst_length = r.burst;
  m.read_latency = r.read_latency;
  m.write_latency = r.write_latency;
  m.ports_used = r.ports;
  m.max_reads = r.max_reads;
  m.max_writes = r.max_writes;
  return m;
}

}  // namespace

std::vector<std::string> VelaSystemConfigNames() {
  std::vector<std::string> names;
  for (const SysRow& r : kSystems) names.push_back(r.name);
  return names;
}

std::vector<std::string> VelaMemoryModeNames() {
  std::vector<std::string> names;
  for (const ModeRow& r : kModes) names.push_back(r.name);
  return names;
}

absl::StatusOr<SystemConfig> VelaSystemConfig(const std::string& name) {
  for (const SysRow& r : kSystems) {
    if (name != r.name) continue;
    SystemConfig s;
    s.name = r.name;
    s.core_clock_hz = r.clock_hz;
    s.axi_width_bytes = r.axi_width;
    s.axi0 = ToMemory(r.axi0);
    s.axi1 = ToMemory(r.axi1);
    return s;
  }
  return absl::NotFoundError(absl::StrCat("unknown Vela system config '", name, "' (known: ",
                                          absl::StrJoin(VelaSystemConfigNames(), ", "), ")"));
}

absl::StatusOr<MemoryMode> VelaMemoryMode(const std::string& name) {
  for (const ModeRow& r : kModes) {
    if (name != r.name) continue;
    MemoryMode m;
    m.name = r.name;
    m.const_axi = r.const_axi;
    m.arena_axi = r.arena_axi;
    m.cache_axi = r.cache_axi;
    m.arena_cache_bytes = r.cache_bytes;
    return m;
  }
  return absl::NotFoundError(absl::StrCat("unknown Vela memory mode '", name, "' (known: ",
                                          absl::StrJoin(VelaMemoryModeNames(), ", "), ")"));
}

bool VelaSystemConfigFits(EthosUFamily family, const std::string& name) {
  const char* prefix = family == EthosUFamily::kU55   ? "Ethos_U55_"
                       : family == EthosUFamily::kU65 ? "Ethos_U65_"
                                                      : "Ethos_U85_";
  return name.rfind(prefix, 0) == 0;
}

std::string VelaDefaultSystemConfigName(EthosUFamily family) {
  switch (family) {
    case EthosUFamily::kU55: return "Ethos_U55_High_End_Embedded";
    case EthosUFamily::kU65: return "Ethos_U65_Client_Server";
    case EthosUFamily::kU85: return "Ethos_U85_SYS_DRAM_Mid";
  }
  return "Ethos_U55_High_End_Embedded";
}

std::string VelaDefaultMemoryModeName(EthosUFamily family) {
  return family == EthosUFamily::kU55 ? "Shared_Sram" : "Dedicated_Sram_384KB";
}

namespace {

bool ValidMacs(EthosUFamily family, int32_t macs) {
  switch (family) {
    case EthosUFamily::kU55: return macs == 32 || macs == 64 || macs == 128 || macs == 256;
    case EthosUFamily::kU65: return macs == 256 || macs == 512;
    case EthosUFamily::kU85:
      return macs == 128 || macs == 256 || macs == 512 || macs == 1024 || macs == 2048;
  }
  return false;
}

absl::Status ValidateMemory(const MemoryConfig& m, const char* what) {
  if (!(m.clock_scale > 0) || m.clock_scale > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": clock_scale must be in (0, 64], got ", m.clock_scale));
  }
  if (m.burst_length < 1 || m.burst_length > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": burst_length must be in [1, 4096], got ", m.burst_length));
  }
  if (m.read_latency < 0 || m.write_latency < 0 || m.read_latency > 1000000 ||
      m.write_latency > 1000000) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": latencies must be in [0, 1e6]"));
  }
  if (m.ports_used < 1 || m.ports_used > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ports_used must be in [1, 64], got ", m.ports_used));
  }
  if (m.max_reads < 0 || m.max_writes < 0 || m.max_reads > 4096 || m.max_writes > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": max_reads/max_writes must be in [0, 4096]"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<EthosUConfig> DefaultEthosUConfig(EthosUFamily family, int32_t macs) {
  EthosUConfig c;
  c.family = family;
  c.macs = macs;
  MICA_ASSIGN_OR_RETURN(c.system, VelaSystemConfig(VelaDefaultSystemConfigName(family)));
  MICA_ASSIGN_OR_RETURN(c.memory_mode, VelaMemoryMode(VelaDefaultMemoryModeName(family)));
  MICA_RETURN_IF_ERROR(ValidateEthosUConfig(c));
  return c;
}

absl::Status ValidateEthosUConfig(const EthosUConfig& c) {
  if (!ValidMacs(c.family, c.macs)) {
    return absl::InvalidArgumentError(absl::StrCat(
        EthosUFamilyTitle(c.family), " has no ", c.macs,
        "-MAC configuration (U55: 32/64/128/256, U65: 256/512, U85: 128..2048)"));
  }
  if (!(c.system.core_clock_hz > 0) || c.system.core_clock_hz > 1e11) {
    return absl::InvalidArgumentError(
        absl::StrCat("system config '", c.system.name, "': core clock must be positive"));
  }
  if (c.system.axi_width_bytes < 1 || c.system.axi_width_bytes > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "system config '", c.system.name, "': axi_width_bytes must be in [1, 1024]"));
  }
  MICA_RETURN_IF_ERROR(ValidateMemory(c.system.axi0, "AXI0 memory"));
  MICA_RETURN_IF_ERROR(ValidateMemory(c.system.axi1, "AXI1 memory"));
  const MemoryMode& m = c.memory_mode;
  for (int32_t axi : {m.const_axi, m.arena_axi, m.cache_axi}) {
    if (axi != 0 && axi != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory mode '", m.name, "': AXI ports must be 0 or 1, got ", axi));
    }
  }
  if (m.arena_cache_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory mode '", m.name, "': arena_cache_bytes must be >= 0"));
  }
  const MemoryConfig& arena = m.arena_axi == 0 ? c.system.axi0 : c.system.axi1;
  const MemoryConfig& cache = m.cache_axi == 0 ? c.system.axi0 : c.system.axi1;
  for (const MemoryConfig* mem : {&arena, &cache}) {
    if (mem->area == MemoryArea::kOnChipFlash || mem->area == MemoryArea::kOffChipFlash) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory mode '", m.name, "' puts feature maps in read-only ", MemoryAreaName(mem->area),
          " of system config '", c.system.name, "' (use Shared_Sram or Sram_Only)"));
    }
  }
  return absl::OkStatus();
}

const char* EthosUFamilyTitle(EthosUFamily family) {
  switch (family) {
    case EthosUFamily::kU55: return "Ethos-U55";
    case EthosUFamily::kU65: return "Ethos-U65";
    case EthosUFamily::kU85: return "Ethos-U85";
  }
  return "Ethos-U";
}

}  // namespace estimate
}  // namespace mica
