// mica estimate — target profiles: what hardware a model is checked against.
//
// A TargetProfile is either an Ethos-U NPU (with the Cortex-M host that runs what the NPU
// cannot) or a Cortex-M CPU alone. Profiles ship with mica as protobuf text files
// (libestimate/targets/*.textproto) and can be overridden with --target-config FILE.
//
//   MICA_ASSIGN_OR_RETURN(mica::estimate::TargetProfile p,
//                         mica::estimate::FindTargetProfile("ethos-u55-256"));
//   double seconds = cycles / p.clock_hz();
#ifndef MICA_ESTIMATE_TARGET_H_
#define MICA_ESTIMATE_TARGET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mica {
namespace estimate {

enum class TargetKind : uint8_t { kEthosU, kCortexM };
enum class EthosUFamily : uint8_t { kU55, kU65, kU85 };

// Memory areas an NPU or CPU reads and writes.
enum class MemoryArea : uint8_t { kSram, kDram, kOnChipFlash, kOffChipFlash };
inline constexpr int kNumMemoryAreas = 4;
// Returns "sram", "dram", "on_chip_flash", "off_chip_flash".
const char* MemoryAreaName(MemoryArea a);

// One memory as a system configuration describes it (vela.ini's [Memory] fields).
struct MemoryConfig {
  MemoryArea area = MemoryArea::kSram;
  double clock_scale = 1.0;    // fraction of the NPU core clock
  int32_t burst_length = 64;   // bytes
  int32_t read_latency = 1;    // NPU cycles
  int32_t write_latency = 1;   // NPU cycles
  int32_t ports_used = 1;
  int32_t max_reads = 1;       // outstanding transactions
  int32_t max_writes = 1;
};

// A system configuration: core clock and what sits on the two AXI ports.
struct SystemConfig {
  std::string name;             // e.g. "Ethos_U55_High_End_Embedded"
  double core_clock_hz = 500e6;
  int32_t axi_width_bytes = 8;  // per port per cycle: 8 on U55, 16 on U65/U85
  MemoryConfig axi0;            // usually SRAM
  MemoryConfig axi1;            // flash or DRAM
};

// A memory mode: which AXI port holds weights, feature maps and the staging cache.
struct MemoryMode {
  std::string name;          // e.g. "Shared_Sram", "Dedicated_Sram_384KB"
  int32_t const_axi = 1;     // port of constant data (weights, biases)
  int32_t arena_axi = 0;     // port of feature maps
  int32_t cache_axi = 0;     // port of the SRAM staging area
  int64_t arena_cache_bytes = 0;  // 0 = unlimited
};

struct EthosUConfig {
  EthosUFamily family = EthosUFamily::kU55;
  int32_t macs = 256;  // MACs per cycle: 32/64/128/256 (U55), 256/512 (U65), 128..2048 (U85)
  SystemConfig system;
  MemoryMode memory_mode;
  std::string platform;  // reference platform for display, e.g. "Corstone-300"
};

// A Cortex-M CPU and the memories its firmware lives in.
struct CortexMConfig {
  std::string cpu;            // "cortex-m55"
  bool has_dsp = false;       // Armv7E-M / Armv8-M DSP extension
  bool has_mve = false;       // Helium
  bool has_fpu = false;
  double clock_hz = 100e6;
  int64_t sram_bytes = 0;     // 0 = unknown / unlimited
  int64_t flash_bytes = 0;
  // Wait states per flash access beyond the first cycle (0 for TCM-resident weights).
  int32_t flash_wait_states = 0;
};

struct TargetProfile {
  std::string name;           // "ethos-u55-256", "cortex-m55"
  std::string description;
  TargetKind kind = TargetKind::kEthosU;
  EthosUConfig ethos_u;       // when kind == kEthosU
  CortexMConfig cortex_m;     // the CPU (the host CPU of an Ethos-U system)
  std::string origin;         // where the profile came from (built-in file or user path)
  // How to name the profile on mica's command line: "--target-profile" with a built-in name,
  // or "--target-config" with a file path (empty for profiles made in code).
  std::string cli_flag;
  std::string cli_value;

