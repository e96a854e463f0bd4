#include "mica/model/analysis.h"

#include <algorithm>
#include <queue>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/model/planner.h"

namespace mica {
namespace {

const Tensor* TensorAt(const Subgraph& sg, int32_t t) {
  if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) return nullptr;
  return &sg.tensors[static_cast<size_t>(t)];
}

const Tensor* OpInput(const Subgraph& sg, const Operator& op, size_t i) {
  return i < op.inputs.size() ? TensorAt(sg, op.inputs[i]) : nullptr;
}

int64_t Dim(const Tensor* t, size_t i) {
  return t != nullptr && i < t->shape.size() ? t->shape[i] : 0;
}

int64_t Elements(const Tensor* t) { return t != nullptr ? t->num_elements() : 0; }

std::string OpLabel(const Subgraph& sg, size_t i) {
  return absl::StrCat("operator ", i, " (", std::string(sg.ops[i].name()), ")");
}

// Tensors readable before any operator runs.
std::vector<bool> InitiallyAvailable(const Subgraph& sg) {
  std::vector<bool> avail(sg.tensors.size(), false);
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    avail[t] = sg.tensors[t].is_constant() || sg.tensors[t].is_variable;
  }
  for (int32_t t : sg.inputs) {
    if (TensorAt(sg, t) != nullptr) avail[static_cast<size_t>(t)] = true;
  }
  return avail;
}

absl::Status CheckIndices(const Subgraph& sg) {
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    for (int32_t t : sg.ops[i].inputs) {
      if (t != kNoTensor && TensorAt(sg, t) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(sg, i), ": input tensor index ", t, " out of range"));
      }
    }
    for (int32_t t : sg.ops[i].outputs) {
      if (TensorAt(sg, t) == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(sg, i), ": output tensor index ", t, " out of range"));
      }
    }
  }
  return absl::OkStatus();
}

// Returns producer op per tensor (-1: none); fails when a tensor has two producers.
absl::StatusOr<std::vector<int32_t>> Producers(const Subgraph& sg) {
  std::vector<int32_t> producer(sg.tensors.size(), -1);
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    for (int32_t t : sg.ops[i].outputs) {
      auto& p = producer[static_cast<size_t>(t)];
      if (p >= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(sg, i), ": tensor '", sg.tensors[static_cast<size_t>(t)].name,
                         "' is also written by operator ", p));
      }
      p = static_cast<int32_t>(i);
    }
  }
  return producer;
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> TopologicalOrder(const Subgraph& sg) {
  MICA_RETURN_IF_ERROR(CheckIndices(sg));
  MICA_ASSIGN_OR_RETURN(std::vector<int32_t> producer, Producers(sg));
  const std::vector<bool> avail = InitiallyAvailable(sg);
  const size_t n = sg.ops.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int32_t>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<int32_t> deps;
    for (int32_t t : sg.ops[i].inputs) {
      if (t == kNoTensor || avail[static_cast<size_t>(t)]) continue;
      const int32_t p = producer[static_cast<size_t>(t)];
      if (p < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(sg, i), ": input '", sg.tensors[static_cast<size_t>(t)].name,
                         "' is neither a graph input, a constant nor written by an operator"));
      }
      deps.insert(p);
    }
    pending[i] = static_cast<int>(deps.size());
    for (int32_t p : deps) consumers[static_cast<size_t>(p)].push_back(static_cast<int32_t>(i));
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push(static_cast<int32_t>(i));
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int32_t c : consumers[static_cast<size_t>(i)]) {
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpLabel(sg, i), ": the graph has a cycle through this operator"));
      }
    }
  }
  return order;
}

