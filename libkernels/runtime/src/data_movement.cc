// Data-movement operators for every dtype: they move bytes, so one implementation serves
// float32, int8, int16 and int32 tensors (reshape, transpose, pad, concatenation, split, slice,
// strided slice, pack, unpack, gather).
#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lower_util.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/data_movement.h"
#include "op_kernel.h"
#include "plan_writer.h"

namespace mica {
namespace runtime {
namespace internal {
namespace {

constexpr int kMaxRank = 8;

// Copies an N-d box: dst[sum i_d * dst_stride_d] = src[sum i_d * src_stride_d] (elements).
struct CopyPlan {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t src_stride[kMaxRank] = {};
  int64_t dst_stride[kMaxRank] = {};
  int64_t src_base = 0, dst_base = 0;
  size_t es = 1;

  void Run(const uint8_t* src, uint8_t* dst) const {
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 0) return;
    }
    Rec(0, src + src_base * es, dst + dst_base * es);
  }
  void Rec(int d, const uint8_t* src, uint8_t* dst) const {
    if (d == rank) {
      std::memcpy(dst, src, es);
      return;
    }
    if (d == rank - 1 && src_stride[d] == 1 && dst_stride[d] == 1) {
      std::memcpy(dst, src, static_cast<size_t>(dims[d]) * es);
      return;
    }
    for (int64_t i = 0; i < dims[d]; ++i) {
      Rec(d + 1, src + i * src_stride[d] * static_cast<int64_t>(es),
          dst + i * dst_stride[d] * static_cast<int64_t>(es));
    }
  }
};

std::vector<int64_t> Strides(const std::vector<int32_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

// Data movement never requantizes: like TFLite's reference kernels, these operators copy the
// stored values even when the converter gave input and output different parameters (it does
// not for well-formed models). Only the dtypes must agree.
absl::Status CheckSameType(const LowerContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype) {
    return ctx.Invalid("dtype mismatch: '", a.name, "' is ", DT(a.dtype), ", '", b.name,
                       "' is ", DT(b.dtype));
  }
  return absl::OkStatus();
}

// Copies the whole input to the output (reshape, squeeze, expand dims).
class CopyKernel : public OpKernel {
 public:
  CopyKernel(int32_t in, int32_t out, size_t bytes) : in_(in), out_(out), bytes_(bytes) {}
  absl::Status Eval(const EvalContext& ctx) override {
    if (bytes_ > 0 && ctx.data[in_] != ctx.data[out_]) {
      std::memmove(ctx.data[out_], ctx.data[in_], bytes_);
    }
    return absl::OkStatus();
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kCopy;
    w.SetParams(device::CopyOpParams{static_cast<uint32_t>(bytes_)});
    w.tensors = {in_, out_};
    return true;
  }

 private:
  int32_t in_, out_;
  size_t bytes_;
};

// Runs a list of copy plans from inputs to outputs, after an optional fill of the outputs.
class BoxCopyKernel : public OpKernel {
 public:
  struct Step {
    int32_t src, dst;
    CopyPlan plan;
  };
  std::vector<Step> steps;
  // Optional fill of `fill_tensor` with `fill_value` (one element's bytes) before copying;
  // `fill_from` >= 0 reads the value from that tensor at run time instead.
  int32_t fill_tensor = -1;
  int32_t fill_from = -1;
  std::vector<uint8_t> fill_value;
  size_t fill_count = 0;

