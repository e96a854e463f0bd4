// BatchMatMul: argument check, scratch sizes, variant table, entry.
#include "mica/kernels/batch_matmul.h"

#include "batch_matmul_internal.h"
#include "internal/checks.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus CheckBatchMatMul(const BatchMatMulParams& p, const void* lhs, const void* rhs,
                              void* output, const Scratch& scratch, size_t scratch_needed) {
  if (lhs == nullptr || rhs == nullptr || output == nullptr) return KernelStatus::kArgError;
  if (p.m < 1 || p.k < 1 || p.n < 1) return KernelStatus::kArgError;
  int64_t lhs_total = int64_t{p.m} * p.k, rhs_total = int64_t{p.k} * p.n,
          out_total = int64_t{p.m} * p.n;
  for (int i = 0; i < 3; ++i) {
    const int32_t l = p.lhs_batch[i], r = p.rhs_batch[i];
    if (l < 1 || r < 1 || (l != r && l != 1 && r != 1)) return KernelStatus::kArgError;
    lhs_total *= l;
    rhs_total *= r;
    out_total *= l > r ? l : r;
    if (lhs_total > INT32_MAX || rhs_total > INT32_MAX || out_total > INT32_MAX) {
      return KernelStatus::kArgError;
    }
  }
  if (!OffsetOk(p.lhs_offset) || !OffsetOk(p.rhs_offset) || !OffsetOk(p.output_offset)) {
    return KernelStatus::kArgError;
  }
  if (!ActivationOk(p.activation, INT8_MIN, INT8_MAX)) return KernelStatus::kArgError;
  if (!RequantOk({&p.requant.multiplier, &p.requant.shift}, 1, kMaxShift8)) {
    return KernelStatus::kArgError;
  }
  if (!ScratchOk(scratch, scratch_needed)) return KernelStatus::kArgError;
  return KernelStatus::kOk;
}

}  // namespace internal

size_t BatchMatMulScratchBytes(const BatchMatMulParams& p, Isa isa) {
  if (isa == Isa::kScalar || p.m < 1 || p.k < 1 || p.n < 1) return 0;
  // SIMD bodies want both operands contiguous along K: transpose LHS when adj_x, RHS unless
  // adj_y, one matrix at a time.
  size_t bytes = 0;
  if (p.adj_x) bytes += static_cast<size_t>(p.m) * static_cast<size_t>(p.k);
  if (!p.adj_y) bytes += static_cast<size_t>(p.k) * static_cast<size_t>(p.n);
  return (bytes + 3) & ~static_cast<size_t>(3);
}

KernelStatus BatchMatMul(const BatchMatMulParams& params, const int8_t* lhs, const int8_t* rhs,
                         int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(BatchMatMul)(params, lhs, rhs, output, scratch);
}

VariantList<BatchMatMulFn> BatchMatMulVariants() {
  static constexpr Variant<BatchMatMulFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::BatchMatMulScalar)
      MICA_KERNELS_VARIANT_DSP(internal::BatchMatMulDsp)
      MICA_KERNELS_VARIANT_MVE(internal::BatchMatMulMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