absl::Status CheckTopologicalOrder(const Subgraph& sg) {
  MICA_RETURN_IF_ERROR(CheckIndices(sg));
  MICA_ASSIGN_OR_RETURN(std::vector<int32_t> producer, Producers(sg));
  std::vector<bool> avail = InitiallyAvailable(sg);
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    for (int32_t t : sg.ops[i].inputs) {
      if (t == kNoTensor || avail[static_cast<size_t>(t)]) continue;
      const int32_t p = producer[static_cast<size_t>(t)];
      return absl::InvalidArgumentError(absl::StrCat(
          OpLabel(sg, i), ": reads tensor '", sg.tensors[static_cast<size_t>(t)].name, "' ",
          p < 0 ? std::string("that nothing writes")
                : absl::StrCat("before its producer, operator ", p, ", runs")));
    }
    for (int32_t t : sg.ops[i].outputs) avail[static_cast<size_t>(t)] = true;
  }
  return absl::OkStatus();
}

OpCost AnalyzeOp(const Subgraph& sg, const Operator& op) {
  OpCost c;
  for (int32_t t : op.inputs) {
    const Tensor* tensor = TensorAt(sg, t);
    if (tensor == nullptr) continue;
    (tensor->is_constant() ? c.weight_bytes : c.input_bytes) +=
        static_cast<int64_t>(tensor->num_bytes());
  }
  for (int32_t t : op.outputs) {
    const Tensor* tensor = TensorAt(sg, t);
    if (tensor == nullptr) continue;
    c.output_elements += tensor->num_elements();
    c.output_bytes += static_cast<int64_t>(tensor->num_bytes());
  }
  const Tensor* out = op.outputs.empty() ? nullptr : TensorAt(sg, op.outputs[0]);
  switch (op.kind) {
    case OpKind::kConv2D: {  // filter OHWI; grouped convs read filter depth I per output
      const Tensor* f = OpInput(sg, op, 1);
      c.macs = Elements(out) * Dim(f, 1) * Dim(f, 2) * Dim(f, 3);
      break;
    }
    case OpKind::kDepthwiseConv2D: {  // filter 1HWC: one KHxKW dot product per output
      const Tensor* f = OpInput(sg, op, 1);
      c.macs = Elements(out) * Dim(f, 1) * Dim(f, 2);
      break;
    }
    case OpKind::kTransposeConv: {  // each input element scatters into KHxKWxO outputs
      const Tensor* f = OpInput(sg, op, 1);
      c.macs = Elements(OpInput(sg, op, 2)) * Dim(f, 0) * Dim(f, 1) * Dim(f, 2);
      break;
    }
    case OpKind::kFullyConnected:
      c.macs = Elements(out) * Dim(OpInput(sg, op, 1), 1);
      break;
    case OpKind::kBatchMatMul: {
      const Tensor* x = OpInput(sg, op, 0);
      if (x == nullptr || x->shape.size() < 2) break;
      const size_t r = x->shape.size();
      const bool adj_x = std::holds_alternative<BatchMatMulAttrs>(op.attrs) &&
                         op.Attrs<BatchMatMulAttrs>().adj_x;
      c.macs = Elements(out) * (adj_x ? x->shape[r - 2] : x->shape[r - 1]);
      break;
    }
    case OpKind::kSvdf: {  // feature weights [F, in] per batch row, then time weights [F, mem]
      const Tensor* in = OpInput(sg, op, 0);
      const Tensor* wf = OpInput(sg, op, 1);
      const Tensor* wt = OpInput(sg, op, 2);
      const int64_t batch = Dim(in, 0);
      c.macs = batch * (Elements(wf) + Elements(wt));
      break;
    }
    case OpKind::kUnidirectionalSequenceLstm: {
      // Every step multiplies the input and recurrent gate weights (inputs 1-8), peepholes
      // (9-11) and projection (16) once.
      const Tensor* in = OpInput(sg, op, 0);
      const Tensor* w = OpInput(sg, op, 2);  // input_to_forget [n_cell, n_input]
      const int64_t n_input = Dim(w, 1);
      if (in == nullptr || n_input <= 0) break;
      const int64_t steps = Elements(in) / n_input;
      int64_t per_step = 0;
      for (size_t i : {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16}) per_step += Elements(OpInput(sg, op, i));
      c.macs = steps * per_step;
      break;
    }
    default:
      break;
  }
  return c;
}

