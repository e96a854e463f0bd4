// mica kernels — fully connected, int8 (per-tensor or per-channel weights) and 16x8,
// bit-exact with TFLite's reference kernels.
//
//   FullyConnectedParams p;
//   p.batches = 1;  p.input_depth = 640;  p.output_depth = 128;
//   p.input_offset = 7;  p.output_offset = -128;
//   KernelStatus st = FullyConnected(p, {&mult, &shift}, in, weights, bias, out, scratch);
//
// Layouts: input [batches][input_depth], weights [output_depth][input_depth], output
// [batches][output_depth]. int8: acc = sum (w + filter_offset) * (x + input_offset) + bias,
// out = clamp(MBQM(acc, mult, shift) + output_offset). With `per_channel`, `quant` holds one
// multiplier/shift per output and filter_offset must be 0 (TFLite: symmetric per-channel
// weights); else `quant` holds one. 16x8: int64 accumulator, TFLite's int64 requantization,
// input_offset and output_offset must be 0 (filter_offset applies, per-tensor only).
// `bias` may be null.
#ifndef MICA_KERNELS_FULLY_CONNECTED_H_
#define MICA_KERNELS_FULLY_CONNECTED_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct FullyConnectedParams {
  int32_t batches = 1;
  int32_t input_depth = 1;   // accumulation depth
  int32_t output_depth = 1;
  int32_t input_offset = 0;   // -input zero point
  int32_t filter_offset = 0;  // -weights zero point (per-tensor only)
  int32_t output_offset = 0;  // output zero point
  bool per_channel = false;
  ActivationRange activation;
};

KernelStatus FullyConnected(const FullyConnectedParams& params, const PerChannelRequant& quant,
                            const int8_t* input, const int8_t* weights, const int32_t* bias,
                            int8_t* output, Scratch scratch);
// Scalar and DSP: the input row as int16, 2 * input_depth bytes rounded up to a word, for 8 or
// more outputs; optional (with less, those bodies read the input in place, slower). MVE: none.
size_t FullyConnectedScratchBytes(const FullyConnectedParams& params, Isa isa);

KernelStatus FullyConnected16x8(const FullyConnectedParams& params,
                                const PerChannelRequant& quant, const int16_t* input,
                                const int8_t* weights, const int64_t* bias, int16_t* output,
                                Scratch scratch);
size_t FullyConnected16x8ScratchBytes(const FullyConnectedParams& params, Isa isa);

using FullyConnectedFn = KernelStatus (*)(const FullyConnectedParams&, const PerChannelRequant&,
                                          const int8_t*, const int8_t*, const int32_t*, int8_t*,
                                          Scratch);
using FullyConnected16x8Fn = KernelStatus (*)(const FullyConnectedParams&,
                                              const PerChannelRequant&, const int16_t*,
                                              const int8_t*, const int64_t*, int16_t*, Scratch);
VariantList<FullyConnectedFn> FullyConnectedVariants();
VariantList<FullyConnected16x8Fn> FullyConnected16x8Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_FULLY_CONNECTED_H_
