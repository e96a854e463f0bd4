// The softmax / reduction family: SOFTMAX and MEAN, SUM, REDUCE_MAX, integer (TFLite's
// fixed-point parameters, kernel core) and float32. The shape rules (softmax over the last
// axis, constant reduction axes and the output they imply) are checked once for both.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/reduce.h"
#include "mica/kernels/softmax.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

// ---- shapes (float32 and integer) -------------------------------------------------------------

// SOFTMAX: `rows` rows of `depth` (the last axis) values, the output the same size.
struct SoftmaxShape {
  int64_t rows = 0, depth = 1;
};

absl::StatusOr<SoftmaxShape> CheckSoftmaxShape(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.num_elements() != ctx.output(0).num_elements()) return ctx.Invalid("output size differs");
  SoftmaxShape s;
  s.depth = x.shape.empty() ? 1 : x.shape.back();
  s.rows = s.depth > 0 ? x.num_elements() / s.depth : 0;
  return s;
}

// MEAN / SUM / REDUCE_MAX: the constant axes (input 1) normalised into [0, rank), in the
// order given (repeats kept), which dimensions they reduce, and the output size they imply.
struct ReduceShape {
  std::vector<int> axes;
  std::vector<bool> reduced;  // per input dimension
  int64_t out_elements = 1;
};

absl::StatusOr<ReduceShape> CheckReduceShape(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstInts(ctx, 1));
  const int rank = static_cast<int>(x.shape.size());
  ReduceShape s;
  s.reduced.assign(std::max(rank, 1), false);
  for (int64_t a : axes) {
    MICA_ASSIGN_OR_RETURN(int ax, NormalizeAxis(ctx, a, rank));
    s.axes.push_back(ax);
    s.reduced[ax] = true;
  }
  for (int d = 0; d < rank; ++d) {
    if (!s.reduced[d]) s.out_elements *= x.shape[d];
  }
  if (ctx.output(0).num_elements() != s.out_elements) {
    return ctx.Invalid("output size does not match the axes");
  }
  return s;
}

// ---- integer -------------------------------------------------------------------------------

class SoftmaxKernel : public OpKernel {
 public:
  kernels::SoftmaxParams p;
  kernels::Softmax16Params p16;
  std::vector<int16_t> exp_lut, recip_lut;
  kernels::SoftmaxFn fn8 = nullptr;
  kernels::SoftmaxInt8ToInt16Fn fn8to16 = nullptr;
  int mode = 0;  // 0 int8->int8, 1 int8->int16, 2 int16->int16
  int32_t rows = 0, depth = 0;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    switch (mode) {
      case 0:
        return KernelError(fn8(p, rows, depth, ctx.In<int8_t>(in), ctx.Out<int8_t>(out)),
                           "Softmax");
      case 1:
        return KernelError(fn8to16(p, rows, depth, ctx.In<int8_t>(in), ctx.Out<int16_t>(out)),
                           "SoftmaxInt8ToInt16");
      default:
        return KernelError(
            kernels::Softmax16(p16, rows, depth, ctx.In<int16_t>(in), ctx.Out<int16_t>(out)),
            "Softmax16");
    }
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.tensors = {in, out};
    if (mode == 2) {
      w.code = device::PlanOp::kSoftmax16;
      w.SetParams(device::Softmax16OpParams{p16.input_multiplier, p16.input_left_shift, rows,
                                            depth});
      w.AddArray(exp_lut);
      w.AddArray(recip_lut);
      return true;
    }
    w.code = mode == 0 ? device::PlanOp::kSoftmax : device::PlanOp::kSoftmaxInt8ToInt16;
    w.SetParams(device::SoftmaxOpParams{p, rows, depth});
    return true;
  }
};

float ExpF(float x) { return std::exp(x); }
float RecipOnePlusF(float x) { return 1.0f / (1.0f + x); }

