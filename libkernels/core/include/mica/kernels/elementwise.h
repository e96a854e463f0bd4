// mica kernels — binary elementwise ops with NumPy broadcasting (rank <= 6), int8 and int16,
// bit-exact with TFLite's reference kernels: ADD, SUB, MUL, MINIMUM, MAXIMUM,
// SQUARED_DIFFERENCE.
//
//   AddParams p = ...;                    // precomputed by the runtime, see below
//   Shape a{4, {1, 8, 8, 16}}, b{1, {16}}, o{4, {1, 8, 8, 16}};
//   KernelStatus st = Add(p, a, in1, b, in2, o, out);
//
// Shapes are outermost-first (TFLite order). Inputs broadcast against each other: after
// right-aligning the shapes, every dimension of an input is 1 or equal to the output's.
//
// ---------------------------------------------------------------------------------------------
// How TFLite computes these parameters (the runtime does this at prepare time):
//
// ADD (int8 / int16), TFLite's reference Add with the general (non power-of-two) int16 path:
//   input1_offset = -zp1, input2_offset = -zp2, output_offset = zp_out
//   left_shift = 20 (int8) or 15 (int16)
//   twice_max_input_scale = 2 * max(s1, s2)                          -- double
//   real_input1_multiplier = s1 / twice_max_input_scale              -- double
//   real_input2_multiplier = s2 / twice_max_input_scale              -- double
//   real_output_multiplier = twice_max_input_scale / ((1 << left_shift) * s_out)   -- double
//   input1 / input2 / output = QuantizeMultiplierSmallerThanOneExp(real_...) (shift <= 0)
//   activation = fused activation clamp in the output's quantized domain.
// SUB: the same, except TFLite Micro computes the three ratios in float32:
//   twice_max_input_scale = float(2 * max(s1, s2));  real_inputN = double(float(sN / twice_max))
//   real_output = double(float(twice_max / ((1 << left_shift) * s_out)))
// MUL (int8 / int16): real = double(s1) * double(s2) / double(s_out), QuantizeMultiplier
//   (shift may be positive); offsets as for ADD (int16 requires zero points 0).
// MINIMUM / MAXIMUM: no parameters (inputs and output share scale and zero point).
// SQUARED_DIFFERENCE (int8 / int16, TFLite Micro):
//   left_shift = 7 (int8) or 0 (int16; zero points must be 0)
//   twice_max_input_scale = 2 * double(max(s1, s2))
//   inputN = QuantizeMultiplierSmallerThanOneExp(double(sN) / twice_max_input_scale)
//   output = QuantizeMultiplier(twice_max^2 / double((1 << (2 * left_shift)) * s_out))
//            -- note (1 << 2*left_shift) * s_out is a float product; shift may be > 0
//   activation = the full range of the type (the fused activation is not applied).
//   The squared difference wraps modulo 2^32 like TFLite's int32 product.
// ---------------------------------------------------------------------------------------------
#ifndef MICA_KERNELS_ELEMENTWISE_H_
#define MICA_KERNELS_ELEMENTWISE_H_

#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

// ADD / SUB / SQUARED_DIFFERENCE: each input is offset, shifted left by `left_shift`, scaled by
// its own multiplier (shift <= 0), combined, then scaled by `output` and offset.
struct AddParams {
  int32_t input1_offset = 0;  // -zero point of input 1
  int32_t input2_offset = 0;  // -zero point of input 2
  int32_t output_offset = 0;  // zero point of the output
  int32_t left_shift = 20;    // 20 for int8, 15 for int16 (7 / 0 for squared difference)
  Requant input1;
  Requant input2;
  Requant output;
  ActivationRange activation;  // int8: within [-128, 127]; int16: within [-32768, 32767]
};
using SubParams = AddParams;
using SquaredDifferenceParams = AddParams;

// MUL: out = clamp(output_offset + MBQM((in1 + input1_offset) * (in2 + input2_offset), output)).
struct MulParams {
  int32_t input1_offset = 0;
  int32_t input2_offset = 0;
  int32_t output_offset = 0;
  Requant output;
  ActivationRange activation;
};

