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
namespace {

struct Window {
  int32_t y0, fy0, fy1, x0, fx0, fx1;
};
inline Window WindowAt(const PoolParams& p, int32_t oy, int32_t ox) {
  Window w;
  w.y0 = oy * p.stride.h - p.padding.h;
  w.fy0 = w.y0 < 0 ? -w.y0 : 0;
  w.fy1 = p.filter_h < p.input.h - w.y0 ? p.filter_h : p.input.h - w.y0;
  w.x0 = ox * p.stride.w - p.padding.w;
  w.fx0 = w.x0 < 0 ? -w.x0 : 0;
  w.fx1 = p.filter_w < p.input.w - w.x0 ? p.filter_w : p.input.w - w.x0;
  return w;
}

}  // namespace

KernelStatus MaxPoolMve(const PoolParams& p, const int8_t* input, int8_t* output) {
  if (!ValidPoolParams(p, -128, 127)) return KernelStatus::kArgError;
  if (p.output.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  const int32_t depth = p.input.c;
  const int8x16_t lo = vdupq_n_s8(static_cast<int8_t>(p.activation.min));
  const int8x16_t hi = vdupq_n_s8(static_cast<int8_t>(p.activation.max));
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int8_t* base = input + static_cast<int64_t>(b) * p.input.h * p.input.w * depth;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const Window w = WindowAt(p, oy, ox);
        int8_t* o = output + ((static_cast<int64_t>(b) * p.output.h + oy) * p.output.w + ox) * depth;
        for (int32_t c = 0; c < depth; c += 16) {
          const mve_pred16_t pred = vctp8q(static_cast<uint32_t>(depth - c));
          int8x16_t m = vdupq_n_s8(-128);
          for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(w.y0 + fy) * p.input.w + w.x0) * depth + c;
            for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
              m = vmaxq_s8(m, vldrbq_z_s8(row + static_cast<int64_t>(fx) * depth, pred));
            }
          }
          vstrbq_p_s8(o + c, vminq_s8(vmaxq_s8(m, lo), hi), pred);
        }
      }
    }
  }
  return KernelStatus::kOk;
}

KernelStatus AvgPoolMve(const PoolParams& p, const int8_t* input, int8_t* output) {
  if (int64_t{p.filter_h} * p.filter_w > 256) return AvgPoolScalar(p, input, output);
  if (!ValidPoolParams(p, -128, 127)) return KernelStatus::kArgError;
  if (p.output.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  const int32_t depth = p.input.c;
  for (int32_t b = 0; b < p.input.n; ++b) {
    const int8_t* base = input + static_cast<int64_t>(b) * p.input.h * p.input.w * depth;
    for (int32_t oy = 0; oy < p.output.h; ++oy) {
      for (int32_t ox = 0; ox < p.output.w; ++ox) {
        const Window w = WindowAt(p, oy, ox);
        const int32_t count = (w.fy1 - w.fy0) * (w.fx1 - w.fx0);
        int8_t* o = output + ((static_cast<int64_t>(b) * p.output.h + oy) * p.output.w + ox) * depth;
        for (int32_t c = 0; c < depth; c += 8) {
          const mve_pred16_t pred = vctp16q(static_cast<uint32_t>(depth - c));
          int16x8_t sum = vdupq_n_s16(0);
          for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(w.y0 + fy) * p.input.w + w.x0) * depth + c;
            for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
              sum = vaddq_s16(sum, vldrbq_z_s16(row + static_cast<int64_t>(fx) * depth, pred));
            }
          }
          int16_t lanes[8];
          vst1q_s16(lanes, sum);
          const int32_t n = depth - c < 8 ? depth - c : 8;
          for (int32_t i = 0; i < n; ++i) {
            int32_t acc = lanes[i];
            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
            o[c + i] = static_cast<int8_t>(Clamp(acc, p.activation.min, p.activation.max));
          }
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
