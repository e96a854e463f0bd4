// Variant bodies of the pooling ops and their shared argument check.
#ifndef MICA_KERNELS_POOLING_INTERNAL_H_
#define MICA_KERNELS_POOLING_INTERNAL_H_

#include <cstdint>

#include "internal/requantize.h"
#include "mica/kernels/pooling.h"

namespace mica {
namespace kernels {
namespace internal {

// Shapes consistent, window/stride/padding sane, activation within [lo, hi], and every output
// window overlapping the image.
bool ValidPoolParams(const PoolParams& p, int32_t lo, int32_t hi);

KernelStatus MaxPoolScalar(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPool16Scalar(const PoolParams&, const int16_t*, int16_t*);
KernelStatus AvgPoolScalar(const PoolParams&, const int8_t*, int8_t*);
KernelStatus AvgPool16Scalar(const PoolParams&, const int16_t*, int16_t*);
KernelStatus AvgPoolDsp(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPoolDsp(const PoolParams&, const int8_t*, int8_t*);
KernelStatus AvgPoolMve(const PoolParams&, const int8_t*, int8_t*);
KernelStatus MaxPoolMve(const PoolParams&, const int8_t*, int8_t*);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_POOLING_INTERNAL_H_
