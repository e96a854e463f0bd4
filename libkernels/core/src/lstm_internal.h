// Private: the variant bodies of LSTM and the step they share. A body differs only in the
// gates' matrix-vector products (the Dots policy):
//   static constexpr int32_t kRows;     // weight rows per call (what the body's ISA suits)
//   static void Rows(const int8_t* w, int32_t n, const int8_t* x, int32_t zp, int32_t rows,
//                    int32_t* acc);     // acc[r] = sum_i w[r * n + i] (x[i] - zp), r < rows
// (mod 2^32; rows <= kRows); the gate activations, cell update and hidden state are common.
#ifndef MICA_KERNELS_LSTM_INTERNAL_H_
#define MICA_KERNELS_LSTM_INTERNAL_H_

#include <cstdint>

#include "activations_internal.h"
#include "internal/requantize.h"
#include "mica/kernels/lstm.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus LstmScalar(const LstmParams&, const int8_t*, int8_t*, int16_t*, int8_t*, Scratch);
KernelStatus LstmDsp(const LstmParams&, const int8_t*, int8_t*, int16_t*, int8_t*, Scratch);
KernelStatus LstmMve(const LstmParams&, const int8_t*, int8_t*, int16_t*, int8_t*, Scratch);

inline int16_t LstmSat16(int32_t v) { return static_cast<int16_t>(Clamp(v, -32768, 32767)); }

inline bool LstmValidRequant(const Requant& q) { return q.shift <= 31 && q.shift >= -31; }

inline bool LstmValidGate(const LstmGateParams& g) {
  return g.input_weights != nullptr && g.recurrent_weights != nullptr &&
         LstmValidRequant(g.input_fc) && LstmValidRequant(g.recurrent_fc);
}

// gate[b][c] = act(sat16(FC_in(x) + FC_rec(h))) for `nb` batches of this step, the gate's
// matrix-vector products Dots::kRows rows at a time.
template <typename Dots>
void LstmGate(const LstmParams& p, const LstmGateParams& g, bool sigmoid, int32_t nb,
              const int8_t* x, const int8_t* h, int16_t* gate) {
  const int32_t n_in = p.input_size, n_s = p.state_size;
  for (int32_t b = 0; b < nb; ++b) {
    const int8_t* xb = x + static_cast<int64_t>(b) * n_in;
    const int8_t* hb = h + static_cast<int64_t>(b) * n_s;
    for (int32_t c0 = 0; c0 < n_s; c0 += Dots::kRows) {
      const int32_t rows = n_s - c0 < Dots::kRows ? n_s - c0 : Dots::kRows;
      int32_t in_acc[Dots::kRows], rec_acc[Dots::kRows];
      Dots::Rows(g.input_weights + static_cast<int64_t>(c0) * n_in, n_in, xb,
                 p.input_zero_point, rows, in_acc);
      Dots::Rows(g.recurrent_weights + static_cast<int64_t>(c0) * n_s, n_s, hb,
                 p.hidden_zero_point, rows, rec_acc);
      for (int32_t r = 0; r < rows; ++r) {
        const int32_t c = c0 + r;
        int32_t acc = in_acc[r];
        if (g.bias != nullptr) {
          acc = static_cast<int32_t>(static_cast<uint32_t>(acc) +
                                     static_cast<uint32_t>(g.bias[c]));
        }
        const int16_t in_fc =
            LstmSat16(MultiplyByQuantizedMultiplier(acc, g.input_fc.multiplier, g.input_fc.shift));
        const int16_t rec_fc = LstmSat16(MultiplyByQuantizedMultiplier(
            rec_acc[r], g.recurrent_fc.multiplier, g.recurrent_fc.shift));
        const int16_t sum = LstmSat16(in_fc + rec_fc);
        gate[static_cast<int64_t>(b) * n_s + c] =
            sigmoid ? Logistic16Element(3, 0, 0, sum) : Tanh16Element(3, 0, 0, sum);
      }
    }
  }
}

inline int32_t LstmMulQ(int32_t a, int32_t b, const Requant& q) {
  return MultiplyByQuantizedMultiplier(a * b, q.multiplier, q.shift);
}

