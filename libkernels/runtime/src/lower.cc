// Operator lowering: picks the implementation family from the kind and dtypes.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "op_kernel.h"

namespace mica {
namespace runtime {
namespace internal {

int64_t NumElements(const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

size_t ElementBytes(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kInt8: return 1;
    case DType::kUInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kBool: return 1;
    case DType::kInt4: return 1;
    case DType::kFloat16: return 2;
  }
  return 1;
}

absl::StatusOr<std::vector<int64_t>> ConstInts(const LowerContext& ctx, int input) {
  if (!ctx.HasInput(input)) return ctx.Invalid("input ", input, " is missing");
  const Tensor& t = ctx.input(input);
  if (!t.is_constant()) {
    return ctx.Unimplemented("input ", input, " '", t.name,
                             "' must be a constant (run-time shapes are not supported)");
  }
  const int64_t n = t.num_elements();
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (t.dtype == DType::kInt32) {
    for (int64_t i = 0; i < n; ++i) out[i] = t.data.as<int32_t>()[i];
  } else if (t.dtype == DType::kInt64) {
    for (int64_t i = 0; i < n; ++i) out[i] = t.data.as<int64_t>()[i];
  } else {
    return ctx.Invalid("input ", input, " '", t.name, "' must be int32 or int64, not ",
                       DT(t.dtype));
  }
  return out;
}

absl::StatusOr<int> NormalizeAxis(const LowerContext& ctx, int64_t axis, int rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max(rank, 1)) {
    return ctx.Invalid("axis ", axis, " out of range for rank ", rank);
  }
  return static_cast<int>(a);
}

kernels::Dims ToDims(const std::vector<int32_t>& shape) {
  int32_t d[4] = {1, 1, 1, 1};
  const int r = static_cast<int>(shape.size());
  if (r <= 4) {
    for (int i = 0; i < r; ++i) d[4 - r + i] = shape[i];
  } else {  // fold leading dimensions into n
    for (int i = 0; i <= r - 4; ++i) d[0] *= shape[i];
    d[1] = shape[r - 3];
    d[2] = shape[r - 2];
    d[3] = shape[r - 1];
  }
  return kernels::Dims{d[0], d[1], d[2], d[3]};
}

int32_t ComputeOutSize(Padding padding, int32_t in, int32_t filter, int32_t stride,
                       int32_t dilation) {
  const int32_t eff = (filter - 1) * dilation + 1;
  if (stride <= 0) return 0;
  if (padding == Padding::kSame) return (in + stride - 1) / stride;
  return (in + stride - eff) / stride;
}

PadInfo ComputePadding(Padding padding, int32_t in, int32_t filter, int32_t stride,
                       int32_t dilation, int32_t out) {
  const int32_t eff = (filter - 1) * dilation + 1;
  const int32_t total = std::max((out - 1) * stride + eff - in, 0);
  PadInfo p;
  p.pad = total / 2;
  p.offset = total % 2;
  if (padding == Padding::kValid) p = PadInfo{};
  return p;
}

void FloatActivationRange(Activation a, float* lo, float* hi) {
  *lo = std::numeric_limits<float>::lowest();
  *hi = std::numeric_limits<float>::max();
  switch (a) {
    case Activation::kRelu: *lo = 0.f; break;
    case Activation::kRelu6: *lo = 0.f; *hi = 6.f; break;
    case Activation::kReluN1To1: *lo = -1.f; *hi = 1.f; break;
    default: break;
  }
}

bool IsDataMovement(OpKind kind) {
  switch (kind) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kExpandDims:
    case OpKind::kTranspose:
    case OpKind::kPad:
    case OpKind::kPadV2:
    case OpKind::kConcatenation:
    case OpKind::kSplit:
    case OpKind::kSplitV:
    case OpKind::kStridedSlice:
    case OpKind::kSlice:
    case OpKind::kPack:
    case OpKind::kUnpack:
    case OpKind::kGather:
      return true;
    default:
      return false;
  }
}

namespace {

// The dtype that decides the family: the first non-constant input, else the first output.
DType DecidingDType(const LowerContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (ctx.HasInput(i) && !ctx.input(i).is_constant()) return ctx.input(i).dtype;
  }
  return ctx.num_outputs() > 0 ? ctx.output(0).dtype : DType::kFloat32;
}

}  // namespace

absl::StatusOr<KernelPtr> LowerOp(const LowerContext& ctx) {
  const Operator& op = ctx.op;
  if (op.kind == OpKind::kOpaque) {
    return ctx.Unimplemented("operator '", op.opaque_name, "' is not supported");
  }
  if (ctx.num_outputs() == 0) return ctx.Invalid("operator has no outputs");
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    if (ctx.out_index(i) < 0) return ctx.Invalid("output ", i, " is missing");
  }
  if (IsDataMovement(op.kind)) return LowerDataMovement(ctx);
  if (op.kind == OpKind::kQuantize || op.kind == OpKind::kDequantize) {
    if (!ctx.HasInput(0)) return ctx.Invalid("input 0 is missing");
    if (ctx.input(0).dtype == DType::kFloat32 || ctx.output(0).dtype == DType::kFloat32) {
      return LowerQuantize(ctx);
    }
    return LowerInteger(ctx);
  }
  if (DecidingDType(ctx) == DType::kFloat32) return LowerFloat(ctx);
  return LowerInteger(ctx);
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
