// BatchMatMul, DSP body: operands made contiguous along K in scratch when needed (adj_x LHS,
// non-adj_y RHS), then row-by-row dot products of two RHS columns per pass, both operands
// widened with their offsets by SXTAB16 and accumulated with SMLAD.
#include "batch_matmul_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

// dst[c][r] = src[r][c] for a rows x cols int8 matrix.
void Transpose(const int8_t* src, int32_t rows, int32_t cols, int8_t* dst) {
  for (int32_t r = 0; r < rows; ++r) {
    for (int32_t c = 0; c < cols; ++c) {
      dst[static_cast<ptrdiff_t>(c) * rows + r] = src[r * cols + c];
    }
  }
}

}  // namespace

KernelStatus BatchMatMulDsp(const BatchMatMulParams& p, const int8_t* lhs, const int8_t* rhs,
                            int8_t* output, Scratch scratch) {
  const KernelStatus st =
      CheckBatchMatMul(p, lhs, rhs, output, scratch, BatchMatMulScratchBytes(p, Isa::kDsp));
  if (st != KernelStatus::kOk) return st;
  const int32_t m = p.m, k = p.k, n = p.n;
  const ptrdiff_t lhs_mat = static_cast<ptrdiff_t>(m) * k, rhs_mat = static_cast<ptrdiff_t>(k) * n;
  int8_t* lhs_t = static_cast<int8_t*>(scratch.buf);
  int8_t* rhs_t = p.adj_x ? lhs_t + lhs_mat : lhs_t;
  const uint32_t l_off2 = dsp::Pack16(p.lhs_offset, p.lhs_offset);
  const uint32_t r_off2 = dsp::Pack16(p.rhs_offset, p.rhs_offset);
  const int32_t batches = BatchMatMulBatches(p);
  int32_t cached_l = -1, cached_r = -1;
  for (int32_t b = 0; b < batches; ++b) {
    int32_t li, ri;
    BatchMatMulOperands(p, b, &li, &ri);
    const int8_t* l = lhs + li * lhs_mat;  // [m][k] after this block
    const int8_t* r = rhs + ri * rhs_mat;  // [n][k] after this block
    if (p.adj_x) {
      if (li != cached_l) Transpose(l, k, m, lhs_t);
      cached_l = li;
      l = lhs_t;
    }
    if (!p.adj_y) {
      if (ri != cached_r) Transpose(r, k, n, rhs_t);
      cached_r = ri;
      r = rhs_t;
    }
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
        const int32_t v0 =
            AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(a0, p.requant.multiplier, p.requant.shift), p.output_offset);
        *output++ = static_cast<int8_t>(Clamp(v0, p.activation.min, p.activation.max));
        if (pair) {
          const int32_t v1 =
              AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(a1, p.requant.multiplier, p.requant.shift), p.output_offset);
          *output++ = static_cast<int8_t>(Clamp(v1, p.activation.min, p.activation.max));
        }
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
