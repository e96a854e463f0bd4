// BatchMatMul, MVE (Helium) body: operands made contiguous along K by the shared outer loop
// (BatchMatMulContiguous), then per LHS row four RHS columns per pass with VMLADAVA.S8 on raw
// int8 lanes; both offsets folded in exactly (mod 2^32) from the column sums and the row sum:
// sum (l + lo)(r + ro) = sum lr + lo sum r + ro sum l + k lo ro. The four sums are requantized
// as one vector (VQRDMULH and a rounding shift) and stored narrowed to bytes.
#include "batch_matmul_internal.h"
#include "internal/mve_helpers.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {

namespace {

// One output matrix: l [m][k] times r [n][k]^T into out [m][n] (not inlined into the shared
// outer loop, as in the DSP body).
__attribute__((noinline)) void MatMulMve(const BatchMatMulParams& p, const int8_t* l,
                                          const int8_t* r, int8_t* out) {
  const int32_t m = p.m, k = p.k, n = p.n;
  const int32_t lo = p.lhs_offset, ro = p.rhs_offset;
  const int32_t mult = p.requant.multiplier, shift = p.requant.shift;
  const int32_t out_off = p.output_offset, act_lo = p.activation.min, act_hi = p.activation.max;
  const int32_t base = mve::AddScaled(0, k, lo * ro);  // k lo ro (mod 2^32); |lo ro| <= 2^16
  for (int32_t i = 0; i < m; ++i) {
    const int8_t* row = l + static_cast<ptrdiff_t>(i) * k;
    const int32_t row_base = mve::AddScaled(base, ro, mve::SumS8(row, k));
    for (int32_t j = 0; j < n; j += 4) {
      // Columns past n repeat column j; their lanes are not stored.
      const int8_t* c0 = r + static_cast<ptrdiff_t>(j) * k;
      const int8_t* c1 = j + 1 < n ? c0 + k : c0;
      const int8_t* c2 = j + 2 < n ? c0 + 2 * k : c0;
      const int8_t* c3 = j + 3 < n ? c0 + 3 * k : c0;
      int32_t dot[4] = {0, 0, 0, 0}, csum[4] = {0, 0, 0, 0};
      mve::DotS8x4(row, c0, c1, c2, c3, k, dot, csum);
      int32x4_t acc = vmlaq_n_s32(vld1q_s32(dot), vld1q_s32(csum), lo);
      acc = vaddq_n_s32(acc, row_base);
      acc = mve::OffsetClamp(mve::MulQuant(acc, mult, shift), out_off, act_lo, act_hi);
      const int32_t left = n - j;
      if (left >= 4) {
        vstrbq_s32(out, acc);
      } else {
        vstrbq_p_s32(out, acc, vctp32q(static_cast<uint32_t>(left)));
      }
      out += left >= 4 ? 4 : left;
    }
  }
}

}  // namespace

KernelStatus BatchMatMulMve(const BatchMatMulParams& p, const int8_t* lhs, const int8_t* rhs,
                            int8_t* output, Scratch scratch) {
  return BatchMatMulContiguous(
      p, lhs, rhs, output, scratch, Isa::kMve,
      [&](const int8_t* l, const int8_t* r, int8_t* out) { MatMulMve(p, l, r, out); });
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
