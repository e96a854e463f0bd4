// Target profiles: parsing protobuf text (target.proto), the built-in profiles embedded at build
// time (target_data.cc, generated from libestimate/targets/*.textproto), and validation.
#include "mica/estimate/target.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"
#include "target.pb.h"
#include "target_data.h"

namespace mica {
namespace estimate {
namespace {

namespace pb = ::mica::estimate::config;

// Largest profile file accepted (profiles are a few hundred bytes).
constexpr size_t kMaxProfileBytes = 1 << 20;

class CollectFirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat(line + 1, ":", column + 1, ": ", message);
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

absl::Status FieldError(const std::string& origin, const std::string& field,
                        const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(origin, ": field ", field, ": ", what));
}

struct CpuTraits {
  const char* name;
  bool dsp, mve, fpu;
};

// Architectural features of each Cortex-M mica models (the defaults when a profile names the CPU
// without flags; M4 is assumed to be the common M4F).
constexpr CpuTraits kCpus[] = {
    {"cortex-m0", false, false, false},  {"cortex-m3", false, false, false},
    {"cortex-m4", true, false, true},    {"cortex-m7", true, false, true},
    {"cortex-m33", true, false, true},   {"cortex-m55", true, true, true},
    {"cortex-m85", true, true, true},
};

const CpuTraits* FindCpu(const std::string& name) {
  for (const CpuTraits& c : kCpus) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

absl::StatusOr<MemoryArea> ParseArea(const std::string& s, const std::string& origin,
                                     const std::string& field) {
  for (MemoryArea a : {MemoryArea::kSram, MemoryArea::kDram, MemoryArea::kOnChipFlash,
                       MemoryArea::kOffChipFlash}) {
    if (s == MemoryAreaName(a)) return a;
  }
  return FieldError(origin, field,
                    absl::StrCat("unknown memory area '", s,
                                 "' (valid: sram, dram, on_chip_flash, off_chip_flash)"));
}

// Clocks a profile may declare: 1 kHz to 10 GHz. Outside it the figures are meaningless (a
// 1e-300 Hz clock would print a 310-digit inference time).
constexpr double kMinClockHz = 1e3;
constexpr double kMaxClockHz = 1e10;

bool ClockInRange(double hz) { return hz >= kMinClockHz && hz <= kMaxClockHz; }

std::string ClockRangeText(double hz) {
  return absl::StrCat("must be in [1e3, 1e10] Hz (1 kHz to 10 GHz), got ", hz);
}

absl::Status ApplyMemory(const pb::Memory& m, MemoryConfig* out, const std::string& origin,
                         const std::string& field) {
  if (m.has_area()) {
    MICA_ASSIGN_OR_RETURN(out->area, ParseArea(m.area(), origin, field + ".area"));
  }
  if (m.has_clock_scale()) out->clock_scale = m.clock_scale();
  if (m.has_burst_length()) out->burst_length = m.burst_length();
  if (m.has_read_latency()) out->read_latency = m.read_latency();
  if (m.has_write_latency()) out->write_latency = m.write_latency();
  if (m.has_ports_used()) out->ports_used = m.ports_used();
  if (m.has_max_reads()) out->max_reads = m.max_reads();
  if (m.has_max_writes()) out->max_writes = m.max_writes();
  return absl::OkStatus();
}

absl::Status ApplyEthosU(const pb::EthosU& e, bool from_scratch, EthosUConfig* out,
                         const std::string& origin) {
  if (e.has_family()) {
    if (e.family() == "u55") {
      out->family = EthosUFamily::kU55;
    } else if (e.family() == "u65") {
      out->family = EthosUFamily::kU65;
    } else if (e.family() == "u85") {
      out->family = EthosUFamily::kU85;
    } else {
      return FieldError(origin, "ethos_u.family",
                        absl::StrCat("unknown family '", e.family(), "' (valid: u55, u65, u85)"));
    }
  } else if (from_scratch) {
    return FieldError(origin, "ethos_u.family", "required (u55, u65 or u85)");
  }
  if (e.has_macs()) {
    out->macs = e.macs();
  } else if (from_scratch) {
    return FieldError(origin, "ethos_u.macs", "required (MACs per cycle)");
  }
  if (e.has_platform()) out->platform = e.platform();

  // System config: a named Vela config (or the family default for a new profile), then fields.
  const pb::SystemConfig& sc = e.system_config();
  std::string sys_name = sc.has_name() ? sc.name()
                         : from_scratch ? VelaDefaultSystemConfigName(out->family)
                                        : std::string();
  if (!sys_name.empty()) {
    absl::StatusOr<SystemConfig> s = VelaSystemConfig(sys_name);
    if (!s.ok()) {
      return FieldError(origin, "ethos_u.system_config.name", std::string(s.status().message()));
    }
    if (!VelaSystemConfigFits(out->family, sys_name)) {
      return FieldError(origin, "ethos_u.system_config.name",
                        absl::StrCat("'", sys_name, "' is not an Ethos-",
                                     absl::AsciiStrToUpper(EthosUFamilyName(out->family)),
                                     " system config"));
    }
    out->system = *s;
  }
  bool sys_edited = sc.has_core_clock_hz() || sc.has_axi_width_bytes() || sc.has_axi0() ||
                    sc.has_axi1();
  if (sc.has_core_clock_hz()) {
    if (!ClockInRange(sc.core_clock_hz())) {
      return FieldError(origin, "ethos_u.system_config.core_clock_hz",
                        ClockRangeText(sc.core_clock_hz()));
    }
    out->system.core_clock_hz = sc.core_clock_hz();
  }
  if (sc.has_axi_width_bytes()) out->system.axi_width_bytes = sc.axi_width_bytes();
  if (sc.has_axi0()) {
    MICA_RETURN_IF_ERROR(
        ApplyMemory(sc.axi0(), &out->system.axi0, origin, "ethos_u.system_config.axi0"));
  }
  if (sc.has_axi1()) {
    MICA_RETURN_IF_ERROR(
        ApplyMemory(sc.axi1(), &out->system.axi1, origin, "ethos_u.system_config.axi1"));
  }
  if (sys_edited) out->system.name += " (customised)";

  const pb::MemoryMode& mm = e.memory_mode();
  std::string mode_name = mm.has_name() ? mm.name()
                          : from_scratch ? VelaDefaultMemoryModeName(out->family)
                                         : std::string();
  if (!mode_name.empty()) {
    absl::StatusOr<MemoryMode> m = VelaMemoryMode(mode_name);
    if (!m.ok()) {
      return FieldError(origin, "ethos_u.memory_mode.name", std::string(m.status().message()));
    }
    out->memory_mode = *m;
  }
  // A different arena cache size keeps the mode's name (as Vela's --arena-cache-size does; the
  // size is shown beside the name); moved AXI ports make it a customised mode.
  bool mode_edited = mm.has_const_axi() || mm.has_arena_axi() || mm.has_cache_axi();
  auto axi = [&](bool has, int32_t v, int32_t* dst, const char* f) -> absl::Status {
    if (!has) return absl::OkStatus();
    if (v != 0 && v != 1) {
      return FieldError(origin, absl::StrCat("ethos_u.memory_mode.", f),
                        absl::StrCat("must be 0 or 1 (AXI port), got ", v));
    }
    *dst = v;
    return absl::OkStatus();
  };
  MICA_RETURN_IF_ERROR(axi(mm.has_const_axi(), mm.const_axi(), &out->memory_mode.const_axi,
                           "const_axi"));
  MICA_RETURN_IF_ERROR(axi(mm.has_arena_axi(), mm.arena_axi(), &out->memory_mode.arena_axi,
                           "arena_axi"));
  MICA_RETURN_IF_ERROR(axi(mm.has_cache_axi(), mm.cache_axi(), &out->memory_mode.cache_axi,
                           "cache_axi"));
  if (mm.has_arena_cache_bytes()) {
    if (mm.arena_cache_bytes() < 0) {
      return FieldError(origin, "ethos_u.memory_mode.arena_cache_bytes", "must be >= 0");
    }
    out->memory_mode.arena_cache_bytes = mm.arena_cache_bytes();
  }
  if (mode_edited) out->memory_mode.name += " (customised)";
  return absl::OkStatus();
}

absl::Status ApplyCortexM(const pb::CortexM& c, bool from_scratch, CortexMConfig* out,
                          const std::string& origin, const std::string& field) {
  if (c.has_cpu()) {
    const CpuTraits* t = FindCpu(c.cpu());
    if (t == nullptr) {
      return FieldError(origin, field + ".cpu",
                        absl::StrCat("unknown CPU '", c.cpu(), "' (valid: ",
                                     absl::StrJoin(CortexMCpuNames(), ", "), ")"));
    }
    if (c.cpu() != out->cpu) {
      // A different CPU: start from its architectural features.
      out->cpu = t->name;
      out->has_dsp = t->dsp;
      out->has_mve = t->mve;
      out->has_fpu = t->fpu;
    }
  } else if (from_scratch) {
    return FieldError(origin, field + ".cpu", "required (e.g. \"cortex-m55\")");
  }
  if (c.has_dsp()) out->has_dsp = c.dsp();
  if (c.has_mve()) out->has_mve = c.mve();
  if (c.has_fpu()) out->has_fpu = c.fpu();
  if (c.has_clock_hz()) out->clock_hz = c.clock_hz();
  if (c.has_sram_bytes()) out->sram_bytes = c.sram_bytes();
  if (c.has_flash_bytes()) out->flash_bytes = c.flash_bytes();
  if (c.has_flash_wait_states()) out->flash_wait_states = c.flash_wait_states();

  if (!ClockInRange(out->clock_hz)) {
    return FieldError(origin, field + ".clock_hz", ClockRangeText(out->clock_hz));
  }
  if (out->sram_bytes < 0 || out->flash_bytes < 0) {
    return FieldError(origin, field + (out->sram_bytes < 0 ? ".sram_bytes" : ".flash_bytes"),
                      "must be >= 0");
  }
  if (out->flash_wait_states < 0 || out->flash_wait_states > 64) {
    return FieldError(origin, field + ".flash_wait_states",
                      absl::StrCat("must be in [0, 64], got ", out->flash_wait_states));
  }
  if (out->has_mve && (out->cpu != "cortex-m55" && out->cpu != "cortex-m85")) {
    return FieldError(origin, field + ".mve",
                      absl::StrCat(out->cpu, " has no M-profile Vector Extension"));
  }
  if (out->has_mve && !out->has_dsp) {
    return FieldError(origin, field + ".dsp", "MVE implies the DSP extension");
  }
  if (out->has_dsp && (out->cpu == "cortex-m0" || out->cpu == "cortex-m3")) {
    return FieldError(origin, field + ".dsp",
                      absl::StrCat(out->cpu, " has no DSP extension"));
  }
  return absl::OkStatus();
}

std::vector<std::string> FamilySystemConfigs(EthosUFamily family) {
  std::vector<std::string> names;
  for (const std::string& n : VelaSystemConfigNames()) {
    if (VelaSystemConfigFits(family, n)) names.push_back(n);
  }
  return names;
}

absl::StatusOr<TargetProfile> FindBuiltin(const std::string& name, const std::string& origin,
                                          const std::string& field) {
  absl::StatusOr<TargetProfile> p = FindTargetProfile(name);
  if (!p.ok() && absl::IsNotFound(p.status())) {
    return FieldError(origin, field, std::string(p.status().message()));
  }
  return p;
}

}  // namespace

const char* EthosUFamilyName(EthosUFamily f) {
  switch (f) {
    case EthosUFamily::kU55: return "u55";
    case EthosUFamily::kU65: return "u65";
    case EthosUFamily::kU85: return "u85";
  }
  return "u55";
}

std::vector<std::string> CortexMCpuNames() {
  std::vector<std::string> names;
  for (const CpuTraits& c : kCpus) names.push_back(c.name);
  return names;
}

absl::StatusOr<TargetProfile> ParseTargetProfile(const std::string& text,
                                                 const std::string& origin) {
  pb::TargetProfile msg;
  google::protobuf::TextFormat::Parser parser;
  CollectFirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &msg)) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ":", errors.error().empty() ? "invalid protobuf text" : errors.error()));
  }

  TargetProfile p;
  bool from_scratch = !msg.has_base();
  if (msg.has_base()) {
    MICA_ASSIGN_OR_RETURN(p, FindBuiltin(msg.base(), origin, "base"));
  } else if (msg.target_case() == pb::TargetProfile::TARGET_NOT_SET) {
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": a profile needs `base: \"<built-in name>\"`, `ethos_u { ... }` or "
                "`cortex_m { ... }`"));
  }
  p.origin = origin;
  if (msg.has_name()) {
    if (msg.name().empty()) return FieldError(origin, "name", "must not be empty");
    p.name = msg.name();
  } else if (from_scratch) {
    return FieldError(origin, "name", "required");
  }
  if (msg.has_description()) p.description = msg.description();

  if (msg.has_ethos_u()) {
    if (!from_scratch && p.kind != TargetKind::kEthosU) {
      return FieldError(origin, "ethos_u",
                        absl::StrCat("base '", msg.base(), "' is a Cortex-M profile"));
    }
    p.kind = TargetKind::kEthosU;
    MICA_RETURN_IF_ERROR(ApplyEthosU(msg.ethos_u(), from_scratch, &p.ethos_u, origin));
  } else if (msg.has_cortex_m()) {
    if (!from_scratch && p.kind != TargetKind::kCortexM) {
      return FieldError(origin, "cortex_m",
                        absl::StrCat("base '", msg.base(), "' is an Ethos-U profile"));
    }
    p.kind = TargetKind::kCortexM;
    MICA_RETURN_IF_ERROR(
        ApplyCortexM(msg.cortex_m(), from_scratch, &p.cortex_m, origin, "cortex_m"));
  }

  if (p.kind == TargetKind::kEthosU) {
    if (msg.has_host_cpu()) {
      MICA_ASSIGN_OR_RETURN(TargetProfile host, FindBuiltin(msg.host_cpu(), origin, "host_cpu"));
      if (host.kind != TargetKind::kCortexM) {
        return FieldError(origin, "host_cpu",
                          absl::StrCat("'", msg.host_cpu(), "' is not a Cortex-M profile"));
      }
      p.cortex_m = host.cortex_m;
    } else if (from_scratch) {
      MICA_ASSIGN_OR_RETURN(TargetProfile host, FindTargetProfile("cortex-m55"));
      p.cortex_m = host.cortex_m;
    }
    if (msg.has_host()) {
      MICA_RETURN_IF_ERROR(ApplyCortexM(msg.host(), false, &p.cortex_m, origin, "host"));
    }
    absl::Status valid = ValidateEthosUConfig(p.ethos_u);
    if (!valid.ok()) {
      return FieldError(origin, "ethos_u", std::string(valid.message()));
    }
  } else {
    if (msg.has_host_cpu() || msg.has_host()) {
      return FieldError(origin, msg.has_host_cpu() ? "host_cpu" : "host",
                        "only Ethos-U profiles have a host CPU");
    }
  }
  return p;
}

