// mica kernels — 2-D convolution, int8 (per-channel requantization) and 16x8 (int16
// activations, int8 weights, int64 bias), bit-exact with TFLite's reference kernels.
//
//   ConvParams p;
//   p.input = {1, 32, 32, 16};  p.filter = {16, 3, 3, 16};  p.output = {1, 32, 32, 16};
//   p.padding = {1, 1};  p.input_offset = 128;  p.output_offset = -128;
//   Scratch s{buf, ConvScratchBytes(p, DefaultIsa())};
//   KernelStatus st = Conv(p, {mult, shift}, in, filter, bias, out, s);
//
// Scratch, when a body needs it, must be 4-byte aligned.
//
// Layouts: input/output NHWC, filter OHWI (O = output channels, I = input channels per group;
// `input.c / filter.c` groups, each producing `output.c / groups` channels). Padding is the
// top/left padding; bottom/right is implied by the output size (TFLite's SAME / VALID rule is
// in mica/kernels/padding.h). Outside the image the input contributes nothing (TFLite's "zero
// padding" at the input zero point). `bias` may be null.
#ifndef MICA_KERNELS_CONV_H_
#define MICA_KERNELS_CONV_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct ConvParams {
  Dims input;   // NHWC
  Dims filter;  // OHWI: n = output channels, h/w = kernel, c = input channels per group
  Dims output;  // NHWC; output.n == input.n, output.c == filter.n
  Stride2D stride;
  Dilation2D dilation;
  Pad2D padding;             // top / left
  int32_t input_offset = 0;  // -input zero point (int8 only; must be 0 for 16x8)
  int32_t output_offset = 0; // output zero point (int8 only; must be 0 for 16x8)
  ActivationRange activation;
};

// int8: out = clamp(MBQM(bias + sum filter * (in + input_offset), mult[oc], shift[oc])
//                   + output_offset). `quant` has one multiplier/shift per output channel.
KernelStatus Conv(const ConvParams& params, const PerChannelRequant& quant, const int8_t* input,
                  const int8_t* filter, const int32_t* bias, int8_t* output, Scratch scratch);

// Scratch the body of `isa` needs for `params` (0 if none). Pure arithmetic: valid on the
// host for every Isa, whether or not it is compiled in.
size_t ConvScratchBytes(const ConvParams& params, Isa isa);

// 16x8: int64 accumulator, TFLite's int64 MultiplyByQuantizedMultiplier (multiplier reduced to
// Q15), no offsets; activation range within int16.
KernelStatus Conv16x8(const ConvParams& params, const PerChannelRequant& quant,
                      const int16_t* input, const int8_t* filter, const int64_t* bias,
                      int16_t* output, Scratch scratch);
size_t Conv16x8ScratchBytes(const ConvParams& params, Isa isa);

using ConvFn = KernelStatus (*)(const ConvParams&, const PerChannelRequant&, const int8_t*,
                                const int8_t*, const int32_t*, int8_t*, Scratch);
using Conv16x8Fn = KernelStatus (*)(const ConvParams&, const PerChannelRequant&,
                                    const int16_t*, const int8_t*, const int64_t*, int16_t*,
                                    Scratch);
VariantList<ConvFn> ConvVariants();
VariantList<Conv16x8Fn> Conv16x8Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_CONV_H_
