// Variant check of batch matmul, transpose conv, SVDF, LSTM and softmax: every compiled body
// of an op (scalar, dsp, mve: what the build's CPU allows) against the op's scalar body over
// seeded random shapes, byte for byte (outputs and the state an op updates in place: `sweep`
// lines), then the instructions per call of each body on a few representative shapes
// (`variant` lines, case <op>_<shape>). Line format: report.h; run.py checks them. This file's
// main() also runs coverage.cc's ops (RunCoverage) and ends with "variants: done". Instruction
// counts as in bench.cc: the FPGAIO counter under QEMU -icount shift=0, calls repeated until
// the span is long enough.
#include <stddef.h>
#include <stdint.h>

#include "mica/kernels/batch_matmul.h"
#include "mica/kernels/isa.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/softmax.h"
#include "mica/kernels/svdf.h"
#include "mica/kernels/transpose_conv.h"
#include "report.h"

void RunCoverage();  // coverage.cc

namespace {

using namespace mica::kernels;

constexpr size_t kBuf = 24 * 1024;
constexpr uint32_t kMinSpan = 200000;
constexpr int kCases = 200;

alignas(16) int8_t g_a[kBuf];
alignas(16) int8_t g_b[kBuf];
alignas(16) int8_t g_ref[kBuf];
alignas(16) int8_t g_got[kBuf];
// State buffers hold int16 objects (int8 states are read through int8_t, a character type).
alignas(16) int16_t g_state_ref16[kBuf / 2];
alignas(16) int16_t g_state_got16[kBuf / 2];
int8_t* const g_state_ref = reinterpret_cast<int8_t*>(g_state_ref16);
int8_t* const g_state_got = reinterpret_cast<int8_t*>(g_state_got16);
alignas(16) uint8_t g_scratch[kBuf];
int32_t g_bias[512];
int32_t g_mult[512];
int32_t g_shift[512];

volatile uint32_t* const kCounter = reinterpret_cast<volatile uint32_t*>(BENCH_COUNTER_ADDR);

// xorshift32: deterministic, the same sequence on every build.
struct Rng {
  uint32_t s;
  uint32_t Next() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  }
  int32_t Uniform(int32_t lo, int32_t hi) {  // [lo, hi]
    return lo + static_cast<int32_t>(Next() % static_cast<uint32_t>(hi - lo + 1));
  }
  bool Chance(uint32_t percent) { return Next() % 100 < percent; }
  template <typename T>
  void Fill(T* p, size_t n, int32_t lo, int32_t hi) {
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(Uniform(lo, hi));
  }
  // A multiplier in [2^30, 2^31) and a shift keeping `acc_bits`-bit sums near the int8 range,
  // or (one call in six) a shift in [-3, 1], left shifts included.
  void Requant(int32_t* mult, int32_t* shift, size_t n, int32_t acc_bits) {
    const bool small = Next() % 6 == 0;
    for (size_t i = 0; i < n; ++i) {
      mult[i] = static_cast<int32_t>(0x40000000u + (Next() & 0x3FFFFFFFu));
      int32_t s = small ? Uniform(-3, 1) : 8 - acc_bits + Uniform(-2, 2);
      shift[i] = s < -31 ? -31 : (s > 1 ? 1 : s);
    }
  }
};

int32_t Bits(int64_t taps) {
  int32_t b = 16;
  while (taps > 1) taps >>= 1, ++b;
  return b;
}