  absl::Status Eval(const EvalContext& ctx) override {
    if (fill_tensor >= 0) {
      const size_t es = fill_value.size();
      if (fill_from >= 0) std::memcpy(fill_value.data(), ctx.data[fill_from], es);
      uint8_t* dst = ctx.data[fill_tensor];
      bool all_same = true;
      for (size_t i = 1; i < es; ++i) all_same &= fill_value[i] == fill_value[0];
      if (all_same) {
        std::memset(dst, fill_value[0], fill_count * es);
      } else {
        for (size_t i = 0; i < fill_count; ++i) std::memcpy(dst + i * es, fill_value.data(), es);
      }
    }
    for (const Step& s : steps) s.plan.Run(ctx.data[s.src], ctx.data[s.dst]);
    return absl::OkStatus();
  }
};

// PAD / PADV2 with a constant value, rank <= 6, 1/2/4-byte elements: the kernel core's Pad.
class PadKernel : public OpKernel {
 public:
  kernels::PadParams p;
  kernels::Shape shape;
  uint8_t value[4] = {};
  uint32_t es = 1;
  int32_t in = 0, out = 0;
  kernels::PadFn fn = nullptr;  // the body --variant selects (PickVariant)
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(p, shape, ctx.data[in], value, ctx.data[out], es), "Pad");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    device::PadOpParams d{};
    d.p = p;
    d.in = shape;
    d.element_bytes = es;
    std::memcpy(d.value, value, sizeof(value));
    w.code = device::PlanOp::kPad;
    w.SetParams(d);
    w.tensors = {in, out};
    return true;
  }
};

// CONCATENATION / PACK of up to 16 inputs, rank <= 6, 1/2/4-byte elements, and TRANSPOSE of
// rank <= 6: the kernel core's entries (the device runtime runs the same).
class ConcatKernel : public OpKernel {
 public:
  int32_t axis = 0;
  std::vector<kernels::Shape> shapes;
  kernels::Shape out_shape;
  std::vector<int32_t> ins;
  int32_t out = 0;
  uint32_t es = 1;
  absl::Status Eval(const EvalContext& ctx) override {
    std::vector<const void*> ptrs;
    for (int32_t t : ins) ptrs.push_back(ctx.data[t]);
    return KernelError(kernels::Concatenation(axis, static_cast<int32_t>(ins.size()),
                                              shapes.data(), ptrs.data(), out_shape,
                                              ctx.data[out], es),
                       "Concatenation");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kConcatenation;
    w.SetParams(device::ConcatOpParams{axis, static_cast<int32_t>(ins.size()), es, out_shape});
    w.tensors = ins;
    w.tensors.push_back(out);
    w.AddArray(shapes);
    return true;
  }
};

class TransposeKernel : public OpKernel {
 public:
  device::TransposeOpParams d{};
  int32_t in = 0, out = 0;
  kernels::TransposeFn fn = nullptr;  // the body --variant selects (PickVariant)
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(fn(d.in, d.perm, ctx.data[in], ctx.data[out], d.element_bytes),
                       "Transpose");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kTranspose;
    w.SetParams(d);
    w.tensors = {in, out};
    return true;
  }
};

class SplitKernel : public OpKernel {
 public:
  int32_t axis = 0;
  kernels::Shape shape;
  std::vector<int32_t> sizes, outs;
  int32_t in = 0;
  uint32_t es = 1;
  absl::Status Eval(const EvalContext& ctx) override {
    std::vector<void*> ptrs;
    for (int32_t t : outs) ptrs.push_back(ctx.data[t]);
    return KernelError(kernels::Split(axis, shape, ctx.data[in],
                                      static_cast<int32_t>(outs.size()), sizes.data(),
                                      ptrs.data(), es),
                       "Split");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kSplit;
    w.SetParams(device::SplitOpParams{axis, static_cast<int32_t>(outs.size()), es, shape});
    w.tensors = {in};
    w.tensors.insert(w.tensors.end(), outs.begin(), outs.end());
    w.AddArray(sizes);
    return true;
  }
};

class StridedSliceKernel : public OpKernel {
 public:
  device::StridedSliceOpParams d{};
  int32_t in = 0, out = 0;
  absl::Status Eval(const EvalContext& ctx) override {
    return KernelError(kernels::StridedSlice(d.p, d.in, ctx.data[in], d.out, ctx.data[out],
                                             d.element_bytes),
                       "StridedSlice");
  }
  bool ExportToPlan(PlanOpWriter& w) const override {
    w.code = device::PlanOp::kStridedSlice;
    w.SetParams(d);
    w.tensors = {in, out};
    return true;
  }
};

