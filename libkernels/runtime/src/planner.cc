#include "planner.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"

namespace mica {
namespace runtime {
namespace internal {

absl::StatusOr<ArenaPlan> PlanArena(const Subgraph& sg, size_t alignment) {
  const int32_t n_ops = static_cast<int32_t>(sg.ops.size());
  const size_t n = sg.tensors.size();
  std::vector<int32_t> first(n, INT32_MAX), last(n, INT32_MIN);
  auto use = [&](int32_t t, int32_t when) {
    if (t < 0 || static_cast<size_t>(t) >= n) return;
    const Tensor& tensor = sg.tensors[t];
    if (tensor.is_constant() || tensor.is_variable) return;
    first[t] = std::min(first[t], when);
    last[t] = std::max(last[t], when);
  };
  for (int32_t t : sg.inputs) use(t, -1);
  for (int32_t i = 0; i < n_ops; ++i) {
    for (int32_t t : sg.ops[i].inputs) use(t, i);
    for (int32_t t : sg.ops[i].outputs) use(t, i);
  }
  for (int32_t t : sg.outputs) use(t, n_ops);

  struct Item {
    int32_t t;
    size_t bytes;
  };
  std::vector<Item> items;
  for (size_t t = 0; t < n; ++t) {
    if (first[t] == INT32_MAX) continue;
    const size_t bytes = sg.tensors[t].num_bytes();
    items.push_back({static_cast<int32_t>(t), (bytes + alignment - 1) / alignment * alignment});
  }
  std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return first[a.t] < first[b.t];
  });
  ArenaPlan plan;
  struct Placed {
    int32_t t;
    size_t offset, bytes;
  };
  std::vector<Placed> placed;
  for (const Item& it : items) {
    std::vector<Placed> live;
    for (const Placed& p : placed) {
      if (first[p.t] <= last[it.t] && first[it.t] <= last[p.t]) live.push_back(p);
    }
    std::sort(live.begin(), live.end(),
              [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
    size_t offset = 0;
    for (const Placed& p : live) {
      if (offset + it.bytes <= p.offset) break;
      offset = std::max(offset, p.offset + p.bytes);
    }
    placed.push_back({it.t, offset, it.bytes});
    plan.arena_bytes = std::max(plan.arena_bytes, offset + it.bytes);
  }
  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.t < b.t; });
  for (const Placed& p : placed) {
    plan.slots.push_back({p.t, p.offset, sg.tensors[p.t].num_bytes()});
  }
  return plan;
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
