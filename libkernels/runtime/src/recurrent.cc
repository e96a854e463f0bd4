// The recurrent family: SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM, integer only (TFLite Micro's
// int8 SVDF with int16 or int8 state, the 8x8->16 LSTM). Their state tensors are variables the
// executor keeps between runs.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/svdf.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

// ---- SVDF ------------------------------------------------------------------------------------

class SvdfKernel : public OpKernel {
 public:
  kernels::SvdfParams p;
  bool int8_state = false;
  // The bodies --variant selects (PickVariant); one of them is set.
  kernels::SvdfFn fn16 = nullptr;
  kernels::SvdfInt8StateFn fn8 = nullptr;
  int32_t in = 0, wf = 0, wt = 0, bias = -1, state = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const kernels::Scratch s{ctx.scratch, ctx.scratch_bytes};
    if (int8_state) {
      return KernelError(fn8(p, ctx.In<int8_t>(in), ctx.In<int8_t>(wf), ctx.In<int8_t>(wt),
                             ctx.In<int32_t>(bias), ctx.Out<int8_t>(state),
                             ctx.Out<int8_t>(out), s),
                         "SvdfInt8State");
    }
    return KernelError(fn16(p, ctx.In<int8_t>(in), ctx.In<int8_t>(wf), ctx.In<int16_t>(wt),
                            ctx.In<int32_t>(bias), ctx.Out<int16_t>(state), ctx.Out<int8_t>(out),
                            s),
                       "Svdf");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = int8_state ? device::PlanOp::kSvdfInt8State : device::PlanOp::kSvdf;
    w.SetParams(p);
    w.tensors = {in, wf, wt, bias, state, out};
    return true;
  }
};

