// The conv-like family: CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV, FULLY_CONNECTED and
// BATCH_MATMUL, float32 and integer. The shape checks (4-D operands, TFLite's SAME / VALID window,
// the output against it) are shared by the float32 and integer lowerings; the integer ones
// also share their quantization (per-channel multipliers, offsets, int32 / int64 bias) and one
// kernel wrapper, and differ only in their parameter struct and kernel-core entry.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/batch_matmul.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/transpose_conv.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

using kernels::Isa;

// ---- shapes (float32 and integer) -------------------------------------------------------------

// NHWC shapes of a CONV_2D, DEPTHWISE_CONV_2D or TRANSPOSE_CONV and its window's padding.
struct ConvShape {
  kernels::Dims in, filter, out;
  int32_t pad_h = 0, pad_w = 0;
};

absl::Status Require4D(const LowerContext& ctx, const Tensor& x, const Tensor& w,
                       const Tensor& y) {
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  // A filter with an empty dimension has no taps, and its other dimensions are then unbounded
  // by its size (a 0-element filter may claim a height of 10^8): refused.
  for (int32_t d : w.shape) {
    if (d <= 0) return ctx.Invalid("filter '", w.name, "' has an empty dimension");
  }
  return absl::OkStatus();
}

// CONV_2D (filter OHWI, `in.c / filter.c` groups) and DEPTHWISE_CONV_2D (filter 1HWC with
// C = in.c * depth multiplier): 4-D operands and an output of TFLite's window size.
absl::StatusOr<ConvShape> CheckConvShape(const LowerContext& ctx, int32_t stride_h,
                                         int32_t stride_w, int32_t dilation_h,
                                         int32_t dilation_w, Padding padding) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(Require4D(ctx, x, w, y));
  const bool depthwise = ctx.op.kind == OpKind::kDepthwiseConv2D;
  ConvShape s;
  s.in = ToDims(x.shape);
  s.filter = ToDims(w.shape);
  s.out = ToDims(y.shape);
  int32_t out_c = s.filter.n;
  if (depthwise) {
    if (s.in.c <= 0 || s.filter.c % s.in.c != 0) {
      return ctx.Invalid("filter channels ", s.filter.c, " not a multiple of input channels ",
                         s.in.c);
    }
    out_c = s.filter.c;
  } else {
    // in.c == 0 would make zero groups (and a division by zero below): fuzz_run finding.
    if (s.filter.c <= 0 || s.in.c <= 0 || s.in.c % s.filter.c != 0) {
      return ctx.Invalid("input channels ", s.in.c, " not a multiple of filter channels ",
                         s.filter.c);
    }
    if (s.filter.n % (s.in.c / s.filter.c) != 0) {
      return ctx.Invalid("output channels not divisible by groups");
    }
  }
  const SpatialWindow win = WindowOf(padding, s.in.h, s.in.w, s.filter.h, s.filter.w, stride_h,
                                     stride_w, dilation_h, dilation_w);
  if (win.out_h != s.out.h || win.out_w != s.out.w || s.out.c != out_c || s.out.n != s.in.n) {
    return ctx.Invalid("output shape does not match the ",
                       depthwise ? "depthwise convolution" : "convolution");
  }
  s.pad_h = win.pad_h;
  s.pad_w = win.pad_w;
  return s;
}

// TRANSPOSE_CONV (inputs: output shape, filter OHWI, input, bias): the padding is TFLite's
// window over the output.
absl::StatusOr<ConvShape> CheckTransposeConvShape(const LowerContext& ctx) {
  if (!ctx.HasInput(1) || !ctx.HasInput(2)) return ctx.Invalid("filter and input are required");
  const Tensor& w = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(Require4D(ctx, x, w, y));
  const auto& a = ctx.op.Attrs<TransposeConvAttrs>();
  ConvShape s;
  s.in = ToDims(x.shape);
  s.filter = ToDims(w.shape);
  s.out = ToDims(y.shape);
  if (s.filter.c != s.in.c) return ctx.Invalid("filter input channels do not match the input");
  if (s.out.n != s.in.n || s.out.c != s.filter.n) {
    return ctx.Invalid("output shape does not match the transpose convolution");
  }
  const SpatialWindow win =
      WindowOf(a.padding, s.out.h, s.out.w, s.filter.h, s.filter.w, a.stride_h, a.stride_w, 1, 1);
  s.pad_h = win.pad_h;
  s.pad_w = win.pad_w;
  return s;
}

// FULLY_CONNECTED: weights [out, in]; the input is `batches` rows of `in` values.
struct FcShape {
  int32_t batches = 1, in_depth = 1, out_depth = 1;
};

