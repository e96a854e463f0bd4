// Private: the variant bodies of Conv/Conv16x8, their path predicates and argument check.
#ifndef MICA_KERNELS_CONV_INTERNAL_H_
#define MICA_KERNELS_CONV_INTERNAL_H_

#include <cstddef>
#include <cstdint>

#include "internal/checks.h"
#include "internal/isa_config.h"
#include "internal/window.h"
#include "mica/kernels/conv.h"

namespace mica {
namespace kernels {
namespace internal {

KernelStatus ConvScalar(const ConvParams& params, const PerChannelRequant& quant,
                        const int8_t* input, const int8_t* filter, const int32_t* bias,
                        int8_t* output, Scratch scratch);
KernelStatus ConvDsp(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch);
KernelStatus ConvMve(const ConvParams& params, const PerChannelRequant& quant,
                     const int8_t* input, const int8_t* filter, const int32_t* bias,
                     int8_t* output, Scratch scratch);

KernelStatus Conv16x8Scalar(const ConvParams& params, const PerChannelRequant& quant,
                            const int16_t* input, const int8_t* filter, const int64_t* bias,
                            int16_t* output, Scratch scratch);
KernelStatus Conv16x8Dsp(const ConvParams& params, const PerChannelRequant& quant,
                         const int16_t* input, const int8_t* filter, const int64_t* bias,
                         int16_t* output, Scratch scratch);
KernelStatus Conv16x8Mve(const ConvParams& params, const PerChannelRequant& quant,
                         const int16_t* input, const int8_t* filter, const int64_t* bias,
                         int16_t* output, Scratch scratch);

// The 16x8 SIMD bodies read each window row in place as one contiguous run: one group and
// dilation_w 1 (other calls use the scalar body).
inline bool Conv16x8IsRuns(const ConvParams& p) {
  return p.input.c == p.filter.c && p.dilation.w == 1;
}

// The scalar int8 body packs two pixels per int32 and multiplies with SMLAL (conv_scalar.cc)
// everywhere but Armv6-M (Thumb-1 only: no 32x32 -> 64-bit multiply-accumulate).
#if defined(__ARM_ARCH_ISA_THUMB) && __ARM_ARCH_ISA_THUMB < 2
#define MICA_CONV_SCALAR_PACKED 0
#else
#define MICA_CONV_SCALAR_PACKED 1
#endif

// The scalar loops without im2col (no scratch, no check): the fallback of SIMD bodies for
// cases they do not cover.
void ConvLoopsInt8(const ConvParams& params, const PerChannelRequant& quant, const int8_t* input,
                   const int8_t* filter, const int32_t* bias, int8_t* output);

// True for the 1x1, stride-1, unpadded, ungrouped case (a plain GEMM over pixels).
inline bool ConvIs1x1(const ConvParams& p) {
  return p.filter.h == 1 && p.filter.w == 1 && p.stride.h == 1 && p.stride.w == 1 &&
         p.padding.h == 0 && p.padding.w == 0 && p.input.c == p.filter.c &&
         p.input.h == p.output.h && p.input.w == p.output.w;
}

// The DSP body reads the input in place (no im2col scratch) for one group with kernel
// height 1 (not 1x1) and dilation_w 1: the 1xN path.
inline bool ConvDspIsDirect(const ConvParams& p) {
  return !ConvIs1x1(p) && p.filter.h == 1 && p.input.c == p.filter.c && p.dilation.w == 1;
}

// The DSP body's four-pixel path (interleaved int16 columns, four of them in scratch): one
// group, dilation_w 1 and k_c a multiple of 4, not the 1xN direct case.
inline bool ConvDspIsIm2Col4(const ConvParams& p) {
  return !ConvDspIsDirect(p) && p.input.c == p.filter.c && p.dilation.w == 1 &&
         p.filter.c % 4 == 0;
}

// The MVE body: int8 im2col of four pixels (1x1 reads the input in place) when the padding
// value -input_offset fits int8 and there is one group; else the scalar body.
inline bool ConvMveIsIm2Col(const ConvParams& p) {
  return p.input.c == p.filter.c && p.input_offset >= -127 && p.input_offset <= 128;
}

// Validates shapes, pointers, offsets, requantization and scratch; `wide` selects the 16x8
// rules (no offsets, int16 clamp). Cost: O(output channels).
KernelStatus CheckConv(const ConvParams& p, const PerChannelRequant& quant, const void* input,
                       const void* filter, void* output, const Scratch& scratch,
                       size_t scratch_needed, bool wide);

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_CONV_INTERNAL_H_
