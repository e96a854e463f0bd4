// FullyConnected / FullyConnected16x8, scalar bodies.
#include "fully_connected_internal.h"
#include "internal/checks.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {

namespace {

// Two weight rows against one input row: X = int16 with the offset added (x_off 0) or the
// int8 input itself. Out of line so the loop keeps its registers.
template <typename X>
__attribute__((noinline)) void Dot2(const X* x, const int8_t* w0, const int8_t* w1, int32_t n,
                                    int32_t x_off, int32_t w_off, int32_t acc[2]) {
  int32_t a0 = 0, a1 = 0;
  const X* const end = x + n;
  while (x != end) {
    const int32_t xv = *x++ + x_off;
    a0 += (*w0++ + w_off) * xv;
    a1 += (*w1++ + w_off) * xv;
  }
  acc[0] = a0;
  acc[1] = a1;
}

// Four weight rows against one input row (X as for Dot2), for a zero weight offset (symmetric
// int8 weights, the usual case): one input load shared by four multiply-accumulates.
template <typename X>
__attribute__((noinline)) void Dot4(const X* x, const int8_t* w0, int32_t depth, int32_t x_off,
                                    int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int8_t* w1 = w0 + depth;
  const int8_t* w2 = w1 + depth;
  const int8_t* w3 = w2 + depth;
  const X* const end = x + depth;
  while (x != end) {
    const int32_t xv = *x++ + x_off;
    a0 += *w0++ * xv;
    a1 += *w1++ * xv;
    a2 += *w2++ * xv;
    a3 += *w3++ * xv;
  }
  acc[0] = a0;
  acc[1] = a1;
  acc[2] = a2;
  acc[3] = a3;
}

// kMode: the call's RequantMode. X: the input as the dot products read it (int16 with the
// offset added, from `xs`, or the int8 input with the offset added per element).
template <int kMode, typename X>
void FullyConnectedInt8(const FullyConnectedParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* weights, const int32_t* bias,
                        int8_t* output, X* xs) {
  const int32_t depth = p.input_depth, out_depth = p.output_depth;
  const int32_t xo = p.input_offset, wo = p.filter_offset;
  const int32_t x_off = sizeof(X) == 1 ? xo : 0;
  // Requantization parameters in locals: the output stores could alias them.
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  const int32_t channel_mask = p.per_channel ? -1 : 0;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    const X* xr;
    if constexpr (sizeof(X) == 1) {
      xr = x;
    } else {
      for (int32_t d = 0; d < depth; ++d) xs[d] = static_cast<X>(x[d] + xo);
      xr = xs;
    }
    for (int32_t o = 0; o < out_depth;) {
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      int32_t acc[4];
      int32_t rows;
      if (wo == 0 && o + 4 <= out_depth) {
        Dot4(xr, w0, depth, x_off, acc);
        rows = 4;
      } else {
        const bool two = o + 1 < out_depth;
        Dot2(xr, w0, two ? w0 + depth : w0, depth, x_off, wo, acc);
        rows = two ? 2 : 1;
      }
      for (int32_t r = 0; r < rows; ++r) {
        int32_t a = acc[r];
        if (bias != nullptr) a += bias[o + r];
        const int32_t c = (o + r) & channel_mask;
        *output++ = RequantInt8<kMode>(a, mult[c], shift[c], out_off, lo, hi);
      }
      o += rows;
    }
  }
}

}  // namespace

// The input row plus its offset goes to scratch (int16) once for all the weight rows when the
// caller gives FullyConnectedScratchBytes; without it (a plan sized for another variant) the
// offset is added per element.
KernelStatus FullyConnectedScalar(const FullyConnectedParams& p, const PerChannelRequant& q,
                                  const int8_t* input, const int8_t* weights, const int32_t* bias,
                                  int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch, 0, false);
  if (st != KernelStatus::kOk) return st;
  // The filter offset widens each weight factor to at most 255 + 255 = 510 in magnitude; the
  // bound counts 128 per weight, so it takes four taps per input element.
  const bool bounded =
      BoundedRequantOk(int64_t{p.input_depth} * (p.filter_offset == 0 ? 1 : 4), p.input_offset,
                       bias, p.output_depth, q.shift, p.per_channel ? p.output_depth : 1);
  const size_t want = FullyConnectedScratchBytes(p, Isa::kScalar);
  const bool widened = want > 0 && ScratchOk(scratch, want);
  int16_t* const xs = widened ? static_cast<int16_t*>(scratch.buf) : nullptr;
  if (!widened) {  // the uncommon case: one instantiation, the general requantization
    FullyConnectedInt8<kRequantGeneric, const int8_t>(p, q, input, weights, bias, output,
                                                      nullptr);
    return KernelStatus::kOk;
  }
  WithRequantMode(Requant8ModeOf(bounded, p.activation.min, p.activation.max), [&](auto mode) {
    FullyConnectedInt8<decltype(mode)::value>(p, q, input, weights, bias, output, xs);
  });
  return KernelStatus::kOk;
}

KernelStatus FullyConnected16x8Scalar(const FullyConnectedParams& p, const PerChannelRequant& q,
                                      const int16_t* input, const int8_t* weights,
                                      const int64_t* bias, int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(
      p, q, input, weights, output, scratch, FullyConnected16x8ScratchBytes(p, Isa::kScalar), true);
  if (st != KernelStatus::kOk) return st;
  const int32_t depth = p.input_depth;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int16_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    for (int32_t o = 0; o < p.output_depth; ++o) {
      const int8_t* w = weights + static_cast<ptrdiff_t>(o) * depth;
      int64_t acc = 0;
      for (int32_t d = 0; d < depth; ++d) acc += int64_t{w[d] + p.filter_offset} * x[d];
      if (bias != nullptr) acc += bias[o];
      const int32_t c = p.per_channel ? o : 0;
      const int32_t v = MultiplyByQuantizedMultiplier64(acc, q.multiplier[c], q.shift[c]);
      *output++ = static_cast<int16_t>(Clamp(v, p.activation.min, p.activation.max));
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
