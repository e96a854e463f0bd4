// FullyConnected / FullyConnected16x8, DSP bodies: two weight rows per pass over the input;
// int8 input (widened once per row into scratch) and weights widened to int16 pairs with
// SXTAB16 (offsets folded in), SMLAD into int32 (SMLALD into int64 for 16x8, weights repacked
// with PKHBT/PKHTB).
#include "fully_connected_internal.h"
#include "internal/checks.h"
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

// Widens one input row into int16 (offset folded in) for the complete blocks of 4, each stored
// permuted ({x0, x2}, {x1, x3}: the lane order SXTB16 / SXTB16 ROR 8 give the weights), once
// for all the rows that read it.
inline void WidenInput(const int8_t* x, int32_t blocks, uint32_t off2, uint32_t* wide) {
  for (; blocks > 0; --blocks, x += 4, wide += 2) {
    dsp::Widen4(dsp::Load32(x), off2, &wide[0], &wide[1]);
  }
}

// Two weight rows (w0, w1) against the widened input (`blocks` blocks of 4): acc0, acc1 += the
// dot products with the weight offset folded in (SXTAB16).
inline void DotRows2(const uint32_t* xw, const int8_t* w0, const int8_t* w1, int32_t blocks,
                     uint32_t w_off2, int32_t* acc0, int32_t* acc1) {
  int32_t a0 = *acc0, a1 = *acc1;
#if MICA_KERNELS_HAVE_DSP
  // Two blocks per iteration in assembly: LDRD for the input's two words, one loop test per
  // sixteen MACs (GCC loads the words one at a time). Same arithmetic as the loop below.
  if (blocks >= 2) {
    const uint32_t* const x_end = xw + 2 * (blocks & ~1);
    uint32_t xe, xodd, t, u;
    __asm__ volatile(
        "1:\n\t"
        "ldrd %[xe], %[xodd], [%[xp]], #8\n\t"
        "ldr %[t], [%[u0]], #4\n\t"
        "sxtab16 %[u], %[woff], %[t]\n\t"
        "sxtab16 %[t], %[woff], %[t], ror #8\n\t"
        "smlad %[a0], %[xe], %[u], %[a0]\n\t"
        "smlad %[a0], %[xodd], %[t], %[a0]\n\t"
        "ldr %[t], [%[u1]], #4\n\t"
        "sxtab16 %[u], %[woff], %[t]\n\t"
        "sxtab16 %[t], %[woff], %[t], ror #8\n\t"
        "smlad %[a1], %[xe], %[u], %[a1]\n\t"
        "smlad %[a1], %[xodd], %[t], %[a1]\n\t"
        "ldrd %[xe], %[xodd], [%[xp]], #8\n\t"
        "ldr %[t], [%[u0]], #4\n\t"
        "sxtab16 %[u], %[woff], %[t]\n\t"
        "sxtab16 %[t], %[woff], %[t], ror #8\n\t"
        "smlad %[a0], %[xe], %[u], %[a0]\n\t"
        "smlad %[a0], %[xodd], %[t], %[a0]\n\t"
        "ldr %[t], [%[u1]], #4\n\t"
        "sxtab16 %[u], %[woff], %[t]\n\t"
        "sxtab16 %[t], %[woff], %[t], ror #8\n\t"
        "smlad %[a1], %[xe], %[u], %[a1]\n\t"
        "smlad %[a1], %[xodd], %[t], %[a1]\n\t"
        "cmp %[xp], %[x_end]\n\t"
        "bne 1b"
        : [xp] "+r"(xw), [u0] "+r"(w0), [u1] "+r"(w1), [a0] "+r"(a0), [a1] "+r"(a1),
          [xe] "=&r"(xe), [xodd] "=&r"(xodd), [t] "=&r"(t), [u] "=&r"(u)
        : [x_end] "r"(x_end), [woff] "r"(w_off2)
        : "cc", "memory");
    blocks &= 1;
  }
#endif
  for (; blocks > 0; --blocks, xw += 2, w0 += 4, w1 += 4) {
    uint32_t w0e, w0o, w1e, w1o;
    dsp::Widen4(dsp::Load32(w0), w_off2, &w0e, &w0o);
    dsp::Widen4(dsp::Load32(w1), w_off2, &w1e, &w1o);
    a0 = dsp::Smlad(xw[1], w0o, dsp::Smlad(xw[0], w0e, a0));
    a1 = dsp::Smlad(xw[1], w1o, dsp::Smlad(xw[0], w1e, a1));
  }
  *acc0 = a0;
  *acc1 = a1;
}

