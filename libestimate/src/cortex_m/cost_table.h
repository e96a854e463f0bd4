// Per-variant constants of the Cortex-M cost model (instructions), see mica/estimate/cortex_m.h.
#ifndef MICA_ESTIMATE_SRC_CORTEX_M_COST_TABLE_H_
#define MICA_ESTIMATE_SRC_CORTEX_M_COST_TABLE_H_

#include <array>

#include "mica/kernels/types.h"

namespace mica {
namespace estimate {
namespace cortex_m {

struct VariantCosts {
  double call;                                // call, argument checks, setup
  double conv_mac, conv_col, conv_out;        // im2col + matmul convolution
  double conv1_mac, conv1_out;                // 1x1 convolution without im2col
  double dw_mac, dw_out, dw_tap;              // depthwise
  double fc_mac, fc_out;                      // fully connected / matmul
  double add_elem, mul_elem;                  // elementwise binary with requantization
  double avg_out, avg_row, avg_elem;          // average pool
  double mp_tap, mp_pix, mp_out, mp_elem;     // max pool
  double sm_row, sm_cheap, sm_exp;            // softmax
  double copy_byte, copy_row;                 // data movement
  double unary_elem;                          // clamps (ReLU family), abs, neg
  double lut_elem;                            // fixed-point transcendental (logistic, tanh, ...)
  double other_elem;                          // other reference elementwise (min, max, ...)
  // arm_depthwise_conv_s8 with channel multiplier > 1 (CMSIS-NN source, loop by loop):
  double dwm_pix, dwm_tile, dwm_row, dwm_tap4, dwm_req4;  // multiplier % 4 == 0 tile kernel
  double dwg_out, dwg_tap;                                 // generic kernel
  // Recurrent kernels (arm_lstm_unidirectional_s8, arm_svdf_s8):
  double rec_row;      // per matrix row: requantize, accumulate, clamp, store (vec_mat_mul)
  double act16_elem;   // arm_nn_activation_s16 per element (LUT + interpolation, plain C)
  double ew16_elem;    // s16 elementwise multiply with requantization per element
  double rec_step;     // per LSTM step: the step's calls (4 gates x 4 calls, 4 elementwise)
  double svdf_time;    // per state element of the time-weight dot products
  double svdf_feat;    // per filter: time-loop setup, bias and rank reduction
  double svdf_req;     // per unit output: requantize, clamp, store
};

// Returns the constants for `isa`.
const VariantCosts& CostsFor(kernels::Isa isa);

// Float32 reference kernels: instructions per MAC / element / transcendental element, with and
// without a hardware FPU (soft-float library calls).
struct FloatCosts {
  double mac, elem, transcendental;
};
const FloatCosts& FloatCostsFor(bool has_fpu);

// mica's own kernels (--runtime mica): one call costs sum(coefficient[i] * term[i]) over the
// terms of its family (cortex_m.h, CortexMMicaTermsFor). The coefficients per family and
// variant are in cost_table.cc, solved from mica's own runs on QEMU
// (test/corpus/reference/qemu/mica_instructions.csv, re-measured and re-solved by
// bench/cortex_m_vs_qemu.py). A family without coefficients for a variant is costed with the
// CMSIS-NN formulas above.
enum class MicaFamily : int {
  kConv, kConv1x1, kConvS16, kDepthwise, kFullyConnected, kTransposeConv, kAdd, kMul,
  kAvgPool, kMaxPool, kSoftmax, kLstm, kCopy, kDispatch, kDepthwiseMult, kConvGrouped,
  kAddBroadcast, kMulBroadcast, kHardSwish, kLeakyRelu, kLogistic, kTanh, kMean, kPad, kRelu, kQuantize, kDequantize, kFullyConnectedS16, kSoftmaxS16,
  kDepthwiseS16, kTranspose, kPrelu, kConv1xn, kSvdf, kConvPair, kMinMax, kCount
};
inline constexpr int kMicaTermCount = 7;
using MicaCoefficients = std::array<double, kMicaTermCount>;

// Returns the family's name ("conv", "depthwise", ...).
const char* MicaFamilyName(MicaFamily f);

// Returns the coefficients of `family` for `isa`, or nullptr when the table has none.
const MicaCoefficients* MicaCoefficientsFor(MicaFamily family, kernels::Isa isa);

// int16 kernels cost this factor times the int8 formula.
inline constexpr double kInt16Factor = 1.3;
// Armv6-M (cortex-m0) executes this many instructions per Armv7-M instruction of scalar code.
inline constexpr double kArmv6mFactor = 1.6;

}  // namespace cortex_m
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_SRC_CORTEX_M_COST_TABLE_H_
