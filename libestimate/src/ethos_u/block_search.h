// Internal to the Ethos-U estimator: the arithmetic and the tie-break both block searches
// (U55/U65 in perf.cc, U85 in u85_blocks.cc; doc 4.2 and 6.1) share.
#ifndef MICA_ESTIMATE_ETHOS_U_BLOCK_SEARCH_H_
#define MICA_ESTIMATE_ETHOS_U_BLOCK_SEARCH_H_

#include <algorithm>
#include <cstdint>
#include <limits>

#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {

// The helpers below work in int64 and saturate to the int32 range: a hostile model's kernel,
// stride or dilation near 2^31 must give a (meaningless but defined) large figure, never a
// signed overflow. Values of real models are far inside the range, where nothing changes.
inline int32_t SaturateInt32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// Returns a * b, saturated.
inline int32_t SatMul(int32_t a, int32_t b) { return SaturateInt32(int64_t{a} * b); }

// Returns `v` rounded up to a multiple of `m` (`v` itself for m <= 0).
inline int32_t RoundUp(int32_t v, int32_t m) {
  return m <= 0 ? v : SaturateInt32((int64_t{v} + m - 1) / m * m);
}

// Returns ceil(a / b) (`a` itself for b <= 0).
inline int32_t CeilDiv(int32_t a, int32_t b) {
  return b <= 0 ? a : SaturateInt32((int64_t{a} + b - 1) / b);
}

// Returns the extent of a `k`-tap kernel with dilation `d`.
inline int32_t DilatedK(int32_t k, int32_t d) {
  return SaturateInt32((int64_t{k} - 1) * std::max(d, 1) + 1);
}

// Returns the IFM rows (or columns) `out` OFM rows need with `stride` and a `k`-tap kernel;
// with an upscaled IFM (transpose convolution, resize) the need shrinks by the factor, plus
// `rounding`.
inline int32_t RequiredInput(int32_t out, int32_t stride, int32_t k, int32_t upscale,
                             int32_t rounding) {
  const int32_t need = SaturateInt32((int64_t{out} - 1) * stride + k);
  return upscale > 1 ? SaturateInt32(int64_t{CeilDiv(need, upscale)} + rounding) : need;
}

// Keeps the cheapest block candidate. Among equal costs the later candidate wins when it is at
// most 4x4 and covers the IFM with no more repeats than the best so far.
class BlockChoice {
 public:
  // Offers an OFM block of `h` x `w` whose IFM block is `ib` over an IFM of shape `ifm`; returns
  // true when it becomes the best (the caller records it).
  bool Offer(float cost, Shape3 ifm, Shape3 ib, int32_t h, int32_t w) {
    if (cost > best_cost_) return false;
    if (cost == best_cost_) {
      const float cov_wh = float(std::min(ifm.h, ib.h)) * float(std::min(ifm.w, ib.w));
      const float cov = float(ifm.h) * float(ifm.w) / std::max(cov_wh, 1.0f);
      if (!(cov <= best_cov_ && h <= 4 && w <= 4)) return false;
      best_cov_ = cov;
    } else {
      best_cov_ = std::numeric_limits<float>::infinity();
    }
    best_cost_ = cost;
    return true;
  }
  // Returns true once a candidate was kept.
  bool found() const { return best_cost_ != std::numeric_limits<float>::infinity(); }

 private:
  float best_cost_ = std::numeric_limits<float>::infinity();
  float best_cov_ = std::numeric_limits<float>::infinity();
};

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_ETHOS_U_BLOCK_SEARCH_H_
