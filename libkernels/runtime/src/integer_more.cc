// Integer lowering, continued: fully connected, transpose convolution, reductions, SVDF, LSTM.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "integer_common.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/batch_matmul.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/reduce.h"
#include "mica/kernels/svdf.h"
#include "mica/kernels/transpose_conv.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

template <typename T, typename BiasT, typename Fn>
class FullyConnectedKernel : public OpKernel {
 public:
  kernels::FullyConnectedParams p;
  std::vector<int32_t> mult, shift;
  std::vector<int64_t> bias64;
  Fn fn = nullptr;
  int32_t in = 0, weights = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const BiasT* b = nullptr;
    if constexpr (std::is_same_v<BiasT, int64_t>) {
      b = bias64.empty() ? nullptr : bias64.data();
    } else {
      b = ctx.In<BiasT>(bias);
    }
    return KernelError(fn(p, {mult.data(), shift.data()}, ctx.In<T>(in), ctx.In<int8_t>(weights),
                          b, ctx.Out<T>(out), kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       "FullyConnected");
  }
};

absl::StatusOr<KernelPtr> LowerFullyConnected(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (w.dtype != DType::kInt8) {
    return ctx.Unimplemented("weights '", w.name, "' are ", DT(w.dtype), " (int8 expected)");
  }
  if (w.shape.size() != 2) return ctx.Invalid("weights must be 2-D");
  if (x.dtype != y.dtype) return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, w));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  kernels::FullyConnectedParams p;
  p.output_depth = w.shape[0];
  p.input_depth = w.shape[1];
  if (p.input_depth <= 0 || x.num_elements() % p.input_depth != 0) {
    return ctx.Invalid("input size ", x.num_elements(), " not a multiple of ", p.input_depth);
  }
  p.batches = static_cast<int32_t>(x.num_elements() / p.input_depth);
  if (y.num_elements() != static_cast<int64_t>(p.batches) * p.output_depth) {
    return ctx.Invalid("output has ", y.num_elements(), " elements, expected ",
                       static_cast<int64_t>(p.batches) * p.output_depth);
  }
  MICA_ASSIGN_OR_RETURN(p.activation,
                        QuantizedActivationRange(ctx, ctx.op.Attrs<FullyConnectedAttrs>().activation, y));
  const size_t n_scales = w.quant.scale.size();
  p.per_channel = n_scales > 1;
  if (p.per_channel && n_scales != static_cast<size_t>(p.output_depth)) {
    return ctx.Invalid("weights have ", n_scales, " scales for ", p.output_depth, " outputs");
  }
  std::vector<int32_t> mult, shift;
  for (size_t c = 0; c < n_scales; ++c) {
    const double real = static_cast<double>(Scale(x)) * static_cast<double>(w.quant.scale[c]) /
                        static_cast<double>(Scale(y));
    const kernels::Requant r = Multiplier(real);
    mult.push_back(r.multiplier);
    shift.push_back(r.shift);
  }
  p.filter_offset = p.per_channel ? 0 : -ZeroPoint(w);
  if (x.dtype == DType::kInt8) {
    if (ctx.HasInput(2) && (ctx.input(2).dtype != DType::kInt32 ||
                            ctx.input(2).num_elements() != p.output_depth)) {
      return ctx.Invalid("bias must be int32 with one value per output");
    }
    p.input_offset = -ZeroPoint(x);
    p.output_offset = ZeroPoint(y);
    auto k = std::make_unique<FullyConnectedKernel<int8_t, int32_t, kernels::FullyConnectedFn>>();
    k->fn = PickVariant(kernels::FullyConnectedVariants(), ctx.isa, &kernels::FullyConnected);
    k->scratch_bytes = kernels::FullyConnectedScratchBytes(p, ctx.isa);
    k->p = p;
    k->mult = mult;
    k->shift = shift;
    k->in = ctx.in_index(0);
    k->weights = ctx.in_index(1);
    k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  if (x.dtype == DType::kInt16) {
    if (ZeroPoint(x) != 0 || ZeroPoint(y) != 0) {
      return ctx.Invalid("int16 fully connected needs zero points of 0");
    }
    auto k = std::make_unique<
        FullyConnectedKernel<int16_t, int64_t, kernels::FullyConnected16x8Fn>>();
    if (ctx.HasInput(2)) {
      const Tensor& b = ctx.input(2);
      if (!b.is_constant() || b.num_elements() != p.output_depth) {
        return ctx.Invalid("bias must be constant with one value per output");
      }
      for (int32_t i = 0; i < p.output_depth; ++i) {
        if (b.dtype == DType::kInt64) {
          k->bias64.push_back(b.data.as<int64_t>()[i]);
        } else if (b.dtype == DType::kInt32) {
          k->bias64.push_back(b.data.as<int32_t>()[i]);
        } else {
          return ctx.Invalid("bias must be int32 or int64");
        }
      }
    }
    k->fn = PickVariant(kernels::FullyConnected16x8Variants(), ctx.isa,
                        &kernels::FullyConnected16x8);
    k->scratch_bytes = kernels::FullyConnected16x8ScratchBytes(p, ctx.isa);
    k->p = p;
    k->mult = mult;
    k->shift = shift;
    k->in = ctx.in_index(0);
    k->weights = ctx.in_index(1);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " fully connected");
}


