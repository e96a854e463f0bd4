// FullyConnected, MVE (Helium) body: four weight rows per pass with VMLADAVA.S8 on raw int8
// lanes; offsets folded in exactly (mod 2^32) from the weight-row sums and the input sum:
// sum (w + wo)(x + xo) = sum wx + xo sum w + wo sum x + n wo xo.
#include "fully_connected_internal.h"
#include "internal/mve_helpers.h"
#include "internal/requantize.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {

KernelStatus FullyConnectedMve(const FullyConnectedParams& p, const PerChannelRequant& q,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch,
                                              FullyConnectedScratchBytes(p, Isa::kMve), false);
  if (st != KernelStatus::kOk) return st;
  const int32_t depth = p.input_depth;
  const auto finish = [&](int32_t dot, int32_t wsum, int32_t xsum, int32_t o) {
    int32_t acc = mve::AddScaled(dot, p.input_offset, wsum);
    acc = mve::AddScaled(acc, p.filter_offset, xsum);
    acc = mve::AddScaled(acc, p.filter_offset * p.input_offset, depth);
    if (bias != nullptr) acc += bias[o];
    const int32_t c = p.per_channel ? o : 0;
    const int32_t v =
        AddZeroPoint(MultiplyByQuantizedMultiplierNonNeg(acc, q.multiplier[c], q.shift[c]), p.output_offset);
    return static_cast<int8_t>(Clamp(v, p.activation.min, p.activation.max));
  };
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    const int32_t xsum = p.filter_offset != 0 ? mve::SumS8(x, depth) : 0;
    int32_t o = 0;
    for (; o + 4 <= p.output_depth; o += 4) {
      const int8_t* w = weights + static_cast<ptrdiff_t>(o) * depth;
      int32_t dot[4] = {0, 0, 0, 0}, wsum[4] = {0, 0, 0, 0};
      mve::DotS8x4(x, w, w + depth, w + 2 * depth, w + 3 * depth, depth, dot, wsum);
      for (int r = 0; r < 4; ++r) *output++ = finish(dot[r], wsum[r], xsum, o + r);
    }
    for (; o < p.output_depth; ++o) {
      int32_t dot = 0, wsum = 0;
      mve::DotS8(x, weights + static_cast<ptrdiff_t>(o) * depth, depth, &dot, &wsum);
      *output++ = finish(dot, wsum, xsum, o);
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
