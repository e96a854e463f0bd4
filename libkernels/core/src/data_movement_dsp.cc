// TRANSPOSE / PAD, DSP body (Armv7E-M / Armv8-M mainline with DSP): the shared walkers with
// word-wide runs. Pad fills store the pad element replicated into a 32-bit word (two words a
// step, unaligned stores as these cores allow). A transpose whose gathered run has a contiguous
// input dim next to it (NHWC <-> NCHW) moves 4x4 int8 / 2x2 int16 tiles: word loads, a SIMD32
// transpose (PKHBT / PKHTB and byte masks), word stores; other strided runs gather four int8
// (two int16) elements into one word store. Contiguous runs shorter than 64 bytes are copied
// word by word inline, longer ones with memcpy as in the scalar body.
#include "data_movement_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/isa_config.h"

#if MICA_KERNELS_HAVE_DSP
#include <arm_acle.h>
#endif

#if MICA_KERNELS_BUILD_DSP

namespace mica {
namespace kernels {
namespace internal {
namespace {

// One instruction each on a DSP target (GCC does not form PKHBT / PKHTB or the rotated UXTB16
// from the equivalent C): Pkh{bt,tb} as dsp::Pkhbt / dsp::Pkhtb, Uxtb16(x) = x & 0x00FF00FF,
// Uxtb16Ror8(x) = (x >> 8) & 0x00FF00FF.
#if MICA_KERNELS_HAVE_DSP
inline uint32_t Pkhbt(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline uint32_t Pkhtb(uint32_t a, uint32_t b) {
  uint32_t r;
  __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
inline uint32_t Uxtb16(uint32_t x) { return __uxtb16(x); }
inline uint32_t Uxtb16Ror8(uint32_t x) {
  uint32_t r;
  __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}
#else
inline uint32_t Pkhbt(uint32_t a, uint32_t b) { return dsp::Pkhbt(a, b); }
inline uint32_t Pkhtb(uint32_t a, uint32_t b) { return dsp::Pkhtb(a, b); }
inline uint32_t Uxtb16(uint32_t x) { return x & 0x00FF00FFu; }
inline uint32_t Uxtb16Ror8(uint32_t x) { return (x >> 8) & 0x00FF00FFu; }
#endif

// 4x4 int8 transpose of the words w[0..3] (row k = w[k], bytes = columns): PKHBT / PKHTB pair
// the rows' half-words, UXTB16 (plain and rotated) and shifted ORRs interleave the bytes.
inline void Transpose4x4(const uint32_t w[4], uint32_t out[4]) {
  const uint32_t t0 = Pkhbt(w[0], w[2]), t1 = Pkhbt(w[1], w[3]);  // bytes 0, 1 of each row
  const uint32_t t2 = Pkhtb(w[2], w[0]), t3 = Pkhtb(w[3], w[1]);  // bytes 2, 3
  out[0] = Uxtb16(t0) | (Uxtb16(t1) << 8);
  out[1] = Uxtb16Ror8(t0) | (Uxtb16Ror8(t1) << 8);
  out[2] = Uxtb16(t2) | (Uxtb16(t3) << 8);
  out[3] = Uxtb16Ror8(t2) | (Uxtb16Ror8(t3) << 8);
}

struct DspRuns {
  static constexpr bool kGather2D = true;

  // Short runs (a transpose moving whole channel vectors) word by word, inline; long ones
  // through memcpy.
  static void Copy(char* dst, const char* src, size_t bytes) {
    if (bytes >= 64) {
      PortableRuns::Copy(dst, src, bytes);
      return;
    }
    for (; bytes >= 4; bytes -= 4, src += 4, dst += 4) dsp::Store32(dst, dsp::Load32(src));
    for (size_t i = 0; i < bytes; ++i) dst[i] = src[i];
  }

  // The pad element replicated into a word; two words a step.
  class Filler {
   public:
    Filler(const void* value, size_t eb) : eb_(eb) {
      if (eb == 1) {
        v_ = 0x01010101u * *static_cast<const uint8_t*>(value);
      } else if (eb == 2) {
        uint16_t h;
        __builtin_memcpy(&h, value, 2);
        v_ = dsp::Pkhbt(h, h);
      } else {
        __builtin_memcpy(&v_, value, 4);
      }
    }
    void operator()(char* dst, int64_t n) const {
      const uint32_t v = v_;
      size_t bytes = static_cast<size_t>(n) * eb_;
      for (; bytes >= 8; bytes -= 8, dst += 8) {
        dsp::Store32(dst, v);
        dsp::Store32(dst + 4, v);
      }
      if (bytes >= 4) {
        dsp::Store32(dst, v);
        dst += 4;
        bytes -= 4;
      }
      for (size_t i = 0; i < bytes; ++i) dst[i] = static_cast<char>(v >> (8 * i));
    }

   private:
    uint32_t v_;
    size_t eb_;
  };

  // rows x n block: int8 in 4x4 tiles (four word loads, Transpose4x4, four word stores), int16
  // in 2x2 tiles (two word loads, PKHBT / PKHTB, two word stores); edges element by element.
  static void Gather2D(char* dst, const char* src, int64_t stride, size_t eb, int32_t rows,
                       int32_t n) {
    const ptrdiff_t s = static_cast<ptrdiff_t>(stride * static_cast<int64_t>(eb));
    const ptrdiff_t row_bytes = static_cast<ptrdiff_t>(n) * static_cast<ptrdiff_t>(eb);
    const int32_t tile = eb == 1 ? 4 : 2;
    if (n < tile) {  // no whole tile (a channel shuffle): column by column
      Edge(dst, src, stride, eb, rows, n, row_bytes);
      return;
    }
    int32_t r = 0;
    for (; r + tile <= rows; r += tile) {
      const char* x = src + r * static_cast<ptrdiff_t>(eb);
      char* d = dst + r * row_bytes;
      int32_t i = 0;
      if (eb == 1) {
        for (; i + 4 <= n; i += 4, x += 4 * s) {
          const uint32_t w[4] = {dsp::Load32(x), dsp::Load32(x + s), dsp::Load32(x + 2 * s),
                                 dsp::Load32(x + 3 * s)};
          uint32_t o[4];
          Transpose4x4(w, o);
          dsp::Store32(d + i, o[0]);
          dsp::Store32(d + row_bytes + i, o[1]);
          dsp::Store32(d + 2 * row_bytes + i, o[2]);
          dsp::Store32(d + 3 * row_bytes + i, o[3]);
        }
      } else {
        for (; i + 2 <= n; i += 2, x += 2 * s) {
          const uint32_t w0 = dsp::Load32(x), w1 = dsp::Load32(x + s);
          dsp::Store32(d + 2 * i, Pkhbt(w0, w1));
          dsp::Store32(d + row_bytes + 2 * i, Pkhtb(w1, w0));
        }
      }
      if (i < n) {  // the tile rows' last columns
        Edge(d + i * static_cast<ptrdiff_t>(eb), x, stride, eb, tile, n - i, row_bytes);
      }
    }
    if (r < rows) {  // the last rows
      Edge(dst + r * row_bytes, src + r * static_cast<ptrdiff_t>(eb), stride, eb, rows - r, n,
           row_bytes);
    }
  }
  static void Edge(char* dst, const char* src, int64_t stride, size_t eb, int32_t rows,
                   int32_t n, ptrdiff_t dst_row) {
    if (eb == 1) {
      PortableRuns::Gather2DT<uint8_t>(dst, src, stride, rows, n, dst_row);
    } else {
      PortableRuns::Gather2DT<uint16_t>(dst, src, stride, rows, n, dst_row);
    }
  }

  static void Gather(char* dst, const char* src, int64_t stride, size_t eb, int32_t n) {
    if (eb == 4) {
      PortableRuns::GatherT<uint32_t>(dst, src, stride, n);
      return;
    }
    const int64_t step = stride * static_cast<int64_t>(eb);
    int32_t i = 0;
    if (eb == 1) {
      const uint8_t* s = reinterpret_cast<const uint8_t*>(src);
      for (; i + 4 <= n; i += 4, s += 4 * step) {
        const uint32_t w = s[0] | (uint32_t{s[step]} << 8) | (uint32_t{s[2 * step]} << 16) |
                           (uint32_t{s[3 * step]} << 24);
        dsp::Store32(dst + i, w);
      }
      PortableRuns::GatherT<uint8_t>(dst + i, reinterpret_cast<const char*>(s), stride, n - i);
    } else {
      const char* s = src;
      for (; i + 2 <= n; i += 2, s += 2 * step) {
        uint16_t a, b;
        __builtin_memcpy(&a, s, 2);
        __builtin_memcpy(&b, s + step, 2);
        dsp::Store32(dst + 2 * i, dsp::Pkhbt(a, b));
      }
      PortableRuns::GatherT<uint16_t>(dst + 2 * i, s, stride, n - i);
    }
  }
};

}  // namespace

KernelStatus TransposeDsp(const Shape& in_shape, const int32_t* perm, const void* input,
                          void* output, size_t eb) {
  return TransposeWith<DspRuns>(in_shape, perm, input, output, eb);
}

KernelStatus PadDsp(const PadParams& p, const Shape& in_shape, const void* input,
                    const void* pad_value, void* output, size_t eb) {
  return PadWith<DspRuns>(p, in_shape, input, pad_value, output, eb);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_DSP