class GatherKernel : public OpKernel {
 public:
  int32_t params = 0, indices = 0, out = 0;
  DType index_type = DType::kInt32;
  int64_t outer = 1, axis_size = 1, inner = 1, n_indices = 1;
  size_t es = 1;
  absl::Status Eval(const EvalContext& ctx) override {
    const uint8_t* src = ctx.data[params];
    uint8_t* dst = ctx.data[out];
    const size_t row = static_cast<size_t>(inner) * es;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n_indices; ++i) {
        const int64_t idx = index_type == DType::kInt32 ? ctx.In<int32_t>(indices)[i]
                                                        : ctx.In<int64_t>(indices)[i];
        if (idx < 0 || idx >= axis_size) {
          return absl::InvalidArgumentError(
              absl::StrCat("GATHER index ", idx, " out of range [0, ", axis_size, ")"));
        }
        std::memcpy(dst + ((o * n_indices + i) * inner) * es,
                    src + ((o * axis_size + idx) * inner) * es, row);
      }
    }
    return absl::OkStatus();
  }
};

absl::Status CheckOutElements(const LowerContext& ctx, int out, int64_t expected) {
  if (ctx.output(out).num_elements() != expected) {
    return ctx.Invalid("output '", ctx.output(out).name, "' has ", ctx.output(out).num_elements(),
                       " elements, expected ", expected);
  }
  return absl::OkStatus();
}

absl::Status CheckRank(const LowerContext& ctx, const Tensor& t) {
  if (t.shape.size() > static_cast<size_t>(kMaxRank)) {
    return ctx.Unimplemented("tensor '", t.name, "' has rank ", t.shape.size(), " (max ",
                             kMaxRank, ")");
  }
  return absl::OkStatus();
}

absl::StatusOr<KernelPtr> LowerReshape(const LowerContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
  MICA_RETURN_IF_ERROR(CheckOutElements(ctx, 0, in.num_elements()));
  return KernelPtr(new CopyKernel(ctx.in_index(0), ctx.out_index(0), in.num_bytes()));
}