GraphCost AnalyzeCost(const Subgraph& sg) {
  GraphCost g;
  std::set<int32_t> constants;
  for (const Operator& op : sg.ops) {
    g.ops.push_back(AnalyzeOp(sg, op));
    g.total_macs += g.ops.back().macs;
    g.total_weight_bytes += g.ops.back().weight_bytes;
    for (int32_t t : op.inputs) {
      const Tensor* tensor = TensorAt(sg, t);
      if (tensor != nullptr && tensor->is_constant()) constants.insert(t);
    }
  }
  for (int32_t t : constants) {
    g.unique_constant_bytes += static_cast<int64_t>(sg.tensors[static_cast<size_t>(t)].num_bytes());
  }
  return g;
}

std::vector<TensorLifetime> ComputeLifetimes(const Subgraph& sg,
                                             const std::vector<int32_t>& order) {
  const size_t num_ops = order.empty() ? sg.ops.size() : order.size();
  const int32_t last = num_ops == 0 ? 0 : static_cast<int32_t>(num_ops - 1);
  std::vector<int32_t> first(sg.tensors.size(), -1), end(sg.tensors.size(), -1);
  auto touch = [&](int32_t t, int32_t pos) {
    const Tensor* tensor = TensorAt(sg, t);
    if (tensor == nullptr || tensor->is_constant() || tensor->is_variable) return;
    auto& f = first[static_cast<size_t>(t)];
    auto& e = end[static_cast<size_t>(t)];
    f = f < 0 ? pos : std::min(f, pos);
    e = std::max(e, pos);
  };
  for (int32_t t : sg.inputs) touch(t, 0);
  for (size_t pos = 0; pos < num_ops; ++pos) {
    const size_t op_index = order.empty() ? pos : static_cast<size_t>(order[pos]);
    if (op_index >= sg.ops.size()) continue;
    const Operator& op = sg.ops[op_index];
    for (int32_t t : op.inputs) touch(t, static_cast<int32_t>(pos));
    for (int32_t t : op.outputs) touch(t, static_cast<int32_t>(pos));
  }
  for (int32_t t : sg.outputs) {
    if (TensorAt(sg, t) == nullptr) continue;
    if (first[static_cast<size_t>(t)] < 0) first[static_cast<size_t>(t)] = last;
    touch(t, last);
  }
  std::vector<TensorLifetime> out;
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    if (first[t] < 0) continue;
    out.push_back(TensorLifetime{static_cast<int32_t>(t), first[t], end[t], sg.tensors[t].num_bytes()});
  }
  return out;
}

absl::StatusOr<ArenaPlan> PlanArena(const std::vector<TensorLifetime>& lifetimes,
                                    const ArenaOptions& options) {
  return PlanArena(lifetimes, Planner::kFirstFit, options);
}

absl::StatusOr<ArenaPlan> PlanArena(const Subgraph& sg, const ArenaOptions& options) {
  MICA_RETURN_IF_ERROR(CheckTopologicalOrder(sg));
  return PlanArena(ComputeLifetimes(sg), options);
}

size_t PeakLiveBytes(const std::vector<TensorLifetime>& lifetimes) {
  // One sweep over the steps 0..max_op with the bytes each range adds at its start and drops
  // after its end (linear; summing every range at every step was quadratic).
  int32_t max_op = 0;
  for (const TensorLifetime& l : lifetimes) max_op = std::max(max_op, l.last_op);
  std::vector<size_t> starts(static_cast<size_t>(max_op) + 2, 0);
  std::vector<size_t> ends(static_cast<size_t>(max_op) + 2, 0);
  for (const TensorLifetime& l : lifetimes) {
    const int32_t first = std::max(l.first_op, 0);
    if (l.last_op < first) continue;  // live at no step in 0..max_op
    starts[static_cast<size_t>(first)] += l.bytes;
    ends[static_cast<size_t>(l.last_op) + 1] += l.bytes;
  }
  size_t peak = 0, live = 0;
  for (int32_t p = 0; p <= max_op; ++p) {
    live += starts[static_cast<size_t>(p)];
    live -= ends[static_cast<size_t>(p)];
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace mica