bool Same(const void* a, const void* b, size_t n) {
  const uint8_t* x = static_cast<const uint8_t*>(a);
  const uint8_t* y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

void Copy(void* d, const void* s, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(d)[i] = static_cast<const uint8_t*>(s)[i];
}

// Instructions per call of call() (which returns its status) and the CRC of its `out_bytes`
// output bytes at `out` (none when out is null: the bodies' inputs differ).
template <typename Call>
void ReportCost(const char* op, const char* shape, const char* variant, const void* out,
                size_t out_bytes, Call call) {
  if (!bench_report::Selected(op)) return;
  uint32_t t0 = *kCounter;
  const KernelStatus status = call();
  uint32_t t1 = *kCounter;
  uint64_t span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
  uint32_t reps = 1;
  if (span < kMinSpan) {
    reps = kMinSpan / (span > 0 ? static_cast<uint32_t>(span) : 1u) + 1;
    t0 = *kCounter;
    for (uint32_t r = 0; r < reps; ++r) call();
    t1 = *kCounter;
    span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
  }
  const uint32_t crc = out != nullptr ? bench_report::Crc32(out, out_bytes) : 0;
  bench_report::Variant(op, shape, variant, (span + reps / 2) / reps, 0, out != nullptr, crc,
                        status == KernelStatus::kOk);
}

// Runs every non-scalar variant of `list` against the scalar one: make(rng, i) draws case i's
// parameters and inputs and returns false to skip it; run(fn, out, state) calls one body and
// returns its status; sizes() gives the output and state bytes of the current case; same()
// compares any further state the op updates (true if none).
template <typename Fn, typename Make, typename Run, typename Sizes, typename Same2>
void CheckOp(const char* op, VariantList<Fn> list, uint32_t seed, Make make, Run run,
             Sizes sizes, Same2 same) {
  if (!bench_report::Selected(op)) return;
  const Fn scalar = FindVariant(list, Isa::kScalar);
  for (const auto& v : list) {
    if (v.isa == Isa::kScalar) continue;
    Rng rng{seed};
    int cases = 0, bad = 0, first = -1;
    for (int i = 0; i < kCases; ++i) {
      if (!make(rng, i)) continue;
      size_t out_bytes = 0, state_bytes = 0;
      sizes(&out_bytes, &state_bytes);
      Copy(g_state_got, g_state_ref, state_bytes);
      for (size_t j = 0; j < out_bytes; ++j) g_ref[j] = 0x55, g_got[j] = 0x55;
      const KernelStatus want = run(scalar, g_ref, g_state_ref);
      const KernelStatus got = run(v.fn, g_got, g_state_got);
      ++cases;
      if (want != KernelStatus::kOk || got != want || !Same(g_ref, g_got, out_bytes) ||
          !Same(g_state_ref, g_state_got, state_bytes) || !same()) {
        if (first < 0) first = i;
        ++bad;
      }
    }
    bench_report::Sweep(op, v.name, cases, bad, first);
  }
}

bool NoState() { return true; }

// ---- BatchMatMul --------------------------------------------------------------------------

BatchMatMulParams g_bmm;

size_t BmmOutBytes(const BatchMatMulParams& p) {
  size_t batches = 1;
  for (int d = 0; d < 3; ++d) {
    batches *= static_cast<size_t>(p.lhs_batch[d] > p.rhs_batch[d] ? p.lhs_batch[d]
                                                                    : p.rhs_batch[d]);
  }
  return batches * static_cast<size_t>(p.m) * static_cast<size_t>(p.n);
}

bool MakeBmm(Rng& rng, int) {
  BatchMatMulParams p;
  for (int d = 1; d < 3; ++d) {
    const int32_t dim = rng.Uniform(1, 3);
    p.lhs_batch[d] = dim;
    p.rhs_batch[d] = dim;
    if (rng.Chance(30)) (rng.Chance(50) ? p.lhs_batch[d] : p.rhs_batch[d]) = 1;
  }
  p.m = rng.Uniform(1, 9);
  p.k = rng.Uniform(1, 70);
  p.n = rng.Uniform(1, 11);
  p.adj_x = rng.Chance(50);
  p.adj_y = rng.Chance(50);
  p.lhs_offset = rng.Uniform(-128, 128);
  p.rhs_offset = rng.Chance(50) ? 0 : rng.Uniform(-128, 128);
  p.output_offset = rng.Uniform(-128, 127);
  p.activation = {rng.Uniform(-128, -60), rng.Uniform(60, 127)};
  rng.Requant(g_mult, g_shift, 1, Bits(p.k) + 2);
  p.requant = {g_mult[0], g_shift[0]};
  const size_t lb = static_cast<size_t>(p.lhs_batch[1] * p.lhs_batch[2]);
  const size_t rb = static_cast<size_t>(p.rhs_batch[1] * p.rhs_batch[2]);
  if (lb * p.m * p.k > kBuf || rb * p.k * p.n > kBuf || BmmOutBytes(p) > kBuf) return false;
  rng.Fill(g_a, lb * p.m * p.k, -128, 127);
  rng.Fill(g_b, rb * p.k * p.n, -128, 127);
  g_bmm = p;
  return true;
}

template <typename Fn>
KernelStatus RunBmm(Fn fn, int8_t* out, int8_t*) {
  return fn(g_bmm, g_a, g_b, out, Scratch{g_scratch, kBuf});
}

void Bmm() {
  CheckOp("batch_matmul", BatchMatMulVariants(), 0xB33u, MakeBmm,
          [](BatchMatMulFn fn, int8_t* out, int8_t* st) { return RunBmm(fn, out, st); },
          [](size_t* out, size_t* state) { *out = BmmOutBytes(g_bmm), *state = 0; }, NoState);
  struct Shape {
    const char* name;
    int32_t m, k, n;
    bool adj_y;
  };
  const Shape shapes[] = {{"16x64x16", 16, 64, 16, false}, {"16x64x16_adjy", 16, 64, 16, true},
                          {"49x32x49_adjy", 49, 32, 49, true}};
  Rng rng{0x5EED};
  for (const Shape& s : shapes) {
    BatchMatMulParams p;
    p.m = s.m, p.k = s.k, p.n = s.n, p.adj_y = s.adj_y;
    p.lhs_offset = 3, p.rhs_offset = 0, p.output_offset = -5;
    p.requant = {1518500250, -9};
    p.activation = {-128, 127};
    rng.Fill(g_a, static_cast<size_t>(s.m) * s.k, -128, 127);
    rng.Fill(g_b, static_cast<size_t>(s.k) * s.n, -128, 127);
    for (const auto& v : BatchMatMulVariants()) {
      ReportCost("batch_matmul", s.name, v.name, g_got, static_cast<size_t>(s.m) * s.n, [&] {
        return v.fn(p, g_a, g_b, g_got, Scratch{g_scratch, kBuf});
      });
    }
  }
}

// ---- TransposeConv ------------------------------------------------------------------------

TransposeConvParams g_tc;
bool g_tc_bias;

bool MakeTransposeConv(Rng& rng, int) {
  TransposeConvParams p;
  p.input = {rng.Chance(20) ? 2 : 1, rng.Uniform(1, 6), rng.Uniform(1, 6), rng.Uniform(1, 36)};
  p.filter = {rng.Uniform(1, 11), rng.Uniform(1, 4), rng.Uniform(1, 4), p.input.c};
  p.stride = {rng.Uniform(1, 3), rng.Uniform(1, 3)};
  const bool same = rng.Chance(50);
  const auto out_size = [&](int32_t in, int32_t k, int32_t s) {
    return same ? in * s : (in - 1) * s + k;
  };
  p.output = {p.input.n, out_size(p.input.h, p.filter.h, p.stride.h),
              out_size(p.input.w, p.filter.w, p.stride.w), p.filter.n};
  const auto pad = [](int32_t in, int32_t k, int32_t s, int32_t out) {
    const int32_t total = (in - 1) * s + k - out;
    return total > 0 ? total / 2 : 0;
  };
  p.padding = {pad(p.input.h, p.filter.h, p.stride.h, p.output.h),
               pad(p.input.w, p.filter.w, p.stride.w, p.output.w)};
  p.input_offset = rng.Uniform(-128, 128);
  p.output_offset = rng.Uniform(-128, 127);
  p.activation = {rng.Uniform(-128, -60), rng.Uniform(60, 127)};
  if (p.input.elements() > static_cast<int64_t>(kBuf) ||
      p.filter.elements() > static_cast<int64_t>(kBuf) ||
      p.output.elements() > static_cast<int64_t>(kBuf)) {
    return false;
  }
  rng.Fill(g_a, static_cast<size_t>(p.input.elements()), -128, 127);
  rng.Fill(g_b, static_cast<size_t>(p.filter.elements()), -127, 127);
  g_tc_bias = !rng.Chance(10);
  rng.Fill(g_bias, static_cast<size_t>(p.output.c), -40000, 40000);
  const int64_t taps = int64_t{p.filter.h} * p.filter.w * p.input.c /
                       (int64_t{p.stride.h} * p.stride.w) + 1;
  rng.Requant(g_mult, g_shift, static_cast<size_t>(p.output.c), Bits(taps) + 1);
  g_tc = p;
  return true;
}

KernelStatus RunTransposeConv(TransposeConvFn fn, int8_t* out) {
  return fn(g_tc, PerChannelRequant{g_mult, g_shift}, g_a, g_b, g_tc_bias ? g_bias : nullptr,
            out, Scratch{g_scratch, kBuf});
}

void TransposeConvOp() {
  CheckOp("transpose_conv", TransposeConvVariants(), 0x7C01u, MakeTransposeConv,
          [](TransposeConvFn fn, int8_t* out, int8_t*) { return RunTransposeConv(fn, out); },
          [](size_t* out, size_t* state) {
            *out = static_cast<size_t>(g_tc.output.elements()), *state = 0;
          },
          NoState);
  struct Shape {
    const char* name;
    int32_t in_hw, in_c, k, stride, out_c;
  };
  // A decoder upsampling layer and a 1x1-input head.
  const Shape shapes[] = {{"8x8x16_k3s2_16", 8, 16, 3, 2, 16}, {"4x4x32_k4s2_8", 4, 32, 4, 2, 8}};
  Rng rng{0x5EED};
  for (const Shape& s : shapes) {
    TransposeConvParams p;
    p.input = {1, s.in_hw, s.in_hw, s.in_c};
    p.filter = {s.out_c, s.k, s.k, s.in_c};
    p.stride = {s.stride, s.stride};
    p.output = {1, s.in_hw * s.stride, s.in_hw * s.stride, s.out_c};
    const int32_t total = (s.in_hw - 1) * s.stride + s.k - s.in_hw * s.stride;
    p.padding = {total > 0 ? total / 2 : 0, total > 0 ? total / 2 : 0};
    p.input_offset = 7, p.output_offset = -3, p.activation = {-128, 127};
    rng.Fill(g_a, static_cast<size_t>(p.input.elements()), -128, 127);
    rng.Fill(g_b, static_cast<size_t>(p.filter.elements()), -127, 127);
    rng.Fill(g_bias, static_cast<size_t>(s.out_c), -4000, 4000);
    rng.Requant(g_mult, g_shift, static_cast<size_t>(s.out_c), 18);
    for (const auto& v : TransposeConvVariants()) {
      ReportCost("transpose_conv", s.name, v.name, g_got,
                 static_cast<size_t>(p.output.elements()), [&] {
        return v.fn(p, PerChannelRequant{g_mult, g_shift}, g_a, g_b, g_bias, g_got,
                    Scratch{g_scratch, kBuf});
      });
    }
  }
}

// ---- SVDF (int16 and int8 state) ---------------------------------------------------------

SvdfParams g_svdf;
bool g_svdf_bias;

template <typename StateT>
size_t SvdfStateBytes(const SvdfParams& p) {
  return static_cast<size_t>(p.batch) * p.num_filters * p.memory_size * sizeof(StateT);
}

// Time weights (int16 or int8).
alignas(16) int16_t g_wt[kBuf / 2];

template <typename StateT>
bool MakeSvdf(Rng& rng, int) {
  SvdfParams p;
  p.batch = rng.Uniform(1, 3);
  p.input_size = rng.Uniform(1, 80);
  p.rank = rng.Uniform(1, 3);
  p.num_filters = p.rank * rng.Uniform(1, 12);
  p.memory_size = rng.Uniform(1, 40);
  const bool s8 = sizeof(StateT) == 1;
  p.input_zero_point = rng.Uniform(-128, 127);
  p.state_zero_point = s8 ? rng.Uniform(-20, 20) : (rng.Chance(30) ? rng.Uniform(-300, 300) : 0);
  p.output_zero_point = rng.Uniform(-128, 127);
  int32_t m[2], s[2];
  rng.Requant(m, s, 2, 0);
  p.effective_scale_1 = {m[0], s8 ? -8 - rng.Uniform(0, 4) : rng.Uniform(-4, 1)};
  p.effective_scale_2 = {m[1], s8 ? -8 - rng.Uniform(0, 4) : -12 - rng.Uniform(0, 8)};
  const size_t state_bytes = SvdfStateBytes<StateT>(p);
  if (static_cast<size_t>(p.batch) * p.input_size > kBuf ||
      static_cast<size_t>(p.num_filters) * p.input_size > kBuf || state_bytes > kBuf ||
      static_cast<size_t>(p.num_filters) * p.memory_size * sizeof(StateT) > kBuf ||
      SvdfScratchBytes(p, Isa::kScalar) > kBuf) {
    return false;
  }
  rng.Fill(g_a, static_cast<size_t>(p.batch) * p.input_size, -128, 127);
  rng.Fill(g_b, static_cast<size_t>(p.num_filters) * p.input_size, -127, 127);
  rng.Fill(reinterpret_cast<StateT*>(g_wt), static_cast<size_t>(p.num_filters) * p.memory_size,
           s8 ? -127 : -32767, s8 ? 127 : 32767);
  rng.Fill(reinterpret_cast<StateT*>(g_state_ref), state_bytes / sizeof(StateT), s8 ? -128 : -3000,
           s8 ? 127 : 3000);
  g_svdf_bias = rng.Chance(70);
  rng.Fill(g_bias, static_cast<size_t>(p.num_filters / p.rank), -50000, 50000);
  g_svdf = p;
  return true;
}

template <typename StateT, typename Fn>
KernelStatus RunSvdf(Fn fn, int8_t* out, int8_t* state) {
  return fn(g_svdf, g_a, g_b, reinterpret_cast<const StateT*>(g_wt),
            g_svdf_bias ? g_bias : nullptr, reinterpret_cast<StateT*>(state), out,
            Scratch{g_scratch, kBuf});
}

template <typename StateT, typename Fn>
void SvdfCosts(const char* op, VariantList<Fn> list) {
  // Keyword-spotting SVDF layers: 40 features, 64 filters of rank 1 with a 32-step memory,
  // 128 filters of rank 2 with an 8-step memory.
  struct Shape {
    const char* name;
    int32_t input, filters, rank, memory;
  };
  const Shape shapes[] = {{"40in_64f_r1_m32", 40, 64, 1, 32}, {"40in_128f_r2_m8", 40, 128, 2, 8}};
  Rng rng{0x5EED};
  for (const Shape& s : shapes) {
    SvdfParams p;
    p.input_size = s.input, p.num_filters = s.filters, p.rank = s.rank, p.memory_size = s.memory;
    p.input_zero_point = -3, p.output_zero_point = 5;
    p.effective_scale_1 = {1518500250, -2};
    p.effective_scale_2 = {1518500250, -14};
    rng.Fill(g_a, static_cast<size_t>(s.input), -128, 127);
    rng.Fill(g_b, static_cast<size_t>(s.filters) * s.input, -127, 127);
    rng.Fill(reinterpret_cast<StateT*>(g_wt), static_cast<size_t>(s.filters) * s.memory, -127,
             127);
    rng.Fill(g_bias, static_cast<size_t>(s.filters / s.rank), -5000, 5000);
    for (const auto& v : list) {
      rng.Fill(reinterpret_cast<StateT*>(g_state_got), static_cast<size_t>(s.filters) * s.memory,
               -100, 100);
      ReportCost(op, s.name, v.name, nullptr, 0, [&] {
        return v.fn(p, g_a, g_b, reinterpret_cast<const StateT*>(g_wt), g_bias,
                    reinterpret_cast<StateT*>(g_state_got), g_got, Scratch{g_scratch, kBuf});
      });
    }
  }
}

void SvdfOp() {
  const auto sizes = [](size_t* out, size_t* state) {
    *out = static_cast<size_t>(g_svdf.batch) * (g_svdf.num_filters / g_svdf.rank);
    *state = 0;  // set per flavour below
  };
  CheckOp("svdf", SvdfVariants(), 0x5DFu, MakeSvdf<int16_t>,
          [](SvdfFn fn, int8_t* out, int8_t* st) { return RunSvdf<int16_t>(fn, out, st); },
          [&](size_t* out, size_t* state) {
            sizes(out, state);
            *state = SvdfStateBytes<int16_t>(g_svdf);
          },
          NoState);
  CheckOp("svdf_int8_state", SvdfInt8StateVariants(), 0x5D8u, MakeSvdf<int8_t>,
          [](SvdfInt8StateFn fn, int8_t* out, int8_t* st) { return RunSvdf<int8_t>(fn, out, st); },
          [&](size_t* out, size_t* state) {
            sizes(out, state);
            *state = SvdfStateBytes<int8_t>(g_svdf);
          },
          NoState);
  SvdfCosts<int16_t>("svdf", SvdfVariants());
  SvdfCosts<int8_t>("svdf_int8_state", SvdfInt8StateVariants());
}

// ---- LSTM --------------------------------------------------------------------------------

LstmParams g_lstm;
alignas(16) int8_t g_lstm_w[4][2][6 * 1024];  // per gate: input and recurrent weights
int32_t g_lstm_bias[4][128];
alignas(16) int16_t g_cell_ref[1024];
alignas(16) int16_t g_cell_got[1024];

size_t LstmOutBytes(const LstmParams& p) {
  return static_cast<size_t>(p.batch) * p.time_steps * p.state_size;
}

// Weights, biases and requantization of a call; sizes must fit the buffers.
void FillLstm(Rng& rng, LstmParams& p, bool bias) {
  LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate, &p.output_gate};
  for (int k = 0; k < 4; ++k) {
    LstmGateParams& g = *gates[k];
    rng.Fill(g_lstm_w[k][0], static_cast<size_t>(p.state_size) * p.input_size, -127, 127);
    rng.Fill(g_lstm_w[k][1], static_cast<size_t>(p.state_size) * p.state_size, -127, 127);
    rng.Fill(g_lstm_bias[k], static_cast<size_t>(p.state_size), -20000, 20000);
    g.input_weights = g_lstm_w[k][0];
    g.recurrent_weights = g_lstm_w[k][1];
    g.bias = bias ? g_lstm_bias[k] : nullptr;
    int32_t m[2], sh[2];
    rng.Requant(m, sh, 2, 0);
    g.input_fc = {m[0], rng.Uniform(-9, -1)};
    g.recurrent_fc = {m[1], rng.Uniform(-9, -1)};
  }
  int32_t m[3], sh[3];
  rng.Requant(m, sh, 3, 0);
  p.forget_cell_mul = {m[0], -14 - rng.Uniform(0, 1)};
  p.input_cell_mul = {m[1], -18 - rng.Uniform(0, 2)};
  p.hidden_mul = {m[2], -22 - rng.Uniform(0, 2)};
}