absl::StatusOr<KernelPtr> LowerTranspose(const LowerContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
  MICA_RETURN_IF_ERROR(CheckRank(ctx, in));
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ConstInts(ctx, 1));
  const int rank = static_cast<int>(in.shape.size());
  if (static_cast<int>(perm.size()) != rank) {
    return ctx.Invalid("permutation has ", perm.size(), " entries for rank ", rank);
  }
  std::vector<bool> seen(rank, false);
  auto k = std::make_unique<BoxCopyKernel>();
  BoxCopyKernel::Step step{ctx.in_index(0), ctx.out_index(0), {}};
  step.plan.rank = rank;
  step.plan.es = ElementBytes(in.dtype);
  const std::vector<int64_t> in_strides = Strides(in.shape);
  std::vector<int32_t> out_shape(rank);
  for (int d = 0; d < rank; ++d) {
    int64_t p = perm[d] < 0 ? perm[d] + rank : perm[d];
    if (p < 0 || p >= rank || seen[p]) return ctx.Invalid("invalid permutation");
    seen[p] = true;
    out_shape[d] = in.shape[p];
    step.plan.dims[d] = in.shape[p];
    step.plan.src_stride[d] = in_strides[p];
  }
  if (out.shape != out_shape) return ctx.Invalid("output shape does not match the permutation");
  const size_t tes = ElementBytes(in.dtype);
  if (rank >= 1 && rank <= kernels::kMaxRank && (tes == 1 || tes == 2 || tes == 4)) {
    auto tk = std::make_unique<TransposeKernel>();
    tk->fn = PickVariant(kernels::TransposeVariants(), ctx.isa, &kernels::Transpose);
    tk->in = ctx.in_index(0);
    tk->out = ctx.out_index(0);
    tk->d.in.rank = rank;
    for (int d = 0; d < rank; ++d) {
      tk->d.in.dims[d] = in.shape[d];
      tk->d.perm[d] = static_cast<int32_t>(perm[d] < 0 ? perm[d] + rank : perm[d]);
    }
    tk->d.element_bytes = static_cast<uint32_t>(tes);
    return KernelPtr(std::move(tk));
  }
  const std::vector<int64_t> out_strides = Strides(out_shape);
  for (int d = 0; d < rank; ++d) step.plan.dst_stride[d] = out_strides[d];
  k->steps.push_back(step);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerPad(const LowerContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
  MICA_RETURN_IF_ERROR(CheckRank(ctx, in));
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ConstInts(ctx, 1));
  const int rank = static_cast<int>(in.shape.size());
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return ctx.Invalid("paddings have ", pads.size(), " values for rank ", rank);
  }
  std::vector<int32_t> out_shape(rank);
  for (int d = 0; d < rank; ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) return ctx.Invalid("negative padding");
    out_shape[d] = static_cast<int32_t>(in.shape[d] + pads[2 * d] + pads[2 * d + 1]);
  }
  if (out.shape != out_shape) return ctx.Invalid("output shape does not match the paddings");
  auto k = std::make_unique<BoxCopyKernel>();
  const size_t es = ElementBytes(in.dtype);
  k->fill_tensor = ctx.out_index(0);
  k->fill_count = static_cast<size_t>(out.num_elements());
  k->fill_value.assign(es, 0);
  if (ctx.op.kind == OpKind::kPadV2 && ctx.HasInput(2)) {
    const Tensor& v = ctx.input(2);
    if (v.dtype != in.dtype || v.num_elements() != 1) {
      return ctx.Invalid("constant value must be one ", DT(in.dtype), " element");
    }
    if (v.is_constant()) {
      std::memcpy(k->fill_value.data(), v.data.bytes(), es);
    } else {
      k->fill_from = ctx.in_index(2);
    }
  } else if (!out.quant.empty() && in.dtype != DType::kFloat32) {
    const int64_t zp = out.quant.zero_point.empty() ? 0 : out.quant.zero_point[0];
    if (in.dtype == DType::kInt8) {
      const int8_t v = static_cast<int8_t>(zp);
      std::memcpy(k->fill_value.data(), &v, 1);
    } else if (in.dtype == DType::kUInt8) {
      const uint8_t v = static_cast<uint8_t>(zp);
      std::memcpy(k->fill_value.data(), &v, 1);
    } else if (in.dtype == DType::kInt16) {
      const int16_t v = static_cast<int16_t>(zp);
      std::memcpy(k->fill_value.data(), &v, 2);
    }
  }
  if (k->fill_from < 0 && rank <= kernels::kMaxRank && (es == 1 || es == 2 || es == 4)) {
    // The kernel core's PAD (the device runtime runs the same).
    auto pk = std::make_unique<PadKernel>();
    pk->fn = PickVariant(kernels::PadVariants(), ctx.isa, &kernels::Pad);
    pk->in = ctx.in_index(0);
    pk->out = ctx.out_index(0);
    pk->es = static_cast<uint32_t>(es);
    std::memcpy(pk->value, k->fill_value.data(), es);
    pk->shape.rank = rank;
    for (int d = 0; d < rank; ++d) {
      pk->shape.dims[d] = in.shape[d];
      pk->p.before[d] = static_cast<int32_t>(pads[2 * d]);
      pk->p.after[d] = static_cast<int32_t>(pads[2 * d + 1]);
    }
    return KernelPtr(std::move(pk));
  }
  BoxCopyKernel::Step step{ctx.in_index(0), ctx.out_index(0), {}};
  step.plan.rank = rank;
  step.plan.es = es;
  const std::vector<int64_t> in_strides = Strides(in.shape);
  const std::vector<int64_t> out_strides = Strides(out_shape);
  for (int d = 0; d < rank; ++d) {
    step.plan.dims[d] = in.shape[d];
    step.plan.src_stride[d] = in_strides[d];
    step.plan.dst_stride[d] = out_strides[d];
    step.plan.dst_base += pads[2 * d] * out_strides[d];
  }
  k->steps.push_back(step);
  return KernelPtr(std::move(k));
}