// One step over `nb` batches; x / h / c / out point at this step's rows.
template <typename Dots>
void LstmStep(const LstmParams& p, int32_t nb, const int8_t* x, int8_t* h, int16_t* c,
              int8_t* out, int16_t* buf0, int16_t* buf1, int16_t* buf2) {
  const int64_t n = static_cast<int64_t>(nb) * p.state_size;
  int16_t* forget = buf0;
  int16_t* input = buf1;
  int16_t* cell = buf2;
  LstmGate<Dots>(p, p.forget_gate, true, nb, x, h, forget);
  LstmGate<Dots>(p, p.input_gate, true, nb, x, h, input);
  LstmGate<Dots>(p, p.cell_gate, p.cell_gate_sigmoid, nb, x, h, cell);
  for (int64_t i = 0; i < n; ++i) {
    const int16_t fc = LstmSat16(LstmMulQ(forget[i], c[i], p.forget_cell_mul));
    const int16_t ic = LstmSat16(LstmMulQ(input[i], cell[i], p.input_cell_mul));
    int16_t v = LstmSat16(fc + ic);
    if (p.cell_clip_enabled) {
      const int16_t clip = p.quantized_cell_clip;
      v = v > clip ? clip : (v < -clip ? static_cast<int16_t>(-clip) : v);
    }
    c[i] = v;
  }
  int16_t* output_gate = buf1;
  LstmGate<Dots>(p, p.output_gate, true, nb, x, h, output_gate);
  // tanh(c) with the cell state's power-of-two scale.
  int32_t shift = 15 + p.cell_state_scale_power - 3;
  int32_t mult = 0;
  if (shift < 0) {
    shift = -shift;
    mult = 3;
  }
  if (mult == 0) {
    mult = 3 << shift;
    shift = 0;
  }
  const int32_t round = shift > 0 ? 1 << (shift - 1) : 0;
  for (int64_t i = 0; i < n; ++i) {
    const int16_t t = Tanh16Element(mult, shift, round, c[i]);
    const int32_t v = LstmMulQ(t, output_gate[i], p.hidden_mul) + p.hidden_zero_point;
    h[i] = static_cast<int8_t>(Clamp(v, -128, 127));
  }
  __builtin_memcpy(out, h, static_cast<size_t>(n));
}

// The whole call: argument checks (the zero points in int8's range, so SIMD bodies may widen
// x - zp to int16 lanes), then the steps in the input's order.
template <typename Dots>
KernelStatus LstmRun(const LstmParams& p, const int8_t* input, int8_t* hidden_state,
                     int16_t* cell_state, int8_t* output, Scratch scratch) {
  if (p.batch < 1 || p.time_steps < 0 || p.input_size < 1 || p.state_size < 1 ||
      !LstmValidGate(p.forget_gate) || !LstmValidGate(p.input_gate) ||
      !LstmValidGate(p.cell_gate) || !LstmValidGate(p.output_gate) ||
      !LstmValidRequant(p.forget_cell_mul) ||
      !LstmValidRequant(p.input_cell_mul) || !LstmValidRequant(p.hidden_mul) ||
      p.input_zero_point < -128 || p.input_zero_point > 127 || p.hidden_zero_point < -128 ||
      p.hidden_zero_point > 127 ||
      p.cell_state_scale_power < -30 || p.cell_state_scale_power > 0 ||
      15 + p.cell_state_scale_power - 3 > 12) {
    return KernelStatus::kArgError;
  }
  if (input == nullptr || hidden_state == nullptr || cell_state == nullptr ||
      output == nullptr || scratch.buf == nullptr ||
      scratch.bytes < LstmScratchBytes(p, Isa::kScalar)) {
    return KernelStatus::kArgError;
  }
  const int32_t rows = p.time_major ? p.batch : 1;
  int16_t* buf = static_cast<int16_t*>(scratch.buf);
  const size_t plane = static_cast<size_t>(rows) * p.state_size;
  int16_t* b0 = buf;
  int16_t* b1 = buf + plane;
  int16_t* b2 = buf + 2 * plane;
  const int64_t n_in = p.input_size, n_s = p.state_size;
  if (p.time_major) {
    for (int32_t t = 0; t < p.time_steps; ++t) {
      LstmStep<Dots>(p, p.batch, input + t * p.batch * n_in, hidden_state, cell_state,
                     output + t * p.batch * n_s, b0, b1, b2);
    }
  } else {
    for (int32_t b = 0; b < p.batch; ++b) {
      for (int32_t t = 0; t < p.time_steps; ++t) {
        const int64_t row = static_cast<int64_t>(b) * p.time_steps + t;
        LstmStep<Dots>(p, 1, input + row * n_in, hidden_state + b * n_s,
                       cell_state + b * n_s, output + row * n_s, b0, b1, b2);
      }
    }
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_LSTM_INTERNAL_H_
