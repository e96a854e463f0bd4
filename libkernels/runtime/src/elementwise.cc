// The elementwise family: binary arithmetic (ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE, MINIMUM,
// MAXIMUM, PRELU) and unary activations and math (LOGISTIC, TANH, RELU*, LEAKY_RELU, HARD_SWISH,
// EXP, LOG, SQRT, RSQRT, ABS, NEG), integer and float32. Integer lowerings compute TFLite's
// fixed-point parameters once (its Prepare formulas) and call the kernel core, through the
// requested variant when the op has a run-time variant list.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/activations.h"
#include "mica/kernels/elementwise.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

using kernels::ActivationRange;
using kernels::KernelStatus;

// ---- shapes (float32 and integer) -------------------------------------------------------------

// Broadcast iteration over the output shape with per-input strides (0 on broadcast dims).
struct Broadcast {
  int rank = 0;
  int64_t dims[kHostMaxRank] = {};
  int64_t sa[kHostMaxRank] = {}, sb[kHostMaxRank] = {};

  template <typename F>
  void ForEach(F&& f) const {
    int64_t idx[kHostMaxRank] = {};
    int64_t total = 1;
    for (int d = 0; d < rank; ++d) total *= dims[d];
    int64_t ia = 0, ib = 0;
    for (int64_t o = 0; o < total; ++o) {
      f(o, ia, ib);
      for (int d = rank - 1; d >= 0; --d) {
        ++idx[d];
        ia += sa[d];
        ib += sb[d];
        if (idx[d] < dims[d]) break;
        ia -= sa[d] * dims[d];
        ib -= sb[d] * dims[d];
        idx[d] = 0;
      }
    }
  }
};

absl::StatusOr<Broadcast> MakeBroadcast(const LowerContext& ctx, const std::vector<int32_t>& a,
                                        const std::vector<int32_t>& b,
                                        const std::vector<int32_t>& out) {
  Broadcast bc;
  const int rank = static_cast<int>(std::max(a.size(), b.size()));
  if (rank > kHostMaxRank) return ctx.Unimplemented("rank ", rank, " broadcast");
  bc.rank = std::max(rank, 1);
  std::vector<int64_t> da(bc.rank, 1), db(bc.rank, 1);
  for (size_t i = 0; i < a.size(); ++i) da[bc.rank - a.size() + i] = a[i];
  for (size_t i = 0; i < b.size(); ++i) db[bc.rank - b.size() + i] = b[i];
  int64_t stride_a = 1, stride_b = 1;
  int64_t total = 1;
  for (int d = bc.rank - 1; d >= 0; --d) {
    if (da[d] != db[d] && da[d] != 1 && db[d] != 1) {
      return ctx.Invalid("shapes do not broadcast");
    }
    bc.dims[d] = std::max(da[d], db[d]);
    if (da[d] == 0 || db[d] == 0) bc.dims[d] = 0;
    bc.sa[d] = da[d] == 1 ? 0 : stride_a;
    bc.sb[d] = db[d] == 1 ? 0 : stride_b;
    stride_a *= da[d];
    stride_b *= db[d];
    total *= bc.dims[d];
  }
  if (NumElements(out) != total) return ctx.Invalid("output size does not match the broadcast");
  return bc;
}

// The shape rule of the binary operators: two inputs that broadcast (NumPy rules) to the
// output's element count.
absl::StatusOr<Broadcast> CheckBinaryShape(const LowerContext& ctx) {
  if (ctx.num_inputs() < 2 || !ctx.HasInput(0) || !ctx.HasInput(1)) {
    return ctx.Invalid("needs two inputs");
  }
  return MakeBroadcast(ctx, ctx.input(0).shape, ctx.input(1).shape, ctx.output(0).shape);
}

// The shape rule of the unary operators: as many output elements as input elements.
absl::Status CheckUnaryShape(const LowerContext& ctx) {
  if (ctx.output(0).num_elements() != ctx.input(0).num_elements()) {
    return ctx.Invalid("output size differs");
  }
  return absl::OkStatus();
}

