// Private: the variant bodies of Conv/Conv16x8 and the argument check they share.
#ifndef MICA_KERNELS_CONV_INTERNAL_H_
#define MICA_KERNELS_CONV_INTERNAL_H_

#include <cstddef>
#include <climits>
#include <cstdint>

#include "internal/isa_config.h"
#include "mica/kernels/conv.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus ConvScalar(const ConvParams& params, const PerChannelRequant& quant,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* output, Scratch scratch);
KernelStatus ConvDsp(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch);
KernelStatus ConvMve(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch);

KernelStatus Conv16x8Scalar(const ConvParams& params, const PerChannelRequant& quant,
                            const int16_t* input, const int8_t* filter, const int64_t* bias,
                            int16_t* output, Scratch scratch);
KernelStatus Conv16x8Dsp(const ConvParams& params, const PerChannelRequant& quant,
                         const int16_t* input, const int8_t* filter, const int64_t* bias,
                         int16_t* output, Scratch scratch);

// Shared argument checks (also used by depthwise, transpose conv, FC, batch matmul).
// Every dim >= 1 and the element count fits in int32.
inline bool DimsOk(const Dims& d) {
  if (d.n < 1 || d.h < 1 || d.w < 1 || d.c < 1) return false;
  const int64_t e = int64_t{d.n} * d.h * d.w * d.c;
  return e <= INT32_MAX;
}
// Multipliers >= 0 and shifts within [min_shift, max_shift] for `count` channels.
inline bool RequantOk(const PerChannelRequant& q, int32_t count, int32_t max_shift) {
  if (q.multiplier == nullptr || q.shift == nullptr) return false;
  for (int32_t i = 0; i < count; ++i) {
    if (q.multiplier[i] < 0 || q.shift[i] < -31 || q.shift[i] > max_shift) return false;
  }
  return true;
}
inline bool ActivationOk(const ActivationRange& a, int32_t lo, int32_t hi) {
  return a.min <= a.max && a.min >= lo && a.max <= hi;
}
// Scratch must be 4-byte aligned when a body needs it.
inline bool ScratchOk(const Scratch& s, size_t needed) {
  return needed == 0 || (s.buf != nullptr && s.bytes >= needed &&
                         (reinterpret_cast<uintptr_t>(s.buf) & 3u) == 0);
}
// Strides and dilations >= 1, padding >= 0, and window origins/extents far from overflow.
inline bool WindowOk(const Stride2D& s, const Dilation2D& d, const Pad2D& pad, const Dims& out,
                     int32_t k_h, int32_t k_w) {
  if (s.h < 1 || s.w < 1 || d.h < 1 || d.w < 1 || pad.h < 0 || pad.w < 0) return false;
  return int64_t{out.h} * s.h + int64_t{k_h} * d.h <= INT32_MAX / 2 &&
         int64_t{out.w} * s.w + int64_t{k_w} * d.w <= INT32_MAX / 2 && pad.h <= INT32_MAX / 4 &&
         pad.w <= INT32_MAX / 4;
}

// Largest left shift allowed by the int8 path (x << shift before the Q31 multiply) and by
// the 16x8 path (total shift 15 - shift must stay >= 1).
constexpr int32_t kMaxShift8 = 31;
constexpr int32_t kMaxShift16 = 14;

// The scalar loops without im2col (no scratch, no check): the fallback of SIMD bodies for
// cases they do not cover.
void ConvLoopsInt8(const ConvParams& params, const PerChannelRequant& quant, const int8_t* input,
                   const int8_t* filter, const int32_t* bias, int8_t* output);

// True for the 1x1, stride-1, unpadded, ungrouped case (a plain GEMM over pixels).
inline bool ConvIs1x1(const ConvParams& p) {
  return p.filter.h == 1 && p.filter.w == 1 && p.stride.h == 1 && p.stride.w == 1 &&
         p.padding.h == 0 && p.padding.w == 0 && p.input.c == p.filter.c &&
         p.input.h == p.output.h && p.input.w == p.output.w;
}

// The DSP body reads the input in place (no im2col scratch) for one group with kernel
// height 1 (not 1x1) and dilation_w 1: the 1xN path.
inline bool ConvDspIsDirect(const ConvParams& p) {
  return !ConvIs1x1(p) && p.filter.h == 1 && p.input.c == p.filter.c && p.dilation.w == 1;
}

// The MVE body: int8 im2col of four pixels (1x1 reads the input in place) when the padding
// value -input_offset fits int8 and there is one group; else the scalar body.
inline bool ConvMveIsIm2Col(const ConvParams& p) {
  return p.input.c == p.filter.c && p.input_offset >= -127 && p.input_offset <= 128;
}

// Validates shapes, pointers, offsets, requantization and scratch; `wide` selects the 16x8
// rules (no offsets, int16 clamp). Cost: O(output channels).
KernelStatus CheckConv(const ConvParams& p, const PerChannelRequant& quant, const void* input,
                       const void* filter, void* output, const Scratch& scratch,
                       size_t scratch_needed, bool wide);

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

#endif  // MICA_KERNELS_CONV_INTERNAL_H_
