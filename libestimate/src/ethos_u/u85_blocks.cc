// Ethos-U85 block configuration search (doc 6.1): micro-block choice per op class, IFM
// allocation units, the accumulator/IFM-RAM area fit used for depthwise and pooling, the
// output-buffer tiling used for elementwise ops, and the cost search used for convolutions.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "ethos_u/block_search.h"
#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

constexpr int32_t kAccDepthGranule = 16;

int32_t RoundDown(int32_t v, int32_t m) { return m <= 0 ? v : v / m * m; }

Shape3 RoundUp3(Shape3 s, Shape3 g) {
  return {RoundUp(s.h, g.h), RoundUp(s.w, g.w), RoundUp(s.c, g.c)};
}

enum class Cls : uint8_t { kConv, kDepthwise, kVector, kPool, kReduceSum, kElementwise };

Cls ClassOf(const NpuOp& op) {
  switch (op.hw) {
    case HwOp::kConvolution: return Cls::kConv;
    case HwOp::kDepthwise: return Cls::kDepthwise;
    case HwOp::kVectorProduct: case HwOp::kMatMul: return Cls::kVector;
    case HwOp::kReduceSum: return Cls::kReduceSum;
    case HwOp::kElementwise: return Cls::kElementwise;
    default: return Cls::kPool;
  }
}

bool Same(Shape3 a, int h, int w, int c) { return a.h == h && a.w == w && a.c == c; }

// Which op classes a micro-block serves, by IFM width (8, 16, 32 bit).
bool UBlockValid(const Arch& a, Shape3 ub, Cls cls, int32_t bits, bool depth_first_1x1) {
  const int bi = std::min(bits / 16, 2);
  const bool conv = cls == Cls::kConv, dw = cls == Cls::kDepthwise, vp = cls == Cls::kVector,
             pool = cls == Cls::kPool, rs = cls == Cls::kReduceSum, ew = cls == Cls::kElementwise;
  switch (a.macs) {
    case 128:
      if (Same(ub, 1, 2, 8)) {
        if (bi == 0) return conv || vp || rs || ew;
        if (bi == 1) return conv || vp || dw || pool || rs || ew;
        return rs || ew || pool;
      }
      if (conv && !depth_first_1x1) return false;
      if (bi == 0) return dw || pool || ew;
      if (bi == 1) return conv || vp || ew;
      return ew;
    case 256:
      if (Same(ub, 1, 2, 16)) {
        if (conv && !depth_first_1x1) return false;
        if (bi == 0) return dw || pool || ew;
        if (bi == 1) return conv || vp || ew;
        return ew;
      }
      if (bi == 0) return conv || vp || rs || ew;
      if (bi == 1) return conv || vp || dw || pool || rs || ew;
      return rs || ew || pool;
    case 512:
      if (bi <= 1) return true;
      return rs || ew || pool;
    default:  // 1024, 2048
      if (ub.c > 16) return (bi <= 1) ? (conv || vp || ew) : ew;
      if (bi <= 1) return true;
      return rs || ew || pool;
  }
}

Shape3 FindUBlock(const Arch& a, const NpuOp& op, bool part_kernel) {
  const Cls cls = ClassOf(op);
  const bool df1x1 = op.kh == 1 && op.kw == 1 && !part_kernel;
  Shape3 best = a.ofm_ublocks.front();
  int64_t best_waste = std::numeric_limits<int64_t>::max();
  const Shape3 ofm = op.ofm.shape;
  for (const Shape3& u : a.ofm_ublocks) {
    if (!UBlockValid(a, u, cls, std::max(op.ifm.bits, 8), df1x1)) continue;
    const int64_t waste = RoundUp3(ofm, u).elements() - ofm.elements();
    if (waste < best_waste) best = u, best_waste = waste;
  }
  return best;
}

