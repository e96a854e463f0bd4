// Internal to the Ethos-U estimator: EstimateEthosU as named stages, each a function of the
// previous stages' results (tested one by one in test/estimate/ethos_u_stages_test.cc):
//
//   Lower            IR ops -> NPU ops and feature maps, CPU fallbacks with reasons (lower.cc)
//   EncodeWeights    encoded size of every weight tensor, once per tensor; constant bytes
//   Schedule         one time step per NPU op and per CPU op between them
//   ChainU85         U85 only: binary elementwise ops that run in the previous op's chain
//   BuildCascades    ops run in stripes when feature maps would not fit a limited SRAM
//   PlaceFeatureMaps live ranges and memory area of every stored feature map
//   ChooseBlocks     block configuration of every NPU op (doc 4.2 / 6.1)
//   CostOps          cycles and traffic of every NPU op, in order (perf.cc)
//   Totals           arena peaks, memory use and the per-IR-op roll-up into an Estimate
//
// Blocks are chosen after chaining because a chain head writes its last stage's OFM.
#ifndef MICA_ESTIMATE_ETHOS_U_STAGES_H_
#define MICA_ESTIMATE_ETHOS_U_STAGES_H_

#include <cstdint>
#include <vector>

#include "ethos_u/model.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/analysis.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {
namespace ethosu {

// Rounds `v` up to the 16-byte granule Vela allocates tensors and weight streams in.
int64_t Align16(int64_t v);

// Weight totals of the network.
struct WeightTotals {
  int64_t original_bytes = 0;  // distinct weight tensors as stored in the model
  int64_t encoded_bytes = 0;   // the same after encoding (doc 9)
  int64_t const_bytes = 0;     // encoded weights + scales (16-byte aligned) + LUTs
};

// Sets every op's encoded_weight_bytes (and U85 sparse24), encoding each weight tensor once.
// Ops with weights but no weight tensor (one tensor repeated per time step) keep their bytes.
WeightTotals EncodeWeights(const Subgraph& sg, const Arch& arch, Lowered* lw);

// The order Vela runs the IR ops in: depth first from the graph outputs (the last output
// first, every op after the producers of its inputs, the last input's first), except that NPU
// work whose inputs are ready runs ahead of a CPU op (the earliest ready NPU op in that order
// first; a CPU op only when no NPU op is ready), so fewer NPU command streams are split by CPU
// work.
std::vector<int32_t> RunOrder(const Subgraph& sg, const Lowered& lw);

// When every op runs: NPU ops and CPU ops each take one time step, in run order.
struct Schedule {
  std::vector<int32_t> step_of_npu;               // per NPU op
  std::vector<std::vector<int32_t>> cpu_fmaps;    // per step: fmaps a CPU op touches
  std::vector<bool> cpu_step;                     // per step: a CPU op runs
  int32_t steps = 0;
};
Schedule ScheduleSteps(const Subgraph& sg, const Lowered& lw);

// Returns the storage a feature map id refers to (itself, or the map it aliases; -1 for -1).
int32_t RootFmap(const Lowered& lw, int32_t id);

// U85 chaining (doc 6.3): a binary elementwise op consuming the previous op's only output runs
// in that op's chain (up to four stages); the intermediate is never stored. No-op for U55/U65.
void ChainU85(const Arch& arch, const Schedule& schedule, Lowered* lw);

// Vela's cascading where feature maps can spill from a limited staging SRAM (doc 8.4: a
// Dedicated_Sram memory mode with an arena cache size; elsewhere the whole-tensor schedule
// fits and nothing changes). Consecutive NPU ops, each consuming the previous op's only
// output, run stripe by stripe when an op's whole IFM and OFM (with the maps live beside them)
// would not fit the cache: the maps between them become rolling buffers in the SRAM
// (FeatureMap::rolling_bytes) and the cascade's ops share one time step (the schedule's steps
// are renumbered). Stripes start at the minimal ones (each op's stripe is the next op's
// stride) and are then raised, per cascade, to the tallest final stripe whose buffers still
// fit without splitting the cascade. Returns the stripe height (OFM rows) of every NPU op, 0
// for an op that computes its whole OFM at once.
std::vector<int32_t> BuildCascades(const Subgraph& sg, const EthosUConfig& cfg,
                                   const MemSystem& ms, Schedule* schedule, Lowered* lw);

// Sets each stored feature map's live range (first/last step) and memory area (doc 3.2, 8.1):
// the arena memory, or with a separate staging SRAM the intermediates that fit its size and
// live within one NPU stretch (the SRAM is scratch of one NPU command stream: a map live
// across a CPU op stays in the arena). First, Vela's ReuseIFM: an elementwise op, 1x1 pooling
// or transpose writing an OFM stored like an IFM that it alone reads takes that IFM's storage
// (the OFM becomes an alias of it).
// `stage_maps` false leaves every map but a cascade's rolling buffers in the arena memory;
// `weight_buffers` (live ranges in steps) take SRAM before any map is staged. When the maps
// overflow a limited cache, the ones kept are those with the most element accesses under each
// op's block configuration (`blocks`, per NPU op; empty: FindBlockConfig's).
void PlaceFeatureMaps(const Subgraph& sg, const EthosUConfig& cfg, const MemSystem& ms,
                      const Schedule& schedule, Lowered* lw, bool stage_maps = true,
                      const std::vector<TensorLifetime>& weight_buffers = {},
                      const std::vector<BlockConfig>& blocks = {});

// Returns the block configuration of every NPU op (default for ops chained into another); an
// op running in stripes of `stripe_rows[k]` > 0 rows gets the block of one stripe.
std::vector<BlockConfig> ChooseBlocks(const Arch& arch, const Lowered& lw,
                                      const std::vector<int32_t>& stripe_rows = {});

// Costs every NPU op in order; the previous op's slack hides weight DMA unless a CPU op (or
// the start) comes between them. Chained ops cost nothing. With `sram_limit` > 0 an op
// buffers its weights only where they fit beside the staged maps and earlier buffers.
std::vector<OpCost> CostOps(const Arch& arch, const MemSystem& ms, const Lowered& lw,
                            const Schedule& schedule, const std::vector<BlockConfig>& blocks,
                            int64_t sram_limit = 0);

// Live ranges (in steps) of the SRAM weight buffers of `costs`: the op's step and the one
// before (the buffer fills under the previous op).
std::vector<TensorLifetime> WeightBufferRanges(const Schedule& schedule,
                                               const std::vector<OpCost>& costs);

// Arena peaks from HillClimb placement (Vela's default allocator) of the SRAM and
// arena-memory live ranges.
struct ArenaPeaks {
  int64_t sram = 0;   // SRAM: staged feature maps and buffered weights (or the whole arena)
  int64_t arena = 0;  // feature maps in the arena memory when it is not the SRAM
};
ArenaPeaks PlanArenas(const Lowered& lw, const Schedule& schedule,
                      const std::vector<OpCost>& costs);

// Rolls the NPU ops' costs up into the per-IR-op and network figures of an Estimate.
Estimate Totals(const TargetProfile& profile, const Subgraph& sg, const Lowered& lw,
                const MemSystem& ms, const WeightTotals& weights, const ArenaPeaks& peaks,
                const std::vector<OpCost>& costs);

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_ETHOS_U_STAGES_H_
