// mica estimate — what running a model on a target costs, per operator and in total.
//
// One Estimate per (model, target profile). Ethos-U estimates fill the NPU fields and per-area
// access cycles; Cortex-M estimates fill cpu cycles. Operators an NPU cannot run are placed on
// the profile's host CPU with the reasons why.
//
//   MICA_ASSIGN_OR_RETURN(mica::estimate::Estimate e,
//                         mica::estimate::EstimateModel(graph, profile));
//   std::cout << e.total_cycles << " cycles, " << e.seconds() * 1e3 << " ms\n";
#ifndef MICA_ESTIMATE_ESTIMATE_H_
#define MICA_ESTIMATE_ESTIMATE_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

enum class Placement : uint8_t { kNpu, kCpu };

// What limits an operator: the MAC/elementwise engine or one memory's bandwidth.
enum class Bottleneck : uint8_t { kCompute, kSram, kDram, kOnChipFlash, kOffChipFlash };
const char* BottleneckName(Bottleneck b);

using PerArea = std::array<double, kNumMemoryAreas>;  // indexed by MemoryArea

struct OpEstimate {
  int32_t op_index = 0;          // index in the main subgraph's ops
  std::string op_name;           // "CONV_2D"
  std::string output_name;       // name of the first output tensor
  Placement placement = Placement::kNpu;
  std::vector<std::string> reasons;  // why on the CPU (empty for NPU ops)
  int64_t macs = 0;
  double compute_cycles = 0;     // NPU engine cycles (Ethos-U) or CPU cycles (Cortex-M)
  PerArea access_cycles{};       // memory-access cycles per area
  PerArea bytes{};               // bytes read + written per area
  double total_cycles = 0;       // the op's cost as it adds to the total
  Bottleneck bottleneck = Bottleneck::kCompute;
  std::string kernel;            // Cortex-M: the kernel variant that would run ("conv_s8/mve")
  std::vector<std::string> notes;  // cost-model remarks (soft-float, uncalibrated formula, ...)
};

// The memory a deployment must reserve with one runtime (Cortex-M profiles; see tflm_arena.h).
struct RuntimeMemory {
  std::string runtime;                 // "tflm", "mica"; empty: not computed
  std::string basis;                   // what the figure is, e.g. "TFLite Micro 32-bit, CMSIS-NN mve"
  int64_t arena_bytes = 0;             // the arena to reserve: head + tail
  int64_t head_bytes = 0;              // planned activations + scratch
  int64_t scratch_bytes = 0;           // scratch requests (planned inside the head)
  int64_t tail_bytes = 0;              // persistent allocations
  std::vector<std::pair<std::string, int64_t>> tail;  // per category
  int64_t flash_bytes = 0;             // model constants + runtime and kernel code
  int64_t model_flash_bytes = 0;       // constant tensors
  int64_t code_flash_bytes = 0;        // runtime + kernels (estimate)
  int64_t sram_bytes = 0;              // the profile's SRAM (0 = unknown)
  int64_t flash_capacity_bytes = 0;    // the profile's flash (0 = unknown)
  int32_t peak_op_index = -1;          // operator at the arena head's peak
  std::string peak_operator;           // its type, e.g. "DEPTHWISE_CONV_2D"
  std::vector<std::string> peak_tensors;  // tensors live at the peak, largest first
};

struct Estimate {
  std::string target;            // profile name
  std::string backend = "mica";  // who produced the figures
  double clock_hz = 0;
  std::vector<OpEstimate> ops;   // in execution order
  double total_cycles = 0;
  double npu_cycles = 0;         // sum of compute cycles of NPU ops
  double cpu_cycles = 0;         // sum of cycles of CPU-placed ops (Cortex-M estimate)
  PerArea access_cycles{};       // per-area sums (do not add up to the total)
  PerArea memory_used_bytes{};   // peak allocation per area
  int64_t macs = 0;
  int64_t weights_original_bytes = 0;
  int64_t weights_encoded_bytes = 0;  // Ethos-U compressed weight stream estimate
  int64_t arena_bytes = 0;            // activation arena peak (planner)
  int64_t scratch_bytes = 0;          // largest kernel scratch (Cortex-M)
  int64_t code_bytes = 0;             // Cortex-M: kernel code size estimate
  int32_t npu_ops = 0, cpu_ops = 0;
  // Ethos-U profiles: cycles of the CPU-placed ops on the host CPU, in host-CPU cycles at
  // host_clock_hz (cpu_cycles holds the same time in the profile's clock).
  double host_cpu_cycles = 0;
  double host_clock_hz = 0;
  std::vector<std::string> notes;     // model-level remarks (e.g. what the estimate assumes)
  RuntimeMemory memory;               // Cortex-M: the arena and flash a runtime needs

  double seconds() const { return clock_hz > 0 ? total_cycles / clock_hz : 0; }
};

// Estimates `graph` on `profile` with mica's own models (Ethos-U or Cortex-M by profile kind).
absl::StatusOr<Estimate> EstimateModel(const Graph& graph, const TargetProfile& profile);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_ESTIMATE_H_
