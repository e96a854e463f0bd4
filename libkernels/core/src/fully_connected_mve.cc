// FullyConnected, MVE (Helium) body: four weight rows per pass with VMLADAVA.S8 on raw int8
// lanes; offsets folded in exactly (mod 2^32) from the weight-row sums and the input sum:
// sum (w + wo)(x + xo) = sum wx + xo sum w + wo sum x + n wo xo.
// FullyConnected16x8: two weight rows per pass, int8 weights widened on load (plus the filter
// offset) against int16 inputs, VMLALDAVA.S16 into TFLite's int64 accumulator.
#include "fully_connected_internal.h"
#include "internal/mve_helpers.h"
#include "internal/mve_s16.h"
#include "internal/requantize.h"

#if MICA_KERNELS_BUILD_MVE

namespace mica {
namespace kernels {
namespace internal {

namespace {

// What the requantization of an output needs, copied out of p and q (the output stores could
// alias them): sum (w + wo)(x + xo) = dot + xo wsum + base (mod 2^32), base = wo xsum + n wo xo
// for the batch row. Output o's quantization parameters are entry o & channel_mask.
struct FcFinish {
  const int32_t* bias;
  const int32_t* mult;
  const int32_t* shift;
  int32_t xo, base, channel_mask, out_off, lo, hi;
};

template <int kMode>
inline int8_t FinishOne(const FcFinish& f, int32_t dot, int32_t wsum, int32_t o) {
  int32_t acc = mve::AddScaled(mve::AddScaled(dot, f.xo, wsum), 1, f.base);
  if (f.bias != nullptr) acc = mve::AddScaled(acc, 1, f.bias[o]);
  const int32_t c = o & f.channel_mask;
  return RequantInt8<kMode>(acc, f.mult[c], f.shift[c], f.out_off, f.lo, f.hi);
}

// dot and weight sum of two weight rows (w0, w1) against x, over depth.
struct Dot2 {
  int32_t d0, d1, s0, s1;
};
inline Dot2 DotRows2(const int8_t* x, const int8_t* w0, const int8_t* w1, int32_t depth) {
  int32_t d0 = 0, d1 = 0, s0 = 0, s1 = 0;
  for (int32_t i = depth >> 4; i > 0; --i) {
    const int8x16_t xv = vld1q_s8(x), a = vld1q_s8(w0), b = vld1q_s8(w1);
    d0 = vmladavaq_s8(d0, xv, a);
    d1 = vmladavaq_s8(d1, xv, b);
    s0 = vaddvaq_s8(s0, a);
    s1 = vaddvaq_s8(s1, b);
    x += 16, w0 += 16, w1 += 16;
  }
  if ((depth & 15) != 0) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(depth & 15));
    const int8x16_t xv = vldrbq_z_s8(x, pr), a = vldrbq_z_s8(w0, pr), b = vldrbq_z_s8(w1, pr);
    d0 = vmladavaq_s8(d0, xv, a);
    d1 = vmladavaq_s8(d1, xv, b);
    s0 = vaddvaq_s8(s0, a);
    s1 = vaddvaq_s8(s1, b);
  }
  return {d0, d1, s0, s1};
}

// Four weight rows from w0 (depth apart) against x, as two passes of two rows (four dot
// products and four weight sums at once would spill), and outputs o .. o + 3 requantized
// together in one vector: the same arithmetic as FinishOne lane by lane (VQRDMULH is the
// saturating rounding doubling high multiply; with every shift <= -1 the rounding fixup is -1
// on negative lanes, else MulQuantLanes' general form).
template <int kMode>
__attribute__((noinline)) void Rows4(const int8_t* x, const int8_t* w0, int32_t depth,
                                     const FcFinish& f, int32_t o, int8_t* out) {
  const Dot2 a = DotRows2(x, w0, w0 + depth, depth);
  const Dot2 b = DotRows2(x, w0 + 2 * depth, w0 + 3 * depth, depth);
  int32x4_t dot = vdupq_n_s32(a.d0);
  dot = vsetq_lane_s32(a.d1, dot, 1);
  dot = vsetq_lane_s32(b.d0, dot, 2);
  dot = vsetq_lane_s32(b.d1, dot, 3);
  int32x4_t wsum = vdupq_n_s32(a.s0);
  wsum = vsetq_lane_s32(a.s1, wsum, 1);
  wsum = vsetq_lane_s32(b.s0, wsum, 2);
  wsum = vsetq_lane_s32(b.s1, wsum, 3);
  int32x4_t acc = vaddq_n_s32(vmlaq_n_s32(dot, wsum, f.xo), f.base);  // wraps, as AddScaled
  if (f.bias != nullptr) acc = vaddq_s32(acc, vldrwq_s32(f.bias + o));
  const int32_t c = o & f.channel_mask;
  const int32x4_t m = f.channel_mask != 0 ? vldrwq_s32(f.mult + c) : vdupq_n_s32(f.mult[0]);
  const int32x4_t sh = f.channel_mask != 0 ? vldrwq_s32(f.shift + c) : vdupq_n_s32(f.shift[0]);
  if (kMode == kRequantGeneric) {
    acc = mve::MulQuantLanes(acc, m, sh);
  } else {
    acc = vqrdmulhq_s32(acc, m);
    acc = vrshlq_s32(vqaddq_s32(acc, vshrq_n_s32(acc, 31)), sh);
  }
  vstrbq_s32(out, mve::OffsetClamp(acc, f.out_off, f.lo, f.hi));  // low byte of each lane
}

// Two weight rows (w0 and w0 + depth, or w0 alone when !two) against x, and their outputs
// o, o + 1 requantized into out[0], out[1]; out of line, one call per pair, so the dot loop
// (two dot products, two weight sums, three pointers) and then the requantization each have
// the registers to themselves.
template <int kMode>
__attribute__((noinline)) void Rows2(const int8_t* x, const int8_t* w0, int32_t depth, bool two,
                                     const FcFinish& f, int32_t o, int8_t* out) {
  const Dot2 d = DotRows2(x, w0, two ? w0 + depth : w0, depth);
  out[0] = FinishOne<kMode>(f, d.d0, d.s0, o);
  if (two) out[1] = FinishOne<kMode>(f, d.d1, d.s1, o + 1);
}

// kMode: the call's RequantMode.
template <int kMode>
void FullyConnectedInt8(const FullyConnectedParams& p, const PerChannelRequant& q,
                        const int8_t* input, const int8_t* weights, const int32_t* bias,
                        int8_t* output) {
  const int32_t depth = p.input_depth, out_depth = p.output_depth;
  const int32_t wo = p.filter_offset;
  const int32_t nwx = mve::AddScaled(0, wo * p.input_offset, depth);
  FcFinish f{bias, q.multiplier, q.shift, p.input_offset, 0, p.per_channel ? -1 : 0,
             p.output_offset, p.activation.min, p.activation.max};
  for (int32_t b = 0; b < p.batches; ++b) {
    const int8_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    f.base = wo != 0 ? mve::AddScaled(nwx, wo, mve::SumS8(x, depth)) : nwx;
    int8_t* const out = output + static_cast<ptrdiff_t>(b) * out_depth;
    int32_t o = 0;
    for (; o + 4 <= out_depth; o += 4) {
      Rows4<kMode>(x, weights + static_cast<ptrdiff_t>(o) * depth, depth, f, o, out + o);
    }
    for (; o < out_depth; o += 2) {
      Rows2<kMode>(x, weights + static_cast<ptrdiff_t>(o) * depth, depth, o + 1 < out_depth, f,
                   o, out + o);
    }
  }
}

}  // namespace

KernelStatus FullyConnectedMve(const FullyConnectedParams& p, const PerChannelRequant& q,
                               const int8_t* input, const int8_t* weights, const int32_t* bias,
                               int8_t* output, Scratch scratch) {
  // No scratch (FullyConnectedScratchBytes is 0 for MVE).
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch, 0, false);
  if (st != KernelStatus::kOk) return st;
  // The filter offset widens each weight factor to at most 255 + 255 = 510 in magnitude; the
  // bound counts 128 per weight, so it takes four taps per input element.
  const bool bounded =
      BoundedRequantOk(int64_t{p.input_depth} * (p.filter_offset == 0 ? 1 : 4), p.input_offset,
                       bias, p.output_depth, q.shift, p.per_channel ? p.output_depth : 1);
  WithRequantMode(Requant8ModeOf(bounded, p.activation.min, p.activation.max), [&](auto mode) {
    FullyConnectedInt8<decltype(mode)::value>(p, q, input, weights, bias, output);
  });
  return KernelStatus::kOk;
}

