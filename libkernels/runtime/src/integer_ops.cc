// Integer (int8 / int16 activation) operators: compute TFLite's fixed-point parameters once at
// lowering time (its Prepare formulas) and call the kernel core at run time, through the
// requested variant when the op has a run-time variant list.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "integer_common.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/activations.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/pooling.h"
#include "mica/kernels/quantize.h"
#include "mica/kernels/softmax.h"
#include "mica/quant/multiplier.h"
#include "op_kernel.h"

namespace mica {
namespace runtime {
namespace internal {

using kernels::ActivationRange;
using kernels::Isa;
using kernels::KernelStatus;

float Scale(const Tensor& t) { return t.quant.scale.empty() ? 0.f : t.quant.scale[0]; }
int32_t ZeroPoint(const Tensor& t) {
  return t.quant.zero_point.empty() ? 0 : static_cast<int32_t>(t.quant.zero_point[0]);
}

kernels::Requant Multiplier(double real) {
  const quant::FixedPointMultiplier m = quant::QuantizeMultiplier(real);
  return kernels::Requant{m.multiplier, m.shift};
}

absl::StatusOr<ActivationRange> QuantizedActivationRange(const LowerContext& ctx, Activation a,
                                                         const Tensor& out) {
  int32_t qmin = -128, qmax = 127;
  if (out.dtype == DType::kInt16) {
    qmin = -32768;
    qmax = 32767;
  } else if (out.dtype == DType::kUInt8) {
    qmin = 0;
    qmax = 255;
  }
  const float scale = Scale(out);
  const int32_t zp = ZeroPoint(out);
  auto q = [&](float f) { return zp + static_cast<int32_t>(std::round(f / scale)); };
  ActivationRange r{qmin, qmax};
  switch (a) {
    case Activation::kNone: break;
    case Activation::kRelu: r.min = std::max(qmin, q(0.f)); break;
    case Activation::kRelu6:
      r.min = std::max(qmin, q(0.f));
      r.max = std::min(qmax, q(6.f));
      break;
    case Activation::kReluN1To1:
      r.min = std::max(qmin, q(-1.f));
      r.max = std::min(qmax, q(1.f));
      break;
    default:
      return ctx.Unimplemented("fused activation ", std::string(ActivationName(a)),
                               " on a quantized operator");
  }
  return r;
}

absl::Status KernelError(KernelStatus s, const char* kernel) {
  if (s == KernelStatus::kOk) return absl::OkStatus();
  if (s == KernelStatus::kNoImpl) {
    return absl::UnimplementedError(absl::StrCat(kernel, ": no body for these parameters"));
  }
  return absl::InternalError(absl::StrCat(kernel, ": kernel rejected its arguments"));
}

absl::Status RequireQuantized(const LowerContext& ctx, const Tensor& t) {
  if (t.quant.empty()) return ctx.Invalid("tensor '", t.name, "' is not quantized");
  if (!(Scale(t) > 0.f) || !std::isfinite(Scale(t))) {
    return ctx.Invalid("tensor '", t.name, "' has a non-positive scale");
  }
  return absl::OkStatus();
}

absl::StatusOr<kernels::Shape> ToShape(const LowerContext& ctx, const std::vector<int32_t>& s) {
  if (s.size() > static_cast<size_t>(kernels::kMaxRank)) {
    return ctx.Unimplemented("rank ", s.size(), " (kernels take up to ", kernels::kMaxRank, ")");
  }
  kernels::Shape out;
  out.rank = static_cast<int32_t>(s.size());
  for (size_t i = 0; i < s.size(); ++i) out.dims[i] = s[i];
  return out;
}

namespace {

// ---- convolutions ---------------------------------------------------------------------------

// Per-channel multipliers of conv-like ops: input_scale * filter_scale[c] / output_scale.
struct ChannelQuant {
  std::vector<int32_t> multiplier, shift;
  kernels::PerChannelRequant view() const { return {multiplier.data(), shift.data()}; }
};

absl::StatusOr<ChannelQuant> ConvChannelQuant(const LowerContext& ctx, const Tensor& in,
                                              const Tensor& filter, const Tensor& out,
                                              int32_t channels) {
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, in));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, filter));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, out));
  const size_t n = filter.quant.scale.size();
  if (n != 1 && n != static_cast<size_t>(channels)) {
    return ctx.Invalid("filter '", filter.name, "' has ", n, " scales for ", channels,
                       " output channels");
  }
  ChannelQuant q;
  for (int32_t c = 0; c < channels; ++c) {
    const double fs = static_cast<double>(filter.quant.scale[n == 1 ? 0 : c]);
    const double real = static_cast<double>(Scale(in)) * fs / static_cast<double>(Scale(out));
    const kernels::Requant r = Multiplier(real);
    q.multiplier.push_back(r.multiplier);
    q.shift.push_back(r.shift);
  }
  return q;
}

// Bias for 16x8 kernels: int64 (converted from int32 when the file stores int32).
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
  return b;
}

