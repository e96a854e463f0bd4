// TRANSPOSE / PAD, MVE (Helium) body: the shared walkers with vector runs. Copies and pad fills
// move 16 bytes per VLDRB / VSTRB (the fill a VDUP of the pad element), with one predicated
// tail; strided transpose runs are gathers (VLDRB / VLDRH / VLDRW with a vector of offsets
// i * stride): int8 in 16 byte lanes when 15 strides fit a byte offset, else 8 halfword or 4
// word lanes stored narrowed (VSTRB.16 / .32), int16 and int32 with element-scaled offsets.
// A gathered run of 2, 4 or 8 elements next to a contiguous input dim (a channel shuffle) is
// one gather stream over the whole block. int16 / int32 gathers need element-aligned
// buffers; misaligned ones use the portable runs.
#include <climits>

#include "data_movement_internal.h"
#include "internal/isa_config.h"

#if MICA_KERNELS_BUILD_MVE
#include <arm_mve.h>

namespace mica {
namespace kernels {
namespace internal {
namespace {

inline mve_pred16_t Tail8(uint32_t n) { return vctp8q(n); }

struct MveRuns {
  static void Copy(char* dst, const char* src, size_t bytes) {
    uint8_t* d = reinterpret_cast<uint8_t*>(dst);
    const uint8_t* s = reinterpret_cast<const uint8_t*>(src);
    for (size_t i = bytes >> 4; i > 0; --i, s += 16, d += 16) vst1q_u8(d, vld1q_u8(s));
    const uint32_t tail = static_cast<uint32_t>(bytes & 15);
    if (tail != 0) {
      const mve_pred16_t p = Tail8(tail);
      vstrbq_p_u8(d, vldrbq_z_u8(s, p), p);
    }
  }

  // The pad element replicated into a vector (VDUP); 16 bytes a store, a predicated tail.
  class Filler {
   public:
    Filler(const void* value, size_t eb) : eb_(eb) {
      uint32_t v;
      if (eb == 1) {
        v = 0x01010101u * *static_cast<const uint8_t*>(value);
      } else if (eb == 2) {
        uint16_t h;
        __builtin_memcpy(&h, value, 2);
        v = h | (uint32_t{h} << 16);
      } else {
        __builtin_memcpy(&v, value, 4);
      }
      v_ = v;
    }
    void operator()(char* dst, int64_t n) const {
      const uint8x16_t pattern = vreinterpretq_u8_u32(vdupq_n_u32(v_));
      uint8_t* d = reinterpret_cast<uint8_t*>(dst);
      const size_t bytes = static_cast<size_t>(n) * eb_;
      for (size_t i = bytes >> 4; i > 0; --i, d += 16) vst1q_u8(d, pattern);
      const uint32_t tail = static_cast<uint32_t>(bytes & 15);
      if (tail != 0) vstrbq_p_u8(d, pattern, Tail8(tail));
    }

   private:
    uint32_t v_;
    size_t eb_;
  };

  // rows x n block (dst[r * n + i] = src[i * stride + r]). For n = 2, 4 or 8 (a channel
  // shuffle, an NHWC -> NCHW of few pixels) the whole block is one gather stream: lane k of a
  // step reads offset (k % n) * stride + k / n, and each step advances the source by lanes / n
  // elements. Other blocks go row by row (Gather).
  static constexpr bool kGather2D = true;
  template <int kLog2N>
  static bool Block8(uint8_t* d, const uint8_t* s, uint32_t stride, int32_t total) {
    constexpr uint32_t n = 1u << kLog2N;
    if ((n - 1) * stride + 16 / n - 1 > 255) return false;
    const uint8x16_t k = vidupq_n_u8(0, 1);
    const uint8x16_t off = vaddq_u8(vmulq_n_u8(vandq_u8(k, vdupq_n_u8(n - 1)),
                                               static_cast<uint8_t>(stride)),
                                    vshrq_n_u8(k, kLog2N));
    for (int32_t i = total >> 4; i > 0; --i, s += 16 / n, d += 16) {
      vst1q_u8(d, vldrbq_gather_offset_u8(s, off));
    }
    if ((total & 15) != 0) {
      const mve_pred16_t p = vctp8q(static_cast<uint32_t>(total & 15));
      vstrbq_p_u8(d, vldrbq_gather_offset_z_u8(s, off, p), p);
    }
    return true;
  }
  template <int kLog2N>
  static bool Block16(uint16_t* d, const uint16_t* s, uint32_t stride, int32_t total) {
    constexpr uint32_t n = 1u << kLog2N;
    if ((n - 1) * stride + 8 / n - 1 > 65535) return false;
    const uint16x8_t k = vidupq_n_u16(0, 1);
    const uint16x8_t off = vaddq_u16(vmulq_n_u16(vandq_u16(k, vdupq_n_u16(n - 1)),
                                                 static_cast<uint16_t>(stride)),
                                     vshrq_n_u16(k, kLog2N));
    for (int32_t i = total >> 3; i > 0; --i, s += 8 / n, d += 8) {
      vst1q_u16(d, vldrhq_gather_shifted_offset_u16(s, off));
    }
    if ((total & 7) != 0) {
      const mve_pred16_t p = vctp16q(static_cast<uint32_t>(total & 7));
      vstrhq_p_u16(d, vldrhq_gather_shifted_offset_z_u16(s, off, p), p);
    }
    return true;
  }
  template <typename T, typename BlockFn2, typename BlockFn4, typename BlockFn8>
  static bool Block(char* dst, const char* src, int64_t stride, int32_t rows, int32_t n,
                    BlockFn2 b2, BlockFn4 b4, BlockFn8 b8) {
    if (stride > 65535 || int64_t{rows} * n > INT32_MAX) return false;
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    const uint32_t st = static_cast<uint32_t>(stride);
    const int32_t total = rows * n;
    return n == 2 ? b2(d, s, st, total) : n == 4 ? b4(d, s, st, total)
                                                 : n == 8 ? b8(d, s, st, total) : false;
  }
  static void Gather2D(char* dst, const char* src, int64_t stride, size_t eb, int32_t rows,
                       int32_t n) {
    const bool aligned =
        ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & (eb - 1)) == 0;
    if (aligned && eb == 1 &&
        Block<uint8_t>(dst, src, stride, rows, n, Block8<1>, Block8<2>, Block8<3>)) {
      return;
    }
    if (aligned && eb == 2 &&
        Block<uint16_t>(dst, src, stride, rows, n, Block16<1>, Block16<2>, Block16<3>)) {
      return;
    }
    const size_t row_bytes = static_cast<size_t>(n) * eb;
    for (int32_t r = 0; r < rows; ++r) {
      Gather(dst + r * row_bytes, src + r * static_cast<ptrdiff_t>(eb), stride, eb, n);
    }
  }

