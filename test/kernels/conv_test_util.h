// Shared helpers of the conv-family kernel tests: seeded random shapes and quantization.
#ifndef MICA_TEST_KERNELS_CONV_TEST_UTIL_H_
#define MICA_TEST_KERNELS_CONV_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "mica/kernels/types.h"

namespace mica {
namespace testing {

class ConvRng {
 public:
  explicit ConvRng(uint64_t seed) : gen_(seed) {}
  int32_t Uniform(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(gen_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(gen_) < p; }
  template <typename T>
  T Pick(std::initializer_list<T> values) {
    return *(values.begin() + Uniform(0, static_cast<int32_t>(values.size()) - 1));
  }
  template <typename T>
  std::vector<T> Fill(size_t n, int32_t lo, int32_t hi) {
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(Uniform(lo, hi));
    return v;
  }
  std::vector<int64_t> Fill64(size_t n, int64_t lo, int64_t hi) {
    std::vector<int64_t> v(n);
    std::uniform_int_distribution<int64_t> d(lo, hi);
    for (auto& x : v) x = d(gen_);
    return v;
  }
  // An int8 zero-point offset: often the extremes (zero point -128 or 127).
  int32_t Offset8() { return Chance(0.3) ? 128 : Chance(0.3) ? -127 : Uniform(-127, 128); }

 private:
  std::mt19937_64 gen_;
};

// Per-channel multipliers/shifts: shifts around the one that keeps outputs in range for an
// accumulator of ~`acc_bits` bits, and now and then anywhere in [-31, max_shift].
struct RandomQuant {
  std::vector<int32_t> mult, shift;
  kernels::PerChannelRequant view() const { return {mult.data(), shift.data()}; }
};
inline RandomQuant MakeQuant(ConvRng& rng, int32_t count, int32_t acc_bits, int32_t max_shift) {
  RandomQuant q;
  const bool wild = rng.Chance(0.2);
  for (int32_t i = 0; i < count; ++i) {
    int32_t m = rng.Uniform(1 << 30, INT32_MAX);
    if (rng.Chance(0.05)) m = rng.Pick<int32_t>({0, 1, INT32_MAX, 0x7FFF0000, 0x7FFEFFFF});
    int32_t s = wild ? rng.Uniform(-31, max_shift) : 7 - acc_bits + rng.Uniform(-2, 2);
    if (s < -31) s = -31;
    if (s > max_shift) s = max_shift;
    q.mult.push_back(m);
    q.shift.push_back(s);
  }
  return q;
}

// Rough accumulator size in bits for `taps` products of `in_bits` x 8-bit values.
inline int32_t AccBits(int64_t taps, int32_t in_bits) {
  return in_bits + 7 +
         static_cast<int32_t>(std::ceil(std::log2(static_cast<double>(taps) + 1) / 2));
}

inline kernels::ActivationRange RandomActivation(ConvRng& rng, int32_t lo, int32_t hi) {
  if (rng.Chance(0.6)) return {lo, hi};
  int32_t a = rng.Uniform(lo, hi), b = rng.Uniform(lo, hi);
  return {a < b ? a : b, a < b ? b : a};
}

// 4-byte aligned scratch of `bytes` bytes.
struct ScratchBuffer {
  explicit ScratchBuffer(size_t bytes) : words(bytes / 4 + 1), size(bytes) {}
  kernels::Scratch get() { return {size ? words.data() : nullptr, size}; }
  std::vector<uint32_t> words;
  size_t size;
};

}  // namespace testing
}  // namespace mica

#endif  // MICA_TEST_KERNELS_CONV_TEST_UTIL_H_
