// DSP (Armv7E-M SIMD32) bodies of the hot int8 elementwise ops: ADD and MUL.
//
// The same-shape case (residual adds, the common one) loads four int8 per input as one 32-bit
// word and splits each into two sign-extended halfword pairs (SXTB16 / SXTB16 ROR 8), so the
// offset is added to two lanes at a time (SADD16); the requantization of each lane is the
// scalar arithmetic. Broadcasting shapes use the scalar body.
#include "elementwise_internal.h"
#include "internal/broadcast.h"
#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_DSP

namespace mica {
namespace kernels {
namespace internal {
namespace {

// Portable forms of the two SIMD32 operations used here (the compiler maps them to SXTB16 /
// SADD16 on Armv7E-M).
inline uint32_t Sxtb16(uint32_t x) {
  const uint32_t lo = static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>(x & 0xff)));
  const uint32_t hi =
      static_cast<uint32_t>(static_cast<int32_t>(static_cast<int8_t>((x >> 16) & 0xff)));
  return (lo & 0xffffu) | (hi << 16);
}
inline uint32_t Ror8(uint32_t x) { return (x >> 8) | (x << 24); }
inline uint32_t Sadd16(uint32_t a, uint32_t b) {
  const uint32_t lo = (a + b) & 0xffffu;
  const uint32_t hi = ((a >> 16) + (b >> 16)) & 0xffffu;
  return lo | (hi << 16);
}
inline int32_t Lo16(uint32_t x) { return static_cast<int16_t>(x & 0xffff); }
inline int32_t Hi16(uint32_t x) { return static_cast<int16_t>(x >> 16); }
inline uint32_t Pack16(int32_t v) { return (static_cast<uint32_t>(v) & 0xffffu) * 0x10001u; }

// Calls `lanes(a0..a3, b0..b3) -> 4 outputs` on offset-added halfword lanes, 4 elements a step.
template <typename Element>
void SameShapeLoop(const int8_t* in1, const int8_t* in2, int8_t* out, int64_t n, int32_t off1,
                   int32_t off2, Element element) {
  const uint32_t o1 = Pack16(off1), o2 = Pack16(off2);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    uint32_t w1, w2;
    __builtin_memcpy(&w1, in1 + i, 4);
    __builtin_memcpy(&w2, in2 + i, 4);
    const uint32_t a02 = Sadd16(Sxtb16(w1), o1), a13 = Sadd16(Sxtb16(Ror8(w1)), o1);
    const uint32_t b02 = Sadd16(Sxtb16(w2), o2), b13 = Sadd16(Sxtb16(Ror8(w2)), o2);
    int8_t r[4];
    r[0] = static_cast<int8_t>(element(Lo16(a02), Lo16(b02)));
    r[1] = static_cast<int8_t>(element(Lo16(a13), Lo16(b13)));
    r[2] = static_cast<int8_t>(element(Hi16(a02), Hi16(b02)));
    r[3] = static_cast<int8_t>(element(Hi16(a13), Hi16(b13)));
    __builtin_memcpy(out + i, r, 4);
  }
  for (; i < n; ++i) out[i] = static_cast<int8_t>(element(in1[i] + off1, in2[i] + off2));
}

}  // namespace

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
                [&q](int32_t a, int32_t b) { return AddSubElement<1>(q, a, b); });
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
                [&q](int32_t a, int32_t b) { return MulElement(q, a, b); });
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_DSP