// IFM allocation unit for an IFM block depth (H x W x C, C in elements).
Shape3 IfmAllocUnit(const Arch& a, int32_t ifm_blk_depth, int32_t bits, Shape3 ub) {
  int idx = 0;
  const int32_t depth_bits = ifm_blk_depth * bits;
  if (depth_bits > 256) idx = 2;
  else if (depth_bits > 128) idx = 1;
  Shape3 au;
  // Per micro-block: three units for narrow/medium/wide IFM depths (H, W, C-in-128-bit units).
  static const Shape3 kNone{1, 1, 1};
  Shape3 t[3] = {kNone, kNone, kNone};
  switch (a.macs) {
    case 128: t[0] = {1, 2, 1}; t[1] = {1, 1, 2}; t[2] = {1, 1, 2}; break;
    case 256:
      if (Same(ub, 1, 4, 8)) { t[0] = {1, 4, 1}; t[1] = {1, 2, 2}; t[2] = {1, 1, 4}; }
      else { t[0] = {2, 2, 1}; t[1] = {1, 2, 2}; t[2] = {1, 1, 4}; }
      break;
    case 512:
      if (Same(ub, 1, 4, 16)) { t[0] = {1, 4, 1}; t[1] = {1, 2, 2}; t[2] = {1, 1, 4}; }
      else { t[0] = {2, 2, 1}; t[1] = {1, 2, 2}; t[2] = {1, 1, 4}; }
      break;
    case 1024:
      if (Same(ub, 1, 4, 32)) { t[0] = {2, 4, 1}; t[1] = {1, 4, 2}; t[2] = {1, 2, 4}; }
      else { t[0] = {2, 4, 1}; t[1] = {2, 2, 2}; t[2] = {1, 2, 4}; }
      break;
    default:
      if (Same(ub, 1, 4, 64)) { t[0] = {4, 4, 1}; t[1] = {2, 4, 2}; t[2] = {1, 4, 4}; }
      else { t[0] = {4, 4, 1}; t[1] = {2, 4, 2}; t[2] = {2, 2, 4}; }
      break;
  }
  au = t[idx];
  au.c = au.c * 128 / std::max(bits, 8);
  return au;
}

Shape3 IfmBlockU85(const NpuOp& op, Shape3 ob, Shape3 au, int32_t ifm_blk_depth) {
  const int32_t up = std::max(op.upscale, 1);
  const int32_t h = RoundUp(
      RequiredInput(ob.h, op.sh, std::min(DilatedK(op.kh, op.dh), 8), up, 0), au.h);
  const int32_t w = RoundUp(
      RequiredInput(ob.w, op.sw, std::min(DilatedK(op.kw, op.dw), 8), up, 0), au.w);
  return {h, w, RoundUp(ifm_blk_depth ? ifm_blk_depth : ob.c, au.c)};
}

int32_t GranularTile(int32_t range, int32_t granule, int32_t tile) {
  if (tile <= 0 || range % tile == 0) return tile;
  const int32_t tiles = range / tile;
  return std::max(RoundUp(range / (tiles + 1), granule), granule);
}

int32_t Reapportion(int32_t value, int32_t max_limit, int32_t* avail, int32_t required) {
  const int32_t excess = std::min(*avail / std::max(required, 1), max_limit / std::max(value, 1));
  if (excess >= 2) {
    *avail /= excess;
    value *= excess;
  }
  return value;
}

int32_t BestTile(int32_t range, int32_t granule, int32_t tile) {
  if (tile <= 0 || range % tile == 0) return tile;
  const int32_t tiles = range / tile;
  const int32_t tile2 = std::max(RoundUp(range / (tiles + 1), granule), granule);
  int32_t best = tile, best_rem = range % tile;
  const int32_t min_tile = std::max(tile2 - granule * 2, (tile2 + 1) / 2);
  for (int32_t t = tile; t >= std::max(min_tile, granule); t -= granule) {
    int32_t rem = range % t;
    if (rem == 0) rem = t;
    if (rem > best_rem) best = t, best_rem = rem;
  }
  return best;
}

void FitAreaByAspect(double aspect, int32_t* x, int32_t* y, int32_t fit_into, Shape3 g) {
  double w = std::sqrt(fit_into / aspect);
  double h = w * aspect;
  if (h < 1.0) {
    w *= h;
    h = 1;
  } else if (w < 1.0) {
    h *= w;
    w = 1;
  }
  *x = RoundDown(std::max(static_cast<int32_t>(w), g.w), g.w);
  *y = RoundDown(std::max(static_cast<int32_t>(h), g.h), g.h);
}

struct Common {
  Shape3 ub, granule, limit;
  int32_t acc_bits = 32, ifm_bits = 8, ifm_blk_depth = 0;
};

