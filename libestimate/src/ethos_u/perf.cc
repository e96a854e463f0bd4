// Ethos-U per-operation cycle and memory-traffic model (doc sections 4, 5, 6).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "ethos_u/block_search.h"
#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

int64_t CeilDiv64(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

bool IsU85(const Arch& a) { return a.family == EthosUFamily::kU85; }

// A U85 resize (an elementwise-class operation of an upscaled IFM): Vela 5.2 charges the 8-bit
// output rate out[0] per element for every byte of the OFM element, and no more than 16
// elements per cycle (its tables for single resizes in SRAM: 8-bit 0.5 / 0.25 / 0.125 /
// 0.0625 / 0.0625 cycles per element on U85-128 ... U85-2048, 16-bit twice that but 0.0625 on
// U85-2048).
bool IsU85Resize(const Arch& a, const NpuOp& op) {
  return IsU85(a) && op.hw == HwOp::kElementwise && op.upscale > 1;
}

bool ConvLike(HwOp h) {
  return h == HwOp::kConvolution || h == HwOp::kVectorProduct || h == HwOp::kReduceSum;
}

Shape3 Clip(Shape3 b, Shape3 s) {
  return {std::min(b.h, s.h), std::min(b.w, s.w), std::min(b.c, s.c)};
}


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
  const int32_t k = SatMul(op.kh, op.kw);
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



// U55/U65 SHRAM layout check (doc 4.2): IFM (double-buffered) and accumulators must fit
// between the reserved output banks and the LUT banks.
bool FitsU55(const Arch& a, const NpuOp& op, Shape3 ob, Shape3 ib, bool acc40, bool ew_full,
             bool ew) {
  const int32_t bits = op.ifm.bits;
  const int64_t ifm_bytes = int64_t{ib.w} * ib.h * RoundUp(ib.c * std::max(bits / 8, 1), 8);
  int32_t g_ifm;
  if (bits >= 32) g_ifm = a.granules[4];
  else if (ew) g_ifm = bits == 16 ? a.granules[3] : a.granules[2];
  else g_ifm = bits == 16 ? a.granules[1] : a.granules[0];
  const int32_t ifm_banks = RoundUp(static_cast<int32_t>(CeilDiv64(ifm_bytes, 1024)) * 2, g_ifm);
  const int32_t reserved_end = a.shram_banks > 16 ? 2 : 0;
  const int32_t lut_banks = std::max(op.needs_lut ? 2 : 0, reserved_end);
  int32_t acc_start = a.shram_banks - lut_banks;
  int32_t ifm_end = 2 + ifm_banks;
  if (!ew) {
    const int64_t acc_bytes = int64_t{ob.w} * ob.h * RoundUp(ob.c, 8) * (acc40 ? 40 : 32) / 8;
    const int32_t g = acc40 ? a.granules[7] : a.granules[6];
    acc_start -= RoundUp(static_cast<int32_t>(CeilDiv64(acc_bytes, 1024)) * 2, g);
  } else if (ifm_end + (ew_full ? ifm_banks : 0) > acc_start) {
    return false;
  }
  return ifm_end <= acc_start;
}


Shape3 IfmBlockGeom(const NpuOp& op, Shape3 ob, Shape3 ub) {
  if (op.hw == HwOp::kElementwise) return ob;
  const int32_t up = std::max(op.upscale, 1);
  const int32_t rounding = up > 1 && op.kh == 1 ? 1 : 0;
  const int32_t h = RoundUp(RequiredInput(ob.h, op.sh, std::min(DilatedK(op.kh, op.dh), 8), up,
                                          rounding), ub.h);
  const int32_t w = RoundUp(RequiredInput(ob.w, op.sw, std::min(DilatedK(op.kw, op.dw), 8), up,
                                          rounding), ub.w);
  return {h, w, ob.c};
}

// The block search of doc 4.2 (U55/U65).
BlockConfig FindBlockU55(const Arch& a, const NpuOp& op) {
  BlockConfig best;
  const Shape3 ofm = op.ofm.shape;
  const Shape3 ub = a.ofm_ublocks.front();
  const bool ew = op.hw == HwOp::kElementwise;
  const bool ew_full = ew && !(op.has_ifm2 && op.ifm2.scalar && op.ifm.bits <= 16) && op.has_ifm2;
  const bool pooling = op.hw == HwOp::kPooling || op.hw == HwOp::kReduceSum;
  const bool reduce_sum = op.hw == HwOp::kReduceSum;
  const bool depthwise = op.hw == HwOp::kDepthwise;
  const bool equal_depth = ew || (pooling && !reduce_sum) || depthwise;
  const Shape3 ifm = (op.has_ifm2 && op.ifm2.shape.elements() > op.ifm.shape.elements())
                         ? op.ifm2.shape : op.ifm.shape;
  const Traversal tr = ChooseTraversal(a, op);
  const bool acc40 = op.ifm.bits == 16 && (!pooling || reduce_sum) && !ew && !op.acc32;
  best.ublock = ChooseUBlock(a, op);
  best.part_kernel = tr.part_kernel;
  best.acc40 = acc40;
  const int32_t repeats =
      CeilDiv(DilatedK(op.kw, op.dw), 8) * CeilDiv(DilatedK(op.kh, op.dh), 8);
  const int32_t ifm_depth_blk = op.ifm.bits == 16
                                    ? RoundUp(std::min(ifm.c, 16), 4)
                                    : RoundUp(std::min(ifm.c, tr.part_kernel ? 16 : 32),
                                              a.ifm_ublock.c);
  const float weight_wh =
      (op.hw == HwOp::kConvolution || depthwise) ? float(op.kh) * float(op.kw) : 0.0f;
  const Shape3 space{RoundUp(std::min(ofm.h, a.max_block.h), ub.h),
                     RoundUp(std::min(ofm.w, a.max_block.w), ub.w),
                     RoundUp(std::min(ofm.c, a.max_block.c), ub.c)};
  const float ofm_el = float(std::max<int64_t>(ofm.elements(), 1));
  const float ifm_el = float(ifm.elements());
  BlockChoice choice;
  std::vector<char> wont_fit(size_t(space.h / ub.h + 1) * size_t(space.w / ub.w + 1), 0);
  const int32_t step_h = ub.h * std::max(1, space.h / ub.h / 64);
  const int32_t step_w = ub.w * std::max(1, space.w / ub.w / 64);
  int32_t depth = std::max(ub.c, std::min(space.c, 16));
  if (depth < ofm.c) depth = RoundUp(depth, 16);
  while (depth <= space.c) {
    for (int32_t h = ub.h; h <= space.h; h += step_h) {
      for (int32_t w = ub.w; w <= space.w; w += step_w) {
        char& wf = wont_fit[size_t(h / ub.h) * size_t(space.w / ub.w + 1) + size_t(w / ub.w)];
        if (wf) continue;
        Shape3 ob{h, w, depth};
        Shape3 ib = IfmBlockGeom(op, ob, ub);
        if (!equal_depth) ib.c = ifm_depth_blk;
        if (ofm.h == 1 && op.kh == 1 && ub.h == 2) ob.h = std::min(ob.h, ofm.h);
        if (!FitsU55(a, op, ob, ib, acc40, ew_full, ew)) {
          wf = 1;
          continue;
        }
        const float full_h = float(CeilDiv(ofm.h, ob.h)), full_w = float(CeilDiv(ofm.w, ob.w)),
                    full_c = float(CeilDiv(ofm.c, ob.c));
        const float bx = float(ofm.w) / float(ob.w), by = float(ofm.h) / float(ob.h),
                    bz = float(ofm.c) / float(ob.c);
        float weight_fetch = weight_wh * float(ifm.c) * full_h * full_w;
        if (!depthwise) weight_fetch *= bz * float(ob.c);
        float ifm_fetch = float(ib.h) * float(ib.w) * float(ifm.c) * float(repeats) * bx * by;
        if (!equal_depth) ifm_fetch *= full_c;
        float cost = ew ? ofm_el / (float(h) * float(w) * float(depth))
                        : (ifm_fetch + weight_fetch) / ofm_el;
        if (ifm_el < float(ib.elements()) * 2.0f) cost /= 2.0f;
        if (choice.Offer(cost, ifm, ib, h, w)) {
          best.ofm_block = {h, w, depth};
          best.ifm_block = ib;
        }
      }
    }
    depth += ub.c;
    if (depth < ofm.c) depth = RoundUp(depth, 16);
  }
  if (!choice.found()) {
    best.ofm_block = ub;
    best.ifm_block = IfmBlockGeom(op, ub, ub);
    if (!equal_depth) best.ifm_block.c = ifm_depth_blk;
  }
  return best;
}

}  // namespace

