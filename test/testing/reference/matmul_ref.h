// Reference fully connected and batch matmul for tests: TFLite's reference loops restated.
#ifndef MICA_TESTING_REFERENCE_MATMUL_REF_H_
#define MICA_TESTING_REFERENCE_MATMUL_REF_H_

#include <cstdint>

#include "mica/kernels/batch_matmul.h"
#include "mica/kernels/fully_connected.h"
#include "testing/reference/fixed_point_ref.h"

namespace mica {
namespace testing {

// int8 (In = int8_t, Bias = int32_t) or 16x8 (In = int16_t, Bias = int64_t).
template <typename In, typename Bias, typename Out>
void FullyConnectedReference(const kernels::FullyConnectedParams& p, const int32_t* mult,
                             const int32_t* shift, const In* input, const int8_t* weights,
                             const Bias* bias, Out* output) {
  constexpr bool kWide = sizeof(In) == 2;
  for (int b = 0; b < p.batches; ++b)
    for (int o = 0; o < p.output_depth; ++o) {
      int64_t acc = 0;
      for (int d = 0; d < p.input_depth; ++d) {
        const int64_t x = input[int64_t{b} * p.input_depth + d];
        const int64_t w = weights[int64_t{o} * p.input_depth + d];
        acc += (w + p.filter_offset) * (x + p.input_offset);
      }
      if (bias != nullptr) acc += bias[o];
      const int q = p.per_channel ? o : 0;
      int64_t v = kWide ? RefMultiplyByQuantizedMultiplier64(acc, mult[q], shift[q])
                        : RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(acc), mult[q],
                                                           shift[q]);
      v += p.output_offset;
      output[int64_t{b} * p.output_depth + o] =
          static_cast<Out>(RefClamp(v, p.activation.min, p.activation.max));
    }
}

inline void BatchMatMulReference(const kernels::BatchMatMulParams& p, const int8_t* lhs,
                                 const int8_t* rhs, int8_t* output) {
  int out_b[3];
  for (int i = 0; i < 3; ++i) out_b[i] = p.lhs_batch[i] > p.rhs_batch[i] ? p.lhs_batch[i]
                                                                         : p.rhs_batch[i];
  const int64_t lhs_mat = int64_t{p.m} * p.k, rhs_mat = int64_t{p.k} * p.n;
  int64_t out_index = 0;
  for (int b0 = 0; b0 < out_b[0]; ++b0)
    for (int b1 = 0; b1 < out_b[1]; ++b1)
      for (int b2 = 0; b2 < out_b[2]; ++b2) {
        // A batch dim of 1 broadcasts.
        const auto flat = [&](const int32_t* dims) {
          const int i0 = dims[0] == 1 ? 0 : b0, i1 = dims[1] == 1 ? 0 : b1,
                    i2 = dims[2] == 1 ? 0 : b2;
          return (int64_t{i0} * dims[1] + i1) * dims[2] + i2;
        };
        const int8_t* l = lhs + flat(p.lhs_batch) * lhs_mat;
        const int8_t* r = rhs + flat(p.rhs_batch) * rhs_mat;
        for (int i = 0; i < p.m; ++i)
          for (int j = 0; j < p.n; ++j) {
            int64_t acc = 0;
            for (int kk = 0; kk < p.k; ++kk) {
              const int64_t a = p.adj_x ? l[int64_t{kk} * p.m + i] : l[int64_t{i} * p.k + kk];
              const int64_t b = p.adj_y ? r[int64_t{j} * p.k + kk] : r[int64_t{kk} * p.n + j];
              acc += (a + p.lhs_offset) * (b + p.rhs_offset);
            }
            const int64_t v = RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(acc),
                                                               p.requant.multiplier,
                                                               p.requant.shift) +
                              int64_t{p.output_offset};
            output[out_index++] =
                static_cast<int8_t>(RefClamp(v, p.activation.min, p.activation.max));
          }
      }
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_REFERENCE_MATMUL_REF_H_
