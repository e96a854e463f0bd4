// SIMD32 helpers for the DSP bodies (Armv7E-M / Armv8-M DSP extension).
//
// On a target with the DSP extension these are the ACLE intrinsics (one instruction each); on
// the host (and on Arm targets without DSP, where the DSP bodies are not compiled) they are
// portable, bit-exact emulations, so the DSP bodies are tested on x86. Lane semantics
// (little-endian, lane 0 = bits 15:0):
//   Sxtb16(x)        {sext(x.b0), sext(x.b2)}
//   Sxtb16Ror8(x)    {sext(x.b1), sext(x.b3)}
//   Sxtab16(a, x)    {a.h0 + sext(x.b0), a.h1 + sext(x.b2)}           (each lane mod 2^16)
//   Sxtab16Ror8(a, x) {a.h0 + sext(x.b1), a.h1 + sext(x.b3)}          (each lane mod 2^16)
//   Smlad(x, y, acc) acc + x.h0*y.h0 + x.h1*y.h1                      (mod 2^32)
//   Smlald(x, y, acc) acc + x.h0*y.h0 + x.h1*y.h1                     (64-bit)
//   Smlabb(x, y, acc) acc + x.h0*y.h0;  Smlatt(x, y, acc) acc + x.h1*y.h1  (mod 2^32)
//   Pkhbt(a, b)      {a.h0, b.h0};  Pkhtb(a, b)  {b.h1, a.h1}
#ifndef MICA_KERNELS_INTERNAL_DSP_INTRINSICS_H_
#define MICA_KERNELS_INTERNAL_DSP_INTRINSICS_H_

#include <cstdint>

#include "internal/isa_config.h"

#if MICA_KERNELS_HAVE_DSP
#include <arm_acle.h>
#endif

namespace mica {
namespace kernels {
namespace internal {
namespace dsp {

// Unaligned little-endian loads/stores of packed lanes.
inline uint32_t Load32(const void* p) {
  uint32_t v;
  __builtin_memcpy(&v, p, sizeof(v));
  return v;
}
inline void Store32(void* p, uint32_t v) { __builtin_memcpy(p, &v, sizeof(v)); }

inline uint32_t Ror8(uint32_t x) { return (x >> 8) | (x << 24); }

// Packs two int16 into one word: lo in bits 15:0.
inline uint32_t Pack16(int32_t lo, int32_t hi) {
  return (static_cast<uint32_t>(lo) & 0xFFFFu) | (static_cast<uint32_t>(hi) << 16);
}

#if MICA_KERNELS_HAVE_DSP

inline uint32_t Sxtb16(uint32_t x) {
  return static_cast<uint32_t>(__sxtb16(static_cast<int32_t>(x)));
}
// The rotated forms as one instruction each: GCC does not fold a rotation into SXTB16 /
// SXTAB16 and would emit a separate ROR.
inline uint32_t Sxtb16Ror8(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
inline uint32_t Sxtab16(uint32_t a, uint32_t x) {
  return static_cast<uint32_t>(__sxtab16(static_cast<int32_t>(a), static_cast<int32_t>(x)));
}
inline uint32_t Sxtab16Ror8(uint32_t a, uint32_t x) {
  uint32_t r;
  __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(a), "r"(x));
  return r;
}
inline int32_t Smlad(uint32_t x, uint32_t y, int32_t acc) {
  return __smlad(static_cast<int32_t>(x), static_cast<int32_t>(y), acc);
}
inline int64_t Smlald(uint32_t x, uint32_t y, int64_t acc) {
  return __smlald(static_cast<int32_t>(x), static_cast<int32_t>(y), acc);
}
inline int32_t Smlabb(uint32_t x, uint32_t y, int32_t acc) {
  return __smlabb(static_cast<int32_t>(x), static_cast<int32_t>(y), acc);
}
inline int32_t Smlatt(uint32_t x, uint32_t y, int32_t acc) {
  return __smlatt(static_cast<int32_t>(x), static_cast<int32_t>(y), acc);
}

#else  // portable emulation

inline int32_t Lo16(uint32_t x) { return static_cast<int16_t>(x & 0xFFFFu); }
inline int32_t Hi16(uint32_t x) { return static_cast<int16_t>(x >> 16); }

inline uint32_t Sxtb16(uint32_t x) {
  return Pack16(static_cast<int8_t>(x & 0xFFu), static_cast<int8_t>((x >> 16) & 0xFFu));
}
inline uint32_t Sxtb16Ror8(uint32_t x) { return Sxtb16(Ror8(x)); }
inline uint32_t Sxtab16(uint32_t a, uint32_t x) {
  const uint32_t e = Sxtb16(x);
  return ((a + e) & 0xFFFFu) | (((a >> 16) + (e >> 16)) << 16);
}
inline uint32_t Sxtab16Ror8(uint32_t a, uint32_t x) { return Sxtab16(a, Ror8(x)); }
inline int32_t Smlad(uint32_t x, uint32_t y, int32_t acc) {
  const uint32_t sum = static_cast<uint32_t>(acc) +
                       static_cast<uint32_t>(Lo16(x) * Lo16(y)) +
                       static_cast<uint32_t>(Hi16(x) * Hi16(y));
  return static_cast<int32_t>(sum);
}
inline int64_t Smlald(uint32_t x, uint32_t y, int64_t acc) {
  return acc + static_cast<int64_t>(Lo16(x) * Lo16(y)) + static_cast<int64_t>(Hi16(x) * Hi16(y));
}
inline int32_t Smlabb(uint32_t x, uint32_t y, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) +
                              static_cast<uint32_t>(Lo16(x) * Lo16(y)));
}
inline int32_t Smlatt(uint32_t x, uint32_t y, int32_t acc) {
  return static_cast<int32_t>(static_cast<uint32_t>(acc) +
                              static_cast<uint32_t>(Hi16(x) * Hi16(y)));
}

#endif

inline uint32_t Pkhbt(uint32_t a, uint32_t b) { return (a & 0xFFFFu) | (b << 16); }
inline uint32_t Pkhtb(uint32_t a, uint32_t b) { return (a & 0xFFFF0000u) | (b >> 16); }

// Two int8 -> int16 lanes each, plus a per-lane offset: for x = {b0, b1, b2, b3},
// *even = {b0 + off, b2 + off}, *odd = {b1 + off, b3 + off}. `off2` = Pack16(off, off).
inline void Widen4(uint32_t x, uint32_t off2, uint32_t* even, uint32_t* odd) {
  *even = Sxtab16(off2, x);
  *odd = Sxtab16Ror8(off2, x);
}

// acc + dot(a[0..3], b[0..3]) for four int8 in each word (a widened with offset `off2`).
inline int32_t Dot4(uint32_t a, uint32_t b, uint32_t off2, int32_t acc) {
  uint32_t a_even, a_odd;
  Widen4(a, off2, &a_even, &a_odd);
  acc = Smlad(a_even, Sxtb16(b), acc);
  return Smlad(a_odd, Sxtb16Ror8(b), acc);
}

}  // namespace dsp
}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_INTERNAL_DSP_INTRINSICS_H_
