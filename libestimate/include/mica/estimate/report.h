// mica estimate — what a check report says beyond the raw estimate: the operators that cost the
// most and why, whether the model fits the target's memories, and short advice in the order a
// user should act on it (compatibility first, then memory-bound operators, then the few
// expensive ones).
//
//   MICA_ASSIGN_OR_RETURN(Estimate e, EstimateModel(graph, profile));
//   for (const Advice& a : Advise(graph, profile, e, "model.tflite")) {
//     std::cout << AdviceSeverityName(a.severity) << ": " << a.message << "\n";
//   }
//   for (const TopOperator& t : TopOperators(e, 5)) ...
#ifndef MICA_ESTIMATE_REPORT_H_
#define MICA_ESTIMATE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

enum class AdviceCategory : uint8_t { kCompatibility, kMemory, kPerformance };
// Returns "compatibility", "memory" or "performance".
const char* AdviceCategoryName(AdviceCategory c);

// How much an advice item matters: kError = the model does not fit or cannot use the target as
// intended (memory overflow, nothing runs on the NPU), kWarning = it runs but loses much of what
// the target offers (CPU fallbacks, spills, memory-bound operators, uncosted operators),
// kInfo = an optimisation hint.
enum class AdviceSeverity : uint8_t { kInfo, kWarning, kError };
// Returns "info", "warning" or "error".
const char* AdviceSeverityName(AdviceSeverity s);

struct Advice {
  AdviceCategory category = AdviceCategory::kPerformance;
  AdviceSeverity severity = AdviceSeverity::kInfo;
  std::string message;  // one sentence or two, no trailing newline
  // The mica command line the advice suggests (arguments after `mica`), empty when it names
  // none. The message quotes it between backquotes; it only uses profiles and options that
  // mica accepts for this target (each was applied and validated before being suggested).
  std::vector<std::string> command;
};

struct TopOperator {
  int32_t op_index = 0;   // index into Estimate::ops (== operator index in the main subgraph)
  double total_cycles = 0;
  double share = 0;       // fraction of the estimate's total cycles, in [0, 1]
  Bottleneck bottleneck = Bottleneck::kCompute;
};

// Returns up to `n` operators with the most total cycles, most expensive first (ties: lower
// index first). Operators with zero cycles are left out.
std::vector<TopOperator> TopOperators(const Estimate& e, int n);

// One memory the model needs against what the profile has (Cortex-M: SRAM and flash sizes;
// Ethos-U: the SRAM staging area when arena_cache_bytes is limited).
struct MemoryFit {
  MemoryArea area = MemoryArea::kSram;
  int64_t used_bytes = 0;
  int64_t capacity_bytes = 0;  // 0 = unknown / unlimited
  bool fits() const { return capacity_bytes <= 0 || used_bytes <= capacity_bytes; }
};
std::vector<MemoryFit> MemoryFits(const Estimate& e, const TargetProfile& profile);

// Returns the advice for `e` (estimated from `graph` on `profile`), compatibility problems first,
// then memory (fit and memory-bound operators), then expensive operators. At most a handful of
// items; empty only when there is nothing to say.
// `model_path` is the model as the user named it, for the suggested command lines.
std::vector<Advice> Advise(const Graph& graph, const TargetProfile& profile, const Estimate& e,
                           const std::string& model_path = "MODEL");

// Returns `text` with every '...'-quoted name shortened to its last ';'-separated part (TFLite
// tensor names fuse many layer names) and at most 40 characters, for display.
std::string CompactNames(const std::string& text);

// Returns the MAC utilisation of the NPU in [0, 1]: MACs / (npu_cycles * MACs per cycle); 0 for
// Cortex-M profiles or when nothing ran on the NPU.
double MacUtilisation(const Estimate& e, const TargetProfile& profile);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_REPORT_H_