absl::Status CheckBias32(const LowerContext& ctx, int input, int32_t count) {
  if (!ctx.HasInput(input)) return absl::OkStatus();
  const Tensor& t = ctx.input(input);
  if (t.dtype != DType::kInt32) return ctx.Invalid("bias '", t.name, "' must be int32");
  if (t.num_elements() != count) return ctx.Invalid("bias '", t.name, "' has wrong size");
  return absl::OkStatus();
}

absl::Status CheckFilterInt8(const LowerContext& ctx, const Tensor& f) {
  if (f.dtype != DType::kInt8) {
    return ctx.Unimplemented("filter '", f.name, "' is ", DT(f.dtype), " (int8 expected)");
  }
  return absl::OkStatus();
}

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
};

absl::StatusOr<KernelPtr> LowerConv(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckFilterInt8(ctx, w));
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<Conv2DAttrs>();
  kernels::ConvParams p;
  p.input = ToDims(x.shape);
  p.filter = ToDims(w.shape);
  p.output = ToDims(y.shape);
  p.stride = {a.stride_h, a.stride_w};
  p.dilation = {a.dilation_h, a.dilation_w};
  const int32_t oh = ComputeOutSize(a.padding, p.input.h, p.filter.h, a.stride_h, a.dilation_h);
  const int32_t ow = ComputeOutSize(a.padding, p.input.w, p.filter.w, a.stride_w, a.dilation_w);
  if (oh != p.output.h || ow != p.output.w || p.output.c != p.filter.n ||
      p.output.n != p.input.n) {
    return ctx.Invalid("output shape does not match the convolution");
  }
  p.padding = {ComputePadding(a.padding, p.input.h, p.filter.h, a.stride_h, a.dilation_h, oh).pad,
               ComputePadding(a.padding, p.input.w, p.filter.w, a.stride_w, a.dilation_w, ow).pad};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ConvChannelQuant(ctx, x, w, y, p.output.c));
  if (x.dtype == DType::kInt8) {
    MICA_RETURN_IF_ERROR(CheckBias32(ctx, 2, p.output.c));
    p.input_offset = -ZeroPoint(x);
    p.output_offset = ZeroPoint(y);
    auto k = std::make_unique<
        ConvLikeKernel<kernels::ConvParams, kernels::ConvFn, int8_t, int32_t>>();
    k->fn = PickVariant(kernels::ConvVariants(), ctx.isa, &kernels::Conv);
    k->scratch_bytes = kernels::ConvScratchBytes(p, ctx.isa);
    k->name = "Conv";
    k->p = p;
    k->q = std::move(q);
    k->in = ctx.in_index(0);
    k->filter = ctx.in_index(1);
    k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  if (x.dtype == DType::kInt16) {
    if (ZeroPoint(x) != 0 || ZeroPoint(y) != 0) {
      return ctx.Invalid("int16 convolution needs zero points of 0");
    }
    auto k = std::make_unique<
        ConvLikeKernel<kernels::ConvParams, kernels::Conv16x8Fn, int16_t, int64_t>>();
    MICA_ASSIGN_OR_RETURN(k->bias64, Bias64(ctx, 2, p.output.c));
    k->fn = PickVariant(kernels::Conv16x8Variants(), ctx.isa, &kernels::Conv16x8);
    k->scratch_bytes = kernels::Conv16x8ScratchBytes(p, ctx.isa);
    k->name = "Conv16x8";
    k->p = p;
    k->q = std::move(q);
    k->in = ctx.in_index(0);
    k->filter = ctx.in_index(1);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " convolution");
}

absl::StatusOr<KernelPtr> LowerDepthwise(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckFilterInt8(ctx, w));
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<DepthwiseConv2DAttrs>();
  kernels::DepthwiseConvParams p;
  p.input = ToDims(x.shape);
  p.filter = ToDims(w.shape);
  p.output = ToDims(y.shape);
  if (p.input.c <= 0 || p.filter.c % p.input.c != 0) {
    return ctx.Invalid("filter channels ", p.filter.c, " not a multiple of input channels ",
                       p.input.c);
  }
  p.depth_multiplier = p.filter.c / p.input.c;
  p.stride = {a.stride_h, a.stride_w};
  p.dilation = {a.dilation_h, a.dilation_w};
  const int32_t oh = ComputeOutSize(a.padding, p.input.h, p.filter.h, a.stride_h, a.dilation_h);
  const int32_t ow = ComputeOutSize(a.padding, p.input.w, p.filter.w, a.stride_w, a.dilation_w);
  if (oh != p.output.h || ow != p.output.w || p.output.c != p.filter.c ||
      p.output.n != p.input.n) {
    return ctx.Invalid("output shape does not match the depthwise convolution");
  }
  p.padding = {ComputePadding(a.padding, p.input.h, p.filter.h, a.stride_h, a.dilation_h, oh).pad,
               ComputePadding(a.padding, p.input.w, p.filter.w, a.stride_w, a.dilation_w, ow).pad};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  MICA_ASSIGN_OR_RETURN(ChannelQuant q, ConvChannelQuant(ctx, x, w, y, p.output.c));
  if (x.dtype == DType::kInt8) {
    MICA_RETURN_IF_ERROR(CheckBias32(ctx, 2, p.output.c));
    p.input_offset = -ZeroPoint(x);
    p.output_offset = ZeroPoint(y);
    auto k = std::make_unique<ConvLikeKernel<kernels::DepthwiseConvParams,
                                             kernels::DepthwiseConvFn, int8_t, int32_t>>();
    k->fn = PickVariant(kernels::DepthwiseConvVariants(), ctx.isa, &kernels::DepthwiseConv);
    k->scratch_bytes = kernels::DepthwiseConvScratchBytes(p, ctx.isa);
    k->name = "DepthwiseConv";
    k->p = p;
    k->q = std::move(q);
    k->in = ctx.in_index(0);
    k->filter = ctx.in_index(1);
    k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  if (x.dtype == DType::kInt16) {
    if (ZeroPoint(x) != 0 || ZeroPoint(y) != 0) {
      return ctx.Invalid("int16 depthwise convolution needs zero points of 0");
    }
    auto k = std::make_unique<ConvLikeKernel<kernels::DepthwiseConvParams,
                                             kernels::DepthwiseConv16x8Fn, int16_t, int64_t>>();
    MICA_ASSIGN_OR_RETURN(k->bias64, Bias64(ctx, 2, p.output.c));
    k->fn = PickVariant(kernels::DepthwiseConv16x8Variants(), ctx.isa,
                        &kernels::DepthwiseConv16x8);
    k->scratch_bytes = kernels::DepthwiseConv16x8ScratchBytes(p, ctx.isa);
    k->name = "DepthwiseConv16x8";
    k->p = p;
    k->q = std::move(q);
    k->in = ctx.in_index(0);
    k->filter = ctx.in_index(1);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " depthwise convolution");
}

