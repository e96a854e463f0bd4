// Ethos-U per-operation cycle and memory-traffic model (doc sections 4, 5, 6).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

int32_t RoundUp(int32_t v, int32_t m) { return m <= 0 ? v : (v + m - 1) / m * m; }
int32_t CeilDiv(int32_t a, int32_t b) { return b <= 0 ? a : (a + b - 1) / b; }
int64_t CeilDiv64(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

bool IsU85(const Arch& a) { return a.family == EthosUFamily::kU85; }

bool EqualDepth(HwOp h) {
  return h == HwOp::kDepthwise || h == HwOp::kPooling || h == HwOp::kElementwise;
}
bool ConvLike(HwOp h) {
  return h == HwOp::kConvolution || h == HwOp::kVectorProduct || h == HwOp::kReduceSum;
}

Shape3 Clip(Shape3 b, Shape3 s) {
  return {std::min(b.h, s.h), std::min(b.w, s.w), std::min(b.c, s.c)};
}

int32_t DilatedK(int32_t k, int32_t d) { return (k - 1) * std::max(d, 1) + 1; }

// Micro-block for this op (doc 4.4 special case; 6.1 least-waste choice on U85).
Shape3 ChooseUBlock(const Arch& a, const NpuOp& op) {
  const Shape3 ofm = op.ofm.shape;
  if (!IsU85(a)) {
    Shape3 ub = a.ofm_ublocks.front();
    if (ub.h == 2 && (op.hw == HwOp::kConvolution || op.hw == HwOp::kVectorProduct) &&
        ofm.h == 1 && ofm.w % 2 == 0 && op.kh == 1) {
      ub = {1, 4, ub.c};
    }
    return ub;
  }
  std::vector<Shape3> cands = a.ofm_ublocks;
  const bool dwpool = op.hw == HwOp::kDepthwise || op.hw == HwOp::kPooling;
  if (dwpool) {
    std::vector<Shape3> ok;
    for (const Shape3& u : cands) {
      if (a.macs == 256 && op.ifm.bits == 8 && !(u.h == 1 && u.w == 2 && u.c == 16)) continue;
      if (a.macs >= 1024 && u.c > 16) continue;
      ok.push_back(u);
    }
    if (!ok.empty()) cands = ok;
  }
  Shape3 best = cands.front();
  int64_t best_waste = -1;
  for (const Shape3& u : cands) {
    const int64_t waste = int64_t{RoundUp(ofm.h, u.h)} * RoundUp(ofm.w, u.w) *
                              RoundUp(ofm.c, u.c) - ofm.elements();
    if (best_waste < 0 || waste < best_waste) best = u, best_waste = waste;
  }
  return best;
}

struct Traversal {
  bool part_kernel = false;
};

Traversal ChooseTraversal(const Arch& a, const NpuOp& op) {
  Traversal t;
  if (op.hw != HwOp::kConvolution) return t;
  const int32_t c = op.ifm.shape.c;
  const int32_t k = op.kh * op.kw;
  if (!IsU85(a)) {
    if (c <= 8) {
      t.part_kernel = true;
      return t;
    }
    const bool b16 = op.ifm.bits == 16;
    const double df = double(c) / RoundUp(c, b16 ? 16 : 32);
    const double pk = double(c) / RoundUp(c, 8) * k / RoundUp(k, b16 ? 2 : 4);
    t.part_kernel = pk >= df;
    return t;
  }
  const int32_t rem = k % 5;
  const int32_t kr = k / 5 * 5 + (rem ? std::max(rem, 2) : 0);
  const double df = double(c) / RoundUp(c, 64);
  const double pk = double(c) / RoundUp(c, 16) * k / std::max(kr, 1);
  t.part_kernel = pk >= df;
  return t;
}

int32_t IfmBlockDepth(const Arch& a, const NpuOp& op, bool pk, const Shape3& ub, int32_t ofm_d) {
  if (EqualDepth(op.hw)) return ofm_d;
  const int32_t c = op.ifm.shape.c;
  if (!IsU85(a)) {
    if (op.ifm.bits == 16) return RoundUp(std::min(c, 16), 4);
    return RoundUp(std::min(c, pk ? 16 : 32), 8);
  }
  int32_t d = 64;
  if (pk) d = 16;
  else if (op.ifm.bits == 32 || ((a.macs == 128 || a.macs == 256) && ub.c == 16)) d = 32;
  return RoundUp(std::min(c, d), 8);
}

Shape3 IfmBlockFor(const Arch& a, const NpuOp& op, Shape3 ob, int32_t ifm_depth) {
  if (op.hw == HwOp::kElementwise) return {ob.h, ob.w, ifm_depth};
  const int32_t kh = std::min(DilatedK(op.kh, op.dh), 8);
  const int32_t kw = std::min(DilatedK(op.kw, op.dw), 8);
  const int32_t up = std::max(op.upscale, 1);
  int32_t h = CeilDiv((ob.h - 1) * op.sh + kh, up);
  int32_t w = CeilDiv((ob.w - 1) * op.sw + kw, up);
  h = RoundUp(h, a.ifm_ublock.h);
  w = RoundUp(w, a.ifm_ublock.w);
  h = std::min(h, std::max(op.ifm.shape.h, 1));
  w = std::min(w, std::max(op.ifm.shape.w, 1));
  return {h, w, ifm_depth};
}

bool FitsU55(const Arch& a, const NpuOp& op, Shape3 ob, Shape3 ib, bool acc40) {
  const int32_t ib_bytes_el = std::max(op.ifm.bits / 8, 1);
  const int64_t ifm_bytes = int64_t{ib.w} * ib.h * RoundUp(ib.c * ib_bytes_el, 8);
  const bool ew = op.hw == HwOp::kElementwise;
  int32_t g_ifm;
  if (op.ifm.bits == 32) g_ifm = a.granules[4];
  else if (ew) g_ifm = op.ifm.bits == 16 ? a.granules[3] : a.granules[2];
  else g_ifm = op.ifm.bits == 16 ? a.granules[1] : a.granules[0];
  int32_t ifm_banks = RoundUp(2 * static_cast<int32_t>(CeilDiv64(ifm_bytes, 1024)), g_ifm);
  if (ew && op.has_ifm2 && !op.ifm2.scalar) ifm_banks *= 2;
  int32_t acc_banks = 0;
  if (!ew) {
    const int64_t acc_bytes = int64_t{ob.w} * ob.h * RoundUp(ob.c, 8) * (acc40 ? 5 : 4);
    const int32_t g = acc40 ? a.granules[7] : a.granules[6];
    acc_banks = RoundUp(2 * static_cast<int32_t>(CeilDiv64(acc_bytes, 1024)), g);
  }
  const int32_t lut_banks = a.shram_banks > 16 ? 2 : (op.needs_lut ? 2 : 0);
  return 2 + ifm_banks <= a.shram_banks - lut_banks - acc_banks;
}

bool FitsU85(const Arch& a, const NpuOp& op, Shape3 ob, Shape3 ib, bool acc48) {
  const int32_t eb = std::max(op.ifm.bits / 8, 1);
  const int64_t ifm_bytes = int64_t{ib.w} * ib.h * RoundUp(ib.c, 8) * eb;
  const bool ew = op.hw == HwOp::kElementwise;
  int64_t ifm_need = ifm_bytes * 2;
  if (ew && op.has_ifm2 && !op.ifm2.scalar) ifm_need *= 2;
  if (ifm_need > a.ifm_ram) return false;
  if (!ew) {
    const int64_t acc_bytes = int64_t{ob.w} * ob.h * RoundUp(ob.c, 16) * (acc48 ? 8 : 4);
    if (acc_bytes > a.acc_ram) return false;
  } else {
    const int64_t ob_bytes = int64_t{ob.w} * ob.h * ob.c * std::max(op.ofm.bits / 8, 1);
    if (ob_bytes > a.acc_ram) return false;
  }
  return true;
}

}  // namespace