bool MakeLstm(Rng& rng, int) {
  LstmParams p;
  p.batch = rng.Uniform(1, 3);
  p.time_steps = rng.Uniform(1, 4);
  p.input_size = rng.Uniform(1, 48);
  p.state_size = rng.Uniform(1, 40);
  p.time_major = rng.Chance(50);
  p.input_zero_point = rng.Uniform(-128, 127);
  p.hidden_zero_point = rng.Uniform(-128, 127);
  p.cell_gate_sigmoid = rng.Chance(20);
  p.cell_state_scale_power = -rng.Uniform(9, 15);
  p.cell_clip_enabled = rng.Chance(30);
  p.quantized_cell_clip = static_cast<int16_t>(rng.Uniform(1000, 32767));
  FillLstm(rng, p, rng.Chance(80));
  const size_t n_in = static_cast<size_t>(p.batch) * p.time_steps * p.input_size;
  const size_t state = static_cast<size_t>(p.batch) * p.state_size;
  if (n_in > kBuf || LstmOutBytes(p) > kBuf || LstmScratchBytes(p, Isa::kScalar) > kBuf) {
    return false;
  }
  rng.Fill(g_a, n_in, -128, 127);
  rng.Fill(g_state_ref, state, -128, 127);
  rng.Fill(g_cell_ref, state, -6000, 6000);
  g_lstm = p;
  return true;
}

