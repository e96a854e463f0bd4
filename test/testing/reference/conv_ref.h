// Reference convolutions for tests: TFLite's reference loops restated for clarity (every
// output pixel, every output channel, every tap; taps outside the image are skipped).
// Deliberately naive; shares no code with the kernel core.
#ifndef MICA_TESTING_REFERENCE_CONV_REF_H_
#define MICA_TESTING_REFERENCE_CONV_REF_H_

#include <cstdint>
#include <vector>

#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/transpose_conv.h"
#include "testing/reference/fixed_point_ref.h"

namespace mica {
namespace testing {

inline int64_t RefNhwc(const kernels::Dims& d, int n, int y, int x, int c) {
  return ((int64_t{n} * d.h + y) * d.w + x) * d.c + c;
}

// Conv: int8 (In = int8_t, Bias = int32_t) or 16x8 (In = int16_t, Bias = int64_t).
template <typename In, typename Bias, typename Out>
void ConvReference(const kernels::ConvParams& p, const int32_t* mult, const int32_t* shift,
                   const In* input, const int8_t* filter, const Bias* bias, Out* output) {
  constexpr bool kWide = sizeof(In) == 2;
  const int groups = p.input.c / p.filter.c;
  const int per_group = p.output.c / groups;
  for (int n = 0; n < p.output.n; ++n)
    for (int oy = 0; oy < p.output.h; ++oy)
      for (int ox = 0; ox < p.output.w; ++ox)
        for (int oc = 0; oc < p.output.c; ++oc) {
          const int g = oc / per_group;
          int64_t acc = 0;
          for (int ky = 0; ky < p.filter.h; ++ky)
            for (int kx = 0; kx < p.filter.w; ++kx) {
              const int iy = oy * p.stride.h - p.padding.h + ky * p.dilation.h;
              const int ix = ox * p.stride.w - p.padding.w + kx * p.dilation.w;
              if (iy < 0 || iy >= p.input.h || ix < 0 || ix >= p.input.w) continue;
              for (int ic = 0; ic < p.filter.c; ++ic) {
                const int64_t x = input[RefNhwc(p.input, n, iy, ix, g * p.filter.c + ic)];
                const int64_t w = filter[RefNhwc(p.filter, oc, ky, kx, ic)];
                acc += w * (x + p.input_offset);
              }
            }
          if (bias != nullptr) acc += bias[oc];
          int64_t v;
          if (kWide) {
            v = RefMultiplyByQuantizedMultiplier64(acc, mult[oc], shift[oc]);
          } else {
            v = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), mult[oc], shift[oc]) +
                int64_t{p.output_offset};
          }
          output[RefNhwc(p.output, n, oy, ox, oc)] =
              static_cast<Out>(RefClamp(v, p.activation.min, p.activation.max));
        }
}

template <typename In, typename Bias, typename Out>
void DepthwiseConvReference(const kernels::DepthwiseConvParams& p, const int32_t* mult,
                            const int32_t* shift, const In* input, const int8_t* filter,
                            const Bias* bias, Out* output) {
  constexpr bool kWide = sizeof(In) == 2;
  const int m_count = p.depth_multiplier;
  for (int n = 0; n < p.output.n; ++n)
    for (int oy = 0; oy < p.output.h; ++oy)
      for (int ox = 0; ox < p.output.w; ++ox)
        for (int ic = 0; ic < p.input.c; ++ic)
          for (int m = 0; m < m_count; ++m) {
            const int oc = ic * m_count + m;
            int64_t acc = 0;
            for (int ky = 0; ky < p.filter.h; ++ky)
              for (int kx = 0; kx < p.filter.w; ++kx) {
                const int iy = oy * p.stride.h - p.padding.h + ky * p.dilation.h;
                const int ix = ox * p.stride.w - p.padding.w + kx * p.dilation.w;
                if (iy < 0 || iy >= p.input.h || ix < 0 || ix >= p.input.w) continue;
                const int64_t x = input[RefNhwc(p.input, n, iy, ix, ic)];
                const int64_t w = filter[RefNhwc(p.filter, 0, ky, kx, oc)];
                acc += w * (x + p.input_offset);
              }
            if (bias != nullptr) acc += bias[oc];
            int64_t v;
            if (kWide) {
              v = RefMultiplyByQuantizedMultiplier64(acc, mult[oc], shift[oc]);
            } else {
              v = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), mult[oc],
                                                   shift[oc]) +
                  int64_t{p.output_offset};
            }
            output[RefNhwc(p.output, n, oy, ox, oc)] =
                static_cast<Out>(RefClamp(v, p.activation.min, p.activation.max));
          }
}

// Transpose conv the way TFLite computes it: scatter every input element into an int32
// buffer of the output's size, then requantize each output element.
inline void TransposeConvReference(const kernels::TransposeConvParams& p, const int32_t* mult,
                                   const int32_t* shift, const int8_t* input,
                                   const int8_t* filter, const int32_t* bias, int8_t* output) {
  std::vector<int64_t> acc(static_cast<size_t>(p.output.elements()), 0);
  for (int n = 0; n < p.input.n; ++n)
    for (int iy = 0; iy < p.input.h; ++iy)
      for (int ix = 0; ix < p.input.w; ++ix)
        for (int ic = 0; ic < p.input.c; ++ic)
          for (int ky = 0; ky < p.filter.h; ++ky)
            for (int kx = 0; kx < p.filter.w; ++kx)
              for (int oc = 0; oc < p.output.c; ++oc) {
                const int oy = iy * p.stride.h - p.padding.h + ky;
                const int ox = ix * p.stride.w - p.padding.w + kx;
                if (oy < 0 || oy >= p.output.h || ox < 0 || ox >= p.output.w) continue;
                acc[RefNhwc(p.output, n, oy, ox, oc)] +=
                    (int64_t{input[RefNhwc(p.input, n, iy, ix, ic)]} + p.input_offset) *
                    filter[RefNhwc(p.filter, oc, ky, kx, ic)];
              }
  for (int64_t i = 0; i < p.output.elements(); ++i) {
    const int oc = static_cast<int>(i % p.output.c);
    int64_t a = acc[i] + (bias ? bias[oc] : 0);
    const int64_t v =
        RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(a), mult[oc], shift[oc]) +
        int64_t{p.output_offset};
    output[i] = static_cast<int8_t>(RefClamp(v, p.activation.min, p.activation.max));
  }
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_REFERENCE_CONV_REF_H_
