#include "mica/device/runtime.h"

#include "mica/kernels/activations.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/data_movement.h"
#include "mica/kernels/pooling.h"
#include "mica/kernels/quantize.h"
#include "mica/kernels/reduce.h"
#include "mica/kernels/softmax.h"
#include "mica/kernels/svdf.h"
#include "mica/kernels/transpose_conv.h"

namespace mica {
namespace device {

using kernels::KernelStatus;

namespace {

// No <cstring> in the freestanding set: small byte loops (the plan is read in place).
void Fill(uint8_t* p, uint8_t v, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) p[i] = v;
}
void Move(uint8_t* dst, const uint8_t* src, uint32_t n) {
  if (dst == src || n == 0) return;
  if (dst < src) {
    for (uint32_t i = 0; i < n; ++i) dst[i] = src[i];
  } else {
    for (uint32_t i = n; i-- > 0;) dst[i] = src[i];
  }
}

bool InRange(uint64_t offset, uint64_t bytes, uint64_t limit) {
  return offset <= limit && bytes <= limit - offset;
}

bool Aligned(const void* p, uintptr_t a) { return (reinterpret_cast<uintptr_t>(p) % a) == 0; }

uint32_t ElemBytes(uint8_t dtype) {
  switch (static_cast<PlanDType>(dtype)) {
    case PlanDType::kInt16: return 2;
    case PlanDType::kInt32: case PlanDType::kFloat32: return 4;
    case PlanDType::kInt64: return 8;
    default: return 1;
  }
}

// An op's decoded lists (valid after VerifyPlan).
struct OpView {
  const int32_t* t = nullptr;
  const uint32_t* arrays = nullptr;
  const uint8_t* params = nullptr;
  const uint8_t* array(const Plan& p, int i) const { return p.base + arrays[2 * i]; }
  uint32_t array_bytes(int i) const { return arrays[2 * i + 1]; }
};

OpView ViewOf(const Plan& p, const OpRecord& r) {
  OpView v;
  v.t = reinterpret_cast<const int32_t*>(p.base + r.list_offset);
  v.arrays = reinterpret_cast<const uint32_t*>(p.base + r.list_offset + 4u * r.num_tensors);
  v.params = p.base + r.params_offset;
  return v;
}

template <typename T>
const T& ParamsOf(const OpView& v) {
  return *reinterpret_cast<const T*>(v.params);
}

// ---- per-op verification ---------------------------------------------------------------

// The integer pairs kernels::Requantize has (TFLite Micro's QUANTIZE): an index, or -1.
int RequantizeKind(PlanDType in, PlanDType out) {
  using D = PlanDType;
  static constexpr D kPairs[][2] = {
      {D::kInt8, D::kInt8},   {D::kInt8, D::kUInt8},   {D::kInt8, D::kInt16},
      {D::kInt8, D::kInt32},  {D::kUInt8, D::kInt8},   {D::kInt16, D::kInt8},
      {D::kInt16, D::kInt16}, {D::kInt16, D::kInt32},  {D::kInt32, D::kInt8},
      {D::kInt32, D::kInt16}};
  for (int i = 0; i < static_cast<int>(sizeof(kPairs) / sizeof(kPairs[0])); ++i) {
    if (kPairs[i][0] == in && kPairs[i][1] == out) return i;
  }
  return -1;
}

struct Checker {
  const Plan& p;
  const OpRecord& r;
  OpView v;

