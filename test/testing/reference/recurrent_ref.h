// Simple references for the recurrent kernels (SVDF, integer LSTM), written for tests with
// nested per-batch / per-filter loops and 64-bit arithmetic, independent of the kernel core.
#ifndef MICA_TESTING_REFERENCE_RECURRENT_REF_H_
#define MICA_TESTING_REFERENCE_RECURRENT_REF_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "testing/reference/fixed_point_ref.h"

namespace mica {
namespace testing {

// ---- SVDF ---------------------------------------------------------------------------------
struct RefSvdfConfig {
  int batch, input_size, num_filters, rank, memory;
  int32_t input_zp, state_zp, output_zp;
  int32_t m1, s1, m2, s2;
};

// One SVDF step. state: [batch][filter][memory], updated in place.
template <typename StateT>
std::vector<int8_t> RefSvdfStep(const RefSvdfConfig& c, const std::vector<int8_t>& input,
                                const std::vector<int8_t>& wf, const std::vector<StateT>& wt,
                                const std::vector<int32_t>* bias, std::vector<StateT>& state) {
  const int units = c.num_filters / c.rank;
  const int32_t smin = sizeof(StateT) == 1 ? -128 : -32768, smax = sizeof(StateT) == 1 ? 127 : 32767;
  std::vector<int8_t> out(static_cast<size_t>(c.batch) * units);
  for (int b = 0; b < c.batch; ++b) {
    std::vector<int64_t> filter_sum(c.num_filters);
    for (int f = 0; f < c.num_filters; ++f) {
      StateT* mem = &state[(static_cast<size_t>(b) * c.num_filters + f) * c.memory];
      for (int m = 0; m + 1 < c.memory; ++m) mem[m] = mem[m + 1];
      int64_t dot = 0;
      for (int i = 0; i < c.input_size; ++i) {
        dot += int64_t{wf[static_cast<size_t>(f) * c.input_size + i]} *
               (input[static_cast<size_t>(b) * c.input_size + i] - c.input_zp);
      }
      const int32_t q = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(dot), c.m1, c.s1);
      mem[c.memory - 1] = static_cast<StateT>(RefClamp(int64_t{q} + c.state_zp, smin, smax));
      int64_t t = 0;
      for (int m = 0; m < c.memory; ++m) {
        t += int64_t{wt[static_cast<size_t>(f) * c.memory + m]} * (mem[m] - c.state_zp);
      }
      filter_sum[f] = t;
    }
    for (int u = 0; u < units; ++u) {
      int64_t acc = bias ? (*bias)[u] : 0;
      for (int r = 0; r < c.rank; ++r) acc += filter_sum[u * c.rank + r];
      const int32_t q = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), c.m2, c.s2);
      out[static_cast<size_t>(b) * units + u] = static_cast<int8_t>(RefClamp(int64_t{q} + c.output_zp, -128, 127));
    }
  }
  return out;
}

// ---- int16 sigmoid / tanh (TFLite's table algorithm) ---------------------------------------
inline const std::vector<uint32_t>& RefSigmoidTable16() {
  static const std::vector<uint32_t> t = [] {
    auto f = [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
    std::vector<uint32_t> v(256);
    for (int i = 0; i < 256; ++i) {
      const double a = f((i - 1) / 24.0), b = f(i / 24.0), c = f((i + 1) / 24.0);
      v[i] = static_cast<uint32_t>(std::min(65535.0, std::round(65536.0 * (b - (a - 2 * b + c) / 16))));
    }
    return v;
  }();
  return t;
}

// Sigmoid of a Q3.12 int16 (TFLite's int16 LOGISTIC with multiplier 3 << 0), Q0.15 out.
inline int16_t RefSigmoidQ12(int16_t x) {
  const auto& t = RefSigmoidTable16();
  const int64_t v = int64_t{x} * 3;
  const int64_t a = v < 0 ? -v : v;
  int64_t r = (a >> 9) >= 255 ? int64_t{0x7FFF} << 10
                              : (int64_t{t[a >> 9]} << 9) + (a & 511) * (int64_t{t[(a >> 9) + 1]} - t[a >> 9]);
  r = v >= 0 ? r + 512 : (int64_t{1} << 25) - r + 511;
  return static_cast<int16_t>(r >> 10);
}

// tanh of an int16 with effective multiplier / right shift (TFLite's int16 TANH).
inline int16_t RefTanhInt16(int16_t x, int32_t mult, int32_t shift) {
  const auto& t = RefSigmoidTable16();
  const int64_t v = (int64_t{x} * mult + (shift > 0 ? int64_t{1} << (shift - 1) : 0)) >> shift;
  const int64_t a = v < 0 ? -v : v;
  int64_t r = (a >> 8) >= 255 ? int64_t{0xFFFF} << 8
                              : (int64_t{t[a >> 8]} << 8) + (a & 255) * (int64_t{t[(a >> 8) + 1]} - t[a >> 8]);
  r = v >= 0 ? r - (1 << 23) + 128 : -r + (1 << 23) + 127;
  return static_cast<int16_t>(r >> 8);
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_REFERENCE_RECURRENT_REF_H_
