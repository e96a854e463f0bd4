// Private: the TRANSPOSE and PAD bodies, their argument checks and the outer loops every body
// shares. A body differs only in its run functions, a struct (Runs) of:
//   static Copy(dst, src, bytes)             a contiguous run
//   static Gather(dst, src, stride, eb, n)   dst[i] = src[i * stride] (elements of eb bytes)
//   static Gather2D(dst, src, stride, eb, rows, n)   rows runs at once where the input's next
//                                            dim is contiguous: dst[r * n + i] = src[i * stride
//                                            + r] (eb 1 or 2; only called when kGather2D)
//   Filler(value, eb), filler(dst, n)        n copies of the eb-byte element at `value`
#ifndef MICA_KERNELS_DATA_MOVEMENT_INTERNAL_H_
#define MICA_KERNELS_DATA_MOVEMENT_INTERNAL_H_

#include <climits>
#include <cstddef>
#include <cstdint>

#include "internal/broadcast.h"
#include "mica/kernels/data_movement.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus TransposeScalar(const Shape& in_shape, const int32_t* perm, const void* input,
                             void* output, size_t element_bytes);
KernelStatus TransposeDsp(const Shape& in_shape, const int32_t* perm, const void* input,
                          void* output, size_t element_bytes);
KernelStatus TransposeMve(const Shape& in_shape, const int32_t* perm, const void* input,
                          void* output, size_t element_bytes);
KernelStatus PadScalar(const PadParams& params, const Shape& in_shape, const void* input,
                       const void* pad_value, void* output, size_t element_bytes);
KernelStatus PadDsp(const PadParams& params, const Shape& in_shape, const void* input,
                    const void* pad_value, void* output, size_t element_bytes);
KernelStatus PadMve(const PadParams& params, const Shape& in_shape, const void* input,
                    const void* pad_value, void* output, size_t element_bytes);

inline bool ValidElementBytes(size_t b) { return b == 1 || b == 2 || b == 4; }

// A transpose as output dims walking the input with element strides, outermost first: size-1
// dims dropped and neighbours merged where the outer one's stride is the inner one's times its
// size (so a run covers as much of the output as possible). dims[k..] hold `count` entries.
struct TransposePlan {
  int32_t count;
  int32_t dims[kMaxRank];
  int64_t stride[kMaxRank];
};

// Checks a Transpose call; on kOk with *plan->count >= 0 there is work to do (count 0 with no
// elements is signalled by returning kOk and count = -1).
inline KernelStatus PlanTranspose(const Shape& in_shape, const int32_t* perm, const void* input,
                                  const void* output, size_t eb, TransposePlan* plan) {
  if (!ValidShape(in_shape) || !ValidElementBytes(eb) || perm == nullptr) {
    return KernelStatus::kArgError;
  }
  const int r = in_shape.rank;
  bool used[kMaxRank] = {};
  for (int i = 0; i < r; ++i) {
    if (perm[i] < 0 || perm[i] >= r || used[perm[i]]) return KernelStatus::kArgError;
    used[perm[i]] = true;
  }
  plan->count = -1;
  if (in_shape.elements() == 0) return KernelStatus::kOk;
  if (input == nullptr || output == nullptr) return KernelStatus::kArgError;
  int64_t in_strides[kMaxRank];
  int64_t s = 1;
  for (int i = r - 1; i >= 0; --i) {
    in_strides[i] = s;
    s *= in_shape.dims[i];
  }
  int32_t n = 0;
  for (int i = 0; i < r; ++i) {
    const int32_t d = in_shape.dims[perm[i]];
    const int64_t st = in_strides[perm[i]];
    if (d == 1) continue;
    if (n > 0 && plan->stride[n - 1] == st * d &&
        int64_t{plan->dims[n - 1]} * d <= INT32_MAX) {
      plan->dims[n - 1] *= d;
      plan->stride[n - 1] = st;
    } else {
      plan->dims[n] = d;
      plan->stride[n] = st;
      ++n;
    }
  }
  if (n == 0) {  // one element
    plan->dims[0] = 1;
    plan->stride[0] = 1;
    n = 1;
  }
  plan->count = n;
  return KernelStatus::kOk;
}

