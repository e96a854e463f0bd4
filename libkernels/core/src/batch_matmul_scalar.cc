// BatchMatMul, scalar body: strided reads honour adj_x / adj_y directly (no scratch).
#include "batch_matmul_internal.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus BatchMatMulScalar(const BatchMatMulParams& p, const int8_t* lhs, const int8_t* rhs,
                               int8_t* output, Scratch scratch) {
  const KernelStatus st =
      CheckBatchMatMul(p, lhs, rhs, output, scratch, BatchMatMulScratchBytes(p, Isa::kScalar));
  if (st != KernelStatus::kOk) return st;
  const ptrdiff_t lhs_mat = static_cast<ptrdiff_t>(p.m) * p.k;
  const ptrdiff_t rhs_mat = static_cast<ptrdiff_t>(p.k) * p.n;
  // Element (i, kk) of LHS and (kk, j) of RHS: strides per index.
  const ptrdiff_t l_i = p.adj_x ? 1 : p.k, l_k = p.adj_x ? p.m : 1;
  const ptrdiff_t r_k = p.adj_y ? 1 : p.n, r_j = p.adj_y ? p.k : 1;
  const int32_t batches = BatchMatMulBatches(p);
  for (int32_t b = 0; b < batches; ++b) {
    int32_t li, ri;
    BatchMatMulOperands(p, b, &li, &ri);
    const int8_t* l = lhs + li * lhs_mat;
    const int8_t* r = rhs + ri * rhs_mat;
    for (int32_t i = 0; i < p.m; ++i) {
      for (int32_t j = 0; j < p.n; ++j) {
        int32_t acc = 0;
        for (int32_t kk = 0; kk < p.k; ++kk) {
          acc += (l[i * l_i + kk * l_k] + p.lhs_offset) * (r[kk * r_k + j * r_j] + p.rhs_offset);
        }
        const int32_t v =
            AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, p.requant.multiplier, p.requant.shift), p.output_offset);
        *output++ = static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
