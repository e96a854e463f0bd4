// Variant bodies of the softmax ops.
#ifndef MICA_KERNELS_SOFTMAX_INTERNAL_H_
#define MICA_KERNELS_SOFTMAX_INTERNAL_H_

#include <cstdint>

#include "mica/kernels/softmax.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus SoftmaxScalar(const SoftmaxParams&, int32_t, int32_t, const int8_t*, int8_t*);
KernelStatus SoftmaxInt8ToInt16Scalar(const SoftmaxParams&, int32_t, int32_t, const int8_t*,
                                      int16_t*);
KernelStatus Softmax16Scalar(const Softmax16Params&, int32_t, int32_t, const int16_t*,
                             int16_t*);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_SOFTMAX_INTERNAL_H_
