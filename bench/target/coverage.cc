// Coverage of the kernels CMSIS-NN has no anchor case for (MINIMUM / MAXIMUM, TRANSPOSE, PAD,
// the 16x8 conv, depthwise conv and fully connected): every body compiled into this build
// (the op's variant list: scalar, and dsp / mve where the CPU has them) runs on the target:
// random sweeps against the scalar body (`sweep` lines) and one MLPerf-like shape per op
// (`variant` lines; work: MACs for the conv-like ops, output elements otherwise). Line format:
// report.h; run.py checks them.
#include <stddef.h>
#include <stdint.h>

#include "mica/kernels/conv.h"
#include "mica/kernels/data_movement.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/isa.h"
#include "report.h"

namespace {

using namespace mica::kernels;
using bench_report::Selected;

constexpr size_t kBytes = 16 * 1024;
constexpr int32_t kMaxCh = 64;
constexpr uint32_t kMinSpan = 200000;

alignas(16) uint8_t g_a[kBytes];
alignas(16) uint8_t g_b[kBytes];
alignas(16) uint8_t g_ref[kBytes];
alignas(16) uint8_t g_out[kBytes];
alignas(16) int8_t g_w[2 * kBytes];
int64_t g_bias[kMaxCh];
int32_t g_mult[kMaxCh];
int32_t g_shift[kMaxCh];

volatile uint32_t* const kCounter = reinterpret_cast<volatile uint32_t*>(BENCH_COUNTER_ADDR);

// xorshift32: deterministic inputs and shapes.
uint32_t g_state = 0x2545F491u;
uint32_t Next() {
  g_state ^= g_state << 13;
  g_state ^= g_state >> 17;
  g_state ^= g_state << 5;
  return g_state;
}
int32_t Uniform(int32_t lo, int32_t hi) {
  return lo + static_cast<int32_t>(Next() % static_cast<uint32_t>(hi - lo + 1));
}
bool Chance(int percent) { return Uniform(0, 99) < percent; }
void FillBytes(void* p, size_t n) {
  uint8_t* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(Next() >> 24);
}
void Set(void* p, uint8_t v, size_t n) {
  uint8_t* b = static_cast<uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) b[i] = v;
}
bool Equal(const void* x, const void* y, size_t n) {
  const uint8_t* a = static_cast<const uint8_t*>(x);
  const uint8_t* b = static_cast<const uint8_t*>(y);
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}
// Per-channel requantization within the 16x8 rules (multiplier in [2^30, 2^31), shift <= 14).
void FillRequant16(int32_t n, int32_t shift_lo, int32_t shift_hi) {
  for (int32_t i = 0; i < n; ++i) {
    g_mult[i] = static_cast<int32_t>(0x40000000u + (Next() & 0x3FFFFFFFu));
    if (Chance(5)) g_mult[i] = static_cast<int32_t>(0x7FFF0000u + (Next() & 0xFFFFu));  // Q15 cap
    g_shift[i] = Uniform(shift_lo, shift_hi);
  }
}
void FillBias64(int32_t n, int32_t range) {
  for (int32_t i = 0; i < n; ++i) g_bias[i] = Uniform(-range, range);
}

// ---- one case of each op: a random draw (sweep) or a fixed shape (timing) -------------------
// A case fills the inputs once, then Run(fn, out) calls one body into `out`; out_bytes is what
// it writes.

