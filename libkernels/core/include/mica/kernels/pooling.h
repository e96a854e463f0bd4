// mica kernels — 2-D max and average pooling, int8 and int16, NHWC, bit-exact with TFLite's
// reference kernels.
//
//   PoolParams p;
//   p.input = {1, 8, 8, 64};  p.output = {1, 1, 1, 64};  p.filter_h = p.filter_w = 8;
//   p.stride = {8, 8};
//   KernelStatus st = AvgPool(p, in, out);
//
// How TFLite computes these parameters:
//   padding: top/left padding of TFLite's SAME / VALID scheme (PaddingBefore() in padding.h
//            with dilation 1); the output size comes from the tensor.
//   activation: the fused activation clamp in the output's quantized domain (input and output
//            share scale and zero point, which pooling does not otherwise use).
// Semantics: windows are clipped to the image (padding contributes nothing). AVERAGE_POOL_2D
// divides the raw sum by the number of valid taps rounding half away from zero; every output
// window must contain at least one input element (TFLite fails otherwise: so does this).
#ifndef MICA_KERNELS_POOLING_H_
#define MICA_KERNELS_POOLING_H_

#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct PoolParams {
  Dims input;   // NHWC
  Dims output;  // NHWC, output.n == input.n, output.c == input.c
  int32_t filter_h = 1, filter_w = 1;
  Stride2D stride;
  Pad2D padding;  // top / left
  ActivationRange activation;
};

KernelStatus MaxPool(const PoolParams& params, const int8_t* input, int8_t* output);
KernelStatus MaxPool16(const PoolParams& params, const int16_t* input, int16_t* output);
KernelStatus AvgPool(const PoolParams& params, const int8_t* input, int8_t* output);
KernelStatus AvgPool16(const PoolParams& params, const int16_t* input, int16_t* output);

using PoolFn = KernelStatus (*)(const PoolParams&, const int8_t*, int8_t*);
using Pool16Fn = KernelStatus (*)(const PoolParams&, const int16_t*, int16_t*);
VariantList<PoolFn> MaxPoolVariants();
VariantList<Pool16Fn> MaxPool16Variants();
VariantList<PoolFn> AvgPoolVariants();
VariantList<Pool16Fn> AvgPool16Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_POOLING_H_
