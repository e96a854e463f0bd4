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
  bool empty = false;
  const KernelStatus st = CheckPool(p, input, output, -128, 127, &empty);
  if (st != KernelStatus::kOk || empty) return st;
  const int32_t depth = p.input.c, in_w = p.input.w;
  ForEachPoolWindow(p, input, output, [&](const int8_t* image, PoolWindow w, int8_t* o) {
    const int32_t count = w.count();
    int32_t c = 0;
    for (; c + 4 <= depth; c += 4) {
      uint32_t even = 0, odd = 0;  // channels {c, c+2} and {c+1, c+3}
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const int8_t* row = PoolRow(image, w, fy, in_w, depth) + c;
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          const uint32_t v = dsp::Load32(row + static_cast<int64_t>(fx) * depth);
          even = dsp::Sxtab16(even, v);
          odd = dsp::Sxtab16Ror8(odd, v);
        }
      }
      o[c] = Average(LaneLo(even), count, p.activation);
      o[c + 1] = Average(LaneLo(odd), count, p.activation);
      o[c + 2] = Average(LaneHi(even), count, p.activation);
      o[c + 3] = Average(LaneHi(odd), count, p.activation);
    }
    for (; c < depth; ++c) {
      int32_t acc = 0;
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const int8_t* row = PoolRow(image, w, fy, in_w, depth) + c;
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) acc += row[static_cast<int64_t>(fx) * depth];
      }
      o[c] = Average(acc, count, p.activation);
    }
  });
  return KernelStatus::kOk;
}

KernelStatus MaxPoolDsp(const PoolParams& p, const int8_t* input, int8_t* output) {
  bool empty = false;
  const KernelStatus st = CheckPool(p, input, output, -128, 127, &empty);
  if (st != KernelStatus::kOk || empty) return st;
  const int32_t depth = p.input.c, in_w = p.input.w;
  ForEachPoolWindow(p, input, output, [&](const int8_t* image, PoolWindow w, int8_t* o) {
    int32_t c = 0;
    for (; c + 4 <= depth; c += 4) {
      uint32_t m = 0x80808080u;  // four times -128
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const int8_t* row = PoolRow(image, w, fy, in_w, depth) + c;
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
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
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const int8_t* row = PoolRow(image, w, fy, in_w, depth) + c;
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          const int32_t v = row[static_cast<int64_t>(fx) * depth];
          m = v > m ? v : m;
        }
      }
      o[c] = static_cast<int8_t>(Clamp(m, p.activation.min, p.activation.max));
    }
  });
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_DSP