absl::StatusOr<FcShape> CheckFcShape(const LowerContext& ctx) {
  if (!ctx.HasInput(1)) return ctx.Invalid("weights are required");
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (w.shape.size() != 2) return ctx.Invalid("weights must be 2-D");
  FcShape s;
  s.out_depth = w.shape[0];
  s.in_depth = w.shape[1];
  if (s.in_depth <= 0 || x.num_elements() % s.in_depth != 0) {
    return ctx.Invalid("input size ", x.num_elements(), " not a multiple of ", s.in_depth);
  }
  s.batches = static_cast<int32_t>(x.num_elements() / s.in_depth);
  if (y.num_elements() != static_cast<int64_t>(s.batches) * s.out_depth) {
    return ctx.Invalid("output has ", y.num_elements(), " elements, expected ",
                       static_cast<int64_t>(s.batches) * s.out_depth);
  }
  return s;
}

// BATCH_MATMUL: the matrix dimensions of both operands (after adj_x / adj_y).
struct MatMulShape {
  int32_t m = 1, k = 1, n = 1;
};

absl::StatusOr<MatMulShape> CheckMatMulShape(const LowerContext& ctx, int max_rank) {
  if (!ctx.HasInput(1)) return ctx.Invalid("needs two inputs");
  const Tensor& l = ctx.input(0);
  const Tensor& r = ctx.input(1);
  const int rl = static_cast<int>(l.shape.size()), rr = static_cast<int>(r.shape.size());
  if (rl < 2 || rr < 2) return ctx.Invalid("operands must be >= 2-D");
  if (rl > max_rank || rr > max_rank) return ctx.Unimplemented("operand ranks 2..", max_rank);
  const auto& a = ctx.op.Attrs<BatchMatMulAttrs>();
  MatMulShape s;
  s.m = a.adj_x ? l.shape[rl - 1] : l.shape[rl - 2];
  s.k = a.adj_x ? l.shape[rl - 2] : l.shape[rl - 1];
  const int32_t kr = a.adj_y ? r.shape[rr - 1] : r.shape[rr - 2];
  s.n = a.adj_y ? r.shape[rr - 2] : r.shape[rr - 1];
  if (kr != s.k) return ctx.Invalid("inner dimensions differ: ", s.k, " vs ", kr);
  return s;
}

// ---- quantization shared by the integer conv-like ops -------------------------------------

// Per-channel multipliers input_scale * filter_scale[c] / output_scale: `channels` of them
// (a per-tensor filter scale repeated), or with `expand_per_tensor` false one per filter scale.
struct ChannelQuant {
  std::vector<int32_t> multiplier, shift;
  kernels::PerChannelRequant view() const { return {multiplier.data(), shift.data()}; }
};

absl::StatusOr<ChannelQuant> ChannelMultipliers(const LowerContext& ctx, const Tensor& in,
                                                const Tensor& filter, const Tensor& out,
                                                int32_t channels, bool expand_per_tensor) {
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, in));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, filter));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, out));
  const size_t n = filter.quant.scale.size();
  if (n != 1 && n != static_cast<size_t>(channels)) {
    return ctx.Invalid("filter '", filter.name, "' has ", n, " scales for ", channels,
                       " output channels");
  }
  const size_t count = expand_per_tensor ? static_cast<size_t>(channels) : n;
  ChannelQuant q;
  for (size_t c = 0; c < count; ++c) {
    const double fs = static_cast<double>(filter.quant.scale[n == 1 ? 0 : c]);
    const double real = static_cast<double>(Scale(in)) * fs / static_cast<double>(Scale(out));
    const kernels::Requant r = Multiplier(real);
    q.multiplier.push_back(r.multiplier);
    q.shift.push_back(r.shift);
  }
  return q;
}

absl::Status RequireInt8Filter(const LowerContext& ctx, const Tensor& f) {
  if (f.dtype != DType::kInt8) {
    return ctx.Unimplemented("filter '", f.name, "' is ", DT(f.dtype), " (int8 expected)");
  }
  return absl::OkStatus();
}

// int8 bias: int32, one value per channel, read at run time.
absl::Status CheckBias32(const LowerContext& ctx, int input, int32_t count) {
  if (!ctx.HasInput(input)) return absl::OkStatus();
  const Tensor& t = ctx.input(input);
  if (t.dtype != DType::kInt32) return ctx.Invalid("bias '", t.name, "' must be int32");
  if (t.num_elements() != count) return ctx.Invalid("bias '", t.name, "' has wrong size");
  return absl::OkStatus();
}

// float bias: one value per output channel, read at run time.
absl::Status CheckBiasF32(const LowerContext& ctx, int input, int64_t count) {
  if (!ctx.HasInput(input)) return absl::OkStatus();
  const Tensor& t = ctx.input(input);
  if (t.num_elements() != count) {
    return ctx.Invalid("bias '", t.name, "' has ", t.num_elements(), " values for ", count,
                       " output channels");
  }
  return absl::OkStatus();
}