// Walks the plan's outer dims (an odometer with byte offsets updated per step) and hands each
// innermost run to the body: a copy when the run is contiguous in the input, else a gather.
template <typename Runs>
inline void TransposeWalk(const TransposePlan& plan, const char* src, char* dst, size_t eb) {
  const int inner = plan.count - 1;
  const int32_t run = plan.dims[inner];
  const int64_t run_stride = plan.stride[inner];
  const size_t run_bytes = static_cast<size_t>(run) * eb;
  // A gathered run whose next outer dim is contiguous in the input (NHWC <-> NCHW, a channel
  // shuffle) goes to Gather2D whole: the two innermost dims form one block.
  const bool two_d = Runs::kGather2D && run_stride != 1 && inner >= 1 &&
                     plan.stride[inner - 1] == 1 && eb <= 2;
  const int outer = two_d ? inner - 1 : inner;
  const size_t block_bytes = two_d ? run_bytes * static_cast<size_t>(plan.dims[inner - 1])
                                   : run_bytes;
  ptrdiff_t step[kMaxRank], wrap[kMaxRank];
  for (int j = 0; j < outer; ++j) {
    step[j] = static_cast<ptrdiff_t>(plan.stride[j] * static_cast<int64_t>(eb));
    wrap[j] = step[j] * plan.dims[j];
  }
  // One loop per kind of run, so each keeps its state in registers; one outer dim (the usual
  // case after merging) is a plain loop.
  const auto walk = [&](auto&& body) {
    if (outer <= 1) {
      const int32_t count = outer == 1 ? plan.dims[0] : 1;
      const ptrdiff_t st = outer == 1 ? step[0] : 0;
      const char* s = src;
      for (int32_t i = 0; i < count; ++i, s += st, dst += block_bytes) body(dst, s);
      return;
    }
    int32_t idx[kMaxRank] = {};
    ptrdiff_t off = 0;
    while (true) {
      body(dst, src + off);
      dst += block_bytes;
      int j = outer - 1;
      for (; j >= 0; --j) {
        off += step[j];
        if (++idx[j] < plan.dims[j]) break;
        off -= wrap[j];
        idx[j] = 0;
      }
      if (j < 0) break;
    }
  };
  if (two_d) {
    const int32_t rows = plan.dims[inner - 1];
    walk([=](char* d, const char* s) { Runs::Gather2D(d, s, run_stride, eb, rows, run); });
  } else if (run_stride == 1) {
    walk([=](char* d, const char* s) { Runs::Copy(d, s, run_bytes); });
  } else {
    walk([=](char* d, const char* s) { Runs::Gather(d, s, run_stride, eb, run); });
  }
}

template <typename Runs>
inline KernelStatus TransposeWith(const Shape& in_shape, const int32_t* perm, const void* input,
                                  void* output, size_t eb) {
  TransposePlan plan;
  const KernelStatus st = PlanTranspose(in_shape, perm, input, output, eb, &plan);
  if (st != KernelStatus::kOk || plan.count < 0) return st;
  TransposeWalk<Runs>(plan, static_cast<const char*>(input), static_cast<char*>(output), eb);
  return KernelStatus::kOk;
}

// PAD: output rows of the innermost padded dimension, the unpadded dimensions inside it merged
// into its elements (a row of `row` elements: `before` pad, `in_row` copied, the rest pad).
template <typename Runs>
inline KernelStatus PadWith(const PadParams& p, const Shape& in_shape, const void* input,
                            const void* pad_value, void* output, size_t eb) {
  if (!ValidShape(in_shape) || !ValidElementBytes(eb) || pad_value == nullptr) {
    return KernelStatus::kArgError;
  }
  const int r = in_shape.rank;
  int32_t in6[kMaxRank], out6[kMaxRank], before6[kMaxRank];
  for (int i = 0; i < kMaxRank; ++i) {
    const int k = r - (kMaxRank - i);
    if (k >= 0) {
      if (p.before[k] < 0 || p.after[k] < 0 ||
          int64_t{in_shape.dims[k]} + p.before[k] + p.after[k] > INT32_MAX) {
        return KernelStatus::kArgError;
      }
      in6[i] = in_shape.dims[k];
      before6[i] = p.before[k];
      out6[i] = in_shape.dims[k] + p.before[k] + p.after[k];
    } else {
      in6[i] = 1;
      before6[i] = 0;
      out6[i] = 1;
    }
  }
  int64_t out_n = 1;
  for (int i = 0; i < kMaxRank; ++i) out_n *= out6[i];
  if (out_n == 0) return KernelStatus::kOk;
  const bool empty = in_shape.elements() == 0;
  if (output == nullptr || (!empty && input == nullptr)) return KernelStatus::kArgError;
  char* dst = static_cast<char*>(output);
  const typename Runs::Filler fill(pad_value, eb);
  if (empty) {  // all padding
    fill(dst, out_n);
    return KernelStatus::kOk;
  }
  // Row dimension k: the innermost one with padding (or 0); the dims inside it are merged.
  int k = kMaxRank - 1;
  int64_t inner = 1;
  while (k > 0 && out6[k] == in6[k]) inner *= in6[k--];
  const int64_t row = out6[k] * inner, in_row = in6[k] * inner, before = before6[k] * inner;
  const int64_t after = row - in_row - before;
  const size_t ebs = eb;
  const size_t row_bytes = static_cast<size_t>(row) * ebs;
  // The outer dims with more than one row (an odometer): byte step in the input, whether the
  // current index lies in the padding, and how many do (`outside`).
  int32_t dims[kMaxRank], lo[kMaxRank], hi[kMaxRank], idx[kMaxRank];
  ptrdiff_t step[kMaxRank];
  bool out_flag[kMaxRank];
  int m = 0, outside = 0;
  ptrdiff_t off = 0;
  {
    int64_t s = in_row * static_cast<int64_t>(ebs);
    for (int i = k - 1; i >= 0; --i) {
      if (out6[i] > 1) {
        dims[m] = out6[i];
        lo[m] = before6[i];
        hi[m] = before6[i] + in6[i];
        step[m] = static_cast<ptrdiff_t>(s);
        idx[m] = 0;
        out_flag[m] = lo[m] > 0;
        outside += out_flag[m] ? 1 : 0;
        off -= static_cast<ptrdiff_t>(lo[m]) * step[m];
        ++m;
      }
      s *= in6[i];
    }
  }
  // dims[0..m) are innermost first.
  const char* src = static_cast<const char*>(input);
  while (true) {
    if (outside == 0) {
      fill(dst, before);
      Runs::Copy(dst + before * ebs, src + off, static_cast<size_t>(in_row) * ebs);
      fill(dst + (before + in_row) * ebs, after);
    } else {
      fill(dst, row);
    }
    dst += row_bytes;
    int j = 0;
    for (; j < m; ++j) {
      off += step[j];
      const int32_t v = ++idx[j] < dims[j] ? idx[j] : (idx[j] = 0);
      if (v == 0) off -= static_cast<ptrdiff_t>(dims[j]) * step[j];
      const bool o = v < lo[j] || v >= hi[j];
      outside += (o ? 1 : 0) - (out_flag[j] ? 1 : 0);
      out_flag[j] = o;
      if (v != 0) break;
    }
    if (j == m) break;
  }
  return KernelStatus::kOk;
}

