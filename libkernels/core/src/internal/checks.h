// Private: argument checks shared by the kernels' entry points (conv, depthwise, transpose
// conv, fully connected, batch matmul). Each is O(1) except RequantOk (O(channels)).
#ifndef MICA_KERNELS_INTERNAL_CHECKS_H_
#define MICA_KERNELS_INTERNAL_CHECKS_H_

#include <climits>
#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {
namespace internal {

// Every dim >= 1 and the element count fits in int32.
inline bool DimsOk(const Dims& d) {
  if (d.n < 1 || d.h < 1 || d.w < 1 || d.c < 1) return false;
  const int64_t e = int64_t{d.n} * d.h * d.w * d.c;
  return e <= INT32_MAX;
}
// Multipliers >= 0 and shifts within [-31, max_shift] for `count` channels.
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
// An int8 zero-point offset (TFLite allows [-255, 255] after negation).
inline bool OffsetOk(int32_t offset) { return offset >= -255 && offset <= 255; }
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

// The quantization rules of a per-channel requantizing kernel (conv, depthwise, transpose
// conv, fully connected): `wide` (16x8) takes no offsets and clamps to int16; int8 takes
// offsets within [-255, 255] and clamps to int8. `channels` multiplier/shift pairs.
inline bool ChannelQuantOk(int32_t input_offset, int32_t output_offset,
                           const ActivationRange& activation, const PerChannelRequant& quant,
                           int32_t channels, bool wide) {
  if (wide) {
    return input_offset == 0 && output_offset == 0 &&
           ActivationOk(activation, INT16_MIN, INT16_MAX) &&
           RequantOk(quant, channels, kMaxShift16);
  }
  return OffsetOk(input_offset) && OffsetOk(output_offset) &&
         ActivationOk(activation, INT8_MIN, INT8_MAX) && RequantOk(quant, channels, kMaxShift8);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_CHECKS_H_