std::vector<std::string> BuiltinTargetNames() {
  std::vector<std::string> names;
  for (int i = 0; i < kNumBuiltinTargets; ++i) names.push_back(kBuiltinTargets[i].name);
  return names;
}

absl::StatusOr<TargetProfile> FindTargetProfile(const std::string& name) {
  for (int i = 0; i < kNumBuiltinTargets; ++i) {
    if (name == kBuiltinTargets[i].name) {
      MICA_ASSIGN_OR_RETURN(TargetProfile p,
                            ParseTargetProfile(kBuiltinTargets[i].text, kBuiltinTargets[i].origin));
      p.cli_flag = "--target-profile";
      p.cli_value = name;
      return p;
    }
  }
  return absl::NotFoundError(absl::StrCat("unknown target profile '", name, "' (valid: ",
                                          absl::StrJoin(BuiltinTargetNames(), ", "), ")"));
}

std::vector<TargetProfile> BuiltinTargets() {
  std::vector<TargetProfile> out;
  for (int i = 0; i < kNumBuiltinTargets; ++i) {
    absl::StatusOr<TargetProfile> p = FindTargetProfile(kBuiltinTargets[i].name);
    if (p.ok()) out.push_back(*std::move(p));
  }
  return out;
}

absl::StatusOr<TargetProfile> LoadTargetProfileFile(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(std::shared_ptr<const std::vector<uint8_t>> bytes, ReadFileBytes(path));
  if (bytes->size() > kMaxProfileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": target profile larger than ", kMaxProfileBytes, " bytes"));
  }
  MICA_ASSIGN_OR_RETURN(TargetProfile p,
                        ParseTargetProfile(std::string(bytes->begin(), bytes->end()), path));
  p.cli_flag = "--target-config";
  p.cli_value = path;
  return p;
}

