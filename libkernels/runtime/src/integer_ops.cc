// Integer (int8 / int16 activation) operators: prepare TFLite's fixed-point parameters once and
// call the kernel core.
#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "op_kernel.h"

namespace mica {
namespace runtime {
namespace internal {

absl::StatusOr<KernelPtr> LowerInteger(const LowerContext& ctx) {
  const DType t = ctx.HasInput(0) ? ctx.input(0).dtype : ctx.output(0).dtype;
  return ctx.Unimplemented("no ", DT(t), " kernel for ", OpName(ctx.op));
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica
