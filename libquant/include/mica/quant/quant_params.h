// mica quant — choosing int8 quantization parameters and converting values.
//
// Conventions follow TFLite's int8 scheme: real = scale * (q - zero_point).
//  * Activations: asymmetric, per tensor, q in [-128, 127]. The range is first widened to
//    contain 0.0 and the zero point is an integer, so 0.0 (padding, ReLU floor) is exact.
//  * Weights: symmetric (zero point 0), narrow range q in [-127, 127]; per channel for
//    convolutions, per tensor for fully-connected layers.
//  * Biases: int32, zero point 0, scale = input_scale * weight_scale (per channel).
//
//   mica::quant::QuantParams p = mica::quant::ChooseAsymmetricParams(-1.0f, 3.0f);
//   int8_t q = mica::quant::QuantizeValue(0.5f, p);      // p.scale = 4/255, p.zero_point = -64
//   float r = mica::quant::DequantizeValue(q, p);
#ifndef MICA_QUANT_QUANT_PARAMS_H_
#define MICA_QUANT_QUANT_PARAMS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mica {
namespace quant {

struct QuantParams {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Returns asymmetric params covering [min, max] ∪ {0} on [qmin, qmax]: scale =
// (max' - min') / (qmax - qmin) and zero_point = round(qmin - min' / scale), clamped, where
// [min', max'] is the widened range. A degenerate range (all zero, or non-finite bounds) gives
// scale 1 and the zero point nearest 0.
QuantParams ChooseAsymmetricParams(float min, float max, int32_t qmin = -128,
                                   int32_t qmax = 127);

// Returns symmetric params (zero point 0) with scale = abs_max / qmax; abs_max == 0 gives
// scale 1 (TFLite's choice for all-zero channels).
QuantParams ChooseSymmetricParams(float abs_max, int32_t qmax = 127);

// Returns round(value / scale) + zero_point clamped to [qmin, qmax]; rounding is half away
// from zero (std::round), as TFLite's quantize utilities do.
int32_t QuantizeToInt(float value, const QuantParams& p, int32_t qmin, int32_t qmax);
int8_t QuantizeValue(float value, const QuantParams& p);
float DequantizeValue(int32_t q, const QuantParams& p);

// Per-channel symmetric quantization of a float tensor along `axis` of `shape`.
struct ChannelQuantized {
  std::vector<int8_t> values;  // same layout as the input
  std::vector<float> scales;   // one per channel (one entry when per-tensor)
};
// Quantizes `data` (of `shape`) symmetrically to [-127, 127], per channel along `axis`, or per
// tensor when `axis` < 0.
ChannelQuantized QuantizeSymmetric(const float* data, const std::vector<int32_t>& shape,
                                   int axis);

// Quantizes a float bias to int32 with scale input_scale * weight_scales[c] (one weight scale,
// or one per element of `bias`). Values beyond int32 saturate.
std::vector<int32_t> QuantizeBias(const float* bias, size_t n, float input_scale,
                                  const std::vector<float>& weight_scales);

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_QUANT_PARAMS_H_
