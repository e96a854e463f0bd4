// mica kernels — transpose (fractionally strided) 2-D convolution, int8 and 16x8 with per-channel
// requantization, bit-exact with TFLite's reference kernel.
//
// Input pixel (iy, ix) adds input * filter[oc][ky][kx] to output pixel
// (iy * stride_h - pad_h + ky, ix * stride_w - pad_w + kx) when that pixel exists; then
// out = clamp(MBQM(sum + bias[oc]) + output_offset). Layouts: input/output NHWC, filter OHWI
// (O = output channels, I = input channels). `bias` may be null. No scratch is needed: the
// bodies gather per output pixel instead of scattering into an int32 buffer.
#ifndef MICA_KERNELS_TRANSPOSE_CONV_H_
#define MICA_KERNELS_TRANSPOSE_CONV_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct TransposeConvParams {
  Dims input;   // NHWC
  Dims filter;  // OHWI: n = output channels, c = input channels
  Dims output;  // NHWC
  Stride2D stride;
  Pad2D padding;  // TFLite's top/left padding of the output
  int32_t input_offset = 0;
  int32_t output_offset = 0;
  ActivationRange activation;
};

KernelStatus TransposeConv(const TransposeConvParams& params, const PerChannelRequant& quant,
                           const int8_t* input, const int8_t* filter, const int32_t* bias,
                           int8_t* output, Scratch scratch);
size_t TransposeConvScratchBytes(const TransposeConvParams& params, Isa isa);

using TransposeConvFn = KernelStatus (*)(const TransposeConvParams&, const PerChannelRequant&,
                                         const int8_t*, const int8_t*, const int32_t*, int8_t*,
                                         Scratch);
VariantList<TransposeConvFn> TransposeConvVariants();

// 16x8 (TFLite's int16 activations, int8 filters): int64 sums and bias, no offsets (both zero
// points are 0), TFLite's int64 requantization: out = clamp(MBQM64(sum + bias[oc])).
KernelStatus TransposeConv16x8(const TransposeConvParams& params, const PerChannelRequant& quant,
                               const int16_t* input, const int8_t* filter, const int64_t* bias,
                               int16_t* output, Scratch scratch);
size_t TransposeConv16x8ScratchBytes(const TransposeConvParams& params, Isa isa);

using TransposeConv16x8Fn = KernelStatus (*)(const TransposeConvParams&,
                                             const PerChannelRequant&, const int16_t*,
                                             const int8_t*, const int64_t*, int16_t*, Scratch);
VariantList<TransposeConv16x8Fn> TransposeConv16x8Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_TRANSPOSE_CONV_H_
