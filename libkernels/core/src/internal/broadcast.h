// Shape checks and the NumPy-style broadcast walker shared by the elementwise kernels.
#ifndef MICA_KERNELS_INTERNAL_BROADCAST_H_
#define MICA_KERNELS_INTERNAL_BROADCAST_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {
namespace internal {

// True when the shape has rank in [0, kMaxRank] and no negative dimension.
inline bool ValidShape(const Shape& s) {
  if (s.rank < 0 || s.rank > kMaxRank) return false;
  for (int i = 0; i < s.rank; ++i) {
    if (s.dims[i] < 0) return false;
  }
  return true;
}

inline bool SameShape(const Shape& a, const Shape& b) {
  if (a.rank != b.rank) return false;
  for (int i = 0; i < a.rank; ++i) {
    if (a.dims[i] != b.dims[i]) return false;
  }
  return true;
}

// Output dims and per-input element strides (0 on broadcast dimensions), right-aligned to
// kMaxRank dimensions.
struct BroadcastPlan {
  int32_t dims[kMaxRank];
  int64_t stride1[kMaxRank];
  int64_t stride2[kMaxRank];
};

// Fills `plan` and returns true when in1 and in2 broadcast exactly to `out`.
inline bool PlanBroadcast(const Shape& in1, const Shape& in2, const Shape& out,
                          BroadcastPlan* plan) {
  if (!ValidShape(in1) || !ValidShape(in2) || !ValidShape(out)) return false;
  if (in1.rank > out.rank || in2.rank > out.rank) return false;
  int64_t s1 = 1, s2 = 1;
  for (int k = kMaxRank - 1; k >= 0; --k) {
    const int oi = out.rank - (kMaxRank - k);  // index into out.dims, < 0 when padded
    const int i1 = in1.rank - (kMaxRank - k);
    const int i2 = in2.rank - (kMaxRank - k);
    const int32_t od = oi >= 0 ? out.dims[oi] : 1;
    const int32_t d1 = i1 >= 0 ? in1.dims[i1] : 1;
    const int32_t d2 = i2 >= 0 ? in2.dims[i2] : 1;
    if ((d1 != od && d1 != 1) || (d2 != od && d2 != 1)) return false;
    // A broadcast input dimension must come from a real 1; an output dim of 0 needs inputs 0/1.
    if (d1 != od && d2 != od) return false;
    plan->dims[k] = od;
    plan->stride1[k] = d1 == 1 ? 0 : s1;
    plan->stride2[k] = d2 == 1 ? 0 : s2;
    s1 *= d1;
    s2 *= d2;
  }
  return true;
}

// Calls `op(a, b)` for every output element in memory order and stores the result.
template <typename T, typename Op>
inline void BroadcastApply(const BroadcastPlan& p, const T* in1, const T* in2, T* out, Op op) {
  size_t o = 0;
  for (int32_t d0 = 0; d0 < p.dims[0]; ++d0) {
    const int64_t a0 = d0 * p.stride1[0], b0 = d0 * p.stride2[0];
    for (int32_t d1 = 0; d1 < p.dims[1]; ++d1) {
      const int64_t a1 = a0 + d1 * p.stride1[1], b1 = b0 + d1 * p.stride2[1];
      for (int32_t d2 = 0; d2 < p.dims[2]; ++d2) {
        const int64_t a2 = a1 + d2 * p.stride1[2], b2 = b1 + d2 * p.stride2[2];
        for (int32_t d3 = 0; d3 < p.dims[3]; ++d3) {
          const int64_t a3 = a2 + d3 * p.stride1[3], b3 = b2 + d3 * p.stride2[3];
          for (int32_t d4 = 0; d4 < p.dims[4]; ++d4) {
            const int64_t a4 = a3 + d4 * p.stride1[4], b4 = b3 + d4 * p.stride2[4];
            const int64_t sa = p.stride1[5], sb = p.stride2[5];
            for (int32_t d5 = 0; d5 < p.dims[5]; ++d5) {
              out[o++] = op(in1[a4 + d5 * sa], in2[b4 + d5 * sb]);
            }
          }
        }
      }
    }
  }
}

// Runs a binary elementwise op: validates, then uses a flat loop when no broadcasting is needed
// and the general walker otherwise.
template <typename T, typename Op>
inline KernelStatus BinaryElementwise(const Shape& s1, const T* in1, const Shape& s2,
                                      const T* in2, const Shape& so, T* out, Op op) {
  BroadcastPlan plan;
  if (!PlanBroadcast(s1, s2, so, &plan)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  if (SameShape(s1, so) && SameShape(s2, so)) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(in1[i], in2[i]);
  } else if (s2.elements() == 1 && SameShape(s1, so)) {
    const T b = in2[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(in1[i], b);
  } else if (s1.elements() == 1 && SameShape(s2, so)) {
    const T a = in1[0];
    for (int64_t i = 0; i < n; ++i) out[i] = op(a, in2[i]);
  } else {
    BroadcastApply(plan, in1, in2, out, op);
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_BROADCAST_H_