// Concatenation and pack: inputs laid side by side along `axis` of the output.
absl::StatusOr<KernelPtr> LowerConcat(const LowerContext& ctx) {
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckRank(ctx, out));
  const int out_rank = static_cast<int>(out.shape.size());
  if (out_rank == 0) return ctx.Invalid("output '", out.name, "' is a scalar: nothing to join along");
  const bool pack = ctx.op.kind == OpKind::kPack;
  int axis = 0;
  if (pack) {
    MICA_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, ctx.op.Attrs<PackAttrs>().axis, out_rank));
  } else {
    const auto& a = ctx.op.Attrs<ConcatenationAttrs>();
    if (a.activation != Activation::kNone) {
      return ctx.Unimplemented("fused activation on concatenation");
    }
    MICA_ASSIGN_OR_RETURN(axis, NormalizeAxis(ctx, a.axis, out_rank));
  }
  const std::vector<int64_t> out_strides = Strides(out.shape);
  auto k = std::make_unique<BoxCopyKernel>();
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.HasInput(i)) return ctx.Invalid("input ", i, " is missing");
    const Tensor& in = ctx.input(i);
    MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
    std::vector<int32_t> shape = in.shape;
    if (pack) shape.insert(shape.begin() + axis, 1);
    if (static_cast<int>(shape.size()) != out_rank) {
      return ctx.Invalid("input '", in.name, "' has rank ", in.shape.size());
    }
    for (int d = 0; d < out_rank; ++d) {
      if (d != axis && shape[d] != out.shape[d]) {
        return ctx.Invalid("input '", in.name, "' shape does not match the output");
      }
    }
    BoxCopyKernel::Step step{ctx.in_index(i), ctx.out_index(0), {}};
    step.plan.rank = out_rank;
    step.plan.es = ElementBytes(out.dtype);
    const std::vector<int64_t> in_strides = Strides(shape);
    for (int d = 0; d < out_rank; ++d) {
      step.plan.dims[d] = shape[d];
      step.plan.src_stride[d] = in_strides[d];
      step.plan.dst_stride[d] = out_strides[d];
    }
    step.plan.dst_base = offset * out_strides[axis];
    offset += shape[axis];
    k->steps.push_back(step);
  }
  if (offset != out.shape[axis]) {
    return ctx.Invalid("inputs add up to ", offset, " along axis ", axis, ", output has ",
                       out.shape[axis]);
  }
  const size_t ces = ElementBytes(out.dtype);
  if (out_rank >= 1 && out_rank <= kernels::kMaxRank && ctx.num_inputs() <= 16 &&
      (ces == 1 || ces == 2 || ces == 4)) {
    auto ck = std::make_unique<ConcatKernel>();
    ck->axis = axis;
    ck->es = static_cast<uint32_t>(ces);
    ck->out = ctx.out_index(0);
    ck->out_shape.rank = out_rank;
    for (int d = 0; d < out_rank; ++d) ck->out_shape.dims[d] = out.shape[d];
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      kernels::Shape sh;
      sh.rank = out_rank;
      for (int d = 0; d < out_rank; ++d) sh.dims[d] = out.shape[d];
      sh.dims[axis] = static_cast<int32_t>(k->steps[static_cast<size_t>(i)].plan.dims[axis]);
      ck->shapes.push_back(sh);
      ck->ins.push_back(ctx.in_index(i));
    }
    return KernelPtr(std::move(ck));
  }
  return KernelPtr(std::move(k));
}

