// SVDF: TFLite Micro's integer reference algorithm (scalar; one body for every ISA).
#include <limits>

#include "internal/requantize.h"
#include "mica/kernels/svdf.h"

namespace mica {
namespace kernels {
namespace {

bool ValidSvdf(const SvdfParams& p) {
  return p.batch >= 1 && p.input_size >= 1 && p.num_filters >= 1 && p.rank >= 1 &&
         p.num_filters % p.rank == 0 && p.memory_size >= 1 && p.effective_scale_1.shift <= 31 &&
         p.effective_scale_1.shift >= -31 && p.effective_scale_2.shift <= 31 &&
         p.effective_scale_2.shift >= -31;
}

template <typename StateT>
KernelStatus SvdfT(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                   const StateT* wt, const int32_t* bias, StateT* state, int8_t* output,
                   Scratch scratch) {
  if (!ValidSvdf(p)) return KernelStatus::kArgError;
  if (input == nullptr || wf == nullptr || wt == nullptr || state == nullptr ||
      output == nullptr || scratch.bytes < SvdfScratchBytes(p, Isa::kScalar) ||
      scratch.buf == nullptr) {
    return KernelStatus::kArgError;
  }
  const int32_t n_batch = p.batch, n_input = p.input_size, n_filter = p.num_filters;
  const int32_t n_memory = p.memory_size, n_rank = p.rank, n_unit = n_filter / n_rank;
  int32_t* scratch_filter = static_cast<int32_t*>(scratch.buf);              // [b][filter]
  int32_t* scratch_out = scratch_filter + static_cast<size_t>(n_batch) * n_filter;  // [b][unit]

  // Shift the whole state left by one element (the newest column is rewritten below).
  const int64_t state_n = static_cast<int64_t>(n_batch) * n_filter * n_memory;
  for (int64_t i = 0; i + 1 < state_n; ++i) state[i] = state[i + 1];

  // Feature matmul into the newest memory slot of each filter.
  constexpr int32_t kStateMin = std::numeric_limits<StateT>::min();
  constexpr int32_t kStateMax = std::numeric_limits<StateT>::max();
  for (int32_t b = 0; b < n_batch; ++b) {
    const int8_t* x = input + static_cast<int64_t>(b) * n_input;
    for (int32_t f = 0; f < n_filter; ++f) {
      const int8_t* w = wf + static_cast<int64_t>(f) * n_input;
      int32_t acc = 0;
      for (int32_t i = 0; i < n_input; ++i) acc += w[i] * (x[i] - p.input_zero_point);
      acc = internal::MultiplyByQuantizedMultiplier(acc, p.effective_scale_1.multiplier,
                                                    p.effective_scale_1.shift);
      acc = internal::Clamp(acc + p.state_zero_point, kStateMin, kStateMax);
      state[(static_cast<int64_t>(b) * n_filter + f) * n_memory + (n_memory - 1)] =
          static_cast<StateT>(acc);
    }
  }
  // Time matmul: per filter, weights_time . (state - zero point).
  for (int32_t b = 0; b < n_batch; ++b) {
    for (int32_t f = 0; f < n_filter; ++f) {
      const StateT* s = state + (static_cast<int64_t>(b) * n_filter + f) * n_memory;
      const StateT* w = wt + static_cast<int64_t>(f) * n_memory;
      // int32 accumulation as TFLite does; wraps (rather than being undefined) on overflow.
      uint32_t acc = 0;
      for (int32_t m = 0; m < n_memory; ++m) {
        acc += static_cast<uint32_t>(w[m] * (s[m] - p.state_zero_point));
      }
      scratch_filter[static_cast<int64_t>(b) * n_filter + f] = static_cast<int32_t>(acc);
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
    const int32_t v = internal::AddZeroPoint(internal::MultiplyByQuantizedMultiplier(
                          scratch_out[i], p.effective_scale_2.multiplier,
                          p.effective_scale_2.shift), p.output_zero_point);
    output[i] = static_cast<int8_t>(internal::Clamp(v, -128, 127));
  }
  return KernelStatus::kOk;
}

}  // namespace

size_t SvdfScratchBytes(const SvdfParams& p, Isa /*isa*/) {
  if (p.batch < 1 || p.num_filters < 1 || p.rank < 1) return 0;
  const size_t units = static_cast<size_t>(p.num_filters / p.rank);
  return (static_cast<size_t>(p.batch) * static_cast<size_t>(p.num_filters) +
          static_cast<size_t>(p.batch) * units) *
         sizeof(int32_t);
}

KernelStatus Svdf(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                  const int16_t* wt, const int32_t* bias, int16_t* state, int8_t* output,
                  Scratch scratch) {
  return SvdfT<int16_t>(p, input, wf, wt, bias, state, output, scratch);
}
KernelStatus SvdfInt8State(const SvdfParams& p, const int8_t* input, const int8_t* wf,
                           const int8_t* wt, const int32_t* bias, int8_t* state,
                           int8_t* output, Scratch scratch) {
  return SvdfT<int8_t>(p, input, wf, wt, bias, state, output, scratch);
}

}  // namespace kernels
}  // namespace mica
