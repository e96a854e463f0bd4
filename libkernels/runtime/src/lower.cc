// Operator lowering: the one dispatch from an operator kind to its family (FamilyOf), and the
// helpers every family uses.
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
    case DType::kUInt32: return 4;
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

// TODO(op_info): read the family from the operator-facts table (mica/model/op_info.h, its
// category column) when libmodel has it; this switch is then the table's mapping from
// category to lowering file.
OpFamily FamilyOf(OpKind kind) {
  switch (kind) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv:
    case OpKind::kFullyConnected:
    case OpKind::kBatchMatMul:
      return OpFamily::kConvLike;
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
    case OpKind::kDiv:
    case OpKind::kSquaredDifference:
    case OpKind::kMinimum:
    case OpKind::kMaximum:
    case OpKind::kPrelu:
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
      return OpFamily::kElementwise;
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D:
      return OpFamily::kPooling;
    case OpKind::kSoftmax:
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
      return OpFamily::kSoftmaxReduce;
    case OpKind::kSvdf:
    case OpKind::kUnidirectionalSequenceLstm:
      return OpFamily::kRecurrent;
    case OpKind::kQuantize:
    case OpKind::kDequantize:
      return OpFamily::kQuantization;
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
      return OpFamily::kDataMovement;
    default:
      return OpFamily::kNone;
  }
}

absl::Status NoKernel(const LowerContext& ctx, bool fp32) {
  if (fp32) return ctx.Unimplemented("no float32 kernel for ", OpName(ctx.op));
  const DType t = ctx.HasInput(0) ? ctx.input(0).dtype : ctx.output(0).dtype;
  return ctx.Unimplemented("no ", DT(t), " kernel for ", OpName(ctx.op));
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
  const OpFamily family = FamilyOf(op.kind);
  if (family == OpFamily::kDataMovement) return LowerDataMovement(ctx);
  // uint32 tensors (signal-processing front ends) load and are estimated; no kernel runs them.
  for (int i = 0; i < ctx.num_inputs() + ctx.num_outputs(); ++i) {
    const bool is_in = i < ctx.num_inputs();
    if (is_in && !ctx.HasInput(i)) continue;
    const Tensor& t = is_in ? ctx.input(i) : ctx.output(i - ctx.num_inputs());
    if (t.dtype == DType::kUInt32) {
      return ctx.Unimplemented("no kernel for ", OpName(op), " with uint32 ",
                               is_in ? "input '" : "output '", t.name, "'");
    }
  }
  // Every other family reads input 0.
  if (!ctx.HasInput(0)) return ctx.Invalid("input 0 is missing");
  if (family == OpFamily::kQuantization) return LowerQuantization(ctx);
  const bool fp32 = DecidingDType(ctx) == DType::kFloat32;
  switch (family) {
    case OpFamily::kConvLike: return LowerConvLike(ctx, fp32);
    case OpFamily::kElementwise: return LowerElementwise(ctx, fp32);
    case OpFamily::kPooling: return LowerPooling(ctx, fp32);
    case OpFamily::kSoftmaxReduce: return LowerSoftmaxReduce(ctx, fp32);
    case OpFamily::kRecurrent: return LowerRecurrent(ctx, fp32);
    default: return NoKernel(ctx, fp32);
  }
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