// ---- elementwise binary ---------------------------------------------------------------------

template <typename Params, typename T>
class BinaryKernel : public OpKernel {
 public:
  using Fn = KernelStatus (*)(const Params&, const kernels::Shape&, const T*,
                              const kernels::Shape&, const T*, const kernels::Shape&, T*);
  Params p;
  Fn fn = nullptr;
  const char* name = "";
  kernels::Shape sa, sb, so;
  int32_t a = 0, b = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(p, sa, ctx.In<T>(a), sb, ctx.In<T>(b), so, ctx.Out<T>(out)), name);
  }
};

template <typename T>
class MinMaxKernel : public OpKernel {
 public:
  using Fn = KernelStatus (*)(const kernels::Shape&, const T*, const kernels::Shape&, const T*,
                              const kernels::Shape&, T*);
  Fn fn = nullptr;
  kernels::Shape sa, sb, so;
  int32_t a = 0, b = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(sa, ctx.In<T>(a), sb, ctx.In<T>(b), so, ctx.Out<T>(out)), "MinMax");
  }
};

template <typename K>
absl::Status FillBinary(const LowerContext& ctx, K* k) {
  MICA_ASSIGN_OR_RETURN(k->sa, ToShape(ctx, ctx.input(0).shape));
  MICA_ASSIGN_OR_RETURN(k->sb, ToShape(ctx, ctx.input(1).shape));
  MICA_ASSIGN_OR_RETURN(k->so, ToShape(ctx, ctx.output(0).shape));
  k->a = ctx.in_index(0);
  k->b = ctx.in_index(1);
  k->out = ctx.out_index(0);
  return absl::OkStatus();
}