Shape3 AreaFit(const Arch& a, const NpuOp& op, const Common& cm, Shape3 ofm, Shape3 ifm) {
  const int32_t acc_el = a.acc_ram * 8 / cm.acc_bits;
  const int32_t ib_el = a.ifm_ram * 8 / cm.ifm_bits;
  const int32_t ub_acc = cm.ub.h * cm.ub.w * kAccDepthGranule;
  const double aspect = double(ofm.h) / ofm.w;
  const bool depth_first = DilatedK(op.kh, op.dh) == 1 && DilatedK(op.kw, op.dw) == 1;
  Shape3 fit{cm.granule.h, cm.granule.w, kAccDepthGranule};
  double best_metric = std::numeric_limits<double>::max();
  const int32_t max_depth = std::min(std::max(a.macs, acc_el / ub_acc), cm.limit.c);
  const double ofm_area = depth_first ? double(ofm.w) * ofm.c : double(ofm.w) * ofm.h;
  for (int32_t depth = kAccDepthGranule; depth <= max_depth; depth += kAccDepthGranule) {
    int32_t width = 0, height = 0, fit_acc = acc_el;
    const Shape3 au = IfmAllocUnit(a, cm.ifm_blk_depth ? cm.ifm_blk_depth : depth, cm.ifm_bits, cm.ub);
    const int64_t ifm_volume = RoundUp3(ifm, au).elements();
    bool fitted = false;
    int32_t prev_req = -1, retry = 25;
    for (int guard = 0; guard < 10000; ++guard) {
      FitAreaByAspect(aspect, &width, &height, fit_acc / depth, cm.granule);
      width = std::min(width, cm.limit.w);
      height = std::min(height, cm.limit.h);
      const int32_t tmp = width * height;
      if (width < ofm.w) width = BestTile(ofm.w, cm.granule.w, width);
      height = std::max(RoundDown(tmp / std::max(width, 1), cm.granule.h), cm.granule.h);
      const int32_t acc_req = width * height * depth;
      const double ab = double(acc_el) / acc_req;
      const Shape3 ireq = IfmBlockU85(op, {height, width, depth}, au, cm.ifm_blk_depth);
      const int64_t ib_req = std::min<int64_t>(ireq.elements(), ifm_volume);
      double ibr = double(ib_el) / std::max<int64_t>(ib_req, 1);
      if (ab >= 1.0 && ibr >= 1.0) {
        const int32_t used = depth % au.c ? depth % au.c : au.c;
        const double waste = 1.0 + (double(au.c - used) / au.c) / 10;
        const double fitm = 1.0 + std::fabs(1.0 - double(cm.limit.c) / depth) / 10;
        const int32_t other = depth_first ? depth : height;
        const double coverage = 1.0 + std::fabs(1.0 - ofm_area / (double(width) * other));
        const double metric = coverage * fitm * waste;
        if (metric < best_metric) {
          fit = {height, width, depth};
          best_metric = metric;
          if (depth >= ofm.c && width >= ofm.w && height >= ofm.h) return RoundUp3(ofm, cm.granule);
        }
        fitted = true;
        break;
      }
      if (acc_req == prev_req && --retry <= 0) ibr = 0.9;
      prev_req = acc_req;
      if (ibr < 1.0 && ab > 1.0) fit_acc = std::min(fit_acc, acc_req);
      const double ratio = std::min(ibr * ibr, ab);
      int32_t new_acc = std::max(static_cast<int32_t>(fit_acc / ub_acc * ratio), 0) * ub_acc;
      if (new_acc == fit_acc) new_acc = fit_acc - ub_acc;
      if (new_acc <= ub_acc) break;
      fit_acc = new_acc;
    }
    if (!fitted) break;
  }
  return fit;
}