KernelStatus RunLstm(LstmFn fn, int8_t* out, int8_t* hidden) {
  // The cell state travels with the hidden state: the reference run uses g_cell_ref, the
  // variant's run a copy of its initial value.
  int16_t* cell = hidden == g_state_ref ? g_cell_ref : g_cell_got;
  return fn(g_lstm, g_a, hidden, cell, out, Scratch{g_scratch, kBuf});
}

void LstmOp() {
  // The cell state must start equal for both runs: CheckOp copies the hidden state, so copy
  // the cell state in the sizes callback, which CheckOp calls before either run.
  CheckOp("lstm", LstmVariants(), 0x157u, MakeLstm, RunLstm, [](size_t* out, size_t* state) {
    *out = LstmOutBytes(g_lstm);
    *state = static_cast<size_t>(g_lstm.batch) * g_lstm.state_size;
    Copy(g_cell_got, g_cell_ref, *state * sizeof(int16_t));
  }, [] {
    return Same(g_cell_ref, g_cell_got,
                static_cast<size_t>(g_lstm.batch) * g_lstm.state_size * sizeof(int16_t));
  });
  struct Shape {
    const char* name;
    int32_t input, state, steps;
  };
  // Keyword-spotting / anomaly-detection LSTM layers (batch 1).
  const Shape shapes[] = {{"in32_st64_t1", 32, 64, 1}, {"in10_st20_t8", 10, 20, 8}};
  Rng rng{0x5EED};
  for (const Shape& s : shapes) {
    LstmParams p;
    p.input_size = s.input, p.state_size = s.state, p.time_steps = s.steps;
    p.input_zero_point = 5, p.hidden_zero_point = -3;
    FillLstm(rng, p, true);
    rng.Fill(g_a, static_cast<size_t>(s.input) * s.steps, -128, 127);
    for (const auto& v : LstmVariants()) {
      rng.Fill(g_state_got, static_cast<size_t>(s.state), -100, 100);
      rng.Fill(g_cell_got, static_cast<size_t>(s.state), -4000, 4000);
      ReportCost("lstm", s.name, v.name, nullptr, 0, [&] {
        return v.fn(p, g_a, g_state_got, g_cell_got, g_got, Scratch{g_scratch, kBuf});
      });
    }
  }
}

