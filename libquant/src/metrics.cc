#include "mica/quant/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace mica {
namespace quant {

ErrorMetrics CompareToReference(const float* ref, const float* approx, size_t n) {
  ErrorMetrics m;
  m.count = n;
  double signal = 0, noise = 0, abs_sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = ref[i];
    const double e = static_cast<double>(approx[i]) - r;
    signal += r * r;
    noise += e * e;
    abs_sum += std::fabs(e);
    m.max_abs_error = std::max(m.max_abs_error, std::fabs(e));
  }
  if (n > 0) {
    m.mean_abs_error = abs_sum / static_cast<double>(n);
    m.rmse = std::sqrt(noise / static_cast<double>(n));
  }
  if (noise == 0) {
    m.sqnr_db = std::numeric_limits<double>::infinity();
  } else if (signal == 0) {
    m.sqnr_db = -std::numeric_limits<double>::infinity();
  } else {
    m.sqnr_db = 10.0 * std::log10(signal / noise);
  }
  return m;
}

std::vector<float> DequantizeInt8(const int8_t* q, size_t n, const QuantParams& p) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = DequantizeValue(q[i], p);
  return out;
}

}  // namespace quant
}  // namespace mica