// All ops return kArgError when a rank exceeds kMaxRank, a dimension is negative, shapes do
// not broadcast to `out_shape`, a pointer is null (with elements > 0) or a shift is out of range.
KernelStatus Add(const AddParams& params, const Shape& in1_shape, const int8_t* in1,
                 const Shape& in2_shape, const int8_t* in2, const Shape& out_shape, int8_t* out);
KernelStatus Add16(const AddParams& params, const Shape& in1_shape, const int16_t* in1,
                   const Shape& in2_shape, const int16_t* in2, const Shape& out_shape,
                   int16_t* out);
KernelStatus Sub(const SubParams& params, const Shape& in1_shape, const int8_t* in1,
                 const Shape& in2_shape, const int8_t* in2, const Shape& out_shape, int8_t* out);
KernelStatus Sub16(const SubParams& params, const Shape& in1_shape, const int16_t* in1,
                   const Shape& in2_shape, const int16_t* in2, const Shape& out_shape,
                   int16_t* out);
KernelStatus Mul(const MulParams& params, const Shape& in1_shape, const int8_t* in1,
                 const Shape& in2_shape, const int8_t* in2, const Shape& out_shape, int8_t* out);
KernelStatus Mul16(const MulParams& params, const Shape& in1_shape, const int16_t* in1,
                   const Shape& in2_shape, const int16_t* in2, const Shape& out_shape,
                   int16_t* out);
KernelStatus SquaredDifference(const SquaredDifferenceParams& params, const Shape& in1_shape,
                               const int8_t* in1, const Shape& in2_shape, const int8_t* in2,
                               const Shape& out_shape, int8_t* out);
KernelStatus SquaredDifference16(const SquaredDifferenceParams& params, const Shape& in1_shape,
                                 const int16_t* in1, const Shape& in2_shape, const int16_t* in2,
                                 const Shape& out_shape, int16_t* out);

// MINIMUM / MAXIMUM on raw values (same quantization everywhere).
KernelStatus Minimum(const Shape& in1_shape, const int8_t* in1, const Shape& in2_shape,
                     const int8_t* in2, const Shape& out_shape, int8_t* out);
KernelStatus Maximum(const Shape& in1_shape, const int8_t* in1, const Shape& in2_shape,
                     const int8_t* in2, const Shape& out_shape, int8_t* out);
KernelStatus Minimum16(const Shape& in1_shape, const int16_t* in1, const Shape& in2_shape,
                       const int16_t* in2, const Shape& out_shape, int16_t* out);
KernelStatus Maximum16(const Shape& in1_shape, const int16_t* in1, const Shape& in2_shape,
                       const int16_t* in2, const Shape& out_shape, int16_t* out);

// Run-time variant lists (see variants.h).
using AddFn = KernelStatus (*)(const AddParams&, const Shape&, const int8_t*, const Shape&,
                               const int8_t*, const Shape&, int8_t*);
using Add16Fn = KernelStatus (*)(const AddParams&, const Shape&, const int16_t*, const Shape&,
                                 const int16_t*, const Shape&, int16_t*);
using MulFn = KernelStatus (*)(const MulParams&, const Shape&, const int8_t*, const Shape&,
                               const int8_t*, const Shape&, int8_t*);
using Mul16Fn = KernelStatus (*)(const MulParams&, const Shape&, const int16_t*, const Shape&,
                                 const int16_t*, const Shape&, int16_t*);
VariantList<AddFn> AddVariants();
VariantList<Add16Fn> Add16Variants();
VariantList<AddFn> SubVariants();
VariantList<Add16Fn> Sub16Variants();
VariantList<MulFn> MulVariants();
VariantList<Mul16Fn> Mul16Variants();
using MinMaxFn = KernelStatus (*)(const Shape&, const int8_t*, const Shape&, const int8_t*,
                                  const Shape&, int8_t*);
using MinMax16Fn = KernelStatus (*)(const Shape&, const int16_t*, const Shape&, const int16_t*,
                                    const Shape&, int16_t*);
VariantList<MinMaxFn> MinimumVariants();
VariantList<MinMaxFn> MaximumVariants();
VariantList<MinMax16Fn> Minimum16Variants();
VariantList<MinMax16Fn> Maximum16Variants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ELEMENTWISE_H_
