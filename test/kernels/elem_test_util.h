// Shared helpers of the non-conv kernel tests (elementwise, pooling, softmax, activations,
// data movement, reduce, SVDF, LSTM): seeded RNG, random shapes, TFLite-style multiplier
// quantization and the reference broadcast index.
#ifndef MICA_TEST_KERNELS_ELEM_TEST_UTIL_H_
#define MICA_TEST_KERNELS_ELEM_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mica/kernels/types.h"

namespace mica {
namespace testing {

class ElemRng {
 public:
  explicit ElemRng(uint64_t seed) : gen_(seed) {}
  int32_t Uniform(int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(gen_);
  }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(gen_); }
  bool Chance(double p) { return Real(0, 1) < p; }
  template <typename T>
  std::vector<T> Fill(size_t n, int32_t lo, int32_t hi) {
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(Uniform(lo, hi));
    return v;
  }
  // Zero point of an int8 tensor, often at the extremes.
  int32_t ZeroPoint8() { return Chance(0.25) ? -128 : Chance(0.2) ? 127 : Uniform(-128, 127); }

 private:
  std::mt19937_64 gen_;
};

// TFLite's QuantizeMultiplier: real ~= q * 2^(shift - 31), q in [2^30, 2^31).
inline void QuantizeMultiplierRef(double m, int32_t* q, int32_t* shift) {
  if (m == 0.0) {
    *q = 0;
    *shift = 0;
    return;
  }
  int s = 0;
  const double f = std::frexp(m, &s);
  int64_t qf = std::llround(f * 2147483648.0);
  if (qf == (int64_t{1} << 31)) {
    qf /= 2;
    ++s;
  }
  if (s < -31) {
    s = 0;
    qf = 0;
  }
  *q = static_cast<int32_t>(qf);
  *shift = s;
}
inline kernels::Requant QuantizeRef(double m) {
  kernels::Requant r;
  QuantizeMultiplierRef(m, &r.multiplier, &r.shift);
  return r;
}

// A random shape of rank [1, max_rank] with dims in [1, max_dim].
inline kernels::Shape RandomShape(ElemRng& rng, int max_rank, int max_dim) {
  kernels::Shape s;
  s.rank = rng.Uniform(1, max_rank);
  for (int i = 0; i < s.rank; ++i) s.dims[i] = rng.Uniform(1, max_dim);
  return s;
}

// A shape that broadcasts to `out`: right-aligned suffix of out's dims, some set to 1.
inline kernels::Shape BroadcastableShape(ElemRng& rng, const kernels::Shape& out) {
  kernels::Shape s;
  s.rank = rng.Uniform(0, out.rank);
  for (int i = 0; i < s.rank; ++i) {
    const int32_t d = out.dims[out.rank - s.rank + i];
    s.dims[i] = rng.Chance(0.4) ? 1 : d;
  }
  return s;
}

// Flat index into `in` of the element that broadcasts to output flat index `o` of `out`
// (decomposes o digit by digit, innermost first; size-1 input dims contribute 0).
inline int64_t BroadcastSourceIndex(const kernels::Shape& out, const kernels::Shape& in,
                                    int64_t o) {
  int64_t idx = 0, stride = 1;
  for (int k = 0; k < out.rank; ++k) {
    const int od = out.rank - 1 - k;
    const int32_t coord = static_cast<int32_t>(o % out.dims[od]);
    o /= out.dims[od];
    const int id = in.rank - 1 - k;
    if (id >= 0) {
      idx += (in.dims[id] == 1 ? 0 : coord) * stride;
      stride *= in.dims[id];
    }
  }
  return idx;
}

inline std::string ShapeString(const kernels::Shape& s) {
  std::string r = "[";
  for (int i = 0; i < s.rank; ++i) r += (i ? "," : "") + std::to_string(s.dims[i]);
  return r + "]";
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TEST_KERNELS_ELEM_TEST_UTIL_H_
