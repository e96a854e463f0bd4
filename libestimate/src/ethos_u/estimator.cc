// Ethos-U estimator: the stages between lowering and the network totals (doc sections 5.4
// and 8), run in order by EstimateEthosU. ethos_u/stages.h lists them.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ethos_u/model.h"
#include "ethos_u/stages.h"
#include "mica/base/check.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/analysis.h"
#include "mica/model/planner.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

Bottleneck AreaBottleneck(MemoryArea a) {
  switch (a) {
    case MemoryArea::kSram: return Bottleneck::kSram;
    case MemoryArea::kDram: return Bottleneck::kDram;
    case MemoryArea::kOnChipFlash: return Bottleneck::kOnChipFlash;
    case MemoryArea::kOffChipFlash: return Bottleneck::kOffChipFlash;
  }
  return Bottleneck::kCompute;
}

bool IsChainable(const NpuOp& op) {
  return op.hw == HwOp::kElementwise && op.has_ifm2 && !op.unary && op.ew != EwKind::kDiv;
}

// A live range of `bytes` (already 16-byte aligned) over steps [first, last]; `id` is its
// position in the list, so the planner's ties fall back to the order ranges were added in.
void AddRange(std::vector<TensorLifetime>* ranges, int64_t bytes, int32_t first, int32_t last) {
  const int32_t id = static_cast<int32_t>(ranges->size());
  ranges->push_back(TensorLifetime{id, first, last, static_cast<size_t>(bytes)});
}

// Peak of the ranges as Vela's default tensor allocator, HillClimb, places them (doc 8.3),
// at the 16-byte allocation quantum (every size is already a multiple of 16).
int64_t AllocatedPeak(const std::vector<TensorLifetime>& ranges) {
  absl::StatusOr<ArenaPlan> plan = PlanArena(ranges, Planner::kHillClimb, ArenaOptions{16});
  MICA_CHECK(plan.ok());
  return static_cast<int64_t>(plan->peak_bytes);
}

// True when the ranges can be given addresses within `cap` bytes: the cheap first-fit layout
// is tried before HillClimb's search (any layout that fits will do).
bool FitsIn(const std::vector<TensorLifetime>& ranges, int64_t cap) {
  absl::StatusOr<ArenaPlan> quick = PlanArena(ranges, Planner::kFirstFit, ArenaOptions{16});
  if (quick.ok() && static_cast<int64_t>(quick->peak_bytes) <= cap) return true;
  return AllocatedPeak(ranges) <= cap;
}

// True for a stored feature map with a live range (not an alias, not a never-stored link of
// a chain, touched by some step).
bool Stored(const FeatureMap& fm) { return fm.alias_of < 0 && fm.first >= 0 && fm.bytes > 0; }

// Bytes a stored feature map occupies: its rolling buffer inside a cascade, else all of it.
int64_t StoredBytes(const FeatureMap& fm) {
  return Align16(fm.rolling_bytes > 0 ? fm.rolling_bytes : fm.bytes);
}

// The op writing each tensor (-1: none, or an index out of range); the first writer where a
// malformed graph has two.
std::vector<int32_t> TensorProducers(const Subgraph& sg) {
  std::vector<int32_t> producer(sg.tensors.size(), -1);
  for (int32_t i = 0; i < static_cast<int32_t>(sg.ops.size()); ++i) {
    for (int32_t t : sg.ops[i].outputs) {
      if (t >= 0 && static_cast<size_t>(t) < producer.size() && producer[t] < 0) producer[t] = i;
    }
  }
  return producer;
}

// Bytes of the lookup tables the NPU ops load (Vela's LUT constants). A table is a constant
// like any other, stored once however many ops use it: ops applying the same function between
// the same quantizations share it (an LSTM's time steps). Sizes: an 8-bit activation table
// holds 256 int8 entries; the 8-bit softmax's exponential 256 int32 entries; the 16-bit
// softmax uses two tables of 512 int32 entries (exponential and reciprocal); 16-bit sigmoid
// and tanh need none on U55/U65 (the NPU computes them natively: Vela runs them as
// Sigmoid/Tanh operations, not LUT ones) and on U85 a 2 KiB interpolating table of the
// function alone, whatever the quantization (Vela 5.2's ConvertTanhSigmoidToLUT16); another
// 16-bit function takes a 2 KiB table.
int64_t LutBytes(const Subgraph& sg, const Lowered& lw, bool u85) {
  const std::vector<int32_t> producer = TensorProducers(sg);
  auto quant_key = [&](int32_t t) {
    std::string k;
    if (t < 0 || t >= static_cast<int32_t>(sg.tensors.size())) return k;
    const Tensor& x = sg.tensors[t];
    absl::StrAppend(&k, static_cast<int>(x.dtype));
    if (!x.quant.scale.empty()) absl::StrAppend(&k, ":", x.quant.scale[0]);
    if (!x.quant.zero_point.empty()) absl::StrAppend(&k, ":", x.quant.zero_point[0]);
    return k;
  };
  std::set<std::string> tables;
  int64_t bytes = 0;
  for (const NpuOp& op : lw.ops) {
    if (!op.needs_lut) continue;
    const bool sixteen = op.ifm.bits == 16 || op.ofm.bits == 16;
    const int32_t tensor = op.ofm.id >= 0 ? lw.fmaps[RootFmap(lw, op.ofm.id)].tensor : -1;
    const int32_t fn = tensor >= 0 ? producer[tensor] : -1;
    const Operator& src = sg.ops[op.src_op];
    std::string key;
    int64_t size = 0;
    if (src.kind == OpKind::kSoftmax) {
      // Softmax's tables, once per operator.
      key = absl::StrCat("softmax", op.src_op);
      const bool i16 = !src.inputs.empty() && src.inputs[0] >= 0 &&
                       sg.tensors[src.inputs[0]].dtype == DType::kInt16;
      size = i16 ? 2 * 2048 : 1024;
    } else if (fn >= 0 && !sg.ops[fn].inputs.empty()) {
      // The op whose output the table produces is the function (a fused or standalone
      // activation): its kind and the quantization on both sides define the table.
      const Operator& f = sg.ops[fn];
      const bool sigmoid_tanh = f.kind == OpKind::kLogistic || f.kind == OpKind::kTanh;
      if (sigmoid_tanh && sixteen && !u85) continue;
      key = sigmoid_tanh && sixteen
                ? absl::StrCat(static_cast<int>(f.kind), "/16")
                : absl::StrCat(static_cast<int>(f.kind), "/", quant_key(f.inputs[0]), "/",
                               quant_key(f.outputs[0]));
      size = sixteen ? 2048 : 256;
    } else {
      // A table inside another lowered operator (a recurrent cell's gate activations).
      if (src.kind == OpKind::kUnidirectionalSequenceLstm && sixteen && !u85) continue;
      key = absl::StrCat("op", op.src_op, "/", op.name, "/", op.ifm.bits);
      size = sixteen ? 2048 : 256;
    }
    if (tables.insert(key).second) bytes += size;
  }
  return bytes;
}

}  // namespace

int64_t Align16(int64_t v) { return (v + 15) / 16 * 16; }

WeightTotals EncodeWeights(const Subgraph& sg, const Arch& arch, Lowered* lw) {
  const bool u85 = arch.family == EthosUFamily::kU85;
  std::vector<int64_t> enc_of_tensor(sg.tensors.size(), -1);
  std::vector<bool> sparse_of_tensor(sg.tensors.size(), false);
  std::vector<bool> seen_view(sg.tensors.size(), false);
  WeightTotals w;
  const std::vector<WeightEncoding> encodings = EncodeWeightsEstimates(sg, lw->ops, arch);
  for (NpuOp& op : lw->ops) {
    const WeightEncoding& encoding = encodings[static_cast<size_t>(&op - lw->ops.data())];
    if (op.weight_tensor < 0) {
      if (op.encoded_weight_bytes > 0) {
        // A kernel the lowering made (MEAN's ones), stored once per op.
        if (u85) op.encoded_weight_bytes = LoweredKernelStreamBytes(op, arch);
        w.encoded_bytes += op.encoded_weight_bytes;
        w.const_bytes += Align16(op.encoded_weight_bytes) + Align16(op.scale_bytes);
      } else if (op.weight_bytes > 0) {
        // Repeated (e.g. per time step) use of weights encoded once.
        op.encoded_weight_bytes = op.weight_bytes;
      }
      continue;
    }
    const int32_t t = op.weight_tensor;
    if (op.weight_view) {
      // Part of a kernel split over several ops: each part is encoded and stored on its own.
      const WeightEncoding& we = encoding;
      if (!seen_view[t]) w.original_bytes += static_cast<int64_t>(sg.tensors[t].num_bytes());
      seen_view[t] = true;
      w.encoded_bytes += we.encoded_bytes;
      w.const_bytes += Align16(we.encoded_bytes) + Align16(op.scale_bytes);
      op.encoded_weight_bytes = we.encoded_bytes;
      op.sparse24 = u85 && we.sparse24;
      continue;
    }
    if (enc_of_tensor[t] < 0) {
      const WeightEncoding& we = encoding;
      enc_of_tensor[t] = we.encoded_bytes;
      sparse_of_tensor[t] = we.sparse24;
      w.original_bytes += static_cast<int64_t>(sg.tensors[t].num_bytes());
      w.encoded_bytes += we.encoded_bytes;
      w.const_bytes += Align16(we.encoded_bytes) + Align16(op.scale_bytes);
    }
    op.encoded_weight_bytes = enc_of_tensor[t];
    op.sparse24 = u85 && sparse_of_tensor[t];
  }
  w.const_bytes += LutBytes(sg, *lw, u85);
  return w;
}

