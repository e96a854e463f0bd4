// TRANSPOSE / PAD, DSP body (Armv7E-M / Armv8-M mainline with DSP): the shared walkers with
// word-wide runs. Pad fills store the pad element replicated into a 32-bit word (two words a
// step, unaligned stores as these cores allow); strided transpose runs gather four int8 (two
// int16) elements into one word, packed with shifts (PKHBT for int16), and store it once.
// Contiguous runs are copied with memcpy as in the scalar body.
#include "data_movement_internal.h"
#include "internal/dsp_intrinsics.h"
#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_DSP

namespace mica {
namespace kernels {
namespace internal {
namespace {

struct DspRuns {
  static void Copy(char* dst, const char* src, size_t bytes) {
    PortableRuns::Copy(dst, src, bytes);
  }

  static void Fill(char* dst, const void* value, size_t eb, int64_t n) {
    uint32_t v;
    if (eb == 1) {
      v = 0x01010101u * *static_cast<const uint8_t*>(value);
    } else if (eb == 2) {
      uint16_t h;
      __builtin_memcpy(&h, value, 2);
      v = dsp::Pkhbt(h, h);
    } else {
      __builtin_memcpy(&v, value, 4);
    }
    int64_t bytes = n * static_cast<int64_t>(eb);
    for (; bytes >= 8; bytes -= 8, dst += 8) {
      dsp::Store32(dst, v);
      dsp::Store32(dst + 4, v);
    }
    if (bytes >= 4) {
      dsp::Store32(dst, v);
      dst += 4;
      bytes -= 4;
    }
    for (int64_t i = 0; i < bytes; ++i) dst[i] = static_cast<char>(v >> (8 * i));
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