// ---- transpose convolution -----------------------------------------------------------------

class TransposeConvKernel : public OpKernel {
 public:
  kernels::TransposeConvParams p;
  std::vector<int32_t> mult, shift;
  kernels::TransposeConvFn fn = nullptr;
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(p, {mult.data(), shift.data()}, ctx.In<int8_t>(in),
                          ctx.In<int8_t>(filter), ctx.In<int32_t>(bias), ctx.Out<int8_t>(out),
                          kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       "TransposeConv");
  }
};

absl::StatusOr<KernelPtr> LowerTransposeConv(const LowerContext& ctx) {
  if (!ctx.HasInput(1) || !ctx.HasInput(2)) return ctx.Invalid("filter and input are required");
  const Tensor& w = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const Tensor& y = ctx.output(0);
  if (x.dtype != DType::kInt8 || w.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only int8 transpose convolution is supported (got ", DT(x.dtype),
                             ")");
  }
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, w));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  const auto& a = ctx.op.Attrs<TransposeConvAttrs>();
  auto k = std::make_unique<TransposeConvKernel>();
  kernels::TransposeConvParams& p = k->p;
  p.input = ToDims(x.shape);
  p.filter = ToDims(w.shape);
  p.output = ToDims(y.shape);
  if (p.filter.c != p.input.c || p.output.c != p.filter.n || p.output.n != p.input.n) {
    return ctx.Invalid("shapes do not match the transpose convolution");
  }
  p.stride = {a.stride_h, a.stride_w};
  const int32_t oh = ComputeOutSize(a.padding, p.output.h, p.filter.h, a.stride_h, 1);
  const int32_t ow = ComputeOutSize(a.padding, p.output.w, p.filter.w, a.stride_w, 1);
  p.padding = {ComputePadding(a.padding, p.output.h, p.filter.h, a.stride_h, 1, oh).pad,
               ComputePadding(a.padding, p.output.w, p.filter.w, a.stride_w, 1, ow).pad};
  p.input_offset = -ZeroPoint(x);
  p.output_offset = ZeroPoint(y);
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  const size_t n = w.quant.scale.size();
  if (n != 1 && n != static_cast<size_t>(p.output.c)) {
    return ctx.Invalid("filter has ", n, " scales for ", p.output.c, " channels");
  }
  for (int32_t c = 0; c < p.output.c; ++c) {
    const kernels::Requant r =
        Multiplier(static_cast<double>(Scale(x)) *
                   static_cast<double>(w.quant.scale[n == 1 ? 0 : c]) /
                   static_cast<double>(Scale(y)));
    k->mult.push_back(r.multiplier);
    k->shift.push_back(r.shift);
  }
  if (ctx.HasInput(3) && (ctx.input(3).dtype != DType::kInt32 ||
                          ctx.input(3).num_elements() != p.output.c)) {
    return ctx.Invalid("bias must be int32 with one value per output channel");
  }
  k->fn = PickVariant(kernels::TransposeConvVariants(), ctx.isa, &kernels::TransposeConv);
  k->scratch_bytes = kernels::TransposeConvScratchBytes(p, ctx.isa);
  k->in = ctx.in_index(2);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(3) ? ctx.in_index(3) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

// ---- reductions ----------------------------------------------------------------------------