std::vector<int32_t> RunOrder(const Subgraph& sg, const Lowered& lw) {
  const int32_t n = static_cast<int32_t>(sg.ops.size());
  const int32_t nt = static_cast<int32_t>(sg.tensors.size());
  const std::vector<int32_t> producer = TensorProducers(sg);
  // Each op waits for the producers of its inputs (once per input).
  std::vector<int32_t> waiting(n, 0);
  std::vector<std::vector<int32_t>> users(n);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t t : sg.ops[i].inputs) {
      if (t < 0 || t >= nt || producer[t] < 0 || producer[t] == i) continue;
      ++waiting[i];
      users[producer[t]].push_back(i);
    }
  }
  // Vela's op order (its per-layer tables): depth first from the graph outputs, the last
  // output first, each op after the producers of its inputs, the last input's first. An
  // unrolled recurrent cell runs step by step (a step's input projection just before the
  // step, not all projections first as a file may list them). Ops no output depends on follow
  // in file order.
  std::vector<int32_t> rank(n, -1);
  {
    int32_t next = 0;
    std::vector<std::pair<int32_t, size_t>> stack;  // op, next input to visit
    std::vector<char> seen(n, 0);
    auto visit = [&](int32_t root) {
      if (root < 0 || seen[root]) return;
      seen[root] = 1;
      stack.push_back({root, 0});
      while (!stack.empty()) {
        auto& [op, k] = stack.back();
        const std::vector<int32_t>& in = sg.ops[op].inputs;
        if (k < in.size()) {
          const int32_t t = in[in.size() - 1 - k++];
          const int32_t p = t >= 0 && t < nt ? producer[t] : -1;
          if (p >= 0 && !seen[p]) {
            seen[p] = 1;
            stack.push_back({p, 0});
          }
          continue;
        }
        rank[op] = next++;
        stack.pop_back();
      }
    };
    for (size_t k = sg.outputs.size(); k-- > 0;) {
      const int32_t t = sg.outputs[k];
      visit(t >= 0 && t < nt ? producer[t] : -1);
    }
    for (int32_t i = 0; i < n; ++i) {
      if (rank[i] < 0) rank[i] = next++;
    }
  }
  // Ready ops by kind, earliest in that order first.
  auto later = [&](int32_t a, int32_t b) { return rank[a] > rank[b]; };
  using MinHeap = std::priority_queue<int32_t, std::vector<int32_t>, decltype(later)>;
  MinHeap npu(later), cpu(later);
  auto push = [&](int32_t i) { (lw.cpu_reasons[i].empty() ? npu : cpu).push(i); };
  for (int32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) push(i);
  }
  std::vector<bool> done(n, false);
  std::vector<int32_t> order;
  order.reserve(n);
  int32_t lowest = 0;  // ops below are all done
  while (static_cast<int32_t>(order.size()) < n) {
    int32_t pick = -1;
    for (MinHeap* h : {&npu, &cpu}) {
      while (pick < 0 && !h->empty()) {
        const int32_t i = h->top();
        h->pop();
        if (!done[i]) pick = i;
      }
    }
    if (pick < 0) {
      // A cycle (malformed graph): keep the file's order.
      while (done[lowest]) ++lowest;
      pick = lowest;
    }
    done[pick] = true;
    order.push_back(pick);
    for (int32_t u : users[pick]) {
      if (--waiting[u] == 0 && !done[u]) push(u);
    }
  }
  return order;
}

Schedule ScheduleSteps(const Subgraph& sg, const Lowered& lw) {
  const int32_t nops = static_cast<int32_t>(lw.ops.size());
  Schedule s;
  s.step_of_npu.assign(nops, 0);
  // NPU ops of each IR op (contiguous, in IR order).
  std::vector<int32_t> first_npu(sg.ops.size() + 1, nops);
  for (int32_t k = nops - 1; k >= 0; --k) first_npu[lw.ops[k].src_op] = k;
  // Vela runs a concatenation as one memory copy per input that its producer does not write
  // in place, each an operation of its own. A copy of a CPU op's output runs right after that
  // CPU op (before the next one, so the output is live across it: unet_resize_any's two CPU
  // resizes), a copy of an NPU op's output where the concatenation is (a U-Net's skip
  // connection is copied just before the decoder convolution reads it).
  const std::vector<int32_t> producer = TensorProducers(sg);
  std::vector<std::vector<int32_t>> copies_after(sg.ops.size());
  std::vector<bool> moved(nops, false);
  for (int32_t k = 0; k < nops; ++k) {
    const NpuOp& op = lw.ops[k];
    const OpKind kind = sg.ops[op.src_op].kind;
    if (op.elided || op.ifm.id < 0 || (kind != OpKind::kConcatenation && kind != OpKind::kPack)) {
      continue;
    }
    const int32_t t = lw.fmaps[op.ifm.id].tensor;
    const int32_t p = t >= 0 && static_cast<size_t>(t) < producer.size() ? producer[t] : -1;
    if (p < 0 || p == op.src_op || lw.cpu_reasons[p].empty()) continue;
    copies_after[p].push_back(k);
    moved[k] = true;
  }
  auto emit_copies = [&](int32_t i) {
    for (int32_t k : copies_after[i]) s.step_of_npu[k] = s.steps++;
  };
  // A QUANTIZE whose one reader is a concatenation on the NPU becomes that input's copy (Vela
  // writes the rescaled input into the output's slice and lists it under the concatenation):
  // it runs where the concatenation is, its inputs' rescales in input order.
  std::vector<int32_t> readers(sg.tensors.size(), 0);
  for (const Operator& o : sg.ops) {
    for (int32_t t : o.inputs) {
      if (t >= 0 && static_cast<size_t>(t) < readers.size()) ++readers[t];
    }
  }
  for (int32_t t : sg.outputs) {
    if (t >= 0 && static_cast<size_t>(t) < readers.size()) ++readers[t];
  }
  std::vector<bool> deferred(sg.ops.size(), false);
  std::vector<std::vector<int32_t>> rescales_of(sg.ops.size());
  for (int32_t c = 0; c < static_cast<int32_t>(sg.ops.size()); ++c) {
    const Operator& o = sg.ops[c];
    if ((o.kind != OpKind::kConcatenation && o.kind != OpKind::kPack) ||
        !lw.cpu_reasons[c].empty()) {
      continue;
    }
    for (int32_t t : o.inputs) {
      if (t < 0 || static_cast<size_t>(t) >= producer.size() || readers[t] != 1) continue;
      const int32_t q = producer[t];
      if (q < 0 || sg.ops[q].kind != OpKind::kQuantize || !lw.cpu_reasons[q].empty() ||
          first_npu[q] >= nops || lw.ops[first_npu[q]].src_op != q || deferred[q]) {
        continue;
      }
      deferred[q] = true;
      rescales_of[c].push_back(q);
    }
  }
  auto emit_npu = [&](int32_t i) {
    for (int32_t k = first_npu[i]; k < nops && lw.ops[k].src_op == i; ++k) {
      if (!moved[k]) s.step_of_npu[k] = s.steps++;
    }
    emit_copies(i);
  };
  for (int32_t i : RunOrder(sg, lw)) {
    if (lw.cpu_reasons[i].empty()) {
      if (deferred[i]) continue;
      for (int32_t q : rescales_of[i]) emit_npu(q);
      emit_npu(i);
      continue;
    }
    std::vector<int32_t> touched;
    for (int32_t t : sg.ops[i].inputs) {
      if (t != kNoTensor && lw.fmap_of_tensor[t] >= 0) touched.push_back(lw.fmap_of_tensor[t]);
    }
    for (int32_t t : sg.ops[i].outputs) {
      if (lw.fmap_of_tensor[t] >= 0) touched.push_back(lw.fmap_of_tensor[t]);
    }
    s.cpu_fmaps.resize(s.steps + 1);
    s.cpu_fmaps[s.steps] = std::move(touched);
    s.cpu_step.resize(s.steps + 1, false);
    s.cpu_step[s.steps] = true;
    ++s.steps;
    emit_copies(i);
  }
  s.cpu_fmaps.resize(s.steps + 1);
  s.cpu_step.resize(s.steps + 1, false);
  return s;
}

