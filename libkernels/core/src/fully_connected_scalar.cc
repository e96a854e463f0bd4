// FullyConnected / FullyConnected16x8, scalar bodies.
#include "fully_connected_internal.h"
#include "internal/requantize.h"

namespace mica {
namespace kernels {
namespace internal {

namespace {

// Two weight rows against one input row, out of line so the loop keeps its registers.
__attribute__((noinline)) void Dot2(const int8_t* x, const int8_t* w0, const int8_t* w1,
                                    int32_t n, int32_t x_off, int32_t w_off, int32_t acc[2]) {
  int32_t a0 = 0, a1 = 0;
  const int8_t* const end = x + n;
  while (x != end) {
    const int32_t xv = *x++ + x_off;
    a0 += (*w0++ + w_off) * xv;
    a1 += (*w1++ + w_off) * xv;
  }
  acc[0] = a0;
  acc[1] = a1;
}

// Four weight rows against one input row, for a zero weight offset (symmetric int8 weights, the
// usual case): one input load and offset add shared by four multiply-accumulates.
__attribute__((noinline)) void Dot4(const int8_t* x, const int8_t* w0, int32_t depth, int32_t n,
                                    int32_t x_off, int32_t acc[4]) {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int8_t* w1 = w0 + depth;
  const int8_t* w2 = w1 + depth;
  const int8_t* w3 = w2 + depth;
  const int8_t* const end = x + n;
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

}  // namespace

KernelStatus FullyConnectedScalar(const FullyConnectedParams& p, const PerChannelRequant& q,
                                  const int8_t* input, const int8_t* weights, const int32_t* bias,
                                  int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch,
                                              FullyConnectedScratchBytes(p, Isa::kScalar), false);
  if (st != KernelStatus::kOk) return st;
  const int32_t depth = p.input_depth;
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    for (int32_t o = 0; o < p.output_depth;) {
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      int32_t acc[4];
      int32_t rows;
      if (p.filter_offset == 0 && o + 4 <= p.output_depth) {
        Dot4(x, w0, depth, depth, p.input_offset, acc);
        rows = 4;
      } else {
        const bool two = o + 1 < p.output_depth;
        Dot2(x, w0, two ? w0 + depth : w0, depth, p.input_offset, p.filter_offset, acc);
        rows = two ? 2 : 1;
      }
      for (int32_t r = 0; r < rows; ++r) {
        int32_t a = acc[r];
        if (bias != nullptr) a += bias[o + r];
        const int32_t c = p.per_channel ? o + r : 0;
        const int32_t v = AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(a, q.multiplier[c], q.shift[c]), p.output_offset);
        *output++ = static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
      }
      o += rows;
    }
  }
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
