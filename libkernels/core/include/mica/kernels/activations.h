// mica kernels — activation functions, bit-exact with TFLite's reference kernels (TFLite
// Micro's choices where the two differ): LOGISTIC, TANH (int8 via gemmlowp fixed point, int16
// via TFLite's 256-entry sigmoid table), RELU / RELU_N1_TO_1 (requantizing), RELU6 (raw clamp),
// LEAKY_RELU, HARD_SWISH, PRELU. All elementwise over `n` elements (in place allowed, except
// PRELU which broadcasts).
//
// ---------------------------------------------------------------------------------------------
// How TFLite computes these parameters (the runtime does this at prepare time):
//
// LOGISTIC / TANH int8 (output: logistic zp -128 scale 1/256; tanh zp 0 scale 1/128):
//   kInputIntegerBits = 4
//   real = double(input_scale) * double(1 << (31 - 4))
//   q = frexp(real, &input_left_shift);  input_multiplier = int32(round(q * 2^31))
//       (TFLite Micro uses frexp directly: no correction when q rounds to 2^31)
//   input_range_radius = floor(((1 << 4) - 1) * 2^(31 - 4) / 2^input_left_shift)  -- double
//   input_zero_point = input zero point
// LOGISTIC / TANH int16 (zero points 0):
//   kInputIntegerBits = 3;  input_left_shift = (15 - 3) + log2(input_scale) when the scale is
//   a power of two (CheckedLog2) and that shift is 0 or 1: input_multiplier = 0 (the kernel then
//   uses 3 << input_left_shift). Otherwise:
//     m = double(input_scale) * 4096.0 * 3.0;  input_left_shift = 0
//     while (m <= 32767.0 / 2.0 && input_left_shift <= 30) { ++input_left_shift; m *= 2.0; }
//     input_multiplier = int32(m)   (truncation)
// RELU / RELU_N1_TO_1 / RELU with requantization (TFLite Micro's ReluQuantized):
//   input_zero_point = zp_in, output_offset = zp_out
//   output = QuantizeMultiplier(double(s_in) / double(s_out))
//   activation.min = max(type_min, zp_out + int(roundf(act_min / s_out)))   (act_min 0 or -1)
//   activation.max = act_max == inf ? type_max
//                                   : min(type_max, zp_out + int(roundf(act_max / s_out)))
// RELU6 (TFLite Micro): raw clamp to [zp_in, zp_in + round(6 / s_in)] (in the type's range):
//   Clamp(lo = zp_in, hi = FloatToQuantized(6.0f, s_in, zp_in)).
// LEAKY_RELU (int8 / int16):
//   alpha    = QuantizeMultiplier(double(float(s_in * alpha / s_out)))      -- float product
//   identity = QuantizeMultiplier(double(float(s_in / s_out)))
// HARD_SWISH int8 (all float32 in TFLite):
//   hires_input_scale = (1.0f / 128.0f) * s_in
//   QuantizeMultiplier(hires_input_scale / s_out) -> m, output_multiplier_exponent (must be <= 0)
//   output_multiplier_fixedpoint_int16 = HardSwishDownScaleMultiplier(m)
//   QuantizeMultiplier(hires_input_scale / (3.0f / 32768.0f)) -> m2, reluish_multiplier_exponent
//   reluish_multiplier_fixedpoint_int16 = HardSwishDownScaleMultiplier(m2)
// PRELU int8:
//   output1 = QuantizeMultiplier(double(s_in) / double(s_out))
//   output2 = QuantizeMultiplier(double(s_in) * double(s_alpha) / double(s_out))
//   input_offset = -zp_in, alpha_offset = -zp_alpha, output_offset = zp_out
// ---------------------------------------------------------------------------------------------
#ifndef MICA_KERNELS_ACTIVATIONS_H_
#define MICA_KERNELS_ACTIVATIONS_H_

#include <cstdint>
#include <limits>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct LogisticParams {
  int32_t input_zero_point = 0;
  int32_t input_range_radius = 0;
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;  // signed (frexp exponent)
};
using TanhParams = LogisticParams;

struct Logistic16Params {
  int32_t input_multiplier = 0;  // 0: power-of-two scale, the kernel uses 3 << left_shift
  int32_t input_left_shift = 0;  // >= 0 (a right shift applied after the multiply)
};
using Tanh16Params = Logistic16Params;

KernelStatus Logistic(const LogisticParams& params, int32_t n, const int8_t* input,
                      int8_t* output);
KernelStatus Tanh(const TanhParams& params, int32_t n, const int8_t* input, int8_t* output);
KernelStatus Logistic16(const Logistic16Params& params, int32_t n, const int16_t* input,
                        int16_t* output);
KernelStatus Tanh16(const Tanh16Params& params, int32_t n, const int16_t* input,
                    int16_t* output);

// out = clamp(output_offset + MBQM(in - input_zero_point, output), activation).
struct ReluParams {
  int32_t input_zero_point = 0;
  int32_t output_offset = 0;
  Requant output;
  ActivationRange activation;
};
KernelStatus Relu(const ReluParams& params, int32_t n, const int8_t* input, int8_t* output);
KernelStatus Relu16(const ReluParams& params, int32_t n, const int16_t* input,
                    int16_t* output);

// out = clamp(in, lo, hi) on raw values (RELU6 in TFLite Micro; any same-scale clamp).
KernelStatus Clamp(ActivationRange range, int32_t n, const int8_t* input, int8_t* output);
KernelStatus Clamp16(ActivationRange range, int32_t n, const int16_t* input, int16_t* output);

struct LeakyReluParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  Requant identity;  // for in >= zero point
  Requant alpha;     // for in < zero point
};
KernelStatus LeakyRelu(const LeakyReluParams& params, int32_t n, const int8_t* input,
                       int8_t* output);
KernelStatus LeakyRelu16(const LeakyReluParams& params, int32_t n, const int16_t* input,
                         int16_t* output);

struct HardSwishParams {
  int32_t input_zero_point = 0;
  int32_t output_zero_point = 0;
  int16_t reluish_multiplier_fixedpoint_int16 = 0;
  int32_t reluish_multiplier_exponent = 0;
  int16_t output_multiplier_fixedpoint_int16 = 0;
  int32_t output_multiplier_exponent = 0;  // <= 0
};
KernelStatus HardSwish(const HardSwishParams& params, int32_t n, const int8_t* input,
                       int8_t* output);

// TFLite's DownScaleInt32ToInt16Multiplier: Q31 multiplier (>= 0) to Q15, rounded.
constexpr int16_t HardSwishDownScaleMultiplier(int32_t multiplier_q31) {
  return multiplier_q31 >= std::numeric_limits<int32_t>::max() - (1 << 15)
             ? std::numeric_limits<int16_t>::max()
             : static_cast<int16_t>((multiplier_q31 + (1 << 15)) >> 16);
}

struct PreluParams {
  int32_t input_offset = 0;  // -zp_in
  int32_t alpha_offset = 0;  // -zp_alpha
  int32_t output_offset = 0; // zp_out
  Requant output1;           // in >= 0
  Requant output2;           // in < 0: (in * alpha)
};
// alpha broadcasts against the input (NumPy rules, rank <= 6); output has the input's shape.
KernelStatus Prelu(const PreluParams& params, const Shape& input_shape, const int8_t* input,
                   const Shape& alpha_shape, const int8_t* alpha, int8_t* output);

using LogisticFn = KernelStatus (*)(const LogisticParams&, int32_t, const int8_t*, int8_t*);
VariantList<LogisticFn> LogisticVariants();
VariantList<LogisticFn> TanhVariants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ACTIVATIONS_H_
