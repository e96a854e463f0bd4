// Ethos-U estimator: lowering, memory placement, per-op costing and network totals
// (doc sections 5.4 and 8).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ethos_u/model.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/ethos_u.h"

namespace mica {
namespace estimate {
namespace {

using ethosu::Arch;
using ethosu::FeatureMap;
using ethosu::Format;
using ethosu::HwOp;
using ethosu::Lowered;
using ethosu::NpuOp;
using ethosu::OpCost;

constexpr int64_t kAlign = 16;
int64_t Align(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

struct Range {
  int64_t size = 0;
  int32_t first = 0, last = 0;
};

// First-fit placement by decreasing size (an approximation of Vela's HillClimb allocator,
// which starts from a similar order and stops at the lower bound when it reaches it).
int64_t AllocatePeak(std::vector<Range> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) {
    if (a.size != b.size) return a.size > b.size;
    return a.first < b.first;
  });
  struct Placed {
    int64_t addr, size;
    int32_t first, last;
  };
  std::vector<Placed> placed;
  int64_t peak = 0;
  for (const Range& r : ranges) {
    if (r.size <= 0) continue;
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Placed& p : placed) {
      if (p.first <= r.last && r.first <= p.last) busy.emplace_back(p.addr, p.addr + p.size);
    }
    std::sort(busy.begin(), busy.end());
    int64_t addr = 0;
    for (const auto& b : busy) {
      if (addr + r.size <= b.first) break;
      addr = std::max(addr, b.second);
    }
    placed.push_back({addr, r.size, r.first, r.last});
    peak = std::max(peak, addr + r.size);
  }
  return peak;
}

int64_t LiveSumPeak(const std::vector<Range>& ranges, int32_t steps) {
  std::vector<int64_t> sum(std::max(steps, 1) + 1, 0);
  for (const Range& r : ranges) {
    for (int32_t t = std::max(r.first, 0); t <= r.last && t < static_cast<int32_t>(sum.size());
         ++t) {
      sum[t] += r.size;
    }
  }
  return *std::max_element(sum.begin(), sum.end());
}

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
  return op.hw == HwOp::kElementwise && op.has_ifm2 && !op.unary &&
         op.ew != ethosu::EwKind::kDiv;
}

}  // namespace

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
  MICA_ASSIGN_OR_RETURN(Arch arch, ethosu::MakeArch(cfg.family, cfg.macs));
  MICA_ASSIGN_OR_RETURN(Lowered lw, ethosu::Lower(graph, cfg, arch));
  const Subgraph& sg = graph.main();
  const ethosu::MemSystem ms = ethosu::MakeMemSystem(cfg);
  const bool u85 = cfg.family == EthosUFamily::kU85;
  const int32_t nops = static_cast<int32_t>(lw.ops.size());

  // Weight encoding (once per unique weight tensor).
  std::vector<int64_t> enc_of_tensor(sg.tensors.size(), -1);
  std::vector<bool> sparse_of_tensor(sg.tensors.size(), false);
  int64_t weights_original = 0, weights_encoded = 0, const_bytes = 0;
  for (NpuOp& op : lw.ops) {
    if (op.weight_tensor < 0) {
      if (op.weight_bytes > 0) {
        // Repeated (e.g. per time step) use of weights encoded once.
        op.encoded_weight_bytes = op.weight_bytes;
      }
      continue;
    }
    const int32_t t = op.weight_tensor;
    if (enc_of_tensor[t] < 0) {
      const ethosu::WeightEncoding we = ethosu::EncodeWeightsEstimate(sg, op, arch);
      enc_of_tensor[t] = we.encoded_bytes;
      sparse_of_tensor[t] = we.sparse24;
      weights_original += static_cast<int64_t>(sg.tensors[t].num_bytes());
      weights_encoded += we.encoded_bytes;
      const_bytes += Align(we.encoded_bytes) + Align(op.scale_bytes);
    }
    op.encoded_weight_bytes = enc_of_tensor[t];
    op.sparse24 = u85 && sparse_of_tensor[t];
  }
  for (const NpuOp& op : lw.ops) {
    if (op.needs_lut) const_bytes += op.ifm.bits == 16 ? 2048 : 1024;
    for (const ethosu::FmRef* r : {&op.ifm, &op.ifm2}) {
      (void)r;
    }
  }

  // Time steps: every NPU op is one step; a CPU op is one step between them.
  std::vector<int32_t> step_of_npu(nops, 0);
  std::vector<std::vector<int32_t>> cpu_fmaps;  // per step for CPU ops
  int32_t steps = 0;
  {
    int32_t k = 0;
    for (int32_t i = 0; i < static_cast<int32_t>(sg.ops.size()); ++i) {
      if (!lw.cpu_reasons[i].empty()) {
        std::vector<int32_t> touched;
        for (int32_t t : sg.ops[i].inputs) {
          if (t != kNoTensor && lw.fmap_of_tensor[t] >= 0) touched.push_back(lw.fmap_of_tensor[t]);
        }
        for (int32_t t : sg.ops[i].outputs) {
          if (lw.fmap_of_tensor[t] >= 0) touched.push_back(lw.fmap_of_tensor[t]);
        }
        cpu_fmaps.resize(steps + 1);
        cpu_fmaps[steps] = touched;
        ++steps;
        continue;
      }
      while (k < nops && lw.ops[k].src_op == i) step_of_npu[k++] = steps++;
    }
    cpu_fmaps.resize(steps + 1);
  }

  // U85 chaining (doc 6.3): a binary elementwise op consuming the previous op's only output
  // runs in that op's chain; the intermediate never reaches memory.
  std::vector<int32_t> uses(lw.fmaps.size(), 0);
  auto root = [&](int32_t id) { return id < 0 ? -1 : (lw.fmaps[id].alias_of >= 0 ? lw.fmaps[id].alias_of : id); };
  for (const NpuOp& op : lw.ops) {
    if (root(op.ifm.id) >= 0) ++uses[root(op.ifm.id)];
    if (op.has_ifm2 && root(op.ifm2.id) >= 0) ++uses[root(op.ifm2.id)];
  }
  for (const auto& v : cpu_fmaps) for (int32_t f : v) if (root(f) >= 0) ++uses[root(f)];
  if (u85) {
    int chain_len = 1;
    for (int32_t i = 1; i < nops; ++i) {
      NpuOp& op = lw.ops[i];
      int32_t head = i - 1;
      while (head >= 0 && lw.ops[head].chained_into >= 0) head = lw.ops[head].chained_into;
      if (head < 0 || !IsChainable(op)) { chain_len = 1; continue; }
      NpuOp& h = lw.ops[head];
      const int32_t mid = root(h.ofm.id);
      const bool in1 = root(op.ifm.id) == mid, in2 = op.has_ifm2 && root(op.ifm2.id) == mid;
      if (mid < 0 || !(in1 || in2) || (in1 && in2) || uses[mid] != 1 ||
          lw.fmaps[mid].graph_io || lw.fmaps[mid].cpu_touched || chain_len >= 4 ||
          h.hw == HwOp::kTranspose || h.hw == HwOp::kMatMul) {
        chain_len = 1;
        continue;
      }
      op.chained_into = head;
      ++chain_len;
      const ethosu::FmRef other = in1 ? op.ifm2 : op.ifm;
      if (other.id >= 0 && !other.scalar) h.extra_reads.push_back(other.id);
      h.chain_ao_extra += arch.ao_out[op.ofm.bits >= 32 ? 2 : op.ofm.bits == 16 ? 1 : 0];
      h.ofm = op.ofm;
      lw.fmaps[mid].bytes = 0;  // never stored
    }
  }

  // Live ranges (per root fmap).
  const int32_t nf = static_cast<int32_t>(lw.fmaps.size());
  std::vector<int32_t> first(nf, -1), last(nf, -1);
  auto touch = [&](int32_t id, int32_t step) {
    const int32_t r = root(id);
    if (r < 0) return;
    if (first[r] < 0 || step < first[r]) first[r] = step;
    last[r] = std::max(last[r], step);
  };
  for (int32_t k = 0; k < nops; ++k) {
    const NpuOp& op = lw.ops[k];
    int32_t s = step_of_npu[k];
    if (op.chained_into >= 0) s = step_of_npu[op.chained_into];
    touch(op.ifm.id, s);
    if (op.has_ifm2) touch(op.ifm2.id, s);
    touch(op.ofm.id, s);
    for (int32_t e : op.extra_reads) touch(e, s);
  }
  for (int32_t s = 0; s < static_cast<int32_t>(cpu_fmaps.size()); ++s) {
    for (int32_t f : cpu_fmaps[s]) touch(f, s);
  }
  for (int32_t t : sg.inputs) {
    if (lw.fmap_of_tensor[t] >= 0) touch(lw.fmap_of_tensor[t], 0);
  }
  for (int32_t t : sg.outputs) {
    if (lw.fmap_of_tensor[t] >= 0) touch(lw.fmap_of_tensor[t], std::max(steps - 1, 0));
  }

  // Placement (doc 3.2, 8.1): feature maps in the arena memory; with a DRAM arena the
  // intermediates move into the SRAM staging area while they fit its size.
  const bool dedicated = ms.arena_area != ms.staging_area;
  std::vector<Range> sram_ranges, arena_ranges;
  for (int32_t f = 0; f < nf; ++f) {
    FeatureMap& fm = lw.fmaps[f];
    if (fm.alias_of >= 0 || first[f] < 0 || fm.bytes <= 0) continue;
    fm.first = first[f];
    fm.last = last[f];
    fm.area = ms.arena_area;
    if (dedicated && !fm.graph_io && !fm.cpu_touched) fm.area = ms.staging_area;
  }
  if (dedicated && cfg.memory_mode.arena_cache_bytes > 0) {
    // Keep the SRAM set within the cache: demote the largest long-lived maps first.
    for (int guard = 0; guard < nf; ++guard) {
      std::vector<Range> rs;
      for (const FeatureMap& fm : lw.fmaps) {
        if (fm.alias_of < 0 && fm.first >= 0 && fm.bytes > 0 && fm.area == ms.staging_area) {
          rs.push_back({Align(fm.bytes), fm.first, fm.last});
        }
      }
      if (LiveSumPeak(rs, steps) <= cfg.memory_mode.arena_cache_bytes) break;
      int32_t worst = -1;
      for (int32_t f = 0; f < nf; ++f) {
        const FeatureMap& fm = lw.fmaps[f];
        if (fm.alias_of >= 0 || fm.first < 0 || fm.area != ms.staging_area) continue;
        if (worst < 0 || fm.bytes > lw.fmaps[worst].bytes) worst = f;
      }
      if (worst < 0) break;
      lw.fmaps[worst].area = ms.arena_area;
    }
  }
  for (FeatureMap& fm : lw.fmaps) {
    if (fm.alias_of >= 0) fm.area = lw.fmaps[fm.alias_of].area;
  }

  // Cost every NPU op in order.
  std::vector<OpCost> costs(nops);
  double prev_slack = 0;
  const bool can_buffer = ms.const_area != ms.staging_area;
  int32_t prev_step = -2;
  for (int32_t k = 0; k < nops; ++k) {
    if (lw.ops[k].chained_into >= 0) continue;
    if (step_of_npu[k] != prev_step + 1) prev_slack = 0;  // a CPU op (or start) in between
    costs[k] = ethosu::CostOp(arch, ms, lw, k, prev_slack, can_buffer);
    prev_slack = costs[k].slack_next;
    prev_step = step_of_npu[k];
    if (std::getenv("MICA_ETHOSU_DEBUG")) {
      const NpuOp& op = lw.ops[k];
      const OpCost& c = costs[k];
      std::fprintf(stderr,
                   "%-22s ofm %dx%dx%d ifm %dx%dx%d blk %dx%dx%d iblk %dx%dx%d ub %dx%dx%d pk%d "
                   "op %.0f npu %.0f tot %.0f sram %.0f dram %.0f fl %.0f buf %d enc %lld\n",
                   op.name.c_str(), op.ofm.shape.h, op.ofm.shape.w, op.ofm.shape.c,
                   op.ifm.shape.h, op.ifm.shape.w, op.ifm.shape.c, c.block.ofm_block.h,
                   c.block.ofm_block.w, c.block.ofm_block.c, c.block.ifm_block.h,
                   c.block.ifm_block.w, c.block.ifm_block.c, c.block.ublock.h, c.block.ublock.w,
                   c.block.ublock.c, c.block.part_kernel, c.op_cycles, c.npu_cycles, c.total,
                   c.access_cycles[0], c.access_cycles[1], c.access_cycles[2] + c.access_cycles[3],
                   c.weights_buffered, static_cast<long long>(op.encoded_weight_bytes));
    }
  }
  for (int32_t k = 0; k < nops; ++k) {
    if (costs[k].weights_buffered) {
      sram_ranges.push_back({Align(costs[k].weight_buffer_bytes),
                             std::max(step_of_npu[k] - 1, 0), step_of_npu[k]});
    }
  }
  for (const FeatureMap& fm : lw.fmaps) {
    if (fm.alias_of >= 0 || fm.first < 0 || fm.bytes <= 0) continue;
    Range r{Align(fm.bytes), fm.first, fm.last};
    if (fm.area == MemoryArea::kSram) sram_ranges.push_back(r);
    else arena_ranges.push_back(r);
  }

  Estimate e;
  e.target = profile.name;
  e.backend = "mica";
  e.clock_hz = cfg.system.core_clock_hz;
  e.weights_original_bytes = weights_original;
  e.weights_encoded_bytes = weights_encoded;
  const int64_t sram_peak = AllocatePeak(sram_ranges);
  const int64_t arena_peak = AllocatePeak(arena_ranges);
  e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] += static_cast<double>(sram_peak);
  if (!dedicated && ms.arena_area != MemoryArea::kSram) {
    e.memory_used_bytes[static_cast<int>(ms.arena_area)] += static_cast<double>(arena_peak);
  } else if (dedicated) {
    e.memory_used_bytes[static_cast<int>(ms.arena_area)] += static_cast<double>(arena_peak);
  }
  e.memory_used_bytes[static_cast<int>(ms.const_area)] += static_cast<double>(const_bytes);
  e.arena_bytes = dedicated ? arena_peak : sram_peak;

  int32_t k = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(sg.ops.size()); ++i) {
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
      ++e.cpu_ops;
      e.ops.push_back(std::move(oe));
      continue;
    }
    oe.placement = Placement::kNpu;
    ++e.npu_ops;
    double npu_dominant = 0;
    PerArea area_dominant{};
    for (; k < nops && lw.ops[k].src_op == i; ++k) {
      const NpuOp& op = lw.ops[k];
      oe.macs += op.macs;
      const OpCost& c = costs[k];
      oe.compute_cycles += c.npu_cycles;
      oe.total_cycles += c.total;
      for (int a = 0; a < kNumMemoryAreas; ++a) {
        oe.access_cycles[a] += c.access_cycles[a];
        oe.bytes[a] += c.bytes[a];
      }
      // Which resource set this piece's time.
      int best_a = -1;
      for (int a = 0; a < kNumMemoryAreas; ++a) {
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
    e.macs += oe.macs;
    e.total_cycles += oe.total_cycles;
    e.npu_cycles += oe.compute_cycles;
    for (int a = 0; a < kNumMemoryAreas; ++a) e.access_cycles[a] += oe.access_cycles[a];
    e.ops.push_back(std::move(oe));
  }
  return e;
}

}  // namespace estimate
}  // namespace mica