absl::StatusOr<KernelPtr> LowerSvdf(const LowerContext& ctx) {
  // Inputs: input, weights_feature, weights_time, bias (optional), activation_state.
  if (ctx.num_inputs() < 5 || !ctx.HasInput(1) || !ctx.HasInput(2) || !ctx.HasInput(4)) {
    return ctx.Invalid("SVDF needs input, weights_feature, weights_time and state");
  }
  const Tensor& x = ctx.input(0);
  const Tensor& wf = ctx.input(1);
  const Tensor& wt = ctx.input(2);
  const Tensor& st = ctx.input(4);
  const Tensor& y = ctx.output(0);
  if (x.dtype != DType::kInt8 || wf.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only int8 SVDF is supported (input ", DT(x.dtype), ")");
  }
  for (const Tensor* t : {&x, &wf, &wt, &st, &y}) MICA_RETURN_IF_ERROR(RequireQuantized(ctx, *t));
  if (!st.is_variable) return ctx.Invalid("state '", st.name, "' is not a variable tensor");
  if (wf.shape.size() != 2 || wt.shape.size() != 2 || x.shape.size() != 2) {
    return ctx.Invalid("input and weights must be 2-D");
  }
  auto k = std::make_unique<SvdfKernel>();
  kernels::SvdfParams& p = k->p;
  p.rank = ctx.op.Attrs<SvdfAttrs>().rank;
  p.batch = x.shape[0];
  p.input_size = x.shape[1];
  p.num_filters = wf.shape[0];
  p.memory_size = wt.shape[1];
  if (wf.shape[1] != p.input_size || wt.shape[0] != p.num_filters || p.rank <= 0 ||
      p.num_filters % p.rank != 0 ||
      st.num_elements() != static_cast<int64_t>(p.batch) * p.num_filters * p.memory_size ||
      y.num_elements() != static_cast<int64_t>(p.batch) * (p.num_filters / p.rank)) {
    return ctx.Invalid("shapes do not match the SVDF");
  }
  if (ctx.HasInput(3) && (ctx.input(3).dtype != DType::kInt32 ||
                          ctx.input(3).num_elements() != p.num_filters / p.rank)) {
    return ctx.Invalid("bias must be int32 with one value per unit");
  }
  p.input_zero_point = ZeroPoint(x);
  p.state_zero_point = ZeroPoint(st);
  p.output_zero_point = ZeroPoint(y);
  p.effective_scale_1 = Multiplier(static_cast<double>(Scale(x) * Scale(wf) / Scale(st)));
  p.effective_scale_2 = Multiplier(static_cast<double>(Scale(st) * Scale(wt) / Scale(y)));
  if (wt.dtype == DType::kInt16 && st.dtype == DType::kInt16) {
    k->int8_state = false;
    k->fn16 = PickVariant(kernels::SvdfVariants(), ctx.isa, &kernels::Svdf);
  } else if (wt.dtype == DType::kInt8 && st.dtype == DType::kInt8) {
    k->int8_state = true;
    k->fn8 = PickVariant(kernels::SvdfInt8StateVariants(), ctx.isa, &kernels::SvdfInt8State);
  } else {
    return ctx.Unimplemented("SVDF with ", DT(wt.dtype), " time weights and ", DT(st.dtype),
                             " state");
  }
  k->scratch_bytes = kernels::SvdfScratchBytes(p, ctx.isa);
  k->in = ctx.in_index(0);
  k->wf = ctx.in_index(1);
  k->wt = ctx.in_index(2);
  k->bias = ctx.HasInput(3) ? ctx.in_index(3) : -1;
  k->state = ctx.in_index(4);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

// ---- LSTM ------------------------------------------------------------------------------------

class LstmKernel : public OpKernel {
 public:
  kernels::LstmParams p;
  // Gate weight/bias tensors (forget, input, cell, output): input W, recurrent W, bias.
  int32_t w_in[4] = {}, w_rec[4] = {}, bias[4] = {-1, -1, -1, -1};
  int32_t in = 0, hidden = 0, cell = 0, out = 0;
  kernels::LstmFn fn = nullptr;  // the body --variant selects (PickVariant)
  absl::Status Eval(const EvalContext& ctx) override {
    kernels::LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate,
                                         &p.output_gate};
    for (int g = 0; g < 4; ++g) {
      gates[g]->input_weights = ctx.In<int8_t>(w_in[g]);
      gates[g]->recurrent_weights = ctx.In<int8_t>(w_rec[g]);
      gates[g]->bias = ctx.In<int32_t>(bias[g]);
    }
    return KernelError(fn(p, ctx.In<int8_t>(in), ctx.Out<int8_t>(hidden), ctx.Out<int16_t>(cell),
                          ctx.Out<int8_t>(out), kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       "Lstm");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    device::LstmOpParams d{};
    d.batch = p.batch;
    d.time_steps = p.time_steps;
    d.input_size = p.input_size;
    d.state_size = p.state_size;
    d.time_major = p.time_major ? 1 : 0;
    d.input_zero_point = p.input_zero_point;
    d.hidden_zero_point = p.hidden_zero_point;
    const kernels::LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate,
                                               &p.output_gate};
    for (int g = 0; g < 4; ++g) {
      d.gate_input_fc[g] = gates[g]->input_fc;
      d.gate_recurrent_fc[g] = gates[g]->recurrent_fc;
    }
    d.cell_gate_sigmoid = p.cell_gate_sigmoid ? 1 : 0;
    d.forget_cell_mul = p.forget_cell_mul;
    d.input_cell_mul = p.input_cell_mul;
    d.hidden_mul = p.hidden_mul;
    d.cell_state_scale_power = p.cell_state_scale_power;
    d.cell_clip_enabled = p.cell_clip_enabled ? 1 : 0;
    d.quantized_cell_clip = p.quantized_cell_clip;
    w.code = device::PlanOp::kLstm;
    w.SetParams(d);
    w.tensors = {in, hidden, cell, out};
    for (int g = 0; g < 4; ++g) {
      w.tensors.push_back(w_in[g]);
      w.tensors.push_back(w_rec[g]);
      w.tensors.push_back(bias[g]);
    }
    return true;
  }
};