namespace {

template <bool kOffset>
void FullyConnected16x8Rows(const FullyConnectedParams& p, const PerChannelRequant& q,
                            const int16_t* input, const int8_t* weights, const int64_t* bias,
                            int16_t* output) {
  // Parameters in locals: the output stores could alias p and q.
  const int32_t depth = p.input_depth, out_depth = p.output_depth;
  const int16_t w_off = static_cast<int16_t>(p.filter_offset);
  const int32_t lo = p.activation.min, hi = p.activation.max;
  const int32_t channel_mask = p.per_channel ? -1 : 0;
  const int32_t* const mult = q.multiplier;
  const int32_t* const shift = q.shift;
  const auto finish = [=](int64_t acc, int32_t o) {
    if (bias != nullptr) acc += bias[o];
    const int32_t c = o & channel_mask;
    return static_cast<int16_t>(Clamp(MultiplyByQuantizedMultiplier64(acc, mult[c], shift[c]),
                                      lo, hi));
  };
  for (int32_t b = 0; b < p.batches; ++b) {
    const int16_t* x = input + static_cast<ptrdiff_t>(b) * depth;
    int16_t* out = output + static_cast<ptrdiff_t>(b) * out_depth;
    int32_t o = 0;
    for (; o + 2 <= out_depth; o += 2) {
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      int64_t a0 = 0, a1 = 0;
      mve::DotS16S8x2<kOffset>(x, w0, w0 + depth, depth, w_off, &a0, &a1);
      out[o] = finish(a0, o);
      out[o + 1] = finish(a1, o + 1);
    }
    if (o < out_depth) {
      const int8_t* w0 = weights + static_cast<ptrdiff_t>(o) * depth;
      out[o] = finish(mve::DotS16S8<kOffset>(x, w0, depth, w_off, 0), o);
    }
  }
}

}  // namespace

KernelStatus FullyConnected16x8Mve(const FullyConnectedParams& p, const PerChannelRequant& q,
                                   const int16_t* input, const int8_t* weights,
                                   const int64_t* bias, int16_t* output, Scratch scratch) {
  const KernelStatus st = CheckFullyConnected(p, q, input, weights, output, scratch,
                                              FullyConnected16x8ScratchBytes(p, Isa::kMve), true);
  if (st != KernelStatus::kOk) return st;
  if (p.filter_offset != 0) {
    FullyConnected16x8Rows<true>(p, q, input, weights, bias, output);
  } else {
    FullyConnected16x8Rows<false>(p, q, input, weights, bias, output);
  }
  return KernelStatus::kOk;
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_BUILD_MVE