BlockConfig FindBlockConfig(const Arch& a, const NpuOp& op) {
  BlockConfig best;
  const Shape3 ofm = op.ofm.shape;
  const Shape3 ub = ChooseUBlock(a, op);
  const Traversal tr = ChooseTraversal(a, op);
  const bool acc40 = op.ifm.bits == 16 && op.hw != HwOp::kElementwise;
  best.ublock = ub;
  best.part_kernel = tr.part_kernel;
  best.acc40 = acc40;
  const int32_t lim_h = RoundUp(std::min(ofm.h, a.max_block.h), ub.h);
  const int32_t lim_w = RoundUp(std::min(ofm.w, a.max_block.w), ub.w);
  const int32_t lim_c = RoundUp(std::min(ofm.c, a.max_block.c), ub.c);
  const int32_t start_c = std::max(ub.c, RoundUp(std::min(ofm.c, 16), ub.c));
  const int32_t subk = CeilDiv(DilatedK(op.kh, op.dh), 8) * CeilDiv(DilatedK(op.kw, op.dw), 8);
  const int64_t ofm_el = std::max<int64_t>(ofm.elements(), 1);
  const int64_t ifm_el = std::max<int64_t>(op.ifm.shape.elements(), 1);
  double best_cost = -1;
  // Bound the search for huge tensors: sample block sizes at most 64 per axis.
  const int32_t step_h = std::max(ub.h, RoundUp(lim_h / 64, ub.h));
  const int32_t step_w = std::max(ub.w, RoundUp(lim_w / 64, ub.w));
  for (int32_t h = ub.h; h <= lim_h; h += step_h) {
    for (int32_t w = ub.w; w <= lim_w; w += step_w) {
      for (int32_t d = start_c; d <= lim_c; d += ub.c) {
        if (d < ofm.c && d % 16 != 0 && d != start_c) continue;
        const Shape3 ob{h, w, d};
        const int32_t idepth = IfmBlockDepth(a, op, tr.part_kernel, ub, d);
        const Shape3 ib = IfmBlockFor(a, op, ob, idepth);
        const bool fits = IsU85(a) ? FitsU85(a, op, ob, ib, acc40) : FitsU55(a, op, ob, ib, acc40);
        if (!fits) continue;
        const int64_t bh = CeilDiv(ofm.h, h), bw = CeilDiv(ofm.w, w), bc = CeilDiv(ofm.c, d);
        double cost;
        if (op.hw == HwOp::kElementwise) {
          cost = double(ofm_el) / (double(h) * w * d);
        } else {
          double weight_fetch = 0;
          const double kel = double(op.kh) * op.kw;
          if (op.hw == HwOp::kDepthwise) {
            weight_fetch = kel * op.ifm.shape.c * bh * bw;
          } else if (op.hw != HwOp::kPooling) {
            weight_fetch = kel * op.ifm.shape.c * bh * bw * bc * d;
          }
          const double frac_h = double(ofm.h) / h, frac_w = double(ofm.w) / w;
          double ifm_fetch = double(ib.h) * ib.w * op.ifm.shape.c * subk * frac_h * frac_w;
          if (!EqualDepth(op.hw)) ifm_fetch *= bc;
          cost = (ifm_fetch + weight_fetch) / double(ofm_el);
          if (2 * int64_t{ib.h} * ib.w * std::min(ib.c, op.ifm.shape.c) >= ifm_el) cost /= 2;
        }
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best.ofm_block = ob;
          best.ifm_block = ib;
        }
      }
    }
  }
  if (best_cost < 0) {
    // Nothing fitted (extreme shapes): fall back to one micro-block.
    best.ofm_block = ub;
    best.ifm_block = IfmBlockFor(a, op, ub, IfmBlockDepth(a, op, tr.part_kernel, ub, ub.c));
  }
  return best;
}

