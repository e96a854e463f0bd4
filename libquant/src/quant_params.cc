#include "mica/quant/quant_params.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mica {
namespace quant {

QuantParams ChooseAsymmetricParams(float min, float max, int32_t qmin, int32_t qmax) {
  QuantParams p;
  const float rmin = std::fmin(0.0f, min);
  const float rmax = std::fmax(0.0f, max);
  if (!std::isfinite(rmin) || !std::isfinite(rmax) || rmax <= rmin || qmax <= qmin) {
    p.scale = 1.0f;
    p.zero_point = std::clamp<int32_t>(0, qmin, qmax);
    return p;
  }
  p.scale = (rmax - rmin) / static_cast<float>(qmax - qmin);
  const double zp_from_min = static_cast<double>(qmin) - static_cast<double>(rmin) / p.scale;
  if (zp_from_min <= qmin) {
    p.zero_point = qmin;
  } else if (zp_from_min >= qmax) {
    p.zero_point = qmax;
  } else {
    p.zero_point = static_cast<int32_t>(std::round(zp_from_min));
  }
  return p;
}

QuantParams ChooseSymmetricParams(float abs_max, int32_t qmax) {
  QuantParams p;
  p.zero_point = 0;
  p.scale = (abs_max > 0.0f && std::isfinite(abs_max) && qmax > 0)
                ? abs_max / static_cast<float>(qmax)
                : 1.0f;
  return p;
}

int32_t QuantizeToInt(float value, const QuantParams& p, int32_t qmin, int32_t qmax) {
  const double q = std::round(static_cast<double>(value) / p.scale) + p.zero_point;
  if (std::isnan(q)) return std::clamp<int32_t>(p.zero_point, qmin, qmax);
  return static_cast<int32_t>(std::clamp<double>(q, qmin, qmax));
}

int8_t QuantizeValue(float value, const QuantParams& p) {
  return static_cast<int8_t>(QuantizeToInt(value, p, -128, 127));
}

float DequantizeValue(int32_t q, const QuantParams& p) {
  return p.scale * static_cast<float>(q - p.zero_point);
}

ChannelQuantized QuantizeSymmetric(const float* data, const std::vector<int32_t>& shape,
                                   int axis) {
  ChannelQuantized out;
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  const bool per_channel = axis >= 0 && axis < static_cast<int>(shape.size());
  // Elements are laid out as [outer, channels, inner] around the quantized axis.
  int64_t channels = 1, inner = 1;
  if (per_channel) {
    channels = shape[static_cast<size_t>(axis)];
    for (size_t i = static_cast<size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
  }
  std::vector<float> abs_max(static_cast<size_t>(std::max<int64_t>(channels, 1)), 0.0f);
  auto channel_of = [&](int64_t i) {
    return per_channel ? static_cast<size_t>((i / inner) % channels) : size_t{0};
  };
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::fabs(data[i]);
    if (std::isfinite(v)) abs_max[channel_of(i)] = std::max(abs_max[channel_of(i)], v);
  }
  for (float m : abs_max) out.scales.push_back(ChooseSymmetricParams(m).scale);
  out.values.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const QuantParams p{out.scales[channel_of(i)], 0};
    out.values[static_cast<size_t>(i)] = static_cast<int8_t>(QuantizeToInt(data[i], p, -127, 127));
  }
  return out;
}

std::vector<int32_t> QuantizeBias(const float* bias, size_t n, float input_scale,
                                  const std::vector<float>& weight_scales) {
  std::vector<int32_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const float ws = weight_scales.size() == 1 ? weight_scales[0] : weight_scales[i];
    const double scale = static_cast<double>(input_scale) * ws;
    double q = scale > 0 ? std::round(static_cast<double>(bias[i]) / scale) : 0.0;
    if (std::isnan(q)) q = 0;
    q = std::clamp<double>(q, std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max());
    out[i] = static_cast<int32_t>(q);
  }
  return out;
}

}  // namespace quant
}  // namespace mica
