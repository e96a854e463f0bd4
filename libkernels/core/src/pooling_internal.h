// Private: the variant bodies of the pooling ops, the outer-loop walker they share
// (ForEachPoolWindow) and their argument check.
#ifndef MICA_KERNELS_POOLING_INTERNAL_H_
#define MICA_KERNELS_POOLING_INTERNAL_H_

#include <cstdint>

#include "internal/requantize.h"
#include "mica/kernels/pooling.h"

namespace mica {
namespace kernels {
namespace internal {

// Shapes consistent, window/stride/padding sane, activation within [lo, hi], and every output
// window overlapping the image.
bool ValidPoolParams(const PoolParams& p, int32_t lo, int32_t hi);

// The entry check of every pooling body: kArgError for bad parameters, or for null pointers
// when the output is not empty; else kOk, with *empty set when there is nothing to compute.
inline KernelStatus CheckPool(const PoolParams& p, const void* input, const void* output,
                              int32_t lo, int32_t hi, bool* empty) {
  *empty = false;
  if (!ValidPoolParams(p, lo, hi)) return KernelStatus::kArgError;
  if (p.output.elements() == 0) {
    *empty = true;
    return KernelStatus::kOk;
  }
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  return KernelStatus::kOk;
}

// One output pixel's window clipped to the image: taps [fy0, fy1) x [fx0, fx1) of a window
// whose top-left corner is (y0, x0) (may be negative).
struct PoolWindow {
  int32_t y0, fy0, fy1, x0, fx0, fx1;
  int32_t count() const { return (fy1 - fy0) * (fx1 - fx0); }
};

// The input of tap row `fy` of `w`, at tap column 0 and channel 0, in one batch's `image`:
// tap (fy, fx) of channel c is PoolRow(...)[fx * depth + c].
template <typename T>
inline const T* PoolRow(const T* image, const PoolWindow& w, int32_t fy, int32_t in_w,
                        int32_t depth) {
  return image + (static_cast<int64_t>(w.y0 + fy) * in_w + w.x0) * depth;
}

// The outer loop every pooling body shares: batches, output rows and columns in NHWC order.
// Calls `pixel(image, window, out)` once per output pixel with `image` the batch's input and
// `out` the pixel's output at channel 0. The window is passed by value (a fresh one per pixel
// keeps it in registers).
template <typename T, typename PixelFn>
inline void ForEachPoolWindow(const PoolParams& p, const T* input, T* output, PixelFn&& pixel) {
  const Dims& in = p.input;
  const Dims& out = p.output;
  const int32_t depth = in.c;
  for (int32_t b = 0; b < in.n; ++b) {
    const T* image = input + static_cast<int64_t>(b) * in.h * in.w * depth;
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      const int32_t fy0 = y0 < 0 ? -y0 : 0;
      const int32_t fy1 = p.filter_h < in.h - y0 ? p.filter_h : in.h - y0;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        const int32_t fx0 = x0 < 0 ? -x0 : 0;
        const int32_t fx1 = p.filter_w < in.w - x0 ? p.filter_w : in.w - x0;
        pixel(image, PoolWindow{y0, fy0, fy1, x0, fx0, fx1}, output);
        output += depth;  // NHWC: output pixels are consecutive
      }
    }
  }
}

KernelStatus MaxPoolScalar(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPool16Scalar(const PoolParams&, const int16_t*, int16_t*);
KernelStatus AvgPoolScalar(const PoolParams&, const int8_t*, int8_t*);
KernelStatus AvgPool16Scalar(const PoolParams&, const int16_t*, int16_t*);
KernelStatus AvgPoolDsp(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPoolDsp(const PoolParams&, const int8_t*, int8_t*);
KernelStatus AvgPoolMve(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPoolMve(const PoolParams&, const int8_t*, int8_t*);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_POOLING_INTERNAL_H_
