// mica kernels — UNIDIRECTIONAL_SEQUENCE_LSTM, int8 activations and weights, int16 cell state,
// int32 bias: TFLite Micro's integer LSTM (lstm_eval.h, the "8x8->16" standard LSTM without
// peepholes, projection, CIFG or layer normalisation), bit-exact.
//
// Per time step (all batches of a step together when time-major, else one batch at a time):
//   gate_g = act_g( sat16( FC_in_g(x) + FC_rec_g(h) ) )   for g = forget, input, cell, output
//     FC_in_g(x)[c]  = clamp16(MBQM(bias_g[c] + sum_i W_g[c][i] * (x[i] - zp_in), input_fc_g))
//     FC_rec_g(h)[c] = clamp16(MBQM(sum_j R_g[c][j] * (h[j] - zp_h), recurrent_fc_g))
//     act = sigmoid (TFLite's int16 LOGISTIC with multiplier 3, shift 0) for forget / input /
//     output; the cell gate uses tanh (int16 TANH, multiplier 3, shift 0) or sigmoid.
//   c = sat16(MBQM(forget * c, forget_cell_mul) + MBQM(input * cell_gate, input_cell_mul)),
//       then clipped to +-quantized_cell_clip when cell_clip_enabled
//   h = clamp8(MBQM(tanh_c(c) * output, hidden_mul) + zp_h), also written to the output.
//   The forget, input and cell gates are computed before the cell update, the output gate
//   after it, all from the previous h.
//
// How TFLite Micro computes these parameters:
//   Gate FC outputs are int16 with scale 2^-12 (Q3.12) and zero point 0:
//     input_fc_g     = QuantizeMultiplier(double(float(s_x * s_W_g)) / double(2^-12))
//     recurrent_fc_g = QuantizeMultiplier(double(float(s_h * s_R_g)) / double(2^-12))
//   Gate outputs are Q0.15 (scale 2^-15):
//     forget_cell_mul = QuantizeMultiplier(double(2^-15) * double(s_c) / double(s_c))
//     input_cell_mul  = QuantizeMultiplier(double(2^-15) * double(2^-15) / double(s_c))
//     hidden_mul      = QuantizeMultiplier(double(2^-15) * double(2^-15) / double(s_h))
//   input_zero_point, hidden_zero_point: the int8 tensors' zero points (a call with one outside
//     [-128, 127] is refused).
//   cell_state_scale_power = log2(s_c) (the cell state scale must be a power of two, e.g. -11)
//   tanh of the cell: shift = 15 + cell_state_scale_power - 3; if shift < 0 the kernel uses
//     (c * 3 + round) >> -shift, otherwise c * (3 << shift).
//   quantized_cell_clip = int16(clamp(double(cell_clip) / double(s_c), -32768, 32767)),
//     cell_clip_enabled = cell_clip > 0.
// Layouts: input [time][batch][input_size] when time_major else [batch][time][input_size];
// output likewise with state_size; hidden_state [batch][state_size] int8 and cell_state
// [batch][state_size] int16 are the variable tensors, updated in place. Input weights
// [state_size][input_size], recurrent weights [state_size][state_size], bias [state_size].
#ifndef MICA_KERNELS_LSTM_H_
#define MICA_KERNELS_LSTM_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

struct LstmGateParams {
  const int8_t* input_weights = nullptr;      // [state_size][input_size]
  const int8_t* recurrent_weights = nullptr;  // [state_size][state_size]
  const int32_t* bias = nullptr;              // [state_size] or null
  Requant input_fc;
  Requant recurrent_fc;
};

struct LstmParams {
  int32_t batch = 1;
  int32_t time_steps = 1;
  int32_t input_size = 0;
  int32_t state_size = 0;
  bool time_major = false;
  int32_t input_zero_point = 0;
  int32_t hidden_zero_point = 0;
  LstmGateParams forget_gate, input_gate, cell_gate, output_gate;
  bool cell_gate_sigmoid = false;  // false: tanh (TFLite's default activation)
  Requant forget_cell_mul;
  Requant input_cell_mul;
  Requant hidden_mul;
  int32_t cell_state_scale_power = -11;
  bool cell_clip_enabled = false;
  int16_t quantized_cell_clip = 0;
};

// Three int16 buffers (2-byte aligned) of (time_major ? batch : 1) * state_size elements.
size_t LstmScratchBytes(const LstmParams& params, Isa isa);

KernelStatus Lstm(const LstmParams& params, const int8_t* input, int8_t* hidden_state,
                  int16_t* cell_state, int8_t* output, Scratch scratch);

using LstmFn = KernelStatus (*)(const LstmParams&, const int8_t*, int8_t*, int16_t*, int8_t*,
                                Scratch);
VariantList<LstmFn> LstmVariants();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_LSTM_H_