template <typename T>
class ReduceKernel : public OpKernel {
 public:
  OpKind kind = OpKind::kMean;
  kernels::MeanParams p;
  kernels::Shape shape;
  kernels::ReduceAxes axes;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const T* x = ctx.In<T>(in);
    T* y = ctx.Out<T>(out);
    kernels::KernelStatus s;
    if constexpr (std::is_same_v<T, int8_t>) {
      s = kind == OpKind::kMean  ? kernels::Mean(p, shape, axes, x, y)
          : kind == OpKind::kSum ? kernels::Sum(p, shape, axes, x, y)
                                 : kernels::ReduceMax(shape, axes, x, y);
    } else {
      s = kind == OpKind::kMean  ? kernels::Mean16(p, shape, axes, x, y)
          : kind == OpKind::kSum ? kernels::Sum16(p, shape, axes, x, y)
                                 : kernels::ReduceMax16(shape, axes, x, y);
    }
    return KernelError(s, "Reduce");
  }
};

absl::StatusOr<KernelPtr> LowerReduce(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != y.dtype || (x.dtype != DType::kInt8 && x.dtype != DType::kInt16)) {
    return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstInts(ctx, 1));
  if (axes.size() > static_cast<size_t>(kernels::kMaxRank)) return ctx.Invalid("too many axes");
  kernels::ReduceAxes ra;
  const int rank = static_cast<int>(x.shape.size());
  int64_t out_elems = x.num_elements();
  std::vector<bool> seen(std::max(rank, 1), false);
  for (int64_t a : axes) {
    MICA_ASSIGN_OR_RETURN(int ax, NormalizeAxis(ctx, a, rank));
    ra.axis[ra.count++] = ax;
    if (!seen[ax] && x.shape[ax] > 0) out_elems /= x.shape[ax];
    seen[ax] = true;
  }
  if (y.num_elements() != out_elems) return ctx.Invalid("output size does not match the axes");
  kernels::MeanParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_zero_point = ZeroPoint(y);
  p.output = Multiplier(static_cast<double>(Scale(x)) / static_cast<double>(Scale(y)));
  if (ctx.op.kind == OpKind::kReduceMax && (Scale(x) != Scale(y) || ZeroPoint(x) != ZeroPoint(y))) {
    return ctx.Unimplemented("REDUCE_MAX with requantization");
  }
  auto fill = [&](auto k) -> absl::StatusOr<KernelPtr> {
    k->kind = ctx.op.kind;
    k->p = p;
    MICA_ASSIGN_OR_RETURN(k->shape, ToShape(ctx, x.shape));
    k->axes = ra;
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  };
  if (x.dtype == DType::kInt8) return fill(std::make_unique<ReduceKernel<int8_t>>());
  return fill(std::make_unique<ReduceKernel<int16_t>>());
}

// ---- SVDF ------------------------------------------------------------------------------------

class SvdfKernel : public OpKernel {
 public:
  kernels::SvdfParams p;
  bool int8_state = false;
  int32_t in = 0, wf = 0, wt = 0, bias = -1, state = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const kernels::Scratch s{ctx.scratch, ctx.scratch_bytes};
    if (int8_state) {
      return KernelError(kernels::SvdfInt8State(p, ctx.In<int8_t>(in), ctx.In<int8_t>(wf),
                                                ctx.In<int8_t>(wt), ctx.In<int32_t>(bias),
                                                ctx.Out<int8_t>(state), ctx.Out<int8_t>(out), s),
                         "SvdfInt8State");
    }
    return KernelError(kernels::Svdf(p, ctx.In<int8_t>(in), ctx.In<int8_t>(wf),
                                     ctx.In<int16_t>(wt), ctx.In<int32_t>(bias),
                                     ctx.Out<int16_t>(state), ctx.Out<int8_t>(out), s),
                       "Svdf");
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
  } else if (wt.dtype == DType::kInt8 && st.dtype == DType::kInt8) {
    k->int8_state = true;
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
  absl::Status Eval(const EvalContext& ctx) override {
    kernels::LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate,
                                         &p.output_gate};
    for (int g = 0; g < 4; ++g) {
      gates[g]->input_weights = ctx.In<int8_t>(w_in[g]);
      gates[g]->recurrent_weights = ctx.In<int8_t>(w_rec[g]);
      gates[g]->bias = ctx.In<int32_t>(bias[g]);
    }
    return KernelError(kernels::Lstm(p, ctx.In<int8_t>(in), ctx.Out<int8_t>(hidden),
                                     ctx.Out<int16_t>(cell), ctx.Out<int8_t>(out),
                                     kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       "Lstm");
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
                               " is present (peepholes, projection and layer norm are not "
                               "supported)");
    }
  }
  for (int i : {1, 2, 3, 4, 5, 6, 7, 8, 18, 19}) {
    if (!ctx.HasInput(i)) return ctx.Unimplemented("LSTM input ", i, " is missing (CIFG is not supported)");
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
  k->in = ctx.in_index(0);
  k->hidden = ctx.in_index(18);
  k->cell = ctx.in_index(19);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}