absl::StatusOr<KernelPtr> LowerLstm(const LowerContext& ctx) {
  // TFLite's 24 inputs: 0 input; 1-4 input weights (input, forget, cell, output gates);
  // 5-8 recurrent weights; 9-11 peepholes; 12-15 biases; 16-17 projection; 18 output (hidden)
  // state; 19 cell state; 20-23 layer-norm coefficients.
  if (ctx.num_inputs() < 20) return ctx.Invalid("expects at least 20 inputs");
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only the int8 (8x8->16) LSTM is supported (input ", DT(x.dtype),
                             ")");
  }
  for (int i : {9, 10, 11, 16, 17, 20, 21, 22, 23}) {
    if (ctx.HasInput(i)) {
      return ctx.Unimplemented("LSTM input ", i,
                               " is present: int8 peephole, projection and layer-norm LSTMs "
                               "are not run (TFLite Micro refuses them too; the float LSTM "
                               "runs them)");
    }
  }
  for (int i : {1, 2, 3, 4, 5, 6, 7, 8, 18, 19}) {
    if (!ctx.HasInput(i)) {
      return ctx.Unimplemented("LSTM input ", i, " is missing: the int8 CIFG LSTM is not run "
                               "(TFLite Micro refuses it too; the float LSTM runs it)");
    }
  }
  const Tensor& hidden = ctx.input(18);
  const Tensor& cell = ctx.input(19);
  if (hidden.dtype != DType::kInt8 || cell.dtype != DType::kInt16) {
    return ctx.Unimplemented("hidden state must be int8 and cell state int16");
  }
  for (const Tensor* t : {&x, &y, &hidden, &cell}) {
    MICA_RETURN_IF_ERROR(RequireQuantized(ctx, *t));
  }
  const auto& a = ctx.op.Attrs<LstmAttrs>();
  if (a.activation != Activation::kTanh) {
    return ctx.Unimplemented("LSTM activation ", std::string(ActivationName(a.activation)));
  }
  auto k = std::make_unique<LstmKernel>();
  kernels::LstmParams& p = k->p;
  if (x.shape.size() != 3) return ctx.Invalid("input must be 3-D");
  p.time_major = a.time_major;
  p.time_steps = a.time_major ? x.shape[0] : x.shape[1];
  p.batch = a.time_major ? x.shape[1] : x.shape[0];
  p.input_size = x.shape[2];
  const Tensor& wf = ctx.input(2);
  if (wf.shape.size() != 2 || wf.shape[1] != p.input_size) {
    return ctx.Invalid("input weights do not match the input size");
  }
  p.state_size = wf.shape[0];
  if (hidden.num_elements() != static_cast<int64_t>(p.batch) * p.state_size ||
      cell.num_elements() != static_cast<int64_t>(p.batch) * p.state_size ||
      y.num_elements() != static_cast<int64_t>(p.batch) * p.time_steps * p.state_size) {
    return ctx.Invalid("state or output sizes do not match");
  }
  p.input_zero_point = ZeroPoint(x);
  p.hidden_zero_point = ZeroPoint(hidden);
  // Gate order in mica's params: forget, input, cell, output; TFLite's inputs: input (1/5/12),
  // forget (2/6/13), cell (3/7/14), output (4/8/15).
  const int in_idx[4] = {2, 1, 3, 4}, rec_idx[4] = {6, 5, 7, 8}, bias_idx[4] = {13, 12, 14, 15};
  kernels::LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate,
                                       &p.output_gate};
  const double q312 = 1.0 / 4096.0;
  for (int g = 0; g < 4; ++g) {
    const Tensor& w = ctx.input(in_idx[g]);
    const Tensor& r = ctx.input(rec_idx[g]);
    if (w.dtype != DType::kInt8 || r.dtype != DType::kInt8) {
      return ctx.Unimplemented("LSTM weights must be int8");
    }
    MICA_RETURN_IF_ERROR(RequireQuantized(ctx, w));
    MICA_RETURN_IF_ERROR(RequireQuantized(ctx, r));
    if (w.num_elements() != static_cast<int64_t>(p.state_size) * p.input_size ||
        r.num_elements() != static_cast<int64_t>(p.state_size) * p.state_size) {
      return ctx.Invalid("gate weights have wrong sizes");
    }
    gates[g]->input_fc = Multiplier(static_cast<double>(Scale(x) * Scale(w)) / q312);
    gates[g]->recurrent_fc = Multiplier(static_cast<double>(Scale(hidden) * Scale(r)) / q312);
    k->w_in[g] = ctx.in_index(in_idx[g]);
    k->w_rec[g] = ctx.in_index(rec_idx[g]);
    if (ctx.HasInput(bias_idx[g])) {
      const Tensor& b = ctx.input(bias_idx[g]);
      if (b.dtype != DType::kInt32 || b.num_elements() != p.state_size) {
        return ctx.Invalid("gate bias must be int32 with state_size values");
      }
      k->bias[g] = ctx.in_index(bias_idx[g]);
    }
  }
  const double s_c = Scale(cell);
  const double q015 = 1.0 / 32768.0;
  p.forget_cell_mul = Multiplier(q015 * s_c / s_c);
  p.input_cell_mul = Multiplier(q015 * q015 / s_c);
  p.hidden_mul = Multiplier(q015 * q015 / static_cast<double>(Scale(hidden)));
  int exponent = 0;
  const double mant = std::frexp(s_c, &exponent);
  if (mant != 0.5) return ctx.Unimplemented("cell state scale must be a power of two");
  p.cell_state_scale_power = exponent - 1;
  p.cell_clip_enabled = a.cell_clip > 0.f;
  if (p.cell_clip_enabled) {
    const double clip = std::min(std::max(static_cast<double>(a.cell_clip) / s_c, -32768.0),
                                 32767.0);
    p.quantized_cell_clip = static_cast<int16_t>(clip);
  }
  k->scratch_bytes = kernels::LstmScratchBytes(p, ctx.isa);
  k->fn = PickVariant(kernels::LstmVariants(), ctx.isa, &kernels::Lstm);
  k->in = ctx.in_index(0);
  k->hidden = ctx.in_index(18);
  k->cell = ctx.in_index(19);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}


