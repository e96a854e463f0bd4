// Data-movement kernels: the scalar TRANSPOSE and PAD bodies (portable run functions over the
// shared walkers of data_movement_internal.h) and the single body of CONCATENATION,
// STRIDED_SLICE, SLICE and SPLIT (byte copies).
#include <climits>

#include "data_movement_internal.h"
#include "internal/broadcast.h"
#include "mica/kernels/data_movement.h"

namespace mica {
namespace kernels {
namespace {

using internal::ValidElementBytes;
using internal::ValidShape;

inline void CopyElement(void* dst, const void* src, size_t bytes) {
  __builtin_memcpy(dst, src, bytes);
}

// Copies the 6-d box described by dims / source strides (in elements) from `src` (starting at
// element `src0`) into `dst` contiguously.
void CopyBox(const int32_t* dims, const int64_t* sstride, const char* src, int64_t src0,
             char* dst, size_t eb) {
  size_t o = 0;
  for (int32_t a = 0; a < dims[0]; ++a)
    for (int32_t b = 0; b < dims[1]; ++b)
      for (int32_t c = 0; c < dims[2]; ++c)
        for (int32_t d = 0; d < dims[3]; ++d)
          for (int32_t e = 0; e < dims[4]; ++e) {
            const int64_t base = src0 + a * sstride[0] + b * sstride[1] + c * sstride[2] +
                                 d * sstride[3] + e * sstride[4];
            if (sstride[5] == 1) {
              __builtin_memcpy(dst + o * eb, src + base * static_cast<int64_t>(eb),
                               static_cast<size_t>(dims[5]) * eb);
              o += static_cast<size_t>(dims[5]);
            } else {
              for (int32_t f = 0; f < dims[5]; ++f, ++o) {
                CopyElement(dst + o * eb, src + (base + f * sstride[5]) * static_cast<int64_t>(eb),
                            eb);
              }
            }
          }
}

}  // namespace

namespace internal {

KernelStatus TransposeScalar(const Shape& in_shape, const int32_t* perm, const void* input,
                             void* output, size_t eb) {
  return TransposeWith<PortableRuns>(in_shape, perm, input, output, eb);
}

KernelStatus PadScalar(const PadParams& p, const Shape& in_shape, const void* input,
                       const void* pad_value, void* output, size_t eb) {
  return PadWith<PortableRuns>(p, in_shape, input, pad_value, output, eb);
}

}  // namespace internal

KernelStatus Concatenation(int32_t axis, int32_t num_inputs, const Shape* in_shapes,
                           const void* const* inputs, const Shape& out_shape, void* output,
                           size_t eb) {
  if (!ValidShape(out_shape) || !ValidElementBytes(eb) || num_inputs < 1 ||
      in_shapes == nullptr || inputs == nullptr || axis < 0 || axis >= out_shape.rank) {
    return KernelStatus::kArgError;
  }
  int64_t axis_total = 0;
  for (int32_t k = 0; k < num_inputs; ++k) {
    const Shape& s = in_shapes[k];
    if (!ValidShape(s) || s.rank != out_shape.rank) return KernelStatus::kArgError;
    for (int i = 0; i < s.rank; ++i) {
      if (i != axis && s.dims[i] != out_shape.dims[i]) return KernelStatus::kArgError;
    }
    axis_total += s.dims[axis];
    if (s.elements() > 0 && inputs[k] == nullptr) return KernelStatus::kArgError;
  }
  if (axis_total != out_shape.dims[axis]) return KernelStatus::kArgError;
  if (out_shape.elements() == 0) return KernelStatus::kOk;
  if (output == nullptr) return KernelStatus::kArgError;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= out_shape.dims[i];
  for (int i = axis + 1; i < out_shape.rank; ++i) inner *= out_shape.dims[i];
  char* dst = static_cast<char*>(output);
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t k = 0; k < num_inputs; ++k) {
      const size_t chunk = static_cast<size_t>(in_shapes[k].dims[axis] * inner) * eb;
      if (chunk == 0) continue;
      __builtin_memcpy(dst, static_cast<const char*>(inputs[k]) + static_cast<size_t>(o) * chunk,
                       chunk);
      dst += chunk;
    }
  }
  return KernelStatus::kOk;
}

