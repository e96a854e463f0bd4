// mica kernels — common types of the freestanding kernel core.
//
// The kernel core is freestanding C++17: no heap, exceptions, RTTI, iostream or Abseil, so the
// same sources build for the host and with arm-none-eabi-gcc for Cortex-M. Callers own all
// memory; a kernel that needs scratch says how much through its `...ScratchBytes()` function
// and receives it in a `Scratch`.
//
// Conventions (CMSIS-NN's): activations NHWC, conv filters OHWI, depthwise filters 1HW(C*M),
// fully-connected weights [out][in]. `input_offset = -input_zero_point`, `output_offset =
// output_zero_point`. Requantization multipliers are Q31 with a signed shift (shift > 0 is a
// left shift), computed the way TFLite's QuantizeMultiplier does, rounded as TFLite's default
// (double-rounding) reference kernels do.
//
//   mica::kernels::Scratch scratch{buf, mica::kernels::ConvScratchBytes(p, Isa::kScalar)};
//   if (mica::kernels::Conv(p, q, in, filter, bias, out, scratch) != KernelStatus::kOk) ...
#ifndef MICA_KERNELS_TYPES_H_
#define MICA_KERNELS_TYPES_H_

#include <cstddef>
#include <cstdint>

namespace mica {
namespace kernels {

// Result of a kernel call. Kernels validate arguments once up front; inner loops do not check.
enum class KernelStatus : uint8_t {
  kOk = 0,
  kArgError,  // inconsistent shapes or parameters, or scratch too small
  kNoImpl,    // no body for this combination (e.g. a variant not compiled in)
};

// Instruction-set variant of a kernel body.
enum class Isa : uint8_t {
  kScalar = 0,  // plain C++: any Cortex-M and the host
  kDsp = 1,     // Armv7E-M / Armv8-M DSP extension (SIMD32: SMLAD, SXTB16, ...)
  kMve = 2,     // M-profile Vector Extension (Helium), Cortex-M55/M85
};

// Returns "scalar", "dsp" or "mve".
constexpr const char* IsaName(Isa isa) {
  return isa == Isa::kScalar ? "scalar" : isa == Isa::kDsp ? "dsp" : "mve";
}

// Caller-provided scratch memory. `bytes` may exceed what the kernel needs.
struct Scratch {
  void* buf = nullptr;
  size_t bytes = 0;
};

// 4-D shape in NHWC order (n, h, w, c); lower-rank tensors use leading 1s.
struct Dims {
  int32_t n = 1, h = 1, w = 1, c = 1;
  constexpr int32_t elements() const { return n * h * w * c; }
};

// Shape of a tensor of rank <= kMaxRank, outermost dimension first (TFLite order). Used by
// the elementwise, data-movement and reduction kernels, which broadcast / permute over ranks.
constexpr int kMaxRank = 6;
struct Shape {
  int32_t rank = 0;
  int32_t dims[kMaxRank] = {1, 1, 1, 1, 1, 1};
  constexpr int64_t elements() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[i];
    return n;
  }
};

// Fixed-point requantization of one channel: real multiplier ~= multiplier * 2^(shift - 31).
struct Requant {
  int32_t multiplier = 0;
  int32_t shift = 0;
};

// Per-channel (one per output channel) or per-tensor (count == 1) requantization.
struct PerChannelRequant {
  const int32_t* multiplier = nullptr;
  const int32_t* shift = nullptr;
};

// Saturating clamp applied to outputs (fused activation already folded in).
struct ActivationRange {
  int32_t min = -128;
  int32_t max = 127;
};

// Padding of a spatial window, in elements.
struct Pad2D {
  int32_t h = 0, w = 0;
};

struct Stride2D {
  int32_t h = 1, w = 1;
};

struct Dilation2D {
  int32_t h = 1, w = 1;
};

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_TYPES_H_
