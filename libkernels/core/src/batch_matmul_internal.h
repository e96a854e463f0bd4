// Private: the variant bodies of BatchMatMul, its argument check and batch iteration.
#ifndef MICA_KERNELS_BATCH_MATMUL_INTERNAL_H_
#define MICA_KERNELS_BATCH_MATMUL_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/batch_matmul.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus BatchMatMulScalar(const BatchMatMulParams& params, const int8_t* lhs,
                               const int8_t* rhs, int8_t* output, Scratch scratch);
KernelStatus BatchMatMulDsp(const BatchMatMulParams& params, const int8_t* lhs,
                            const int8_t* rhs, int8_t* output, Scratch scratch);

KernelStatus CheckBatchMatMul(const BatchMatMulParams& p, const void* lhs, const void* rhs,
                              void* output, const Scratch& scratch, size_t scratch_needed);

// Output batch count and, for output batch `index`, the LHS/RHS matrix indices (a batch dim
// of 1 broadcasts).
inline int32_t BatchMatMulBatches(const BatchMatMulParams& p) {
  int32_t total = 1;
  for (int i = 0; i < 3; ++i) {
    total *= p.lhs_batch[i] > p.rhs_batch[i] ? p.lhs_batch[i] : p.rhs_batch[i];
  }
  return total;
}
inline void BatchMatMulOperands(const BatchMatMulParams& p, int32_t index, int32_t* lhs_index,
                                int32_t* rhs_index) {
  int32_t out_dims[3];
  for (int i = 0; i < 3; ++i) {
    out_dims[i] = p.lhs_batch[i] > p.rhs_batch[i] ? p.lhs_batch[i] : p.rhs_batch[i];
  }
  const int32_t b2 = index % out_dims[2];
  const int32_t b1 = (index / out_dims[2]) % out_dims[1];
  const int32_t b0 = index / (out_dims[2] * out_dims[1]);
  const auto flat = [&](const int32_t* d) {
    return ((d[0] == 1 ? 0 : b0) * d[1] + (d[1] == 1 ? 0 : b1)) * d[2] + (d[2] == 1 ? 0 : b2);
  };
  *lhs_index = flat(p.lhs_batch);
  *rhs_index = flat(p.rhs_batch);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BATCH_MATMUL_INTERNAL_H_
