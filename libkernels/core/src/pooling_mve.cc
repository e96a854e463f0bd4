// MVE (Helium) bodies of int8 pooling: sixteen channels a step for max (VMAX.S8), eight for
// average (int8 widened to int16 lanes with VLDRB.S16; the sum of up to 256 taps fits), then
// TFLite's rounding division per channel. Predicated channel tails. Average windows of more
// than 256 taps use the scalar body.
#include "internal/isa_config.h"
#include "internal/mve_helpers.h"
#include "pooling_internal.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
KernelStatus MaxPoolMve(const PoolParams& p, const int8_t* input, int8_t* output) {
  bool empty = false;
  const KernelStatus st = CheckPool(p, input, output, -128, 127, &empty);
  if (st != KernelStatus::kOk || empty) return st;
  const int32_t depth = p.input.c, in_w = p.input.w;
  const int8x16_t lo = vdupq_n_s8(static_cast<int8_t>(p.activation.min));
  const int8x16_t hi = vdupq_n_s8(static_cast<int8_t>(p.activation.max));
  ForEachPoolWindow(p, input, output, [&](const int8_t* image, PoolWindow w, int8_t* o) {
    for (int32_t c = 0; c < depth; c += 16) {
      const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(depth - c));
      int8x16_t m = vdupq_n_s8(-128);
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const int8_t* row = PoolRow(image, w, fy, in_w, depth) + c;
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          m = vmaxq_s8(m, vldrbq_z_s8(row + static_cast<int64_t>(fx) * depth, pred));
        }
      }
      vstrbq_p_s8(o + c, vminq_s8(vmaxq_s8(m, lo), hi), pred);
    }
  });
  return KernelStatus::kOk;
}

namespace {

// The window sums of eight channels (int16 lanes, exact for up to 256 taps) starting at `px`
// (the window's first tap), `kFull` unpredicated.
template <bool kFull>
inline int16x8_t WindowSum8(const int8_t* px, int32_t rows, int32_t cols, ptrdiff_t row_step,
                            ptrdiff_t depth, mve_pred16_t pred) {
  int16x8_t sum = vdupq_n_s16(0);
  for (int32_t r = rows; r > 0; --r, px += row_step) {
    const int8_t* q = px;
    for (int32_t k = cols; k > 0; --k, q += depth) {
      sum = vaddq_s16(sum, kFull ? vldrbq_s16(q) : vldrbq_z_s16(q, pred));
    }
  }
  return sum;
}

// TFLite's rounding division of the window sums by the tap count, clamped, for n channels.
inline void AvgFinish(int16x8_t sum, int32_t n, int32_t count, int32_t lo, int32_t hi,
                      int8_t* o) {
  int16_t lanes[8];
  vst1q_s16(lanes, sum);
  for (int32_t i = 0; i < n; ++i) {
    int32_t acc = lanes[i];
    acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
    o[i] = static_cast<int8_t>(Clamp(acc, lo, hi));
  }
}

}  // namespace

KernelStatus AvgPoolMve(const PoolParams& p, const int8_t* input, int8_t* output) {
  if (int64_t{p.filter_h} * p.filter_w > 256) return AvgPoolScalar(p, input, output);
  bool empty = false;
  const KernelStatus st = CheckPool(p, input, output, -128, 127, &empty);
  if (st != KernelStatus::kOk || empty) return st;
  // Parameters in locals captured by value: the output stores could alias `p`.
  const int32_t depth = p.input.c, in_w = p.input.w;
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const ptrdiff_t row_step = static_cast<ptrdiff_t>(in_w) * depth;
  ForEachPoolWindow(p, input, output, [=](const int8_t* image, PoolWindow w, int8_t* o) {
    const int32_t count = w.count();
    const int32_t rows = w.fy1 - w.fy0, cols = w.fx1 - w.fx0;
    const int8_t* first =
        PoolRow(image, w, w.fy0, in_w, depth) + static_cast<ptrdiff_t>(w.fx0) * depth;
    int32_t c = 0;
    for (; c + 8 <= depth; c += 8) {
      AvgFinish(WindowSum8<true>(first + c, rows, cols, row_step, depth, 0), 8, count, lo, hi,
                o + c);
    }
    if (c < depth) {
      const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(depth - c));
      AvgFinish(WindowSum8<false>(first + c, rows, cols, row_step, depth, pred), depth - c,
                count, lo, hi, o + c);
    }
  });
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