  // Returns the clock that converts this profile's cycles to seconds.
  double clock_hz() const {
    return kind == TargetKind::kEthosU ? ethos_u.system.core_clock_hz : cortex_m.clock_hz;
  }
};

// Returns the names of the built-in profiles, in display order.
std::vector<std::string> BuiltinTargetNames();

// Returns the built-in profile `name`, or NotFound listing the valid names.
absl::StatusOr<TargetProfile> FindTargetProfile(const std::string& name);

// Parses a profile from protobuf text format (the schema in libestimate/src/target.proto).
// `origin` (a file name) prefixes error messages, which also name the offending field or the
// line and column of a syntax error. A profile may start from a built-in one (`base:`).
absl::StatusOr<TargetProfile> ParseTargetProfile(const std::string& text,
                                                 const std::string& origin);

// Reads and parses a user profile file (--target-config). Errors name the file and the field.
absl::StatusOr<TargetProfile> LoadTargetProfileFile(const std::string& path);

// Returns every built-in profile, in display order.
std::vector<TargetProfile> BuiltinTargets();

// Replaces an Ethos-U profile's system configuration and/or memory mode with Vela's named ones
// (vela.ini names such as "Ethos_U55_Deep_Embedded", "Sram_Only"; empty keeps the current one)
// and re-validates it. InvalidArgument for a Cortex-M profile, a system config of another
// Ethos-U family or an invalid combination (e.g. feature maps in flash), NotFound (listing valid
// names) for an unknown name.
absl::Status SetVelaConfig(TargetProfile* profile, const std::string& system_config,
                           const std::string& memory_mode);

// Per-profile options of the command line: `--target-profile NAME:key=value,key=value` (and
// `--target-config FILE:key=value,...`). Keys: system-config (a Vela system config of the
// profile's family), memory-mode (a Vela memory mode, with that mode's arena cache size) and
// arena-cache-size (bytes, 0 = unlimited; Vela's --arena-cache-size), applied in that order.
struct ProfileOptions {
  std::string system_config;
  std::string memory_mode;
  int64_t arena_cache_bytes = -1;  // -1 = keep
  bool empty() const {
    return system_config.empty() && memory_mode.empty() && arena_cache_bytes < 0;
  }
};

// Splits "NAME" or "NAME:key=value,..." into the name (or file path) and its options. A ':'
// starts options only when what follows contains '=' (so "C:\x.textproto" stays a path).
// InvalidArgument (one line, naming the key) for an unknown key, a repeated key, an empty value
// or a malformed size.
absl::Status SplitProfileSpec(const std::string& spec, std::string* name,
                              ProfileOptions* options);

// Applies `options` to an Ethos-U profile and re-validates it. InvalidArgument for a Cortex-M
// profile, a system config of another family or an invalid combination; NotFound (listing the
// valid names) for an unknown system config or memory mode.
absl::Status ApplyProfileOptions(TargetProfile* profile, const ProfileOptions& options);

// Returns the built-in profile named by `spec` ("ethos-u65-512" or
// "ethos-u65-512:memory-mode=Sram_Only") with its options applied; the profile's name is the
// spec as given, so one model can be checked against several configurations side by side.
absl::StatusOr<TargetProfile> FindTargetProfileSpec(const std::string& spec);

// Returns `options` as the text after ':' of a profile spec ("system-config=X,memory-mode=Y").
std::string ProfileOptionsText(const ProfileOptions& options);

// Returns "u55", "u65" or "u85".
const char* EthosUFamilyName(EthosUFamily f);

// Returns the names of the Cortex-M CPUs mica models ("cortex-m0", ..., "cortex-m85").
std::vector<std::string> CortexMCpuNames();

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_TARGET_H_