// ---- integer binary -------------------------------------------------------------------------

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
  bool ExportToPlan(PlanOpWriter& w) const override {
    if constexpr (std::is_same_v<Params, kernels::MulParams>) {
      if constexpr (std::is_same_v<T, int8_t>) {
        if (!IsBodyOf(fn, kernels::MulVariants(), &kernels::Mul)) return false;
        w.code = device::PlanOp::kMul;
      } else {
        if (!IsBodyOf(fn, kernels::Mul16Variants(), &kernels::Mul16)) return false;
        w.code = device::PlanOp::kMul16;
      }
      w.SetParams(device::MulOpParams{p, sa, sb, so});
      w.tensors = {a, b, out};
      return true;
    } else if constexpr (!std::is_same_v<Params, kernels::AddParams>) {
      return false;
    } else {
      if constexpr (std::is_same_v<T, int8_t>) {
        if (IsBodyOf(fn, kernels::AddVariants(), &kernels::Add)) {
          w.code = device::PlanOp::kAdd;
        } else if (IsBodyOf(fn, kernels::SubVariants(), &kernels::Sub)) {
          w.code = device::PlanOp::kSub;
        } else if (fn == &kernels::SquaredDifference) {
          w.code = device::PlanOp::kSquaredDifference;
        } else {
          return false;
        }
      } else {
        if (IsBodyOf(fn, kernels::Add16Variants(), &kernels::Add16)) {
          w.code = device::PlanOp::kAdd16;
        } else if (IsBodyOf(fn, kernels::Sub16Variants(), &kernels::Sub16)) {
          w.code = device::PlanOp::kSub16;
        } else if (fn == &kernels::SquaredDifference16) {
          w.code = device::PlanOp::kSquaredDifference16;
        } else {
          return false;
        }
      }
      w.SetParams(device::BinaryOpParams{p, sa, sb, so});
      w.tensors = {a, b, out};
      return true;
    }
  }
};

template <typename T>
class MinMaxKernel : public OpKernel {
 public:
  using Fn = KernelStatus (*)(const kernels::Shape&, const T*, const kernels::Shape&, const T*,
                              const kernels::Shape&, T*);
  Fn fn = nullptr;  // the body --variant selects (PickVariant)
  bool minimum = true;
  kernels::Shape sa, sb, so;
  int32_t a = 0, b = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(sa, ctx.In<T>(a), sb, ctx.In<T>(b), so, ctx.Out<T>(out)), "MinMax");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    if constexpr (std::is_same_v<T, int8_t>) {
      w.code = minimum ? device::PlanOp::kMinimum : device::PlanOp::kMaximum;
    } else {
      w.code = minimum ? device::PlanOp::kMinimum16 : device::PlanOp::kMaximum16;
    }
    w.SetParams(device::MinMaxOpParams{sa, sb, so});
    w.tensors = {a, b, out};
    return true;
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

