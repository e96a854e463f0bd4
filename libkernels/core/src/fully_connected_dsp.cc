// FullyConnected / FullyConnected16x8, DSP bodies: two weight rows per pass over the input;
// int8 input and weights widened to int16 pairs with SXTAB16 (offsets folded in), SMLAD into
// int32 (SMLALD into int64 for 16x8, weights repacked with PKHBT/PKHTB).
#include "fully_connected_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int16_t Finish16(int64_t acc, const int64_t* bias, int32_t o, const PerChannelRequant& q,
                        const FullyConnectedParams& p) {
  if (bias != nullptr) acc += bias[o];
  const int32_t c = p.per_channel ? o : 0;
  const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[c], q.shift[c]);
  return static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
}

}  // namespace

KernelStatus FullyConnectedDsp(const FullyConnectedParams& p, const PerChannelRequant& q,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch,
                                              FullyConnectedScratchBytes(p, Isa::kDsp), false);
  if (st != KernelStatus::kOk) return st;
  const int32_t depth = p.input_depth;
  const int32_t xo = p.input_offset, wo = p.filter_offset;
  const uint32_t x_off2 = dsp::Pack16(xo, xo), w_off2 = dsp::Pack16(wo, wo);
  // Requantization parameters in locals: the output stores could alias them.
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const bool per_channel = p.per_channel;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int32_t acc, int32_t o) {
    if (bias != nullptr) acc += bias[o];
    const int32_t c = per_channel ? o : 0;
    const int32_t v = AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, mult[c], shift[c]), out_off);
    return static_cast<int8_t>(Clamp(v, lo, hi));
  };
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    int32_t o = 0;
    for (; o < p.output_depth; o += 2) {
      const bool pair = o + 1 < p.output_depth;
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      const int8_t* w1 = pair ? w0 + depth : w0;
      int32_t a0 = 0, a1 = 0;
      int32_t d = 0;
#if MICA_KERNELS_HAVE_DSP
      // Eight elements per iteration in assembly: GCC either tests the loop every four
      // elements or, unrolled, spills the accumulators (28 instructions per eight here against
      // 30 or more). Same arithmetic as the loop below.
      if (depth >= 8) {
        const int8_t* xp = x;
        const int8_t* const x_end = x + (depth & ~7);
        const int8_t* u0 = w0;
        const int8_t* u1 = w1;
        uint32_t xe, xodd, t, u;
        __asm__ volatile(
            "1:\n\t"
            "ldr %[t], [%[xp]], #4\n\t"
            "ldr %[u], [%[u0]], #4\n\t"
            "sxtab16 %[xe], %[xoff], %[t]\n\t"
            "sxtab16 %[xodd], %[xoff], %[t], ror #8\n\t"
            "sxtab16 %[t], %[woff], %[u]\n\t"
            "smlad %[a0], %[xe], %[t], %[a0]\n\t"
            "sxtab16 %[t], %[woff], %[u], ror #8\n\t"
            "smlad %[a0], %[xodd], %[t], %[a0]\n\t"
            "ldr %[u], [%[u1]], #4\n\t"
            "sxtab16 %[t], %[woff], %[u]\n\t"
            "smlad %[a1], %[xe], %[t], %[a1]\n\t"
            "sxtab16 %[t], %[woff], %[u], ror #8\n\t"
            "smlad %[a1], %[xodd], %[t], %[a1]\n\t"
            "ldr %[t], [%[xp]], #4\n\t"
            "ldr %[u], [%[u0]], #4\n\t"
            "sxtab16 %[xe], %[xoff], %[t]\n\t"
            "sxtab16 %[xodd], %[xoff], %[t], ror #8\n\t"
            "sxtab16 %[t], %[woff], %[u]\n\t"
            "smlad %[a0], %[xe], %[t], %[a0]\n\t"
            "sxtab16 %[t], %[woff], %[u], ror #8\n\t"
            "smlad %[a0], %[xodd], %[t], %[a0]\n\t"
            "ldr %[u], [%[u1]], #4\n\t"
            "sxtab16 %[t], %[woff], %[u]\n\t"
            "smlad %[a1], %[xe], %[t], %[a1]\n\t"
            "sxtab16 %[t], %[woff], %[u], ror #8\n\t"
            "smlad %[a1], %[xodd], %[t], %[a1]\n\t"
            "cmp %[xp], %[x_end]\n\t"
            "bne 1b"
            : [xp] "+r"(xp), [u0] "+r"(u0), [u1] "+r"(u1), [a0] "+r"(a0), [a1] "+r"(a1),
              [xe] "=&r"(xe), [xodd] "=&r"(xodd), [t] "=&r"(t), [u] "=&r"(u)
            : [x_end] "r"(x_end), [xoff] "r"(x_off2), [woff] "r"(w_off2)
            : "cc", "memory");
        d = depth & ~7;
      }
#endif
      for (; d + 4 <= depth; d += 4) {
        uint32_t xe, xodd, w0e, w0o, w1e, w1o;
        dsp::Widen4(dsp::Load32(x + d), x_off2, &xe, &xodd);
        dsp::Widen4(dsp::Load32(w0 + d), w_off2, &w0e, &w0o);
        dsp::Widen4(dsp::Load32(w1 + d), w_off2, &w1e, &w1o);
        a0 = dsp::Smlad(xe, w0e, a0);
        a0 = dsp::Smlad(xodd, w0o, a0);
        a1 = dsp::Smlad(xe, w1e, a1);
        a1 = dsp::Smlad(xodd, w1o, a1);
      }
      for (; d < depth; ++d) {
        a0 += (w0[d] + wo) * (x[d] + xo);
        a1 += (w1[d] + wo) * (x[d] + xo);
      }
      *output++ = finish(a0, o);
      if (pair) *output++ = finish(a1, o + 1);
    }
  }
  return KernelStatus::kOk;
}

KernelStatus FullyConnected16x8Dsp(const FullyConnectedParams& p, const PerChannelRequant& q,
                                   const int16_t* input, const int8_t* weights,
                                   const int64_t* bias, int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch,
                                              FullyConnected16x8ScratchBytes(p, Isa::kDsp), true);
  if (st != KernelStatus::kOk) return st;
  const int32_t depth = p.input_depth;
  const int32_t wo = p.filter_offset;
  const uint32_t w_off2 = dsp::Pack16(wo, wo);
  for (int32_t b = 0; b < p.batches; ++b) {
    const int16_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    for (int32_t o = 0; o < p.output_depth; ++o) {
      const int8_t* w = weights + static_cast<ptrdiff_t>(o) * depth;
      int64_t acc = 0;
      int32_t d = 0;
      for (; d + 4 <= depth; d += 4) {
        uint32_t we, wodd;
        dsp::Widen4(dsp::Load32(w + d), w_off2, &we, &wodd);
        acc = dsp::Smlald(dsp::Load32(x + d), dsp::Pkhbt(we, wodd), acc);
        acc = dsp::Smlald(dsp::Load32(x + d + 2), dsp::Pkhtb(wodd, we), acc);
      }
      for (; d < depth; ++d) acc += int64_t{w[d] + wo} * x[d];
      *output++ = Finish16(acc, bias, o, q, p);
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