absl::StatusOr<KernelPtr> LowerSoftmaxInt(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  MICA_ASSIGN_OR_RETURN(SoftmaxShape s, CheckSoftmaxShape(ctx));
  auto k = std::make_unique<SoftmaxKernel>();
  k->depth = static_cast<int32_t>(s.depth);
  k->rows = static_cast<int32_t>(s.rows);
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  const double beta = ctx.op.Attrs<SoftmaxAttrs>().beta;
  if (x.dtype == DType::kInt8) {
    constexpr int kScaledDiffIntegerBits = 5;
    const double real = std::min(beta * static_cast<double>(Scale(x)) *
                                     static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                                 static_cast<double>((int64_t{1} << 31) - 1));
    const kernels::Requant m = Multiplier(real);
    if (m.shift < 0 || m.shift > 31) {
      // TFLite's int8 softmax scales the input difference up (a left shift of 0 to 31).
      return ctx.Invalid("beta ", beta, " x input scale ", Scale(x),
                         " is too small for the int8 softmax (its input multiplier needs a left "
                         "shift of 0 to 31)");
    }
    k->p.input_beta_multiplier = m.multiplier;
    k->p.input_beta_left_shift = m.shift;
    k->p.diff_min = -InputRadius(kScaledDiffIntegerBits, m.shift);
    if (y.dtype == DType::kInt8) {
      k->mode = 0;
      k->fn8 = PickVariant(kernels::SoftmaxVariants(), ctx.isa, &kernels::Softmax);
    } else if (y.dtype == DType::kInt16) {
      k->mode = 1;
      k->fn8to16 = PickVariant(kernels::SoftmaxInt8ToInt16Variants(), ctx.isa,
                               &kernels::SoftmaxInt8ToInt16);
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
  bool ExportToPlan(PlanOpWriter& w) const override {
    constexpr bool i16 = std::is_same_v<T, int16_t>;
    using device::PlanOp;
    w.code = kind == OpKind::kMean  ? (i16 ? PlanOp::kMean16 : PlanOp::kMean)
             : kind == OpKind::kSum ? (i16 ? PlanOp::kSum16 : PlanOp::kSum)
                                    : (i16 ? PlanOp::kReduceMax16 : PlanOp::kReduceMax);
    w.SetParams(device::ReduceOpParams{p, shape, axes});
    w.tensors = {in, out};
    return true;
  }
};

absl::StatusOr<KernelPtr> LowerReduceInt(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.dtype != y.dtype || (x.dtype != DType::kInt8 && x.dtype != DType::kInt16)) {
    return ctx.Unimplemented(DT(x.dtype), " -> ", DT(y.dtype));
  }
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, x));
  MICA_RETURN_IF_ERROR(RequireQuantized(ctx, y));
  MICA_ASSIGN_OR_RETURN(ReduceShape s, CheckReduceShape(ctx));
  if (s.axes.size() > static_cast<size_t>(kernels::kMaxRank)) return ctx.Invalid("too many axes");
  kernels::ReduceAxes ra;
  for (int ax : s.axes) ra.axis[ra.count++] = ax;
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


// ---- float32 ---------------------------------------------------------------------------------

class ReduceF32 : public OpKernel {
 public:
  OpKind kind = OpKind::kMean;
  int rank = 0;
  int64_t dims[kHostMaxRank] = {};
  int64_t out_stride[kHostMaxRank] = {};  // 0 on reduced axes
  int64_t out_count = 0, reduced = 1;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    const float init = kind == OpKind::kReduceMax ? std::numeric_limits<float>::lowest() : 0.f;
    std::fill(y, y + out_count, init);
    int64_t idx[kHostMaxRank] = {};
    int64_t total = 1;
    for (int d = 0; d < rank; ++d) total *= dims[d];
    int64_t o = 0;
    for (int64_t i = 0; i < total; ++i) {
      y[o] = kind == OpKind::kReduceMax ? std::max(y[o], x[i]) : y[o] + x[i];
      for (int d = rank - 1; d >= 0; --d) {
        ++idx[d];
        o += out_stride[d];
        if (idx[d] < dims[d]) break;
        o -= out_stride[d] * dims[d];
        idx[d] = 0;
      }
    }
    if (kind == OpKind::kMean) {
      for (int64_t i = 0; i < out_count; ++i) y[i] /= static_cast<float>(reduced);
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerReduceF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(0)));
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(0)));
  const Tensor& x = ctx.input(0);
  if (x.shape.size() > static_cast<size_t>(kHostMaxRank)) return ctx.Unimplemented("rank > 8");
  MICA_ASSIGN_OR_RETURN(ReduceShape s, CheckReduceShape(ctx));
  auto k = std::make_unique<ReduceF32>();
  k->kind = ctx.op.kind;
  k->rank = static_cast<int>(x.shape.size());
  int64_t stride = 1;
  for (int d = k->rank - 1; d >= 0; --d) {
    k->dims[d] = x.shape[d];
    if (s.reduced[d]) {
      k->out_stride[d] = 0;
      k->reduced *= x.shape[d];
    } else {
      k->out_stride[d] = stride;
      stride *= x.shape[d];
    }
  }
  k->out_count = stride;
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

class SoftmaxF32 : public OpKernel {
 public:
  int64_t outer = 1, depth = 1;
  float beta = 1.f;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    for (int64_t o = 0; o < outer; ++o) {
      const float* xp = x + o * depth;
      float* yp = y + o * depth;
      float mx = std::numeric_limits<float>::lowest();
      for (int64_t i = 0; i < depth; ++i) mx = std::max(mx, xp[i]);
      float sum = 0.f;
      for (int64_t i = 0; i < depth; ++i) {
        yp[i] = std::exp((xp[i] - mx) * beta);
        sum += yp[i];
      }
      for (int64_t i = 0; i < depth; ++i) yp[i] /= sum;
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerSoftmaxF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  MICA_ASSIGN_OR_RETURN(SoftmaxShape s, CheckSoftmaxShape(ctx));
  auto k = std::make_unique<SoftmaxF32>();
  k->depth = s.depth;
  k->outer = s.rows;
  k->beta = ctx.op.Attrs<SoftmaxAttrs>().beta;
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerSoftmaxReduce(const LowerContext& ctx, bool fp32) {
  switch (ctx.op.kind) {
    case OpKind::kSoftmax: return fp32 ? LowerSoftmaxF32(ctx) : LowerSoftmaxInt(ctx);
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
      return fp32 ? LowerReduceF32(ctx) : LowerReduceInt(ctx);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