BlockConfig DepthwiseLike(const Arch& a, const NpuOp& op, const Common& cm, Shape3 ofm_r,
                          BlockConfig bc) {
  const int32_t ib_el = a.ifm_ram * 8 / cm.ifm_bits;
  const Shape3 fit = AreaFit(a, op, cm, ofm_r, op.ifm.shape);
  int32_t depth = fit.c, width = fit.w, height = fit.h;
  Shape3 ireq;
  unsigned force = 0;
  for (int guard = 0; guard < 10000; ++guard) {
    const Shape3 au = IfmAllocUnit(a, cm.ifm_blk_depth ? cm.ifm_blk_depth : depth, cm.ifm_bits, cm.ub);
    ireq = IfmBlockU85(op, {height, width, depth}, au, cm.ifm_blk_depth);
    const int64_t ib_req = ireq.elements();
    if (width < ofm_r.w || height < ofm_r.h || depth < ofm_r.c) {
      const Shape3 row = IfmBlockU85(op, {cm.granule.h, width, depth}, au, cm.ifm_blk_depth);
      if (ib_el - ib_req < row.elements()) {
        if ((height != ofm_r.h || (force & 2)) && height > cm.granule.h) height -= cm.granule.h;
        else if ((depth > width || (force & 1)) && depth > au.c) depth -= cm.granule.c;
        else if ((width != ofm_r.w || (force & 4)) && width > cm.granule.w) width -= cm.granule.w;
        else if (force != 7) force = (force << 1) | 1;
        else if (depth > cm.granule.c) depth = std::max(depth / 2, cm.granule.c);
        else break;
        continue;
      }
    }
    break;
  }
  bc.ofm_block = {height, width, depth};
  bc.ifm_block = ireq;
  return bc;
}

}  // namespace

