// Variant bodies of the activation functions, and element helpers the LSTM reuses.
#ifndef MICA_KERNELS_ACTIVATIONS_INTERNAL_H_
#define MICA_KERNELS_ACTIVATIONS_INTERNAL_H_

#include <cstdint>

#include "mica/kernels/activations.h"

namespace mica {
namespace kernels {
namespace internal {

// TFLite's 256-entry sigmoid table (round(65536 * sigmoid(i / 24))).
const uint16_t* SigmoidTableUint16();

// One element of TFLite's int16 logistic / tanh with the effective (multiplier, shift, round)
// (after the power-of-two substitution multiplier = 3 << shift).
int16_t Logistic16Element(int32_t multiplier, int32_t shift, int32_t round, int16_t x);
int16_t Tanh16Element(int32_t multiplier, int32_t shift, int32_t round, int16_t x);

bool ValidLogistic(const LogisticParams& p);

KernelStatus LogisticScalar(const LogisticParams&, int32_t, const int8_t*, int8_t*);
KernelStatus TanhScalar(const TanhParams&, int32_t, const int8_t*, int8_t*);
KernelStatus Logistic16Scalar(const Logistic16Params&, int32_t, const int16_t*, int16_t*);
KernelStatus Tanh16Scalar(const Tanh16Params&, int32_t, const int16_t*, int16_t*);
KernelStatus ReluScalar(const ReluParams&, int32_t, const int8_t*, int8_t*);
KernelStatus Relu16Scalar(const ReluParams&, int32_t, const int16_t*, int16_t*);
KernelStatus ClampScalar(ActivationRange, int32_t, const int8_t*, int8_t*);
KernelStatus Clamp16Scalar(ActivationRange, int32_t, const int16_t*, int16_t*);
KernelStatus LeakyReluScalar(const LeakyReluParams&, int32_t, const int8_t*, int8_t*);
KernelStatus LeakyRelu16Scalar(const LeakyReluParams&, int32_t, const int16_t*, int16_t*);
KernelStatus HardSwishScalar(const HardSwishParams&, int32_t, const int8_t*, int8_t*);
KernelStatus PreluScalar(const PreluParams&, const Shape&, const int8_t*, const Shape&,
                         const int8_t*, int8_t*);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ACTIVATIONS_INTERNAL_H_