namespace {

// Doc 4.4 / 6.2: MAC cycles for one OFM block.
double MacCyclesPerBlock(const Arch& a, const NpuOp& op, const BlockConfig& bc) {
  const Shape3 ob = Clip(bc.ofm_block, op.ofm.shape);
  const Shape3 ub = bc.ublock;
  const int32_t nh = CeilDiv(ob.h, ub.h), nw = CeilDiv(ob.w, ub.w), nc = CeilDiv(ob.c, ub.c);
  const int32_t nwh = nh * nw;
  const bool u85 = IsU85(a);
  const double wb = u85 ? 32.0 * ub.c / (8.0 * a.cores) : 32.0 * ub.c / 8.0;
  const int32_t b = op.ifm.bits;
  const bool u55_32 = !u85 && a.macs == 32;
  int32_t delay = 2;
  if (u55_32) delay = bc.acc40 ? 7 : 3;
  else if (bc.acc40 && a.macs <= 128) delay = 3;
  const int32_t ifm_blk_c = std::max(bc.ifm_block.c, 1);
  const int32_t kh = op.hw == HwOp::kVectorProduct ? 1 : DilatedK(op.kh, op.dh);
  const int32_t kw = op.hw == HwOp::kVectorProduct ? 1 : DilatedK(op.kw, op.dw);
  double total = 0;
  for (int32_t y = 0; y < kh; y += 8) {
    for (int32_t x = 0; x < kw; x += 8) {
      const int32_t e = std::min(8, kh - y) * std::min(8, kw - x);
      double cycles = 0;
      int32_t steps = 0;
      bool with_delay = true;
      switch (op.hw) {
        case HwOp::kPooling: {
          const int32_t ee = std::max(4, e);
          cycles = double(ee) * nwh * nc;
          if (!u55_32 || u85) cycles *= b / 2.0;
          with_delay = false;
          break;
        }
        case HwOp::kDepthwise:
          steps = CeilDiv(e, 4);
          cycles = std::max(wb, 4.0 * nwh * b / 8.0) * steps * nc;
          break;
        default:
          if (bc.part_kernel) {
            steps = CeilDiv(e, b == 16 ? 2 : 4);
            cycles = std::max(wb, 4.0 * nwh) * steps * nc * CeilDiv(ifm_blk_c, 8);
          } else {
            steps = e;
            if (u85) {
              cycles = std::max(wb, (ifm_blk_c / 8.0) * nwh) * e * nc * (b / 8.0);
            } else {
              cycles = std::max(wb, 4.0 * nwh) * steps * nc;
            }
          }
          if (u85 && op.sparse24) cycles /= 2;
          break;
      }
      if (with_delay && nwh == 1) {
        double d = 0;
        if (nc == 1) d = double(delay) * steps;
        else if (steps > 1) d = double(delay) * (steps - 1) * nc;
        if (u55_32 && bc.acc40 && (nw == 1 || nh == 1)) d += double(delay) * nc;
        if (bc.part_kernel) d *= CeilDiv(ifm_blk_c, 8);
        cycles += d;
      }
      total += cycles;
    }
  }
  if (ConvLike(op.hw)) total *= CeilDiv(std::max(op.ifm.shape.c, 1), ifm_blk_c);
  if (!u85) total /= a.cores;
  return total;
}

double AoPerElement(const Arch& a, const NpuOp& op, bool acc40) {
  if (IsU85(a)) {
    if (op.hw == HwOp::kElementwise && op.ew == EwKind::kDiv) return 33.0;
    int idx = 0;
    const int32_t ob = op.ofm.bits;
    if (op.hw == HwOp::kElementwise && !op.unary && op.ifm.bits == 32) idx = ob == 32 ? 5 : 4;
    else idx = ob >= 64 ? 3 : ob == 32 ? 2 : ob == 16 ? 1 : 0;
    double ao = a.ao_out[idx];
    if (op.act != Act::kNone) ao = std::max(ao, a.ao_act[0]);
    if (op.hw == HwOp::kTranspose) ao = std::max(ao, a.ao_act[1]);
    return ao + op.chain_ao_extra;
  }
  int i = 7;
  const bool ew = op.hw == HwOp::kElementwise;
  if (ew && op.ifm.bits == 32 && op.unary) i = 0;
  else if (ew && op.ifm.bits == 32) i = 1;
  else if (ew && op.ew == EwKind::kMul && op.ofm.bits == 32) i = 2;
  else if ((ew && op.ew == EwKind::kMul) || (!ew && acc40)) i = 3;
  else if (ew && (op.ew == EwKind::kAdd || op.ew == EwKind::kSub)) i = 5;
  else if (op.hw == HwOp::kPooling && op.pool == PoolKind::kMax) i = 6;
  int j = 0;  // no activation keeps index 0 (doc 4.3 quirk)
  if (op.act == Act::kRelu) j = 1;
  else if (op.act == Act::kOther) j = 2;
  return std::max(a.ao_out[i], a.ao_act[j]);
}

int AreaIndex(MemoryArea m) { return static_cast<int>(m); }

// Effective-burst inflation factor (doc 5.2).
double Inflation(const MemSystem& ms, MemoryArea area, Format fmt, bool write, int32_t tensor_c,
                 Shape3 blk, int32_t elem_bytes, int32_t cores) {
  const double burst = ms.mem[AreaIndex(area)].burst_length;
  double eff;
  if (fmt == Format::kNhcwb16) {
    eff = 16.0 * elem_bytes * std::max(blk.w, 1) * (write ? cores : 1);
  } else if (!write) {
    eff = tensor_c == blk.c ? double(blk.c) * blk.w * elem_bytes : double(blk.c) * elem_bytes;
  } else {
    eff = (blk.c <= 16 && blk.c == tensor_c)
              ? double(blk.w) * blk.c * elem_bytes
              : std::min({64.0, 16.0 * elem_bytes * cores, double(blk.c) * elem_bytes});
  }
  eff = std::max(1.0, std::min(burst, eff));
  return burst / eff;
}

// U85 channel bandwidth (doc 6.4). Channels: 0 Mem2Mem, 1 IFM-stream, 2 Weight, 3 FastWeight,
// 4 IFM, 5 Scale, 6 Write.
double ChannelBw(const Arch& a, const MemSystem& ms, MemoryArea area, int ch) {
  const MemoryConfig& m = ms.mem[AreaIndex(area)];
  const double bw = ms.bandwidth[AreaIndex(area)];
  if (!IsU85(a)) return bw;
  const double words = std::max(m.burst_length / 16.0, 1.0);
  const bool write = ch == 6;
  double limit = write ? 1e30 : a.rb_slots[ch] / words;
  const double outstanding = (write ? m.max_writes : m.max_reads) * m.ports_used * 0.8;
  const double tx = std::min(limit, std::max(outstanding, 0.8));
  const double lat = write ? m.write_latency : m.read_latency;
  if (lat <= 0) return bw;
  return std::min(bw, m.burst_length * tx / lat * 0.8);
}

struct Traffic {
  // bytes per area per channel
  double bytes[kNumMemoryAreas][7] = {};
  void Add(MemoryArea a, int ch, double b) { bytes[AreaIndex(a)][ch] += b; }
};

void AccessCycles(const Arch& a, const MemSystem& ms, const Traffic& t, OpCost* c) {
  for (int ar = 0; ar < kNumMemoryAreas; ++ar) {
    double total = 0;
    for (int ch = 0; ch < 7; ++ch) total += t.bytes[ar][ch];
    c->bytes[ar] = total;
    if (total <= 0 || !ms.valid[ar]) {
      c->access_cycles[ar] = 0;
      continue;
    }
    double cyc = total / ms.bandwidth[ar];
    if (IsU85(a)) {
      for (int ch = 0; ch < 7; ++ch) {
        if (t.bytes[ar][ch] <= 0) continue;
        cyc = std::max(cyc, t.bytes[ar][ch] / ChannelBw(a, ms, static_cast<MemoryArea>(ar), ch));
      }
    }
    c->access_cycles[ar] = cyc;
  }
}

double DmaCycles(const Arch& a, const MemSystem& ms, MemoryArea src, MemoryArea dst, double n) {
  const MemoryConfig& s = ms.mem[AreaIndex(src)];
  const MemoryConfig& d = ms.mem[AreaIndex(dst)];
  if (IsU85(a)) {
    return std::max(n / ChannelBw(a, ms, src, 0) + s.read_latency,
                    n / ChannelBw(a, ms, dst, 6) + d.write_latency);
  }
  return std::max(n / ms.bandwidth[AreaIndex(src)] + s.read_latency,
                  n / ms.bandwidth[AreaIndex(dst)] + s.write_latency);
}

}  // namespace