double IfmBlockReads(const NpuOp& op, Format ifm_format, const BlockConfig& bc) {
  const Shape3 ofm_s = op.ofm.shape, ifm_s = op.ifm.shape;
  const Shape3 ob = Clip(bc.ofm_block, ofm_s), ib = Clip(bc.ifm_block, ifm_s);
  const bool dw_pool = op.hw == HwOp::kDepthwise || op.hw == HwOp::kPooling;
  const int64_t bh = CeilDiv(ofm_s.h, ob.h), bw = CeilDiv(ofm_s.w, ob.w);
  const int64_t bcn = dw_pool ? 1 : CeilDiv(ofm_s.c, ob.c);
  const int32_t subk =
      op.hw == HwOp::kVectorProduct ? 1 : CeilDiv(op.kw, 8) * CeilDiv(op.kh, 8);
  const int32_t depth = ifm_format == Format::kNhcwb16 ? RoundUp(ifm_s.c, 16) : ifm_s.c;
  const double ifm_fetch = double(ib.h) * ib.w * depth;
  return ifm_fetch * subk * double(bh * bw * bcn);
}

BlockConfig FindBlockConfig(const Arch& a, const NpuOp& op) {
  if (IsU85Resize(a, op)) {
    // Vela 5.2's U85 resize works on one OFM row of 16 channels at a time, the same block
    // whatever the shapes: as wide as an eighth of the accumulator RAM holds 16 accumulators
    // (32-bit; 64-bit for a 16-bit OFM) per column, less 4 columns, at most 128 (8-bit: 12,
    // 28, 60, 124, 128 wide on U85-128 ... U85-2048; 16-bit: 4, 12, 28, 60, 124), reading
    // IFM rows of the IFM micro-block's height per OFM byte (its verbose block
    // configurations).
    BlockConfig bc = FindBlockConfigU85(a, op);
    const int32_t acc_bytes = op.ofm.bits > 8 ? 8 : 4;
    const int32_t w = std::clamp(a.acc_ram / 8 / (16 * acc_bytes) - 4, 1, 128);
    const int32_t bytes = std::max(op.ofm.bits / 8, 1);
    int32_t ih = std::max(1, a.ifm_ublock.h / bytes);
    // Double-buffered with the same 4-column margin, the IFM rows must leave room in the IFM
    // RAM (8-bit on U85-1024: 2 rows, not the micro-block's 4).
    while (ih > 1 && int64_t{2} * ih * (w + 4) * 16 * bytes >= a.ifm_ram) ih /= 2;
    bc.ofm_block = {1, w, 16};
    bc.ifm_block = {ih, w, 16};
    return bc;
  }
  if (IsU85(a) && op.hw == HwOp::kElementwise && op.has_ifm2 && !op.ifm2.scalar &&
      op.ifm2.shape.c == 1 && op.ofm.shape.c > 1 && op.ifm2.shape.elements() > 1 &&
      op.name.rfind("Softmax/", 0) == 0) {
    // An elementwise operation broadcasting a map over depth (a softmax's x - max and
    // exp x reciprocal): Vela 5.2 gives it blocks of 16 channels by the micro-block's height
    // holding a 64th of the accumulator RAM of IFM bytes (U85-256: 1 x 4 x 16 for 32-bit
    // inputs, 1 x 16 x 16 for 8-bit; U85-1024: 2 x 8 x 16, 2 x 32 x 16), its verbose blocks.
    BlockConfig bc = FindBlockConfigU85(a, op);
    const int32_t bytes = std::max(op.ifm.bits / 8, 1);
    const int32_t h = std::max(bc.ublock.h, 1);
    const int32_t w = std::max(1, a.acc_ram / 64 / (16 * bytes * h));
    bc.ofm_block = bc.ifm_block = {h, w, 16};
    return bc;
  }
  if (IsU85(a)) return FindBlockConfigU85(a, op);
  if (op.hw == HwOp::kTranspose) {
    // Vela searches a transpose's block on the untransposed OFM (the IFM's shape); the
    // blocks then describe IFM-ordered tiles of both maps (its verbose block configs).
    NpuOp untransposed = op;
    untransposed.ofm.shape = op.ifm.shape;
    return FindBlockU55(a, untransposed);
  }
  return FindBlockU55(a, op);
}

