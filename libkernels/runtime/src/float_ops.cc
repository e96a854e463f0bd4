// float32 kernels for float graphs: plain loops written to match TFLite's reference float
// kernels' semantics (padding, broadcasting, fused activations).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "op_kernel.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

constexpr int kMaxRank = 8;

absl::Status RequireFloat(const LowerContext& ctx, const Tensor& t) {
  if (t.dtype != DType::kFloat32) {
    return ctx.Unimplemented("tensor '", t.name, "' is ", DT(t.dtype),
                             " in a float32 operator (mixed-type operators are not supported)");
  }
  return absl::OkStatus();
}

absl::Status RequireAllFloat(const LowerContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i)) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(i)));
  }
  for (int i = 0; i < ctx.num_outputs(); ++i) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(i)));
  return absl::OkStatus();
}

inline float Clampf(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

// ---- convolution family -------------------------------------------------------------------

struct ConvGeom {
  int32_t n = 1, in_h = 1, in_w = 1, in_c = 1;
  int32_t out_h = 1, out_w = 1, out_c = 1;
  int32_t k_h = 1, k_w = 1;
  int32_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int32_t pad_h = 0, pad_w = 0;
  float act_lo = 0, act_hi = 0;
};

class ConvF32 : public OpKernel {
 public:
  ConvGeom g;
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
              const int32_t iy = oy * g.stride_h - g.pad_h + ky * g.dil_h;
              if (iy < 0 || iy >= g.in_h) continue;
              for (int32_t kx = 0; kx < g.k_w; ++kx) {
                const int32_t ix = ox * g.stride_w - g.pad_w + kx * g.dil_w;
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
  ConvGeom g;
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
                const int32_t iy = oy * g.stride_h - g.pad_h + ky * g.dil_h;
                if (iy < 0 || iy >= g.in_h) continue;
                for (int32_t kx = 0; kx < g.k_w; ++kx) {
                  const int32_t ix = ox * g.stride_w - g.pad_w + kx * g.dil_w;
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
  ConvGeom g;  // in_* is the op's input, out_* its output
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
            const int32_t oy = iy * g.stride_h - g.pad_h + ky;
            if (oy < 0 || oy >= g.out_h) continue;
            for (int32_t kx = 0; kx < g.k_w; ++kx) {
              const int32_t ox = ix * g.stride_w - g.pad_w + kx;
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

absl::Status CheckConvCommon(const LowerContext& ctx, int bias_input) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  if (ctx.HasInput(bias_input) && !ctx.input(bias_input).is_constant()) {
    // Run-time bias is fine: it is read at Eval.
  }
  return absl::OkStatus();
}

absl::StatusOr<KernelPtr> LowerConv(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(CheckConvCommon(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  const auto& a = ctx.op.Attrs<Conv2DAttrs>();
  auto k = std::make_unique<ConvF32>();
  ConvGeom& g = k->g;
  g.n = x.shape[0]; g.in_h = x.shape[1]; g.in_w = x.shape[2]; g.in_c = x.shape[3];
  g.out_c = w.shape[0]; g.k_h = w.shape[1]; g.k_w = w.shape[2];
  k->filter_in_c = w.shape[3];
  if (k->filter_in_c <= 0 || g.in_c % k->filter_in_c != 0) {
    return ctx.Invalid("input channels ", g.in_c, " not a multiple of filter channels ",
                       k->filter_in_c);
  }
  k->groups = g.in_c / k->filter_in_c;
  if (g.out_c % k->groups != 0) return ctx.Invalid("output channels not divisible by groups");
  g.stride_h = a.stride_h; g.stride_w = a.stride_w;
  g.dil_h = a.dilation_h; g.dil_w = a.dilation_w;
  g.out_h = ComputeOutSize(a.padding, g.in_h, g.k_h, g.stride_h, g.dil_h);
  g.out_w = ComputeOutSize(a.padding, g.in_w, g.k_w, g.stride_w, g.dil_w);
  if (y.shape != std::vector<int32_t>{g.n, g.out_h, g.out_w, g.out_c}) {
    return ctx.Invalid("output shape does not match the convolution");
  }
  g.pad_h = ComputePadding(a.padding, g.in_h, g.k_h, g.stride_h, g.dil_h, g.out_h).pad;
  g.pad_w = ComputePadding(a.padding, g.in_w, g.k_w, g.stride_w, g.dil_w, g.out_w).pad;
  FloatActivationRange(a.activation, &g.act_lo, &g.act_hi);
  k->in = ctx.in_index(0);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerDepthwise(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(CheckConvCommon(ctx, 2));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  const auto& a = ctx.op.Attrs<DepthwiseConv2DAttrs>();
  auto k = std::make_unique<DepthwiseF32>();
  ConvGeom& g = k->g;
  g.n = x.shape[0]; g.in_h = x.shape[1]; g.in_w = x.shape[2]; g.in_c = x.shape[3];
  g.k_h = w.shape[1]; g.k_w = w.shape[2]; g.out_c = w.shape[3];
  if (g.in_c <= 0 || g.out_c % g.in_c != 0) {
    return ctx.Invalid("filter channels ", g.out_c, " not a multiple of input channels ", g.in_c);
  }
  k->mult = g.out_c / g.in_c;
  g.stride_h = a.stride_h; g.stride_w = a.stride_w;
  g.dil_h = a.dilation_h; g.dil_w = a.dilation_w;
  g.out_h = ComputeOutSize(a.padding, g.in_h, g.k_h, g.stride_h, g.dil_h);
  g.out_w = ComputeOutSize(a.padding, g.in_w, g.k_w, g.stride_w, g.dil_w);
  if (y.shape != std::vector<int32_t>{g.n, g.out_h, g.out_w, g.out_c}) {
    return ctx.Invalid("output shape does not match the depthwise convolution");
  }
  g.pad_h = ComputePadding(a.padding, g.in_h, g.k_h, g.stride_h, g.dil_h, g.out_h).pad;
  g.pad_w = ComputePadding(a.padding, g.in_w, g.k_w, g.stride_w, g.dil_w, g.out_w).pad;
  FloatActivationRange(a.activation, &g.act_lo, &g.act_hi);
  k->in = ctx.in_index(0);
  k->filter = ctx.in_index(1);
  k->bias = ctx.HasInput(2) ? ctx.in_index(2) : -1;
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerTransposeConv(const LowerContext& ctx) {
  // Inputs: output_shape (int32), filter, input, optional bias.
  for (int i = 1; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i)) MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(i)));
  }
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(0)));
  const Tensor& w = ctx.input(1);
  const Tensor& x = ctx.input(2);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) {
    return ctx.Invalid("input, filter and output must be 4-D");
  }
  const auto& a = ctx.op.Attrs<TransposeConvAttrs>();
  auto k = std::make_unique<TransposeConvF32>();
  ConvGeom& g = k->g;
  g.n = x.shape[0]; g.in_h = x.shape[1]; g.in_w = x.shape[2]; g.in_c = x.shape[3];
  g.out_c = w.shape[0]; g.k_h = w.shape[1]; g.k_w = w.shape[2];
  if (w.shape[3] != g.in_c) return ctx.Invalid("filter input channels do not match the input");
  if (y.shape[0] != g.n || y.shape[3] != g.out_c) {
    return ctx.Invalid("output shape does not match the transpose convolution");
  }
  g.out_h = y.shape[1]; g.out_w = y.shape[2];
  g.stride_h = a.stride_h; g.stride_w = a.stride_w;
  const int32_t oh = ComputeOutSize(a.padding, g.out_h, g.k_h, g.stride_h, 1);
  const int32_t ow = ComputeOutSize(a.padding, g.out_w, g.k_w, g.stride_w, 1);
  g.pad_h = ComputePadding(a.padding, g.out_h, g.k_h, g.stride_h, 1, oh).pad;
  g.pad_w = ComputePadding(a.padding, g.out_w, g.k_w, g.stride_w, 1, ow).pad;
  FloatActivationRange(a.activation, &g.act_lo, &g.act_hi);
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

absl::StatusOr<KernelPtr> LowerFullyConnected(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (w.shape.size() != 2) return ctx.Invalid("weights must be 2-D");
  auto k = std::make_unique<FullyConnectedF32>();
  k->out_size = w.shape[0];
  k->in_size = w.shape[1];
  if (k->in_size <= 0 || x.num_elements() % k->in_size != 0) {
    return ctx.Invalid("input size ", x.num_elements(), " not a multiple of ", k->in_size);
  }
  k->batches = static_cast<int32_t>(x.num_elements() / k->in_size);
  if (ctx.output(0).num_elements() != static_cast<int64_t>(k->batches) * k->out_size) {
    return ctx.Invalid("output has ", ctx.output(0).num_elements(), " elements, expected ",
                       static_cast<int64_t>(k->batches) * k->out_size);
  }
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

absl::StatusOr<KernelPtr> LowerBatchMatMul(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.shape.size() < 2 || b.shape.size() < 2) return ctx.Invalid("operands must be >= 2-D");
  const auto& at = ctx.op.Attrs<BatchMatMulAttrs>();
  auto k = std::make_unique<BatchMatMulF32>();
  k->adj_x = at.adj_x;
  k->adj_y = at.adj_y;
  const int ra = static_cast<int>(a.shape.size()), rb = static_cast<int>(b.shape.size());
  k->m = at.adj_x ? a.shape[ra - 1] : a.shape[ra - 2];
  k->kdim = at.adj_x ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t kb = at.adj_y ? b.shape[rb - 1] : b.shape[rb - 2];
  k->n = at.adj_y ? b.shape[rb - 2] : b.shape[rb - 1];
  if (kb != k->kdim) return ctx.Invalid("inner dimensions differ: ", k->kdim, " vs ", kb);
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

// ---- elementwise --------------------------------------------------------------------------

// Broadcast iteration over the output shape with per-input strides (0 on broadcast dims).
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t sa[kMaxRank] = {}, sb[kMaxRank] = {};

  template <typename F>
  void ForEach(F&& f) const {
    int64_t idx[kMaxRank] = {};
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
  if (rank > kMaxRank) return ctx.Unimplemented("rank ", rank, " broadcast");
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

absl::StatusOr<KernelPtr> LowerBinary(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  if (ctx.num_inputs() < 2 || !ctx.HasInput(0) || !ctx.HasInput(1)) {
    return ctx.Invalid("needs two inputs");
  }
  auto k = std::make_unique<BinaryF32>();
  MICA_ASSIGN_OR_RETURN(k->bc, MakeBroadcast(ctx, ctx.input(0).shape, ctx.input(1).shape,
                                             ctx.output(0).shape));
  Activation act = Activation::kNone;
  if (std::holds_alternative<ElementwiseAttrs>(ctx.op.attrs)) {
    act = ctx.op.Attrs<ElementwiseAttrs>().activation;
  }
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

absl::StatusOr<KernelPtr> LowerUnary(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  auto k = std::make_unique<UnaryF32>();
  k->count = ctx.input(0).num_elements();
  if (ctx.output(0).num_elements() != k->count) return ctx.Invalid("output size differs");
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

// ---- pooling, reductions, softmax ---------------------------------------------------------

class PoolF32 : public OpKernel {
 public:
  ConvGeom g;
  bool max = true;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    for (int32_t n = 0; n < g.n; ++n) {
      for (int32_t oy = 0; oy < g.out_h; ++oy) {
        for (int32_t ox = 0; ox < g.out_w; ++ox) {
          const int32_t y0 = oy * g.stride_h - g.pad_h, x0 = ox * g.stride_w - g.pad_w;
          const int32_t ky0 = std::max(0, -y0), ky1 = std::min(g.k_h, g.in_h - y0);
          const int32_t kx0 = std::max(0, -x0), kx1 = std::min(g.k_w, g.in_w - x0);
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

absl::StatusOr<KernelPtr> LowerPool(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const Tensor& x = ctx.input(0);
  const Tensor& y = ctx.output(0);
  if (x.shape.size() != 4 || y.shape.size() != 4) return ctx.Invalid("input and output must be 4-D");
  const auto& a = ctx.op.Attrs<Pool2DAttrs>();
  auto k = std::make_unique<PoolF32>();
  k->max = ctx.op.kind == OpKind::kMaxPool2D;
  ConvGeom& g = k->g;
  g.n = x.shape[0]; g.in_h = x.shape[1]; g.in_w = x.shape[2]; g.in_c = x.shape[3];
  g.k_h = a.filter_h; g.k_w = a.filter_w; g.stride_h = a.stride_h; g.stride_w = a.stride_w;
  g.out_h = ComputeOutSize(a.padding, g.in_h, g.k_h, g.stride_h, 1);
  g.out_w = ComputeOutSize(a.padding, g.in_w, g.k_w, g.stride_w, 1);
  if (y.shape != std::vector<int32_t>{g.n, g.out_h, g.out_w, g.in_c}) {
    return ctx.Invalid("output shape does not match the pooling");
  }
  g.pad_h = ComputePadding(a.padding, g.in_h, g.k_h, g.stride_h, 1, g.out_h).pad;
  g.pad_w = ComputePadding(a.padding, g.in_w, g.k_w, g.stride_w, 1, g.out_w).pad;
  FloatActivationRange(a.activation, &g.act_lo, &g.act_hi);
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

class ReduceF32 : public OpKernel {
 public:
  OpKind kind = OpKind::kMean;
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t out_stride[kMaxRank] = {};  // 0 on reduced axes
  int64_t out_count = 0, reduced = 1;
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    const float* x = ctx.In<float>(in);
    float* y = ctx.Out<float>(out);
    const float init = kind == OpKind::kReduceMax ? std::numeric_limits<float>::lowest() : 0.f;
    std::fill(y, y + out_count, init);
    int64_t idx[kMaxRank] = {};
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

absl::StatusOr<KernelPtr> LowerReduce(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.input(0)));
  MICA_RETURN_IF_ERROR(RequireFloat(ctx, ctx.output(0)));
  const Tensor& x = ctx.input(0);
  if (x.shape.size() > static_cast<size_t>(kMaxRank)) return ctx.Unimplemented("rank > 8");
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstInts(ctx, 1));
  auto k = std::make_unique<ReduceF32>();
  k->kind = ctx.op.kind;
  k->rank = static_cast<int>(x.shape.size());
  std::vector<bool> reduce(k->rank, false);
  for (int64_t a : axes) {
    MICA_ASSIGN_OR_RETURN(int ax, NormalizeAxis(ctx, a, k->rank));
    reduce[ax] = true;
  }
  int64_t stride = 1;
  for (int d = k->rank - 1; d >= 0; --d) {
    k->dims[d] = x.shape[d];
    if (reduce[d]) {
      k->out_stride[d] = 0;
      k->reduced *= x.shape[d];
    } else {
      k->out_stride[d] = stride;
      stride *= x.shape[d];
    }
  }
  k->out_count = stride;
  if (ctx.output(0).num_elements() != k->out_count) return ctx.Invalid("output size differs");
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

absl::StatusOr<KernelPtr> LowerSoftmax(const LowerContext& ctx) {
  MICA_RETURN_IF_ERROR(RequireAllFloat(ctx));
  const Tensor& x = ctx.input(0);
  auto k = std::make_unique<SoftmaxF32>();
  k->depth = x.shape.empty() ? 1 : x.shape.back();
  k->outer = k->depth > 0 ? x.num_elements() / k->depth : 0;
  k->beta = ctx.op.Attrs<SoftmaxAttrs>().beta;
  if (ctx.output(0).num_elements() != x.num_elements()) return ctx.Invalid("output size differs");
  k->in = ctx.in_index(0);
  k->out = ctx.out_index(0);
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerFloat(const LowerContext& ctx) {
  for (int i = 0; i < std::min(ctx.num_inputs(), 1); ++i) {
    if (!ctx.HasInput(i)) return ctx.Invalid("input ", i, " is missing");
  }
  switch (ctx.op.kind) {
    case OpKind::kConv2D: return LowerConv(ctx);
    case OpKind::kDepthwiseConv2D: return LowerDepthwise(ctx);
    case OpKind::kTransposeConv: return LowerTransposeConv(ctx);
    case OpKind::kFullyConnected: return LowerFullyConnected(ctx);
    case OpKind::kBatchMatMul: return LowerBatchMatMul(ctx);
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kMaximum:
    case OpKind::kMinimum:
    case OpKind::kSquaredDifference:
    case OpKind::kPrelu:
      return LowerBinary(ctx);
    case OpKind::kLogistic:
    case OpKind::kTanh:
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kReluN1To1:
    case OpKind::kLeakyRelu:
    case OpKind::kHardSwish:
    case OpKind::kExp:
    case OpKind::kLog:
    case OpKind::kSqrt:
    case OpKind::kRsqrt:
    case OpKind::kAbs:
    case OpKind::kNeg:
      return LowerUnary(ctx);
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
      return LowerPool(ctx);
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
      return LowerReduce(ctx);
    case OpKind::kSoftmax:
      return LowerSoftmax(ctx);
    default:
      return ctx.Unimplemented("no float32 kernel for ", OpName(ctx.op));
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