absl::StatusOr<KernelPtr> LowerBinary(const LowerContext& ctx) {
  if (ctx.num_inputs() < 2 || !ctx.HasInput(1)) return ctx.Invalid("needs two inputs");
  const Tensor& x1 = ctx.input(0);
  const Tensor& x2 = ctx.input(1);
  const Tensor& y = ctx.output(0);
  const DType t = x1.dtype;
  if (x2.dtype != t || y.dtype != t || (t != DType::kInt8 && t != DType::kInt16)) {
    return ctx.Unimplemented("dtypes ", DT(x1.dtype), ", ", DT(x2.dtype), " -> ", DT(y.dtype));
  }
  const bool i16 = t == DType::kInt16;
  const OpKind kind = ctx.op.kind;
  if (kind == OpKind::kMinimum || kind == OpKind::kMaximum) {
    if (x1.quant != y.quant || x2.quant != y.quant) {
      if (!(x1.quant.empty() && x2.quant.empty() && y.quant.empty()) &&
          (Scale(x1) != Scale(y) || Scale(x2) != Scale(y) || ZeroPoint(x1) != ZeroPoint(y) ||
           ZeroPoint(x2) != ZeroPoint(y))) {
        return ctx.Unimplemented("inputs and output must share scale and zero point");
      }
    }
    if (i16) {
      auto k = std::make_unique<MinMaxKernel<int16_t>>();
      k->fn = kind == OpKind::kMinimum ? &kernels::Minimum16 : &kernels::Maximum16;
      MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
      return KernelPtr(std::move(k));
    }
    auto k = std::make_unique<MinMaxKernel<int8_t>>();
    k->fn = kind == OpKind::kMinimum ? &kernels::Minimum : &kernels::Maximum;
    MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
    return KernelPtr(std::move(k));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x1));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x2));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  Activation act = Activation::kNone;
  if (std::holds_alternative<ElementwiseAttrs>(ctx.op.attrs)) {
    act = ctx.op.Attrs<ElementwiseAttrs>().activation;
  }
  const double s1 = Scale(x1), s2 = Scale(x2), so = Scale(y);
  if (kind == OpKind::kMul) {
    kernels::MulParams p;
    p.input1_offset = -ZeroPoint(x1);
    p.input2_offset = -ZeroPoint(x2);
    p.output_offset = ZeroPoint(y);
    p.output = Multiplier(s1 * s2 / so);
    MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, act, y));
    if (i16) {
      auto k = std::make_unique<BinaryKernel<kernels::MulParams, int16_t>>();
      k->fn = PickVariant(kernels::Mul16Variants(), ctx.isa, &kernels::Mul16);
      k->p = p;
      k->name = "Mul16";
      MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
      return KernelPtr(std::move(k));
    }
    auto k = std::make_unique<BinaryKernel<kernels::MulParams, int8_t>>();
    k->fn = PickVariant(kernels::MulVariants(), ctx.isa, &kernels::Mul);
    k->p = p;
    k->name = "Mul";
    MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
    return KernelPtr(std::move(k));
  }
  kernels::AddParams p;
  p.input1_offset = -ZeroPoint(x1);
  p.input2_offset = -ZeroPoint(x2);
  p.output_offset = ZeroPoint(y);
  if (kind == OpKind::kAdd) {
    p.left_shift = i16 ? 15 : 20;
    const double twice_max = 2 * static_cast<double>(std::max(Scale(x1), Scale(x2)));
    p.input1 = Multiplier(s1 / twice_max);
    p.input2 = Multiplier(s2 / twice_max);
    p.output = Multiplier(twice_max / ((1 << p.left_shift) * so));
    MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, act, y));
  } else if (kind == OpKind::kSub) {
    p.left_shift = i16 ? 15 : 20;
    const float twice_max = 2 * std::max(Scale(x1), Scale(x2));
    p.input1 = Multiplier(static_cast<double>(Scale(x1) / twice_max));
    p.input2 = Multiplier(static_cast<double>(Scale(x2) / twice_max));
    p.output = Multiplier(
        static_cast<double>(twice_max / (static_cast<float>(1 << p.left_shift) * Scale(y))));
    MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, act, y));
  } else if (kind == OpKind::kSquaredDifference) {
    p.left_shift = i16 ? 0 : 7;
    const double twice_max = 2 * static_cast<double>(std::max(Scale(x1), Scale(x2)));
    p.input1 = Multiplier(s1 / twice_max);
    p.input2 = Multiplier(s2 / twice_max);
    p.output = Multiplier(twice_max * twice_max /
                          static_cast<double>(static_cast<float>(1 << (2 * p.left_shift)) *
                                              Scale(y)));
    p.activation = i16 ? ActivationRange{-32768, 32767} : ActivationRange{-128, 127};
  } else {
    return ctx.Unimplemented("no ", DT(t), " kernel for ", OpName(ctx.op));
  }
  using Fn8 = KernelStatus (*)(const kernels::AddParams&, const kernels::Shape&, const int8_t*,
                               const kernels::Shape&, const int8_t*, const kernels::Shape&,
                               int8_t*);
  using Fn16 = KernelStatus (*)(const kernels::AddParams&, const kernels::Shape&,
                                const int16_t*, const kernels::Shape&, const int16_t*,
                                const kernels::Shape&, int16_t*);
  if (i16) {
    auto k = std::make_unique<BinaryKernel<kernels::AddParams, int16_t>>();
    Fn16 fn = kind == OpKind::kAdd   ? PickVariant(kernels::Add16Variants(), ctx.isa, &kernels::Add16)
              : kind == OpKind::kSub ? PickVariant(kernels::Sub16Variants(), ctx.isa, &kernels::Sub16)
                                     : &kernels::SquaredDifference16;
    k->fn = fn;
    k->p = p;
    k->name = "Add16/Sub16";
    MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
    return KernelPtr(std::move(k));
  }
  auto k = std::make_unique<BinaryKernel<kernels::AddParams, int8_t>>();
  Fn8 fn = kind == OpKind::kAdd   ? PickVariant(kernels::AddVariants(), ctx.isa, &kernels::Add)
           : kind == OpKind::kSub ? PickVariant(kernels::SubVariants(), ctx.isa, &kernels::Sub)
                                  : &kernels::SquaredDifference;
  k->fn = fn;
  k->p = p;
  k->name = "Add/Sub";
  MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
  return KernelPtr(std::move(k));
}

// ---- pooling --------------------------------------------------------------------------------

template <typename T>
class PoolKernel : public OpKernel {
 public:
  using Fn = KernelStatus (*)(const kernels::PoolParams&, const T*, T*);
  kernels::PoolParams p;
  Fn fn = nullptr;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(p, ctx.In<T>(in), ctx.Out<T>(out)), "Pool");
  }
};