absl::Status SetVelaConfig(TargetProfile* profile, const std::string& system_config,
                           const std::string& memory_mode) {
  if (profile->kind != TargetKind::kEthosU) {
    return absl::InvalidArgumentError(
        absl::StrCat("--system-config/--memory-mode apply to Ethos-U profiles; '", profile->name,
                     "' is a Cortex-M profile"));
  }
  if (!system_config.empty()) {
    MICA_ASSIGN_OR_RETURN(SystemConfig sys, VelaSystemConfig(system_config));
    if (!VelaSystemConfigFits(profile->ethos_u.family, system_config)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "system config ", system_config, " is not for ", profile->name, " (an Ethos-",
          absl::AsciiStrToUpper(EthosUFamilyName(profile->ethos_u.family)),
          "; its system configs: ",
          absl::StrJoin(FamilySystemConfigs(profile->ethos_u.family), ", "), ")"));
    }
    profile->ethos_u.system = std::move(sys);
  }
  if (!memory_mode.empty()) {
    MICA_ASSIGN_OR_RETURN(profile->ethos_u.memory_mode, VelaMemoryMode(memory_mode));
  }
  absl::Status valid = ValidateEthosUConfig(profile->ethos_u);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        profile->name, " with system config ", profile->ethos_u.system.name, " and memory mode ",
        profile->ethos_u.memory_mode.name, ": ", valid.message()));
  }
  return absl::OkStatus();
}

