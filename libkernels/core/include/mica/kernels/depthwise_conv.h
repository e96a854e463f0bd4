// mica kernels — depthwise 2-D convolution, int8 (per-channel requantization) and 16x8,
// bit-exact with TFLite's reference kernels.
//
//   DepthwiseConvParams p;
//   p.input = {1, 25, 5, 64};  p.filter = {1, 3, 3, 64};  p.output = {1, 25, 5, 64};
//   p.padding = {1, 1};  p.input_offset = 128;  p.output_offset = -128;
//   KernelStatus st = DepthwiseConv(p, {mult, shift}, in, filter, bias, out, scratch);
//
// Layouts: input/output NHWC; filter 1HW(C*M): output channel oc = ic * M + m reads input
// channel ic (M = depth_multiplier). `bias` may be null. Scratch, when a body needs it, must
// be 4-byte aligned.
#ifndef MICA_KERNELS_DEPTHWISE_CONV_H_
#define MICA_KERNELS_DEPTHWISE_CONV_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct DepthwiseConvParams {
  Dims input;   // NHWC
  Dims filter;  // n = 1, h/w = kernel, c = output channels (input.c * depth_multiplier)
  Dims output;  // NHWC
  int32_t depth_multiplier = 1;
  Stride2D stride;
  Dilation2D dilation;
  Pad2D padding;              // top / left
  int32_t input_offset = 0;   // -input zero point (0 for 16x8)
  int32_t output_offset = 0;  // output zero point (0 for 16x8)
  ActivationRange activation;
};

KernelStatus DepthwiseConv(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                           const int8_t* input, const int8_t* filter, const int32_t* bias,
                           int8_t* output, Scratch scratch);
size_t DepthwiseConvScratchBytes(const DepthwiseConvParams& params, Isa isa);

KernelStatus DepthwiseConv16x8(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                               const int16_t* input, const int8_t* filter, const int64_t* bias,
                               int16_t* output, Scratch scratch);
size_t DepthwiseConv16x8ScratchBytes(const DepthwiseConvParams& params, Isa isa);

using DepthwiseConvFn = KernelStatus (*)(const DepthwiseConvParams&, const PerChannelRequant&,
                                         const int8_t*, const int8_t*, const int32_t*, int8_t*,
                                         Scratch);
using DepthwiseConv16x8Fn = KernelStatus (*)(const DepthwiseConvParams&,
                                             const PerChannelRequant&, const int16_t*,
                                             const int8_t*, const int64_t*, int16_t*, Scratch);
VariantList<DepthwiseConvFn> DepthwiseConvVariants();
VariantList<DepthwiseConv16x8Fn> DepthwiseConv16x8Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_DEPTHWISE_CONV_H_
