// mica kernels — softmax over the innermost dimension, bit-exact with TFLite's reference
// kernels: int8 -> int8, int8 -> int16 (the fixed-point exp path, no lookup table) and
// int16 -> int16 (TFLite's two 513-entry interpolated lookup tables).
//
//   SoftmaxParams p{mult, left_shift, diff_min};
//   KernelStatus st = Softmax(p, rows, depth, in, out);   // rows * depth elements
//
// ---------------------------------------------------------------------------------------------
// How TFLite computes these parameters (the runtime does this at prepare time):
//
// int8 input (output int8 with zero point -128 and scale 1/256, or int16 with zero point
// -32768 and scale 1/65536):
//   kScaledDiffIntegerBits = 5
//   real = min(double(beta) * double(input_scale) * (1 << (31 - 5)), 2^31 - 1.0)
//   QuantizeMultiplierGreaterThanOne(real) -> input_beta_multiplier, input_beta_left_shift
//   diff_min = -floor(((1 << 5) - 1) * 2^(31 - 5) / 2^input_beta_left_shift)   -- in double
//   (TFLite's PreprocessSoftmaxScaling and CalculateInputRadius.)
//
// int16 input (zero point 0; output zero point 0, scale 1/32768):
//   real = double(input_scale) * double(beta) / (10.0 / 65535.0)
//   QuantizeMultiplier(real) -> input_multiplier, input_left_shift (signed)
//   exp_lut:  GenerateInt16Lut<float>(exp,               -10, 0, -1, 1, lut)
//   one_over_one_plus_x_lut: GenerateInt16Lut<float>(1 / (1 + x), 0, 1, -1, 1, lut)
//   TFLite Micro generates both tables in float; TFLite (non-micro) in double. Use float to
//   match the goldens (TFLite Micro).
// ---------------------------------------------------------------------------------------------
#ifndef MICA_KERNELS_SOFTMAX_H_
#define MICA_KERNELS_SOFTMAX_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct SoftmaxParams {
  int32_t input_beta_multiplier = 0;  // Q31, >= 2^30
  int32_t input_beta_left_shift = 0;  // >= 0
  int32_t diff_min = 0;               // <= 0; differences below it give probability 0
};

struct Softmax16Params {
  int32_t input_multiplier = 0;
  int32_t input_left_shift = 0;  // signed (TFLite's QuantizeMultiplier shift)
  const int16_t* exp_lut = nullptr;                  // 513 entries
  const int16_t* one_over_one_plus_x_lut = nullptr;  // 513 entries
};

constexpr int kInt16LutSize = 513;

// `rows` independent softmaxes of `depth` elements each.
KernelStatus Softmax(const SoftmaxParams& params, int32_t rows, int32_t depth,
                     const int8_t* input, int8_t* output);
KernelStatus SoftmaxInt8ToInt16(const SoftmaxParams& params, int32_t rows, int32_t depth,
                                const int8_t* input, int16_t* output);
KernelStatus Softmax16(const Softmax16Params& params, int32_t rows, int32_t depth,
                       const int16_t* input, int16_t* output);

// No softmax body needs scratch (the int16 body caches exp values in the output).
constexpr size_t SoftmaxScratchBytes(int32_t /*rows*/, int32_t /*depth*/, Isa /*isa*/) {
  return 0;
}

using SoftmaxFn = KernelStatus (*)(const SoftmaxParams&, int32_t, int32_t, const int8_t*,
                                   int8_t*);
VariantList<SoftmaxFn> SoftmaxVariants();
using SoftmaxInt8ToInt16Fn = KernelStatus (*)(const SoftmaxParams&, int32_t, int32_t,
                                              const int8_t*, int16_t*);
VariantList<SoftmaxInt8ToInt16Fn> SoftmaxInt8ToInt16Variants();

// TFLite's gen_lut for int16 -> int16 tables: 512 interpolation segments over
// [input_min, input_max] plus one end point, values scaled from [output_min, output_max] to
// int16, each base corrected by half the midpoint interpolation error. `func` is evaluated in
// FloatT (TFLite Micro: float with std::exp). Freestanding: only arithmetic and rounding.
template <typename FloatT>
void GenerateInt16Lut(FloatT (*func)(FloatT), FloatT input_min, FloatT input_max,
                      FloatT output_min, FloatT output_max, int16_t* lut) {
  // std::round: half away from zero.
  auto round = [](FloatT x) -> FloatT {
    const FloatT a = x < 0 ? -x : x;
    FloatT r = static_cast<FloatT>(static_cast<int64_t>(a + static_cast<FloatT>(0.5)));
    // a + 0.5 may round up in FloatT when a is just below a half: undo that case.
    if (r - a > static_cast<FloatT>(0.5)) r -= 1;
    return x < 0 ? -r : r;
  };
  const int nb_steps = 512;
  const FloatT step = (input_max - input_min) / nb_steps;
  const FloatT half_step = step / 2;
  const FloatT output_scaling_inv = static_cast<FloatT>(65536) / (output_max - output_min);
  const FloatT table_min = static_cast<FloatT>(-32768);
  const FloatT table_max = static_cast<FloatT>(32767);
  auto clamp = [&](FloatT v) { return v < table_min ? table_min : (v > table_max ? table_max : v); };
  for (int i = 0; i < nb_steps; ++i) {
    const FloatT val = func(input_min + i * step);
    const FloatT val_midpoint = func(input_min + i * step + half_step);
    const FloatT val_next = func(input_min + (i + 1) * step);
    const FloatT sample_val = round(val * output_scaling_inv);
    const FloatT midpoint_interp_val =
        round((val_next * output_scaling_inv + round(val * output_scaling_inv)) / 2);
    const FloatT midpoint_val = round(val_midpoint * output_scaling_inv);
    const FloatT midpoint_err = midpoint_interp_val - midpoint_val;
    const FloatT bias = round(midpoint_err / 2);
    lut[i] = static_cast<int16_t>(clamp(sample_val - bias));
  }
  lut[nb_steps] = static_cast<int16_t>(clamp(round(func(input_max) * output_scaling_inv)));
}

// TFLite's interpolated int16 table lookup (used by Softmax16; exposed for tests).
inline int16_t Int16LutLookup(int16_t value, const int16_t* lut) {
  const int index = 256 + (value >> 7);
  const int16_t offset = static_cast<int16_t>(value & 0x7f);
  const int16_t base = lut[index];
  const int16_t slope = static_cast<int16_t>(lut[index + 1] - lut[index]);
  const int16_t delta = static_cast<int16_t>((slope * offset + 64) >> 7);
  return static_cast<int16_t>(base + delta);
}

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_SOFTMAX_H_
