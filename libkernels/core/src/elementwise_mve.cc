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

KernelStatus AddMve(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                    const int8_t* in2, const Shape& so, int8_t* out) {
  if (!(SameShape(s1, so) && SameShape(s2, so)) || !ValidShape(so)) {
    return AddScalar(p, s1, in1, s2, in2, so, out);
  }
  if (!ValidAddParams(p, -128, 127)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  for (int64_t i = 0; i < n; i += 4) {
    const mve_pred16_t pred = vctp32q(static_cast<uint32_t>(n - i < 4 ? n - i : 4));
    int32x4_t a = vaddq_n_s32(vldrbq_z_s32(in1 + i, pred), p.input1_offset);
    int32x4_t b = vaddq_n_s32(vldrbq_z_s32(in2 + i, pred), p.input2_offset);
    a = mve::MulQuant(vshlq_r_s32(a, p.left_shift), p.input1.multiplier, p.input1.shift);
    b = mve::MulQuant(vshlq_r_s32(b, p.left_shift), p.input2.multiplier, p.input2.shift);
    int32x4_t o = mve::MulQuant(vaddq_s32(a, b), p.output.multiplier, p.output.shift);
    o = mve::OffsetClamp(o, p.output_offset, p.activation.min, p.activation.max);
    vstrbq_p_s32(out + i, o, pred);
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
