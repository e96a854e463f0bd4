// Ethos-U estimator entry points (being written; see ethos_u.h).
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {

absl::StatusOr<Estimate> EstimateEthosU(const Graph& graph, const TargetProfile& profile) {
  return absl::UnimplementedError("EstimateEthosU: not yet implemented");
}

std::vector<std::string> EthosUCompatibility(const Graph& graph, int op_index,
                                             const EthosUConfig& config) {
  return {"Ethos-U compatibility check not yet implemented"};
}

}  // namespace estimate
}  // namespace mica