absl::Status SplitProfileSpec(const std::string& spec, std::string* name,
                              ProfileOptions* options) {
  *options = ProfileOptions();
  const size_t colon = spec.rfind(':');
  if (colon == std::string::npos || colon == 0 ||
      spec.find('=', colon) == std::string::npos) {
    *name = spec;
    return absl::OkStatus();
  }
  *name = spec.substr(0, colon);
  bool seen_sys = false, seen_mode = false, seen_cache = false;
  for (absl::string_view item : absl::StrSplit(spec.substr(colon + 1), ',')) {
    const size_t eq = item.find('=');
    const std::string key(item.substr(0, eq == absl::string_view::npos ? item.size() : eq));
    const std::string value(eq == absl::string_view::npos ? absl::string_view()
                                                          : item.substr(eq + 1));
    auto bad = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat("target profile '", spec, "': ", what));
    };
    bool* seen = key == "system-config"      ? &seen_sys
                 : key == "memory-mode"      ? &seen_mode
                 : key == "arena-cache-size" ? &seen_cache
                                             : nullptr;
    if (seen == nullptr) {
      return bad(absl::StrCat("unknown option '", key,
                              "' (valid: system-config, memory-mode, arena-cache-size)"));
    }
    if (*seen) return bad(absl::StrCat("option '", key, "' given twice"));
    *seen = true;
    if (value.empty()) return bad(absl::StrCat("option '", key, "' needs a value (", key, "=...)"));
    if (key == "system-config") {
      options->system_config = value;
    } else if (key == "memory-mode") {
      options->memory_mode = value;
    } else {
      int64_t bytes = 0;
      if (!absl::SimpleAtoi(value, &bytes) || bytes < 0 || bytes > (int64_t{1} << 40)) {
        return bad(absl::StrCat("arena-cache-size must be a byte count in [0, 2^40], got '",
                                value, "'"));
      }
      options->arena_cache_bytes = bytes;
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyProfileOptions(TargetProfile* profile, const ProfileOptions& options) {
  if (options.empty()) return absl::OkStatus();
  if (profile->kind != TargetKind::kEthosU) {
    return absl::InvalidArgumentError(
        absl::StrCat("system-config/memory-mode/arena-cache-size apply to Ethos-U profiles; '",
                     profile->name, "' is a Cortex-M profile"));
  }
  MICA_RETURN_IF_ERROR(SetVelaConfig(profile, options.system_config, options.memory_mode));
  if (options.arena_cache_bytes >= 0) {
    profile->ethos_u.memory_mode.arena_cache_bytes = options.arena_cache_bytes;
  }
  return absl::OkStatus();
}

absl::StatusOr<TargetProfile> FindTargetProfileSpec(const std::string& spec) {
  std::string name;
  ProfileOptions options;
  MICA_RETURN_IF_ERROR(SplitProfileSpec(spec, &name, &options));
  MICA_ASSIGN_OR_RETURN(TargetProfile p, FindTargetProfile(name));
  if (options.empty()) return p;
  p.name = spec;
  MICA_RETURN_IF_ERROR(ApplyProfileOptions(&p, options));
  return p;
}

std::string ProfileOptionsText(const ProfileOptions& options) {
  std::vector<std::string> parts;
  if (!options.system_config.empty()) parts.push_back("system-config=" + options.system_config);
  if (!options.memory_mode.empty()) parts.push_back("memory-mode=" + options.memory_mode);
  if (options.arena_cache_bytes >= 0) {
    parts.push_back(absl::StrCat("arena-cache-size=", options.arena_cache_bytes));
  }
  return absl::StrJoin(parts, ",");
}

}  // namespace estimate
}  // namespace mica
