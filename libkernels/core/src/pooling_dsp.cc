// DSP (SIMD32) bodies of int8 pooling, four channels per step:
// - average: summed in halfword lanes with SXTAB16 (the window sum of up to 256 taps fits in
//   int16), then divided per channel with TFLite's rounding; larger windows use the scalar body;
// - max: per-byte maximum with SSUB8 + SEL, the output row as the running maximum.
#include "internal/dsp_intrinsics.h"
#include "internal/isa_config.h"
#include "pooling_internal.h"

#if MICA_KERNELS_HAVE_DSP
#include <arm_acle.h>
#endif

#if MICA_KERNELS_BUILD_DSP

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int32_t LaneLo(uint32_t x) { return static_cast<int16_t>(x & 0xFFFFu); }
inline int32_t LaneHi(uint32_t x) { return static_cast<int16_t>(x >> 16); }

// Per-byte signed maximum of four int8 lanes.
inline uint32_t Max4(uint32_t a, uint32_t b) {
#if MICA_KERNELS_HAVE_DSP
  (void)__ssub8(static_cast<int32_t>(a), static_cast<int32_t>(b));  // GE[i] = a[i] >= b[i]
  return static_cast<uint32_t>(__sel(static_cast<int32_t>(a), static_cast<int32_t>(b)));
#else
  uint32_t r = 0;
  for (int i = 0; i < 32; i += 8) {
    const int8_t x = static_cast<int8_t>(a >> i), y = static_cast<int8_t>(b >> i);
    r |= static_cast<uint32_t>(static_cast<uint8_t>(x >= y ? x : y)) << i;
  }
  return r;
#endif
}

inline int8_t Average(int32_t acc, int32_t count, const ActivationRange& act) {
  acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
  return static_cast<int8_t>(Clamp(acc, act.min, act.max));
}

}  // namespace

KernelStatus AvgPoolDsp(const PoolParams& p, const int8_t* input, int8_t* output) {
  if (int64_t{p.filter_h} * p.filter_w > 256) return AvgPoolScalar(p, input, output);
  if (!ValidPoolParams(p, -128, 127)) return KernelStatus::kArgError;
  if (p.output.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  const Dims& in = p.input;
  const Dims& out = p.output;
  const int32_t depth = in.c;
  for (int32_t b = 0; b < in.n; ++b) {
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      const int32_t fy0 = y0 < 0 ? -y0 : 0;
      const int32_t fy1 = p.filter_h < in.h - y0 ? p.filter_h : in.h - y0;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        const int32_t fx0 = x0 < 0 ? -x0 : 0;
        const int32_t fx1 = p.filter_w < in.w - x0 ? p.filter_w : in.w - x0;
        const int32_t count = (fy1 - fy0) * (fx1 - fx0);
        int8_t* o = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * depth;
        const int8_t* base = input + (static_cast<int64_t>(b) * in.h * in.w) * depth;
        int32_t c = 0;
        for (; c + 4 <= depth; c += 4) {
          uint32_t even = 0, odd = 0;  // channels {c, c+2} and {c+1, c+3}
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(y0 + fy) * in.w + x0) * depth + c;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
              const uint32_t w = dsp::Load32(row + static_cast<int64_t>(fx) * depth);
              even = dsp::Sxtab16(even, w);
              odd = dsp::Sxtab16(odd, dsp::Ror8(w));
            }
          }
          o[c] = Average(LaneLo(even), count, p.activation);
          o[c + 1] = Average(LaneLo(odd), count, p.activation);
          o[c + 2] = Average(LaneHi(even), count, p.activation);
          o[c + 3] = Average(LaneHi(odd), count, p.activation);
        }
        for (; c < depth; ++c) {
          int32_t acc = 0;
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(y0 + fy) * in.w + x0) * depth + c;
            for (int32_t fx = fx0; fx < fx1; ++fx) acc += row[static_cast<int64_t>(fx) * depth];
          }
          o[c] = Average(acc, count, p.activation);
        }
      }
    }
  }
  return KernelStatus::kOk;
}

KernelStatus MaxPoolDsp(const PoolParams& p, const int8_t* input, int8_t* output) {
  if (!ValidPoolParams(p, -128, 127)) return KernelStatus::kArgError;
  if (p.output.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  const Dims& in = p.input;
  const Dims& out = p.output;
  const int32_t depth = in.c;
  for (int32_t b = 0; b < in.n; ++b) {
    for (int32_t oy = 0; oy < out.h; ++oy) {
      const int32_t y0 = oy * p.stride.h - p.padding.h;
      const int32_t fy0 = y0 < 0 ? -y0 : 0;
      const int32_t fy1 = p.filter_h < in.h - y0 ? p.filter_h : in.h - y0;
      for (int32_t ox = 0; ox < out.w; ++ox) {
        const int32_t x0 = ox * p.stride.w - p.padding.w;
        const int32_t fx0 = x0 < 0 ? -x0 : 0;
        const int32_t fx1 = p.filter_w < in.w - x0 ? p.filter_w : in.w - x0;
        int8_t* o = output + ((static_cast<int64_t>(b) * out.h + oy) * out.w + ox) * depth;
        const int8_t* base = input + (static_cast<int64_t>(b) * in.h * in.w) * depth;
        int32_t c = 0;
        for (; c + 4 <= depth; c += 4) {
          uint32_t m = 0x80808080u;  // four times -128
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(y0 + fy) * in.w + x0) * depth + c;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
              m = Max4(m, dsp::Load32(row + static_cast<int64_t>(fx) * depth));
            }
          }
          for (int i = 0; i < 4; ++i) {
            o[c + i] = static_cast<int8_t>(
                Clamp(static_cast<int8_t>(m >> (8 * i)), p.activation.min, p.activation.max));
          }
        }
        for (; c < depth; ++c) {
          int32_t m = -128;
          for (int32_t fy = fy0; fy < fy1; ++fy) {
            const int8_t* row = base + (static_cast<int64_t>(y0 + fy) * in.w + x0) * depth + c;
            for (int32_t fx = fx0; fx < fx1; ++fx) {
              const int32_t v = row[static_cast<int64_t>(fx) * depth];
              m = v > m ? v : m;
            }
          }
          o[c] = static_cast<int8_t>(Clamp(m, p.activation.min, p.activation.max));
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_DSP
