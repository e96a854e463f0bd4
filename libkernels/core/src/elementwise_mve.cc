// MVE (Helium) bodies of int8 ADD and MUL, same-shape case: four lanes a step widened from int8
// (VLDRB.S32), TFLite's double-rounding requantization per lane (mve::MulQuant: VQRDMULH plus
// the rounding-shift fixup), predicated tails. Broadcasting shapes use the scalar body.
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

}  // namespace

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