// Portable run functions (the scalar body's; SIMD bodies reuse what they do not change).
struct PortableRuns {
  static constexpr bool kGather2D = true;
  static void Copy(char* dst, const char* src, size_t bytes) {
    if (bytes != 0) __builtin_memcpy(dst, src, bytes);
  }
  class Filler {
   public:
    Filler(const void* value, size_t eb) : eb_(eb) { __builtin_memcpy(&v_, value, eb); }
    void operator()(char* dst, int64_t n) const {
      if (eb_ == 1) {
        FillT(dst, static_cast<uint8_t>(v_), n);
      } else if (eb_ == 2) {
        FillT(dst, static_cast<uint16_t>(v_), n);
      } else {
        FillT(dst, v_, n);
      }
    }

   private:
    template <typename T>
    static void FillT(char* dst, T v, int64_t n) {
      for (int64_t i = 0; i < n; ++i) __builtin_memcpy(dst + i * int64_t{sizeof(T)}, &v, sizeof(T));
    }
    uint32_t v_ = 0;  // the element in its low eb bytes (little-endian)
    size_t eb_;
  };
  template <typename T>
  static void GatherT(char* dst, const char* src, int64_t stride, int32_t n) {
    const int64_t step = stride * int64_t{sizeof(T)};
    for (int32_t i = 0; i < n; ++i, src += step, dst += sizeof(T)) {
      T v;
      __builtin_memcpy(&v, src, sizeof(T));
      __builtin_memcpy(dst, &v, sizeof(T));
    }
  }
  // rows x n block, element by element: dst[r * n + i] = src[i * stride + r] (dst rows
  // dst_row bytes apart). Few columns (a channel shuffle): column by column, reading the input
  // contiguously; else row by row.
  template <typename T>
  static void Gather2DT(char* dst, const char* src, int64_t stride, int32_t rows, int32_t n,
                        ptrdiff_t dst_row) {
    const ptrdiff_t step = static_cast<ptrdiff_t>(stride * int64_t{sizeof(T)});
    if (n < rows) {
      for (int32_t i = 0; i < n; ++i, src += step, dst += sizeof(T)) {
        const char* x = src;
        char* d = dst;
        for (int32_t r = 0; r < rows; ++r, x += sizeof(T), d += dst_row) {
          T v;
          __builtin_memcpy(&v, x, sizeof(T));
          __builtin_memcpy(d, &v, sizeof(T));
        }
      }
      return;
    }
    for (int32_t r = 0; r < rows; ++r, dst += dst_row) {
      const char* x = src + r * static_cast<ptrdiff_t>(sizeof(T));
      char* d = dst;
      for (int32_t i = 0; i < n; ++i, x += step, d += sizeof(T)) {
        T v;
        __builtin_memcpy(&v, x, sizeof(T));
        __builtin_memcpy(d, &v, sizeof(T));
      }
    }
  }
  static void Gather2D(char* dst, const char* src, int64_t stride, size_t eb, int32_t rows,
                       int32_t n) {
    const ptrdiff_t dst_row = static_cast<ptrdiff_t>(n) * static_cast<ptrdiff_t>(eb);
    if (eb == 1) {
      Gather2DT<uint8_t>(dst, src, stride, rows, n, dst_row);
    } else {
      Gather2DT<uint16_t>(dst, src, stride, rows, n, dst_row);
    }
  }
  static void Gather(char* dst, const char* src, int64_t stride, size_t eb, int32_t n) {
    if (eb == 1) {
      GatherT<uint8_t>(dst, src, stride, n);
    } else if (eb == 2) {
      GatherT<uint16_t>(dst, src, stride, n);
    } else {
      GatherT<uint32_t>(dst, src, stride, n);
    }
  }
};

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_DATA_MOVEMENT_INTERNAL_H_