// Split, SplitV and unpack: consecutive pieces of the input along `axis`.
absl::StatusOr<KernelPtr> LowerSplit(const LowerContext& ctx) {
  int data_input = 0;
  int64_t axis_value = 0;
  if (ctx.op.kind == OpKind::kSplit) {
    data_input = 1;
    MICA_ASSIGN_OR_RETURN(std::vector<int64_t> ax, ConstInts(ctx, 0));
    if (ax.size() != 1) return ctx.Invalid("axis must be a scalar");
    axis_value = ax[0];
  } else if (ctx.op.kind == OpKind::kSplitV) {
    MICA_ASSIGN_OR_RETURN(std::vector<int64_t> ax, ConstInts(ctx, 2));
    if (ax.size() != 1) return ctx.Invalid("axis must be a scalar");
    axis_value = ax[0];
  } else {
    axis_value = ctx.op.Attrs<PackAttrs>().axis;
  }
  const Tensor& in = ctx.input(data_input);
  MICA_RETURN_IF_ERROR(CheckRank(ctx, in));
  const int rank = static_cast<int>(in.shape.size());
  if (rank == 0) return ctx.Invalid("input '", in.name, "' is a scalar: nothing to split");
  MICA_ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx, axis_value, rank));
  const bool unpack = ctx.op.kind == OpKind::kUnpack;
  const std::vector<int64_t> in_strides = Strides(in.shape);
  auto k = std::make_unique<BoxCopyKernel>();
  int64_t offset = 0;
  for (int o = 0; o < ctx.num_outputs(); ++o) {
    const Tensor& out = ctx.output(o);
    MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
    std::vector<int32_t> shape = out.shape;
    if (unpack) shape.insert(shape.begin() + axis, 1);
    if (static_cast<int>(shape.size()) != rank) {
      return ctx.Invalid("output '", out.name, "' has rank ", out.shape.size());
    }
    for (int d = 0; d < rank; ++d) {
      if (d != axis && shape[d] != in.shape[d]) {
        return ctx.Invalid("output '", out.name, "' shape does not match the input");
      }
    }
    BoxCopyKernel::Step step{ctx.in_index(data_input), ctx.out_index(o), {}};
    step.plan.rank = rank;
    step.plan.es = ElementBytes(in.dtype);
    const std::vector<int64_t> out_strides = Strides(shape);
    for (int d = 0; d < rank; ++d) {
      step.plan.dims[d] = shape[d];
      step.plan.src_stride[d] = in_strides[d];
      step.plan.dst_stride[d] = out_strides[d];
    }
    step.plan.src_base = offset * in_strides[axis];
    offset += shape[axis];
    k->steps.push_back(step);
  }
  if (offset != in.shape[axis]) {
    return ctx.Invalid("outputs add up to ", offset, " along axis ", axis, ", input has ",
                       in.shape[axis]);
  }
  const size_t pes = ElementBytes(in.dtype);
  bool core = rank >= 1 && rank <= kernels::kMaxRank && ctx.num_outputs() <= 16 &&
              (pes == 1 || pes == 2 || pes == 4);
  for (const BoxCopyKernel::Step& st : k->steps) core = core && st.plan.dims[axis] > 0;
  if (core) {
    // The kernel core's Split (the device runtime runs the same).
    auto sk = std::make_unique<SplitKernel>();
    sk->axis = axis;
    sk->es = static_cast<uint32_t>(pes);
    sk->in = ctx.in_index(data_input);
    sk->shape.rank = rank;
    for (int d = 0; d < rank; ++d) sk->shape.dims[d] = in.shape[d];
    for (int o = 0; o < ctx.num_outputs(); ++o) {
      sk->outs.push_back(ctx.out_index(o));
      sk->sizes.push_back(static_cast<int32_t>(k->steps[static_cast<size_t>(o)].plan.dims[axis]));
    }
    return KernelPtr(std::move(sk));
  }
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerSlice(const LowerContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckSameType(ctx, in, out));
  MICA_RETURN_IF_ERROR(CheckRank(ctx, in));
  const int rank = static_cast<int>(in.shape.size());
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> begin, ConstInts(ctx, 1));
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> end_or_size, ConstInts(ctx, 2));
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(end_or_size.size()) != rank) {
    return ctx.Invalid("begin/size must have ", rank, " entries");
  }
  std::vector<int64_t> start(rank), count(rank), step(rank, 1);
  if (ctx.op.kind == OpKind::kSlice) {
    for (int d = 0; d < rank; ++d) {
      start[d] = begin[d];
      count[d] = end_or_size[d] < 0 ? in.shape[d] - begin[d] : end_or_size[d];
      if (start[d] < 0 || count[d] < 0 || start[d] + count[d] > in.shape[d]) {
        return ctx.Invalid("slice out of range on axis ", d);
      }
    }
  } else {
    const auto& a = ctx.op.Attrs<StridedSliceAttrs>();
    if (a.ellipsis_mask != 0 || a.new_axis_mask != 0) {
      return ctx.Unimplemented("ellipsis_mask/new_axis_mask are not supported");
    }
    MICA_ASSIGN_OR_RETURN(std::vector<int64_t> strides, ConstInts(ctx, 3));
    if (static_cast<int>(strides.size()) != rank) {
      return ctx.Invalid("strides must have ", rank, " entries");
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t size = in.shape[d];
      const int64_t s = strides[d];
      if (s == 0) return ctx.Invalid("stride 0 on axis ", d);
      const int64_t lo = std::numeric_limits<int32_t>::lowest();
      const int64_t hi = std::numeric_limits<int32_t>::max();
      int64_t b = begin[d];
      if (a.begin_mask & (1 << d)) b = s > 0 ? lo : hi;
      if (b < 0) b += size;
      b = s > 0 ? std::clamp<int64_t>(b, 0, size) : std::clamp<int64_t>(b, -1, size - 1);
      int64_t e = end_or_size[d];
      if (a.offset && !(a.end_mask & (1 << d))) e += begin[d];
      if (a.shrink_axis_mask & (1 << d)) {
        e = b + 1;
      } else {
        if (a.end_mask & (1 << d)) e = s > 0 ? hi : lo;
        if (e < 0) e += size;
        e = s > 0 ? std::clamp<int64_t>(e, 0, size) : std::clamp<int64_t>(e, -1, size - 1);
      }
      int64_t n = 0;
      if (s > 0 && e > b) n = (e - b + s - 1) / s;
      if (s < 0 && e < b) n = (b - e + (-s) - 1) / (-s);
      start[d] = b;
      count[d] = n;
      step[d] = s;
    }
  }
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= count[d];
  MICA_RETURN_IF_ERROR(CheckOutElements(ctx, 0, total));
  const size_t ses = ElementBytes(in.dtype);
  bool core = rank >= 1 && rank <= kernels::kMaxRank && (ses == 1 || ses == 2 || ses == 4);
  for (int d = 0; d < rank && core; ++d) {
    const int64_t stop = start[d] + count[d] * step[d];
    core = count[d] > 0 && step[d] >= -(1 << 16) && step[d] <= (1 << 16) &&
           start[d] >= -(1 << 29) && start[d] <= (1 << 29) && stop >= -(1 << 29) &&
           stop <= (1 << 29);
  }
  if (core) {
    // The kernel core's StridedSlice (the device runtime runs the same): the resolved start,
    // the stop that gives exactly `count` elements, the step.
    auto sk = std::make_unique<StridedSliceKernel>();
    sk->in = ctx.in_index(0);
    sk->out = ctx.out_index(0);
    sk->d.element_bytes = static_cast<uint32_t>(ses);
    sk->d.in.rank = sk->d.out.rank = rank;
    for (int d = 0; d < rank; ++d) {
      sk->d.in.dims[d] = in.shape[d];
      sk->d.out.dims[d] = static_cast<int32_t>(count[d]);
      sk->d.p.start[d] = static_cast<int32_t>(start[d]);
      sk->d.p.stop[d] = static_cast<int32_t>(start[d] + count[d] * step[d]);
      sk->d.p.stride[d] = static_cast<int32_t>(step[d]);
    }
    return KernelPtr(std::move(sk));
  }
  auto k = std::make_unique<BoxCopyKernel>();
  BoxCopyKernel::Step st{ctx.in_index(0), ctx.out_index(0), {}};
  st.plan.rank = rank;
  st.plan.es = ElementBytes(in.dtype);
  const std::vector<int64_t> in_strides = Strides(in.shape);
  int64_t out_stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    st.plan.dims[d] = count[d];
    st.plan.src_stride[d] = in_strides[d] * step[d];
    st.plan.dst_stride[d] = out_stride;
    out_stride *= count[d];
    if (count[d] > 0) st.plan.src_base += start[d] * in_strides[d];
  }
  k->steps.push_back(st);
  return KernelPtr(std::move(k));
}