// 16x8 bias: a constant, int64 (widened from int32 when the file stores int32).
absl::StatusOr<std::vector<int64_t>> Bias64(const LowerContext& ctx, int input, int32_t count) {
  std::vector<int64_t> b;
  if (!ctx.HasInput(input)) return b;
  const Tensor& t = ctx.input(input);
  if (!t.is_constant()) return ctx.Unimplemented("run-time bias '", t.name, "'");
  if (t.num_elements() != count) return ctx.Invalid("bias '", t.name, "' has wrong size");
  if (t.dtype == DType::kInt64) {
    b.assign(t.data.as<int64_t>(), t.data.as<int64_t>() + count);
  } else if (t.dtype == DType::kInt32) {
    for (int32_t i = 0; i < count; ++i) b.push_back(t.data.as<int32_t>()[i]);
  } else {
    return ctx.Invalid("bias '", t.name, "' must be int32 or int64");
  }
  // The 16x8 requantization multiplies the int64 accumulator (bias + at most 2^22 per filter
  // element) by a Q15 multiplier: with |bias| <= 2^40 and at most 2^24 filter elements the
  // product stays below 2^62, so no int64 arithmetic can overflow.
  constexpr int64_t kMaxBias = int64_t{1} << 40;
  for (int32_t i = 0; i < count; ++i) {
    if (b[static_cast<size_t>(i)] > kMaxBias || b[static_cast<size_t>(i)] < -kMaxBias) {
      return ctx.Invalid("bias '", t.name, "' value ", b[static_cast<size_t>(i)], " at channel ",
                         i, " is out of range (|bias| <= 2^40 for int16 operators)");
    }
  }
  if (ctx.HasInput(1) && ctx.input(1).num_elements() > (int64_t{1} << 24)) {
    return ctx.Invalid("filter '", ctx.input(1).name, "' has ", ctx.input(1).num_elements(),
                       " elements, above 2^24 for an int16 operator (its int64 accumulator "
                       "could overflow)");
  }
  return b;
}

// conv, depthwise conv, transpose conv and fully connected share one call shape:
// fn(params, quant, input, filter, bias, output, scratch).
template <typename Params, typename Fn, typename In, typename BiasT>
class ConvLikeKernel : public OpKernel {
 public:
  Params p;
  ChannelQuant q;
  Fn fn = nullptr;
  const char* name = "";
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  std::vector<int64_t> bias64;  // 16x8 only
  absl::Status Eval(const EvalContext& ctx) override {
    const BiasT* b = nullptr;
    if constexpr (std::is_same_v<BiasT, int64_t>) {
      b = bias64.empty() ? nullptr : bias64.data();
    } else {
      b = ctx.In<BiasT>(bias);
    }
    return KernelError(fn(p, q.view(), ctx.In<In>(in), ctx.In<int8_t>(filter), b,
                          ctx.Out<In>(out), kernels::Scratch{ctx.scratch, ctx.scratch_bytes}),
                       name);
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    constexpr bool i16 = std::is_same_v<In, int16_t>;
    w.code = ConvPlanOp(p, i16);
    w.SetParams(p);
    w.tensors = {in, filter, i16 ? -1 : bias, out};
    w.AddArray(q.multiplier);
    w.AddArray(q.shift);
    if (i16) w.AddArray(bias64);
    return w.code != device::PlanOp::kCount;
  }
};

// One kernel-core entry of a conv-like op: its name, run-time variants, public entry and
// scratch size.
template <typename Params, typename Fn>
struct Body {
  const char* name;
  kernels::VariantList<Fn> (*variants)();
  Fn entry;
  size_t (*scratch_bytes)(const Params&, Isa);
};

// Where a conv-like op's operands are: input, filter (always input 1) and bias.
struct Operands {
  int input = 0, bias = 2;
};