MemSystem MakeMemSystem(const EthosUConfig& cfg) {
  MemSystem ms;
  ms.config = &cfg;
  const SystemConfig& s = cfg.system;
  auto add = [&](const MemoryConfig& m, MemoryArea as) {
    const int i = AreaIndex(as);
    ms.valid[i] = true;
    ms.mem[i] = m;
    ms.mem[i].area = as;
    ms.bandwidth[i] = std::max(1e-6, m.clock_scale * s.axi_width_bytes * m.ports_used);
  };
  add(s.axi0, s.axi0.area);
  add(s.axi1, s.axi1.area);
  const MemoryConfig& cm = cfg.memory_mode.const_axi == 0 ? s.axi0 : s.axi1;
  const MemoryConfig& am = cfg.memory_mode.arena_axi == 0 ? s.axi0 : s.axi1;
  const MemoryConfig& sm = cfg.memory_mode.cache_axi == 0 ? s.axi0 : s.axi1;
  ms.const_area = cm.area;
  ms.arena_area = am.area;
  ms.staging_area = sm.area;
  if (ms.const_area == ms.arena_area && ms.const_area == MemoryArea::kSram) {
    // Sram_Only: constants sit in an on-chip-flash-labelled region with SRAM characteristics.
    add(cm, MemoryArea::kOnChipFlash);
    ms.const_area = MemoryArea::kOnChipFlash;
  }
  return ms;
}

