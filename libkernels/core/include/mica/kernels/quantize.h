// mica kernels — QUANTIZE (float32 -> int8 / int16, and requantization between integer types)
// and DEQUANTIZE (int8 / int16 -> float32), bit-exact with TFLite's reference kernels.
//
// How TFLite computes these parameters:
//   Quantize from float: scale and zero point of the output tensor, used at run time as
//     out = clamp(int32(round_half_away(in / float(scale))) + zero_point)   -- float division
//   Requantize (QUANTIZE with an integer input):
//     output = QuantizeMultiplier(double(s_in) / double(s_out)); input_zero_point = zp_in,
//     output_zero_point = zp_out;  out = clamp(MBQM(in - zp_in, output) + zp_out)
//   Dequantize: out = float(double(scale) * (in - zero_point))   -- double product
#ifndef MICA_KERNELS_QUANTIZE_H_
#define MICA_KERNELS_QUANTIZE_H_

#include <cstdint>

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {

struct AffineQuant {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

KernelStatus Quantize(const AffineQuant& q, int32_t n, const float* input, int8_t* output);
KernelStatus Quantize16(const AffineQuant& q, int32_t n, const float* input, int16_t* output);
KernelStatus Dequantize(const AffineQuant& q, int32_t n, const int8_t* input, float* output);
KernelStatus Dequantize16(const AffineQuant& q, int32_t n, const int16_t* input,
                          float* output);

struct RequantizeParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  Requant output;
};
// The integer combinations TFLite Micro's QUANTIZE runs: int8 -> int8 / uint8 / int16 / int32,
// uint8 -> int8, int16 -> int8 / int16 / int32, int32 -> int8 / int16. As TFLite Micro, the
// subtraction of the input zero point and the addition of the output zero point wrap in 32 bits
// (only reachable with int32 operands far outside any real quantization).
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int8_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, uint8_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int16_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int8_t* in, int32_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const uint8_t* in, int8_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int8_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int16_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int16_t* in, int32_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int32_t* in, int8_t* out);
KernelStatus Requantize(const RequantizeParams& p, int32_t n, const int32_t* in, int16_t* out);

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_QUANTIZE_H_