// ---- Softmax (int8 -> int8 and int8 -> int16) ----------------------------------------------

SoftmaxParams g_sm;
int32_t g_sm_rows, g_sm_depth;

bool MakeSoftmax(Rng& rng, int) {
  SoftmaxParams p;
  // TFLite's PreprocessSoftmaxScaling: multiplier in [2^30, 2^31), a small left shift, and
  // diff_min = -floor(31 * 2^26 / 2^left_shift) (sometimes a tighter one).
  p.input_beta_multiplier = static_cast<int32_t>(0x40000000u + (rng.Next() & 0x3FFFFFFFu));
  p.input_beta_left_shift = rng.Uniform(0, 26);
  const int64_t radius = (int64_t{31} << 26) >> p.input_beta_left_shift;
  p.diff_min = rng.Chance(20) ? -rng.Uniform(0, 200) : static_cast<int32_t>(-radius);
  if (radius > 0x7FFFFFFF) p.diff_min = -0x7FFFFFFF;
  g_sm_rows = rng.Uniform(1, 4);
  g_sm_depth = rng.Chance(30) ? rng.Uniform(1, 20) : rng.Uniform(1, 700);
  rng.Fill(g_a, static_cast<size_t>(g_sm_rows) * g_sm_depth, -128, 127);
  if (rng.Chance(30)) {  // narrow ranges: many ties with the maximum, few lanes below diff_min
    const int32_t lo = rng.Uniform(-128, 120);
    rng.Fill(g_a, static_cast<size_t>(g_sm_rows) * g_sm_depth, lo, lo + rng.Uniform(0, 7));
  }
  g_sm = p;
  return true;
}