absl::StatusOr<KernelPtr> LowerPool(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || y.shape.size() != 4) return ctx.Invalid("input and output must be 4-D");
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<Pool2DAttrs>();
  kernels::PoolParams p;
  p.input = ToDims(x.shape);
  p.output = ToDims(y.shape);
  p.filter_h = a.filter_h;
  p.filter_w = a.filter_w;
  p.stride = {a.stride_h, a.stride_w};
  const int32_t oh = ComputeOutSize(a.padding, p.input.h, a.filter_h, a.stride_h, 1);
  const int32_t ow = ComputeOutSize(a.padding, p.input.w, a.filter_w, a.stride_w, 1);
  if (oh != p.output.h || ow != p.output.w || p.output.c != p.input.c) {
    return ctx.Invalid("output shape does not match the pooling");
  }
  p.padding = {ComputePadding(a.padding, p.input.h, a.filter_h, a.stride_h, 1, oh).pad,
               ComputePadding(a.padding, p.input.w, a.filter_w, a.stride_w, 1, ow).pad};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  const bool max = ctx.op.kind == OpKind::kMaxPool2D;
  if (x.dtype == DType::kInt8) {
    auto k = std::make_unique<PoolKernel<int8_t>>();
    k->fn = max ? PickVariant(kernels::MaxPoolVariants(), ctx.isa, &kernels::MaxPool)
                : PickVariant(kernels::AvgPoolVariants(), ctx.isa, &kernels::AvgPool);
    k->p = p;
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  if (x.dtype == DType::kInt16) {
    auto k = std::make_unique<PoolKernel<int16_t>>();
    k->fn = max ? PickVariant(kernels::MaxPool16Variants(), ctx.isa, &kernels::MaxPool16)
                : PickVariant(kernels::AvgPool16Variants(), ctx.isa, &kernels::AvgPool16);
    k->p = p;
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " pooling");
}

// ---- softmax --------------------------------------------------------------------------------

int32_t InputRadius(int integer_bits, int left_shift) {
  const double max_input_rescaled = 1.0 * ((1 << integer_bits) - 1) *
                                    static_cast<double>(int64_t{1} << (31 - integer_bits)) /
                                    static_cast<double>(int64_t{1} << left_shift);
  return static_cast<int32_t>(std::floor(max_input_rescaled));
}

class SoftmaxKernel : public OpKernel {
 public:
  kernels::SoftmaxParams p;
  kernels::Softmax16Params p16;
  std::vector<int16_t> exp_lut, recip_lut;
  kernels::SoftmaxFn fn8 = nullptr;
  int mode = 0;  // 0 int8->int8, 1 int8->int16, 2 int16->int16
  int32_t rows = 0, depth = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    switch (mode) {
      case 0:
        return KernelError(fn8(p, rows, depth, ctx.In<int8_t>(in), ctx.Out<int8_t>(out)),
                           "Softmax");
      case 1:
        return KernelError(kernels::SoftmaxInt8ToInt16(p, rows, depth, ctx.In<int8_t>(in),
                                                       ctx.Out<int16_t>(out)),
                           "SoftmaxInt8ToInt16");
      default:
        return KernelError(
            kernels::Softmax16(p16, rows, depth, ctx.In<int16_t>(in), ctx.Out<int16_t>(out)),
            "Softmax16");
    }
  }
};

float ExpF(float x) { return std::exp(x); }
float RecipOnePlusF(float x) { return 1.0f / (1.0f + x); }

absl::StatusOr<KernelPtr> LowerSoftmax(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  if (x.num_elements() != y.num_elements()) return ctx.Invalid("output size differs");
  auto k = std::make_unique<SoftmaxKernel>();
  k->depth = x.shape.empty() ? 1 : x.shape.back();
  k->rows = k->depth > 0 ? static_cast<int32_t>(x.num_elements() / k->depth) : 0;
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  const double beta = ctx.op.Attrs<SoftmaxAttrs>().beta;
  if (x.dtype == DType::kInt8) {
    constexpr int kScaledDiffIntegerBits = 5;
    const double real = std::min(beta * static_cast<double>(Scale(x)) *
                                     static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                                 static_cast<double>((int64_t{1} << 31) - 1));
    const kernels::Requant m = Multiplier(real);
    k->p.input_beta_multiplier = m.multiplier;
    k->p.input_beta_left_shift = m.shift;
    k->p.diff_min = -InputRadius(kScaledDiffIntegerBits, m.shift);
    if (y.dtype == DType::kInt8) {
      k->mode = 0;
      k->fn8 = PickVariant(kernels::SoftmaxVariants(), ctx.isa, &kernels::Softmax);
    } else if (y.dtype == DType::kInt16) {
      k->mode = 1;
    } else {
      return ctx.Unimplemented("int8 softmax to ", DT(y.dtype));
    }
    return KernelPtr(std::move(k));
  }
  if (x.dtype == DType::kInt16 && y.dtype == DType::kInt16) {
    k->mode = 2;
    const kernels::Requant m = Multiplier(static_cast<double>(Scale(x)) * beta / (10.0 / 65535.0));
    k->p16.input_multiplier = m.multiplier;
    k->p16.input_left_shift = m.shift;
    k->exp_lut.resize(kernels::kInt16LutSize);
    k->recip_lut.resize(kernels::kInt16LutSize);
    kernels::GenerateInt16Lut<float>(&ExpF, -10.f, 0.f, -1.f, 1.f, k->exp_lut.data());
    kernels::GenerateInt16Lut<float>(&RecipOnePlusF, 0.f, 1.f, -1.f, 1.f, k->recip_lut.data());
    k->p16.exp_lut = k->exp_lut.data();
    k->p16.one_over_one_plus_x_lut = k->recip_lut.data();
    return KernelPtr(std::move(k));
  }
  return ctx.Unimplemented("softmax ", DT(x.dtype), " -> ", DT(y.dtype));
}