void ResolveStridedSliceAxis(int32_t axis_size, int32_t begin, int32_t end, int32_t stride,
                             bool begin_mask, bool end_mask, bool shrink_axis, bool offset,
                             int32_t* start, int32_t* stop) {
  if (axis_size == 0) {
    *start = 0;
    *stop = 0;
    return;
  }
  auto clamp = [](int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  int64_t s = begin;
  if (begin_mask) s = stride > 0 ? INT32_MIN : INT32_MAX;
  if (s < 0) s += axis_size;
  s = stride > 0 ? clamp(s, 0, axis_size) : clamp(s, -1, axis_size - 1);
  *start = static_cast<int32_t>(s);
  if (shrink_axis) {
    *stop = *start + 1;
    return;
  }
  int64_t e = end;
  if (offset) e += begin;
  if (end_mask) e = stride > 0 ? INT32_MAX : INT32_MIN;
  if (e < 0) e += axis_size;
  e = stride > 0 ? clamp(e, 0, axis_size) : clamp(e, -1, axis_size - 1);
  *stop = static_cast<int32_t>(e);
}

KernelStatus StridedSlice(const StridedSliceParams& p, const Shape& in_shape, const void* input,
                          const Shape& out_shape, void* output, size_t eb) {
  if (!ValidShape(in_shape) || !ValidShape(out_shape) || !ValidElementBytes(eb) ||
      out_shape.rank != in_shape.rank) {
    return KernelStatus::kArgError;
  }
  const int r = in_shape.rank;
  int32_t dims[kMaxRank];
  int64_t sstride[kMaxRank];
  int64_t src0 = 0;
  int64_t in_strides[kMaxRank];
  {
    int64_t s = 1;
    for (int i = r - 1; i >= 0; --i) {
      in_strides[i] = s;
      s *= in_shape.dims[i];
    }
  }
  for (int i = 0; i < kMaxRank; ++i) {
    const int k = r - (kMaxRank - i);
    if (k < 0) {
      dims[i] = 1;
      sstride[i] = 0;
      continue;
    }
    if (p.stride[k] == 0) return KernelStatus::kArgError;
    const int32_t count = StridedSliceCount(p.start[k], p.stop[k], p.stride[k]);
    if (count != out_shape.dims[k]) return KernelStatus::kArgError;
    if (count > 0) {
      const int64_t last = p.start[k] + int64_t{count - 1} * p.stride[k];
      if (p.start[k] < 0 || p.start[k] >= in_shape.dims[k] || last < 0 ||
          last >= in_shape.dims[k]) {
        return KernelStatus::kArgError;
      }
    }
    dims[i] = count;
    sstride[i] = in_strides[k] * p.stride[k];
    src0 += int64_t{p.start[k]} * in_strides[k];
  }
  if (out_shape.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  CopyBox(dims, sstride, static_cast<const char*>(input), src0, static_cast<char*>(output), eb);
  return KernelStatus::kOk;
}

KernelStatus Slice(const int32_t* begin, const int32_t* size, const Shape& in_shape,
                   const void* input, void* output, size_t eb) {
  if (!ValidShape(in_shape) || begin == nullptr || size == nullptr) {
    return KernelStatus::kArgError;
  }
  StridedSliceParams p;
  Shape out = in_shape;
  for (int i = 0; i < in_shape.rank; ++i) {
    const int32_t n = size[i] == -1 ? in_shape.dims[i] - begin[i] : size[i];
    if (begin[i] < 0 || n < 0 || int64_t{begin[i]} + n > in_shape.dims[i]) {
      return KernelStatus::kArgError;
    }
    p.start[i] = begin[i];
    p.stop[i] = begin[i] + n;
    p.stride[i] = 1;
    out.dims[i] = n;
  }
  return StridedSlice(p, in_shape, input, out, output, eb);
}

KernelStatus Split(int32_t axis, const Shape& in_shape, const void* input, int32_t num_outputs,
                   const int32_t* sizes, void* const* outputs, size_t eb) {
  if (!ValidShape(in_shape) || !ValidElementBytes(eb) || axis < 0 || axis >= in_shape.rank ||
      num_outputs < 1 || sizes == nullptr || outputs == nullptr) {
    return KernelStatus::kArgError;
  }
  int64_t total = 0;
  for (int32_t k = 0; k < num_outputs; ++k) {
    if (sizes[k] < 0) return KernelStatus::kArgError;
    total += sizes[k];
  }
  if (total != in_shape.dims[axis]) return KernelStatus::kArgError;
  if (in_shape.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr) return KernelStatus::kArgError;
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= in_shape.dims[i];
  for (int i = axis + 1; i < in_shape.rank; ++i) inner *= in_shape.dims[i];
  for (int32_t k = 0; k < num_outputs; ++k) {
    if (sizes[k] > 0 && outputs[k] == nullptr) return KernelStatus::kArgError;
  }
  const char* src = static_cast<const char*>(input);
  for (int64_t o = 0; o < outer; ++o) {
    for (int32_t k = 0; k < num_outputs; ++k) {
      const size_t chunk = static_cast<size_t>(sizes[k] * inner) * eb;
      if (chunk == 0) continue;
      __builtin_memcpy(static_cast<char*>(outputs[k]) + static_cast<size_t>(o) * chunk, src,
                       chunk);
      src += chunk;
    }
  }
  return KernelStatus::kOk;
}

}  // namespace kernels
}  // namespace mica
