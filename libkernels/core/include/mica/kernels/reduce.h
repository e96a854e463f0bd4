// mica kernels — reductions over any set of axes (rank <= 6): MEAN and SUM (int8 / int16,
// TFLite's requantized-sum path) and REDUCE_MAX (raw values), bit-exact with TFLite Micro.
//
//   ReduceAxes axes;  axes.count = 2;  axes.axis[0] = 1;  axes.axis[1] = 2;   // H and W
//   MeanParams p{zp_in, zp_out, {mult, shift}};
//   KernelStatus st = Mean(p, in_shape, axes, in, out);   // out: in_shape with axes set to 1
//
// How TFLite computes these parameters:
//   MEAN / SUM: output = QuantizeMultiplier(double(s_in) / double(s_out)); zero points of the
//     input and output. The kernel (TFLite's QuantizedMeanOrSum) sums (int32) every reduced
//     element, and for MEAN folds 1/N into the multiplier:
//       shift = min(floor(log2(N)), 32, 31 + output.shift)
//       multiplier = int32((int64(multiplier) << shift) / N);  output.shift -= shift
//     then out = clamp(MBQM(sum - zp_in * N, multiplier, shift) + zp_out).
//     TFLite Micro takes this path for every int8 / int16 MEAN (newer releases; older ones
//     used a truncating integer average when input and output quantization were identical).
//   REDUCE_MAX: input and output share quantization; raw maximum.
// Axes may be negative (+= rank) and repeated (counted once), like TFLite's ResolveAxis.
// keep_dims does not change the output memory layout.
#ifndef MICA_KERNELS_REDUCE_H_
#define MICA_KERNELS_REDUCE_H_

#include <cstdint>

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {

struct ReduceAxes {
  int32_t count = 0;
  int32_t axis[kMaxRank] = {};
};

struct MeanParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  Requant output;
};

KernelStatus Mean(const MeanParams& params, const Shape& in_shape, const ReduceAxes& axes,
                  const int8_t* input, int8_t* output);
KernelStatus Mean16(const MeanParams& params, const Shape& in_shape, const ReduceAxes& axes,
                    const int16_t* input, int16_t* output);
KernelStatus Sum(const MeanParams& params, const Shape& in_shape, const ReduceAxes& axes,
                 const int8_t* input, int8_t* output);
KernelStatus Sum16(const MeanParams& params, const Shape& in_shape, const ReduceAxes& axes,
                   const int16_t* input, int16_t* output);
KernelStatus ReduceMax(const Shape& in_shape, const ReduceAxes& axes, const int8_t* input,
                       int8_t* output);
KernelStatus ReduceMax16(const Shape& in_shape, const ReduceAxes& axes, const int16_t* input,
                         int16_t* output);

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_REDUCE_H_