absl::StatusOr<KernelPtr> LowerGather(const LowerContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  const Tensor& out = ctx.output(0);
  MICA_RETURN_IF_ERROR(CheckSameType(ctx, params, out));
  const auto& a = ctx.op.Attrs<GatherAttrs>();
  if (a.batch_dims != 0) return ctx.Unimplemented("batch_dims != 0");
  if (indices.dtype != DType::kInt32 && indices.dtype != DType::kInt64) {
    return ctx.Invalid("indices must be int32 or int64");
  }
  const int rank = static_cast<int>(params.shape.size());
  if (rank == 0) return ctx.Invalid("params '", params.name, "' is a scalar: nothing to gather");
  MICA_ASSIGN_OR_RETURN(int axis, NormalizeAxis(ctx, a.axis, rank));
  auto k = std::make_unique<GatherKernel>();
  k->params = ctx.in_index(0);
  k->indices = ctx.in_index(1);
  k->out = ctx.out_index(0);
  k->index_type = indices.dtype;
  for (int d = 0; d < axis; ++d) k->outer *= params.shape[d];
  k->axis_size = params.shape[axis];
  for (int d = axis + 1; d < rank; ++d) k->inner *= params.shape[d];
  k->n_indices = indices.num_elements();
  k->es = ElementBytes(params.dtype);
  MICA_RETURN_IF_ERROR(CheckOutElements(ctx, 0, k->outer * k->n_indices * k->inner));
  return KernelPtr(std::move(k));
}

}  // namespace

absl::StatusOr<KernelPtr> LowerDataMovement(const LowerContext& ctx) {
  const int data_input = ctx.op.kind == OpKind::kSplit ? 1 : 0;
  if (!ctx.HasInput(data_input)) return ctx.Invalid("input ", data_input, " is missing");
  switch (ctx.op.kind) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kExpandDims:
      return LowerReshape(ctx);
    case OpKind::kTranspose:
      return LowerTranspose(ctx);
    case OpKind::kPad:
    case OpKind::kPadV2:
      return LowerPad(ctx);
    case OpKind::kConcatenation:
    case OpKind::kPack:
      return LowerConcat(ctx);
    case OpKind::kSplit:
    case OpKind::kSplitV:
    case OpKind::kUnpack:
      return LowerSplit(ctx);
    case OpKind::kSlice:
    case OpKind::kStridedSlice:
      return LowerSlice(ctx);
    case OpKind::kGather:
      return LowerGather(ctx);
    default:
      return ctx.Unimplemented("not a data-movement operator");
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
