// EstimateModel: the dispatch from a target profile to mica's cost models. Ethos-U profiles run
// the NPU model, then cost every CPU-placed operator on the profile's host CPU with the Cortex-M
// model, so the report says what falls back and what it costs.
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/cortex_m.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {

const char* BottleneckName(Bottleneck b) {
  switch (b) {
    case Bottleneck::kCompute: return "compute";
    case Bottleneck::kSram: return "sram";
    case Bottleneck::kDram: return "dram";
    case Bottleneck::kOnChipFlash: return "on_chip_flash";
    case Bottleneck::kOffChipFlash: return "off_chip_flash";
  }
  return "compute";
}

absl::StatusOr<Estimate> EstimateModel(const Graph& graph, const TargetProfile& profile) {
  if (graph.subgraphs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        graph.source_path.empty() ? "model" : graph.source_path, ": no subgraph to estimate"));
  }
  if (profile.kind == TargetKind::kCortexM) return EstimateCortexM(graph, profile);

  MICA_ASSIGN_OR_RETURN(Estimate e, EstimateEthosU(graph, profile));
  const CortexMConfig& host = profile.cortex_m;
  e.host_clock_hz = host.clock_hz;
  const double to_profile_clock = host.clock_hz > 0 ? profile.clock_hz() / host.clock_hz : 1.0;
  double cpu_profile_cycles = 0;
  for (OpEstimate& o : e.ops) {
    if (o.placement != Placement::kCpu) continue;
    absl::StatusOr<CortexMOpCost> c = CortexMOpCostFor(graph, o.op_index, host);
    if (!c.ok()) {
      o.notes.push_back(absl::StrCat("host CPU cost unknown: ", c.status().message()));
      continue;
    }
    o.kernel = absl::StrCat(c->kernel, " on ", host.cpu);
    o.compute_cycles = c->cycles * to_profile_clock;
    o.total_cycles = o.compute_cycles;
    o.bottleneck = Bottleneck::kCompute;
    if (o.macs == 0) o.macs = c->macs;
    for (const std::string& n : c->notes) o.notes.push_back(n);
    e.host_cpu_cycles += c->cycles;
    cpu_profile_cycles += o.total_cycles;
  }
  // The NPU model leaves CPU ops at zero; add their host time (expressed in NPU cycles).
  e.cpu_cycles = cpu_profile_cycles;
  e.total_cycles += cpu_profile_cycles;
  if (e.cpu_ops > 0) {
    e.notes.push_back(absl::StrCat(e.cpu_ops, " operator(s) run on the host ", host.cpu, " at ",
                                   host.clock_hz / 1e6, " MHz; their cycles are converted to the ",
                                   "NPU clock and added to the total"));
  }
  return e;
}

}  // namespace estimate
}  // namespace mica
