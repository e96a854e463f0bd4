// mica quant — error metrics between a float reference and a (dequantized) approximation.
//
//   mica::quant::ErrorMetrics m = mica::quant::CompareToReference(ref, approx, n);
//   std::printf("SQNR %.1f dB, max |err| %g\n", m.sqnr_db, m.max_abs_error);
#ifndef MICA_QUANT_METRICS_H_
#define MICA_QUANT_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mica/quant/quant_params.h"

namespace mica {
namespace quant {

struct ErrorMetrics {
  // 10 * log10(sum(ref^2) / sum((ref - approx)^2)); +inf when the error is exactly zero,
  // -inf when the reference is all zeros but the error is not.
  double sqnr_db = 0.0;
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double rmse = 0.0;
  size_t count = 0;
};

// Returns the metrics of `approx` against `ref`, both `n` floats.
ErrorMetrics CompareToReference(const float* ref, const float* approx, size_t n);

// Returns `n` int8 values dequantized with `p`.
std::vector<float> DequantizeInt8(const int8_t* q, size_t n, const QuantParams& p);

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_METRICS_H_
