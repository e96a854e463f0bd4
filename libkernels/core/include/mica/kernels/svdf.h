// mica kernels — SVDF, int8 input/output with int16 (or int8) activation state, bit-exact with
// TFLite Micro's reference integer SVDF (EvalIntegerSvdfReference).
//
// Per call (one time step): the state of every batch shifts left by one step, the feature
// matmul of the input writes the newest column, the time matmul reduces each filter's memory,
// ranks are summed per unit, the bias added and the result requantized to int8.
//
// How TFLite computes these parameters:
//   effective_scale_1 = QuantizeMultiplier(double(float(s_input * s_weights_feature / s_state)))
//   effective_scale_2 = QuantizeMultiplier(double(float(s_state * s_weights_time / s_output)))
//     (both products are float32 arithmetic in TFLite Micro)
//   input_zero_point, state_zero_point (0 for int16 state), output_zero_point from the tensors
//     (each within its tensor type's range; a call with one outside is refused).
//   The fused activation is not applied by the integer kernel (TFLite Micro's behaviour): the
//   output is clamped to [-128, 127] only.
// Layouts: input [batch][input_size]; weights_feature [num_filters][input_size];
// weights_time [num_filters][memory_size]; bias [num_units] (may be null);
// state [batch][num_filters][memory_size] (the variable tensor, updated in place);
// output [batch][num_units], num_units = num_filters / rank.
#ifndef MICA_KERNELS_SVDF_H_
#define MICA_KERNELS_SVDF_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct SvdfParams {
  int32_t batch = 1;
  int32_t input_size = 0;
  int32_t num_filters = 0;  // units * rank
  int32_t rank = 1;
  int32_t memory_size = 0;
  int32_t input_zero_point = 0;
  int32_t state_zero_point = 0;
  int32_t output_zero_point = 0;
  Requant effective_scale_1;  // feature matmul -> state
  Requant effective_scale_2;  // time matmul -> output
};

// Scratch (4-byte aligned): batch * num_filters + batch * num_units int32, for every Isa.
size_t SvdfScratchBytes(const SvdfParams& params, Isa isa);

KernelStatus Svdf(const SvdfParams& params, const int8_t* input, const int8_t* weights_feature,
                  const int16_t* weights_time, const int32_t* bias, int16_t* state,
                  int8_t* output, Scratch scratch);
// int8 time weights and activation state (TFLite Micro's second integer flavour).
KernelStatus SvdfInt8State(const SvdfParams& params, const int8_t* input,
                           const int8_t* weights_feature, const int8_t* weights_time,
                           const int32_t* bias, int8_t* state, int8_t* output, Scratch scratch);

using SvdfFn = KernelStatus (*)(const SvdfParams&, const int8_t*, const int8_t*, const int16_t*,
                                const int32_t*, int16_t*, int8_t*, Scratch);
VariantList<SvdfFn> SvdfVariants();
using SvdfInt8StateFn = KernelStatus (*)(const SvdfParams&, const int8_t*, const int8_t*,
                                         const int8_t*, const int32_t*, int8_t*, int8_t*,
                                         Scratch);
VariantList<SvdfInt8StateFn> SvdfInt8StateVariants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_SVDF_H_
