// DSP (Armv7E-M SIMD32) bodies of the hot int8 elementwise ops (ADD and MUL) and of MINIMUM /
// MAXIMUM (int8 and int16).
//
// The same-shape case (residual adds, the common one) loads four int8 per input as one 32-bit
// word and widens it to two halfword pairs with the offset added (SXTAB16, SXTAB16 ROR 8);
// MUL forms each product with SMULBB / SMULTT. Requantization per lane is the scalar
// arithmetic. Broadcasting shapes use the scalar body.
#include "elementwise_internal.h"
#include "internal/broadcast.h"
#include "internal/dsp_intrinsics.h"
#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_DSP

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline int32_t LaneLo(uint32_t x) { return static_cast<int16_t>(x & 0xFFFFu); }
inline int32_t LaneHi(uint32_t x) { return static_cast<int16_t>(x >> 16); }

// Calls `element(a_pair, b_pair, high)` for each of 4 elements a step: the pairs hold the
// offset-added inputs in halfword lanes (SXTAB16), `high` selects the lane.
template <typename Element>
void SameShapeLoop(const int8_t* in1, const int8_t* in2, int8_t* out, int64_t n, int32_t off1,
                   int32_t off2, Element element) {
  const uint32_t o1 = dsp::Pack16(off1, off1), o2 = dsp::Pack16(off2, off2);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t a02, a13, b02, b13;
    dsp::Widen4(dsp::Load32(in1 + i), o1, &a02, &a13);
    dsp::Widen4(dsp::Load32(in2 + i), o2, &b02, &b13);
    const uint32_t r0 = static_cast<uint8_t>(element(a02, b02, false));
    const uint32_t r1 = static_cast<uint8_t>(element(a13, b13, false));
    const uint32_t r2 = static_cast<uint8_t>(element(a02, b02, true));
    const uint32_t r3 = static_cast<uint8_t>(element(a13, b13, true));
    dsp::Store32(out + i, r0 | (r1 << 8) | (r2 << 16) | (r3 << 24));
  }
  for (; i < n; ++i) {
    const uint32_t a = dsp::Pack16(in1[i] + off1, 0), b = dsp::Pack16(in2[i] + off2, 0);
    out[i] = static_cast<int8_t>(element(a, b, false));
  }
}

// Lane-wise minimum (kMin) or maximum of four int8 (k16: two int16) in a word: SSUB8 (SSUB16)
// sets each lane's GE flag where a >= b and SEL picks b or a by it. One asm statement keeps the
// two instructions together (nothing may set the GE flags in between).
template <bool kMin, bool k16>
inline uint32_t MinMaxLanes(uint32_t a, uint32_t b) {
#if MICA_KERNELS_HAVE_DSP
  uint32_t r;
  if (k16) {
    if (kMin) {
      __asm__("ssub16 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    } else {
      __asm__("ssub16 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    }
  } else {
    if (kMin) {
      __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    } else {
      __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    }
  }
  return r;
#else
  const int bits = k16 ? 16 : 8;
  const uint32_t mask = k16 ? 0xFFFFu : 0xFFu;
  uint32_t r = 0;
  for (int s = 0; s < 32; s += bits) {
    const uint32_t ua = (a >> s) & mask, ub = (b >> s) & mask;
    const int32_t sa = k16 ? int32_t{static_cast<int16_t>(ua)} : int32_t{static_cast<int8_t>(ua)};
    const int32_t sb = k16 ? int32_t{static_cast<int16_t>(ub)} : int32_t{static_cast<int8_t>(ub)};
    const bool ge = sa >= sb;  // SEL: GE ? first : second
    r |= (kMin ? (ge ? ub : ua) : (ge ? ua : ub)) << s;
  }
  return r;
#endif
}

// One run of MINIMUM / MAXIMUM (BinaryRows' row function): two words a step, then the tail.
template <typename T, bool kMin>
void MinMaxRow(const T* a, const T* b, bool b_one, T* out, int32_t n) {
  constexpr bool k16 = sizeof(T) == 2;
  constexpr int32_t kLanes = 4 / static_cast<int32_t>(sizeof(T));
  int32_t i = 0;
  if (b_one) {
    const uint32_t v = k16 ? dsp::Pack16(*b, *b) : 0x01010101u * static_cast<uint8_t>(*b);
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      const uint32_t x0 = dsp::Load32(a + i), x1 = dsp::Load32(a + i + kLanes);
      dsp::Store32(out + i, MinMaxLanes<kMin, k16>(x0, v));
      dsp::Store32(out + i + kLanes, MinMaxLanes<kMin, k16>(x1, v));
    }
  } else {
    for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
      const uint32_t x0 = dsp::Load32(a + i), x1 = dsp::Load32(a + i + kLanes);
      const uint32_t y0 = dsp::Load32(b + i), y1 = dsp::Load32(b + i + kLanes);
      dsp::Store32(out + i, MinMaxLanes<kMin, k16>(x0, y0));
      dsp::Store32(out + i + kLanes, MinMaxLanes<kMin, k16>(x1, y1));
    }
  }
  const T* bb = b_one ? b : b + i;
  const int32_t step = b_one ? 0 : 1;
  for (; i < n; ++i, bb += step) {
    const T x = a[i], y = *bb;
    out[i] = kMin ? (x < y ? x : y) : (x > y ? x : y);
  }
}

}  // namespace

