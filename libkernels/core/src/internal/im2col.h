// im2col: gathers the receptive field of one output pixel into a contiguous column, so a
// convolution becomes dot products of filter rows with columns. Shared by the SIMD bodies.
//
// The int16 column holds (input + input_offset) for taps inside the image and 0 outside
// (TFLite skips those taps, which is the same sum), in filter order (ky, kx, ci). With
// `permute`, each complete block of 4 is stored as {c0, c2, c1, c3}: the lane order
// SXTB16 / SXTB16-ROR8 produce from 4 int8 filter values, so the DSP dot product needs no
// repacking of the filter. A tail of fewer than 4 stays in natural order.
#ifndef MICA_KERNELS_INTERNAL_IM2COL_H_
#define MICA_KERNELS_INTERNAL_IM2COL_H_

#include <cstddef>
#include <cstdint>

namespace mica {
namespace kernels {
namespace internal {

struct Im2ColGeometry {
  int32_t in_h, in_w, in_c;      // image (one batch); in_c is the pixel stride in elements
  int32_t k_h, k_w, k_c;         // window: k_c consecutive channels per tap
  int32_t stride_h, stride_w, dilation_h, dilation_w, pad_h, pad_w;
};

// Bytes of `columns` int16 columns for a k_h x k_w x k_c window.
constexpr size_t Im2ColBytesS16(int32_t k_h, int32_t k_w, int32_t k_c, int32_t columns) {
  return static_cast<size_t>(k_h) * static_cast<size_t>(k_w) * static_cast<size_t>(k_c) *
         static_cast<size_t>(columns) * sizeof(int16_t);
}

// Writes k_h * k_w * k_c int16 values to `col` for output pixel (out_y, out_x); `image`
// points at channel 0 of the first k_c channels used (batch and group already applied).
inline void Im2ColS16(const Im2ColGeometry& g, const int8_t* image, int32_t out_y, int32_t out_x,
                      int32_t input_offset, bool permute, int16_t* col) {
  const int32_t y0 = out_y * g.stride_h - g.pad_h;
  const int32_t x0 = out_x * g.stride_w - g.pad_w;
  int16_t* dst = col;
  for (int32_t ky = 0; ky < g.k_h; ++ky) {
    const int32_t iy = y0 + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) {
      __builtin_memset(dst, 0, sizeof(int16_t) * static_cast<size_t>(g.k_w) * g.k_c);
      dst += g.k_w * g.k_c;
      continue;
    }
    const int8_t* row = image + static_cast<ptrdiff_t>(iy) * g.in_w * g.in_c;
    if (g.dilation_w == 1 && g.k_c == g.in_c) {
      // The in-bounds taps of a row are one contiguous run of the input: one loop over it,
      // zeros on either side.
      const int32_t lo = x0 < 0 ? (-x0 < g.k_w ? -x0 : g.k_w) : 0;
      int32_t hi = g.in_w - x0 < g.k_w ? g.in_w - x0 : g.k_w;
      if (hi < lo) hi = lo;
      const int32_t n_lo = lo * g.k_c, n_run = (hi - lo) * g.k_c, n_all = g.k_w * g.k_c;
      for (int32_t i = 0; i < n_lo; ++i) dst[i] = 0;
      const int8_t* src = row + static_cast<ptrdiff_t>(x0 + lo) * g.in_c;
      int16_t* d = dst + n_lo;
      for (int32_t i = 0; i < n_run; ++i) d[i] = static_cast<int16_t>(src[i] + input_offset);
      for (int32_t i = n_lo + n_run; i < n_all; ++i) dst[i] = 0;
      dst += n_all;
      continue;
    }
    for (int32_t kx = 0; kx < g.k_w; ++kx) {
      const int32_t ix = x0 + kx * g.dilation_w;
      if (ix < 0 || ix >= g.in_w) {
        __builtin_memset(dst, 0, sizeof(int16_t) * static_cast<size_t>(g.k_c));
      } else {
        const int8_t* src = row + static_cast<ptrdiff_t>(ix) * g.in_c;
        for (int32_t c = 0; c < g.k_c; ++c) dst[c] = static_cast<int16_t>(src[c] + input_offset);
      }
      dst += g.k_c;
    }
  }
  if (permute) {
    const int32_t k = g.k_h * g.k_w * g.k_c;
    for (int32_t i = 0; i + 4 <= k; i += 4) {
      const int16_t t = col[i + 1];
      col[i + 1] = col[i + 2];
      col[i + 2] = t;
    }
  }
}

// int8 variant for bodies that fold the input offset in through weight sums: taps outside the
// image hold `pad_value` (= -input_offset, so that they contribute w * 0 after the offset).
inline void Im2ColS8(const Im2ColGeometry& g, const int8_t* image, int32_t out_y, int32_t out_x,
                     int8_t pad_value, int8_t* col) {
  const int32_t y0 = out_y * g.stride_h - g.pad_h;
  const int32_t x0 = out_x * g.stride_w - g.pad_w;
  int8_t* dst = col;
  const size_t tap = static_cast<size_t>(g.k_c);
  for (int32_t ky = 0; ky < g.k_h; ++ky) {
    const int32_t iy = y0 + ky * g.dilation_h;
    if (iy < 0 || iy >= g.in_h) {
      __builtin_memset(dst, static_cast<uint8_t>(pad_value), tap * static_cast<size_t>(g.k_w));
      dst += g.k_w * g.k_c;
      continue;
    }
    const int8_t* row = image + static_cast<ptrdiff_t>(iy) * g.in_w * g.in_c;
    if (g.dilation_w == 1 && g.k_c == g.in_c) {
      // The in-bounds taps of a row are one contiguous run of the input: one copy, padded
      // on either side.
      const int32_t lo = x0 < 0 ? (-x0 < g.k_w ? -x0 : g.k_w) : 0;
      int32_t hi = g.in_w - x0 < g.k_w ? g.in_w - x0 : g.k_w;
      if (hi < lo) hi = lo;
      if (lo > 0) {
        __builtin_memset(dst, static_cast<uint8_t>(pad_value), tap * static_cast<size_t>(lo));
      }
      if (hi > lo) {
        __builtin_memcpy(dst + lo * g.k_c, row + static_cast<ptrdiff_t>(x0 + lo) * g.in_c,
                         tap * static_cast<size_t>(hi - lo));
      }
      if (hi < g.k_w) {
        __builtin_memset(dst + hi * g.k_c, static_cast<uint8_t>(pad_value),
                         tap * static_cast<size_t>(g.k_w - hi));
      }
      dst += g.k_w * g.k_c;
      continue;
    }
    for (int32_t kx = 0; kx < g.k_w; ++kx) {
      const int32_t ix = x0 + kx * g.dilation_w;
      if (ix < 0 || ix >= g.in_w) {
        __builtin_memset(dst, static_cast<uint8_t>(pad_value), tap);
      } else {
        __builtin_memcpy(dst, row + static_cast<ptrdiff_t>(ix) * g.in_c, tap);
      }
      dst += g.k_c;
    }
  }
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_IM2COL_H_
