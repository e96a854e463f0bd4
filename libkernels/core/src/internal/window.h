// Private: the in-bounds part of a sliding window (conv, depthwise conv).
#ifndef MICA_KERNELS_INTERNAL_WINDOW_H_
#define MICA_KERNELS_INTERNAL_WINDOW_H_

#include <cstdint>

namespace mica {
namespace kernels {
namespace internal {

// In-bounds tap range [*lo, *hi) of a window starting at `origin` (may be negative), for
// `k` taps `dilation` apart, in an axis of `size` elements.
inline void TapRange(int32_t origin, int32_t k, int32_t dilation, int32_t size, int32_t* lo,
                     int32_t* hi) {
  int32_t a = 0;
  if (origin < 0) a = (-origin + dilation - 1) / dilation;
  int32_t b = k;
  const int32_t last = origin + (k - 1) * dilation;
  if (last >= size) b = k - ((last - size) / dilation + 1);
  if (b < a) b = a;
  *lo = a;
  *hi = b;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_WINDOW_H_
