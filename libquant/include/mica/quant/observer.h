// mica quant — calibration observers: the float ranges activation parameters come from.
//
// Run the float graph on representative inputs, feed every float tensor the executor produces
// to a RangeCollector, then hand its TensorRanges to QuantizeGraph.
//
//   mica::quant::RangeCollector ranges;
//   executor->SetTensorObserver([&](int32_t t, const mica::runtime::TensorView& v) {
//     if (v.dtype == mica::DType::kFloat32) ranges.Observe(t, v.as<float>(), v.num_elements());
//   });
//   for (auto& sample : samples) executor->Run({sample});
//   QuantizeGraph(graph, ranges.ranges(), {});
#ifndef MICA_QUANT_OBSERVER_H_
#define MICA_QUANT_OBSERVER_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mica {
namespace quant {

// The observed float range of one tensor.
struct TensorRange {
  float min = 0.0f;
  float max = 0.0f;
};

// Ranges by tensor index in the graph's entry subgraph.
using TensorRanges = std::map<int32_t, TensorRange>;

// Tracks the running min and max of the values it sees; NaN and infinities are skipped (and
// counted) so one bad sample cannot poison a scale.
class MinMaxObserver {
 public:
  // Folds `n` values into the range.
  void Observe(const float* data, size_t n);
  // Returns true until a finite value has been observed.
  bool empty() const { return count_ == 0; }
  float min() const { return min_; }
  float max() const { return max_; }
  int64_t count() const { return count_; }
  int64_t non_finite() const { return non_finite_; }
  TensorRange range() const { return TensorRange{min_, max_}; }

 private:
  float min_ = std::numeric_limits<float>::infinity();
  float max_ = -std::numeric_limits<float>::infinity();
  int64_t count_ = 0;
  int64_t non_finite_ = 0;
};

// How a tensor's calibration range is derived from the values it takes.
//  * kMinMax: the overall min and max (TFLite's converter).
//  * kEma: min and max of each Observe() call (one calibration sample), averaged with an
//    exponential moving average of weight `ema_constant` after the first sample (PyTorch's
//    MovingAverageMinMaxObserver, default 0.01).
//  * kPercentile: the `percentile` and (100 - `percentile`) percentiles of all values seen.
//  * kMse: the range [a * min, a * max], a in (0, 1], that minimises the expected squared
//    quantization error (clipping plus rounding) of the values seen on `levels` levels.
// kPercentile and kMse keep a histogram of kHistogramBins bins over a symmetric range that
// doubles (merging bin pairs) when a larger magnitude arrives.
enum class ObserverKind { kMinMax, kEma, kPercentile, kMse };

struct ObserverConfig {
  ObserverKind kind = ObserverKind::kMinMax;
  double percentile = 99.99;   // kPercentile, in (50, 100]
  double ema_constant = 0.01;  // kEma
  int32_t levels = 256;        // kMse: 256 for int8 activations, 65536 for int16
};

// Parses "minmax", "ema", "percentile", "percentile=P" or "mse" (InvalidArgument otherwise).
absl::StatusOr<ObserverConfig> ParseObserver(const std::string& text);
// Returns the canonical spelling of `config` ("percentile=99.99").
std::string ObserverName(const ObserverConfig& config);

// A histogram of values over [-limit, limit] with a fixed number of bins.
class Histogram {
 public:
  static constexpr int kBins = 2048;
  void Add(const float* data, size_t n);
  bool empty() const { return total_ == 0; }
  // Returns the value below which `fraction` of the samples lie (linear within a bin).
  double Quantile(double fraction) const;
  // Returns the scale factor a in (0, 1] for the MSE-optimal range [a * lo, a * hi].
  double MseShrink(float lo, float hi, int32_t levels) const;

 private:
  void Grow(double magnitude);
  double limit_ = 0.0;
  std::vector<double> counts_ = std::vector<double>(kBins, 0.0);
  double total_ = 0.0;
};

// One observer per tensor index.
class RangeCollector {
 public:
  RangeCollector() = default;
  explicit RangeCollector(const ObserverConfig& config) : config_(config) {}
  // Folds `n` values of tensor `tensor` (one calibration sample) into its observer.
  void Observe(int32_t tensor, const float* data, size_t n);
  // Returns the ranges of every tensor that saw at least one finite value.
  TensorRanges ranges() const;
  const std::map<int32_t, MinMaxObserver>& observers() const { return observers_; }

 private:
  struct Extra {
    bool ema_started = false;
    TensorRange ema;
    Histogram histogram;
  };
  ObserverConfig config_;
  std::map<int32_t, MinMaxObserver> observers_;
  std::map<int32_t, Extra> extra_;
};

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_OBSERVER_H_