struct MinMaxCase {
  Shape a, b, o;
  bool wide;
  size_t out_bytes() const { return static_cast<size_t>(o.elements()) * (wide ? 2 : 1); }
  void Fill() {
    FillBytes(g_a, static_cast<size_t>(a.elements()) * 2);
    FillBytes(g_b, static_cast<size_t>(b.elements()) * 2);
  }
  template <typename Fn>
  KernelStatus Run(Fn fn, void* out) const {
    using T = typename Param<Fn>::T;
    return fn(a, reinterpret_cast<const T*>(g_a), b, reinterpret_cast<const T*>(g_b), o,
              static_cast<T*>(out));
  }
  template <typename Fn>
  struct Param;
  template <typename T_>
  struct Param<KernelStatus (*)(const Shape&, const T_*, const Shape&, const T_*, const Shape&,
                                T_*)> {
    using T = T_;
  };
  void Draw(bool is_wide) {
    wide = is_wide;
    o.rank = Uniform(1, 4);
    int64_t n = 1;
    for (int i = 0; i < o.rank; ++i) {
      o.dims[i] = i + 1 == o.rank ? Uniform(1, 70) : Uniform(1, 5);
      n *= o.dims[i];
    }
    if (n * 2 > static_cast<int64_t>(kBytes)) o.dims[0] = 1;
    a = o;
    b = o;
    // Broadcast: some dims of one input (or a shorter rank, or a single element) held.
    const int mode = Uniform(0, 4);
    Shape& s = Chance(50) ? a : b;
    if (mode == 1) {
      s.rank = 0;
    } else if (mode >= 2) {
      for (int i = 0; i < s.rank; ++i) {
        if (Chance(40)) s.dims[i] = 1;
      }
      if (mode == 3 && s.rank > 1) {  // drop leading dims
        const int drop = Uniform(1, s.rank - 1);
        for (int i = 0; i + drop < s.rank; ++i) s.dims[i] = s.dims[i + drop];
        s.rank -= drop;
      }
    }
  }
};

struct Conv16Case {
  ConvParams p;
  bool with_bias;
  size_t out_bytes() const { return static_cast<size_t>(p.output.elements()) * 2; }
  void Fill() {
    FillBytes(g_a, static_cast<size_t>(p.input.elements()) * 2);
    FillBytes(g_w, static_cast<size_t>(p.filter.elements()));
    for (int32_t i = 0; i < p.filter.elements(); ++i) {
      if (g_w[i] == -128) g_w[i] = -127;
    }
    FillBias64(p.output.c, 1 << 20);
  }
  KernelStatus Run(Conv16x8Fn fn, void* out) const {
    return fn(p, {g_mult, g_shift}, reinterpret_cast<const int16_t*>(g_a), g_w,
              with_bias ? g_bias : nullptr, static_cast<int16_t*>(out), Scratch{nullptr, 0});
  }
  void Draw() {
    const int32_t kh = Uniform(1, 3), kw = Uniform(1, 4);
    p.input = {1, Uniform(1, 9), Uniform(1, 9), Uniform(1, 20)};
    const int32_t groups = Chance(15) && p.input.c % 2 == 0 ? 2 : 1;
    p.filter = {Uniform(1, 12) * groups, kh, kw, p.input.c / groups};
    p.stride = {Uniform(1, 2), Uniform(1, 2)};
    p.dilation = {Chance(20) ? 2 : 1, Chance(10) ? 2 : 1};
    p.padding = {Uniform(0, kh - 1), Uniform(0, kw - 1)};
    const int32_t eh = (kh - 1) * p.dilation.h + 1, ew = (kw - 1) * p.dilation.w + 1;
    int32_t oh = (p.input.h + 2 * p.padding.h - eh) / p.stride.h + 1;
    int32_t ow = (p.input.w + 2 * p.padding.w - ew) / p.stride.w + 1;
    if (oh < 1) oh = 1;
    if (ow < 1) ow = 1;
    p.output = {1, oh, ow, p.filter.n};
    p.activation = Chance(30) ? ActivationRange{-20000, 25000} : ActivationRange{-32768, 32767};
    with_bias = Chance(80);
    FillRequant16(p.output.c, -18, 2);
  }
};

