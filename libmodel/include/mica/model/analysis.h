// mica — structural analysis of a subgraph: execution order, per-operator cost, tensor
// lifetimes and an activation-arena plan.
//
// These are the facts estimates and the runtime build on. MACs count multiply-accumulates of
// CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED, BATCH_MATMUL (and SVDF/LSTM
// weight products); every other operator counts 0 MACs and reports its output element count.
//
//   const mica::Subgraph& sg = graph.main();
//   mica::GraphCost cost = mica::AnalyzeCost(sg);
//   MICA_ASSIGN_OR_RETURN(mica::ArenaPlan plan, mica::PlanArena(sg));
//   std::cout << cost.total_macs << " MACs, arena " << plan.peak_bytes << " bytes\n";
#ifndef MICA_MODEL_ANALYSIS_H_
#define MICA_MODEL_ANALYSIS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mica/model/graph.h"

namespace mica {

// Returns an execution order of the subgraph's operators (indices into sg.ops): every operator
// comes after the producers of its inputs. Among ready operators the lowest index goes first,
// so a subgraph already in a valid order keeps it. A cycle, a tensor produced twice or an
// out-of-range index gives InvalidArgument naming the operator.
absl::StatusOr<std::vector<int32_t>> TopologicalOrder(const Subgraph& sg);

// Returns OK when sg.ops, executed in stored order, never reads a non-constant tensor before
// its producer ran (graph inputs and variable tensors are available from the start).
absl::Status CheckTopologicalOrder(const Subgraph& sg);

// Cost of one operator.
struct OpCost {
  int64_t macs = 0;              // multiply-accumulates (0 for non-matrix operators)
  int64_t output_elements = 0;   // elements written (all outputs)
  int64_t weight_bytes = 0;      // bytes of constant inputs (weights, biases, shape operands)
  int64_t input_bytes = 0;       // bytes of non-constant inputs (activations, state)
  int64_t output_bytes = 0;      // bytes of outputs
};

// Returns the cost of `op` (an operator of `sg`). Malformed operands (absent tensors, wrong
// ranks) contribute 0 rather than failing: callers validate graphs first.
OpCost AnalyzeOp(const Subgraph& sg, const Operator& op);

struct GraphCost {
  std::vector<OpCost> ops;  // parallel to sg.ops
  int64_t total_macs = 0;
  int64_t total_weight_bytes = 0;  // sum over ops (a constant shared by two ops counts twice)
  int64_t unique_constant_bytes = 0;  // bytes of distinct constant tensors the ops read
};

// Returns per-operator costs and totals.
GraphCost AnalyzeCost(const Subgraph& sg);

// The live range of one activation tensor, in positions of the execution order (op indices
// when sg.ops is used as is). Graph inputs start at 0; graph outputs end at the last op.
struct TensorLifetime {
  int32_t tensor = 0;
  int32_t first_op = 0;  // op that writes it (0 for graph inputs)
  int32_t last_op = 0;   // last op that reads it (num_ops - 1 for graph outputs)
  size_t bytes = 0;

  bool Overlaps(const TensorLifetime& o) const {
    return first_op <= o.last_op && o.first_op <= last_op;
  }
};

// Returns the lifetimes of every non-constant, non-variable tensor the subgraph's operators or
// inputs/outputs touch, ordered by tensor index. `order` is an execution order (empty: the
// stored order). Tensors written but never read live at their producer only.
std::vector<TensorLifetime> ComputeLifetimes(const Subgraph& sg,
                                             const std::vector<int32_t>& order = {});

struct ArenaOptions {
  size_t alignment = 16;  // every offset is a multiple of this (a power of two, >= 1)
};

struct ArenaAllocation {
  int32_t tensor = 0;
  size_t offset = 0;
  size_t bytes = 0;
};

struct ArenaPlan {
  std::vector<ArenaAllocation> allocations;  // ordered by tensor index
  size_t peak_bytes = 0;                     // max(offset + bytes) over allocations
  size_t alignment = 16;
};

// Places `lifetimes` in one arena: tensors are taken largest first (ties: earlier first_op,
// then lower tensor index) and each goes to the lowest aligned offset that does not collide
// with an already placed tensor whose lifetime overlaps (first fit). Deterministic.
absl::StatusOr<ArenaPlan> PlanArena(const std::vector<TensorLifetime>& lifetimes,
                                    const ArenaOptions& options = {});

// Plans the subgraph's activations in stored op order (after CheckTopologicalOrder).
absl::StatusOr<ArenaPlan> PlanArena(const Subgraph& sg, const ArenaOptions& options = {});

// Returns the bytes live at once at the busiest op: a lower bound on any arena's peak.
size_t PeakLiveBytes(const std::vector<TensorLifetime>& lifetimes);

}  // namespace mica

#endif  // MICA_MODEL_ANALYSIS_H_
