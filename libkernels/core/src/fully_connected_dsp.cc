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

inline int8_t Finish(int32_t acc, const int32_t* bias, int32_t o, const PerChannelRequant& q,
                     const FullyConnectedParams& p) {
  if (bias != nullptr) acc += bias[o];
  const int32_t c = p.per_channel ? o : 0;
  const int32_t v =
      MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[c], q.shift[c]) + p.output_offset;
  return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
}

inline int16_t Finish16(int64_t acc, const int64_t* bias, int32_t o, const PerChannelRequant& q,
                        const FullyConnectedParams& p) {
  if (bias != nullptr) acc += bias[o];
  const int32_t c = p.per_channel ? o : 0;
  const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[c], q.shift[c]);
  return static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
}

// Four weight rows (depth apart, zero weight offset) against one input row, four depths a step:
// the input is widened once (offset folded in) for sixteen multiply-accumulates. Out of line so
// the loop gets the registers to itself. n is a multiple of 4.
__attribute__((noinline)) void Dot4Rows(const int8_t* x, const int8_t* w, int32_t depth,
                                        int32_t n, uint32_t x_off2, int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int8_t* w1 = w + depth;
  const int8_t* w2 = w1 + depth;
  const int8_t* w3 = w2 + depth;
  for (int32_t i = n >> 2; i > 0; --i, x += 4, w += 4, w1 += 4, w2 += 4, w3 += 4) {
    uint32_t xe, xodd;
    dsp::Widen4(dsp::Load32(x), x_off2, &xe, &xodd);
    uint32_t v = dsp::Load32(w);
    a0 = dsp::Smlad(xodd, dsp::Sxtb16Ror8(v), dsp::Smlad(xe, dsp::Sxtb16(v), a0));
    v = dsp::Load32(w1);
    a1 = dsp::Smlad(xodd, dsp::Sxtb16Ror8(v), dsp::Smlad(xe, dsp::Sxtb16(v), a1));
    v = dsp::Load32(w2);
    a2 = dsp::Smlad(xodd, dsp::Sxtb16Ror8(v), dsp::Smlad(xe, dsp::Sxtb16(v), a2));
    v = dsp::Load32(w3);
    a3 = dsp::Smlad(xodd, dsp::Sxtb16Ror8(v), dsp::Smlad(xe, dsp::Sxtb16(v), a3));
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
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
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    int32_t o = 0;
    if (wo == 0) {
      // Four rows at a time over the whole vectors of four; the depth tail per element.
      const int32_t whole = depth & ~3;
      for (; o + 4 <= p.output_depth; o += 4) {
        const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
        int32_t a[4];
        Dot4Rows(x, w0, depth, whole, x_off2, a);
        for (int32_t d = whole; d < depth; ++d) {
          const int32_t xv = x[d] + xo;
          for (int r = 0; r < 4; ++r) a[r] += w0[r * depth + d] * xv;
        }
        for (int r = 0; r < 4; ++r) *output++ = Finish(a[r], bias, o + r, q, p);
      }
    }
    for (; o < p.output_depth; o += 2) {
      const bool pair = o + 1 < p.output_depth;
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      const int8_t* w1 = pair ? w0 + depth : w0;
      int32_t a0 = 0, a1 = 0;
      int32_t d = 0;
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
      *output++ = Finish(a0, bias, o, q, p);
      if (pair) *output++ = Finish(a1, bias, o + 1, q, p);
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