struct Dw16Case {
  DepthwiseConvParams p;
  bool with_bias;
  size_t out_bytes() const { return static_cast<size_t>(p.output.elements()) * 2; }
  void Fill() {
    FillBytes(g_a, static_cast<size_t>(p.input.elements()) * 2);
    FillBytes(g_w, static_cast<size_t>(p.filter.elements()));
    FillBias64(p.output.c, 1 << 20);
  }
  KernelStatus Run(DepthwiseConv16x8Fn fn, void* out) const {
    return fn(p, {g_mult, g_shift}, reinterpret_cast<const int16_t*>(g_a), g_w,
              with_bias ? g_bias : nullptr, static_cast<int16_t*>(out), Scratch{nullptr, 0});
  }
  void Draw() {
    const int32_t kh = Uniform(1, 3), kw = Uniform(1, 3);
    p.depth_multiplier = Chance(15) ? 2 : 1;
    p.input = {1, Uniform(1, 9), Uniform(1, 9), Uniform(1, 30)};
    const int32_t oc = p.input.c * p.depth_multiplier;
    p.filter = {1, kh, kw, oc};
    p.stride = {Uniform(1, 2), Uniform(1, 2)};
    p.dilation = {Chance(20) ? 2 : 1, Chance(20) ? 2 : 1};
    p.padding = {Uniform(0, kh - 1), Uniform(0, kw - 1)};
    const int32_t eh = (kh - 1) * p.dilation.h + 1, ew = (kw - 1) * p.dilation.w + 1;
    int32_t oh = (p.input.h + 2 * p.padding.h - eh) / p.stride.h + 1;
    int32_t ow = (p.input.w + 2 * p.padding.w - ew) / p.stride.w + 1;
    if (oh < 1) oh = 1;
    if (ow < 1) ow = 1;
    p.output = {1, oh, ow, oc};
    p.activation = Chance(30) ? ActivationRange{-30000, 20000} : ActivationRange{-32768, 32767};
    with_bias = Chance(80);
    // Shifts <= -2 take the MVE body's vector requantization; larger ones its per-channel one.
    FillRequant16(oc, -16, Chance(60) ? -2 : 4);
  }
};

struct Fc16Case {
  FullyConnectedParams p;
  bool with_bias;
  size_t out_bytes() const { return static_cast<size_t>(p.batches) * p.output_depth * 2; }
  void Fill() {
    FillBytes(g_a, static_cast<size_t>(p.batches) * p.input_depth * 2);
    FillBytes(g_w, static_cast<size_t>(p.input_depth) * p.output_depth);
    FillBias64(p.output_depth, 1 << 22);
  }
  KernelStatus Run(FullyConnected16x8Fn fn, void* out) const {
    return fn(p, {g_mult, g_shift}, reinterpret_cast<const int16_t*>(g_a), g_w,
              with_bias ? g_bias : nullptr, static_cast<int16_t*>(out), Scratch{nullptr, 0});
  }
  void Draw() {
    p.batches = Uniform(1, 3);
    p.input_depth = Uniform(1, 90);
    p.output_depth = Uniform(1, 13);
    p.filter_offset = Chance(30) ? Uniform(-255, 255) : 0;
    p.per_channel = p.filter_offset == 0 && Chance(50);
    p.activation = Chance(30) ? ActivationRange{-25000, 32767} : ActivationRange{-32768, 32767};
    with_bias = Chance(80);
    FillRequant16(p.per_channel ? p.output_depth : 1, -20, 0);
  }
};

