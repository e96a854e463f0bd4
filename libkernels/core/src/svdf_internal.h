// Private: the variant bodies of SVDF and the step they share. A body differs only in its two
// dot products (the Dots policy): the feature matmul of one batch row and the time matmul of one
// filter's memory; the state shift, rank reduction and requantization are common.
#ifndef MICA_KERNELS_SVDF_INTERNAL_H_
#define MICA_KERNELS_SVDF_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <limits>

#include "internal/requantize.h"
#include "mica/kernels/svdf.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus SvdfScalar(const SvdfParams&, const int8_t*, const int8_t*, const int16_t*,
                        const int32_t*, int16_t*, int8_t*, Scratch);
KernelStatus SvdfDsp(const SvdfParams&, const int8_t*, const int8_t*, const int16_t*,
                     const int32_t*, int16_t*, int8_t*, Scratch);
KernelStatus SvdfMve(const SvdfParams&, const int8_t*, const int8_t*, const int16_t*,
                     const int32_t*, int16_t*, int8_t*, Scratch);
KernelStatus SvdfInt8StateScalar(const SvdfParams&, const int8_t*, const int8_t*, const int8_t*,
                                 const int32_t*, int8_t*, int8_t*, Scratch);
KernelStatus SvdfInt8StateDsp(const SvdfParams&, const int8_t*, const int8_t*, const int8_t*,
                              const int32_t*, int8_t*, int8_t*, Scratch);
KernelStatus SvdfInt8StateMve(const SvdfParams&, const int8_t*, const int8_t*, const int8_t*,
                              const int32_t*, int8_t*, int8_t*, Scratch);

// Parameters every body accepts; the zero points lie in their tensors' ranges (TFLite's int8
// input and output, the state's type), so the SIMD bodies may widen x - zp to int16 lanes.
template <typename StateT>
bool ValidSvdf(const SvdfParams& p) {
  return p.batch >= 1 && p.input_size >= 1 && p.num_filters >= 1 && p.rank >= 1 &&
         p.num_filters % p.rank == 0 && p.memory_size >= 1 && p.effective_scale_1.shift <= 31 &&
         p.effective_scale_1.shift >= -31 && p.effective_scale_2.shift <= 31 &&
         p.effective_scale_2.shift >= -31 && p.input_zero_point >= -128 &&
         p.input_zero_point <= 127 && p.output_zero_point >= -128 &&
         p.output_zero_point <= 127 &&
         p.state_zero_point >= std::numeric_limits<StateT>::min() &&
         p.state_zero_point <= std::numeric_limits<StateT>::max();
}

// One SVDF step (TFLite Micro's EvalIntegerSvdfReference). Dots supplies
//   static void Feature(const int8_t* x, const int8_t* wf, int32_t n_filter, int32_t n_input,
//                       int32_t zp, int32_t* acc);   // acc[f] = sum_i wf[f][i] (x[i] - zp)
//   static int32_t Time(const StateT* w, const StateT* s, int32_t n, int32_t zp);
//                                                     // sum_m w[m] (s[m] - zp), mod 2^32
template <typename StateT, typename Dots>
KernelStatus SvdfStep(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                      const StateT* wt, const int32_t* bias, StateT* state, int8_t* output,
                      Scratch scratch) {
  if (!ValidSvdf<StateT>(p)) return KernelStatus::kArgError;
  if (input == nullptr || wf == nullptr || wt == nullptr || state == nullptr ||
      output == nullptr || scratch.bytes < SvdfScratchBytes(p, Isa::kScalar) ||
      scratch.buf == nullptr) {
    return KernelStatus::kArgError;
  }
  const int32_t n_batch = p.batch, n_input = p.input_size, n_filter = p.num_filters;
  const int32_t n_memory = p.memory_size, n_rank = p.rank, n_unit = n_filter / n_rank;
  int32_t* scratch_filter = static_cast<int32_t*>(scratch.buf);                      // [b][filter]
  int32_t* scratch_out = scratch_filter + static_cast<size_t>(n_batch) * n_filter;  // [b][unit]

  // Shift the whole state left by one element (the newest column is rewritten below).
  const int64_t state_n = static_cast<int64_t>(n_batch) * n_filter * n_memory;
  for (int64_t i = 0; i + 1 < state_n; ++i) state[i] = state[i + 1];

  // Feature matmul into the newest memory slot of each filter (the batch row's scratch holds
  // the sums until the time matmul overwrites it).
  constexpr int32_t kStateMin = std::numeric_limits<StateT>::min();
  constexpr int32_t kStateMax = std::numeric_limits<StateT>::max();
  for (int32_t b = 0; b < n_batch; ++b) {
    int32_t* acc = scratch_filter + static_cast<int64_t>(b) * n_filter;
    Dots::Feature(input + static_cast<int64_t>(b) * n_input, wf, n_filter, n_input,
                  p.input_zero_point, acc);
    for (int32_t f = 0; f < n_filter; ++f) {
      const int32_t v = MultiplyByQuantizedMultiplier(acc[f], p.effective_scale_1.multiplier,
                                                      p.effective_scale_1.shift);
      state[(static_cast<int64_t>(b) * n_filter + f) * n_memory + (n_memory - 1)] =
          static_cast<StateT>(Clamp(v + p.state_zero_point, kStateMin, kStateMax));
    }
  }
  // Time matmul: per filter, weights_time . (state - zero point).
  for (int32_t b = 0; b < n_batch; ++b) {
    for (int32_t f = 0; f < n_filter; ++f) {
      scratch_filter[static_cast<int64_t>(b) * n_filter + f] =
          Dots::Time(wt + static_cast<int64_t>(f) * n_memory,
                     state + (static_cast<int64_t>(b) * n_filter + f) * n_memory, n_memory,
                     p.state_zero_point);
    }
  }
  // Bias, rank reduction, requantization.
  for (int32_t b = 0; b < n_batch; ++b) {
    for (int32_t u = 0; u < n_unit; ++u) {
      uint32_t acc = bias != nullptr ? static_cast<uint32_t>(bias[u]) : 0u;
      for (int32_t r = 0; r < n_rank; ++r) {
        acc += static_cast<uint32_t>(
            scratch_filter[static_cast<int64_t>(b) * n_filter + u * n_rank + r]);
      }
      scratch_out[static_cast<int64_t>(b) * n_unit + u] = static_cast<int32_t>(acc);
    }
  }
  for (int64_t i = 0; i < static_cast<int64_t>(n_batch) * n_unit; ++i) {
    const int32_t v = AddZeroPoint(MultiplyByQuantizedMultiplier(scratch_out[i],
                                                                 p.effective_scale_2.multiplier,
                                                                 p.effective_scale_2.shift),
                                   p.output_zero_point);
    output[i] = static_cast<int8_t>(Clamp(v, -128, 127));
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_SVDF_INTERNAL_H_
