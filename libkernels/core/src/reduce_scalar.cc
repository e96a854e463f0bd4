// Reductions: MEAN / SUM (TFLite's QuantizedMeanOrSum) and REDUCE_MAX.
#include <limits>

#include "internal/broadcast.h"
#include "internal/fixedpoint.h"
#include "internal/requantize.h"
#include "mica/kernels/reduce.h"

namespace mica {
namespace kernels {
namespace {

// Splits the (right-aligned, 6-d) input into kept and reduced dimensions.
struct ReducePlan {
  int32_t dims[kMaxRank];
  bool reduced[kMaxRank];
  int64_t strides[kMaxRank];
  int64_t reduced_count;  // N
};

bool MakePlan(const Shape& s, const ReduceAxes& axes, ReducePlan* plan) {
  if (!internal::ValidShape(s) || axes.count < 0 || axes.count > kMaxRank) return false;
  for (int i = 0; i < kMaxRank; ++i) plan->reduced[i] = false;
  for (int j = 0; j < axes.count; ++j) {
    int32_t a = axes.axis[j];
    if (a < 0) a += s.rank;
    if (a < 0 || a >= s.rank) return false;
    plan->reduced[kMaxRank - s.rank + a] = true;
  }
  int64_t stride = 1;
  plan->reduced_count = 1;
  for (int i = kMaxRank - 1; i >= 0; --i) {
    const int k = s.rank - (kMaxRank - i);
    plan->dims[i] = k >= 0 ? s.dims[k] : 1;
    plan->strides[i] = stride;
    stride *= plan->dims[i];
    if (plan->reduced[i]) plan->reduced_count *= plan->dims[i];
  }
  return true;
}

// Calls visit(out_index, first_input_offset) for each output element, and for each visits the
// reduced elements through `reduce(offset)`.
template <typename Fn>
void ForEachOutput(const ReducePlan& p, Fn fn) {
  int32_t od[kMaxRank], rd[kMaxRank];
  for (int i = 0; i < kMaxRank; ++i) {
    od[i] = p.reduced[i] ? 1 : p.dims[i];
    rd[i] = p.reduced[i] ? p.dims[i] : 1;
  }
  int64_t o = 0;
  for (int32_t a = 0; a < od[0]; ++a)
    for (int32_t b = 0; b < od[1]; ++b)
      for (int32_t c = 0; c < od[2]; ++c)
        for (int32_t d = 0; d < od[3]; ++d)
          for (int32_t e = 0; e < od[4]; ++e)
            for (int32_t f = 0; f < od[5]; ++f) {
              const int64_t base = a * p.strides[0] + b * p.strides[1] + c * p.strides[2] +
                                   d * p.strides[3] + e * p.strides[4] + f * p.strides[5];
              fn(o++, base, rd);
            }
}

template <typename T, typename Visit>
inline void ForEachReduced(const ReducePlan& p, const int32_t* rd, const T* in, int64_t base,
                           Visit visit) {
  for (int32_t a = 0; a < rd[0]; ++a)
    for (int32_t b = 0; b < rd[1]; ++b)
      for (int32_t c = 0; c < rd[2]; ++c)
        for (int32_t d = 0; d < rd[3]; ++d)
          for (int32_t e = 0; e < rd[4]; ++e)
            for (int32_t f = 0; f < rd[5]; ++f) {
              visit(in[base + a * p.strides[0] + b * p.strides[1] + c * p.strides[2] +
                       d * p.strides[3] + e * p.strides[4] + f * p.strides[5]]);
            }
}

template <typename T>
KernelStatus MeanOrSum(const MeanParams& mp, const Shape& s, const ReduceAxes& axes,
                       const T* in, T* out, bool compute_sum) {
  ReducePlan plan;
  if (!MakePlan(s, axes, &plan) || mp.output.shift > 31 || mp.output.shift < -31) {
    return KernelStatus::kArgError;
  }
  int64_t num_out = 1;
  for (int i = 0; i < kMaxRank; ++i) num_out *= plan.reduced[i] ? 1 : plan.dims[i];
  if (num_out == 0) return KernelStatus::kOk;
  if (out == nullptr || (s.elements() > 0 && in == nullptr)) return KernelStatus::kArgError;
  const int64_t n = plan.reduced_count;
  if (n == 0) {  // TFLite leaves the zero-initialised output.
    for (int64_t i = 0; i < num_out; ++i) out[i] = 0;
    return KernelStatus::kOk;
  }
  int32_t multiplier = mp.output.multiplier;
  int32_t shift = mp.output.shift;
  if (!compute_sum) {
    int sh = 63 - (n >> 32 ? internal::fp::CountLeadingZeros32(static_cast<uint32_t>(n >> 32))
                           : 32 + internal::fp::CountLeadingZeros32(static_cast<uint32_t>(n)));
    sh = sh < 32 ? sh : 32;
    sh = sh < 31 + shift ? sh : 31 + shift;
    multiplier = static_cast<int32_t>((static_cast<int64_t>(multiplier) << sh) / n);
    shift -= sh;
  }
  constexpr int32_t kLo = std::numeric_limits<T>::min();
  constexpr int32_t kHi = std::numeric_limits<T>::max();
  ForEachOutput(plan, [&](int64_t o, int64_t base, const int32_t* rd) {
    uint32_t sum = 0;  // TFLite's int32 accumulator (wraps rather than trapping)
    ForEachReduced(plan, rd, in, base, [&sum](T v) { sum += static_cast<uint32_t>(int32_t{v}); });
    const int32_t shifted = static_cast<int32_t>(
        sum - static_cast<uint32_t>(static_cast<int64_t>(mp.input_zero_point) * n));
    const int32_t v = internal::AddZeroPoint(internal::MultiplyByQuantizedMultiplier(shifted, multiplier, shift), mp.output_zero_point);
    out[o] = static_cast<T>(internal::Clamp(v, kLo, kHi));
  });
  return KernelStatus::kOk;
}

template <typename T>
KernelStatus MaxT(const Shape& s, const ReduceAxes& axes, const T* in, T* out) {
  ReducePlan plan;
  if (!MakePlan(s, axes, &plan)) return KernelStatus::kArgError;
  int64_t num_out = 1;
  for (int i = 0; i < kMaxRank; ++i) num_out *= plan.reduced[i] ? 1 : plan.dims[i];
  if (num_out == 0) return KernelStatus::kOk;
  if (out == nullptr || (s.elements() > 0 && in == nullptr)) return KernelStatus::kArgError;
  ForEachOutput(plan, [&](int64_t o, int64_t base, const int32_t* rd) {
    T m = std::numeric_limits<T>::lowest();
    ForEachReduced(plan, rd, in, base, [&m](T v) { m = v > m ? v : m; });
    out[o] = m;
  });
  return KernelStatus::kOk;
}

}  // namespace

KernelStatus Mean(const MeanParams& p, const Shape& s, const ReduceAxes& a, const int8_t* in,
                  int8_t* out) {
  return MeanOrSum(p, s, a, in, out, false);
}
KernelStatus Mean16(const MeanParams& p, const Shape& s, const ReduceAxes& a,
                    const int16_t* in, int16_t* out) {
  return MeanOrSum(p, s, a, in, out, false);
}
KernelStatus Sum(const MeanParams& p, const Shape& s, const ReduceAxes& a, const int8_t* in,
                 int8_t* out) {
  return MeanOrSum(p, s, a, in, out, true);
}
KernelStatus Sum16(const MeanParams& p, const Shape& s, const ReduceAxes& a, const int16_t* in,
                   int16_t* out) {
  return MeanOrSum(p, s, a, in, out, true);
}
KernelStatus ReduceMax(const Shape& s, const ReduceAxes& a, const int8_t* in, int8_t* out) {
  return MaxT(s, a, in, out);
}
KernelStatus ReduceMax16(const Shape& s, const ReduceAxes& a, const int16_t* in,
                         int16_t* out) {
  return MaxT(s, a, in, out);
}

}  // namespace kernels
}  // namespace mica