OpCost CostOp(const Arch& a, const MemSystem& ms, const Lowered& lw, int i, double prev_slack,
              bool allow_buffer) {
  const NpuOp& op = lw.ops[i];
  OpCost best;
  if (op.chained_into >= 0) return best;
  auto fm = [&](int32_t id) -> const FeatureMap* {
    if (id < 0) return nullptr;
    const FeatureMap* f = &lw.fmaps[id];
    return f->alias_of >= 0 ? &lw.fmaps[f->alias_of] : f;
  };
  const FeatureMap* ifm = fm(op.ifm.id);
  const FeatureMap* ifm2 = op.has_ifm2 ? fm(op.ifm2.id) : nullptr;
  const FeatureMap* ofm = fm(op.ofm.id);
  const MemoryArea ifm_area = ifm ? ifm->area : ms.const_area;
  const MemoryArea ifm2_area = ifm2 ? ifm2->area : ms.const_area;
  const MemoryArea ofm_area = ofm ? ofm->area : ms.arena_area;
  const Format ifm_fmt = ifm ? ifm->format : Format::kNhwc;
  const Format ifm2_fmt = ifm2 ? ifm2->format : Format::kNhwc;
  const Format ofm_fmt = ofm ? ofm->format : Format::kNhwc;
  const int32_t ieb = std::max(op.ifm.bits / 8, 1);
  const int32_t oeb = std::max(op.ofm.bits / 8, 1);
  const BlockConfig bc = FindBlockConfig(a, op);
  const Shape3 ofm_s = op.ofm.shape;
  const Shape3 ob = Clip(bc.ofm_block, ofm_s);
  const Shape3 ib = bc.ifm_block;
  const bool has_weights = op.weight_tensor >= 0 || op.encoded_weight_bytes > 0;
  const bool u85 = IsU85(a);

  auto rd_lat = [&](MemoryArea m) { return double(ms.mem[AreaIndex(m)].read_latency); };
  auto wr_lat = [&](MemoryArea m) { return double(ms.mem[AreaIndex(m)].write_latency); };
  auto bw = [&](MemoryArea m, int ch) { return ChannelBw(a, ms, m, ch); };

  const double ifm_infl = Inflation(ms, ifm_area, ifm_fmt, false, op.ifm.shape.c, ib, ieb, a.cores);
  const double ofm_infl = Inflation(ms, ofm_area, ofm_fmt, true, ofm_s.c, ob, oeb, a.cores);
  const double ifm_blk_cycles =
      rd_lat(ifm_area) + double(ib.h) * ib.w * ib.c * ieb * ifm_infl / bw(ifm_area, 4);
  const double ofm_blk_cycles =
      wr_lat(ofm_area) + double(ob.h) * ob.w * ob.c * oeb * ofm_infl / bw(ofm_area, 6);

  const int64_t ofm_c_store = ofm_fmt == Format::kNhcwb16 ? (ofm_s.c + 15) / 16 * 16 : ofm_s.c;
  const double ofm_elems = double(ofm_s.h) * ofm_s.w * ofm_c_store;

  for (int variant = 0; variant < (has_weights && allow_buffer ? 2 : 1); ++variant) {
    const bool buffered = variant == 1;
    OpCost c;
    c.block = bc;
    c.weights_buffered = buffered;
    const MemoryArea scale_area = ms.const_area;
    double op_cycles = 0;
    Traffic t;
    if (op.hw == HwOp::kElementwise) {
      const double ao_pe = AoPerElement(a, op, false);
      const double n = ofm_elems;
      const double ao = std::ceil(ao_pe * n);
      const double blk_el = std::max<double>(1, double(ob.h) * ob.w * ob.c);
      const double per = (std::max(ifm_blk_cycles, ofm_blk_cycles) / blk_el + ao_pe) / 4.0;
      op_cycles = std::max(std::ceil(per * n), ao);
      const double in_el = double(ofm_s.h) * ofm_s.w *
                           (ifm_fmt == Format::kNhcwb16 ? ofm_c_store : ofm_s.c);
      t.Add(ifm_area, 4, in_el * ifm_infl);
      if (op.has_ifm2 && !(op.ifm2.scalar && op.ifm2.bits <= 8)) {
        const double n2 = op.ifm2.scalar ? 1.0 : std::min(in_el, double(op.ifm2.shape.elements()));
        const double infl2 = Inflation(ms, ifm2_area, ifm2_fmt, false, op.ifm2.shape.c, ib,
                                       std::max(op.ifm2.bits / 8, 1), a.cores);
        t.Add(ifm2_area, 1, n2 * infl2);
      }
      t.Add(ofm_area, 6, n * ofm_infl);
    } else if (op.hw == HwOp::kTranspose) {
      const double in_b = double(op.ifm.shape.elements()) * ieb;
      const double out_b = double(ofm_s.elements()) * oeb;
      op_cycles = std::max(in_b / bw(ifm_area, 4) + rd_lat(ifm_area),
                           out_b / bw(ofm_area, 6) + wr_lat(ofm_area));
      if (u85) op_cycles = std::max(op_cycles, ofm_s.elements() * a.ao_act[1]);
      t.Add(ifm_area, 4, in_b);
      t.Add(ofm_area, 6, out_b);
    } else if (op.hw == HwOp::kMatMul) {
      // U55/U65: per OFM column an elementwise MUL into a 32-bit scratch plus a ReduceSum
      // (doc 4.7); U85: a native matmul costed like a 1x1 convolution.
      const double k = std::max(op.ifm.shape.c, 1);
      const double out_el = double(ofm_s.elements());
      if (u85) {
        op_cycles = out_el * k / a.macs + out_el * a.ao_out[0];
      } else {
        const double mul = out_el * k * std::max(a.ao_out[2], a.ao_act[0]);
        const double red = out_el * k / (a.macs / 8.0) + out_el * a.ao_out[7];
        op_cycles = mul + red;
      }
      t.Add(ifm_area, 4, double(op.ifm.shape.elements()) * ieb * ofm_s.c);
      t.Add(ifm2_area, 1, double(op.ifm2.shape.elements()) * std::max(op.ifm2.bits / 8, 1));
      t.Add(ms.arena_area, 1, out_el * k * 4 * 2);
      t.Add(ofm_area, 6, out_el * oeb);
    } else {
      const int64_t tot_ub = int64_t{CeilDiv(ofm_s.h, bc.ublock.h)} * CeilDiv(ofm_s.w, bc.ublock.w) *
                             CeilDiv(ofm_s.c, bc.ublock.c);
      const int64_t blk_ub =
          int64_t{CeilDiv(ob.h, bc.ublock.h)} * CeilDiv(ob.w, bc.ublock.w) * CeilDiv(ob.c, bc.ublock.c);
      const double num_blocks = double(tot_ub) / std::max<int64_t>(blk_ub, 1);
      const double ao_pe = AoPerElement(a, op, bc.acc40);
      double bias_blk = 0;
      if (has_weights) {
        const MemoryArea sa = buffered ? ms.staging_area : ms.const_area;
        bias_blk = 10.0 * ob.c * rd_lat(sa) / 256.0;
      }
      const double ao_blk = std::max(std::ceil(ao_pe * ob.h * ob.w * ob.c), bias_blk);
      const double mac_blk = MacCyclesPerBlock(a, op, bc);
      const double diff = num_blocks > 1 ? std::fabs(ofm_blk_cycles - ifm_blk_cycles) : 0;
      const double cmd = (diff + mac_blk + ao_blk) / 4.0;
      const double m = std::max(mac_blk, cmd), aa = std::max(ao_blk, cmd);
      op_cycles = m > aa ? m * num_blocks + aa : aa * num_blocks + m;
      op_cycles += ofm_blk_cycles + ifm_blk_cycles;
      // Traffic (doc 5.1).
      const int64_t bh = CeilDiv(ofm_s.h, ob.h), bw_ = CeilDiv(ofm_s.w, ob.w),
                    bcn = CeilDiv(ofm_s.c, ob.c);
      const int32_t subk =
          CeilDiv(DilatedK(op.kh, op.dh), 8) * CeilDiv(DilatedK(op.kw, op.dw), 8);
      const int64_t ifm_c = ifm_fmt == Format::kNhcwb16 ? (op.ifm.shape.c + 15) / 16 * 16
                                                         : op.ifm.shape.c;
      const bool eq = EqualDepth(op.hw);
      const double ifm_el = double(ib.h) * ib.w * (eq ? ob.c : ifm_c) * subk * bh * bw_ *
                            (eq ? bcn : bcn);
      t.Add(ifm_area, 4, ifm_el * ifm_infl);
      t.Add(ofm_area, 6, ofm_elems * ofm_infl);
      if (has_weights) {
        const double refetch = double(bh) * bw_;
        const double enc = double(op.encoded_weight_bytes);
        t.Add(scale_area, 5, refetch * op.scale_bytes);
        if (buffered) {
          t.Add(ms.const_area, 0, enc);
          t.Add(ms.staging_area, 6, enc);
          t.Add(ms.staging_area, 2, refetch * enc);
        } else {
          t.Add(ms.const_area, 2, refetch * enc);
        }
      }
    }
    for (int32_t extra : op.extra_reads) {
      const FeatureMap* f = fm(extra);
      if (f) t.Add(f->area, 1, double(f->bytes));
    }
    c.op_cycles = op_cycles;
    double npu = op_cycles;
    if (buffered) {
      const double dma = DmaCycles(a, ms, ms.const_area, ms.staging_area,
                                   double(op.encoded_weight_bytes + op.scale_bytes));
      npu = op_cycles + std::max(dma - prev_slack, 0.0);
      c.weight_buffer_bytes = op.encoded_weight_bytes + op.scale_bytes;
    }
    if (op.needs_lut) {
      const double lut = DmaCycles(a, ms, ms.const_area, ms.staging_area, 2048.0);
      // Vela prefetches LUTs early; in its reports the load is hidden (doc 5.4).
      npu += std::max(lut - (buffered ? 0.0 : prev_slack) - 4096.0, 0.0);
    }
    c.npu_cycles = npu;
    AccessCycles(a, ms, t, &c);
    double total = npu;
    for (int ar = 0; ar < kNumMemoryAreas; ++ar) total = std::max(total, c.access_cycles[ar]);
    c.total = total;
    if (variant == 0 || c.total < best.total) best = c;
  }
  return best;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