// ---- activations ----------------------------------------------------------------------------

// A unary kernel over `n` elements: a lambda bound at lowering time.
template <typename In, typename Out>
class UnaryKernel : public OpKernel {
 public:
  std::function<KernelStatus(int32_t, const In*, Out*)> fn;
  const char* name = "";
  int32_t n = 0, in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(n, ctx.In<In>(in), ctx.Out<Out>(out)), name);
  }
};

template <typename In, typename Out, typename F>
KernelPtr MakeUnary(const LowerContext& ctx, const char* name, F f) {
  auto k = std::make_unique<UnaryKernel<In, Out>>();
  k->fn = f;
  k->name = name;
  k->n = static_cast<int32_t>(ctx.input(0).num_elements());
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerLogisticTanh(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  const bool logistic = ctx.op.kind == OpKind::kLogistic;
  if (x.dtype == DType::kInt8 && y.dtype == DType::kInt8) {
    constexpr int kInputIntegerBits = 4;
    kernels::LogisticParams p;
    const double real =
        static_cast<double>(Scale(x)) * static_cast<double>(1 << (31 - kInputIntegerBits));
    int shift = 0;
    const double q = std::frexp(real, &shift);
    p.input_left_shift = shift;
    p.input_multiplier = static_cast<int32_t>(std::round(q * static_cast<double>(int64_t{1} << 31)));
    p.input_range_radius = InputRadius(kInputIntegerBits, shift);
    p.input_zero_point = ZeroPoint(x);
    auto fn = logistic ? PickVariant(kernels::LogisticVariants(), ctx.isa, &kernels::Logistic)
                       : PickVariant(kernels::TanhVariants(), ctx.isa, &kernels::Tanh);
    return MakeUnary<int8_t, int8_t>(
        ctx, logistic ? "Logistic" : "Tanh",
        [p, fn](int32_t n, const int8_t* i, int8_t* o) { return fn(p, n, i, o); });
  }
  if (x.dtype == DType::kInt16 && y.dtype == DType::kInt16) {
    kernels::Logistic16Params p;
    constexpr int kInputIntegerBits = 3;
    const float s = Scale(x);
    int exponent = 0;
    const float mant = std::frexp(s, &exponent);
    bool pot = mant == 0.5f;
    const int log2 = exponent - 1;
    p.input_left_shift = (15 - kInputIntegerBits) + log2;
    if (pot && (p.input_left_shift == 0 || p.input_left_shift == 1)) {
      p.input_multiplier = 0;
    } else {
      double m = static_cast<double>(s) * 4096.0 * 3.0;
      int ls = 0;
      while (m <= 32767.0 / 2.0 && ls <= 30) {
        ++ls;
        m *= 2.0;
      }
      p.input_left_shift = ls;
      p.input_multiplier = static_cast<int32_t>(m);
    }
    if (logistic) {
      return MakeUnary<int16_t, int16_t>(ctx, "Logistic16",
                                         [p](int32_t n, const int16_t* i, int16_t* o) {
                                           return kernels::Logistic16(p, n, i, o);
                                         });
    }
    return MakeUnary<int16_t, int16_t>(
        ctx, "Tanh16",
        [p](int32_t n, const int16_t* i, int16_t* o) { return kernels::Tanh16(p, n, i, o); });
  }
  return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
}

template <typename T>
T Saturate(int64_t v) {
  return static_cast<T>(std::min<int64_t>(std::max<int64_t>(v, std::numeric_limits<T>::min()),
                                          std::numeric_limits<T>::max()));
}

absl::StatusOr<KernelPtr> LowerRelu(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != y.dtype || (x.dtype != DType::kInt8 && x.dtype != DType::kInt16)) {
    return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  const bool i16 = x.dtype == DType::kInt16;
  const int32_t tmin = i16 ? -32768 : -128, tmax = i16 ? 32767 : 127;
  if (ctx.op.kind == OpKind::kRelu6) {
    // TFLite Micro: a raw clamp between the input's quantized 0 and 6.
    const int32_t zp = ZeroPoint(x);
    ActivationRange r;
    r.min = std::min(std::max(zp, tmin), tmax);
    r.max = std::min(std::max(static_cast<int32_t>(std::round(6.0f / Scale(x))) + zp, tmin), tmax);
    if (i16) {
      return MakeUnary<int16_t, int16_t>(ctx, "Clamp16", [r](int32_t n, const int16_t* i, int16_t* o) {
        return kernels::Clamp16(r, n, i, o);
      });
    }
    return MakeUnary<int8_t, int8_t>(ctx, "Clamp", [r](int32_t n, const int8_t* i, int8_t* o) {
      return kernels::Clamp(r, n, i, o);
    });
  }
  kernels::ReluParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_offset = ZeroPoint(y);
  p.output = Multiplier(static_cast<double>(Scale(x)) / static_cast<double>(Scale(y)));
  const float act_min = ctx.op.kind == OpKind::kReluN1To1 ? -1.f : 0.f;
  p.activation.min = std::max(tmin, p.output_offset +
                                        static_cast<int32_t>(std::roundf(act_min / Scale(y))));
  p.activation.max =
      ctx.op.kind == OpKind::kReluN1To1
          ? std::min(tmax, p.output_offset + static_cast<int32_t>(std::roundf(1.f / Scale(y))))
          : tmax;
  if (i16) {
    return MakeUnary<int16_t, int16_t>(ctx, "Relu16", [p](int32_t n, const int16_t* i, int16_t* o) {
      return kernels::Relu16(p, n, i, o);
    });
  }
  return MakeUnary<int8_t, int8_t>(ctx, "Relu", [p](int32_t n, const int8_t* i, int8_t* o) {
    return kernels::Relu(p, n, i, o);
  });
}

absl::StatusOr<KernelPtr> LowerLeakyRelu(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != y.dtype) return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  const float alpha = ctx.op.Attrs<LeakyReluAttrs>().alpha;
  kernels::LeakyReluParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_zero_point = ZeroPoint(y);
  p.alpha = Multiplier(static_cast<double>(Scale(x) * alpha / Scale(y)));
  p.identity = Multiplier(static_cast<double>(Scale(x) / Scale(y)));
  if (x.dtype == DType::kInt8) {
    return MakeUnary<int8_t, int8_t>(ctx, "LeakyRelu", [p](int32_t n, const int8_t* i, int8_t* o) {
      return kernels::LeakyRelu(p, n, i, o);
    });
  }
  if (x.dtype == DType::kInt16) {
    return MakeUnary<int16_t, int16_t>(ctx, "LeakyRelu16",
                                       [p](int32_t n, const int16_t* i, int16_t* o) {
                                         return kernels::LeakyRelu16(p, n, i, o);
                                       });
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " leaky relu");
}