void SoftmaxOp() {
  CheckOp("softmax", SoftmaxVariants(), 0x50F7u, MakeSoftmax,
          [](SoftmaxFn fn, int8_t* out, int8_t*) {
            return fn(g_sm, g_sm_rows, g_sm_depth, g_a, out);
          },
          [](size_t* out, size_t* state) {
            *out = static_cast<size_t>(g_sm_rows) * g_sm_depth, *state = 0;
          },
          NoState);
  CheckOp("softmax_int8_to_int16", SoftmaxInt8ToInt16Variants(), 0x50F8u, MakeSoftmax,
          [](SoftmaxInt8ToInt16Fn fn, int8_t* out, int8_t*) {
            return fn(g_sm, g_sm_rows, g_sm_depth, g_a, reinterpret_cast<int16_t*>(out));
          },
          [](size_t* out, size_t* state) {
            *out = static_cast<size_t>(g_sm_rows) * g_sm_depth * 2, *state = 0;
          },
          NoState);
  struct Shape {
    const char* name;
    int32_t rows, depth;
  };
  // Classifier heads (KWS 12 classes, ImageNet-style 1000) and an attention-like 8 x 49.
  const Shape shapes[] = {{"1x12", 1, 12}, {"1x1000", 1, 1000}, {"8x49", 8, 49}};
  Rng rng{0x5EED};
  for (const Shape& s : shapes) {
    SoftmaxParams p;
    p.input_beta_multiplier = 1342177280;
    p.input_beta_left_shift = 21;
    p.diff_min = -992;
    rng.Fill(g_a, static_cast<size_t>(s.rows) * s.depth, -128, 127);
    for (const auto& v : SoftmaxVariants()) {
      ReportCost("softmax", s.name, v.name, g_got, static_cast<size_t>(s.rows) * s.depth,
                 [&] { return v.fn(p, s.rows, s.depth, g_a, g_got); });
    }
  }
}

}  // namespace

int main() {
  RunCoverage();
  Bmm();
  TransposeConvOp();
  SvdfOp();
  LstmOp();
  SoftmaxOp();
  bench_puts("variants: done\n");
  return 0;
}