namespace {

// Doc 4.4 / 6.2: MAC cycles for one OFM block (blocks clipped to the feature maps).
double MacCyclesPerBlock(const Arch& a, const NpuOp& op, const BlockConfig& bc) {
  const Shape3 ob = Clip(bc.ofm_block, op.ofm.shape);
  const Shape3 ib = Clip(bc.ifm_block, op.ifm.shape);
  const Shape3 ub = bc.ublock;
  const int32_t nh = CeilDiv(ob.h, ub.h), nw = CeilDiv(ob.w, ub.w), nc = CeilDiv(ob.c, ub.c);
  const int32_t nwh = nh * nw;
  const bool u85 = IsU85(a);
  const double wb = u85 ? 32.0 * ub.c / (8.0 * a.cores) : 32.0 * ub.c / 8.0;
  const int32_t b = op.ifm.bits;
  const bool u55_32 = !u85 && a.macs == 32;
  const int32_t ifm_blk_c = std::max(ib.c, 1);
  const bool vp = op.hw == HwOp::kVectorProduct;
  const int32_t kh = vp ? 1 : op.kh;
  const int32_t kw = vp ? 1 : op.kw;
  // U85: a fully connected layer walks its kernel like a convolution, part-kernel first when
  // its traversal is (Vela 5.2's tables: a 32-to-32 FC on U85-256 costs 512 MAC cycles per
  // block, two 16-deep IFM block steps of 256).
  const bool pk = bc.part_kernel && (op.hw == HwOp::kConvolution || (u85 && vp));
  double total = 0;
  for (int32_t x = 0; x < kw; x += 8) {
    for (int32_t y = 0; y < kh; y += 8) {
      const int32_t e = std::min(8, kh - y) * std::min(8, kw - x);
      double cycles = 0;
      int32_t steps = 0;
      if (op.hw == HwOp::kPooling) {
        steps = 1;
        cycles = double(std::max(4, e)) * nwh * nc;
        if (!u55_32) cycles *= b / 2;
      } else if (op.hw == HwOp::kDepthwise) {
        steps = CeilDiv(e, 4);
        cycles = std::max(wb, double(4 * nwh * (b / 8))) * steps * nc;
      } else if (!pk) {
        steps = e;
        if (u85) {
          // ReduceSum too (Vela 5.2's U85 depth-first rate, x IFM bytes: a softmax's sum of
          // ten 32-bit exponentials costs 227 cycles on U85-256).
          cycles = std::max(wb, double(ifm_blk_c / 8 * nwh)) * e * nc * (b / 8);
        } else {
          cycles = std::max(wb, double(4 * nwh)) * steps * nc;
        }
        if (u85 && op.sparse24) cycles /= 2;
      } else {
        steps = CeilDiv(e, b == 16 ? 2 : 4);
        cycles = std::max(wb, double(4 * nwh)) * steps * nc * CeilDiv(ifm_blk_c, 8);
        if (u85 && op.sparse24) cycles /= 2;
      }
      double d = 0;
      if (u55_32) {
        const int32_t delay = bc.acc40 ? 7 : 3;
        if (nwh == 1) {
          if (nc == 1) d = double(delay) * steps;
          else if (steps > 1) d = double(delay) * (steps - 1) * nc;
        }
        if ((nw == 1 || nh == 1) && nc > 1 && bc.acc40) d += double(delay) * nc;
      } else {
        const int32_t delay = (bc.acc40 && a.macs <= 128) ? 3 : 2;
        if (nwh == 1) {
          if (nc == 1) d = double(delay) * steps;
          else if (steps > 1) d = double(delay) * (steps - 1) * nc;
        }
      }
      if (pk) d *= CeilDiv(ifm_blk_c, 8);
      total += cycles + d;
    }
  }
  if (ConvLike(op.hw)) total *= CeilDiv(std::max(op.ifm.shape.c, 1), ifm_blk_c);
  if (!u85) total = std::floor(total / a.cores);
  return total;
}

double AoPerElement(const Arch& a, const NpuOp& op, bool acc40) {
  if (IsU85Resize(a, op)) {
    return std::max(a.ao_out[0] * std::max(op.ofm.bits / 8, 1), 1.0 / 16);
  }
  if (IsU85(a)) {
    if (op.hw == HwOp::kElementwise && op.ew == EwKind::kDiv) return 33.0;
    int idx = 0;
    const int32_t ob = op.ofm.bits;
    // The head of a chain writes its 32-bit result into the chaining buffer: out[4]. An 8-bit
    // operation whose LUT widens its result (a softmax's x - max into exp, 32 bits) runs at the
    // 8-bit rate: the lookup is the activation (Vela 5.2: 64 x 64 x 4 at 0.0625 cycles per
    // element on U85-1024, out[0], not out[2]).
    if (op.chain_ao_extra > 0 && op.ifm.bits == 32) idx = 4;
    else if (op.act == Act::kLut && op.hw == HwOp::kElementwise && op.ifm.bits == 8) idx = 0;
    else if (op.hw == HwOp::kElementwise && !op.unary && op.ifm.bits == 32) idx = ob == 32 ? 5 : 4;
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
  // Activation unit: LUT (sigmoid/tanh) 0, ReLU family 1, others 2. Vela 5.1 also charged
  // index 0 to operations without an activation (doc 4.3 quirk); Vela 5.2 charges them
  // nothing beyond the output cost (a MUL without activation on U55-128 costs out[3] = 0.75
  // per element in its per-layer tables, not act[0] = 1.0), and so does mica.
  int j = 0;
  if (op.act == Act::kRelu) j = 1;
  else if (op.act == Act::kOther || op.act == Act::kNone || op.lut_op) j = 2;
  return std::max(a.ao_out[i], a.ao_act[j]);
}

int AreaIndex(MemoryArea m) { return static_cast<int>(m); }

// Bytes actually moved for `count` units of a feature map (doc 5.2): the count is scaled by
// the memory's burst length over the burst the access pattern allows. `blk` is the op's
// (unclipped) block, `shape` the tensor's shape.
double Transfer(const MemSystem& ms, MemoryArea area, Format fmt, bool write, Shape3 shape,
                Shape3 blk, int32_t bits, int32_t cores, bool u85, double count) {
  if (u85) cores = 1;
  const int64_t max_burst = ms.mem[AreaIndex(area)].burst_length;
  int64_t burst_bits = 8 * 8;
  if (fmt == Format::kNhcwb16) {
    const int64_t zstride = int64_t{shape.w} * bits * 16 / 8;
    if (zstride == blk.c) burst_bits = int64_t{bits} * blk.w * blk.c;
    else burst_bits = 16LL * bits * blk.w * (write ? cores : 1);
  } else {
    const int64_t xstride = int64_t{shape.c} * bits / 8;
    if (!write) {
      burst_bits = xstride == blk.c ? int64_t{bits} * blk.w * blk.c : int64_t{bits} * blk.c;
    } else if (blk.c <= 16 && xstride == blk.c) {
      burst_bits = int64_t{bits} * blk.w * blk.c;
    } else {
      burst_bits = std::min({int64_t{64 * 8}, int64_t{16} * bits * cores, int64_t{blk.c} * bits});
    }
  }
  const int64_t burst = std::max<int64_t>(1, std::min<int64_t>(max_burst, burst_bits / 8));
  // Bytes (Vela 5.2, every family: a 16-bit OFM written to SRAM or DRAM costs twice the
  // access cycles of an 8-bit one of the same shape in its per-layer tables, and a 32-bit map
  // four times; Vela 5.1 scaled the element count on U55/U65, doc 5.2 note).
  const double units = std::floor(count * std::max(bits, 8) / 8);
  return std::floor(units * double(max_burst) / double(burst));
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
    return std::max(std::floor(n / ChannelBw(a, ms, src, 0)) + s.read_latency,
                    std::floor(n / ChannelBw(a, ms, dst, 6)) + d.write_latency);
  }
  return std::max(std::floor(n / ms.bandwidth[AreaIndex(src)]) + s.read_latency,
                  std::floor(n / ms.bandwidth[AreaIndex(dst)]) + s.write_latency);
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

namespace {

// What costing one NPU op reads: the op, its block, and where and how its operands are stored.
// `home` costs it as Vela's scheduler does before fast storage is assigned: every feature map
// (but a cascade's rolling buffer) in the arena memory.
struct OpContext {
  OpContext(const Arch& arch, const MemSystem& mem, const Lowered& lowered, const NpuOp& npu_op,
            const BlockConfig& block, bool home_placement = false)
      : a(arch), ms(mem), lw(lowered), op(npu_op), bc(block), home(home_placement) {
    ifm = Storage(op.ifm.id);
    ifm2 = op.has_ifm2 ? Storage(op.ifm2.id) : nullptr;
    ofm = Storage(op.ofm.id);
    ifm_area = ifm ? AreaOf(ifm) : ms.const_area;
    ifm2_area = ifm2 ? AreaOf(ifm2) : ms.const_area;
    ofm_area = ofm ? AreaOf(ofm) : ms.arena_area;
    ifm_fmt = ifm ? ifm->format : Format::kNhwc;
    ifm2_fmt = ifm2 ? ifm2->format : Format::kNhwc;
    ofm_fmt = ofm ? ofm->format : Format::kNhwc;
    ibits = std::max(op.ifm.bits, 8);
    obits = std::max(op.ofm.bits, 8);
    ofm_s = op.ofm.shape;
    ifm_s = op.ifm.shape;
    ob = Clip(bc.ofm_block, ofm_s);
    ib = Clip(bc.ifm_block, ifm_s);
    has_weights = op.weight_tensor >= 0 || op.encoded_weight_bytes > 0;
    u85 = IsU85(a);
    // Per-block transfer times (doc 4.5).
    ifm_blk_cycles =
        RdLat(ifm_area) +
        std::floor(Transfer(ms, ifm_area, ifm_fmt, false, ifm_s, bc.ifm_block, ibits, a.cores, u85,
                            double(ib.elements())) /
                   ms.bandwidth[AreaIndex(ifm_area)]);
    ofm_blk_cycles =
        WrLat(ofm_area) +
        std::floor(Transfer(ms, ofm_area, ofm_fmt, true, ofm_s, bc.ofm_block, obits, a.cores, u85,
                            double(ob.elements())) /
                   ms.bandwidth[AreaIndex(ofm_area)]);
    ofm_store_el = double(Round16(ofm_fmt, ofm_s).elements());
  }

  // The stored map a feature map id refers to (through aliases), or nullptr.
  const FeatureMap* Storage(int32_t id) const {
    if (id < 0) return nullptr;
    const FeatureMap* f = &lw.fmaps[id];
    return f->alias_of >= 0 ? &lw.fmaps[f->alias_of] : f;
  }
  MemoryArea AreaOf(const FeatureMap* f) const {
    return home && f->rolling_bytes == 0 ? ms.arena_area : f->area;
  }
  double RdLat(MemoryArea m) const { return double(ms.mem[AreaIndex(m)].read_latency); }
  double WrLat(MemoryArea m) const { return double(ms.mem[AreaIndex(m)].write_latency); }
  double Bw(MemoryArea m, int ch) const { return ChannelBw(a, ms, m, ch); }
  // Cycles to read `bytes` from `m` on channel `ch` (its bandwidth on U85) plus the latency:
  // the scheduler's measure of seeing an operand (Vela's MinReadCycles).
  double ReadCycles(MemoryArea m, int ch, double bytes) const {
    return bytes / (u85 ? Bw(m, ch) : ms.bandwidth[AreaIndex(m)]) + RdLat(m);
  }
  static Shape3 Round16(Format f, Shape3 s) {
    return f == Format::kNhcwb16 ? Shape3{s.h, s.w, (s.c + 15) / 16 * 16} : s;
  }
  // Adds the OFM write of `count` elements, unless Vela does not count it: U85 counts an op
  // group's OFM only when the group's first op's OFM is stored, so a chain's head (whose OFM
  // streams through the chaining buffer) writes its result for free in Vela 5.2's tables (a
  // U-Net's softmax into a DRAM output: no DRAM access).
  void WriteOfm(Traffic* t, double count) const {
    if (u85 && op.chain_head) return;
    t->Add(ofm_area, 6,
           Transfer(ms, ofm_area, ofm_fmt, true, ofm_s, bc.ofm_block, obits, a.cores, u85, count));
  }

  const Arch& a;
  const MemSystem& ms;
  const Lowered& lw;
  const NpuOp& op;
  const BlockConfig& bc;
  bool home;
  // U85, buffered variant: the OFM depths of the weight buffer's slices (empty: one slice).
  std::vector<int32_t> slices;
  const FeatureMap *ifm = nullptr, *ifm2 = nullptr, *ofm = nullptr;
  MemoryArea ifm_area, ifm2_area, ofm_area;
  Format ifm_fmt, ifm2_fmt, ofm_fmt;
  int32_t ibits, obits;
  Shape3 ofm_s, ifm_s, ob, ib;
  bool has_weights, u85;
  double ifm_blk_cycles, ofm_blk_cycles, ofm_store_el;
};

// Elementwise ops (doc 4.6): output-unit bound, or transfer bound per block.
double ElementwiseCycles(const OpContext& x, Traffic* t) {
  const NpuOp& op = x.op;
  const double ao_pe = AoPerElement(x.a, op, false);
  // U85: a chain streams 16-deep bricks through its chaining buffers, so Vela 5.2 counts the
  // elements of a chain's output in whole bricks of depth whatever its format (a softmax's
  // final MUL and shift into a 4-deep NHWC map: 4 x the elements).
  const double n = x.u85 && op.chain_ao_extra > 0
                       ? double(Shape3{x.ofm_s.h, x.ofm_s.w, RoundUp(x.ofm_s.c, 16)}.elements())
                       : x.ofm_store_el;
  const double ao = std::ceil(ao_pe * n);
  const double blk_el = std::max<double>(1, double(x.bc.ofm_block.elements()));
  // The slower input's block: U55/U65 read a second operand that is not encoded in the
  // command stream (a map, or a scalar wider than 8 bits: a softmax's 32-bit constants, from
  // the constants' memory) block by block like the first.
  double ifm_cycles = x.ifm_blk_cycles;
  if (!x.u85 && op.has_ifm2 && (op.ifm2.shape.elements() > 1 || op.ifm2.bits > 8)) {
    const Shape3 b2 = Clip(x.bc.ifm_block, op.ifm2.shape);
    ifm_cycles = std::max(
        ifm_cycles, x.RdLat(x.ifm2_area) +
                        std::floor(Transfer(x.ms, x.ifm2_area, x.ifm2_fmt, false, op.ifm2.shape,
                                            x.bc.ifm_block, std::max(op.ifm2.bits, 8), x.a.cores,
                                            x.u85, double(b2.elements())) /
                                   x.ms.bandwidth[AreaIndex(x.ifm2_area)]));
  }
  const double per = (std::max(ifm_cycles, x.ofm_blk_cycles) / blk_el + ao_pe) / 4.0;
  const double op_cycles = std::max(std::ceil(per * n), ao);
  // A resize (U85: an IFM upscaled by the output unit) reads its smaller IFM once.
  const Shape3 in_s = op.upscale > 1 ? x.ifm_s : x.ofm_s;
  const double in_el = double(OpContext::Round16(x.ifm_fmt, in_s).elements());
  const auto read1 = [&](double count, int channel = 4) {
    t->Add(x.ifm_area, channel, Transfer(x.ms, x.ifm_area, x.ifm_fmt, false, x.ifm_s, x.bc.ifm_block,
                                   x.ibits, x.a.cores, x.u85, count));
  };
  const auto read2 = [&](double count) {
    t->Add(x.ifm2_area, 1,
           Transfer(x.ms, x.ifm2_area, x.ifm2_fmt, false, op.ifm2.shape, x.bc.ifm_block,
                    std::max(op.ifm2.bits, 8), x.a.cores, x.u85, count));
  };
  // One storage unit of the first operand's format (a 16-deep brick in NHCWB16).
  const double unit = x.ifm_fmt == Format::kNhcwb16 ? 16.0 : 1.0;
  if (!x.u85) {
    // U55/U65 (Vela 5.2's element accesses): a one-element first operand wider than 8 bits is
    // read (as one storage unit of the IFM's format) and the second operand not at all; an
    // 8-bit one is encoded and the second operand read whole. Otherwise the first operand is
    // read whole and the second whole, or as one storage unit of the first operand's format
    // when it is a scalar wider than 8 bits (a 32-bit constant beside a 16-deep brick map: 16
    // elements, a full burst from DRAM).
    if (op.ifm.shape.elements() == 1) {
      if (op.ifm.bits > 8) {
        read1(unit);
      } else if (op.has_ifm2) {
        read2(in_el);
      }
    } else {
      read1(in_el);
      if (op.has_ifm2 && op.ifm2.shape.elements() > 1) {
        read2(in_el);
      } else if (op.has_ifm2 && op.ifm2.bits > 8) {
        read2(unit);
      }
    }
  } else {
    // U85 (Vela 5.2): one one-element operand is encoded in the command stream; a second one
    // is read, as one storage unit of the first operand's format (beside a 16-deep brick map
    // 16 elements, a full DRAM burst: its classifier softmax's x - 1 and x * c on one element
    // read 128 bytes of DRAM each).
    // Both operands of a binary op stream through the IFM-stream channel and a broadcast
    // operand is read once (probes of same-shape and broadcast ADD/MUL with every operand in
    // DRAM on U85-128…2048: the op's DRAM cycles are the two operands' bytes over that one
    // channel's bandwidth; an SE block's 1x1xC MUL operand costs its own bytes, not the
    // OFM's).
    const bool one1 = op.ifm.shape.elements() == 1;
    auto operand_el = [&](Format f, Shape3 s) {
      return s.elements() < x.ofm_s.elements() ? double(OpContext::Round16(f, s).elements())
                                               : in_el;
    };
    if (!one1) read1(operand_el(x.ifm_fmt, op.ifm.shape), op.has_ifm2 ? 1 : 4);
    if (op.has_ifm2 && op.ifm2.shape.elements() > 1) {
      read2(operand_el(x.ifm2_fmt, op.ifm2.shape));
    } else if (op.has_ifm2 && one1) {
      read2(unit);
    }
  }
  x.WriteOfm(t, n);
  return op_cycles;
}

// Transpose: a memory-to-memory copy bound by the slower side. U55/U65 (Vela 5.2's tables):
// the bytes moved are those of its burst model (doc 5.2) with the op's IFM and OFM blocks, so
// a transpose reading or writing narrow NHWC rows costs up to the burst's ratio more.
double TransposeCycles(const OpContext& x, Traffic* t) {
  double in_b = double(x.ifm_s.elements()) * x.ibits / 8;
  double out_b = double(x.ofm_s.elements()) * x.obits / 8;
  {
    in_b = Transfer(x.ms, x.ifm_area, x.ifm_fmt, false, x.ifm_s, x.bc.ifm_block, x.ibits,
                    x.a.cores, x.u85, double(x.ifm_s.elements()));
    out_b = Transfer(x.ms, x.ofm_area, x.ofm_fmt, true, x.ofm_s, x.bc.ofm_block, x.obits,
                     x.a.cores, x.u85, double(x.ofm_s.elements()));
  }
  double op_cycles = std::max(std::floor(in_b / x.Bw(x.ifm_area, 4)) + x.RdLat(x.ifm_area),
                              std::floor(out_b / x.Bw(x.ofm_area, 6)) + x.WrLat(x.ofm_area));
  // U85: the output unit writes the transposed OFM in 16-byte bricks of depth, so a narrow
  // OFM costs its depth rounded up (Vela 5.2's tables: a transpose into depth 2 costs eight
  // times one into depth 16 of the same element count).
  if (x.u85) {
    const int32_t bytes = std::max(x.obits / 8, 1);
    const double bricks = double(x.ofm_s.h) * x.ofm_s.w * (RoundUp(x.ofm_s.c * bytes, 16) / bytes);
    op_cycles = std::max(op_cycles, bricks * x.a.ao_act[1]);
  }
  t->Add(x.ifm_area, 4, in_b);
  t->Add(x.ofm_area, 6, out_b);
  return op_cycles;
}

// Which ends of an op's run a cost includes: a whole op reads its first IFM block and writes
// its last OFM block; Vela times the first slice of an op run in OFM-depth slices with the
// first read only, the last slice with the last output-unit block and write only.
enum RunPart : int { kRunMiddle = 0, kRunFirst = 1, kRunLast = 2, kRunWhole = 3 };
double BlockedCycles(const OpContext& x, bool buffered, double prev_slack, Traffic* t,
                     double* refetch, int part = kRunWhole);

// U55/U65: per OFM column an elementwise MUL into a 32-bit scratch plus a ReduceSum (doc 4.7);
// U85: a native matmul costed like a 1x1 convolution.
double MatMulCycles(const OpContext& x, Traffic* t) {
  const NpuOp& op = x.op;
  const double k = std::max(x.ifm_s.c, 1);
  const double out_el = double(x.ofm_s.elements());
  double op_cycles;
  if (x.u85) {
    // A MAC operation to Vela 5.2 (EstimateMacOpCycles): a 1x1 convolution's blocks, its MAC
    // and output-unit cycles per block and the first IFM and last OFM block's transfers.
    NpuOp conv = op;
    conv.hw = HwOp::kConvolution;
    conv.kh = conv.kw = 1;
    const OpContext cx(x.a, x.ms, x.lw, conv, x.bc, x.home);
    Traffic scratch;
    double refetch = 1;
    op_cycles = BlockedCycles(cx, false, 0, &scratch, &refetch);
  } else {
    const double mul = out_el * k * std::max(x.a.ao_out[2], x.a.ao_act[0]);
    const double red = out_el * k / (x.a.macs / 8.0) + out_el * x.a.ao_out[7];
    op_cycles = mul + red;
  }
  // U55/U65 re-read the IFM per OFM column and write and read back the 32-bit products; the
  // U85's native matmul reads each operand once, like a 1x1 convolution, with no scratch.
  t->Add(x.ifm_area, 4, double(x.ifm_s.elements()) * x.ibits / 8 * (x.u85 ? 1 : x.ofm_s.c));
  t->Add(x.ifm2_area, 1, double(op.ifm2.shape.elements()) * std::max(op.ifm2.bits / 8, 1));
  if (!x.u85) t->Add(x.ms.arena_area, 1, out_el * k * 4 * 2);
  t->Add(x.ofm_area, 6, out_el * x.obits / 8);
  return op_cycles;
}

// Scale (bias) bytes an op reads per OFM block: on U85 whole micro-blocks of OFM depth, at
// least 16 channels (the accumulator's depth granule). Vela 5.2's DRAM access figures: an
// 8-channel convolution reads 16 channels' scales (micro-block 1x2x8 on U85-128); on U85-2048
// (64-deep micro-blocks) a 10-deep FC reads 64 channels', a 96-deep one 128. A buffered op's
// weights are encoded per OFM-depth slice, each slice's scales rounded alike (Vela 5.2's debug
// database: a 32-deep FC in two 16-deep slices on U85-2048 reads 2 x 64 channels' scales).
double ScaleReadBytes(const OpContext& x) {
  const NpuOp& op = x.op;
  const int32_t depth = x.ofm_s.c;
  if (!x.u85 || op.scale_bytes <= 0 || depth <= 0) return double(op.scale_bytes);
  const int32_t granule = std::max(x.bc.ublock.c, 16);
  int64_t channels = 0;
  if (x.slices.size() > 1) {
    for (int32_t d : x.slices) channels += RoundUp(d, granule);
  } else {
    channels = RoundUp(depth, granule);
  }
  return double(op.scale_bytes) / depth * double(channels);
}

// Bytes of an op's weight stream and scales as stored (what a weight buffer's DMA moves). The
// U85 stores the scales of whole micro-blocks of OFM depth, at least 16 channels (Vela 5.2's
// debug database: a 32-deep FC on U85-2048 DMAs its encoded weights and 640 bytes of scales).
double WeightStreamBytes(const OpContext& x) {
  const NpuOp& op = x.op;
  const int32_t depth = x.ofm_s.c;
  double scales = double(op.scale_bytes);
  if (x.u85 && op.scale_bytes > 0 && depth > 0) {
    scales = scales / depth * RoundUp(depth, std::max(x.bc.ublock.c, 16));
  }
  return double(op.encoded_weight_bytes) + scales;
}


// Block-walking ops (convolution, depthwise, vector product, pooling, reduce sum; doc 4.5,
// 5.1): MAC and output-unit time per block, element and weight traffic. Sets `refetch` to the
// weight re-reads (OFM block positions in W x H).
double BlockedCycles(const OpContext& x, bool buffered, double prev_slack, Traffic* t,
                     double* refetch, int part) {
  const NpuOp& op = x.op;
  const BlockConfig& bc = x.bc;
  const Shape3 ofm_s = x.ofm_s, ob = x.ob;
  const int64_t tot_ub = int64_t{CeilDiv(ofm_s.h, bc.ublock.h)} * CeilDiv(ofm_s.w, bc.ublock.w) *
                         CeilDiv(ofm_s.c, bc.ublock.c);
  const int64_t blk_ub = int64_t{CeilDiv(ob.h, bc.ublock.h)} * CeilDiv(ob.w, bc.ublock.w) *
                         CeilDiv(ob.c, bc.ublock.c);
  const double num_blocks = double(tot_ub) / double(std::max<int64_t>(blk_ub, 1));
  const double ao_pe = AoPerElement(x.a, op, bc.acc40);
  double bias_blk = 0;
  if (x.has_weights) {
    const MemoryArea sa = buffered ? x.ms.staging_area : x.ms.const_area;
    bias_blk = 10.0 * ob.c * x.RdLat(sa) / 256.0;
  }
  const double ao_blk = std::max(std::ceil(ao_pe * ob.elements()), bias_blk);
  const double mac_blk = MacCyclesPerBlock(x.a, op, bc);
  const double diff = num_blocks > 1 ? std::fabs(x.ofm_blk_cycles - x.ifm_blk_cycles) : 0;
  const double cmd = (diff + mac_blk + ao_blk) / 4.0;
  const double m = std::max(mac_blk, cmd), aa = std::max(ao_blk, cmd);
  double op_cycles;
  if (part == kRunWhole) {
    op_cycles = std::floor(m > aa ? m * num_blocks + aa : aa * num_blocks + m) +
                x.ofm_blk_cycles + x.ifm_blk_cycles;
  } else {
    op_cycles = m > aa ? std::floor(m * num_blocks) + ((part & kRunLast) ? aa : 0.0)
                       : std::floor(aa * num_blocks + m);
    if (part & kRunLast) op_cycles += x.ofm_blk_cycles;
    if (part & kRunFirst) op_cycles += x.ifm_blk_cycles;
  }
  // Element access (doc 5.1).
  const int64_t bh = CeilDiv(ofm_s.h, ob.h), bw_ = CeilDiv(ofm_s.w, ob.w);
  t->Add(x.ifm_area, 4, Transfer(x.ms, x.ifm_area, x.ifm_fmt, false, x.ifm_s, bc.ifm_block,
                                 x.ibits, x.a.cores, x.u85, IfmBlockReads(op, x.ifm_fmt, bc)));
  x.WriteOfm(t, x.ofm_store_el);
  if (x.has_weights) {
    *refetch = double(bh) * bw_;
    const double enc = double(op.encoded_weight_bytes);
    t->Add(x.ms.const_area, 5, *refetch * ScaleReadBytes(x));
    if (buffered) {
      // Pre-buffered under the previous op; the first op's DMA reads its home memory.
      const double not_pre = prev_slack > 0 ? 0.0 : enc;
      t->Add(x.ms.const_area, 0, not_pre);
      t->Add(x.ms.staging_area, 6, not_pre);
      t->Add(x.ms.staging_area, 2, *refetch * enc);
    } else {
      t->Add(x.ms.const_area, 2, *refetch * enc);
    }
  }
  return op_cycles;
}

// Full-depth or OFM-depth-sliced weight buffering (doc 8.5): the first slice must arrive
// before the op starts; later slices stream under the op. The pre-buffered part is what the
// previous op's slack can hide, at least one 16-deep slice. `home_cycles` is the op's cycles
// with its feature maps in their home memory (Vela's scheduler's estimate): its last slice is
// the slack the next op's DMA may hide under, and the full transfer's end is measured from
// the start of that slice (doc 5.4). Returns the NPU cycles.
double BufferWeights(const OpContext& x, double op_cycles, double home_cycles, double prev_slack,
                     OpCost* c) {
  const NpuOp& op = x.op;
  const double full_bytes = WeightStreamBytes(x);
  const double full_dma = DmaCycles(x.a, x.ms, x.ms.const_area, x.ms.staging_area, full_bytes);
  const int32_t depth = std::max(x.ofm_s.c, 1);
  const bool can_slice = op.hw == HwOp::kConvolution || op.hw == HwOp::kVectorProduct;
  double ratio = 1.0;
  if (can_slice && depth > 16) {
    const double min_split = std::min(16.0 / depth, 1.0);
    const double transfer = std::min(prev_slack / std::max(full_dma, 1.0), 1.0);
    const double aligned = std::floor(transfer / min_split) * min_split;
    ratio = (1.0 - aligned) < min_split / 2 ? 1.0 : transfer;
    ratio = std::max(ratio, min_split);
  }
  if (x.u85) {
    // U85: the slices Vela chose (WeightSlices). The first must arrive before the op starts;
    // the transfer of all of them ends no earlier than the last slice's run (at home, with
    // the op's last output-unit block and OFM write) after the previous op's slack, which in
    // turn hides the next op's first DMA.
    const bool sliced = x.slices.size() > 1;
    const double first_share = sliced ? double(x.slices.front()) / depth : 1.0;
    const double first_dma = DmaCycles(x.a, x.ms, x.ms.const_area, x.ms.staging_area,
                                       std::ceil(full_bytes * first_share));
    double own_slack = home_cycles;
    if (sliced) {
      NpuOp last = op;
      last.ofm.shape.c = x.slices.back();
      const OpContext lx(x.a, x.ms, x.lw, last, x.bc, true);
      Traffic scratch;
      double refetch = 1;
      own_slack = BlockedCycles(lx, true, prev_slack, &scratch, &refetch, kRunLast);
    }
    c->full_dma = full_dma;
    c->visible_dma = std::max(first_dma - prev_slack, 0.0);
    c->slack_next = own_slack;
    int32_t widest = 0;
    for (int32_t d : x.slices) widest = std::max(widest, d);
    c->weight_buffer_bytes = static_cast<int64_t>(
        sliced ? std::ceil(full_bytes * widest / depth) * 2 : full_bytes);
    return std::max(full_dma - prev_slack + own_slack, op_cycles + c->visible_dma);
  }
  const double first_dma =
      DmaCycles(x.a, x.ms, x.ms.const_area, x.ms.staging_area, std::ceil(full_bytes * ratio));
  // A sliced buffer's last slice is what Vela counts from; mica does not size the slices, and
  // counting from the op's start fits Vela's U55 tables better than any share of the op.
  const double own_slack = ratio < 1.0 ? home_cycles * ratio : home_cycles;
  const double npu = std::max(full_dma - prev_slack + (ratio < 1.0 ? 0.0 : own_slack),
                              op_cycles + std::max(first_dma - prev_slack, 0.0));
  c->full_dma = full_dma;
  c->visible_dma = std::max(first_dma - prev_slack, 0.0);
  c->slack_next = own_slack;
  c->weight_buffer_bytes = static_cast<int64_t>(
      ratio < 1.0 ? std::ceil(full_bytes * std::max(ratio, 0.5)) * 2 : full_bytes);
  return npu;
}

// U85: the OFM-depth slices Vela 5.2 buffers the weights of a (depthwise) convolution or a
// vector product in (doc 8.5). The first slice is what the previous op's slack can hide
// (16-deep steps; an op slower than its unbuffered weight reads pre-buffers half its depth);
// the following ones are as deep as the weights the first slice's run can fetch, in whole OFM
// blocks. Returns one slice (the whole depth) when the op is not sliced. `home` is the op at
// home, `full_dma` the transfer time of all its weights and scales, `op_dominated` whether its
// unbuffered run at home outlasts reading its weights from their home memory.
std::vector<int32_t> WeightSlices(const OpContext& home, double prev_slack, double full_dma,
                                  bool op_dominated) {
  const NpuOp& op = home.op;
  const int32_t depth = std::max(home.ofm_s.c, 1);
  // Vela subdivides convolutions (depthwise ones too) and fully connected layers in depth.
  const bool can_slice = op.hw == HwOp::kConvolution || op.hw == HwOp::kVectorProduct ||
                         op.hw == HwOp::kDepthwise;
  if (!can_slice || depth <= 16 || full_dma <= 0) return {depth};
  const double min_split = 16.0 / depth;
  const double transfer = std::min(prev_slack / full_dma, 1.0);
  const double aligned = std::floor(transfer / min_split) * min_split;
  double ratio = (1.0 - aligned) < min_split / 2 ? 1.0 : transfer;
  if (op_dominated && ratio > 0.5 && ratio < 1.0) {
    ratio = std::clamp(double(RoundUp(depth / 2, 16)) / depth, 0.5, 1.0);
  }
  ratio = std::max(ratio, min_split);
  if (ratio >= 1.0) return {depth};
  const int32_t pre = std::max(static_cast<int32_t>(depth * ratio) / 16 * 16, 16);
  if (pre >= depth) return {depth};
  // The run of the first slice alone (weights staged, feature maps at home).
  NpuOp part = op;
  part.ofm.shape.c = pre;
  OpContext px(home.a, home.ms, home.lw, part, home.bc, home.home);
  Traffic scratch;
  double refetch = 1;
  const double pre_cycles = BlockedCycles(px, true, prev_slack, &scratch, &refetch, kRunFirst);
  const int32_t block = std::max(home.bc.ofm_block.c, 16);
  int32_t step = static_cast<int32_t>(double(depth) * pre_cycles / full_dma);
  step = RoundUp(std::max(step, 16), block);
  step = step > block ? step / block * block : step / 16 * 16;
  step = std::max(step, 16);
  std::vector<int32_t> slices{pre};
  for (int32_t d = pre; d < depth; d += step) slices.push_back(std::min(step, depth - d));
  return slices;
}

// Costs one variant of the op: weights read from their home, or buffered in the staging SRAM
// (`home_cycles`: the buffered op's cycles with its feature maps at home, see BufferWeights).
// Without `home_cycles` (a context already at home) the op's own cycles serve.
OpCost CostVariant(const OpContext& x, bool buffered, double prev_slack,
                   std::optional<double> home_cycles = std::nullopt) {
  const NpuOp& op = x.op;
  OpCost c;
  c.block = x.bc;
  c.weights_buffered = buffered;
  Traffic t;
  double refetch = 1;
  double op_cycles;
  switch (op.hw) {
    case HwOp::kElementwise: op_cycles = ElementwiseCycles(x, &t); break;
    case HwOp::kTranspose: op_cycles = TransposeCycles(x, &t); break;
    case HwOp::kMatMul: op_cycles = MatMulCycles(x, &t); break;
    default: op_cycles = BlockedCycles(x, buffered, prev_slack, &t, &refetch); break;
  }
  // A chained stage's other operand is read in its view (Vela's access of a chain's external
  // maps: the view's elements, depth rounded to 16 in NHCWB16), not as the whole storage.
  for (const FmRef& extra : op.extra_reads) {
    const FeatureMap* f = x.Storage(extra.id);
    if (f == nullptr) continue;
    const double el = double(OpContext::Round16(f->format, extra.shape).elements());
    t.Add(x.AreaOf(f), 1, el * std::max(f->bits, 8) / 8);
  }
  c.op_cycles = op_cycles;
  c.slack_next = op_cycles;
  c.refetch = refetch;
  c.ifm_read_cycles = x.ReadCycles(x.ifm_area, 4, t.bytes[AreaIndex(x.ifm_area)][4]);
  c.npu_cycles = buffered
                     ? BufferWeights(x, op_cycles, home_cycles.value_or(op_cycles), prev_slack, &c)
                     : op_cycles;
  // The lookup table's load (doc 5.4): U55/U65 prefetch it early enough to be hidden in Vela's
  // reports. The U85 copies the table of an op that is itself a table lookup (a standalone
  // activation: a 1x1 copy through the LUT) into its LUT RAM, one byte per cycle, before the op
  // starts; the previous op's slack hides what it can (Vela 5.2: a 16-bit tanh's 2048-byte
  // table costs 2048 cycles less the previous op's slack). A table applied by an activation
  // fused into another op is that op's sub-operation's, and costs nothing.
  const bool lut_copy = op.needs_lut && op.hw == HwOp::kPooling && op.kh == 1 && op.kw == 1;
  if (x.u85 && lut_copy) {
    // Table bytes: 512 32-bit entries for a 16-bit function, 256 32-bit ones for an 8-bit
    // softmax's exponential (a 32-bit OFM), 256 bytes for another 8-bit function.
    const double table =
        op.ifm.bits == 16 || op.ofm.bits == 16 ? 2048 : op.ofm.bits == 32 ? 1024 : 256;
    const MemoryArea src = x.ms.const_area;
    const double read = std::floor(table / x.Bw(src, 0)) + x.RdLat(src);
    const double dma = std::max(read, table);
    c.npu_cycles += buffered ? dma : std::max(dma - prev_slack, 0.0);
  }
  AccessCycles(x.a, x.ms, t, &c);
  double total = c.npu_cycles;
  for (int ar = 0; ar < kNumMemoryAreas; ++ar) total = std::max(total, c.access_cycles[ar]);
  c.total = total;
  return c;
}

// True where Vela's scheduler would keep the buffered variant `b` over `u` (doc 8.5): the
// staged reads must be faster, the DMA must be worth starting, and the op must not get slower.
// The scheduler decides before fast storage is assigned, on the op's cycles with its feature
// maps at home: `u_home` unbuffered, `b_home` buffered.
bool KeepBuffered(const OpContext& x, const OpCost& u, const OpCost& b, double u_home,
                  double b_home, double prev_slack) {
  const MemSystem& ms = x.ms;
  const double full = WeightStreamBytes(x);
  const MemoryArea home = ms.const_area, stage = ms.staging_area;
  const double unmoved = x.ReadCycles(home, 2, full) * u.refetch;
  const double from_buf = x.ReadCycles(stage, 2, full) * u.refetch;
  if (from_buf >= unmoved) return false;
  const bool first_op = prev_slack <= 0;
  const int32_t depth = std::max(x.ofm_s.c, 1);
  const double smallest = b.full_dma * std::min(depth, 16) / depth;
  const bool force_initial = first_op && u.refetch > 1 &&
                             (smallest < unmoved / 10 || smallest <= 1000);
  const double full_buffered = from_buf + std::max(b.full_dma - prev_slack, 0.0);
  const bool sliced = force_initial || full_buffered < unmoved ||
                      depth / std::max(x.bc.ofm_block.c, 1) > 2 ||
                      (!first_op && smallest < prev_slack && u.refetch > 1);
  if (!sliced) return false;
  const double original = std::max({u_home, unmoved, u.ifm_read_cycles});
  double fresh = std::max({b_home + b.visible_dma, from_buf, b.ifm_read_cycles});
  if (u_home > unmoved && b.visible_dma < 1000) fresh -= b.visible_dma;
  return !(original < fresh || (u.refetch <= 1 && b.full_dma + from_buf > original));
}

}  // namespace

OpCost CostOp(const Arch& a, const MemSystem& ms, const Lowered& lw, int i, const BlockConfig& bc,
              double prev_slack, bool allow_buffer) {
  const NpuOp& op = lw.ops[i];
  if (op.chained_into >= 0) return OpCost{};
  if (op.elided) {
    OpCost c;
    c.slack_next = prev_slack;  // nothing runs: the previous op's slack carries over
    return c;
  }
  const OpContext x(a, ms, lw, op, bc);
  // Vela's scheduler decides on the op's cycles with its feature maps in their home memory.
  const OpContext at_home(a, ms, lw, op, bc, true);
  OpCost unbuffered = CostVariant(x, false, prev_slack);
  const double u_home = CostVariant(at_home, false, prev_slack).op_cycles;
  unbuffered.slack_next = u_home;
  if (!x.has_weights || !allow_buffer) return unbuffered;
  OpContext xb = x, home_b = at_home;
  if (x.u85 && op.hw != HwOp::kElementwise && op.hw != HwOp::kTranspose &&
      op.hw != HwOp::kMatMul) {
    const double full = WeightStreamBytes(x);
    const double full_dma = DmaCycles(a, ms, ms.const_area, ms.staging_area, full);
    const double unmoved = x.ReadCycles(ms.const_area, 2, full) * unbuffered.refetch;
    xb.slices = WeightSlices(at_home, prev_slack, full_dma, u_home > unmoved);
    home_b.slices = xb.slices;
  }
  const double b_home = CostVariant(home_b, true, prev_slack).op_cycles;
  const OpCost buffered = CostVariant(xb, true, prev_slack, b_home);
  // The parts of a kernel split over several ops (grouped convolution groups, U85 transpose
  // convolution phases) each stage their weights in SRAM: Vela 5.2's schedules give every
  // such part a single weight buffer (U65-256, U85-128, U85-2048), however short the op,
  // when the weights live outside the staging SRAM.
  if (op.weight_view && a.family != EthosUFamily::kU55 && ms.const_area != ms.staging_area) {
    return buffered;
  }
  return KeepBuffered(xb, unbuffered, buffered, u_home, b_home, prev_slack) ? buffered
                                                                             : unbuffered;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