// ---- batch matmul ----------------------------------------------------------------------------

class BatchMatMulKernel : public OpKernel {
 public:
  kernels::BatchMatMulParams p;
  kernels::BatchMatMulFn fn = nullptr;
  int32_t lhs = 0, rhs = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(p, ctx.In<int8_t>(lhs), ctx.In<int8_t>(rhs), ctx.Out<int8_t>(out),
                          kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       "BatchMatMul");
  }
};

absl::StatusOr<KernelPtr> LowerBatchMatMul(const LowerContext& ctx) {
  if (!ctx.HasInput(1)) return ctx.Invalid("needs two inputs");
  const Tensor& l = ctx.input(0);
  const Tensor& r = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (l.dtype != DType::kInt8 || r.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only int8 batch matmul is supported (got ", DT(l.dtype), ")");
  }
  for (const Tensor* t : {&l, &r, &y}) MICA_RETURN_IF_ERROR(RequireQuantized(ctx, *t));
  const int rl = static_cast<int>(l.shape.size()), rr = static_cast<int>(r.shape.size());
  if (rl < 2 || rr < 2 || rl > 5 || rr > 5) return ctx.Unimplemented("operand ranks 2..5");
  const auto& a = ctx.op.Attrs<BatchMatMulAttrs>();
  auto k = std::make_unique<BatchMatMulKernel>();
  kernels::BatchMatMulParams& p = k->p;
  p.adj_x = a.adj_x;
  p.adj_y = a.adj_y;
  p.m = a.adj_x ? l.shape[rl - 1] : l.shape[rl - 2];
  p.k = a.adj_x ? l.shape[rl - 2] : l.shape[rl - 1];
  const int32_t kr = a.adj_y ? r.shape[rr - 1] : r.shape[rr - 2];
  p.n = a.adj_y ? r.shape[rr - 2] : r.shape[rr - 1];
  if (kr != p.k) return ctx.Invalid("inner dimensions differ: ", p.k, " vs ", kr);
  int64_t batches = 1;
  for (int i = 0; i < 3; ++i) {
    const int li = rl - 3 - i, ri = rr - 3 - i;
    p.lhs_batch[2 - i] = li >= 0 ? l.shape[li] : 1;
    p.rhs_batch[2 - i] = ri >= 0 ? r.shape[ri] : 1;
    const int32_t dl = p.lhs_batch[2 - i], dr = p.rhs_batch[2 - i];
    if (dl != dr && dl != 1 && dr != 1) return ctx.Invalid("batch dimensions do not broadcast");
    batches *= std::max(dl, dr);
  }
  if (y.num_elements() != batches * p.m * p.n) return ctx.Invalid("output size differs");
  p.lhs_offset = -ZeroPoint(l);
  p.rhs_offset = -ZeroPoint(r);
  p.output_offset = ZeroPoint(y);
  p.requant = Multiplier(static_cast<double>(Scale(l)) * static_cast<double>(Scale(r)) /
                         static_cast<double>(Scale(y)));
  p.activation = {-128, 127};
  k->fn = PickVariant(kernels::BatchMatMulVariants(), ctx.isa, &kernels::BatchMatMul);
  k->scratch_bytes = kernels::BatchMatMulScratchBytes(p, ctx.isa);
  k->lhs = ctx.in_index(0);
  k->rhs = ctx.in_index(1);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerIntegerMore(const LowerContext& ctx) {
  switch (ctx.op.kind) {
    case OpKind::kFullyConnected: return LowerFullyConnected(ctx);
    case OpKind::kTransposeConv: return LowerTransposeConv(ctx);
    case OpKind::kBatchMatMul: return LowerBatchMatMul(ctx);
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
      return LowerReduce(ctx);
    case OpKind::kSvdf: return LowerSvdf(ctx);
    case OpKind::kUnidirectionalSequenceLstm: return LowerLstm(ctx);
    default: return absl::NotFoundError("");
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
