// MVE (Helium) bodies of int8 ADD and MUL, same-shape case: four lanes a step widened from int8
// (VLDRB.S32), TFLite's double-rounding requantization per lane (mve::MulQuant: VQRDMULH plus
// the rounding-shift fixup), predicated tails. Broadcasting shapes use the scalar body.
// MINIMUM / MAXIMUM (int8, int16): VMIN / VMAX on 16 (8) lanes per step over each run of
// BinaryRows, a broadcast input duplicated into a vector (VDUP), one predicated tail.
#include "elementwise_internal.h"
#include "internal/broadcast.h"
#include "internal/isa_config.h"
#include "internal/mve_helpers.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {
namespace {

// RoundingDivideByPOT(x, -right) on four lanes for right <= 0 (every lane of `right` equal):
// VRSHL rounds half up; the saturating -1 on negative lanes, masked off when right == 0, turns
// that into half away from zero (mve::MulQuant's fixup without its branch).
inline int32x4_t RightQuant(int32x4_t x, int32x4_t right) {
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(x, right), 31);
  return vrshlq_s32(vqaddq_s32(x, fixup), right);
}

template <bool kMin>
inline int8x16_t MinMaxV(int8x16_t a, int8x16_t b) {
  return kMin ? vminq_s8(a, b) : vmaxq_s8(a, b);
}
template <bool kMin>
inline int16x8_t MinMaxV(int16x8_t a, int16x8_t b) {
  return kMin ? vminq_s16(a, b) : vmaxq_s16(a, b);
}

// One run of MINIMUM / MAXIMUM (BinaryRows' row function), int8.
template <bool kMin>
void MinMaxRow8(const int8_t* a, const int8_t* b, bool b_one, int8_t* out, int32_t n) {
  const int32_t tail = n & 15;
  if (b_one) {
    const int8x16_t v = vdupq_n_s8(*b);
    for (int32_t i = n >> 4; i > 0; --i, a += 16, out += 16) {
      vst1q_s8(out, MinMaxV<kMin>(vld1q_s8(a), v));
    }
    if (tail != 0) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(tail));
      vstrbq_p_s8(out, MinMaxV<kMin>(vldrbq_z_s8(a, p), v), p);
    }
    return;
  }
  for (int32_t i = n >> 4; i > 0; --i, a += 16, b += 16, out += 16) {
    vst1q_s8(out, MinMaxV<kMin>(vld1q_s8(a), vld1q_s8(b)));
  }
  if (tail != 0) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(tail));
    vstrbq_p_s8(out, MinMaxV<kMin>(vldrbq_z_s8(a, p), vldrbq_z_s8(b, p)), p);
  }
}

// The same, int16.
template <bool kMin>
void MinMaxRow16(const int16_t* a, const int16_t* b, bool b_one, int16_t* out, int32_t n) {
  const int32_t tail = n & 7;
  if (b_one) {
    const int16x8_t v = vdupq_n_s16(*b);
    for (int32_t i = n >> 3; i > 0; --i, a += 8, out += 8) {
      vst1q_s16(out, MinMaxV<kMin>(vld1q_s16(a), v));
    }
    if (tail != 0) {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(tail));
      vstrhq_p_s16(out, MinMaxV<kMin>(vldrhq_z_s16(a, p), v), p);
    }
    return;
  }
  for (int32_t i = n >> 3; i > 0; --i, a += 8, b += 8, out += 8) {
    vst1q_s16(out, MinMaxV<kMin>(vld1q_s16(a), vld1q_s16(b)));
  }
  if (tail != 0) {
    const mve_pred16_t p = vctp16q(static_cast<uint32_t>(tail));
    vstrhq_p_s16(out, MinMaxV<kMin>(vldrhq_z_s16(a, p), vldrhq_z_s16(b, p)), p);
  }
}

}  // namespace

KernelStatus MinimumMve(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                        const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow8<true>);
}
KernelStatus MaximumMve(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                        const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow8<false>);
}
KernelStatus Minimum16Mve(const Shape& s1, const int16_t* in1, const Shape& s2,
                          const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow16<true>);
}
KernelStatus Maximum16Mve(const Shape& s1, const int16_t* in1, const Shape& s2,
                          const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow16<false>);
}

KernelStatus AddMve(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                    const int8_t* in2, const Shape& so, int8_t* out) {
  if (!(SameShape(s1, so) && SameShape(s2, so)) || !ValidShape(so)) {
    return AddScalar(p, s1, in1, s2, in2, so, out);
  }
  if (!ValidAddParams(p, -128, 127)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  if (n > INT32_MAX) return AddScalar(p, s1, in1, s2, in2, so, out);
  // Every parameter in a local: the stores through `out` could alias `p`, which would make the
  // compiler reload them all per step. Shifts are all <= 0 here (ValidAddParams), so each
  // requantization is VQRDMULH plus a rounding right shift whose fixup is masked off for a
  // zero shift instead of branched on.
  const int32_t off1 = p.input1_offset, off2 = p.input2_offset, left = p.left_shift;
  const int32_t m1 = p.input1.multiplier, m2 = p.input2.multiplier, mo = p.output.multiplier;
  const int32x4_t r1 = vdupq_n_s32(p.input1.shift), r2 = vdupq_n_s32(p.input2.shift);
  const int32x4_t ro = vdupq_n_s32(p.output.shift);
  const int32_t out_off = p.output_offset, lo = p.activation.min, hi = p.activation.max;
  auto step = [&](int32x4_t a, int32x4_t b) {
    a = RightQuant(vqrdmulhq_n_s32(vshlq_r_s32(vaddq_n_s32(a, off1), left), m1), r1);
    b = RightQuant(vqrdmulhq_n_s32(vshlq_r_s32(vaddq_n_s32(b, off2), left), m2), r2);
    const int32x4_t o = RightQuant(vqrdmulhq_n_s32(vaddq_s32(a, b), mo), ro);
    return mve::OffsetClamp(o, out_off, lo, hi);
  };
  const int32_t count = static_cast<int32_t>(n);
  int32_t i = 0;
  for (; i + 4 <= count; i += 4) {
    vstrbq_s32(out + i, step(vldrbq_s32(in1 + i), vldrbq_s32(in2 + i)));
  }
  if (i < count) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(count - i));
    vstrbq_p_s32(out + i, step(vldrbq_z_s32(in1 + i, pred), vldrbq_z_s32(in2 + i, pred)), pred);
  }
  return KernelStatus::kOk;
}

KernelStatus MulMve(const MulParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                    const int8_t* in2, const Shape& so, int8_t* out) {
  if (!(SameShape(s1, so) && SameShape(s2, so)) || !ValidShape(so)) {
    return MulScalar(p, s1, in1, s2, in2, so, out);
  }
  if (!ValidMulParams(p, -128, 127)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(n - i < 4 ? n - i : 4));
    const int32x4_t a = vaddq_n_s32(vldrbq_z_s32(in1 + i, pred), p.input1_offset);
    const int32x4_t b = vaddq_n_s32(vldrbq_z_s32(in2 + i, pred), p.input2_offset);
    int32x4_t o = mve::MulQuant(vmulq_s32(a, b), p.output.multiplier, p.output.shift);
    o = mve::OffsetClamp(o, p.output_offset, p.activation.min, p.activation.max);
    vstrbq_p_s32(out + i, o, pred);
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
