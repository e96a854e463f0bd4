// BatchMatMul, DSP body: operands made contiguous along K by the shared outer loop
// (BatchMatMulContiguous), then row-by-row dot products of two RHS columns per pass, both
// operands widened with their offsets by SXTAB16 and accumulated with SMLAD.
#include "batch_matmul_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

// One output matrix: l [m][k] times r [n][k]^T into out [m][n]. Not inlined into the shared
// outer loop: there GCC spills the inner loop's registers (1.9x the instructions on the M4).
__attribute__((noinline)) void MatMulDsp(const BatchMatMulParams& p, const int8_t* l,
                                          const int8_t* r, int8_t* output) {
  const int32_t m = p.m, k = p.k, n = p.n;
  const uint32_t l_off2 = dsp::Pack16(p.lhs_offset, p.lhs_offset);
  const uint32_t r_off2 = dsp::Pack16(p.rhs_offset, p.rhs_offset);
  for (int32_t i = 0; i < m; ++i) {
    const int8_t* row = l + static_cast<ptrdiff_t>(i) * k;
    for (int32_t j = 0; j < n; j += 2) {
      const bool pair = j + 1 < n;
      const int8_t* c0 = r + static_cast<ptrdiff_t>(j) * k;
      const int8_t* c1 = pair ? c0 + k : c0;
      int32_t a0 = 0, a1 = 0;
      int32_t d = 0;
      for (; d + 4 <= k; d += 4) {
        uint32_t xe, xo, ye, yo, ze, zo;
        dsp::Widen4(dsp::Load32(row + d), l_off2, &xe, &xo);
        dsp::Widen4(dsp::Load32(c0 + d), r_off2, &ye, &yo);
        dsp::Widen4(dsp::Load32(c1 + d), r_off2, &ze, &zo);
        a0 = dsp::Smlad(xe, ye, a0);
        a0 = dsp::Smlad(xo, yo, a0);
        a1 = dsp::Smlad(xe, ze, a1);
        a1 = dsp::Smlad(xo, zo, a1);
      }
      for (; d < k; ++d) {
        a0 += (row[d] + p.lhs_offset) * (c0[d] + p.rhs_offset);
        a1 += (row[d] + p.lhs_offset) * (c1[d] + p.rhs_offset);
      }
      const int32_t v0 = AddZeroPoint(
          MultiplyByQuantizedMultiplierNonNeg(a0, p.requant.multiplier, p.requant.shift),
          p.output_offset);
      *output++ = static_cast<int8_t>(Clamp(v0, p.activation.min, p.activation.max));
      if (pair) {
        const int32_t v1 = AddZeroPoint(
            MultiplyByQuantizedMultiplierNonNeg(a1, p.requant.multiplier, p.requant.shift),
            p.output_offset);
        *output++ = static_cast<int8_t>(Clamp(v1, p.activation.min, p.activation.max));
      }
    }
  }
}

}  // namespace

KernelStatus BatchMatMulDsp(const BatchMatMulParams& p, const int8_t* lhs, const int8_t* rhs,
                            int8_t* output, Scratch scratch) {
  return BatchMatMulContiguous(
      p, lhs, rhs, output, scratch, Isa::kDsp,
      [&](const int8_t* l, const int8_t* r, int8_t* out) { MatMulDsp(p, l, r, out); });
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
