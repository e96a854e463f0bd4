// mica estimate — Arm Ethos-U NPU: operator placement (NPU or CPU, with reasons) and a
// performance/memory model written from Vela 5.1.0's documented behaviour (Regor core).
//
// EstimateEthosU costs every NPU-placed operator in NPU cycles (MAC/elementwise engine, output
// unit, command overhead, weight DMA) and memory-access cycles per memory area, and takes the
// larger of the two per operator (compute and memory overlap). CPU-placed operators get zero NPU
// cycles and their reasons; the caller adds host-CPU cycles for them.
//
//   MICA_ASSIGN_OR_RETURN(mica::estimate::SystemConfig sys,
//                         mica::estimate::VelaSystemConfig("Ethos_U55_High_End_Embedded"));
//   MICA_ASSIGN_OR_RETURN(mica::estimate::MemoryMode mode,
//                         mica::estimate::VelaMemoryMode("Shared_Sram"));
//   profile.ethos_u.system = sys; profile.ethos_u.memory_mode = mode;
//   MICA_ASSIGN_OR_RETURN(mica::estimate::Estimate e,
//                         mica::estimate::EstimateEthosU(graph, profile));
#ifndef MICA_ESTIMATE_ETHOS_U_H_
#define MICA_ESTIMATE_ETHOS_U_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

// Estimates `graph` (its main subgraph) on the Ethos-U described by `profile`
// (profile.kind must be kEthosU). Fills per-op placement, reasons, MACs, NPU cycles, per-area
// access cycles and bytes, the per-op total and bottleneck; totals; memory used per area;
// original and encoded weight bytes; NPU/CPU op counts. CPU ops have zero cycles.
// Errors: InvalidArgument for a non-Ethos-U profile, an unsupported MAC count, a memory mode
// that puts feature maps in read-only memory, or a graph whose tensors are inconsistent.
absl::StatusOr<Estimate> EstimateEthosU(const Graph& graph, const TargetProfile& profile);

// Returns why operator `op_index` of the main subgraph cannot run on the NPU (Vela 5.1.0's
// placement rules for `config.family`); empty when it runs on the NPU. Never fails: an
// out-of-range index or a malformed operator yields a reason.
std::vector<std::string> EthosUCompatibility(const Graph& graph, int op_index,
                                             const EthosUConfig& config);

// Vela's named system configurations (vela.ini, Vela 5.1.0): "Ethos_U55_Deep_Embedded",
// "Ethos_U55_High_End_Embedded", "Ethos_U65_Embedded", "Ethos_U65_Mid_End",
// "Ethos_U65_High_End", "Ethos_U65_Client_Server", "Ethos_U85_SYS_Flash_Low",
// "Ethos_U85_SYS_Flash_High", "Ethos_U85_SYS_DRAM_Low", "Ethos_U85_SYS_DRAM_Mid",
// "Ethos_U85_SYS_DRAM_High". NotFound (listing the names) otherwise.
absl::StatusOr<SystemConfig> VelaSystemConfig(const std::string& name);
std::vector<std::string> VelaSystemConfigNames();

// Returns true when the named Vela system configuration is one of `family`'s (the
// "Ethos_U55_"/"Ethos_U65_"/"Ethos_U85_" prefix of Vela's names): a U55 has no U65 DRAM system.
bool VelaSystemConfigFits(EthosUFamily family, const std::string& name);

// Vela's memory modes: "Sram_Only", "Shared_Sram", "Dedicated_Sram", "Dedicated_Sram_256KB",
// "Dedicated_Sram_384KB", "Dedicated_Sram_512KB". NotFound otherwise. As in Vela's own vela.ini,
// "Dedicated_Sram" sets no arena cache size (unlimited); MLIA's vela.ini gives it 384 KiB, which
// the built-in ethos-u65/u85 profiles state explicitly.
absl::StatusOr<MemoryMode> VelaMemoryMode(const std::string& name);
std::vector<std::string> VelaMemoryModeNames();

// Vela's default system configuration and memory mode names for a family
// (U55: High_End_Embedded + Shared_Sram; U65: Client_Server + Dedicated_Sram_384KB;
// U85: SYS_DRAM_Mid + Dedicated_Sram_384KB).
std::string VelaDefaultSystemConfigName(EthosUFamily family);
std::string VelaDefaultMemoryModeName(EthosUFamily family);

// Returns an Ethos-U config for `family` and `macs` with Vela's default system config and memory
// mode; InvalidArgument for a MAC count the family does not have.
absl::StatusOr<EthosUConfig> DefaultEthosUConfig(EthosUFamily family, int32_t macs);

// Returns the family's product name for messages and reports: "Ethos-U55", "Ethos-U65" or
// "Ethos-U85".
const char* EthosUFamilyTitle(EthosUFamily family);

// Checks that `config` is one Vela could compile for: a valid MAC count for the family, positive
// bandwidths and clocks, feature maps in writable memory.
absl::Status ValidateEthosUConfig(const EthosUConfig& config);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_ETHOS_U_H_
