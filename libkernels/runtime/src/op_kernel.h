// Private: one prepared operator of a plan, and the context it is lowered and run in.
//
// Lowering (Prepare) happens once in Executor::Create: each lowering function validates the
// operator, computes everything that does not depend on tensor values and returns an OpKernel
// whose Eval only reads and writes tensor memory through the EvalContext.
#ifndef MICA_RUNTIME_OP_KERNEL_H_
#define MICA_RUNTIME_OP_KERNEL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"

namespace mica {
namespace runtime {
namespace internal {

// absl::StrCat on Debian's Abseil does not take std::string_view: these return strings.
inline std::string DT(DType t) { return std::string(DTypeName(t)); }
inline std::string OpName(const Operator& op) { return std::string(op.name()); }

// Tensor memory during a run: one pointer per subgraph tensor (arena, state or constant data).
struct EvalContext {
  std::vector<uint8_t*> data;
  uint8_t* scratch = nullptr;
  size_t scratch_bytes = 0;

  template <typename T>
  T* Out(int32_t t) const { return reinterpret_cast<T*>(data[t]); }
  template <typename T>
  const T* In(int32_t t) const {
    return t < 0 ? nullptr : reinterpret_cast<const T*>(data[t]);
  }
};

struct PlanOpWriter;  // plan_writer.h

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual absl::Status Eval(const EvalContext& ctx) = 0;
  // Describes this prepared operator for a device plan (plan_compiler.cc); false when the
  // device runtime (libkernels/device) has no kernel for it.
  virtual bool ExportToPlan(PlanOpWriter& /*w*/) const { return false; }
  // Scratch this operator needs during Eval (shared by all operators).
  size_t scratch_bytes = 0;
};

// What a lowering function sees.
struct LowerContext {
  const Subgraph& sg;
  const Operator& op;
  int32_t op_index;
  kernels::Isa isa;

  int num_inputs() const { return static_cast<int>(op.inputs.size()); }
  int num_outputs() const { return static_cast<int>(op.outputs.size()); }
  bool HasInput(int i) const { return i < num_inputs() && op.inputs[i] >= 0; }
  const Tensor& input(int i) const { return sg.tensors[op.inputs[i]]; }
  const Tensor& output(int i) const { return sg.tensors[op.outputs[i]]; }
  int32_t in_index(int i) const { return op.inputs[i]; }
  int32_t out_index(int i) const { return op.outputs[i]; }

  // Error helpers naming the operator.
  std::string Where() const {
    return absl::StrCat("operator #", op_index, " (", OpName(op), ")");
  }
  template <typename... Args>
  absl::Status Invalid(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(Where(), ": ", args...));
  }
  template <typename... Args>
  absl::Status Unimplemented(const Args&... args) const {
    return absl::UnimplementedError(absl::StrCat(Where(), ": ", args...));
  }
};

using KernelPtr = std::unique_ptr<OpKernel>;

// Lowers one operator: picks its family from the kind (FamilyOf) and, within the family, the
// float32 or integer implementation from the dtype of its first non-constant input.
absl::StatusOr<KernelPtr> LowerOp(const LowerContext& ctx);

// The operator families, one file each. Every family checks the shapes it relies on and
// returns Unimplemented for the kinds or dtypes it has no kernel for (NoKernel).
enum class OpFamily {
  kConvLike,       // conv_like.cc: conv, depthwise conv, transpose conv, fully connected,
                   // batch matmul
  kElementwise,    // elementwise.cc: binary arithmetic and unary activations
  kPooling,        // pooling.cc: max and average pooling
  kSoftmaxReduce,  // softmax_reduce.cc: softmax, mean / sum / max reductions
  kRecurrent,      // recurrent.cc: SVDF, LSTM
  kQuantization,   // quantize_ops.cc: quantize, dequantize, requantize
  kDataMovement,   // data_movement.cc: dtype-generic copies (reshape, transpose, pad, ...)
  kNone,           // no kernel
};
OpFamily FamilyOf(OpKind kind);

// `fp32`: lower to the float32 kernels, else to the integer (int8 / int16) ones.
absl::StatusOr<KernelPtr> LowerConvLike(const LowerContext& ctx, bool fp32);
absl::StatusOr<KernelPtr> LowerElementwise(const LowerContext& ctx, bool fp32);
absl::StatusOr<KernelPtr> LowerPooling(const LowerContext& ctx, bool fp32);
absl::StatusOr<KernelPtr> LowerSoftmaxReduce(const LowerContext& ctx, bool fp32);
absl::StatusOr<KernelPtr> LowerRecurrent(const LowerContext& ctx, bool fp32);
absl::StatusOr<KernelPtr> LowerQuantization(const LowerContext& ctx);
absl::StatusOr<KernelPtr> LowerDataMovement(const LowerContext& ctx);

// "no <dtype> kernel for <operator>" (Unimplemented).
absl::Status NoKernel(const LowerContext& ctx, bool fp32);

// ---- small shared helpers -------------------------------------------------------------

// Returns the product of `shape` (1 for a scalar).
int64_t NumElements(const std::vector<int32_t>& shape);
// Bytes of one element (int4 counts as 1: not supported by kernels anyway).
size_t ElementBytes(DType t);
// Reads a constant int32/int64 tensor as int64 values; error when not constant.
absl::StatusOr<std::vector<int64_t>> ConstInts(const LowerContext& ctx, int input);
// Normalises a possibly negative axis into [0, rank).
absl::StatusOr<int> NormalizeAxis(const LowerContext& ctx, int64_t axis, int rank);
// Returns `shape` as NHWC Dims padded with leading 1s (rank <= 4).
kernels::Dims ToDims(const std::vector<int32_t>& shape);

// Float activation range of a fused activation.
void FloatActivationRange(Activation a, float* lo, float* hi);

}  // namespace internal
}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_OP_KERNEL_H_