  // Tensor operand `i` exists with dtype `dt` and at least `elements` elements; outputs must
  // live in the arena.
  bool Tensor(int i, PlanDType dt, int64_t elements, bool output = false) const {
    if (i >= r.num_tensors) return false;
    const int32_t id = v.t[i];
    if (id < 0 || static_cast<uint32_t>(id) >= p.header->num_tensors) return false;
    const TensorRecord& t = p.tensors[id];
    if (t.loc == static_cast<uint8_t>(TensorLoc::kNone)) return false;
    if (output && t.loc == static_cast<uint8_t>(TensorLoc::kConst)) return false;
    if (t.dtype != static_cast<uint8_t>(dt) || elements < 0) return false;
    return static_cast<uint64_t>(elements) * ElemBytes(t.dtype) <= t.bytes;
  }
  bool OptionalTensor(int i, PlanDType dt, int64_t elements) const {
    if (i < r.num_tensors && v.t[i] < 0) return true;
    return Tensor(i, dt, elements);
  }
  bool Array(int i, uint32_t bytes) const { return i < r.num_arrays && v.array_bytes(i) >= bytes; }
  bool Counts(int tensors, int arrays) const {
    return r.num_tensors == tensors && r.num_arrays == arrays;
  }
  template <typename T>
  bool Params() const { return r.params_bytes == sizeof(T); }
};

// Positive dimensions whose product stays below 2^31 (each factor is below 2^31, so every
// partial product that passed the test times the next one fits int64).
bool DimsOk(const kernels::Dims& d) {
  if (d.n <= 0 || d.h <= 0 || d.w <= 0 || d.c <= 0) return false;
  constexpr int64_t kLimit = int64_t{1} << 31;
  int64_t n = d.n;
  const int32_t rest[] = {d.h, d.w, d.c};
  for (int32_t f : rest) {
    n *= f;
    if (n >= kLimit) return false;
  }
  return true;
}
int64_t Elems(const kernels::Dims& d) { return static_cast<int64_t>(d.n) * d.h * d.w * d.c; }
// Positive dimensions whose product stays below 2^31 (checked as it grows: no overflow).
bool ShapeOk(const kernels::Shape& s) {
  if (s.rank < 0 || s.rank > kernels::kMaxRank) return false;
  int64_t n = 1;
  for (int i = 0; i < s.rank; ++i) {
    if (s.dims[i] <= 0) return false;
    n *= s.dims[i];
    if (n >= (int64_t{1} << 31)) return false;
  }
  return true;
}
// Offsets (zero points) of elementwise parameters: far inside int32, so that adding one to an
// int16 value or a requantized int32 never overflows.
bool OffsetOk(int32_t v) { return v >= -65536 && v <= 65536; }
bool RequantOk(const kernels::Requant& r) {
  return r.multiplier >= 0 && r.shift >= -31 && r.shift <= 31;
}

// How a conv-like op's filter holds its output channels, for the accumulator bound.
struct FilterLayout {
  int32_t channels;       // output channels (accumulators)
  bool channel_inner;     // depthwise [1, H, W, C]; otherwise [O, ...]
  int32_t weight_offset;  // added to every weight (fully connected's filter offset)
  int32_t quant_channels; // multiplier/shift entries (1 for per-tensor fully connected)
};

// The int8 kernels accumulate in int32 as TFLite Micro's do: bias + sum over the taps of
// (input + input_offset) x weight, |input + input_offset| <= 256. As the host lowering refuses
// (runtime conv_like.cc), a plan is refused when a channel's worst case, 256 x sum |weight| +
// |bias|, leaves int32 or its requantized value (x multiplier x 2^(shift - 31)) passes 2^30.
// The filter and bias must be constants (a run-time bias could hold anything).
bool AccumulatorsOk(const Checker& c, const FilterLayout& f, int64_t filter_elems) {
  const TensorRecord& ft = c.p.tensors[c.v.t[1]];
  const int8_t* w = ft.loc == uint8_t(TensorLoc::kConst)
                        ? reinterpret_cast<const int8_t*>(c.p.base + ft.offset)
                        : nullptr;
  const int32_t* bias = nullptr;
  if (c.v.t[2] >= 0) {
    const TensorRecord& bt = c.p.tensors[c.v.t[2]];
    if (bt.loc != uint8_t(TensorLoc::kConst)) return false;
    bias = reinterpret_cast<const int32_t*>(c.p.base + bt.offset);
  }
  if (f.channels <= 0 || filter_elems % f.channels != 0) return false;
  const int64_t taps = filter_elems / f.channels;
  const int32_t* mult = reinterpret_cast<const int32_t*>(c.v.array(c.p, 0));
  const int32_t* shift = reinterpret_cast<const int32_t*>(c.v.array(c.p, 1));
  for (int32_t ch = 0; ch < f.channels; ++ch) {
    int64_t sum = 0;
    if (w == nullptr) {
      sum = taps * (128 + (f.weight_offset < 0 ? -f.weight_offset : f.weight_offset));
    } else {
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t i = f.channel_inner ? k * f.channels + ch : int64_t{ch} * taps + k;
        const int64_t v = int64_t{w[i]} + f.weight_offset;
        sum += v < 0 ? -v : v;
        if (sum > (int64_t{1} << 31)) return false;
      }
    }
    int64_t bound = 256 * sum;
    if (bias != nullptr) bound += bias[ch] < 0 ? -int64_t{bias[ch]} : int64_t{bias[ch]};
    if (bound > 2147483647) return false;
    const int32_t q = f.quant_channels == 1 ? 0 : ch;
    if (mult[q] < 0 || shift[q] < -31 || shift[q] > 31) return false;
    // bound x mult x 2^(shift - 31) <= 2^30  <=>  bound x mult <= 2^(61 - shift).
    const uint64_t prod = static_cast<uint64_t>(bound) * static_cast<uint64_t>(mult[q]);
    const int e = 61 - shift[q];
    if (e < 62 && prod > (uint64_t{1} << e)) return false;
  }
  return true;
}

template <typename P>
bool CheckConvLike(const Checker& c, const FilterLayout& f, int64_t filter_elems,
                   const kernels::Dims& in, const kernels::Dims& out, bool i16) {
  const PlanDType act = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
  const uint32_t q = 4u * static_cast<uint32_t>(f.quant_channels);
  if (!c.Counts(4, i16 ? 3 : 2) || !c.Array(0, q) || !c.Array(1, q)) return false;
  if (!c.Tensor(0, act, Elems(in)) || !c.Tensor(1, PlanDType::kInt8, filter_elems) ||
      !c.Tensor(3, act, Elems(out), true)) {
    return false;
  }
  if (i16) {
    // int64 accumulation: |bias| <= 2^40 and at most 2^24 filter elements keep every product
    // with a Q31 multiplier below 2^63 (the host lowering's rule).
    if (c.v.t[2] >= 0 || filter_elems > (int64_t{1} << 24)) return false;
    if (c.v.array_bytes(2) == 0) return true;
    if (!c.Array(2, 8u * f.quant_channels)) return false;
    const int64_t* b = reinterpret_cast<const int64_t*>(c.v.array(c.p, 2));
    for (int32_t ch = 0; ch < f.quant_channels; ++ch) {
      if (b[ch] > (int64_t{1} << 40) || b[ch] < -(int64_t{1} << 40)) return false;
    }
    return true;
  }
  return c.OptionalTensor(2, PlanDType::kInt32, f.channels) && AccumulatorsOk(c, f, filter_elems);
}

// Window geometry small enough that no index the kernels compute in int32 (output position x
// stride - padding + tap x dilation, and the image size) can overflow: every field in
// [0, 2^16] (strides and dilations >= 1) and the farthest reach below 2^30.
bool WindowOk(const kernels::Dims& in, const kernels::Dims& out, int32_t fh, int32_t fw,
              int32_t sh, int32_t sw, int32_t dh, int32_t dw, int32_t ph, int32_t pw) {
  constexpr int32_t kMax = 1 << 16;
  const int32_t positive[] = {fh, fw, sh, sw, dh, dw};
  for (int32_t v : positive) {
    if (v < 1 || v > kMax) return false;
  }
  if (ph < 0 || ph > kMax || pw < 0 || pw > kMax) return false;
  constexpr int64_t kReach = int64_t{1} << 30;
  const int64_t ry = int64_t{out.h} * sh + int64_t{fh} * dh + ph + in.h;
  const int64_t rx = int64_t{out.w} * sw + int64_t{fw} * dw + pw + in.w;
  const int64_t ty = int64_t{in.h} * sh + int64_t{fh} + ph + out.h;  // transpose conv
  const int64_t tx = int64_t{in.w} * sw + int64_t{fw} + pw + out.w;
  return ry < kReach && rx < kReach && ty < kReach && tx < kReach;
}

bool ConvOffsetsOk(int32_t input_offset, int32_t output_offset) {
  return input_offset >= -128 && input_offset <= 128 && OffsetOk(output_offset);
}

// Operand `i` of a byte-moving record: a tensor of at least `bytes` bytes (outputs not constant).
bool BytesOperand(const Checker& c, int i, uint64_t bytes, bool output) {
  if (i >= c.r.num_tensors) return false;
  const int32_t id = c.v.t[i];
  if (id < 0 || static_cast<uint32_t>(id) >= c.p.header->num_tensors) return false;
  const TensorRecord& t = c.p.tensors[id];
  if (t.loc == uint8_t(TensorLoc::kNone) || t.bytes < bytes) return false;
  return !(output && t.loc == uint8_t(TensorLoc::kConst));
}

// A unary record: UnaryOpParams<P>, input and output of `dt` with `count` elements, and the
// kernel parameters accepted by `ok`.
template <typename P, typename Ok>
bool CheckUnary(const Checker& c, PlanDType dt, Ok ok) {
  if (!c.Params<UnaryOpParams<P>>() || !c.Counts(2, 0)) return false;
  const auto& k = ParamsOf<UnaryOpParams<P>>(c.v);
  return k.count >= 0 && ok(k.p) && c.Tensor(0, dt, k.count) && c.Tensor(1, dt, k.count, true);
}

bool CheckOp(const Plan& p, const OpRecord& r) {
  const Checker c{p, r, ViewOf(p, r)};
  switch (static_cast<PlanOp>(r.code)) {
    case PlanOp::kConv:
    case PlanOp::kConv16x8: {
      if (!c.Params<kernels::ConvParams>()) return false;
      const auto& k = ParamsOf<kernels::ConvParams>(c.v);
      if (!DimsOk(k.input) || !DimsOk(k.filter) || !DimsOk(k.output)) return false;
      if (!WindowOk(k.input, k.output, k.filter.h, k.filter.w, k.stride.h, k.stride.w,
                    k.dilation.h, k.dilation.w, k.padding.h, k.padding.w)) {
        return false;
      }
      if (!ConvOffsetsOk(k.input_offset, k.output_offset)) return false;
      return CheckConvLike<kernels::ConvParams>(c, {k.output.c, false, 0, k.output.c},
                                                Elems(k.filter), k.input, k.output,
                                                r.code == uint16_t(PlanOp::kConv16x8));
    }
    case PlanOp::kDepthwiseConv:
    case PlanOp::kDepthwiseConv16x8: {
      if (!c.Params<kernels::DepthwiseConvParams>()) return false;
      const auto& k = ParamsOf<kernels::DepthwiseConvParams>(c.v);
      if (!DimsOk(k.input) || !DimsOk(k.filter) || !DimsOk(k.output)) return false;
      if (!WindowOk(k.input, k.output, k.filter.h, k.filter.w, k.stride.h, k.stride.w,
                    k.dilation.h, k.dilation.w, k.padding.h, k.padding.w) ||
          k.depth_multiplier < 1 || k.depth_multiplier > (1 << 16)) {
        return false;
      }
      if (!ConvOffsetsOk(k.input_offset, k.output_offset)) return false;
      return CheckConvLike<kernels::DepthwiseConvParams>(
          c, {k.output.c, true, 0, k.output.c}, Elems(k.filter), k.input, k.output,
          r.code == uint16_t(PlanOp::kDepthwiseConv16x8));
    }
    case PlanOp::kTransposeConv: {
      if (!c.Params<kernels::TransposeConvParams>()) return false;
      const auto& k = ParamsOf<kernels::TransposeConvParams>(c.v);
      if (!DimsOk(k.input) || !DimsOk(k.filter) || !DimsOk(k.output)) return false;
      if (!WindowOk(k.input, k.output, k.filter.h, k.filter.w, k.stride.h, k.stride.w, 1, 1,
                    k.padding.h, k.padding.w)) {
        return false;
      }
      if (!ConvOffsetsOk(k.input_offset, k.output_offset)) return false;
      return CheckConvLike<kernels::TransposeConvParams>(c, {k.output.c, false, 0, k.output.c},
                                                         Elems(k.filter), k.input, k.output,
                                                         false);
    }
    case PlanOp::kFullyConnected:
    case PlanOp::kFullyConnected16x8: {
      if (!c.Params<kernels::FullyConnectedParams>()) return false;
      // The bool is read through the struct only once its byte is known to be 0 or 1.
      const uint8_t per_channel_byte =
          c.v.params[offsetof(kernels::FullyConnectedParams, per_channel)];
      if (per_channel_byte > 1) return false;
      const auto& k = ParamsOf<kernels::FullyConnectedParams>(c.v);
      if (!ConvOffsetsOk(k.input_offset, k.output_offset) || k.filter_offset < -128 ||
          k.filter_offset > 128) {
        return false;
      }
      if (k.batches <= 0 || k.input_depth <= 0 || k.output_depth <= 0) return false;
      const kernels::Dims in{k.batches, 1, 1, k.input_depth};
      const kernels::Dims out{k.batches, 1, 1, k.output_depth};
      if (!DimsOk(in) || !DimsOk(out)) return false;
      const int32_t channels = k.per_channel ? k.output_depth : 1;
      return CheckConvLike<kernels::FullyConnectedParams>(
          c, {k.output_depth, false, k.filter_offset, channels},
          static_cast<int64_t>(k.input_depth) * k.output_depth, in, out,
          r.code == uint16_t(PlanOp::kFullyConnected16x8));
    }
    case PlanOp::kMaxPool:
    case PlanOp::kAvgPool:
    case PlanOp::kMaxPool16:
    case PlanOp::kAvgPool16: {
      if (!c.Params<kernels::PoolParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<kernels::PoolParams>(c.v);
      if (!DimsOk(k.input) || !DimsOk(k.output)) return false;
      if (!WindowOk(k.input, k.output, k.filter_h, k.filter_w, k.stride.h, k.stride.w, 1, 1,
                    k.padding.h, k.padding.w)) {
        return false;
      }
      const bool i16 = r.code == uint16_t(PlanOp::kMaxPool16) ||
                       r.code == uint16_t(PlanOp::kAvgPool16);
      const PlanDType dt = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
      return c.Tensor(0, dt, Elems(k.input)) && c.Tensor(1, dt, Elems(k.output), true);
    }
    case PlanOp::kSoftmax: {
      if (!c.Params<SoftmaxOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<SoftmaxOpParams>(c.v);
      if (k.rows <= 0 || k.depth <= 0) return false;
      const int64_t n = static_cast<int64_t>(k.rows) * k.depth;
      return c.Tensor(0, PlanDType::kInt8, n) && c.Tensor(1, PlanDType::kInt8, n, true);
    }
    case PlanOp::kAdd:
    case PlanOp::kSub:
    case PlanOp::kAdd16:
    case PlanOp::kSub16:
    case PlanOp::kSquaredDifference:
    case PlanOp::kSquaredDifference16: {
      if (!c.Params<BinaryOpParams>() || !c.Counts(3, 0)) return false;
      const auto& k = ParamsOf<BinaryOpParams>(c.v);
      if (!ShapeOk(k.a) || !ShapeOk(k.b) || !ShapeOk(k.out)) return false;
      if (!OffsetOk(k.p.input1_offset) || !OffsetOk(k.p.input2_offset) ||
          !OffsetOk(k.p.output_offset)) {
        return false;
      }
      const bool i16 = r.code == uint16_t(PlanOp::kAdd16) || r.code == uint16_t(PlanOp::kSub16) ||
                       r.code == uint16_t(PlanOp::kSquaredDifference16);
      const PlanDType dt = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
      return c.Tensor(0, dt, k.a.elements()) && c.Tensor(1, dt, k.b.elements()) &&
             c.Tensor(2, dt, k.out.elements(), true);
    }
    case PlanOp::kLstm: {
      if (!c.Params<LstmOpParams>() || !c.Counts(16, 0)) return false;
      const auto& k = ParamsOf<LstmOpParams>(c.v);
      if (k.batch <= 0 || k.time_steps <= 0 || k.input_size <= 0 || k.state_size <= 0 ||
          int64_t{k.batch} * k.time_steps * (int64_t{k.input_size} + k.state_size) >=
              (int64_t{1} << 31)) {
        return false;
      }
      const int64_t bt = int64_t{k.batch} * k.time_steps;
      if (!c.Tensor(0, PlanDType::kInt8, bt * k.input_size) ||
          !c.Tensor(1, PlanDType::kInt8, int64_t{k.batch} * k.state_size, true) ||
          !c.Tensor(2, PlanDType::kInt16, int64_t{k.batch} * k.state_size, true) ||
          !c.Tensor(3, PlanDType::kInt8, bt * k.state_size, true)) {
        return false;
      }
      for (int g = 0; g < 4; ++g) {
        if (!c.Tensor(4 + 3 * g, PlanDType::kInt8, int64_t{k.state_size} * k.input_size) ||
            !c.Tensor(5 + 3 * g, PlanDType::kInt8, int64_t{k.state_size} * k.state_size) ||
            !c.OptionalTensor(6 + 3 * g, PlanDType::kInt32, k.state_size)) {
          return false;
        }
      }
      return true;
    }
    case PlanOp::kMul:
    case PlanOp::kMul16: {
      if (!c.Params<MulOpParams>() || !c.Counts(3, 0)) return false;
      const auto& k = ParamsOf<MulOpParams>(c.v);
      if (!ShapeOk(k.a) || !ShapeOk(k.b) || !ShapeOk(k.out)) return false;
      const bool i16 = r.code == uint16_t(PlanOp::kMul16);
      // int8: |value + offset| <= 383 each, a product below 2^18; int16 needs zero offsets
      // (TFLite's int16 MUL requires zero points 0) so the product stays in int32.
      const int32_t lim = i16 ? 0 : 256;
      if (k.p.input1_offset < -lim || k.p.input1_offset > lim || k.p.input2_offset < -lim ||
          k.p.input2_offset > lim || !OffsetOk(k.p.output_offset) || !RequantOk(k.p.output)) {
        return false;
      }
      const PlanDType dt = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
      return c.Tensor(0, dt, k.a.elements()) && c.Tensor(1, dt, k.b.elements()) &&
             c.Tensor(2, dt, k.out.elements(), true);
    }
    case PlanOp::kMinimum:
    case PlanOp::kMaximum:
    case PlanOp::kMinimum16:
    case PlanOp::kMaximum16: {
      if (!c.Params<MinMaxOpParams>() || !c.Counts(3, 0)) return false;
      const auto& k = ParamsOf<MinMaxOpParams>(c.v);
      if (!ShapeOk(k.a) || !ShapeOk(k.b) || !ShapeOk(k.out)) return false;
      const bool i16 = r.code == uint16_t(PlanOp::kMinimum16) ||
                       r.code == uint16_t(PlanOp::kMaximum16);
      const PlanDType dt = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
      return c.Tensor(0, dt, k.a.elements()) && c.Tensor(1, dt, k.b.elements()) &&
             c.Tensor(2, dt, k.out.elements(), true);
    }
    case PlanOp::kQuantize:
    case PlanOp::kDequantize: {
      if (!c.Params<AffineOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<AffineOpParams>(c.v);
      if (k.count < 0 || !(k.q.scale > 0.0f) || !(k.q.scale < 3.0e38f) ||
          !OffsetOk(k.q.zero_point)) {
        return false;
      }
      const bool quantize = r.code == uint16_t(PlanOp::kQuantize);
      const int qi = quantize ? 1 : 0;
      const int32_t id = c.v.t[qi];
      if (id < 0 || static_cast<uint32_t>(id) >= p.header->num_tensors) return false;
      const PlanDType qt = static_cast<PlanDType>(p.tensors[id].dtype);
      if (qt != PlanDType::kInt8 && qt != PlanDType::kInt16) return false;
      return c.Tensor(quantize ? 0 : 1, PlanDType::kFloat32, k.count, !quantize) &&
             c.Tensor(qi, qt, k.count, quantize);
    }
    case PlanOp::kRequantize: {
      if (!c.Params<RequantizeOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<RequantizeOpParams>(c.v);
      if (k.count < 0 || !RequantOk(k.p.output)) return false;
      PlanDType dt[2];
      for (int i = 0; i < 2; ++i) {
        const int32_t id = c.v.t[i];
        if (id < 0 || static_cast<uint32_t>(id) >= p.header->num_tensors) return false;
        dt[i] = static_cast<PlanDType>(p.tensors[id].dtype);
      }
      if (RequantizeKind(dt[0], dt[1]) < 0) return false;
      return c.Tensor(0, dt[0], k.count) && c.Tensor(1, dt[1], k.count, true);
    }
    case PlanOp::kPad: {
      if (!c.Params<PadOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<PadOpParams>(c.v);
      if (!ShapeOk(k.in)) return false;
      if (k.element_bytes != 1 && k.element_bytes != 2 && k.element_bytes != 4) return false;
      int64_t out = 1;
      for (int i = 0; i < k.in.rank; ++i) {
        if (k.p.before[i] < 0 || k.p.after[i] < 0) return false;
        const int64_t d = int64_t{k.in.dims[i]} + k.p.before[i] + k.p.after[i];
        out *= d;
        if (d >= (int64_t{1} << 31) || out >= (int64_t{1} << 31)) return false;
      }
      for (int i = 0; i < 2; ++i) {
        const int32_t id = c.v.t[i];
        if (id < 0 || static_cast<uint32_t>(id) >= p.header->num_tensors) return false;
        const TensorRecord& t = p.tensors[id];
        const uint64_t need = static_cast<uint64_t>(i == 0 ? k.in.elements() : out) *
                              k.element_bytes;
        if (t.loc == uint8_t(TensorLoc::kNone) || t.bytes < need) return false;
        if (i == 1 && t.loc == uint8_t(TensorLoc::kConst)) return false;
      }
      return true;
    }
    case PlanOp::kSvdf:
    case PlanOp::kSvdfInt8State: {
      if (!c.Params<kernels::SvdfParams>() || !c.Counts(6, 0)) return false;
      const auto& k = ParamsOf<kernels::SvdfParams>(c.v);
      if (k.batch <= 0 || k.input_size <= 0 || k.num_filters <= 0 || k.rank <= 0 ||
          k.memory_size <= 0 || k.num_filters % k.rank != 0 ||
          !OffsetOk(k.input_zero_point) || !OffsetOk(k.state_zero_point) ||
          !OffsetOk(k.output_zero_point) || !RequantOk(k.effective_scale_1) ||
          !RequantOk(k.effective_scale_2)) {
        return false;
      }
      const int64_t bf = int64_t{k.batch} * k.num_filters;
      if (bf * k.memory_size >= (int64_t{1} << 31) ||
          int64_t{k.num_filters} * k.input_size >= (int64_t{1} << 31) ||
          int64_t{k.batch} * k.input_size >= (int64_t{1} << 31) ||
          int64_t{k.num_filters} * k.memory_size >= (int64_t{1} << 31)) {
        return false;
      }
      const int32_t units = k.num_filters / k.rank;
      const PlanDType st = r.code == uint16_t(PlanOp::kSvdf) ? PlanDType::kInt16
                                                              : PlanDType::kInt8;
      return c.Tensor(0, PlanDType::kInt8, int64_t{k.batch} * k.input_size) &&
             c.Tensor(1, PlanDType::kInt8, int64_t{k.num_filters} * k.input_size) &&
             c.Tensor(2, st, int64_t{k.num_filters} * k.memory_size) &&
             c.OptionalTensor(3, PlanDType::kInt32, units) &&
             c.Tensor(4, st, bf * k.memory_size, true) &&
             c.Tensor(5, PlanDType::kInt8, int64_t{k.batch} * units, true) &&
             4 * (uint64_t(bf) + uint64_t(k.batch) * units) <= r.scratch_bytes;
    }
    case PlanOp::kSoftmaxInt8ToInt16: {
      if (!c.Params<SoftmaxOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<SoftmaxOpParams>(c.v);
      if (k.rows <= 0 || k.depth <= 0) return false;
      const int64_t n = static_cast<int64_t>(k.rows) * k.depth;
      return c.Tensor(0, PlanDType::kInt8, n) && c.Tensor(1, PlanDType::kInt16, n, true);
    }
    case PlanOp::kSoftmax16: {
      if (!c.Params<Softmax16OpParams>() || !c.Counts(2, 2)) return false;
      const auto& k = ParamsOf<Softmax16OpParams>(c.v);
      if (k.rows <= 0 || k.depth <= 0) return false;
      const uint32_t lut = 2u * kernels::kInt16LutSize;
      if (!c.Array(0, lut) || !c.Array(1, lut)) return false;
      const int64_t n = static_cast<int64_t>(k.rows) * k.depth;
      return c.Tensor(0, PlanDType::kInt16, n) && c.Tensor(1, PlanDType::kInt16, n, true);
    }
    case PlanOp::kPrelu: {
      if (!c.Params<PreluOpParams>() || !c.Counts(3, 0)) return false;
      const auto& k = ParamsOf<PreluOpParams>(c.v);
      if (!ShapeOk(k.in) || !ShapeOk(k.alpha) || !OffsetOk(k.p.input_offset) ||
          !OffsetOk(k.p.alpha_offset) || !OffsetOk(k.p.output_offset) ||
          k.p.input_offset < -256 || k.p.input_offset > 256 || k.p.alpha_offset < -256 ||
          k.p.alpha_offset > 256 || !RequantOk(k.p.output1) || !RequantOk(k.p.output2)) {
        return false;
      }
      return c.Tensor(0, PlanDType::kInt8, k.in.elements()) &&
             c.Tensor(1, PlanDType::kInt8, k.alpha.elements()) &&
             c.Tensor(2, PlanDType::kInt8, k.in.elements(), true);
    }
    case PlanOp::kConcatenation: {
      if (!c.Params<ConcatOpParams>() || r.num_arrays != 1) return false;
      const auto& k = ParamsOf<ConcatOpParams>(c.v);
      const uint32_t es = k.element_bytes;
      if (k.num_inputs < 1 || k.num_inputs > 16 || r.num_tensors != k.num_inputs + 1 ||
          (es != 1 && es != 2 && es != 4) || !ShapeOk(k.out) || k.axis < 0 ||
          k.axis >= k.out.rank ||
          !c.Array(0, static_cast<uint32_t>(k.num_inputs) * sizeof(kernels::Shape))) {
        return false;
      }
      const auto* shapes = reinterpret_cast<const kernels::Shape*>(c.v.array(p, 0));
      int64_t along = 0;
      for (int32_t i = 0; i < k.num_inputs; ++i) {
        const kernels::Shape& in = shapes[i];
        if (!ShapeOk(in) || in.rank != k.out.rank) return false;
        for (int d = 0; d < in.rank; ++d) {
          if (d != k.axis && in.dims[d] != k.out.dims[d]) return false;
        }
        along += in.dims[k.axis];
        if (!BytesOperand(c, i, static_cast<uint64_t>(in.elements()) * es, false)) return false;
      }
      return along == k.out.dims[k.axis] &&
             BytesOperand(c, k.num_inputs, static_cast<uint64_t>(k.out.elements()) * es, true);
    }
    case PlanOp::kTranspose: {
      if (!c.Params<TransposeOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<TransposeOpParams>(c.v);
      const uint32_t es = k.element_bytes;
      if (!ShapeOk(k.in) || (es != 1 && es != 2 && es != 4)) return false;
      bool used[kernels::kMaxRank] = {};
      for (int i = 0; i < k.in.rank; ++i) {
        if (k.perm[i] < 0 || k.perm[i] >= k.in.rank || used[k.perm[i]]) return false;
        used[k.perm[i]] = true;
      }
      const uint64_t bytes = static_cast<uint64_t>(k.in.elements()) * es;
      return BytesOperand(c, 0, bytes, false) && BytesOperand(c, 1, bytes, true);
    }
    case PlanOp::kStridedSlice: {
      if (!c.Params<StridedSliceOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<StridedSliceOpParams>(c.v);
      const uint32_t es = k.element_bytes;
      if (!ShapeOk(k.in) || !ShapeOk(k.out) || k.in.rank != k.out.rank ||
          (es != 1 && es != 2 && es != 4)) {
        return false;
      }
      // Small enough that the kernel's int32 count arithmetic cannot overflow (it checks the
      // indices against the input itself).
      constexpr int32_t kLim = 1 << 29;
      for (int d = 0; d < k.in.rank; ++d) {
        const int32_t st = k.p.stride[d];
        if (st == 0 || st > (1 << 16) || st < -(1 << 16) || k.p.start[d] > kLim ||
            k.p.start[d] < -kLim || k.p.stop[d] > kLim || k.p.stop[d] < -kLim) {
          return false;
        }
      }
      return BytesOperand(c, 0, static_cast<uint64_t>(k.in.elements()) * es, false) &&
             BytesOperand(c, 1, static_cast<uint64_t>(k.out.elements()) * es, true);
    }
    case PlanOp::kSplit: {
      if (!c.Params<SplitOpParams>() || r.num_arrays != 1) return false;
      const auto& k = ParamsOf<SplitOpParams>(c.v);
      const uint32_t es = k.element_bytes;
      if (k.num_outputs < 1 || k.num_outputs > 16 || r.num_tensors != k.num_outputs + 1 ||
          (es != 1 && es != 2 && es != 4) || !ShapeOk(k.in) || k.axis < 0 ||
          k.axis >= k.in.rank || !c.Array(0, 4u * static_cast<uint32_t>(k.num_outputs))) {
        return false;
      }
      const auto* sizes = reinterpret_cast<const int32_t*>(c.v.array(p, 0));
      const uint64_t slab = static_cast<uint64_t>(k.in.elements() / k.in.dims[k.axis]) * es;
      int64_t along = 0;
      for (int32_t i = 0; i < k.num_outputs; ++i) {
        if (sizes[i] <= 0 || sizes[i] > k.in.dims[k.axis]) return false;
        along += sizes[i];
        if (!BytesOperand(c, 1 + i, slab * static_cast<uint64_t>(sizes[i]), true)) return false;
      }
      return along == k.in.dims[k.axis] &&
             BytesOperand(c, 0, static_cast<uint64_t>(k.in.elements()) * es, false);
    }
    case PlanOp::kMean:
    case PlanOp::kMean16:
    case PlanOp::kSum:
    case PlanOp::kSum16:
    case PlanOp::kReduceMax:
    case PlanOp::kReduceMax16: {
      if (!c.Params<ReduceOpParams>() || !c.Counts(2, 0)) return false;
      const auto& k = ParamsOf<ReduceOpParams>(c.v);
      if (!ShapeOk(k.in) || k.axes.count < 0 || k.axes.count > kernels::kMaxRank ||
          !OffsetOk(k.p.input_zero_point) || !OffsetOk(k.p.output_zero_point) ||
          !RequantOk(k.p.output)) {
        return false;
      }
      bool reduced[kernels::kMaxRank] = {};
      for (int i = 0; i < k.axes.count; ++i) {
        if (k.axes.axis[i] < 0 || k.axes.axis[i] >= k.in.rank) return false;
        reduced[k.axes.axis[i]] = true;
      }
      int64_t out = 1;
      for (int d = 0; d < k.in.rank; ++d) {
        if (!reduced[d]) out *= k.in.dims[d];
      }
      const bool i16 = r.code == uint16_t(PlanOp::kMean16) || r.code == uint16_t(PlanOp::kSum16) ||
                       r.code == uint16_t(PlanOp::kReduceMax16);
      const PlanDType dt = i16 ? PlanDType::kInt16 : PlanDType::kInt8;
      return c.Tensor(0, dt, k.in.elements()) && c.Tensor(1, dt, out, true);
    }
    case PlanOp::kLogistic:
    case PlanOp::kTanh:
      return CheckUnary<kernels::LogisticParams>(c, PlanDType::kInt8, [](const auto& k) {
        return OffsetOk(k.input_zero_point) && k.input_multiplier >= 0 &&
               k.input_left_shift >= -31 && k.input_left_shift <= 31 &&
               k.input_range_radius >= 0;
      });
    case PlanOp::kLogistic16:
    case PlanOp::kTanh16:
      return CheckUnary<kernels::Logistic16Params>(c, PlanDType::kInt16, [](const auto& k) {
        return k.input_multiplier >= 0 && k.input_left_shift >= 0 && k.input_left_shift <= 31;
      });
    case PlanOp::kRelu:
    case PlanOp::kRelu16:
      return CheckUnary<kernels::ReluParams>(
          c, r.code == uint16_t(PlanOp::kRelu) ? PlanDType::kInt8 : PlanDType::kInt16,
          [](const auto& k) {
            return OffsetOk(k.input_zero_point) && OffsetOk(k.output_offset) &&
                   RequantOk(k.output);
          });
    case PlanOp::kClamp:
    case PlanOp::kClamp16:
      return CheckUnary<kernels::ActivationRange>(
          c, r.code == uint16_t(PlanOp::kClamp) ? PlanDType::kInt8 : PlanDType::kInt16,
          [](const auto&) { return true; });
    case PlanOp::kLeakyRelu:
    case PlanOp::kLeakyRelu16:
      return CheckUnary<kernels::LeakyReluParams>(
          c, r.code == uint16_t(PlanOp::kLeakyRelu) ? PlanDType::kInt8 : PlanDType::kInt16,
          [](const auto& k) {
            return OffsetOk(k.input_zero_point) && OffsetOk(k.output_zero_point) &&
                   RequantOk(k.identity) && RequantOk(k.alpha);
          });
    case PlanOp::kHardSwish:
      return CheckUnary<kernels::HardSwishParams>(c, PlanDType::kInt8, [](const auto& k) {
        return OffsetOk(k.input_zero_point) && OffsetOk(k.output_zero_point) &&
               k.reluish_multiplier_exponent >= -31 && k.reluish_multiplier_exponent <= 31 &&
               k.output_multiplier_exponent >= -31 && k.output_multiplier_exponent <= 0;
      });
    case PlanOp::kCopy: {
      if (!c.Params<CopyOpParams>() || !c.Counts(2, 0)) return false;
      const uint32_t n = ParamsOf<CopyOpParams>(c.v).bytes;
      for (int i = 0; i < 2; ++i) {
        const int32_t id = c.v.t[i];
        if (id < 0 || static_cast<uint32_t>(id) >= p.header->num_tensors) return false;
        const TensorRecord& t = p.tensors[id];
        if (t.loc == uint8_t(TensorLoc::kNone) || t.bytes < n) return false;
        if (i == 1 && t.loc == uint8_t(TensorLoc::kConst)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// ---- execution ---------------------------------------------------------------------------

struct Runner {
  const Plan& p;
  uint8_t* arena;
  kernels::Scratch scratch;

  template <typename T>
  T* T_(const OpView& v, int i) const {
    return v.t[i] < 0 ? nullptr : reinterpret_cast<T*>(TensorData(p, arena, v.t[i]));
  }
  kernels::PerChannelRequant Quant(const OpView& v) const {
    return {reinterpret_cast<const int32_t*>(v.array(p, 0)),
            reinterpret_cast<const int32_t*>(v.array(p, 1))};
  }
  const int64_t* Bias64(const OpView& v) const {
    return v.array_bytes(2) == 0 ? nullptr : reinterpret_cast<const int64_t*>(v.array(p, 2));
  }

  template <typename P, typename T>
  KernelStatus Unary(const OpView& v, KernelStatus (*fn)(const P&, int32_t, const T*, T*)) const {
    const auto& k = ParamsOf<UnaryOpParams<P>>(v);
    return fn(k.p, k.count, T_<const T>(v, 0), T_<T>(v, 1));
  }

  KernelStatus Run(const OpRecord& r) const {
    const OpView v = ViewOf(p, r);
    switch (static_cast<PlanOp>(r.code)) {
      case PlanOp::kConv:
        return kernels::Conv(ParamsOf<kernels::ConvParams>(v), Quant(v), T_<int8_t>(v, 0),
                             T_<int8_t>(v, 1), T_<int32_t>(v, 2), T_<int8_t>(v, 3), scratch);
      case PlanOp::kConv16x8:
        return kernels::Conv16x8(ParamsOf<kernels::ConvParams>(v), Quant(v), T_<int16_t>(v, 0),
                                 T_<int8_t>(v, 1), Bias64(v), T_<int16_t>(v, 3), scratch);
      case PlanOp::kDepthwiseConv:
        return kernels::DepthwiseConv(ParamsOf<kernels::DepthwiseConvParams>(v), Quant(v),
                                      T_<int8_t>(v, 0), T_<int8_t>(v, 1), T_<int32_t>(v, 2),
                                      T_<int8_t>(v, 3), scratch);
      case PlanOp::kDepthwiseConv16x8:
        return kernels::DepthwiseConv16x8(ParamsOf<kernels::DepthwiseConvParams>(v), Quant(v),
                                          T_<int16_t>(v, 0), T_<int8_t>(v, 1), Bias64(v),
                                          T_<int16_t>(v, 3), scratch);
      case PlanOp::kTransposeConv:
        return kernels::TransposeConv(ParamsOf<kernels::TransposeConvParams>(v), Quant(v),
                                      T_<int8_t>(v, 0), T_<int8_t>(v, 1), T_<int32_t>(v, 2),
                                      T_<int8_t>(v, 3), scratch);
      case PlanOp::kFullyConnected:
        return kernels::FullyConnected(ParamsOf<kernels::FullyConnectedParams>(v), Quant(v),
                                       T_<int8_t>(v, 0), T_<int8_t>(v, 1), T_<int32_t>(v, 2),
                                       T_<int8_t>(v, 3), scratch);
      case PlanOp::kFullyConnected16x8:
        return kernels::FullyConnected16x8(ParamsOf<kernels::FullyConnectedParams>(v), Quant(v),
                                           T_<int16_t>(v, 0), T_<int8_t>(v, 1), Bias64(v),
                                           T_<int16_t>(v, 3), scratch);
      case PlanOp::kMaxPool:
        return kernels::MaxPool(ParamsOf<kernels::PoolParams>(v), T_<int8_t>(v, 0),
                                T_<int8_t>(v, 1));
      case PlanOp::kAvgPool:
        return kernels::AvgPool(ParamsOf<kernels::PoolParams>(v), T_<int8_t>(v, 0),
                                T_<int8_t>(v, 1));
      case PlanOp::kMaxPool16:
        return kernels::MaxPool16(ParamsOf<kernels::PoolParams>(v), T_<int16_t>(v, 0),
                                  T_<int16_t>(v, 1));
      case PlanOp::kAvgPool16:
        return kernels::AvgPool16(ParamsOf<kernels::PoolParams>(v), T_<int16_t>(v, 0),
                                  T_<int16_t>(v, 1));
      case PlanOp::kSoftmax: {
        const auto& k = ParamsOf<SoftmaxOpParams>(v);
        return kernels::Softmax(k.p, k.rows, k.depth, T_<int8_t>(v, 0), T_<int8_t>(v, 1));
      }
      case PlanOp::kAdd: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::Add(k.p, k.a, T_<int8_t>(v, 0), k.b, T_<int8_t>(v, 1), k.out,
                            T_<int8_t>(v, 2));
      }
      case PlanOp::kSub: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::Sub(k.p, k.a, T_<int8_t>(v, 0), k.b, T_<int8_t>(v, 1), k.out,
                            T_<int8_t>(v, 2));
      }
      case PlanOp::kAdd16: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::Add16(k.p, k.a, T_<int16_t>(v, 0), k.b, T_<int16_t>(v, 1), k.out,
                              T_<int16_t>(v, 2));
      }
      case PlanOp::kSub16: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::Sub16(k.p, k.a, T_<int16_t>(v, 0), k.b, T_<int16_t>(v, 1), k.out,
                              T_<int16_t>(v, 2));
      }
      case PlanOp::kLstm: {
        const auto& k = ParamsOf<LstmOpParams>(v);
        kernels::LstmParams lp;
        lp.batch = k.batch;
        lp.time_steps = k.time_steps;
        lp.input_size = k.input_size;
        lp.state_size = k.state_size;
        lp.time_major = k.time_major != 0;
        lp.input_zero_point = k.input_zero_point;
        lp.hidden_zero_point = k.hidden_zero_point;
        kernels::LstmGateParams* gates[4] = {&lp.forget_gate, &lp.input_gate, &lp.cell_gate,
                                             &lp.output_gate};
        for (int g = 0; g < 4; ++g) {
          gates[g]->input_weights = T_<const int8_t>(v, 4 + 3 * g);
          gates[g]->recurrent_weights = T_<const int8_t>(v, 5 + 3 * g);
          gates[g]->bias = T_<const int32_t>(v, 6 + 3 * g);
          gates[g]->input_fc = k.gate_input_fc[g];
          gates[g]->recurrent_fc = k.gate_recurrent_fc[g];
        }
        lp.cell_gate_sigmoid = k.cell_gate_sigmoid != 0;
        lp.forget_cell_mul = k.forget_cell_mul;
        lp.input_cell_mul = k.input_cell_mul;
        lp.hidden_mul = k.hidden_mul;
        lp.cell_state_scale_power = k.cell_state_scale_power;
        lp.cell_clip_enabled = k.cell_clip_enabled != 0;
        lp.quantized_cell_clip = static_cast<int16_t>(k.quantized_cell_clip);
        return kernels::Lstm(lp, T_<int8_t>(v, 0), T_<int8_t>(v, 1), T_<int16_t>(v, 2),
                             T_<int8_t>(v, 3), scratch);
      }
      case PlanOp::kMul: {
        const auto& k = ParamsOf<MulOpParams>(v);
        return kernels::Mul(k.p, k.a, T_<int8_t>(v, 0), k.b, T_<int8_t>(v, 1), k.out,
                            T_<int8_t>(v, 2));
      }
      case PlanOp::kMul16: {
        const auto& k = ParamsOf<MulOpParams>(v);
        return kernels::Mul16(k.p, k.a, T_<int16_t>(v, 0), k.b, T_<int16_t>(v, 1), k.out,
                              T_<int16_t>(v, 2));
      }
      case PlanOp::kMinimum:
      case PlanOp::kMaximum: {
        const auto& k = ParamsOf<MinMaxOpParams>(v);
        auto fn = r.code == uint16_t(PlanOp::kMinimum) ? &kernels::Minimum : &kernels::Maximum;
        return fn(k.a, T_<int8_t>(v, 0), k.b, T_<int8_t>(v, 1), k.out, T_<int8_t>(v, 2));
      }
      case PlanOp::kMinimum16:
      case PlanOp::kMaximum16: {
        const auto& k = ParamsOf<MinMaxOpParams>(v);
        auto fn =
            r.code == uint16_t(PlanOp::kMinimum16) ? &kernels::Minimum16 : &kernels::Maximum16;
        return fn(k.a, T_<int16_t>(v, 0), k.b, T_<int16_t>(v, 1), k.out, T_<int16_t>(v, 2));
      }
      case PlanOp::kQuantize: {
        const auto& k = ParamsOf<AffineOpParams>(v);
        if (p.tensors[v.t[1]].dtype == uint8_t(PlanDType::kInt16)) {
          return kernels::Quantize16(k.q, k.count, T_<const float>(v, 0), T_<int16_t>(v, 1));
        }
        return kernels::Quantize(k.q, k.count, T_<const float>(v, 0), T_<int8_t>(v, 1));
      }
      case PlanOp::kDequantize: {
        const auto& k = ParamsOf<AffineOpParams>(v);
        if (p.tensors[v.t[0]].dtype == uint8_t(PlanDType::kInt16)) {
          return kernels::Dequantize16(k.q, k.count, T_<const int16_t>(v, 0), T_<float>(v, 1));
        }
        return kernels::Dequantize(k.q, k.count, T_<const int8_t>(v, 0), T_<float>(v, 1));
      }
      case PlanOp::kRequantize: {
        const auto& k = ParamsOf<RequantizeOpParams>(v);
        const auto in = static_cast<PlanDType>(p.tensors[v.t[0]].dtype);
        const auto out = static_cast<PlanDType>(p.tensors[v.t[1]].dtype);
        uint8_t* x = T_<uint8_t>(v, 0);
        uint8_t* y = T_<uint8_t>(v, 1);
        auto i8 = [](uint8_t* b) { return reinterpret_cast<int8_t*>(b); };
        auto i16 = [](uint8_t* b) { return reinterpret_cast<int16_t*>(b); };
        auto i32 = [](uint8_t* b) { return reinterpret_cast<int32_t*>(b); };
        switch (RequantizeKind(in, out)) {
          case 0: return kernels::Requantize(k.p, k.count, i8(x), i8(y));
          case 1: return kernels::Requantize(k.p, k.count, i8(x), y);
          case 2: return kernels::Requantize(k.p, k.count, i8(x), i16(y));
          case 3: return kernels::Requantize(k.p, k.count, i8(x), i32(y));
          case 4: return kernels::Requantize(k.p, k.count, static_cast<const uint8_t*>(x), i8(y));
          case 5: return kernels::Requantize(k.p, k.count, i16(x), i8(y));
          case 6: return kernels::Requantize(k.p, k.count, i16(x), i16(y));
          case 7: return kernels::Requantize(k.p, k.count, i16(x), i32(y));
          case 8: return kernels::Requantize(k.p, k.count, i32(x), i8(y));
          case 9: return kernels::Requantize(k.p, k.count, i32(x), i16(y));
          default: return KernelStatus::kArgError;
        }
      }
      case PlanOp::kPad: {
        const auto& k = ParamsOf<PadOpParams>(v);
        return kernels::Pad(k.p, k.in, T_<const uint8_t>(v, 0), k.value, T_<uint8_t>(v, 1),
                            k.element_bytes);
      }
      case PlanOp::kSvdf: {
        const auto& k = ParamsOf<kernels::SvdfParams>(v);
        return kernels::Svdf(k, T_<const int8_t>(v, 0), T_<const int8_t>(v, 1),
                             T_<const int16_t>(v, 2), T_<const int32_t>(v, 3), T_<int16_t>(v, 4),
                             T_<int8_t>(v, 5), scratch);
      }
      case PlanOp::kSvdfInt8State: {
        const auto& k = ParamsOf<kernels::SvdfParams>(v);
        return kernels::SvdfInt8State(k, T_<const int8_t>(v, 0), T_<const int8_t>(v, 1),
                                      T_<const int8_t>(v, 2), T_<const int32_t>(v, 3),
                                      T_<int8_t>(v, 4), T_<int8_t>(v, 5), scratch);
      }
      case PlanOp::kSoftmaxInt8ToInt16: {
        const auto& k = ParamsOf<SoftmaxOpParams>(v);
        return kernels::SoftmaxInt8ToInt16(k.p, k.rows, k.depth, T_<int8_t>(v, 0),
                                           T_<int16_t>(v, 1));
      }
      case PlanOp::kSoftmax16: {
        const auto& k = ParamsOf<Softmax16OpParams>(v);
        kernels::Softmax16Params sp;
        sp.input_multiplier = k.input_multiplier;
        sp.input_left_shift = k.input_left_shift;
        sp.exp_lut = reinterpret_cast<const int16_t*>(v.array(p, 0));
        sp.one_over_one_plus_x_lut = reinterpret_cast<const int16_t*>(v.array(p, 1));
        return kernels::Softmax16(sp, k.rows, k.depth, T_<int16_t>(v, 0), T_<int16_t>(v, 1));
      }
      case PlanOp::kSquaredDifference: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::SquaredDifference(k.p, k.a, T_<int8_t>(v, 0), k.b, T_<int8_t>(v, 1),
                                          k.out, T_<int8_t>(v, 2));
      }
      case PlanOp::kSquaredDifference16: {
        const auto& k = ParamsOf<BinaryOpParams>(v);
        return kernels::SquaredDifference16(k.p, k.a, T_<int16_t>(v, 0), k.b, T_<int16_t>(v, 1),
                                            k.out, T_<int16_t>(v, 2));
      }
      case PlanOp::kPrelu: {
        const auto& k = ParamsOf<PreluOpParams>(v);
        return kernels::Prelu(k.p, k.in, T_<const int8_t>(v, 0), k.alpha, T_<const int8_t>(v, 1),
                              T_<int8_t>(v, 2));
      }
      case PlanOp::kConcatenation: {
        const auto& k = ParamsOf<ConcatOpParams>(v);
        const void* ptrs[16];  // VerifyPlan: at most 16 inputs
        for (int32_t i = 0; i < k.num_inputs; ++i) ptrs[i] = T_<const uint8_t>(v, i);
        return kernels::Concatenation(k.axis, k.num_inputs,
                                      reinterpret_cast<const kernels::Shape*>(v.array(p, 0)),
                                      ptrs, k.out, T_<uint8_t>(v, k.num_inputs), k.element_bytes);
      }
      case PlanOp::kTranspose: {
        const auto& k = ParamsOf<TransposeOpParams>(v);
        return kernels::Transpose(k.in, k.perm, T_<const uint8_t>(v, 0), T_<uint8_t>(v, 1),
                                  k.element_bytes);
      }
      case PlanOp::kSplit: {
        const auto& k = ParamsOf<SplitOpParams>(v);
        void* outs[16];  // VerifyPlan: at most 16 outputs
        for (int32_t i = 0; i < k.num_outputs; ++i) outs[i] = T_<uint8_t>(v, 1 + i);
        return kernels::Split(k.axis, k.in, T_<const uint8_t>(v, 0), k.num_outputs,
                              reinterpret_cast<const int32_t*>(v.array(p, 0)), outs,
                              k.element_bytes);
      }
      case PlanOp::kStridedSlice: {
        const auto& k = ParamsOf<StridedSliceOpParams>(v);
        return kernels::StridedSlice(k.p, k.in, T_<const uint8_t>(v, 0), k.out,
                                     T_<uint8_t>(v, 1), k.element_bytes);
      }
      case PlanOp::kMean:
      case PlanOp::kSum:
      case PlanOp::kReduceMax: {
        const auto& k = ParamsOf<ReduceOpParams>(v);
        const int8_t* x = T_<const int8_t>(v, 0);
        int8_t* y = T_<int8_t>(v, 1);
        if (r.code == uint16_t(PlanOp::kMean)) return kernels::Mean(k.p, k.in, k.axes, x, y);
        if (r.code == uint16_t(PlanOp::kSum)) return kernels::Sum(k.p, k.in, k.axes, x, y);
        return kernels::ReduceMax(k.in, k.axes, x, y);
      }
      case PlanOp::kMean16:
      case PlanOp::kSum16:
      case PlanOp::kReduceMax16: {
        const auto& k = ParamsOf<ReduceOpParams>(v);
        const int16_t* x = T_<const int16_t>(v, 0);
        int16_t* y = T_<int16_t>(v, 1);
        if (r.code == uint16_t(PlanOp::kMean16)) return kernels::Mean16(k.p, k.in, k.axes, x, y);
        if (r.code == uint16_t(PlanOp::kSum16)) return kernels::Sum16(k.p, k.in, k.axes, x, y);
        return kernels::ReduceMax16(k.in, k.axes, x, y);
      }
      case PlanOp::kLogistic:
        return Unary<kernels::LogisticParams, int8_t>(v, &kernels::Logistic);
      case PlanOp::kTanh:
        return Unary<kernels::TanhParams, int8_t>(v, &kernels::Tanh);
      case PlanOp::kLogistic16:
        return Unary<kernels::Logistic16Params, int16_t>(v, &kernels::Logistic16);
      case PlanOp::kTanh16:
        return Unary<kernels::Tanh16Params, int16_t>(v, &kernels::Tanh16);
      case PlanOp::kRelu:
        return Unary<kernels::ReluParams, int8_t>(v, &kernels::Relu);
      case PlanOp::kRelu16:
        return Unary<kernels::ReluParams, int16_t>(v, &kernels::Relu16);
      case PlanOp::kClamp: {
        const auto& k = ParamsOf<UnaryOpParams<kernels::ActivationRange>>(v);
        return kernels::Clamp(k.p, k.count, T_<const int8_t>(v, 0), T_<int8_t>(v, 1));
      }
      case PlanOp::kClamp16: {
        const auto& k = ParamsOf<UnaryOpParams<kernels::ActivationRange>>(v);
        return kernels::Clamp16(k.p, k.count, T_<const int16_t>(v, 0), T_<int16_t>(v, 1));
      }
      case PlanOp::kLeakyRelu:
        return Unary<kernels::LeakyReluParams, int8_t>(v, &kernels::LeakyRelu);
      case PlanOp::kLeakyRelu16:
        return Unary<kernels::LeakyReluParams, int16_t>(v, &kernels::LeakyRelu16);
      case PlanOp::kHardSwish:
        return Unary<kernels::HardSwishParams, int8_t>(v, &kernels::HardSwish);
      case PlanOp::kCopy:
        Move(T_<uint8_t>(v, 1), T_<uint8_t>(v, 0), ParamsOf<CopyOpParams>(v).bytes);
        return KernelStatus::kOk;
      default:
        return KernelStatus::kNoImpl;
    }
  }
};

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= data[i];
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

const char* PlanOpName(uint16_t code) {
  switch (static_cast<PlanOp>(code)) {
    case PlanOp::kConv: return "CONV_2D";
    case PlanOp::kConv16x8: return "CONV_2D";
    case PlanOp::kDepthwiseConv: return "DEPTHWISE_CONV_2D";
    case PlanOp::kDepthwiseConv16x8: return "DEPTHWISE_CONV_2D";
    case PlanOp::kFullyConnected: return "FULLY_CONNECTED";
    case PlanOp::kFullyConnected16x8: return "FULLY_CONNECTED";
    case PlanOp::kTransposeConv: return "TRANSPOSE_CONV";
    case PlanOp::kMaxPool: case PlanOp::kMaxPool16: return "MAX_POOL_2D";
    case PlanOp::kAvgPool: case PlanOp::kAvgPool16: return "AVERAGE_POOL_2D";
    case PlanOp::kSoftmax: return "SOFTMAX";
    case PlanOp::kAdd: case PlanOp::kAdd16: return "ADD";
    case PlanOp::kSub: case PlanOp::kSub16: return "SUB";
    case PlanOp::kCopy: return "RESHAPE";
    case PlanOp::kLstm: return "UNIDIRECTIONAL_SEQUENCE_LSTM";
    case PlanOp::kMul: case PlanOp::kMul16: return "MUL";
    case PlanOp::kMinimum: case PlanOp::kMinimum16: return "MINIMUM";
    case PlanOp::kMaximum: case PlanOp::kMaximum16: return "MAXIMUM";
    case PlanOp::kQuantize: case PlanOp::kRequantize: return "QUANTIZE";
    case PlanOp::kDequantize: return "DEQUANTIZE";
    case PlanOp::kPad: return "PAD";
    case PlanOp::kSvdf: case PlanOp::kSvdfInt8State: return "SVDF";
    case PlanOp::kSoftmaxInt8ToInt16: case PlanOp::kSoftmax16: return "SOFTMAX";
    case PlanOp::kMean: case PlanOp::kMean16: return "MEAN";
    case PlanOp::kSum: case PlanOp::kSum16: return "SUM";
    case PlanOp::kReduceMax: case PlanOp::kReduceMax16: return "REDUCE_MAX";
    case PlanOp::kLogistic: case PlanOp::kLogistic16: return "LOGISTIC";
    case PlanOp::kTanh: case PlanOp::kTanh16: return "TANH";
    case PlanOp::kRelu: case PlanOp::kRelu16: return "RELU";
    case PlanOp::kClamp: case PlanOp::kClamp16: return "RELU6";
    case PlanOp::kLeakyRelu: case PlanOp::kLeakyRelu16: return "LEAKY_RELU";
    case PlanOp::kHardSwish: return "HARD_SWISH";
    case PlanOp::kSquaredDifference: case PlanOp::kSquaredDifference16:
      return "SQUARED_DIFFERENCE";
    case PlanOp::kPrelu: return "PRELU";
    case PlanOp::kConcatenation: return "CONCATENATION";
    case PlanOp::kTranspose: return "TRANSPOSE";
    case PlanOp::kStridedSlice: return "STRIDED_SLICE";
    case PlanOp::kSplit: return "SPLIT";
    default: return "?";
  }
}

const char* PlanStatusName(PlanStatus s) {
  switch (s) {
    case PlanStatus::kOk: return "ok";
    case PlanStatus::kTruncated: return "plan truncated or a section out of bounds";
    case PlanStatus::kBadMagic: return "not a mica plan (bad magic)";
    case PlanStatus::kBadVersion: return "unsupported plan version";
    case PlanStatus::kBadChecksum: return "plan checksum mismatch";
    case PlanStatus::kMisaligned: return "plan or arena not 16-byte aligned";
    case PlanStatus::kBadTensor: return "tensor record out of bounds";
    case PlanStatus::kBadOp: return "invalid operator record";
    case PlanStatus::kArenaTooSmall: return "arena too small for the plan";
    case PlanStatus::kKernelError: return "a kernel rejected its arguments";
  }
  return "?";
}

PlanStatus VerifyPlan(const void* data, size_t size, Plan* plan, uint32_t* where) {
  const uint8_t* base = static_cast<const uint8_t*>(data);
  if (base == nullptr || size < sizeof(PlanHeader)) return PlanStatus::kTruncated;
  if (!Aligned(base, kPlanAlign)) return PlanStatus::kMisaligned;
  const PlanHeader& h = *reinterpret_cast<const PlanHeader*>(base);
  if (h.magic != kPlanMagic) return PlanStatus::kBadMagic;
  if (h.version != kPlanVersion || h.header_bytes != sizeof(PlanHeader)) {
    return PlanStatus::kBadVersion;
  }
  if (h.total_bytes > size || h.total_bytes < sizeof(PlanHeader)) return PlanStatus::kTruncated;
  if (Crc32(base + 16, h.total_bytes - 16) != h.crc32) return PlanStatus::kBadChecksum;
  const uint64_t total = h.total_bytes;
  if (!InRange(h.tensors_offset, uint64_t{h.num_tensors} * sizeof(TensorRecord), total) ||
      !InRange(h.ops_offset, uint64_t{h.num_ops} * sizeof(OpRecord), total) ||
      !InRange(h.io_offset, (uint64_t{h.num_inputs} + h.num_outputs) * 4, total) ||
      !InRange(h.data_offset, h.data_bytes, total)) {
    return PlanStatus::kTruncated;
  }
  if (h.tensors_offset % 4 || h.ops_offset % 4 || h.io_offset % 4 || h.data_offset % kPlanAlign) {
    return PlanStatus::kMisaligned;
  }
  if (uint64_t{h.activation_bytes} > h.arena_bytes ||
      !InRange(h.scratch_offset, h.scratch_bytes, h.arena_bytes) ||
      h.scratch_offset % kPlanAlign) {
    return PlanStatus::kBadTensor;
  }
  Plan p;
  p.base = base;
  p.header = &h;
  p.tensors = reinterpret_cast<const TensorRecord*>(base + h.tensors_offset);
  p.ops = reinterpret_cast<const OpRecord*>(base + h.ops_offset);
  p.io = reinterpret_cast<const uint32_t*>(base + h.io_offset);
  for (uint32_t t = 0; t < h.num_tensors; ++t) {
    const TensorRecord& r = p.tensors[t];
    bool ok = r.dtype <= static_cast<uint8_t>(PlanDType::kOther);
    switch (static_cast<TensorLoc>(r.loc)) {
      case TensorLoc::kNone: break;
      case TensorLoc::kArena:
      case TensorLoc::kState:
        ok = ok && InRange(r.offset, r.bytes, h.arena_bytes) && r.offset % 8 == 0;
        break;
      case TensorLoc::kConst:
        ok = ok && r.offset >= h.data_offset &&
             InRange(r.offset, r.bytes, uint64_t{h.data_offset} + h.data_bytes) &&
             r.offset % 8 == 0;
        break;
      default: ok = false;
    }
    if (!ok) {
      if (where != nullptr) *where = t;
      return PlanStatus::kBadTensor;
    }
  }
  for (uint32_t i = 0; i < h.num_inputs + h.num_outputs; ++i) {
    const uint32_t t = p.io[i];
    const bool output = i >= h.num_inputs;
    if (t >= h.num_tensors || p.tensors[t].loc == uint8_t(TensorLoc::kNone) ||
        (output && p.tensors[t].loc == uint8_t(TensorLoc::kConst))) {
      if (where != nullptr) *where = t;
      return PlanStatus::kBadTensor;
    }
  }
  const uint64_t data_end = uint64_t{h.data_offset} + h.data_bytes;
  for (uint32_t i = 0; i < h.num_ops; ++i) {
    const OpRecord& r = p.ops[i];
    bool ok = r.params_offset >= h.data_offset && InRange(r.params_offset, r.params_bytes, data_end) &&
              r.params_offset % 4 == 0 && r.list_offset >= h.data_offset && r.list_offset % 4 == 0 &&
              InRange(r.list_offset, 4ull * r.num_tensors + 8ull * r.num_arrays, data_end) &&
              r.scratch_bytes <= h.scratch_bytes;
    if (ok) {
      const OpView v = ViewOf(p, r);
      for (int a = 0; a < r.num_arrays && ok; ++a) {
        ok = v.arrays[2 * a] >= h.data_offset && v.arrays[2 * a] % 8 == 0 &&
             InRange(v.arrays[2 * a], v.arrays[2 * a + 1], data_end);
      }
    }
    ok = ok && CheckOp(p, r);
    if (!ok) {
      if (where != nullptr) *where = i;
      return PlanStatus::kBadOp;
    }
  }
  *plan = p;
  return PlanStatus::kOk;
}

uint8_t* TensorData(const Plan& plan, uint8_t* arena, uint32_t t) {
  const TensorRecord& r = plan.tensors[t];
  switch (static_cast<TensorLoc>(r.loc)) {
    case TensorLoc::kArena:
    case TensorLoc::kState:
      return arena + r.offset;
    case TensorLoc::kConst:
      return const_cast<uint8_t*>(plan.base + r.offset);
    default:
      return nullptr;
  }
}

PlanStatus RunPlan(const Plan& plan, uint8_t* arena, size_t arena_bytes, const RunHooks* hooks,
                   uint32_t* failed_op) {
  const PlanHeader& h = *plan.header;
  if (arena == nullptr || !Aligned(arena, kPlanAlign)) return PlanStatus::kMisaligned;
  if (arena_bytes < h.arena_bytes) return PlanStatus::kArenaTooSmall;
  for (uint32_t t = 0; t < h.num_tensors; ++t) {
    const TensorRecord& r = plan.tensors[t];
    if (r.loc == uint8_t(TensorLoc::kState)) Fill(arena + r.offset, uint8_t(r.fill), r.bytes);
  }
  const Runner runner{plan, arena, kernels::Scratch{arena + h.scratch_offset, h.scratch_bytes}};
  for (uint32_t i = 0; i < h.num_ops; ++i) {
    const OpRecord& r = plan.ops[i];
    if (hooks != nullptr && hooks->before_op != nullptr) hooks->before_op(hooks->user, i, r);
    const KernelStatus s = runner.Run(r);
    if (hooks != nullptr && hooks->after_op != nullptr) hooks->after_op(hooks->user, i, r);
    if (s != KernelStatus::kOk) {
      if (failed_op != nullptr) *failed_op = i;
      return PlanStatus::kKernelError;
    }
  }
  return PlanStatus::kOk;
}

}  // namespace device
}  // namespace mica