int32_t RootFmap(const Lowered& lw, int32_t id) {
  if (id < 0) return -1;
  return lw.fmaps[id].alias_of >= 0 ? lw.fmaps[id].alias_of : id;
}

void ChainU85(const Arch& arch, const Schedule& schedule, Lowered* lw) {
  if (arch.family != EthosUFamily::kU85) return;
  std::vector<int32_t> uses(lw->fmaps.size(), 0);
  auto count = [&](int32_t id) {
    if (RootFmap(*lw, id) >= 0) ++uses[RootFmap(*lw, id)];
  };
  for (const NpuOp& op : lw->ops) {
    count(op.ifm.id);
    if (op.has_ifm2) count(op.ifm2.id);
  }
  for (const auto& v : schedule.cpu_fmaps) {
    for (int32_t f : v) count(f);
  }
  int chain_len = 1;
  for (int32_t i = 1; i < static_cast<int32_t>(lw->ops.size()); ++i) {
    NpuOp& op = lw->ops[i];
    int32_t head = i - 1;
    while (head >= 0 && lw->ops[head].chained_into >= 0) head = lw->ops[head].chained_into;
    if (head < 0 || !IsChainable(op) || op.no_chain) {
      chain_len = 1;
      continue;
    }
    NpuOp& h = lw->ops[head];
    const int32_t mid = RootFmap(*lw, h.ofm.id);
    const bool in1 = RootFmap(*lw, op.ifm.id) == mid;
    const bool in2 = op.has_ifm2 && RootFmap(*lw, op.ifm2.id) == mid;
    if (mid < 0 || !(in1 || in2) || (in1 && in2) || uses[mid] != 1 ||
        lw->fmaps[mid].graph_io || lw->fmaps[mid].cpu_touched || chain_len >= 4 ||
        h.hw == HwOp::kTranspose || h.hw == HwOp::kMatMul ||
        op.ofm.shape.elements() > h.ofm.shape.elements()) {
      // (A broadcast growing the map does not stream through the chain: Vela's U85 tables
      // cost a transformer's [1, 16, 1] x [1, 1, 64] MUL on its own after the chained MEAN,
      // and a softmax's SUB of the reduced maximum from the full map after its MAXPOOL.)
      chain_len = 1;
      continue;
    }
    op.chained_into = head;
    h.chain_head = true;
    ++chain_len;
    const FmRef other = in1 ? op.ifm2 : op.ifm;
    if (other.id >= 0 && !other.scalar) h.extra_reads.push_back(other);
    // The chain writes the last stage's map, in the head's view of its own OFM (a layer
    // norm's MEAN sums [16, 64] rows into a 16 x 1 map, whatever the [1, 16, 1] output).
    const Shape3 view = h.ofm.shape;
    h.ofm = op.ofm;
    if (view.elements() == h.ofm.shape.elements()) h.ofm.shape = view;
    lw->fmaps[mid].bytes = 0;  // never stored
  }
  // The output unit's cost of each chained stage, as Vela 5.2 charges it: a stage that writes
  // into the chaining buffer (all but the last) costs out[4] when 32 bits go in or out; the
  // last, a binary operation on 32-bit inputs, out[5] for a 32-bit result and out[4] for a
  // narrower one; otherwise the rate of its result's width.
  for (size_t k = 0; k < lw->ops.size(); ++k) {
    NpuOp& op = lw->ops[k];
    if (op.chained_into < 0) continue;
    const bool last = k + 1 == lw->ops.size() || lw->ops[k + 1].chained_into != op.chained_into;
    const int32_t ib = op.ifm.scalar ? op.ifm2.bits : op.ifm.bits, ob = op.ofm.bits;
    int idx = ob >= 64 ? 3 : ob == 32 ? 2 : ob == 16 ? 1 : 0;
    if (!last && (ib == 32 || ob == 32)) {
      idx = 4;
    } else if (ib == 32 && ob < 64) {
      idx = ob == 32 ? 5 : 4;
    }
    double ao = arch.ao_out[idx];
    if (op.act != Act::kNone) ao = std::max(ao, arch.ao_act[0]);
    lw->ops[op.chained_into].chain_ao_extra += ao;
  }
}

namespace {

// Sets first/last (in steps) of every root feature map any step touches; returns them per fmap.
void LiveRanges(const Subgraph& sg, const Schedule& schedule, const Lowered& lw,
                std::vector<int32_t>* first, std::vector<int32_t>* last) {
  first->assign(lw.fmaps.size(), -1);
  last->assign(lw.fmaps.size(), -1);
  auto touch = [&](int32_t id, int32_t step) {
    const int32_t r = RootFmap(lw, id);
    if (r < 0) return;
    if ((*first)[r] < 0 || step < (*first)[r]) (*first)[r] = step;
    (*last)[r] = std::max((*last)[r], step);
  };
  for (int32_t k = 0; k < static_cast<int32_t>(lw.ops.size()); ++k) {
    const NpuOp& op = lw.ops[k];
    const int32_t s = schedule.step_of_npu[op.chained_into >= 0 ? op.chained_into : k];
    touch(op.ifm.id, s);
    if (op.has_ifm2) touch(op.ifm2.id, s);
    touch(op.ofm.id, s);
    for (const FmRef& e : op.extra_reads) touch(e.id, s);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(schedule.cpu_fmaps.size()); ++s) {
    for (int32_t f : schedule.cpu_fmaps[s]) touch(f, s);
  }
  for (int32_t t : sg.inputs) {
    if (lw.fmap_of_tensor[t] >= 0) touch(lw.fmap_of_tensor[t], 0);
  }
  for (int32_t t : sg.outputs) {
    if (lw.fmap_of_tensor[t] >= 0) touch(lw.fmap_of_tensor[t], std::max(schedule.steps - 1, 0));
  }
}

// Vela's fast-storage allocation of a limited cache (doc 3.2, faststorage_allocator): every
// intermediate starts in the staging SRAM; where the bytes live at some step pass the limit,
// the maps live across such steps compete, and per group of time-overlapping rivals the set
// kept in SRAM is the one with the most element accesses that fits at every step (an
// exhaustive search, include-first, cut off after a fixed number of visits with the best set
// found so far). The rest go back to the arena memory.
class CacheFit {
 public:
  CacheFit(std::vector<int64_t> base, std::vector<int64_t> max, int64_t limit)
      : base_(std::move(base)), max_(std::move(max)), limit_(limit) {}

  struct Range {
    int32_t fmap, first, last;
    int64_t bytes;
    double score;
  };

  // Returns which of `rs` (one group, by start) to evict.
  std::vector<bool> Solve(const std::vector<Range>& rs) {
    rs_ = &rs;
    cur_.assign(rs.size(), false);
    best_evicted_.assign(rs.size(), true);
    best_score_ = -1;
    visits_ = 0;
    Visit(0, 0);
    return best_evicted_;
  }

 private:
  static constexpr int64_t kMaxVisits = 1 << 14;

  int64_t Peak(const std::vector<int64_t>& u, const Range& r) const {
    int64_t m = 0;
    for (int32_t t = r.first; t <= r.last; ++t) m = std::max(m, u[t]);
    return m;
  }
  void Add(std::vector<int64_t>* u, const Range& r, int64_t sign) {
    for (int32_t t = r.first; t <= r.last; ++t) (*u)[t] += sign * r.bytes;
  }
  void Visit(size_t ix, double score) {
    if (++visits_ > kMaxVisits && best_score_ >= 0) return;
    if (ix == rs_->size()) {
      if (score > best_score_) best_score_ = score, best_evicted_ = cur_;
      return;
    }
    const Range& r = (*rs_)[ix];
    const bool can_fit = Peak(base_, r) + r.bytes <= limit_;
    const bool always_fits = can_fit && Peak(max_, r) <= limit_;
    if (can_fit) {
      cur_[ix] = false;
      Add(&base_, r, 1);
      Visit(ix + 1, score + r.score);
      Add(&base_, r, -1);
    }
    if (!always_fits) {
      cur_[ix] = true;
      Add(&max_, r, -1);
      Visit(ix + 1, score);
      Add(&max_, r, 1);
      cur_[ix] = false;
    }
  }