BlockConfig FindBlockConfigU85(const Arch& a, const NpuOp& op) {
  BlockConfig bc;
  const Cls cls = ClassOf(op);
  const Shape3 ofm = op.ofm.shape;
  const Shape3 ifm = (op.has_ifm2 && op.ifm2.shape.elements() > op.ifm.shape.elements())
                         ? op.ifm2.shape : op.ifm.shape;
  const int32_t bits = std::max(op.ifm.bits, 8);
  const bool pooling = cls == Cls::kPool;
  const bool acc48 = bits == 16 && !pooling && cls != Cls::kElementwise;
  const bool sparse = op.sparse24;
  bool part_kernel = false;
  if (cls == Cls::kConv || op.hw == HwOp::kVectorProduct) {
    const int32_t k = SatMul(op.kh, op.kw);
    const int32_t s = sparse ? 10 : 5, r = sparse ? 4 : 2;
    const int32_t k_rnd = (k / s) * s + std::max(k % s, r);
    const double kf = double(ifm.c) / RoundUp(ifm.c, 16) * (double(k) / k_rnd);
    const double df = double(ifm.c) / RoundUp(ifm.c, sparse ? 128 : 64);
    part_kernel = kf >= df;
  }
  const Shape3 ub = FindUBlock(a, op, part_kernel);
  bc.ublock = ub;
  bc.part_kernel = part_kernel;
  bc.acc40 = acc48;
  Common cm;
  cm.ub = ub;
  cm.granule = {ub.h, ub.w, kAccDepthGranule};
  cm.limit = a.max_block;
  cm.acc_bits = acc48 ? 64 : 32;
  cm.ifm_bits = bits;
  const Shape3 ofm_r = RoundUp3(ofm, cm.granule);
  cm.limit = {std::min(ofm_r.h, a.max_block.h), std::min(ofm_r.w, a.max_block.w),
              std::min(ofm_r.c, a.max_block.c)};
  if (cls == Cls::kElementwise) {
    const int32_t cb_bricks = (a.cb_ram / 6) / (16 * (bits / 8));
    const int32_t ob_el = a.ob_ram * 8 / bits;
    const int32_t ob_w = std::max(ob_el / cm.granule.c, 1);
    (void)cb_bricks;
    const int32_t h_lim = GranularTile(ofm_r.h, cm.granule.h, cm.limit.h);
    const int32_t w_req = GranularTile(ofm_r.w, cm.granule.w, std::min(ob_w, cm.limit.w));
    int32_t w_lim = ob_w;
    const int32_t c_lim =
        Reapportion(cm.granule.c, cm.limit.c, &w_lim, std::max(w_req, cm.granule.w));
    bc.ofm_block = RoundUp3({h_lim, w_lim, c_lim}, cm.granule);
    bc.ifm_block = bc.ofm_block;
    return bc;
  }
  if (cls == Cls::kDepthwise) {
    cm.ifm_blk_depth = 0;
    return DepthwiseLike(a, op, cm, ofm_r, bc);
  }
  int32_t ifm_blk_depth = 64;
  if (part_kernel) ifm_blk_depth = 16;
  else if (bits == 32 || ((a.macs == 128 || a.macs == 256) && ub.c == 16 && !sparse)) ifm_blk_depth = 32;
  else if (sparse && bits == 8) ifm_blk_depth = 128;
  if ((pooling && !op.mem_copy) || cls == Cls::kReduceSum) {
    cm.ifm_blk_depth = cls == Cls::kReduceSum ? ifm_blk_depth : 0;
    return DepthwiseLike(a, op, cm, ofm_r, bc);
  }
  // Convolution / vector product: cost search (as U55, over the U85 RAM limits).
  const Shape3 step{ub.h, ub.w, std::max(ub.c, kAccDepthGranule)};
  const Shape3 end = RoundUp3({std::max(std::min(ofm.h, a.max_block.h), step.h),
                               std::max(std::min(ofm.w, a.max_block.w), step.w),
                               std::max(std::min(ofm.c, a.max_block.c), step.c)}, ub);
  const bool vp = cls == Cls::kVector;
  const int32_t repeats = CeilDiv(DilatedK(op.kw, op.dw), 8) * CeilDiv(DilatedK(op.kh, op.dh), 8);
  const float weight_wh = cls == Cls::kConv ? float(op.kh) * float(op.kw) : 0.0f;
  const float ofm_el = float(std::max<int64_t>(ofm.elements(), 1));
  const float ifm_el = float(ifm.elements());
  // A memory copy (Vela: an equal-depth op) reads IFM blocks as deep as its OFM blocks.
  const bool equal_depth = op.mem_copy;
  Shape3 au = IfmAllocUnit(a, ifm_blk_depth, bits, ub);
  const int32_t step_h = step.h * std::max(1, end.h / step.h / 64);
  const int32_t step_w = step.w * std::max(1, end.w / step.w / 64);
  BlockChoice choice;
  for (int blocks_in_ram = 2; blocks_in_ram >= 1 && !choice.found(); --blocks_in_ram) {
    int32_t depth = std::max(ub.c, std::min(end.c, 16));
    if (depth < ofm.c) depth = RoundUp(depth, 16);
    while (depth <= end.c) {
      if (equal_depth) {
        ifm_blk_depth = depth;
        au = IfmAllocUnit(a, depth, bits, ub);
      }
      for (int32_t h = step.h; h <= end.h; h += step_h) {
        for (int32_t w = step.w; w <= end.w; w += step_w) {
          const Shape3 ob{h, w, depth};
          const Shape3 ib = IfmBlockU85(op, ob, au, ifm_blk_depth);
          const int32_t ibd = RoundUp(std::min(ib.c, ifm.c), au.c);
          const int64_t ifm_bytes = int64_t{ib.h} * ib.w * ibd * (bits / 8) * blocks_in_ram;
          const int64_t acc_bytes =
              int64_t{h} * w * RoundUp(depth, kAccDepthGranule) * cm.acc_bits / 8 * blocks_in_ram;
          if (ifm_bytes > a.ifm_ram || acc_bytes > a.acc_ram) continue;
          const float full_h = float(CeilDiv(ofm.h, h)), full_w = float(CeilDiv(ofm.w, w)),
                      full_c = float(CeilDiv(ofm.c, depth));
          const float bx = float(ofm.w) / float(w), by = float(ofm.h) / float(h),
                      bz = float(ofm.c) / float(depth);
          float weight_fetch = weight_wh * float(ifm.c) * full_h * full_w * bz * float(depth);
          float ifm_fetch = float(ib.h) * float(ib.w) * float(ifm.c) * float(repeats) * bx * by;
          if (!equal_depth) ifm_fetch *= full_c;
          float cost = vp ? 1.0f / (float(h) * float(w)) : (ifm_fetch + weight_fetch) / ofm_el;
          if (ifm_el < float(ib.elements()) * 2.0f) cost /= 2.0f;
          if (choice.Offer(cost, ifm, ib, h, w)) {
            bc.ofm_block = ob;
            bc.ifm_block = {ib.h, ib.w, ifm_blk_depth};
          }
        }
      }
      depth += ub.c;
      if (depth < ofm.c) depth = RoundUp(depth, 16);
    }
  }
  if (!choice.found()) {
    bc.ofm_block = step;
    bc.ifm_block = IfmBlockU85(op, step, au, ifm_blk_depth);
  }
  return bc;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
