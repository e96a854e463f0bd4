// mica quant — fixed-point multipliers: how a real scale becomes int32 multiplier and shift.
//
// TFLite's reference int8 kernels represent a real rescale factor M as a Q31 multiplier m in
// [2^30, 2^31) and a shift s with M ~= m * 2^(s - 31); s > 0 shifts left. These functions
// reproduce TFLite's QuantizeMultiplier (frexp of the double, then rounding), which bit-exact
// execution depends on.
//
//   mica::quant::FixedPointMultiplier fm = mica::quant::QuantizeMultiplier(0.0123);
//   // fm.multiplier == 1690451010 (Q31), fm.shift == -6
#ifndef MICA_QUANT_MULTIPLIER_H_
#define MICA_QUANT_MULTIPLIER_H_

#include <cstdint>

namespace mica {
namespace quant {

struct FixedPointMultiplier {
  int32_t multiplier = 0;  // Q31, 0 or in [2^30, 2^31)
  int32_t shift = 0;       // > 0: left shift
};

// Returns the Q31 multiplier and shift of `real` (any finite double, may be >= 1 or 0).
// Shifts below -31 flush to a zero multiplier, as TFLite does.
FixedPointMultiplier QuantizeMultiplier(double real);

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_MULTIPLIER_H_