  std::vector<int64_t> base_, max_;
  const int64_t limit_;
  const std::vector<Range>* rs_ = nullptr;
  std::vector<bool> cur_, best_evicted_;
  double best_score_ = -1;
  int64_t visits_ = 0;
};

// Vela's element access of one NPU op (its architecture's MeasureElementAccess), the measure
// its fast-storage allocation ranks feature maps by: elements read from each IFM (a
// convolution, pooling or reduction: IfmBlockReads) and written to the OFM, each map's depth
// rounded up to 16 in NHCWB16.
struct ElementAccess {
  double ifm = 0, ifm2 = 0, ofm = 0;
};

ElementAccess MeasureElementAccess(const Arch& arch, const Lowered& lw, const NpuOp& op,
                                   const BlockConfig& bc) {
  auto format = [&](int32_t id) {
    const int32_t r = RootFmap(lw, id);
    return r >= 0 ? lw.fmaps[r].format : Format::kNhwc;
  };
  auto stored = [](Shape3 s, Format f) {
    return double(s.h) * double(s.w) * double(f == Format::kNhcwb16 ? (s.c + 15) / 16 * 16 : s.c);
  };
  const bool u85 = arch.family == EthosUFamily::kU85;
  const Format fi = format(op.ifm.id), fo = format(op.ofm.id);
  ElementAccess a;
  switch (op.hw) {
    case HwOp::kConvolution:
    case HwOp::kDepthwise:
    case HwOp::kVectorProduct:
    case HwOp::kPooling:
    case HwOp::kReduceSum:
      a.ifm = IfmBlockReads(op, fi, bc);
      break;
    case HwOp::kElementwise:
      if (u85) {
        // Every IFM that is not the one scalar encoded in the command stream.
        bool encoded = false;
        auto read = [&](const FmRef& r, Format f) -> double {
          if (r.shape.elements() > 1 || encoded) return stored(r.shape, f);
          encoded = true;
          return 0;
        };
        a.ifm = read(op.ifm, fi);
        if (op.has_ifm2) a.ifm2 = read(op.ifm2, format(op.ifm2.id));
      } else if (op.ifm.shape.elements() == 1) {
        if (op.ifm.bits > 8) a.ifm = stored(op.ifm.shape, fi);
        else if (op.has_ifm2) a.ifm2 = stored(op.ofm.shape, fi);
      } else {
        a.ifm = stored(op.ofm.shape, fi);
        if (op.has_ifm2 && op.ifm2.shape.elements() > 1) a.ifm2 = a.ifm;
        else if (op.has_ifm2 && op.ifm2.bits > 8) a.ifm2 = stored(op.ifm2.shape, fi);
      }
      break;
    case HwOp::kTranspose:
      a.ifm = double(op.ifm.shape.elements());
      break;
    case HwOp::kMatMul:
      a.ifm = double(op.ifm.shape.elements()) * std::max(op.ifm2.shape.w, 1);
      a.ifm2 = double(op.ifm2.shape.elements());
      break;
  }
  // U85: an OFM chained into the next op is never stored.
  if (!(u85 && op.chained_into >= 0)) a.ofm = stored(op.ofm.shape, fo);
  return a;
}

void FitStagingCache(const Arch& arch, const MemSystem& ms, int64_t cache_bytes,
                     const Schedule& schedule, const std::vector<BlockConfig>& blocks,
                     const std::vector<TensorLifetime>& reserved, Lowered* lw) {
  const int32_t nf = static_cast<int32_t>(lw->fmaps.size());
  int32_t steps = std::max(schedule.steps, 1);
  for (const FeatureMap& fm : lw->fmaps) steps = std::max(steps, fm.last + 1);
  // Each stored map's score: the elements its readers read and its writers write (Vela's
  // element access). A map read inside a cascade (by an op whose primary IFM is a rolling
  // buffer) scores highest: the cascade's other input is in SRAM already.
  constexpr double kCascadeScore = 2147483647.0;
  std::vector<double> access(nf, 0);
  std::vector<bool> in_cascade(nf, false);
  auto add = [&](int32_t id, double elements) {
    const int32_t r = RootFmap(*lw, id);
    if (r >= 0) access[r] += elements;
  };
  for (size_t k = 0; k < lw->ops.size(); ++k) {
    const NpuOp& op = lw->ops[k];
    const BlockConfig bc = k < blocks.size() ? blocks[k] : FindBlockConfig(arch, op);
    const ElementAccess e = MeasureElementAccess(arch, *lw, op, bc);
    const int32_t primary = RootFmap(*lw, op.ifm.id);
    const int32_t second = op.has_ifm2 ? RootFmap(*lw, op.ifm2.id) : -1;
    if (second >= 0 && primary >= 0 && lw->fmaps[primary].rolling_bytes > 0) {
      in_cascade[second] = true;
    }
    add(op.ifm.id, e.ifm);
    if (op.has_ifm2) add(op.ifm2.id, e.ifm2);
    add(op.ofm.id, e.ofm);
    for (const FmRef& x : op.extra_reads) {  // U85: a chained stage's second operand
      if (RootFmap(*lw, x.id) >= 0) add(x.id, double(x.shape.elements()));
    }
  }
  for (int32_t f = 0; f < nf; ++f) {
    if (in_cascade[f]) access[f] = kCascadeScore;
  }
  // Weight buffers were placed first: they take their bytes at every step they span.
  std::vector<int64_t> usage(steps, 0);
  for (const TensorLifetime& r : reserved) {
    for (int32_t t = r.first_op; t <= r.last_op && t < steps; ++t) {
      usage[t] += static_cast<int64_t>(r.bytes);
    }
  }
  std::vector<int32_t> staged;
  for (int32_t f = 0; f < nf; ++f) {
    const FeatureMap& fm = lw->fmaps[f];
    if (!Stored(fm) || fm.area != ms.staging_area) continue;
    staged.push_back(f);
    for (int32_t t = fm.first; t <= fm.last; ++t) usage[t] += StoredBytes(fm);
  }
  // Maps live across an over-full step compete; the others (and a cascade's rolling buffers)
  // stay in SRAM.
  std::vector<int64_t> base(usage.begin(), usage.end());
  for (int32_t f : staged) {
    const FeatureMap& fm = lw->fmaps[f];
    for (int32_t t = fm.first; t <= fm.last; ++t) base[t] -= StoredBytes(fm);
  }
  std::vector<CacheFit::Range> rivals;
  for (int32_t f : staged) {
    const FeatureMap& fm = lw->fmaps[f];
    bool contested = false;
    if (fm.rolling_bytes > 0) {
      for (int32_t t = fm.first; t <= fm.last; ++t) base[t] += StoredBytes(fm);
      continue;
    }
    for (int32_t t = fm.first; t <= fm.last && !contested; ++t) contested = usage[t] > cache_bytes;
    const int64_t bytes = Align16(fm.bytes);
    if (!contested) {
      for (int32_t t = fm.first; t <= fm.last; ++t) base[t] += bytes;
      continue;
    }
    rivals.push_back({f, fm.first, fm.last, bytes, access[f]});
  }
  std::sort(rivals.begin(), rivals.end(), [](const CacheFit::Range& a, const CacheFit::Range& b) {
    return a.first != b.first ? a.first < b.first : a.fmap < b.fmap;
  });
  // Groups of time-overlapping rivals are independent; like Vela, a group closes at 21 rivals
  // (the next starts a new one even if they overlap), so each search is exhaustive.
  constexpr size_t kMaxComponent = 20;
  CacheFit fit(base, usage, cache_bytes);
  size_t g0 = 0;
  while (g0 < rivals.size()) {
    size_t g1 = g0 + 1;
    int32_t end = rivals[g0].last;
    while (g1 < rivals.size() && rivals[g1].first <= end && g1 - g0 <= kMaxComponent) {
      end = std::max(end, rivals[g1++].last);
    }
    const std::vector<CacheFit::Range> group(rivals.begin() + static_cast<std::ptrdiff_t>(g0),
                                             rivals.begin() + static_cast<std::ptrdiff_t>(g1));
    const std::vector<bool> evict = fit.Solve(group);
    for (size_t k = 0; k < group.size(); ++k) {
      if (evict[k]) lw->fmaps[group[k].fmap].area = ms.arena_area;
    }
    g0 = g1;
  }
  // The addresses must fit too: while the allocated peak passes the limit (fragmentation),
  // the least-accessed staged rival goes back.
  std::sort(rivals.begin(), rivals.end(), [](const CacheFit::Range& a, const CacheFit::Range& b) {
    return a.score < b.score;
  });
  for (size_t k = 0; k <= rivals.size(); ++k) {
    std::vector<TensorLifetime> kept;
    for (const TensorLifetime& r : reserved) {
      AddRange(&kept, static_cast<int64_t>(r.bytes), r.first_op, r.last_op);
    }
    for (const FeatureMap& fm : lw->fmaps) {
      if (Stored(fm) && fm.area == ms.staging_area) {
        AddRange(&kept, StoredBytes(fm), fm.first, fm.last);
      }
    }
    if (FitsIn(kept, cache_bytes)) break;
    while (k < rivals.size() && lw->fmaps[rivals[k].fmap].area != ms.staging_area) ++k;
    if (k == rivals.size()) {
      // Fixed maps alone overflow (cannot happen by construction); keep the cap anyway.
      for (int32_t f : staged) {
        if (lw->fmaps[f].rolling_bytes == 0) lw->fmaps[f].area = ms.arena_area;
      }
      break;
    }
    lw->fmaps[rivals[k].fmap].area = ms.arena_area;
  }
}

}  // namespace

