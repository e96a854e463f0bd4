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

// One MinMaxObserver per tensor index.
class RangeCollector {
 public:
  // Folds `n` values of tensor `tensor` into its observer.
  void Observe(int32_t tensor, const float* data, size_t n);
  // Returns the ranges of every tensor that saw at least one finite value.
  TensorRanges ranges() const;
  const std::map<int32_t, MinMaxObserver>& observers() const { return observers_; }

 private:
  std::map<int32_t, MinMaxObserver> observers_;
};

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_OBSERVER_H_
