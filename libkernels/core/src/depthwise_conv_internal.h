// Private: the variant bodies of DepthwiseConv/DepthwiseConv16x8 and their argument check.
#ifndef MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_
#define MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "conv_internal.h"
#include "mica/kernels/depthwise_conv.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus DepthwiseConvScalar(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                                 const int8_t* input, const int8_t* filter, const int32_t* bias,
                                 int8_t* output, Scratch scratch);
KernelStatus DepthwiseConvDsp(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);
KernelStatus DepthwiseConvMve(const DepthwiseConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);
KernelStatus DepthwiseConv16x8Scalar(const DepthwiseConvParams& params,
                                     const PerChannelRequant& quant, const int16_t* input,
                                     const int8_t* filter, const int64_t* bias, int16_t* output,
                                     Scratch scratch);

KernelStatus DepthwiseConv16x8Dsp(const DepthwiseConvParams& params,
                                  const PerChannelRequant& quant, const int16_t* input,
                                  const int8_t* filter, const int64_t* bias, int16_t* output,
                                  Scratch scratch);

KernelStatus CheckDepthwiseConv(const DepthwiseConvParams& p, const PerChannelRequant& quant,
                                const void* input, const void* filter, void* output,
                                const Scratch& scratch, size_t scratch_needed, bool wide);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_DEPTHWISE_CONV_INTERNAL_H_