absl::StatusOr<KernelPtr> LowerBinaryInt(const LowerContext& ctx) {
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
      k->minimum = kind == OpKind::kMinimum;
      k->fn = k->minimum
                  ? PickVariant(kernels::Minimum16Variants(), ctx.isa, &kernels::Minimum16)
                  : PickVariant(kernels::Maximum16Variants(), ctx.isa, &kernels::Maximum16);
      MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
      return KernelPtr(std::move(k));
    }
    auto k = std::make_unique<MinMaxKernel<int8_t>>();
    k->minimum = kind == OpKind::kMinimum;
    k->fn = k->minimum ? PickVariant(kernels::MinimumVariants(), ctx.isa, &kernels::Minimum)
                       : PickVariant(kernels::MaximumVariants(), ctx.isa, &kernels::Maximum);
    MICA_RETURN_IF_ERROR(FillBinary(ctx, k.get()));
    return KernelPtr(std::move(k));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x1));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x2));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  const Activation act = FusedActivation(ctx.op);
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
  } else if (kind == OpKind::kSub && i16) {
    // TFLite Micro's int16 SUB rescales in double, as ADD does (its int8 SUB divides the float
    // scales first): with float division, 1 of 100 random broadcast cases was 1 LSB off
    // (test/tools/tflm_single_op.py --op sub16; regression in test/runtime).
    p.left_shift = 15;
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


// ---- integer activations ------------------------------------------------------------------

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
    return MakeUnaryForPlan<int8_t, int8_t>(
        ctx, logistic ? "Logistic" : "Tanh",
        logistic ? device::PlanOp::kLogistic : device::PlanOp::kTanh, p,
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
      return MakeUnaryForPlan<int16_t, int16_t>(ctx, "Logistic16", device::PlanOp::kLogistic16,
                                                p, [p](int32_t n, const int16_t* i, int16_t* o) {
                                           return kernels::Logistic16(p, n, i, o);
                                         });
    }
    return MakeUnaryForPlan<int16_t, int16_t>(
        ctx, "Tanh16", device::PlanOp::kTanh16, p,
        [p](int32_t n, const int16_t* i, int16_t* o) { return kernels::Tanh16(p, n, i, o); });
  }
  return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
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
      return MakeUnaryForPlan<int16_t, int16_t>(ctx, "Clamp16", device::PlanOp::kClamp16, r,
                                                [r](int32_t n, const int16_t* i, int16_t* o) {
        return kernels::Clamp16(r, n, i, o);
      });
    }
    return MakeUnaryForPlan<int8_t, int8_t>(ctx, "Clamp", device::PlanOp::kClamp, r,
                                            [r](int32_t n, const int8_t* i, int8_t* o) {
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
    return MakeUnaryForPlan<int16_t, int16_t>(ctx, "Relu16", device::PlanOp::kRelu16, p,
                                              [p](int32_t n, const int16_t* i, int16_t* o) {
      return kernels::Relu16(p, n, i, o);
    });
  }
  return MakeUnaryForPlan<int8_t, int8_t>(ctx, "Relu", device::PlanOp::kRelu, p,
                                          [p](int32_t n, const int8_t* i, int8_t* o) {
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
    return MakeUnaryForPlan<int8_t, int8_t>(ctx, "LeakyRelu", device::PlanOp::kLeakyRelu, p,
                                            [p](int32_t n, const int8_t* i, int8_t* o) {
      return kernels::LeakyRelu(p, n, i, o);
    });
  }
  if (x.dtype == DType::kInt16) {
    return MakeUnaryForPlan<int16_t, int16_t>(ctx, "LeakyRelu16", device::PlanOp::kLeakyRelu16,
                                              p, [p](int32_t n, const int16_t* i, int16_t* o) {
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
  return MakeUnaryForPlan<int8_t, int8_t>(ctx, "HardSwish", device::PlanOp::kHardSwish, p,
                                          [p](int32_t n, const int8_t* i, int8_t* o) {
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
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kPrelu;
    w.SetParams(device::PreluOpParams{p, si, sa});
    w.tensors = {in, alpha, out};
    return true;
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


// ---- float32 ---------------------------------------------------------------------------------

class BinaryF32 : public OpKernel {
 public:
  Broadcast bc;
  std::function<float(float, float)> fn;
  float lo = 0, hi = 0;
  int32_t a = 0, b = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(a);
    const float* y = ctx.In<float>(b);
    float* z = ctx.Out<float>(out);
    bc.ForEach([&](int64_t o, int64_t ia, int64_t ib) { z[o] = Clampf(fn(x[ia], y[ib]), lo, hi); });
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerBinaryF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  auto k = std::make_unique<BinaryF32>();
  MICA_ASSIGN_OR_RETURN(k->bc, CheckBinaryShape(ctx));
  const Activation act = FusedActivation(ctx.op);
  FloatActivationRange(act, &k->lo, &k->hi);
  switch (ctx.op.kind) {
    case OpKind::kAdd: k->fn = [](float x, float y) { return x + y; }; break;
    case OpKind::kSub: k->fn = [](float x, float y) { return x - y; }; break;
    case OpKind::kMul: k->fn = [](float x, float y) { return x * y; }; break;
    case OpKind::kDiv: k->fn = [](float x, float y) { return x / y; }; break;
    case OpKind::kMaximum: k->fn = [](float x, float y) { return std::max(x, y); }; break;
    case OpKind::kMinimum: k->fn = [](float x, float y) { return std::min(x, y); }; break;
    case OpKind::kSquaredDifference:
      k->fn = [](float x, float y) { return (x - y) * (x - y); };
      break;
    case OpKind::kPrelu:
      k->fn = [](float x, float alpha) { return x >= 0.f ? x : x * alpha; };
      break;
    default: return ctx.Unimplemented("not a binary operator");
  }
  k->a = ctx.in_index(0);
  k->b = ctx.in_index(1);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

class UnaryF32 : public OpKernel {
 public:
  std::function<float(float)> fn;
  int64_t count = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    for (int64_t i = 0; i < count; ++i) y[i] = fn(x[i]);
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerUnaryF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  auto k = std::make_unique<UnaryF32>();
  k->count = ctx.input(0).num_elements();
  switch (ctx.op.kind) {
    case OpKind::kLogistic: k->fn = [](float x) { return 1.f / (1.f + std::exp(-x)); }; break;
    case OpKind::kTanh: k->fn = [](float x) { return std::tanh(x); }; break;
    case OpKind::kRelu: k->fn = [](float x) { return std::max(x, 0.f); }; break;
    case OpKind::kRelu6: k->fn = [](float x) { return Clampf(x, 0.f, 6.f); }; break;
    case OpKind::kReluN1To1: k->fn = [](float x) { return Clampf(x, -1.f, 1.f); }; break;
    case OpKind::kLeakyRelu: {
      const float alpha = ctx.op.Attrs<LeakyReluAttrs>().alpha;
      k->fn = [alpha](float x) { return x > 0.f ? x : x * alpha; };
      break;
    }
    case OpKind::kHardSwish:
      k->fn = [](float x) { return x * Clampf(x + 3.f, 0.f, 6.f) / 6.f; };
      break;
    case OpKind::kExp: k->fn = [](float x) { return std::exp(x); }; break;
    case OpKind::kLog: k->fn = [](float x) { return std::log(x); }; break;
    case OpKind::kSqrt: k->fn = [](float x) { return std::sqrt(x); }; break;
    case OpKind::kRsqrt: k->fn = [](float x) { return 1.f / std::sqrt(x); }; break;
    case OpKind::kAbs: k->fn = [](float x) { return std::fabs(x); }; break;
    case OpKind::kNeg: k->fn = [](float x) { return -x; }; break;
    default: return ctx.Unimplemented("not a unary operator");
  }
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}


}  // namespace

// TODO(op_info): the binary / unary split and which kinds have integer kernels can read the
// operator-facts table (mica/model/op_info.h: category, arity) once libmodel has it.
absl::StatusOr<KernelPtr> LowerElementwise(const LowerContext& ctx, bool fp32) {
  switch (ctx.op.kind) {
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kSquaredDifference:
    case OpKind::kMinimum:
    case OpKind::kMaximum:
    case OpKind::kPrelu:
      MICA_RETURN_IF_ERROR(CheckBinaryShape(ctx).status());
      if (fp32) return LowerBinaryF32(ctx);
      return ctx.op.kind == OpKind::kPrelu ? LowerPrelu(ctx) : LowerBinaryInt(ctx);
    case OpKind::kDiv:
      if (!fp32) return NoKernel(ctx, fp32);
      MICA_RETURN_IF_ERROR(CheckBinaryShape(ctx).status());
      return LowerBinaryF32(ctx);
    default: break;
  }
  // Unary operators.
  const OpKind kind = ctx.op.kind;
  const bool has_int = kind == OpKind::kLogistic || kind == OpKind::kTanh ||
                       kind == OpKind::kRelu || kind == OpKind::kRelu6 ||
                       kind == OpKind::kReluN1To1 || kind == OpKind::kLeakyRelu ||
                       kind == OpKind::kHardSwish;
  if (!fp32 && !has_int) return NoKernel(ctx, fp32);
  MICA_RETURN_IF_ERROR(CheckUnaryShape(ctx));
  if (fp32) return LowerUnaryF32(ctx);
  switch (kind) {
    case OpKind::kLogistic:
    case OpKind::kTanh:
      return LowerLogisticTanh(ctx);
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kReluN1To1:
      return LowerRelu(ctx);
    case OpKind::kLeakyRelu: return LowerLeakyRelu(ctx);
    case OpKind::kHardSwish: return LowerHardSwish(ctx);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