struct TransposeCase {
  Shape in;
  int32_t perm[kMaxRank];
  size_t eb;
  size_t out_bytes() const { return static_cast<size_t>(in.elements()) * eb; }
  void Fill() { FillBytes(g_a, out_bytes()); }
  KernelStatus Run(TransposeFn fn, void* out) const { return fn(in, perm, g_a, out, eb); }
  void Draw() {
    eb = size_t{1} << Uniform(0, 2);
    in.rank = Uniform(1, 6);
    int64_t n = 1;
    for (int i = 0; i < in.rank; ++i) {
      in.dims[i] = Uniform(1, in.rank > 3 ? 5 : 24);
      n *= in.dims[i];
    }
    while (n * static_cast<int64_t>(eb) > static_cast<int64_t>(kBytes)) {
      n /= in.dims[0];
      in.dims[0] = 1;
      if (n * static_cast<int64_t>(eb) > static_cast<int64_t>(kBytes)) {
        n /= in.dims[in.rank - 1];
        in.dims[in.rank - 1] = 1;
      }
    }
    for (int i = 0; i < in.rank; ++i) perm[i] = i;
    for (int i = in.rank - 1; i > 0; --i) {
      const int j = Uniform(0, i);
      const int32_t t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
  }
};

struct PadCase {
  Shape in;
  PadParams p;
  size_t eb;
  uint32_t value;
  size_t out_bytes() const {
    size_t n = eb;
    for (int i = 0; i < in.rank; ++i) n *= static_cast<size_t>(in.dims[i] + p.before[i] + p.after[i]);
    return n;
  }
  void Fill() { FillBytes(g_a, static_cast<size_t>(in.elements()) * eb); }
  KernelStatus Run(PadFn fn, void* out) const { return fn(p, in, g_a, &value, out, eb); }
  void Draw() {
    eb = size_t{1} << Uniform(0, 2);
    value = Next();
    do {
      in.rank = Uniform(1, 5);
      for (int i = 0; i < in.rank; ++i) {
        in.dims[i] = Uniform(0, 9) == 0 ? 0 : Uniform(1, in.rank > 3 ? 6 : 20);
        p.before[i] = Chance(40) ? 0 : Uniform(0, 3);
        p.after[i] = Chance(40) ? 0 : Uniform(0, 3);
      }
    } while (out_bytes() > kBytes);
  }
};

// ---- drivers ----------------------------------------------------------------------------------

template <typename Case, typename List, typename DrawFn>
void Sweep(const char* op, const List& list, int cases, DrawFn draw) {
  if (!Selected(op)) return;
  const size_t n = list.size();
  uint32_t mismatches[4] = {};
  int first[4] = {-1, -1, -1, -1};
  for (int k = 0; k < cases; ++k) {
    Case c;
    draw(c);
    c.Fill();
    const size_t bytes = c.out_bytes();
    Set(g_ref, 0x55, bytes);
    const KernelStatus want = c.Run(list[0].fn, g_ref);  // the scalar body, listed first
    for (size_t v = 1; v < n && v < 4; ++v) {
      Set(g_out, 0xAA, bytes);
      const KernelStatus got = c.Run(list[v].fn, g_out);
      if (got != want || (want == KernelStatus::kOk && !Equal(g_ref, g_out, bytes))) {
        if (first[v] < 0) first[v] = k;
        ++mismatches[v];
      }
    }
  }
  for (size_t v = 1; v < n && v < 4; ++v) {
    bench_report::Sweep(op, list[v].name, cases, mismatches[v], first[v]);
  }
}

template <typename Case, typename List>
void Time(const char* name, const List& list, const Case& c, uint64_t work) {
  if (!Selected(name)) return;
  for (const auto& v : list) {
    const size_t bytes = c.out_bytes();
    Set(g_out, 0x55, bytes);
    uint32_t t0 = *kCounter;
    const KernelStatus status = c.Run(v.fn, g_out);
    uint32_t t1 = *kCounter;
    const uint32_t crc = bench_report::Crc32(g_out, bytes);
    uint64_t span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
    uint32_t reps = 1;
    if (span < kMinSpan) {
      reps = kMinSpan / (span > 0 ? static_cast<uint32_t>(span) : 1u) + 1;
      t0 = *kCounter;
      for (uint32_t r = 0; r < reps; ++r) c.Run(v.fn, g_out);
      t1 = *kCounter;
      span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
    }
    bench_report::Variant(name, nullptr, v.name, (span + reps / 2) / reps, work, true, crc,
                          status == KernelStatus::kOk);
  }
}

Shape Shape4(int32_t a, int32_t b, int32_t c, int32_t d) {
  Shape s;
  s.rank = 4;
  s.dims[0] = a, s.dims[1] = b, s.dims[2] = c, s.dims[3] = d;
  return s;
}

}  // namespace