// The int8 kernels accumulate in int32, as TFLite Micro's do: bias + the sum over an output's
// taps of (input - zero point) x weight, with |input - zero point| <= 255. For each output
// channel the worst case is 255 x sum |weight| + |bias| (the constant weights and bias as
// stored); a file where it leaves int32 is refused rather than run into signed overflow. Real
// models stay far inside (KWS's worst channel: about 2^22).
absl::Status CheckAccumulatorRange(const LowerContext& ctx, int bias_input, int32_t channels,
                                   const ChannelQuant& q) {
  const Tensor& f = ctx.input(1);
  if (channels <= 0 || f.num_elements() % channels != 0) return absl::OkStatus();
  const int64_t taps = f.num_elements() / channels;
  std::vector<int64_t> worst(static_cast<size_t>(channels), 0);
  if (f.is_constant() && f.dtype == DType::kInt8) {
    // Depthwise filters [1, H, W, C] keep the channel innermost; the others [O, ...] outermost.
    const bool channel_inner = ctx.op.kind == OpKind::kDepthwiseConv2D;
    const int8_t* w = f.data.as<int8_t>();
    for (int64_t i = 0; i < f.num_elements(); ++i) {
      const int64_t c = channel_inner ? i % channels : i / taps;
      worst[static_cast<size_t>(c)] += 255 * (w[i] < 0 ? -int64_t{w[i]} : int64_t{w[i]});
    }
  } else {
    for (int64_t& v : worst) v = taps * 255 * 128;
  }
  const Tensor* b = ctx.HasInput(bias_input) ? &ctx.input(bias_input) : nullptr;
  for (int32_t c = 0; c < channels; ++c) {
    int64_t bias = 0;
    if (b != nullptr && b->is_constant() && b->dtype == DType::kInt32) {
      const int32_t v = b->data.as<int32_t>()[c];
      bias = v < 0 ? -int64_t{v} : int64_t{v};
    }
    const int64_t bound = worst[static_cast<size_t>(c)] + bias;
    if (bound > std::numeric_limits<int32_t>::max()) {
      return ctx.Invalid("output channel ", c, ": its int32 accumulator could overflow (255 x "
                         "sum |weight| + |bias| = ", bound, " > 2^31 - 1); TFLite Micro's int32 "
                         "accumulation would overflow too");
    }
    // The requantized value (accumulator x the channel's real multiplier) plus the output
    // offset must stay in int32 too.
    const size_t k = q.multiplier.size() == 1 ? 0 : static_cast<size_t>(c);
    if (k < q.multiplier.size()) {
      const double scale = std::ldexp(static_cast<double>(q.multiplier[k]), q.shift[k] - 31);
      if (static_cast<double>(bound) * scale > static_cast<double>(int64_t{1} << 30)) {
        return ctx.Invalid("output channel ", c, ": its requantized value could overflow int32 "
                           "(worst accumulator ", bound, " x multiplier ", scale, ")");
      }
    }
  }
  return absl::OkStatus();
}

// The int8 body (bias int32 at run time, offsets from the zero points) or the 16x8 body (bias
// int64 constant, zero points 0), by the input's dtype. `what` names the op in errors. An op
// without a 16x8 body passes Fn16 = std::nullptr_t.
template <typename Params, typename Fn8, typename Fn16>
absl::StatusOr<KernelPtr> LowerQuantizedConvLike(const LowerContext& ctx, const char* what,
                                                 Params p, ChannelQuant q, int32_t channels,
                                                 Operands ops, const Body<Params, Fn8>& b8,
                                                 const Body<Params, Fn16>* b16) {
  const Tensor& x = ctx.input(ops.input);
  const Tensor& y = ctx.output(0);
  auto fill = [&](auto k, const auto& body) {
    k->fn = PickVariant(body.variants(), ctx.isa, body.entry);
    k->scratch_bytes = body.scratch_bytes(p, ctx.isa);
    k->name = body.name;
    k->p = p;
    k->q = std::move(q);
    k->in = ctx.in_index(ops.input);
    k->filter = ctx.in_index(1);
    k->out = ctx.out_index(0);
    return k;
  };
  if (x.dtype == DType::kInt8) {
    MICA_RETURN_IF_ERROR(CheckBias32(ctx, ops.bias, channels));
    MICA_RETURN_IF_ERROR(CheckAccumulatorRange(ctx, ops.bias, channels, q));
    p.input_offset = -ZeroPoint(x);
    p.output_offset = ZeroPoint(y);
    auto k = fill(std::make_unique<ConvLikeKernel<Params, Fn8, int8_t, int32_t>>(), b8);
    k->bias = ctx.HasInput(ops.bias) ? ctx.in_index(ops.bias) : -1;
    return KernelPtr(std::move(k));
  }
  if constexpr (!std::is_same_v<Fn16, std::nullptr_t>) {
    if (x.dtype == DType::kInt16) {
      if (ZeroPoint(x) != 0 || ZeroPoint(y) != 0) {
        return ctx.Invalid("int16 ", what, " needs zero points of 0");
      }
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> bias, Bias64(ctx, ops.bias, channels));
      auto k = fill(std::make_unique<ConvLikeKernel<Params, Fn16, int16_t, int64_t>>(), *b16);
      k->bias64 = std::move(bias);
      return KernelPtr(std::move(k));
    }
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " ", what);
}

// ---- integer -------------------------------------------------------------------------------

absl::StatusOr<KernelPtr> LowerConvInt(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireInt8Filter(ctx, w));
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<Conv2DAttrs>();
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckConvShape(ctx, a.stride_h, a.stride_w, a.dilation_h,
                                                    a.dilation_w, a.padding));
  kernels::ConvParams p;
  p.input = s.in;
  p.filter = s.filter;
  p.output = s.out;
  p.stride = {a.stride_h, a.stride_w};
  p.dilation = {a.dilation_h, a.dilation_w};
  p.padding = {s.pad_h, s.pad_w};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ChannelMultipliers(ctx, x, w, y, p.output.c, true));
  using P = kernels::ConvParams;
  static const Body<P, kernels::ConvFn> b8{"Conv", &kernels::ConvVariants, &kernels::Conv,
                                           &kernels::ConvScratchBytes};
  static const Body<P, kernels::Conv16x8Fn> b16{"Conv16x8", &kernels::Conv16x8Variants,
                                                &kernels::Conv16x8,
                                                &kernels::Conv16x8ScratchBytes};
  return LowerQuantizedConvLike(ctx, "convolution", p, std::move(q), p.output.c, Operands{},
                                b8, &b16);
}

