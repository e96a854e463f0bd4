// mica kernels — batched int8 matrix multiply (TFLite BATCH_MATMUL), per-tensor
// requantization, bit-exact with TFLite's reference kernel.
//
// out[b][i][j] = clamp(MBQM(sum_k (L[b][i][k] + lhs_offset) * (R[b][k][j] + rhs_offset))
//                      + output_offset)
// LHS is [.., M, K] row-major, or [.., K, M] with adj_x; RHS is [.., K, N], or [.., N, K] with
// adj_y (TFLite's adj_x / adj_y flags, taken as given: no caller-side transposition needed).
// Output [.., M, N]. Up to three leading batch dims broadcast TFLite-style (equal, or one of
// them 1). adj_y = true is the fastest layout (both operands contiguous along K); the other
// layouts transpose each operand matrix into scratch (BatchMatMulScratchBytes) first.
#ifndef MICA_KERNELS_BATCH_MATMUL_H_
#define MICA_KERNELS_BATCH_MATMUL_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct BatchMatMulParams {
  int32_t lhs_batch[3] = {1, 1, 1};  // leading dims of LHS (outermost first)
  int32_t rhs_batch[3] = {1, 1, 1};  // leading dims of RHS
  int32_t m = 1, k = 1, n = 1;
  bool adj_x = false;
  bool adj_y = false;
  int32_t lhs_offset = 0;  // -LHS zero point
  int32_t rhs_offset = 0;  // -RHS zero point
  int32_t output_offset = 0;
  Requant requant;  // per tensor
  ActivationRange activation;
};

KernelStatus BatchMatMul(const BatchMatMulParams& params, const int8_t* lhs, const int8_t* rhs,
                         int8_t* output, Scratch scratch);
size_t BatchMatMulScratchBytes(const BatchMatMulParams& params, Isa isa);

using BatchMatMulFn = KernelStatus (*)(const BatchMatMulParams&, const int8_t*, const int8_t*,
                                       int8_t*, Scratch);
VariantList<BatchMatMulFn> BatchMatMulVariants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BATCH_MATMUL_H_