// Two weight rows against the int8 input read in place (no scratch: a plan sized for another
// variant), both widened per block.
inline void DotRows2Direct(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t blocks,
                           uint32_t x_off2, uint32_t w_off2, int32_t* acc0, int32_t* acc1) {
  int32_t a0 = *acc0, a1 = *acc1;
  for (; blocks > 0; --blocks, x += 4, w0 += 4, w1 += 4) {
    uint32_t xe, xodd, w0e, w0o, w1e, w1o;
    dsp::Widen4(dsp::Load32(x), x_off2, &xe, &xodd);
    dsp::Widen4(dsp::Load32(w0), w_off2, &w0e, &w0o);
    dsp::Widen4(dsp::Load32(w1), w_off2, &w1e, &w1o);
    a0 = dsp::Smlad(xodd, w0o, dsp::Smlad(xe, w0e, a0));
    a1 = dsp::Smlad(xodd, w1o, dsp::Smlad(xe, w1e, a1));
  }
  *acc0 = a0;
  *acc1 = a1;
}

// kMode: the call's RequantMode. kWide: `wide` is scratch for the widened input row (else
// null: the input is read in place).
template <int kMode, bool kWide>
void FullyConnectedInt8(const FullyConnectedParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* weights, const int32_t* bias,
                        int8_t* output, uint32_t* wide) {
  const int32_t depth = p.input_depth, blocks = depth / 4;
  const int32_t xo = p.input_offset, wo = p.filter_offset;
  const uint32_t x_off2 = dsp::Pack16(xo, xo), w_off2 = dsp::Pack16(wo, wo);
  // Requantization parameters in locals: the output stores could alias them.
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t channel_mask = p.per_channel ? -1 : 0;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int32_t acc, int32_t o) {
    if (bias != nullptr) acc += bias[o];
    const int32_t c = o & channel_mask;
    return RequantInt8<kMode>(acc, mult[c], shift[c], out_off, lo, hi);
  };
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    if (kWide) WidenInput(x, blocks, x_off2, wide);
    for (int32_t o = 0; o < p.output_depth; o += 2) {
      const bool pair = o + 1 < p.output_depth;
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      const int8_t* w1 = pair ? w0 + depth : w0;
      int32_t a0 = 0, a1 = 0;
      if (kWide) {
        DotRows2(wide, w0, w1, blocks, w_off2, &a0, &a1);
      } else {
        DotRows2Direct(x, w0, w1, blocks, x_off2, w_off2, &a0, &a1);
      }
      for (int32_t d = 4 * blocks; d < depth; ++d) {
        a0 += (w0[d] + wo) * (x[d] + xo);
        a1 += (w1[d] + wo) * (x[d] + xo);
      }
      *output++ = finish(a0, o);
      if (pair) *output++ = finish(a1, o + 1);
    }
  }
}

}  // namespace

// Two weight rows per pass over the input row, widened once per batch row into scratch when the
// caller gives FullyConnectedScratchBytes; without it (a plan sized for another variant) each
// pass widens the input again.
KernelStatus FullyConnectedDsp(const FullyConnectedParams& p, const PerChannelRequant& q,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch, 0, false);
  if (st != KernelStatus::kOk) return st;
  // The filter offset widens each weight factor to at most 255 + 255 = 510 in magnitude; the
  // bound counts 128 per weight, so it takes four taps per input element.
  const bool bounded =
      BoundedRequantOk(int64_t{p.input_depth} * (p.filter_offset == 0 ? 1 : 4), p.input_offset,
                       bias, p.output_depth, q.shift, p.per_channel ? p.output_depth : 1);
  const size_t want = FullyConnectedScratchBytes(p, Isa::kDsp);
  uint32_t* const wide =
      want > 0 && ScratchOk(scratch, want) ? static_cast<uint32_t*>(scratch.buf) : nullptr;
  if (wide == nullptr) {  // the uncommon case: one instantiation, the general requantization
    FullyConnectedInt8<kRequantGeneric, false>(p, q, input, weights, bias, output, nullptr);
    return KernelStatus::kOk;
  }
  WithRequantMode(Requant8ModeOf(bounded, p.activation.min, p.activation.max), [&](auto mode) {
    FullyConnectedInt8<decltype(mode)::value, true>(p, q, input, weights, bias, output, wide);
  });
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