// ---- float32 LSTM (the fp32 fallback path) ---------------------------------------------------

// TFLite's float UNIDIRECTIONAL_SEQUENCE_LSTM with its variants (the equations of TFLite's float
// reference kernel): per step, each gate is W_x x + W_h h (+ a peephole term p * c) + b; with
// layer norm, the gate sum (without bias) is normalised over the cell dimension, (v - mean) /
// sqrt(var + 1e-8), scaled by the gate's coefficients, and then the bias is added. i, f, o pass
// the logistic, the cell gate the fused activation; CIFG (no input gate) uses i = 1 - f. The
// input and forget peepholes read the previous cell state, the output peephole the new one.
// c = f c + i g (clipped to +-cell_clip when set); h = o act(c); with projection the output
// (and hidden state) is W_p h + b_p, clipped to +-proj_clip when set. Float arithmetic on the
// host; not bit-exact with any TFLite kernel. TFLite Micro itself refuses peephole,
// projection, layer-norm and CIFG LSTMs (int8 and float).
class FloatLstmKernel : public OpKernel {
 public:
  int32_t w_in[4] = {-1, -1, -1, -1}, w_rec[4] = {-1, -1, -1, -1}, bias[4] = {-1, -1, -1, -1};
  int32_t peep[4] = {-1, -1, -1, -1}, norm[4] = {-1, -1, -1, -1};
  int32_t proj_w = -1, proj_b = -1;
  int32_t in = 0, hidden = 0, cell = 0, out = 0;
  int32_t steps = 0, batch = 0, input_size = 0, n_cell = 0, n_output = 0;
  bool time_major = false;
  float cell_clip = 0.f, proj_clip = 0.f;
  Activation act = Activation::kTanh;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* h = ctx.Out<float>(hidden);
    float* c = ctx.Out<float>(cell);
    float* y = ctx.Out<float>(out);
    auto apply = [&](float v) {
      switch (act) {
        case Activation::kRelu: return std::max(0.f, v);
        case Activation::kRelu6: return std::min(6.f, std::max(0.f, v));
        case Activation::kReluN1To1: return std::min(1.f, std::max(-1.f, v));
        case Activation::kSignBit: return v < 0.f ? 1.f : 0.f;
        case Activation::kNone: return v;
        default: return std::tanh(v);
      }
    };
    auto sigmoid = [](float v) { return 1.f / (1.f + std::exp(-v)); };
    const size_t cells = static_cast<size_t>(n_cell);
    std::vector<float> gate(4 * cells), h_prev(static_cast<size_t>(n_output)), c_prev(cells),
        hid(cells);
    // Adds the peephole term, normalises (layer norm) and adds the bias of gate g.
    auto finish_gate = [&](const EvalContext& cx, int g, const float* cs) {
      float* v = &gate[static_cast<size_t>(g) * cells];
      if (peep[g] >= 0) {
        const float* p = cx.In<float>(peep[g]);
        for (size_t s = 0; s < cells; ++s) v[s] += p[s] * cs[s];
      }
      if (norm[g] >= 0) {
        float sum = 0.f, sum_sq = 0.f;
        for (size_t s = 0; s < cells; ++s) {
          sum += v[s];
          sum_sq += v[s] * v[s];
        }
        const float mean = sum / static_cast<float>(cells);
        const float variance = sum_sq / static_cast<float>(cells) - mean * mean;
        const float inv = 1.f / std::sqrt(variance + 1e-8f);
        const float* w = cx.In<float>(norm[g]);
        for (size_t s = 0; s < cells; ++s) v[s] = (v[s] - mean) * inv * w[s];
      }
      if (bias[g] >= 0) {
        const float* b = cx.In<float>(bias[g]);
        for (size_t s = 0; s < cells; ++s) v[s] += b[s];
      }
    };
    for (int32_t t = 0; t < steps; ++t) {
      for (int32_t b = 0; b < batch; ++b) {
        const int64_t row = time_major ? int64_t{t} * batch + b : int64_t{b} * steps + t;
        const float* xt = x + row * input_size;
        float* hb = h + int64_t{b} * n_output;
        float* cb = c + int64_t{b} * n_cell;
        std::copy(hb, hb + n_output, h_prev.begin());
        std::copy(cb, cb + n_cell, c_prev.begin());
        for (int g = 0; g < 4; ++g) {
          if (w_in[g] < 0) continue;  // CIFG: no input gate
          const float* wi = ctx.In<float>(w_in[g]);
          const float* wr = ctx.In<float>(w_rec[g]);
          for (int32_t s = 0; s < n_cell; ++s) {
            float acc = 0.f;
            for (int32_t k = 0; k < input_size; ++k) acc += wi[int64_t{s} * input_size + k] * xt[k];
            for (int32_t k = 0; k < n_output; ++k) acc += wr[int64_t{s} * n_output + k] * h_prev[k];
            gate[static_cast<size_t>(g) * cells + static_cast<size_t>(s)] = acc;
          }
        }
        // Gates: 0 input, 1 forget, 2 cell, 3 output (TFLite's input order).
        if (w_in[0] >= 0) finish_gate(ctx, 0, c_prev.data());
        finish_gate(ctx, 1, c_prev.data());
        finish_gate(ctx, 2, nullptr);
        for (size_t s = 0; s < cells; ++s) {
          const float f = sigmoid(gate[cells + s]);
          const float i = w_in[0] >= 0 ? sigmoid(gate[s]) : 1.f - f;
          const float g = apply(gate[2 * cells + s]);
          float cs = f * c_prev[s] + i * g;
          if (cell_clip > 0.f) cs = std::min(cell_clip, std::max(-cell_clip, cs));
          cb[s] = cs;
        }
        finish_gate(ctx, 3, cb);
        for (size_t s = 0; s < cells; ++s) hid[s] = sigmoid(gate[3 * cells + s]) * apply(cb[s]);
        if (proj_w >= 0) {
          const float* wp = ctx.In<float>(proj_w);
          const float* bp = proj_b >= 0 ? ctx.In<float>(proj_b) : nullptr;
          for (int32_t o = 0; o < n_output; ++o) {
            float acc = bp != nullptr ? bp[o] : 0.f;
            for (int32_t s = 0; s < n_cell; ++s) acc += wp[int64_t{o} * n_cell + s] * hid[static_cast<size_t>(s)];
            if (proj_clip > 0.f) acc = std::min(proj_clip, std::max(-proj_clip, acc));
            hb[o] = acc;
          }
        } else {
          std::copy(hid.begin(), hid.end(), hb);
        }
        std::copy(hb, hb + n_output, y + row * n_output);
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerFloatLstm(const LowerContext& ctx) {
  if (ctx.num_inputs() < 20) return ctx.Invalid("expects at least 20 inputs");
  for (int i : {2, 3, 4, 6, 7, 8, 18, 19}) {
    if (!ctx.HasInput(i)) return ctx.Invalid("LSTM input ", i, " is missing");
  }
  if (ctx.HasInput(1) != ctx.HasInput(5)) {
    return ctx.Invalid("input gate weights must be both present or both absent (CIFG)");
  }
  const bool cifg = !ctx.HasInput(1);
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  const auto& a = ctx.op.Attrs<LstmAttrs>();
  auto k = std::make_unique<FloatLstmKernel>();
  if (x.shape.size() != 3) return ctx.Invalid("input must be 3-D");
  k->time_major = a.time_major;
  k->steps = a.time_major ? x.shape[0] : x.shape[1];
  k->batch = a.time_major ? x.shape[1] : x.shape[0];
  k->input_size = x.shape[2];
  const Tensor& wf = ctx.input(2);
  const Tensor& rf = ctx.input(6);
  if (wf.shape.size() != 2 || wf.shape[1] != k->input_size) {
    return ctx.Invalid("input weights do not match the input size");
  }
  if (rf.shape.size() != 2 || rf.shape[0] != wf.shape[0]) {
    return ctx.Invalid("recurrent weights do not match the cell size");
  }
  k->n_cell = wf.shape[0];
  k->n_output = rf.shape[1];
  const int64_t cells = int64_t{k->batch} * k->n_cell;
  const int64_t outs = int64_t{k->batch} * k->n_output;
  if (ctx.input(18).num_elements() != outs || ctx.input(19).num_elements() != cells ||
      y.num_elements() != outs * k->steps) {
    return ctx.Invalid("state or output sizes do not match");
  }
  for (int i = 0; i < ctx.num_inputs() && i < 24; ++i) {
    if (ctx.HasInput(i) && ctx.input(i).dtype != DType::kFloat32) {
      return ctx.Unimplemented("float LSTM input ", i, " is ", DT(ctx.input(i).dtype),
                               " (hybrid LSTM is not supported)");
    }
  }
  for (int g = 0; g < 4; ++g) {
    if (!ctx.HasInput(1 + g)) continue;
    const Tensor& w = ctx.input(1 + g);
    const Tensor& r = ctx.input(5 + g);
    if (w.num_elements() != int64_t{k->n_cell} * k->input_size ||
        r.num_elements() != int64_t{k->n_cell} * k->n_output) {
      return ctx.Invalid("gate weights have wrong sizes");
    }
    k->w_in[g] = ctx.in_index(1 + g);
    k->w_rec[g] = ctx.in_index(5 + g);
    if (ctx.HasInput(12 + g)) {
      if (ctx.input(12 + g).num_elements() != k->n_cell) return ctx.Invalid("gate bias size");
      k->bias[g] = ctx.in_index(12 + g);
    }
  }
  // Peepholes: 9 input (absent with CIFG), 10 forget, 11 output; all or none.
  const bool peephole = ctx.HasInput(10) || ctx.HasInput(11) || ctx.HasInput(9);
  if (peephole) {
    if (!ctx.HasInput(10) || !ctx.HasInput(11) || ctx.HasInput(9) == cifg) {
      return ctx.Invalid("peephole weights must be all present (input peephole absent with CIFG)");
    }
    const int gate_of[3] = {0, 1, 3};
    for (int j = 0; j < 3; ++j) {
      if (!ctx.HasInput(9 + j)) continue;
      if (ctx.input(9 + j).num_elements() != k->n_cell) return ctx.Invalid("peephole size");
      k->peep[gate_of[j]] = ctx.in_index(9 + j);
    }
  }
  // Layer norm: 20 input (absent with CIFG), 21 forget, 22 cell, 23 output; all or none.
  const auto has = [&](int i) { return ctx.num_inputs() > i && ctx.HasInput(i); };
  const bool layer_norm = has(20) || has(21) || has(22) || has(23);
  if (layer_norm) {
    if (!has(21) || !has(22) || !has(23) || has(20) == cifg) {
      return ctx.Invalid("layer-norm coefficients must be all present (input gate's absent with CIFG)");
    }
    for (int g = 0; g < 4; ++g) {
      if (!has(20 + g)) continue;
      if (ctx.input(20 + g).num_elements() != k->n_cell) return ctx.Invalid("layer-norm size");
      k->norm[g] = ctx.in_index(20 + g);
    }
  }
  if (ctx.HasInput(16)) {
    if (ctx.input(16).num_elements() != int64_t{k->n_output} * k->n_cell) {
      return ctx.Invalid("projection weights must be n_output x n_cell");
    }
    k->proj_w = ctx.in_index(16);
    if (ctx.HasInput(17)) {
      if (ctx.input(17).num_elements() != k->n_output) return ctx.Invalid("projection bias size");
      k->proj_b = ctx.in_index(17);
    }
  } else {
    if (ctx.HasInput(17)) return ctx.Invalid("projection bias without projection weights");
    if (k->n_output != k->n_cell) {
      return ctx.Invalid("without projection the output size must equal the cell size");
    }
  }
  k->cell_clip = a.cell_clip;
  k->proj_clip = a.proj_clip;
  k->act = a.activation;
  k->in = ctx.in_index(0);
  k->hidden = ctx.in_index(18);
  k->cell = ctx.in_index(19);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerRecurrent(const LowerContext& ctx, bool fp32) {
  if (fp32) {
    if (ctx.op.kind == OpKind::kUnidirectionalSequenceLstm) return LowerFloatLstm(ctx);
    return NoKernel(ctx, fp32);
  }
  switch (ctx.op.kind) {
    case OpKind::kSvdf: return LowerSvdf(ctx);
    case OpKind::kUnidirectionalSequenceLstm: return LowerLstm(ctx);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