namespace {

// A non-chained NPU op as the cascade builder sees it (doc 8.4).
struct CascadeOp {
  int32_t op = -1;            // index into lw.ops
  int32_t in = -1, out = -1;  // root feature maps of the primary IFM and of the OFM
  bool kind_ok = false;       // a kind Vela stripes: convolution, pooling, elementwise
  bool linked = false;        // reads the previous entry's OFM, its only consumer, whole
  int64_t whole = 0;          // whole IFM + OFM (16-byte aligned)
  int64_t beside = 0;         // other maps live at its time step
  int64_t weights = 0;        // its weights and scales, as one single buffer
};

// Rows of IFM an op reads for `rows` rows of OFM.
int32_t InputRows(const NpuOp& op, int32_t rows) {
  // Saturated for hostile strides, kernels and dilations; at least one row.
  const int64_t need = (int64_t{rows} - 1) * op.sh + (int64_t{op.kh} - 1) * op.dh + 1;
  return static_cast<int32_t>(std::clamp<int64_t>(need, 1, int64_t{1} << 24));
}

// Bytes of the rolling buffer holding `fm` between a producer writing stripes of `prod_rows`
// and a consumer reading stripes of `cons_rows`: room for both, in whole consumer stripes.
int64_t RollingBytes(const FeatureMap& fm, int32_t prod_rows, int32_t cons_rows) {
  const int64_t need = int64_t{prod_rows} + cons_rows;
  const int64_t rows = std::min<int64_t>((need + cons_rows - 1) / cons_rows * cons_rows,
                                         std::max(fm.shape.h, 1));
  const int64_t depth = fm.format == Format::kNhcwb16 ? (int64_t{fm.shape.c} + 15) / 16 * 16
                                                      : int64_t{fm.shape.c};
  return Align16(rows * fm.shape.w * depth * ((fm.bits + 7) / 8));
}

struct Cascade {
  int32_t first = 0, last = 0;  // entries of the op sequence
  int64_t bytes = 0;            // its rolling buffers and weight buffers
};

// Vela's cascade builder when feature maps can spill: from each op that runs in stripes, the
// cascade grows while the next op's whole IFM and OFM (with the maps live beside it) would not
// fit `limit` and the buffers so far do. `beside` overrides the entries' own (per entry).
std::vector<Cascade> FormCascades(const std::vector<CascadeOp>& seq,
                                  const std::vector<int32_t>& stripe, const Lowered& lw,
                                  int32_t from, int32_t to, int64_t limit, bool buffer_weights,
                                  const std::vector<int64_t>& beside) {
  auto striped = [&](int32_t e) {
    return seq[e].kind_ok && stripe[e] < lw.ops[seq[e].op].ofm.shape.h;
  };
  std::vector<Cascade> out;
  int32_t i = from;
  while (i <= to) {
    if (!striped(i)) {
      ++i;
      continue;
    }
    int64_t buffers = buffer_weights ? seq[i].weights : 0;
    Cascade best{i, i, 0};
    for (int32_t c = i + 1; c <= to; ++c) {
      if (!seq[c].linked || !striped(c)) break;
      buffers += (buffer_weights ? seq[c].weights : 0) +
                 RollingBytes(lw.fmaps[seq[c].in], stripe[c - 1],
                              InputRows(lw.ops[seq[c].op], stripe[c]));
      if (seq[c].whole + beside[c] < limit || buffers > limit) break;
      best.last = c;
      best.bytes = buffers;
    }
    if (best.last > i) {
      out.push_back(best);
      i = best.last + 1;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace

std::vector<int32_t> BuildCascades(const Subgraph& sg, const EthosUConfig& cfg,
                                   const MemSystem& ms, Schedule* schedule, Lowered* lw) {
  std::vector<int32_t> stripe_rows(lw->ops.size(), 0);
  const int64_t limit = cfg.memory_mode.arena_cache_bytes;
  if (ms.arena_area == ms.staging_area || limit <= 0) return stripe_rows;
  const int32_t nf = static_cast<int32_t>(lw->fmaps.size());
  // Readers of every stored map (an op counts once), and whole-tensor usage per step.
  std::vector<int32_t> readers(nf, 0);
  for (const NpuOp& op : lw->ops) {
    std::set<int32_t> read;
    read.insert(RootFmap(*lw, op.ifm.id));
    if (op.has_ifm2) read.insert(RootFmap(*lw, op.ifm2.id));
    for (const FmRef& e : op.extra_reads) read.insert(RootFmap(*lw, e.id));
    for (int32_t r : read) {
      if (r >= 0) ++readers[r];
    }
  }
  std::vector<int32_t> first, last;
  LiveRanges(sg, *schedule, *lw, &first, &last);
  std::vector<int64_t> usage(std::max(schedule->steps, 1) + 1, 0);
  for (int32_t f = 0; f < nf; ++f) {
    const FeatureMap& fm = lw->fmaps[f];
    if (fm.alias_of >= 0 || first[f] < 0 || fm.bytes <= 0) continue;
    for (int32_t t = first[f]; t <= last[f] && t < static_cast<int32_t>(usage.size()); ++t) {
      usage[t] += Align16(fm.bytes);
    }
  }
  auto whole = [&](int32_t r) { return r >= 0 ? Align16(lw->fmaps[r].bytes) : int64_t{0}; };

  std::vector<CascadeOp> seq;
  const bool can_buffer = ms.const_area != ms.staging_area;
  for (int32_t k = 0; k < static_cast<int32_t>(lw->ops.size()); ++k) {
    const NpuOp& op = lw->ops[k];
    if (op.chained_into >= 0) continue;
    CascadeOp e;
    e.op = k;
    e.in = op.ifm.scalar ? -1 : RootFmap(*lw, op.ifm.id);
    e.out = RootFmap(*lw, op.ofm.id);
    e.kind_ok = e.in >= 0 && e.out >= 0 && op.upscale == 1 && !op.elided &&
                (op.hw == HwOp::kConvolution || op.hw == HwOp::kDepthwise ||
                 op.hw == HwOp::kPooling || op.hw == HwOp::kElementwise);
    if (!seq.empty() && e.in >= 0 && e.in == seq.back().out) {
      const FeatureMap& mid = lw->fmaps[e.in];
      const NpuOp& prev = lw->ops[seq.back().op];
      const int32_t step = schedule->step_of_npu[k];
      const bool same = prev.ofm.shape == mid.shape && op.ifm.shape == mid.shape;
      e.linked = same && readers[e.in] == 1 && !mid.graph_io && !mid.cpu_touched &&
                 mid.format == Format::kNhcwb16 && mid.alias_of < 0 && mid.bytes > 0 &&
                 step == schedule->step_of_npu[seq.back().op] + 1;
    }
    e.whole = whole(e.in) + whole(e.out);
    const int32_t step = schedule->step_of_npu[k];
    e.beside = step < static_cast<int32_t>(usage.size())
                   ? std::max<int64_t>(0, usage[step] - e.whole)
                   : 0;
    if (can_buffer && op.encoded_weight_bytes > 0) {
      e.weights = Align16(op.encoded_weight_bytes) + Align16(op.scale_bytes);
    }
    seq.push_back(e);
  }
  const int32_t n = static_cast<int32_t>(seq.size());
  if (n < 2) return stripe_rows;
  // Minimal stripes: each op produces as many rows as the next op's stride.
  std::vector<int32_t> stripe(n, 1);
  for (int32_t e = 0; e + 1 < n; ++e) stripe[e] = std::max(lw->ops[seq[e + 1].op].sh, 1);
  std::vector<int64_t> beside(n);
  for (int32_t e = 0; e < n; ++e) beside[e] = seq[e].beside;
  const std::vector<Cascade> initial =
      FormCascades(seq, stripe, *lw, 0, n - 1, limit, false, beside);

  // Performance strategy: per cascade, taller final stripes (one row more at a time, up to half
  // the last op's OFM) while the memory still fits and the cascade is not split further.
  std::vector<Cascade> chosen;
  for (const Cascade& c : initial) {
    std::vector<int32_t> best_stripe(stripe.begin() + c.first, stripe.begin() + c.last + 1);
    std::vector<Cascade> best{c};
    std::vector<int64_t> sub_beside(n, seq[c.first].beside);
    const NpuOp& tail = lw->ops[seq[c.last].op];
    const int32_t top = (tail.ofm.shape.h + 1) / 2;
    size_t max_count = 0;
    for (int32_t h = stripe[c.last] + 1; h <= top; ++h) {
      std::vector<int32_t> st(stripe);
      st[c.last] = h;
      bool overflow = false;
      for (int32_t e = c.last; e > c.first; --e) {
        const int64_t rows = int64_t{st[e]} * std::max(lw->ops[seq[e].op].sh, 1);
        overflow |= rows > (1 << 24);
        st[e - 1] = static_cast<int32_t>(std::min<int64_t>(rows, 1 << 24));
      }
      if (overflow) break;
      const std::vector<Cascade> cs =
          FormCascades(seq, st, *lw, c.first, c.last, limit, true, sub_beside);
      if (max_count == 0) max_count = cs.size();
      int64_t mem = 0;
      std::vector<bool> in_cascade(n, false);
      for (const Cascade& x : cs) {
        mem = std::max(mem, x.bytes);
        for (int32_t e = x.first; e <= x.last; ++e) in_cascade[e] = true;
      }
      for (int32_t e = c.first; e <= c.last; ++e) {
        if (!in_cascade[e]) mem = std::max(mem, seq[e].whole + seq[e].weights + sub_beside[e]);
      }
      if (mem > limit || cs.size() > max_count) break;
      best_stripe.assign(st.begin() + c.first, st.begin() + c.last + 1);
      best = cs;
      if (cs.empty()) break;
    }
    for (const Cascade& x : best) {
      for (int32_t e = x.first; e <= x.last; ++e) stripe_rows[seq[e].op] = best_stripe[e - c.first];
      for (int32_t e = x.first + 1; e <= x.last; ++e) {
        FeatureMap& mid = lw->fmaps[seq[e].in];
        mid.rolling_bytes = RollingBytes(mid, best_stripe[e - 1 - c.first],
                                         InputRows(lw->ops[seq[e].op], best_stripe[e - c.first]));
      }
      chosen.push_back(x);
    }
  }
  if (chosen.empty()) return stripe_rows;

  // A cascade's ops share its first op's time step.
  std::vector<bool> merged(schedule->steps + 1, false);
  for (const Cascade& x : chosen) {
    for (int32_t e = x.first + 1; e <= x.last; ++e) merged[schedule->step_of_npu[seq[e].op]] = true;
  }
  std::vector<int32_t> renum(schedule->steps + 1, 0);
  int32_t next = -1;
  for (int32_t t = 0; t <= schedule->steps; ++t) renum[t] = merged[t] ? next : ++next;
  Schedule s;
  s.steps = renum[std::max(schedule->steps - 1, 0)] + (schedule->steps > 0 ? 1 : 0);
  s.step_of_npu.resize(schedule->step_of_npu.size());
  for (size_t k = 0; k < s.step_of_npu.size(); ++k) {
    s.step_of_npu[k] = renum[schedule->step_of_npu[k]];
  }
  s.cpu_fmaps.resize(s.steps + 1);
  s.cpu_step.assign(s.steps + 1, false);
  for (int32_t t = 0; t < static_cast<int32_t>(schedule->cpu_step.size()); ++t) {
    if (!schedule->cpu_step[t]) continue;
    s.cpu_step[renum[t]] = true;
    s.cpu_fmaps[renum[t]] = schedule->cpu_fmaps[t];
  }
  *schedule = std::move(s);
  return stripe_rows;
}

namespace {

// Vela's ReuseIFM (doc 8.3): an elementwise op, a 1x1 pooling or a transpose writes its OFM in
// place of an IFM that it alone reads, when the two are stored alike (same size, shape, element
// width and format) and neither is a graph input/output, touched by the CPU, live across a CPU
// op (then an input or output of an NPU command stream) or written into a concatenation's
// slice: the OFM then shares the IFM's storage and live range. Maps of a cascade keep their
// rolling buffers. `first`/`last` are the maps' live ranges before any sharing.
void ReuseIfms(const Schedule& schedule, const std::vector<int32_t>& first,
               const std::vector<int32_t>& last, Lowered* lw) {
  const int32_t nf = static_cast<int32_t>(lw->fmaps.size());
  std::vector<int32_t> readers(nf, 0);
  std::vector<bool> in_concat(nf, false);  // written into a concatenation's slice in place
  for (const NpuOp& op : lw->ops) {
    std::set<int32_t> read;
    read.insert(RootFmap(*lw, op.ifm.id));
    if (op.has_ifm2) read.insert(RootFmap(*lw, op.ifm2.id));
    for (const FmRef& e : op.extra_reads) read.insert(RootFmap(*lw, e.id));
    for (int32_t r : read) {
      if (r < 0) continue;
      ++readers[r];
      if (op.elided) in_concat[r] = true;
    }
  }
  auto across_cpu = [&](int32_t f) {
    for (int32_t t = std::max(first[f], 0); t <= last[f]; ++t) {
      if (t < static_cast<int32_t>(schedule.cpu_step.size()) && schedule.cpu_step[t]) return true;
    }
    return false;
  };
  auto plain = [&](int32_t f) {
    const FeatureMap& fm = lw->fmaps[f];
    return fm.alias_of < 0 && fm.bytes > 0 && !fm.graph_io && !fm.cpu_touched &&
           fm.rolling_bytes == 0 && !in_concat[f] && first[f] >= 0 && !across_cpu(f);
  };
  for (const NpuOp& op : lw->ops) {
    if (op.chained_into >= 0 || op.elided) continue;
    const bool kind = op.hw == HwOp::kElementwise || op.hw == HwOp::kTranspose ||
                      (op.hw == HwOp::kPooling && op.kh == 1 && op.kw == 1);
    const int32_t o = RootFmap(*lw, op.ofm.id);
    if (!kind || o < 0 || !plain(o)) continue;
    for (const FmRef* in : {&op.ifm, op.has_ifm2 ? &op.ifm2 : nullptr}) {
      if (in == nullptr || in->scalar) continue;
      const int32_t r = RootFmap(*lw, in->id);
      if (r < 0 || r == o || !plain(r) || readers[r] != 1) continue;
      const FeatureMap& a = lw->fmaps[r];
      const FeatureMap& b = lw->fmaps[o];
      if (a.bytes != b.bytes || a.bits != b.bits || a.format != b.format || a.shape != b.shape) {
        continue;
      }
      for (FeatureMap& fm : lw->fmaps) {
        if (fm.alias_of == o) fm.alias_of = r;
      }
      lw->fmaps[o].alias_of = r;
      readers[r] = 0;  // its storage is taken
      break;
    }
  }
}

// Vela's elementwise sanitizer: an op group reading a feature map from the arena memory
// (DRAM) reads all its inputs from one memory, so the staged maps it reads that only
// elementwise operations consume go back to the arena memory (ops in op order; a cascade's
// later ops read its rolling buffers and are left alone).
void EvictBesideSlowInputs(const MemSystem& ms, const Schedule& schedule, Lowered* lw) {
  const int32_t nf = static_cast<int32_t>(lw->fmaps.size());
  // Vela's elementwise operations: binary ones and CLZ, not copies, rescales or tables.
  auto elementwise = [](const NpuOp& op) {
    return op.hw == HwOp::kElementwise && op.ew != EwKind::kOther && op.act != Act::kLut;
  };
  std::vector<bool> only_elementwise(nf, true);
  auto inputs_of = [&](const NpuOp& op) {
    std::vector<int32_t> in;
    for (const FmRef* r : {&op.ifm, op.has_ifm2 ? &op.ifm2 : nullptr}) {
      if (r != nullptr && !r->scalar) in.push_back(RootFmap(*lw, r->id));
    }
    for (const FmRef& e : op.extra_reads) in.push_back(RootFmap(*lw, e.id));
    return in;
  };
  for (const NpuOp& op : lw->ops) {
    for (int32_t f : inputs_of(op)) {
      if (f >= 0 && !elementwise(op)) only_elementwise[f] = false;
    }
  }
  std::vector<int32_t> by_time(lw->ops.size());
  for (size_t k = 0; k < by_time.size(); ++k) by_time[k] = static_cast<int32_t>(k);
  std::stable_sort(by_time.begin(), by_time.end(), [&](int32_t a, int32_t b) {
    return schedule.step_of_npu[a] < schedule.step_of_npu[b];
  });
  for (int32_t k : by_time) {
    const NpuOp& op = lw->ops[k];
    if (op.chained_into >= 0 || op.elided) continue;
    const int32_t primary = RootFmap(*lw, op.ifm.id);
    if (primary >= 0 && lw->fmaps[primary].rolling_bytes > 0) continue;
    std::vector<int32_t> in;
    for (int32_t f : inputs_of(op)) {
      if (f >= 0 && Stored(lw->fmaps[f])) in.push_back(f);
    }
    bool slow = false;
    for (int32_t f : in) slow |= lw->fmaps[f].area != ms.staging_area;
    if (!slow) continue;
    for (int32_t f : in) {
      FeatureMap& fm = lw->fmaps[f];
      if (fm.area == ms.staging_area && fm.rolling_bytes == 0 && only_elementwise[f]) {
        fm.area = ms.arena_area;
      }
    }
  }
}

}  // namespace

void PlaceFeatureMaps(const Subgraph& sg, const EthosUConfig& cfg, const MemSystem& ms,
                      const Schedule& schedule, Lowered* lw, bool stage_maps,
                      const std::vector<TensorLifetime>& weight_buffers,
                      const std::vector<BlockConfig>& blocks) {
  std::vector<int32_t> first, last;
  LiveRanges(sg, schedule, *lw, &first, &last);
  ReuseIfms(schedule, first, last, lw);
  LiveRanges(sg, schedule, *lw, &first, &last);
  // A producer writing its concatenation slice in place (an elided op) writes the output's
  // storage: to Vela the output is live from that producer on (a CPU op before the
  // concatenation then keeps it in the arena memory), and the producer writes where the
  // output lives.
  const int32_t nf = static_cast<int32_t>(lw->fmaps.size());
  std::vector<int32_t> live_from = first, writes_into(nf, -1);
  for (const NpuOp& op : lw->ops) {
    const Operator& src = sg.ops[op.src_op];
    if (!op.elided || src.outputs.empty() ||
        (src.kind != OpKind::kConcatenation && src.kind != OpKind::kPack)) {
      continue;
    }
    const int32_t t = src.outputs[0];
    const int32_t out = t >= 0 ? RootFmap(*lw, lw->fmap_of_tensor[t]) : -1;
    const int32_t in = RootFmap(*lw, op.ifm.id);
    if (out < 0 || in < 0 || first[in] < 0 || first[out] < 0) continue;
    live_from[out] = std::min(live_from[out], first[in]);
    writes_into[in] = out;
  }
  auto follow_outputs = [&] {
    for (int32_t f = 0; f < nf; ++f) {
      if (writes_into[f] >= 0 && lw->fmaps[writes_into[f]].area == ms.arena_area) {
        lw->fmaps[f].area = ms.arena_area;
      }
    }
  };
  // Feature maps live in the arena memory; with a separate staging SRAM the intermediates
  // move there.
  const bool dedicated = ms.arena_area != ms.staging_area;
  for (int32_t f = 0; f < nf; ++f) {
    FeatureMap& fm = lw->fmaps[f];
    if (fm.alias_of >= 0 || first[f] < 0 || fm.bytes <= 0) continue;
    fm.first = first[f];
    fm.last = last[f];
    fm.area = ms.arena_area;
    if (dedicated && fm.rolling_bytes > 0) {
      fm.area = ms.staging_area;
      continue;
    }
    if (!dedicated || !stage_maps || fm.graph_io || fm.cpu_touched) continue;
    // Vela's fast storage is scratch of one NPU command stream: a map live across a CPU op
    // (which splits the NPU work into two streams) stays in the arena memory.
    bool across_cpu = false;
    for (int32_t t = live_from[f]; t <= fm.last && !across_cpu; ++t) {
      across_cpu = t < static_cast<int32_t>(schedule.cpu_step.size()) && schedule.cpu_step[t];
    }
    if (!across_cpu) fm.area = ms.staging_area;
  }
  if (dedicated) follow_outputs();
  const absl::StatusOr<Arch> arch = MakeArch(cfg.family, cfg.macs);  // validated by the caller
  if (dedicated && cfg.memory_mode.arena_cache_bytes > 0 && arch.ok()) {
    FitStagingCache(*arch, ms, cfg.memory_mode.arena_cache_bytes, schedule, blocks,
                    weight_buffers, lw);
    follow_outputs();
  }
  if (dedicated && stage_maps) {
    EvictBesideSlowInputs(ms, schedule, lw);
    follow_outputs();
  }
  for (FeatureMap& fm : lw->fmaps) {
    if (fm.alias_of >= 0) fm.area = lw->fmaps[fm.alias_of].area;
  }
}

std::vector<BlockConfig> ChooseBlocks(const Arch& arch, const Lowered& lw,
                                      const std::vector<int32_t>& stripe_rows) {
  std::vector<BlockConfig> blocks(lw.ops.size());
  for (size_t k = 0; k < lw.ops.size(); ++k) {
    if (lw.ops[k].chained_into >= 0) continue;
    const int32_t rows = k < stripe_rows.size() ? stripe_rows[k] : 0;
    if (rows <= 0 || rows >= lw.ops[k].ofm.shape.h) {
      blocks[k] = FindBlockConfig(arch, lw.ops[k]);
      continue;
    }
    // A striped op's block is chosen for one stripe (Vela then costs the whole OFM with it).
    NpuOp stripe = lw.ops[k];
    stripe.ofm.shape.h = rows;
    stripe.ifm.shape.h = std::min(stripe.ifm.shape.h, InputRows(stripe, rows));
    blocks[k] = FindBlockConfig(arch, stripe);
  }
  return blocks;
}

// An op that runs `repeat` times as costed (NpuOp::repeat): its cycles and traffic scale.
void ScaleByRepeat(int64_t repeat, OpCost* c) {
  if (repeat <= 1) return;
  const double r = static_cast<double>(repeat);
  c->op_cycles *= r;
  c->npu_cycles *= r;
  c->total *= r;
  for (int a = 0; a < kNumMemoryAreas; ++a) {
    c->bytes[a] *= r;
    c->access_cycles[a] *= r;
  }
}

std::vector<OpCost> CostOps(const Arch& arch, const MemSystem& ms, const Lowered& lw,
                            const Schedule& schedule, const std::vector<BlockConfig>& blocks,
                            int64_t sram_limit) {
  const int32_t nops = static_cast<int32_t>(lw.ops.size());
  std::vector<OpCost> costs(nops);
  const bool can_buffer = ms.const_area != ms.staging_area;
  // With a limited SRAM a weight buffer takes only the memory left at its steps (Vela's
  // slack buffering memory): the staged feature maps' and the earlier buffers'.
  std::vector<int64_t> used;
  if (sram_limit > 0) {
    used.assign(std::max(schedule.steps, 1) + 1, 0);
    for (const FeatureMap& fm : lw.fmaps) {
      if (!Stored(fm) || fm.area != ms.staging_area) continue;
      for (int32_t t = fm.first; t <= fm.last && t < static_cast<int32_t>(used.size()); ++t) {
        used[t] += StoredBytes(fm);
      }
    }
  }
  // In time order (NPU work may run ahead of a CPU op that comes first in the file).
  std::vector<int32_t> by_time(nops);
  for (int32_t k = 0; k < nops; ++k) by_time[k] = k;
  std::stable_sort(by_time.begin(), by_time.end(), [&](int32_t a, int32_t b) {
    return schedule.step_of_npu[a] < schedule.step_of_npu[b];
  });
  double prev_slack = 0;
  int32_t prev_step = -2;
  for (int32_t k : by_time) {
    // A CPU op (or the start) before; ops of one cascade share a step. An op running in the
    // previous op's chain takes a step of its own but no time: the slack carries over it.
    const int32_t step = schedule.step_of_npu[k];
    if (lw.ops[k].chained_into >= 0) {
      if (step == prev_step + 1) prev_step = step;
      continue;
    }
    if (step > prev_step + 1) prev_slack = 0;
    costs[k] = CostOp(arch, ms, lw, k, blocks[k], prev_slack, can_buffer);
    if (sram_limit > 0 && costs[k].weights_buffered) {
      const int64_t bytes = Align16(costs[k].weight_buffer_bytes);
      const int32_t t0 = std::max(step - 1, 0);
      const int32_t t1 = std::min(step, static_cast<int32_t>(used.size()) - 1);
      int64_t peak = 0;
      for (int32_t t = t0; t <= t1; ++t) peak = std::max(peak, used[t]);
      if (peak + bytes > sram_limit) {
        costs[k] = CostOp(arch, ms, lw, k, blocks[k], prev_slack, false);
      } else {
        for (int32_t t = t0; t <= t1; ++t) used[t] += bytes;
      }
    }
    ScaleByRepeat(lw.ops[k].repeat, &costs[k]);
    prev_slack = costs[k].slack_next;
    prev_step = step;
  }
  return costs;
}

std::vector<TensorLifetime> WeightBufferRanges(const Schedule& schedule,
                                               const std::vector<OpCost>& costs) {
  std::vector<TensorLifetime> ranges;
  for (size_t k = 0; k < costs.size(); ++k) {
    if (!costs[k].weights_buffered) continue;
    const int32_t step = schedule.step_of_npu[k];
    AddRange(&ranges, Align16(costs[k].weight_buffer_bytes), std::max(step - 1, 0), step);
  }
  return ranges;
}

ArenaPeaks PlanArenas(const Lowered& lw, const Schedule& schedule,
                      const std::vector<OpCost>& costs) {
  std::vector<TensorLifetime> sram = WeightBufferRanges(schedule, costs), arena;
  for (const FeatureMap& fm : lw.fmaps) {
    if (!Stored(fm)) continue;
    AddRange(fm.area == MemoryArea::kSram ? &sram : &arena, StoredBytes(fm), fm.first, fm.last);
  }
  return ArenaPeaks{AllocatedPeak(sram), AllocatedPeak(arena)};
}

namespace {

// Rolls NPU ops [*k, ...) that came from IR op `i` into its OpEstimate and advances *k.
OpEstimate RollUpOp(const Subgraph& sg, const Lowered& lw, const std::vector<OpCost>& costs,
                    int32_t i, int32_t* k) {
  const Operator& o = sg.ops[i];
  OpEstimate oe;
  oe.op_index = i;
  oe.op_name = std::string(o.name());
  if (!o.outputs.empty() && o.outputs[0] >= 0 &&
      o.outputs[0] < static_cast<int32_t>(sg.tensors.size())) {
    oe.output_name = sg.tensors[o.outputs[0]].name;
  }
  if (!lw.cpu_reasons[i].empty()) {
    oe.placement = Placement::kCpu;
    oe.reasons = lw.cpu_reasons[i];
    return oe;
  }
  oe.placement = Placement::kNpu;
  // Which resource set each piece's time: the NPU, or the slowest memory when it is slower.
  double npu_dominant = 0;
  PerArea area_dominant{};
  const int32_t nops = static_cast<int32_t>(lw.ops.size());
  for (; *k < nops && lw.ops[*k].src_op == i; ++*k) {
    const OpCost& c = costs[*k];
    oe.macs += lw.ops[*k].macs;
    oe.compute_cycles += c.npu_cycles;
    oe.total_cycles += c.total;
    int best_a = -1;
    for (int a = 0; a < kNumMemoryAreas; ++a) {
      oe.access_cycles[a] += c.access_cycles[a];
      oe.bytes[a] += c.bytes[a];
      if (c.access_cycles[a] > c.npu_cycles &&
          (best_a < 0 || c.access_cycles[a] > c.access_cycles[best_a])) {
        best_a = a;
      }
    }
    if (best_a < 0) npu_dominant += c.total;
    else area_dominant[best_a] += c.total;
  }
  oe.bottleneck = Bottleneck::kCompute;
  double most = npu_dominant;
  for (int a = 0; a < kNumMemoryAreas; ++a) {
    if (area_dominant[a] > most) {
      most = area_dominant[a];
      oe.bottleneck = AreaBottleneck(static_cast<MemoryArea>(a));
    }
  }
  if (!lw.ir_note[i].empty() && oe.total_cycles == 0) oe.kernel = lw.ir_note[i];
  if (static_cast<size_t>(i) < lw.ir_caveat.size() && !lw.ir_caveat[i].empty()) {
    oe.notes.push_back(lw.ir_caveat[i]);
  }
  return oe;
}

}  // namespace

Estimate Totals(const TargetProfile& profile, const Subgraph& sg, const Lowered& lw,
                const MemSystem& ms, const WeightTotals& weights, const ArenaPeaks& peaks,
                const std::vector<OpCost>& costs) {
  const bool dedicated = ms.arena_area != ms.staging_area;
  Estimate e;
  e.target = profile.name;
  e.backend = "mica";
  e.clock_hz = profile.ethos_u.system.core_clock_hz;
  e.weights_original_bytes = weights.original_bytes;
  e.weights_encoded_bytes = weights.encoded_bytes;
  e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] += static_cast<double>(peaks.sram);
  if (dedicated || ms.arena_area != MemoryArea::kSram) {
    e.memory_used_bytes[static_cast<int>(ms.arena_area)] += static_cast<double>(peaks.arena);
  }
  e.memory_used_bytes[static_cast<int>(ms.const_area)] += static_cast<double>(weights.const_bytes);
  e.arena_bytes = dedicated ? peaks.arena : peaks.sram;

  int32_t k = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(sg.ops.size()); ++i) {
    OpEstimate oe = RollUpOp(sg, lw, costs, i, &k);
    if (oe.placement == Placement::kCpu) {
      ++e.cpu_ops;
    } else {
      ++e.npu_ops;
      e.macs += oe.macs;
      e.total_cycles += oe.total_cycles;
      e.npu_cycles += oe.compute_cycles;
      for (int a = 0; a < kNumMemoryAreas; ++a) e.access_cycles[a] += oe.access_cycles[a];
    }
    e.ops.push_back(std::move(oe));
  }
  return e;
}

}  // namespace ethosu

absl::StatusOr<Estimate> EstimateEthosU(const Graph& graph, const TargetProfile& profile) {
  if (profile.kind != TargetKind::kEthosU) {
    return absl::InvalidArgumentError(
        absl::StrCat("profile '", profile.name, "' is not an Ethos-U profile"));
  }
  if (graph.subgraphs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(graph.source_path, ": graph has no subgraph"));
  }
  const EthosUConfig& cfg = profile.ethos_u;
  MICA_RETURN_IF_ERROR(ValidateEthosUConfig(cfg));
  MICA_ASSIGN_OR_RETURN(ethosu::Arch arch, ethosu::MakeArch(cfg.family, cfg.macs));
  MICA_ASSIGN_OR_RETURN(ethosu::Lowered lw, ethosu::Lower(graph, cfg, arch));
  const Subgraph& sg = graph.main();
  const ethosu::MemSystem ms = ethosu::MakeMemSystem(cfg);