KernelStatus MinimumDsp(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                        const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int8_t, true>);
}
KernelStatus MaximumDsp(const Shape& s1, const int8_t* in1, const Shape& s2, const int8_t* in2,
                        const Shape& so, int8_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int8_t, false>);
}
KernelStatus Minimum16Dsp(const Shape& s1, const int16_t* in1, const Shape& s2,
                          const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int16_t, true>);
}
KernelStatus Maximum16Dsp(const Shape& s1, const int16_t* in1, const Shape& s2,
                          const int16_t* in2, const Shape& so, int16_t* out) {
  return BinaryRows(s1, in1, s2, in2, so, out, MinMaxRow<int16_t, false>);
}

KernelStatus AddDsp(const AddParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                    const int8_t* in2, const Shape& so, int8_t* out) {
  if (!(SameShape(s1, so) && SameShape(s2, so)) || !ValidShape(so) ||
      p.input1_offset < -255 || p.input1_offset > 255 || p.input2_offset < -255 ||
      p.input2_offset > 255) {
    return AddScalar(p, s1, in1, s2, in2, so, out);
  }
  if (!ValidAddParams(p, -128, 127)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  // Offsets already added: reuse the per-element arithmetic with zero input offsets.
  AddParams q = p;
  q.input1_offset = 0;
  q.input2_offset = 0;
  SameShapeLoop(in1, in2, out, n, p.input1_offset, p.input2_offset,
                [&q](uint32_t a, uint32_t b, bool hi) {
                  return hi ? AddSubElement<1>(q, LaneHi(a), LaneHi(b))
                            : AddSubElement<1>(q, LaneLo(a), LaneLo(b));
                });
  return KernelStatus::kOk;
}

KernelStatus MulDsp(const MulParams& p, const Shape& s1, const int8_t* in1, const Shape& s2,
                    const int8_t* in2, const Shape& so, int8_t* out) {
  if (!(SameShape(s1, so) && SameShape(s2, so)) || !ValidShape(so) ||
      p.input1_offset < -255 || p.input1_offset > 255 || p.input2_offset < -255 ||
      p.input2_offset > 255) {
    return MulScalar(p, s1, in1, s2, in2, so, out);
  }
  if (!ValidMulParams(p, -128, 127)) return KernelStatus::kArgError;
  const int64_t n = so.elements();
  if (n == 0) return KernelStatus::kOk;
  if (in1 == nullptr || in2 == nullptr || out == nullptr) return KernelStatus::kArgError;
  MulParams q = p;
  q.input1_offset = 0;
  q.input2_offset = 0;
  SameShapeLoop(in1, in2, out, n, p.input1_offset, p.input2_offset,
                [&q](uint32_t a, uint32_t b, bool hi) {
                  // SMULBB / SMULTT: the 16x16 product of the offset-added lanes.
                  const int32_t prod = hi ? dsp::Smlatt(a, b, 0) : dsp::Smlabb(a, b, 0);
                  const int32_t v = FastMbqm(prod, q.output.multiplier,
                                                                  q.output.shift) +
                                    q.output_offset;
                  return Clamp(v, q.activation.min, q.activation.max);
                });
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_DSP