void RunCoverage() {
  // Random sweeps, every body against the scalar one.
  Sweep<MinMaxCase>("minimum", MinimumVariants(), 60, [](MinMaxCase& c) { c.Draw(false); });
  Sweep<MinMaxCase>("maximum", MaximumVariants(), 60, [](MinMaxCase& c) { c.Draw(false); });
  Sweep<MinMaxCase>("minimum16", Minimum16Variants(), 60, [](MinMaxCase& c) { c.Draw(true); });
  Sweep<MinMaxCase>("maximum16", Maximum16Variants(), 60, [](MinMaxCase& c) { c.Draw(true); });
  Sweep<TransposeCase>("transpose", TransposeVariants(), 80, [](TransposeCase& c) { c.Draw(); });
  Sweep<PadCase>("pad", PadVariants(), 80, [](PadCase& c) { c.Draw(); });
  Sweep<Conv16Case>("conv16x8", Conv16x8Variants(), 50, [](Conv16Case& c) { c.Draw(); });
  Sweep<Dw16Case>("dwconv16x8", DepthwiseConv16x8Variants(), 50, [](Dw16Case& c) { c.Draw(); });
  Sweep<Fc16Case>("fc16x8", FullyConnected16x8Variants(), 60, [](Fc16Case& c) { c.Draw(); });

  // Fixed shapes: instructions per call of each body.
  {
    MinMaxCase c{Shape4(1, 16, 16, 32), Shape4(1, 16, 16, 32), Shape4(1, 16, 16, 32), false};
    c.Fill();
    Time("minimum_16x16x32", MinimumVariants(), c, 8192);
    MinMaxCase d{Shape4(1, 8, 8, 64), Shape{}, Shape4(1, 8, 8, 64), true};  // a scalar bound
    d.Fill();
    Time("maximum16_8x8x64_scalar", Maximum16Variants(), d, 4096);
  }
  {
    TransposeCase c;
    c.in = Shape4(1, 16, 16, 32);
    const int32_t perm[4] = {0, 3, 1, 2};  // NHWC -> NCHW
    for (int i = 0; i < 4; ++i) c.perm[i] = perm[i];
    c.eb = 1;
    c.Fill();
    Time("transpose_nhwc_nchw_16x16x32", TransposeVariants(), c, 8192);
    c.in = Shape4(1, 32, 16, 8);
    const int32_t swap[4] = {0, 2, 1, 3};  // H <-> W: rows of 8 channels move whole
    for (int i = 0; i < 4; ++i) c.perm[i] = swap[i];
    c.Fill();
    Time("transpose_hw_32x16x8", TransposeVariants(), c, 4096);
    // Channel shuffle (ShuffleNet, 2 groups of 32): [8x8, 2, 32] -> [8x8, 32, 2].
    c.in.rank = 5;
    const int32_t shuffle_dims[5] = {1, 8, 8, 2, 32};
    for (int i = 0; i < 5; ++i) c.in.dims[i] = shuffle_dims[i];
    const int32_t shuffle[5] = {0, 1, 2, 4, 3};
    for (int i = 0; i < 5; ++i) c.perm[i] = shuffle[i];
    c.Fill();
    Time("transpose_shuffle_g2_8x8x64", TransposeVariants(), c, 4096);
    c.in = Shape4(1, 24, 24, 4);  // int16
    const int32_t nchw[4] = {0, 3, 1, 2};
    for (int i = 0; i < 4; ++i) c.perm[i] = nchw[i];
    c.eb = 2;
    c.Fill();
    Time("transpose16_nhwc_nchw_24x24x4", TransposeVariants(), c, 2304);
  }
  {
    PadCase c;
    c.in = Shape4(1, 16, 16, 16);
    c.p = PadParams{};
    c.p.before[1] = c.p.before[2] = 1;
    c.p.after[1] = c.p.after[2] = 1;
    c.eb = 1;
    c.value = 0xF6F6F6F6u;
    c.Fill();
    Time("pad_hw1_16x16x16", PadVariants(), c, 18 * 18 * 16);
  }
  {
    Conv16Case c;
    c.p.input = {1, 8, 8, 16};
    c.p.filter = {16, 3, 3, 16};
    c.p.output = {1, 8, 8, 16};
    c.p.padding = {1, 1};
    c.p.activation = {-32768, 32767};
    c.with_bias = true;
    FillRequant16(16, -14, -10);
    c.Fill();
    Time("conv16x8_3x3_16to16_8x8", Conv16x8Variants(), c, 8 * 8 * 16 * 9 * 16);
  }
  {
    Dw16Case c;
    c.p.input = {1, 12, 12, 32};
    c.p.filter = {1, 3, 3, 32};
    c.p.output = {1, 12, 12, 32};
    c.p.padding = {1, 1};
    c.p.activation = {-32768, 32767};
    c.with_bias = true;
    FillRequant16(32, -12, -8);
    c.Fill();
    Time("dwconv16x8_3x3_32_12x12", DepthwiseConv16x8Variants(), c, 12 * 12 * 32 * 9);
  }
  {
    Fc16Case c;
    c.p.batches = 1;
    c.p.input_depth = 256;
    c.p.output_depth = 64;
    c.p.activation = {-32768, 32767};
    c.with_bias = true;
    FillRequant16(1, -16, -12);
    c.Fill();
    Time("fc16x8_256to64", FullyConnected16x8Variants(), c, 256 * 64);
  }
}