  const ethosu::WeightTotals weights = ethosu::EncodeWeights(sg, arch, &lw);
  ethosu::Schedule schedule = ethosu::ScheduleSteps(sg, lw);
  ethosu::ChainU85(arch, schedule, &lw);
  const std::vector<int32_t> stripe_rows = ethosu::BuildCascades(sg, cfg, ms, &schedule, &lw);
  const std::vector<ethosu::BlockConfig> blocks = ethosu::ChooseBlocks(arch, lw, stripe_rows);
  // With a limited staging SRAM, Vela buffers weights before it stages feature maps: cost the
  // ops with only the cascades' buffers in SRAM to place the weight buffers, then stage the
  // maps in what is left.
  const int64_t limit =
      ms.arena_area != ms.staging_area ? cfg.memory_mode.arena_cache_bytes : int64_t{0};
  std::vector<TensorLifetime> weight_buffers;
  if (limit > 0) {
    ethosu::Lowered unstaged = lw;
    ethosu::PlaceFeatureMaps(sg, cfg, ms, schedule, &unstaged, false);
    weight_buffers = ethosu::WeightBufferRanges(
        schedule, ethosu::CostOps(arch, ms, unstaged, schedule, blocks, limit));
  }
  ethosu::PlaceFeatureMaps(sg, cfg, ms, schedule, &lw, true, weight_buffers, blocks);
  const std::vector<ethosu::OpCost> costs = ethosu::CostOps(arch, ms, lw, schedule, blocks, limit);
  const ethosu::ArenaPeaks peaks = ethosu::PlanArenas(lw, schedule, costs);
  return ethosu::Totals(profile, sg, lw, ms, weights, peaks, costs);
}

}  // namespace estimate
}  // namespace mica
