#include "mica/quant/multiplier.h"

#include <cmath>

namespace mica {
namespace quant {

FixedPointMultiplier QuantizeMultiplier(double real) {
  FixedPointMultiplier out;
  if (real == 0.0 || !std::isfinite(real)) return out;
  int shift = 0;
  const double q = std::frexp(real, &shift);  // real = q * 2^shift, |q| in [0.5, 1)
  auto q_fixed = static_cast<int64_t>(std::round(q * (int64_t{1} << 31)));
  if (q_fixed == (int64_t{1} << 31)) {  // rounding reached 1.0
    q_fixed /= 2;
    ++shift;
  }
  if (shift < -31) {  // too small to represent: TFLite flushes to zero
    shift = 0;
    q_fixed = 0;
  }
  if (shift > 30) {  // TFLite clamps the left shift
    shift = 30;
    q_fixed = (int64_t{1} << 31) - 1;
  }
  out.multiplier = static_cast<int32_t>(q_fixed);
  out.shift = shift;
  return out;
}

}  // namespace quant
}  // namespace mica