  static void Gather8(uint8_t* d, const uint8_t* s, uint32_t stride, int32_t n) {
    if (stride <= 17) {  // 15 * stride fits a byte offset
      const uint8x16_t off = vmulq_n_u8(vidupq_n_u8(0, 1), static_cast<uint8_t>(stride));
      for (int32_t i = n >> 4; i > 0; --i, s += 16 * stride, d += 16) {
        vst1q_u8(d, vldrbq_gather_offset_u8(s, off));
      }
      if ((n & 15) != 0) {
        const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n & 15));
        vstrbq_p_u8(d, vldrbq_gather_offset_z_u8(s, off, p), p);
      }
    } else if (stride <= 65535 / 7) {
      const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(stride));
      for (int32_t i = n >> 3; i > 0; --i, s += 8 * stride, d += 8) {
        vstrbq_u16(d, vldrbq_gather_offset_u16(s, off));
      }
      if ((n & 7) != 0) {
        const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n & 7));
        vstrbq_p_u16(d, vldrbq_gather_offset_z_u16(s, off, p), p);
      }
    } else {
      const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), stride);
      for (int32_t i = n >> 2; i > 0; --i, s += 4 * stride, d += 4) {
        vstrbq_u32(d, vldrbq_gather_offset_u32(s, off));
      }
      if ((n & 3) != 0) {
        const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n & 3));
        vstrbq_p_u32(d, vldrbq_gather_offset_z_u32(s, off, p), p);
      }
    }
  }

  static void Gather16(uint16_t* d, const uint16_t* s, uint32_t stride, int32_t n) {
    if (stride <= 65535 / 7) {
      const uint16x8_t off = vmulq_n_u16(vidupq_n_u16(0, 1), static_cast<uint16_t>(stride));
      for (int32_t i = n >> 3; i > 0; --i, s += 8 * stride, d += 8) {
        vst1q_u16(d, vldrhq_gather_shifted_offset_u16(s, off));
      }
      if ((n & 7) != 0) {
        const mve_pred16_t p = vctp16q(static_cast<uint32_t>(n & 7));
        vstrhq_p_u16(d, vldrhq_gather_shifted_offset_z_u16(s, off, p), p);
      }
    } else {
      const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), stride);
      for (int32_t i = n >> 2; i > 0; --i, s += 4 * stride, d += 4) {
        vstrhq_u32(d, vldrhq_gather_shifted_offset_u32(s, off));
      }
      if ((n & 3) != 0) {
        const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n & 3));
        vstrhq_p_u32(d, vldrhq_gather_shifted_offset_z_u32(s, off, p), p);
      }
    }
  }

  static void Gather32(uint32_t* d, const uint32_t* s, uint32_t stride, int32_t n) {
    const uint32x4_t off = vmulq_n_u32(vidupq_n_u32(0, 1), stride);
    for (int32_t i = n >> 2; i > 0; --i, s += 4 * stride, d += 4) {
      vst1q_u32(d, vldrwq_gather_shifted_offset_u32(s, off));
    }
    if ((n & 3) != 0) {
      const mve_pred16_t p = vctp32q(static_cast<uint32_t>(n & 3));
      vstrwq_p_u32(d, vldrwq_gather_shifted_offset_z_u32(s, off, p), p);
    }
  }

  static void Gather(char* dst, const char* src, int64_t stride, size_t eb, int32_t n) {
    // Offsets are 32-bit: 3 strides, in bytes, must fit.
    const bool aligned =
        ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) & (eb - 1)) == 0;
    if (stride > static_cast<int64_t>(UINT32_MAX / (4 * eb)) || !aligned) {
      PortableRuns::Gather(dst, src, stride, eb, n);
    } else if (eb == 1) {
      Gather8(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src),
              static_cast<uint32_t>(stride), n);
    } else if (eb == 2) {
      Gather16(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src),
               static_cast<uint32_t>(stride), n);
    } else {
      Gather32(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src),
               static_cast<uint32_t>(stride), n);
    }
  }
};

}  // namespace

KernelStatus TransposeMve(const Shape& in_shape, const int32_t* perm, const void* input,
                          void* output, size_t eb) {
  return TransposeWith<MveRuns>(in_shape, perm, input, output, eb);
}

KernelStatus PadMve(const PadParams& p, const Shape& in_shape, const void* input,
                    const void* pad_value, void* output, size_t eb) {
  return PadWith<MveRuns>(p, in_shape, input, pad_value, output, eb);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