absl::StatusOr<KernelPtr> LowerHardSwish(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  kernels::HardSwishParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_zero_point = ZeroPoint(y);
  const float hires = (1.0f / 128.0f) * Scale(x);
  const kernels::Requant out = Multiplier(static_cast<double>(hires / Scale(y)));
  p.output_multiplier_fixedpoint_int16 = kernels::HardSwishDownScaleMultiplier(out.multiplier);
  p.output_multiplier_exponent = out.shift;
  const kernels::Requant reluish = Multiplier(static_cast<double>(hires / (3.0f / 32768.0f)));
  p.reluish_multiplier_fixedpoint_int16 = kernels::HardSwishDownScaleMultiplier(reluish.multiplier);
  p.reluish_multiplier_exponent = reluish.shift;
  if (p.output_multiplier_exponent > 0) {
    return ctx.Unimplemented("hard swish output multiplier > 1");
  }
  return MakeUnary<int8_t, int8_t>(ctx, "HardSwish", [p](int32_t n, const int8_t* i, int8_t* o) {
    return kernels::HardSwish(p, n, i, o);
  });
}

class PreluKernel : public OpKernel {
 public:
  kernels::PreluParams p;
  kernels::Shape si, sa;
  int32_t in = 0, alpha = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(kernels::Prelu(p, si, ctx.In<int8_t>(in), sa, ctx.In<int8_t>(alpha),
                                      ctx.Out<int8_t>(out)),
                       "Prelu");
  }
};

absl::StatusOr<KernelPtr> LowerPrelu(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& al = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (x.dtype != DType::kInt8 || al.dtype != DType::kInt8 || y.dtype != DType::kInt8) {
    return ctx.Unimplemented("only int8 PRELU is supported");
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, al));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  if (x.shape != y.shape) return ctx.Unimplemented("output shape must equal the input's");
  auto k = std::make_unique<PreluKernel>();
  k->p.input_offset = -ZeroPoint(x);
  k->p.alpha_offset = -ZeroPoint(al);
  k->p.output_offset = ZeroPoint(y);
  k->p.output1 = Multiplier(static_cast<double>(Scale(x)) / static_cast<double>(Scale(y)));
  k->p.output2 = Multiplier(static_cast<double>(Scale(x)) * static_cast<double>(Scale(al)) /
                            static_cast<double>(Scale(y)));
  MICA_ASSIGN_OR_RETURN(k->si, ToShape(ctx, x.shape));
  MICA_ASSIGN_OR_RETURN(k->sa, ToShape(ctx, al.shape));
  k->in = ctx.in_index(0);
  k->alpha = ctx.in_index(1);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

// ---- requantize -------------------------------------------------------------------------------

