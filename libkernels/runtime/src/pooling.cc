// The pooling family: MAX_POOL_2D and AVERAGE_POOL_2D, integer (kernel core, run-time
// variants) and float32. Both check the same shapes: 4-D NHWC input and output, the output of
// TFLite's SAME / VALID window size with the input's batches and channels.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/pooling.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

using kernels::KernelStatus;

struct PoolShape {
  kernels::Dims in, out;
  int32_t pad_h = 0, pad_w = 0;
};

absl::StatusOr<PoolShape> CheckPoolShape(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || y.shape.size() != 4) return ctx.Invalid("input and output must be 4-D");
  const auto& a = ctx.op.Attrs<Pool2DAttrs>();
  PoolShape s;
  s.in = ToDims(x.shape);
  s.out = ToDims(y.shape);
  const SpatialWindow win = WindowOf(a.padding, s.in.h, s.in.w, a.filter_h, a.filter_w,
                                     a.stride_h, a.stride_w, 1, 1);
  if (win.out_h != s.out.h || win.out_w != s.out.w || s.out.c != s.in.c || s.out.n != s.in.n) {
    return ctx.Invalid("output shape does not match the pooling");
  }
  s.pad_h = win.pad_h;
  s.pad_w = win.pad_w;
  return s;
}

// ---- integer -------------------------------------------------------------------------------

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
  bool ExportToPlan(PlanOpWriter& w) const override {
    if constexpr (std::is_same_v<T, int8_t>) {
      w.code = IsBodyOf(fn, kernels::MaxPoolVariants(), &kernels::MaxPool) ? device::PlanOp::kMaxPool
                                                                          : device::PlanOp::kAvgPool;
    } else {
      w.code = IsBodyOf(fn, kernels::MaxPool16Variants(), &kernels::MaxPool16)
                   ? device::PlanOp::kMaxPool16
                   : device::PlanOp::kAvgPool16;
    }
    w.SetParams(p);
    w.tensors = {in, out};
    return true;
  }
};

absl::StatusOr<KernelPtr> LowerPoolInt(const LowerContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  MICA_ASSIGN_OR_RETURN(PoolShape s, CheckPoolShape(ctx));
  if (x.dtype != y.dtype) return ctx.Unimplemented("input and output dtypes differ");
  const auto& a = ctx.op.Attrs<Pool2DAttrs>();
  kernels::PoolParams p;
  p.input = s.in;
  p.output = s.out;
  p.filter_h = a.filter_h;
  p.filter_w = a.filter_w;
  p.stride = {a.stride_h, a.stride_w};
  p.padding = {s.pad_h, s.pad_w};
  MICA_ASSIGN_OR_RETURN(p.activation, QuantizedActivationRange(ctx, a.activation, y));
  const bool max = ctx.op.kind == OpKind::kMaxPool2D;
  auto fill = [&](auto k, auto fn) {
    k->fn = fn;
    k->p = p;
    k->in = ctx.in_index(0);
    k->out = ctx.out_index(0);
    return KernelPtr(std::move(k));
  };
  if (x.dtype == DType::kInt8) {
    return fill(std::make_unique<PoolKernel<int8_t>>(),
                max ? PickVariant(kernels::MaxPoolVariants(), ctx.isa, &kernels::MaxPool)
                    : PickVariant(kernels::AvgPoolVariants(), ctx.isa, &kernels::AvgPool));
  }
  if (x.dtype == DType::kInt16) {
    return fill(std::make_unique<PoolKernel<int16_t>>(),
                max ? PickVariant(kernels::MaxPool16Variants(), ctx.isa, &kernels::MaxPool16)
                    : PickVariant(kernels::AvgPool16Variants(), ctx.isa, &kernels::AvgPool16));
  }
  return ctx.Unimplemented("no ", DT(x.dtype), " pooling");
}

// ---- float32 -------------------------------------------------------------------------------

class PoolF32 : public OpKernel {
 public:
  FloatGeom g;
  bool max = true;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    for (int32_t n = 0; n < g.n; ++n) {
      for (int32_t oy = 0; oy < g.out_h; ++oy) {
        for (int32_t ox = 0; ox < g.out_w; ++ox) {
          // int64: a hostile stride, window or padding near 2^31 must not overflow.
          const int64_t y0 = int64_t{oy} * g.stride_h - g.pad_h;
          const int64_t x0 = int64_t{ox} * g.stride_w - g.pad_w;
          const int32_t ky0 = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(0, -y0), g.k_h));
          const int32_t ky1 = static_cast<int32_t>(std::min<int64_t>(g.k_h, g.in_h - y0));
          const int32_t kx0 = static_cast<int32_t>(std::min<int64_t>(std::max<int64_t>(0, -x0), g.k_w));
          const int32_t kx1 = static_cast<int32_t>(std::min<int64_t>(g.k_w, g.in_w - x0));
          for (int32_t c = 0; c < g.in_c; ++c) {
            float acc = max ? std::numeric_limits<float>::lowest() : 0.f;
            int32_t count = 0;
            for (int32_t ky = ky0; ky < ky1; ++ky) {
              for (int32_t kx = kx0; kx < kx1; ++kx) {
                const float v =
                    x[((static_cast<int64_t>(n) * g.in_h + y0 + ky) * g.in_w + x0 + kx) * g.in_c + c];
                acc = max ? std::max(acc, v) : acc + v;
                ++count;
              }
            }
            if (!max) acc = count > 0 ? acc / static_cast<float>(count) : 0.f;
            y[((static_cast<int64_t>(n) * g.out_h + oy) * g.out_w + ox) * g.in_c + c] =
                Clampf(acc, g.act_lo, g.act_hi);
          }
        }
      }
    }
    return absl::OkStatus();
  }
};

absl::StatusOr<KernelPtr> LowerPoolF32(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  MICA_ASSIGN_OR_RETURN(PoolShape s, CheckPoolShape(ctx));
  const auto& a = ctx.op.Attrs<Pool2DAttrs>();
  auto k = std::make_unique<PoolF32>();
  k->max = ctx.op.kind == OpKind::kMaxPool2D;
  FloatGeom& g = k->g;
  g.n = s.in.n; g.in_h = s.in.h; g.in_w = s.in.w; g.in_c = s.in.c;
  g.k_h = a.filter_h; g.k_w = a.filter_w; g.stride_h = a.stride_h; g.stride_w = a.stride_w;
  g.out_h = s.out.h;
  g.out_w = s.out.w;
  g.pad_h = s.pad_h;
  g.pad_w = s.pad_w;
  FloatActivationRange(a.activation, &g.act_lo, &g.act_hi);
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerPooling(const LowerContext& ctx, bool fp32) {
  switch (ctx.op.kind) {
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
      return fp32 ? LowerPoolF32(ctx) : LowerPoolInt(ctx);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
