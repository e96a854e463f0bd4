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
KernelStatus BatchMatMulMve(const BatchMatMulParams& params, const int8_t* lhs,
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

// dst[c][r] = src[r][c] for a rows x cols int8 matrix.
inline void BatchMatMulTranspose(const int8_t* src, int32_t rows, int32_t cols, int8_t* dst) {
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) {
      dst[static_cast<ptrdiff_t>(c) * rows + r] = src[static_cast<ptrdiff_t>(r) * cols + c];
    }
  }
}

// The outer loop of the SIMD bodies: checks the arguments (scratch sized for `isa`), then for
// each output batch makes both operands contiguous along K (an adj_x LHS and a non-adj_y RHS
// transposed into scratch, kept while the next batch reads the same matrix) and calls
// body(l, r, out) with l [m][k], r [n][k] and out [m][n].
template <typename Body>
KernelStatus BatchMatMulContiguous(const BatchMatMulParams& p, const int8_t* lhs,
                                   const int8_t* rhs, int8_t* output, Scratch scratch, Isa isa,
                                   Body&& body) {
  const KernelStatus st =
      CheckBatchMatMul(p, lhs, rhs, output, scratch, BatchMatMulScratchBytes(p, isa));
  if (st != KernelStatus::kOk) return st;
  const int32_t m = p.m, k = p.k, n = p.n;
  const ptrdiff_t lhs_mat = static_cast<ptrdiff_t>(m) * k, rhs_mat = static_cast<ptrdiff_t>(k) * n;
  int8_t* lhs_t = static_cast<int8_t*>(scratch.buf);
  int8_t* rhs_t = p.adj_x ? lhs_t + lhs_mat : lhs_t;
  const int32_t batches = BatchMatMulBatches(p);
  int32_t cached_l = -1, cached_r = -1;
  for (int32_t b = 0; b < batches; ++b) {
    int32_t li, ri;
    BatchMatMulOperands(p, b, &li, &ri);
    const int8_t* l = lhs + li * lhs_mat;
    const int8_t* r = rhs + ri * rhs_mat;
    if (p.adj_x) {
      if (li != cached_l) BatchMatMulTranspose(l, k, m, lhs_t);
      cached_l = li;
      l = lhs_t;
    }
    if (!p.adj_y) {
      if (ri != cached_r) BatchMatMulTranspose(r, k, n, rhs_t);
      cached_r = ri;
      r = rhs_t;
    }
    body(l, r, output);
    output += static_cast<ptrdiff_t>(m) * n;
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BATCH_MATMUL_INTERNAL_H_