absl::StatusOr<KernelPtr> LowerDepthwiseInt(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireInt8Filter(ctx, w));
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<DepthwiseConv2DAttrs>();
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckConvShape(ctx, a.stride_h, a.stride_w, a.dilation_h,
                                                    a.dilation_w, a.padding));
  kernels::DepthwiseConvParams p;
  p.input = s.in;
  p.filter = s.filter;
  p.output = s.out;
  p.depth_multiplier = p.filter.c / p.input.c;
  p.stride = {a.stride_h, a.stride_w};
  p.dilation = {a.dilation_h, a.dilation_w};
  p.padding = {s.pad_h, s.pad_w};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ChannelMultipliers(ctx, x, w, y, p.output.c, true));
  using P = kernels::DepthwiseConvParams;
  static const Body<P, kernels::DepthwiseConvFn> b8{
      "DepthwiseConv", &kernels::DepthwiseConvVariants, &kernels::DepthwiseConv,
      &kernels::DepthwiseConvScratchBytes};
  static const Body<P, kernels::DepthwiseConv16x8Fn> b16{
      "DepthwiseConv16x8", &kernels::DepthwiseConv16x8Variants, &kernels::DepthwiseConv16x8,
      &kernels::DepthwiseConv16x8ScratchBytes};
  return LowerQuantizedConvLike(ctx, "depthwise convolution", p, std::move(q), p.output.c,
                                Operands{}, b8, &b16);
}

absl::StatusOr<KernelPtr> LowerTransposeConvInt(const LowerContext& ctx) {
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckTransposeConvShape(ctx));
  const Tensor& w = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireInt8Filter(ctx, w));
  if (x.dtype != y.dtype || (x.dtype != DType::kInt8 && x.dtype != DType::kInt16)) {
    return ctx.Unimplemented("transpose convolution runs int8 and 16x8 (got ", DT(x.dtype),
                             " -> ", DT(y.dtype), ")");
  }
  const auto& a = ctx.op.Attrs<TransposeConvAttrs>();
  kernels::TransposeConvParams p;
  p.input = s.in;
  p.filter = s.filter;
  p.output = s.out;
  p.stride = {a.stride_h, a.stride_w};
  p.padding = {s.pad_h, s.pad_w};
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ChannelMultipliers(ctx, x, w, y, p.output.c, true));
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  static const Body<kernels::TransposeConvParams, kernels::TransposeConvFn> b8{
      "TransposeConv", &kernels::TransposeConvVariants, &kernels::TransposeConv,
      &kernels::TransposeConvScratchBytes};
  static const Body<kernels::TransposeConvParams, kernels::TransposeConv16x8Fn> b16{
      "TransposeConv16x8", &kernels::TransposeConv16x8Variants, &kernels::TransposeConv16x8,
      &kernels::TransposeConv16x8ScratchBytes};
  return LowerQuantizedConvLike(ctx, "transpose convolution", p, std::move(q), p.output.c,
                                Operands{2, 3}, b8, &b16);
}

absl::StatusOr<KernelPtr> LowerFullyConnectedInt(const LowerContext& ctx) {
  MICA_ASSIGN_OR_RETURN(FcShape s, CheckFcShape(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireInt8Filter(ctx, w));
  if (x.dtype != y.dtype) return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  kernels::FullyConnectedParams p;
  p.batches = s.batches;
  p.input_depth = s.in_depth;
  p.output_depth = s.out_depth;
  // Per-tensor weights keep one multiplier and their zero point; per-channel ones have none.
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ChannelMultipliers(ctx, x, w, y, p.output_depth, false));
  MICA_ASSIGN_OR_RETURN(
      p.activation,
      QuantizedActivationRange(ctx, ctx.op.Attrs<FullyConnectedAttrs>().activation, y));
  p.per_channel = w.quant.scale.size() > 1;
  p.filter_offset = p.per_channel ? 0 : -ZeroPoint(w);
  using P = kernels::FullyConnectedParams;
  static const Body<P, kernels::FullyConnectedFn> b8{
      "FullyConnected", &kernels::FullyConnectedVariants, &kernels::FullyConnected,
      &kernels::FullyConnectedScratchBytes};
  static const Body<P, kernels::FullyConnected16x8Fn> b16{
      "FullyConnected", &kernels::FullyConnected16x8Variants, &kernels::FullyConnected16x8,
      &kernels::FullyConnected16x8ScratchBytes};
  return LowerQuantizedConvLike(ctx, "fully connected", p, std::move(q), p.output_depth,
                                Operands{}, b8, &b16);
}

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

