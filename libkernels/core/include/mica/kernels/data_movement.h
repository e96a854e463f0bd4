// mica kernels — data movement: TRANSPOSE (rank <= 6), PAD / PADV2, CONCATENATION,
// STRIDED_SLICE, SLICE, SPLIT / SPLIT_V. Element-size generic (1, 2 or 4 bytes), so the same
// kernels serve int8, int16, int32 and float32 tensors. Shapes are outermost-first.
//
// How TFLite computes these parameters (the runtime resolves them at prepare time):
//   TRANSPOSE: perm[i] = input axis that becomes output axis i (negative perms += rank).
//   PAD: before/after per dimension from the paddings tensor; pad value = the output zero
//     point for quantized PAD, the constant_values tensor for PADV2 (0.0f for float PAD).
//   CONCATENATION: axis (negative += rank); int8 inputs must share the output's quantization
//     (TFLite Micro copies bytes without requantizing).
//   STRIDED_SLICE: ResolveStridedSliceAxis() below reproduces TFLite's StartForAxis /
//     StopForAxis (begin/end/shrink masks, negative indices, clamping; `offset` adds begin to
//     end). Shrunk axes keep size 1 here: the output memory is the same.
//   SLICE: begin, size (size -1 = to the end) per axis.
//   SPLIT / SPLIT_V: axis and the size of every output along it.
#ifndef MICA_KERNELS_DATA_MOVEMENT_H_
#define MICA_KERNELS_DATA_MOVEMENT_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace kernels {

// out.dims[i] = in.dims[perm[i]]. `element_bytes` is 1, 2 or 4.
KernelStatus Transpose(const Shape& in_shape, const int32_t* perm, const void* input,
                       void* output, size_t element_bytes);

struct PadParams {
  int32_t before[kMaxRank] = {};
  int32_t after[kMaxRank] = {};
};
// Output shape is in_shape.dims[i] + before[i] + after[i]; `pad_value` points at one element.
KernelStatus Pad(const PadParams& params, const Shape& in_shape, const void* input,
                 const void* pad_value, void* output, size_t element_bytes);

// Run-time variant lists of TRANSPOSE and PAD (see variants.h); the other ops have one body.
using TransposeFn = KernelStatus (*)(const Shape&, const int32_t*, const void*, void*, size_t);
using PadFn = KernelStatus (*)(const PadParams&, const Shape&, const void*, const void*, void*,
                               size_t);
VariantList<TransposeFn> TransposeVariants();
VariantList<PadFn> PadVariants();

// Concatenates `num_inputs` tensors along `axis`; all other dimensions must match `out_shape`.
KernelStatus Concatenation(int32_t axis, int32_t num_inputs, const Shape* in_shapes,
                           const void* const* inputs, const Shape& out_shape, void* output,
                           size_t element_bytes);

// Resolved strided slice: per axis, element index start + k * stride for k in [0, count),
// where count = max(0, ceil((stop - start) / stride)) (stride > 0) or the mirror (stride < 0).
struct StridedSliceParams {
  int32_t start[kMaxRank] = {};
  int32_t stop[kMaxRank] = {};
  int32_t stride[kMaxRank] = {1, 1, 1, 1, 1, 1};
};
// Number of elements an axis of a resolved strided slice produces.
constexpr int32_t StridedSliceCount(int32_t start, int32_t stop, int32_t stride) {
  return stride > 0 ? (stop > start ? (stop - start + stride - 1) / stride : 0)
                    : (stride < 0 ? (start > stop ? (start - stop - stride - 1) / -stride : 0)
                                  : 0);
}
// TFLite's StartForAxis / StopForAxis for one axis: fills *start and *stop.
void ResolveStridedSliceAxis(int32_t axis_size, int32_t begin, int32_t end, int32_t stride,
                             bool begin_mask, bool end_mask, bool shrink_axis, bool offset,
                             int32_t* start, int32_t* stop);
// out_shape must equal the per-axis counts (same rank as in_shape).
KernelStatus StridedSlice(const StridedSliceParams& params, const Shape& in_shape,
                          const void* input, const Shape& out_shape, void* output,
                          size_t element_bytes);
// SLICE: begin[i], size[i] (-1 = to the end) per axis of in_shape.
KernelStatus Slice(const int32_t* begin, const int32_t* size, const Shape& in_shape,
                   const void* input, void* output, size_t element_bytes);

// SPLIT / SPLIT_V: output k gets `sizes[k]` slices along `axis` (sizes sum to the axis size).
KernelStatus Split(int32_t axis, const Shape& in_shape, const void* input, int32_t num_outputs,
                   const int32_t* sizes, void* const* outputs, size_t element_bytes);

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_DATA_MOVEMENT_H_
