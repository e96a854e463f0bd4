// Private: the variant bodies of FullyConnected/FullyConnected16x8 and their argument check.
#ifndef MICA_KERNELS_FULLY_CONNECTED_INTERNAL_H_
#define MICA_KERNELS_FULLY_CONNECTED_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/fully_connected.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus FullyConnectedScalar(const FullyConnectedParams& params,
                                  const PerChannelRequant& quant, const int8_t* input,
                                  const int8_t* weights, const int32_t* bias, int8_t* output,
                                  Scratch scratch);
KernelStatus FullyConnectedDsp(const FullyConnectedParams& params, const PerChannelRequant& quant,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch);
KernelStatus FullyConnectedMve(const FullyConnectedParams& params, const PerChannelRequant& quant,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch);
KernelStatus FullyConnected16x8Scalar(const FullyConnectedParams& params,
                                      const PerChannelRequant& quant, const int16_t* input,
                                      const int8_t* weights, const int64_t* bias,
                                      int16_t* output, Scratch scratch);
KernelStatus FullyConnected16x8Dsp(const FullyConnectedParams& params,
                                   const PerChannelRequant& quant, const int16_t* input,
                                   const int8_t* weights, const int64_t* bias, int16_t* output,
                                   Scratch scratch);
KernelStatus FullyConnected16x8Mve(const FullyConnectedParams& params,
                                   const PerChannelRequant& quant, const int16_t* input,
                                   const int8_t* weights, const int64_t* bias, int16_t* output,
                                   Scratch scratch);

KernelStatus CheckFullyConnected(const FullyConnectedParams& p, const PerChannelRequant& quant,
                                 const void* input, const void* weights, void* output,
                                 const Scratch& scratch, size_t scratch_needed, bool wide);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_FULLY_CONNECTED_INTERNAL_H_