absl::StatusOr<KernelPtr> LowerBatchMatMulInt(const LowerContext& ctx) {
  if (!ctx.HasInput(1)) return ctx.Invalid("needs two inputs");
  const Tensor& l = ctx.input(0);
  const Tensor& r = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (l.dtype != DType::kInt8 || r.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only int8 batch matmul is supported (got ", DT(l.dtype), ")");
  }
  for (const Tensor* t : {&l, &r, &y}) MICA_RETURN_IF_ERROR(RequireQuantized(ctx, *t));
  MICA_ASSIGN_OR_RETURN(MatMulShape s, CheckMatMulShape(ctx, 5));
  const int rl = static_cast<int>(l.shape.size()), rr = static_cast<int>(r.shape.size());
  const auto& a = ctx.op.Attrs<BatchMatMulAttrs>();
  auto k = std::make_unique<BatchMatMulKernel>();
  kernels::BatchMatMulParams& p = k->p;
  p.adj_x = a.adj_x;
  p.adj_y = a.adj_y;
  p.m = s.m;
  p.k = s.k;
  p.n = s.n;
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

// ---- float32 -------------------------------------------------------------------------------

void FillGeom(const ConvShape& s, FloatGeom* g) {
  g->n = s.in.n;
  g->in_h = s.in.h;
  g->in_w = s.in.w;
  g->in_c = s.in.c;
  g->out_h = s.out.h;
  g->out_w = s.out.w;
  g->out_c = s.out.c;
  g->k_h = s.filter.h;
  g->k_w = s.filter.w;
  g->pad_h = s.pad_h;
  g->pad_w = s.pad_w;
}

class ConvF32 : public OpKernel {
 public:
  FloatGeom g;
  int32_t groups = 1, filter_in_c = 1;
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    const float* w = ctx.In<float>(filter);
    const float* b = ctx.In<float>(bias);
    float* y = ctx.Out<float>(out);
    const int32_t oc_per_group = g.out_c / groups;
    for (int32_t n = 0; n < g.n; ++n) {
      for (int32_t oy = 0; oy < g.out_h; ++oy) {
        for (int32_t ox = 0; ox < g.out_w; ++ox) {
          float* yp = y + ((static_cast<int64_t>(n) * g.out_h + oy) * g.out_w + ox) * g.out_c;
          for (int32_t oc = 0; oc < g.out_c; ++oc) {
            const int32_t group = oc / oc_per_group;
            float acc = 0.f;
            for (int32_t ky = 0; ky < g.k_h; ++ky) {
              const int64_t iy = int64_t{oy} * g.stride_h - g.pad_h + int64_t{ky} * g.dil_h;
              if (iy < 0 || iy >= g.in_h) continue;
              for (int32_t kx = 0; kx < g.k_w; ++kx) {
                const int64_t ix = int64_t{ox} * g.stride_w - g.pad_w + int64_t{kx} * g.dil_w;
                if (ix < 0 || ix >= g.in_w) continue;
                const float* xp =
                    x + ((static_cast<int64_t>(n) * g.in_h + iy) * g.in_w + ix) * g.in_c +
                    group * filter_in_c;
                const float* wp =
                    w + ((static_cast<int64_t>(oc) * g.k_h + ky) * g.k_w + kx) * filter_in_c;
                for (int32_t ic = 0; ic < filter_in_c; ++ic) acc += xp[ic] * wp[ic];
              }
            }
            if (b) acc += b[oc];
            yp[oc] = Clampf(acc, g.act_lo, g.act_hi);
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

class DepthwiseF32 : public OpKernel {
 public:
  FloatGeom g;
  int32_t mult = 1;
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    const float* w = ctx.In<float>(filter);
    const float* b = ctx.In<float>(bias);
    float* y = ctx.Out<float>(out);
    for (int32_t n = 0; n < g.n; ++n) {
      for (int32_t oy = 0; oy < g.out_h; ++oy) {
        for (int32_t ox = 0; ox < g.out_w; ++ox) {
          for (int32_t ic = 0; ic < g.in_c; ++ic) {
            for (int32_t m = 0; m < mult; ++m) {
              const int32_t oc = ic * mult + m;
              float acc = 0.f;
              for (int32_t ky = 0; ky < g.k_h; ++ky) {
                const int64_t iy = int64_t{oy} * g.stride_h - g.pad_h + int64_t{ky} * g.dil_h;
                if (iy < 0 || iy >= g.in_h) continue;
                for (int32_t kx = 0; kx < g.k_w; ++kx) {
                  const int64_t ix = int64_t{ox} * g.stride_w - g.pad_w + int64_t{kx} * g.dil_w;
                  if (ix < 0 || ix >= g.in_w) continue;
                  acc += x[((static_cast<int64_t>(n) * g.in_h + iy) * g.in_w + ix) * g.in_c + ic] *
                         w[(static_cast<int64_t>(ky) * g.k_w + kx) * g.out_c + oc];
                }
              }
              if (b) acc += b[oc];
              y[((static_cast<int64_t>(n) * g.out_h + oy) * g.out_w + ox) * g.out_c + oc] =
                  Clampf(acc, g.act_lo, g.act_hi);
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

class TransposeConvF32 : public OpKernel {
 public:
  FloatGeom g;  // in_* is the op's input, out_* its output
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    const float* w = ctx.In<float>(filter);
    const float* b = ctx.In<float>(bias);
    float* y = ctx.Out<float>(out);
    const int64_t out_count = static_cast<int64_t>(g.n) * g.out_h * g.out_w * g.out_c;
    std::fill(y, y + out_count, 0.f);
    for (int32_t n = 0; n < g.n; ++n) {
      for (int32_t iy = 0; iy < g.in_h; ++iy) {
        for (int32_t ix = 0; ix < g.in_w; ++ix) {
          const float* xp = x + ((static_cast<int64_t>(n) * g.in_h + iy) * g.in_w + ix) * g.in_c;
          for (int32_t ky = 0; ky < g.k_h; ++ky) {
            const int64_t oy = int64_t{iy} * g.stride_h - g.pad_h + ky;
            if (oy < 0 || oy >= g.out_h) continue;
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int64_t ox = int64_t{ix} * g.stride_w - g.pad_w + kx;
              if (ox < 0 || ox >= g.out_w) continue;
              float* yp = y + ((static_cast<int64_t>(n) * g.out_h + oy) * g.out_w + ox) * g.out_c;
              for (int32_t oc = 0; oc < g.out_c; ++oc) {
                const float* wp =
                    w + ((static_cast<int64_t>(oc) * g.k_h + ky) * g.k_w + kx) * g.in_c;
                float acc = 0.f;
                for (int32_t ic = 0; ic < g.in_c; ++ic) acc += xp[ic] * wp[ic];
                yp[oc] += acc;
              }
            }
          }
        }
      }
    }
    for (int64_t i = 0; i < out_count; ++i) {
      float v = y[i] + (b ? b[i % g.out_c] : 0.f);
      y[i] = Clampf(v, g.act_lo, g.act_hi);
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerConvF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const auto& a = ctx.op.Attrs<Conv2DAttrs>();
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckConvShape(ctx, a.stride_h, a.stride_w, a.dilation_h,
                                                    a.dilation_w, a.padding));
  MICA_RETURN_IF_ERROR(CheckBiasF32(ctx, 2, s.out.c));
  auto k = std::make_unique<ConvF32>();
  FillGeom(s, &k->g);
  k->g.stride_h = a.stride_h;
  k->g.stride_w = a.stride_w;
  k->g.dil_h = a.dilation_h;
  k->g.dil_w = a.dilation_w;
  FloatActivationRange(a.activation, &k->g.act_lo, &k->g.act_hi);
  k->filter_in_c = s.filter.c;
  k->groups = s.in.c / s.filter.c;
  k->in = ctx.in_index(0);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerDepthwiseF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const auto& a = ctx.op.Attrs<DepthwiseConv2DAttrs>();
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckConvShape(ctx, a.stride_h, a.stride_w, a.dilation_h,
                                                    a.dilation_w, a.padding));
  MICA_RETURN_IF_ERROR(CheckBiasF32(ctx, 2, s.out.c));
  auto k = std::make_unique<DepthwiseF32>();
  FillGeom(s, &k->g);
  k->g.stride_h = a.stride_h;
  k->g.stride_w = a.stride_w;
  k->g.dil_h = a.dilation_h;
  k->g.dil_w = a.dilation_w;
  FloatActivationRange(a.activation, &k->g.act_lo, &k->g.act_hi);
  k->mult = s.out.c / s.in.c;
  k->in = ctx.in_index(0);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerTransposeConvF32(const LowerContext& ctx) {
  // Inputs: output_shape (int32), filter, input, optional bias.
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i)) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(i)));
  }
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(0)));
  MICA_ASSIGN_OR_RETURN(ConvShape s, CheckTransposeConvShape(ctx));
  const auto& a = ctx.op.Attrs<TransposeConvAttrs>();
  MICA_RETURN_IF_ERROR(CheckBiasF32(ctx, 3, s.out.c));
  auto k = std::make_unique<TransposeConvF32>();
  FillGeom(s, &k->g);
  k->g.stride_h = a.stride_h;
  k->g.stride_w = a.stride_w;
  FloatActivationRange(a.activation, &k->g.act_lo, &k->g.act_hi);
  k->in = ctx.in_index(2);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(3) ? ctx.in_index(3) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

class FullyConnectedF32 : public OpKernel {
 public:
  int32_t batches = 1, in_size = 1, out_size = 1;
  float lo = 0, hi = 0;
  int32_t in = 0, filter = 0, bias = -1, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    const float* w = ctx.In<float>(filter);
    const float* b = ctx.In<float>(bias);
    float* y = ctx.Out<float>(out);
    for (int32_t bt = 0; bt < batches; ++bt) {
      for (int32_t o = 0; o < out_size; ++o) {
        float acc = 0.f;
        const float* xp = x + static_cast<int64_t>(bt) * in_size;
        const float* wp = w + static_cast<int64_t>(o) * in_size;
        for (int32_t i = 0; i < in_size; ++i) acc += xp[i] * wp[i];
        if (b) acc += b[o];
        y[static_cast<int64_t>(bt) * out_size + o] = Clampf(acc, lo, hi);
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerFullyConnectedF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  MICA_ASSIGN_OR_RETURN(FcShape s, CheckFcShape(ctx));
  MICA_RETURN_IF_ERROR(CheckBiasF32(ctx, 2, s.out_depth));
  auto k = std::make_unique<FullyConnectedF32>();
  k->out_size = s.out_depth;
  k->in_size = s.in_depth;
  k->batches = s.batches;
  FloatActivationRange(ctx.op.Attrs<FullyConnectedAttrs>().activation, &k->lo, &k->hi);
  k->in = ctx.in_index(0);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

class BatchMatMulF32 : public OpKernel {
 public:
  int32_t lhs = 0, rhs = 0, out = 0;
  int64_t m = 1, kdim = 1, n = 1;
  bool adj_x = false, adj_y = false;
  std::vector<int64_t> lhs_batch_offset, rhs_batch_offset;  // per output batch
  absl::Status Eval(const EvalContext& ctx) override {
    const float* a = ctx.In<float>(lhs);
    const float* b = ctx.In<float>(rhs);
    float* y = ctx.Out<float>(out);
    for (size_t bt = 0; bt < lhs_batch_offset.size(); ++bt) {
      const float* ap = a + lhs_batch_offset[bt];
      const float* bp = b + rhs_batch_offset[bt];
      float* yp = y + static_cast<int64_t>(bt) * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float acc = 0.f;
          for (int64_t p = 0; p < kdim; ++p) {
            const float av = adj_x ? ap[p * m + i] : ap[i * kdim + p];
            const float bv = adj_y ? bp[j * kdim + p] : bp[p * n + j];
            acc += av * bv;
          }
          yp[i * n + j] = acc;
        }
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerBatchMatMulF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  MICA_ASSIGN_OR_RETURN(MatMulShape s, CheckMatMulShape(ctx, std::numeric_limits<int>::max()));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const auto& at = ctx.op.Attrs<BatchMatMulAttrs>();
  auto k = std::make_unique<BatchMatMulF32>();
  k->adj_x = at.adj_x;
  k->adj_y = at.adj_y;
  k->m = s.m;
  k->kdim = s.k;
  k->n = s.n;
  const int ra = static_cast<int>(a.shape.size()), rb = static_cast<int>(b.shape.size());
  const int rbatch = std::max(ra, rb) - 2;
  std::vector<int64_t> da(rbatch, 1), db(rbatch, 1), dout(rbatch, 1);
  for (int i = 0; i < ra - 2; ++i) da[rbatch - (ra - 2) + i] = a.shape[i];
  for (int i = 0; i < rb - 2; ++i) db[rbatch - (rb - 2) + i] = b.shape[i];
  for (int i = 0; i < rbatch; ++i) {
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1) return ctx.Invalid("batch dims don't broadcast");
    dout[i] = std::max(da[i], db[i]);
  }
  int64_t total = 1;
  for (int64_t d : dout) total *= d;
  if (ctx.output(0).num_elements() != total * k->m * k->n) {
    return ctx.Invalid("output size does not match the product");
  }
  for (int64_t bt = 0; bt < total; ++bt) {
    int64_t rem = bt, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int i = rbatch - 1; i >= 0; --i) {
      const int64_t idx = rem % dout[i];
      rem /= dout[i];
      oa += (da[i] == 1 ? 0 : idx) * sa;
      ob += (db[i] == 1 ? 0 : idx) * sb;
      sa *= da[i];
      sb *= db[i];
    }
    k->lhs_batch_offset.push_back(oa * k->m * k->kdim);
    k->rhs_batch_offset.push_back(ob * k->kdim * k->n);
  }
  k->lhs = ctx.in_index(0);
  k->rhs = ctx.in_index(1);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerConvLike(const LowerContext& ctx, bool fp32) {
  // Every conv-like op reads a filter / weights / right-hand side as input 1.
  if (!ctx.HasInput(1)) return ctx.Invalid("input 1 is missing");
  switch (ctx.op.kind) {
    case OpKind::kConv2D: return fp32 ? LowerConvF32(ctx) : LowerConvInt(ctx);
    case OpKind::kDepthwiseConv2D: return fp32 ? LowerDepthwiseF32(ctx) : LowerDepthwiseInt(ctx);
    case OpKind::kTransposeConv:
      return fp32 ? LowerTransposeConvF32(ctx) : LowerTransposeConvInt(ctx);
    case OpKind::kFullyConnected:
      return fp32 ? LowerFullyConnectedF32(ctx) : LowerFullyConnectedInt(ctx);
    case OpKind::kBatchMatMul:
      return fp32 ? LowerBatchMatMulF32(ctx) : LowerBatchMatMulInt(ctx);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
