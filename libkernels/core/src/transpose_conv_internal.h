// Private: the variant bodies of TransposeConv and their argument check.
#ifndef MICA_KERNELS_TRANSPOSE_CONV_INTERNAL_H_
#define MICA_KERNELS_TRANSPOSE_CONV_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/transpose_conv.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus TransposeConvScalar(const TransposeConvParams& params, const PerChannelRequant& quant,
                                 const int8_t* input, const int8_t* filter, const int32_t* bias,
                                 int8_t* output, Scratch scratch);
KernelStatus TransposeConvDsp(const TransposeConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);
KernelStatus TransposeConvMve(const TransposeConvParams& params, const PerChannelRequant& quant,
                              const int8_t* input, const int8_t* filter, const int32_t* bias,
                              int8_t* output, Scratch scratch);

KernelStatus TransposeConv16x8Scalar(const TransposeConvParams& params,
                                     const PerChannelRequant& quant, const int16_t* input,
                                     const int8_t* filter, const int64_t* bias, int16_t* output,
                                     Scratch scratch);

// `wide`: the 16x8 form (no offsets, int16 activation range).
KernelStatus CheckTransposeConv(const TransposeConvParams& p, const PerChannelRequant& quant,
                                const void* input, const void* filter, void* output,
                                bool wide = false);

// Taps of one axis that reach output coordinate `o`: k = first, first + stride, ... < end,
// reading input coordinate (o + pad - k) / stride, which lies in [0, in_size).
inline void TransposeTaps(int32_t o, int32_t pad, int32_t stride, int32_t k_size, int32_t in_size,
                          int32_t* first, int32_t* end) {
  const int32_t t = o + pad;  // = i * stride + k
  int32_t k0 = t % stride;
  // i <= in_size - 1  <=>  k >= t - (in_size - 1) * stride
  const int32_t k_min = t - (in_size - 1) * stride;
  if (k0 < k_min) k0 += ((k_min - k0 + stride - 1) / stride) * stride;
  int32_t k_end = k_size < t + 1 ? k_size : t + 1;  // i >= 0  <=>  k <= t
  *first = k0;
  *end = k_end > k0 ? k_end : k0;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_TRANSPOSE_CONV_INTERNAL_H_