// TFLite's reference MultiplyByQuantizedMultiplier (double rounding), for the host-only
// int32-output requantize below (the kernel core has no int32 output).
int32_t HostMbqm(int32_t x, int32_t multiplier, int32_t shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  int32_t high;
  if (a == multiplier && a == std::numeric_limits<int32_t>::min()) {
    high = std::numeric_limits<int32_t>::max();
  } else {
    const int64_t ab = static_cast<int64_t>(a) * multiplier;
    const int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
    high = static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
  }
  const int32_t mask = static_cast<int32_t>((int64_t{1} << right) - 1);
  const int32_t rem = high & mask;
  const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
  return (high >> right) + (rem > threshold ? 1 : 0);
}

// QUANTIZE int8/int16 -> int32 (TFLite Micro's reference Requantize with an int32 output).
template <typename In>
class RequantizeToInt32Kernel : public OpKernel {
 public:
  kernels::RequantizeParams p;
  int64_t n = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const In* x = ctx.In<In>(in);
    int32_t* y = ctx.Out<int32_t>(out);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(HostMbqm(x[i] - p.input_zero_point,
                                                      p.output.multiplier, p.output.shift)) +
                        p.output_zero_point;
      y[i] = static_cast<int32_t>(std::min<int64_t>(
          std::max<int64_t>(v, std::numeric_limits<int32_t>::min()),
          std::numeric_limits<int32_t>::max()));
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerRequantize(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  if (x.num_elements() != y.num_elements()) return ctx.Invalid("output size differs");
  kernels::RequantizeParams p;
  p.input_zero_point = ZeroPoint(x);
  p.output_zero_point = ZeroPoint(y);
  p.output = Multiplier(static_cast<double>(Scale(x)) / static_cast<double>(Scale(y)));
  auto is = [](const Tensor& t, DType d) { return t.dtype == d; };
  if (is(x, DType::kInt8) && is(y, DType::kInt8)) {
    return MakeUnary<int8_t, int8_t>(ctx, "Requantize", [p](int32_t n, const int8_t* i, int8_t* o) {
      return kernels::Requantize(p, n, i, o);
    });
  }
  if (is(x, DType::kInt8) && is(y, DType::kInt16)) {
    return MakeUnary<int8_t, int16_t>(ctx, "Requantize",
                                      [p](int32_t n, const int8_t* i, int16_t* o) {
                                        return kernels::Requantize(p, n, i, o);
                                      });
  }
  if (is(x, DType::kInt16) && is(y, DType::kInt8)) {
    return MakeUnary<int16_t, int8_t>(ctx, "Requantize",
                                      [p](int32_t n, const int16_t* i, int8_t* o) {
                                        return kernels::Requantize(p, n, i, o);
                                      });
  }
  if (is(x, DType::kInt16) && is(y, DType::kInt16)) {
    return MakeUnary<int16_t, int16_t>(ctx, "Requantize",
                                       [p](int32_t n, const int16_t* i, int16_t* o) {
                                         return kernels::Requantize(p, n, i, o);
                                       });
  }
  if ((is(x, DType::kInt8) || is(x, DType::kInt16)) && is(y, DType::kInt32)) {
    auto fill = [&](auto k) -> KernelPtr {
      k->p = p;
      k->n = x.num_elements();
      k->in = ctx.in_index(0);
      k->out = ctx.out_index(0);
      return KernelPtr(std::move(k));
    };
    if (is(x, DType::kInt8)) return fill(std::make_unique<RequantizeToInt32Kernel<int8_t>>());
    return fill(std::make_unique<RequantizeToInt32Kernel<int16_t>>());
  }
  return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerInteger(const LowerContext& ctx) {
  for (int i = 0; i < std::min(ctx.num_inputs(), 1); ++i) {
    if (!ctx.HasInput(i)) return ctx.Invalid("input ", i, " is missing");
  }
  switch (ctx.op.kind) {
    case OpKind::kConv2D: return LowerConv(ctx);
    case OpKind::kDepthwiseConv2D: return LowerDepthwise(ctx);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kSquaredDifference:
    case OpKind::kMinimum:
    case OpKind::kMaximum:
      return LowerBinary(ctx);
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
      return LowerPool(ctx);
    case OpKind::kSoftmax: return LowerSoftmax(ctx);
    case OpKind::kLogistic:
    case OpKind::kTanh:
      return LowerLogisticTanh(ctx);
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kReluN1To1:
      return LowerRelu(ctx);
    case OpKind::kLeakyRelu: return LowerLeakyRelu(ctx);
    case OpKind::kHardSwish: return LowerHardSwish(ctx);
    case OpKind::kPrelu: return LowerPrelu(ctx);
    case OpKind::kQuantize: return LowerRequantize(ctx);
    default: {
      absl::StatusOr<KernelPtr> more = LowerIntegerMore(ctx);
      if (more.ok() || more.status().code() != absl::StatusCode::kNotFound) return more;
      const DType t = ctx.HasInput(0) ? ctx.input(0).dtype : ctx.output(0).dtype;
      return ctx.Unimplemented("no ", DT(t), " kernel for ", OpName(ctx.op));
    }
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
