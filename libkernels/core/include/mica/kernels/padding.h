// mica kernels — TFLite's SAME / VALID padding rule, the one definition shared by the kernel
// core's callers: the runtime's lowering, the model builder's shape inference and the tests.
//
//   const int32_t oh = PaddedOutputSize(same, in_h, k_h, stride_h, dilation_h);
//   p.padding.h = PaddingBefore(same, in_h, k_h, stride_h, dilation_h, oh);
//
// SAME: out = ceil(in / stride), total padding max(0, (out - 1) * stride + effective_k - in),
// half of it (rounded down) on the top/left, the rest on the bottom/right. VALID: out =
// floor((in - effective_k) / stride) + 1 (0 when the window does not fit), no padding.
// effective_k = (k - 1) * dilation + 1. Freestanding; arithmetic in int64 so that no int32
// argument overflows.
#ifndef MICA_KERNELS_PADDING_H_
#define MICA_KERNELS_PADDING_H_

#include <cstdint>

namespace mica {
namespace kernels {

// Extent of a window of `k` taps `dilation` apart.
constexpr int64_t EffectiveWindow(int32_t k, int32_t dilation) {
  return (static_cast<int64_t>(k) - 1) * dilation + 1;
}

// Output size along one axis; 0 for a stride below 1 or a VALID window larger than the input.
constexpr int32_t PaddedOutputSize(bool same, int32_t in, int32_t k, int32_t stride,
                                   int32_t dilation) {
  if (stride < 1) return 0;
  if (same) return static_cast<int32_t>((int64_t{in} + stride - 1) / stride);
  const int64_t eff = EffectiveWindow(k, dilation);
  if (in < eff) return 0;
  return static_cast<int32_t>((in - eff + stride) / stride);
}

// Total padding of a SAME axis producing `out` elements (0 for VALID).
constexpr int64_t PaddingTotal(bool same, int32_t in, int32_t k, int32_t stride,
                               int32_t dilation, int32_t out) {
  if (!same) return 0;
  const int64_t total = (int64_t{out} - 1) * stride + EffectiveWindow(k, dilation) - in;
  return total > 0 ? total : 0;
}

// Top/left padding (the odd one goes to the bottom/right).
constexpr int32_t PaddingBefore(bool same, int32_t in, int32_t k, int32_t stride,
                                int32_t dilation, int32_t out) {
  return static_cast<int32_t>(PaddingTotal(same, in, k, stride, dilation, out) / 2);
}

// Bottom/right padding.
constexpr int32_t PaddingAfter(bool same, int32_t in, int32_t k, int32_t stride,
                               int32_t dilation, int32_t out) {
  const int64_t total = PaddingTotal(same, in, k, stride, dilation, out);
  return static_cast<int32_t>(total - total / 2);
}

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_PADDING_H_
