#include "mica/quant/observer.h"

#include <cmath>

namespace mica {
namespace quant {

void MinMaxObserver::Observe(const float* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) {
      ++non_finite_;
      continue;
    }
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
    ++count_;
  }
}

void RangeCollector::Observe(int32_t tensor, const float* data, size_t n) {
  observers_[tensor].Observe(data, n);
}

TensorRanges RangeCollector::ranges() const {
  TensorRanges out;
  for (const auto& [t, obs] : observers_) {
    if (!obs.empty()) out[t] = obs.range();
  }
  return out;
}

}  // namespace quant
}  // namespace mica
