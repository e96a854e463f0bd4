// On-target kernel benchmark: runs mica's kernels (the variant the build selects: MVE, DSP or
// scalar) on the CMSIS-NN anchor cases, with the anchors' exact inputs (generators of
// nn_anchor_cases.h from the shared reference tree, included at build time, never copied), and
// on a few more MLPerf Tiny layer shapes filled by the same generators. For each case it prints
//   <table> <case> <variant> <instructions per call> <macs> <crc32 of the output> <status>
// and run.py compares the lines with CMSIS-NN's counts and CRCs (kernels.csv).
//
// Instruction counts: QEMU runs with -icount shift=0, so its virtual clock advances 1 ns per
// instruction, and the FPGAIO COUNTER register ticks once per BENCH_TICK_NS of it (40 on MPS2,
// 50 on the MPS3 AN547), so a span is exact to within one tick. Calls shorter than kMinSpan
// instructions are repeated until the span is that long (each kernel here runs the same path on
// every call), which puts every count within 50 instructions and within 0.025 % of the truth.
#include <stddef.h>
#include <stdint.h>

#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/isa.h"
#include "mica/kernels/pooling.h"
#include "mica/kernels/softmax.h"
#include "nn_anchor_cases.h"

extern "C" void bench_puts(const char* s);

namespace {

using namespace mica::kernels;

// Extra MLPerf Tiny layer shapes (instructions per MAC; CMSIS-NN has no recorded count for
// them). Same generators and quantization rules as the anchors, seeds of their own.
const nna_case kLayers[] = {
    {"ic_conv3x3_32to32_16x16", "16x16x32 k3x3 s1 p1 -> 16x16x32", "ResNet8 (IC) stack 2",
     NNA_CONV, 0x11000, 16, 16, 32, 3, 3, 16, 16, 32, 1, 1, 1, 1,
     128, -128, -128, 127, -11, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"ic_conv3x3_64to64_8x8", "8x8x64 k3x3 s1 p1 -> 8x8x64", "ResNet8 (IC) stack 3",
     NNA_CONV, 0x12000, 8, 8, 64, 3, 3, 8, 8, 64, 1, 1, 1, 1,
     128, -128, -128, 127, -12, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"vww_conv1x1_32to64_12x12", "12x12x32 k1x1 s1 p0 -> 12x12x64", "MobileNetV1-0.25 (VWW)",
     NNA_CONV, 0x13000, 12, 12, 32, 1, 1, 12, 12, 64, 1, 1, 0, 0,
     128, -128, -128, 127, -10, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"vww_dw3x3_64_12x12", "12x12x64 k3x3 s1 p1 -> 12x12x64", "MobileNetV1-0.25 (VWW)",
     NNA_DWCONV, 0x14000, 12, 12, 64, 3, 3, 12, 12, 64, 1, 1, 1, 1,
     128, -128, -128, 127, -9, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Left shifts (shift_base 1: shifts 1 and 0), an odd pixel count, 12 output channels.
    {"conv3x3_8to12_9x9_lshift", "9x9x8 k3x3 s1 p1 -> 9x9x12", "shift coverage",
     NNA_CONV, 0x19000, 9, 9, 8, 3, 3, 9, 9, 12, 1, 1, 1, 1,
     -5, 3, -128, 127, 1, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Channel counts with 4-channel and predicated tails after the 8-channel groups.
    {"dw3x3_20_9x9", "9x9x20 k3x3 s1 p1 -> 9x9x20", "tail coverage",
     NNA_DWCONV, 0x17000, 9, 9, 20, 3, 3, 9, 9, 20, 1, 1, 1, 1,
     -3, 5, -120, 110, -8, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"dw3x3_24_8x8_lshift", "8x8x24 k3x3 s1 p1 -> 8x8x24", "shift coverage",
     NNA_DWCONV, 0x1C000, 8, 8, 24, 3, 3, 8, 8, 24, 1, 1, 1, 1,
     -7, 2, -128, 127, 1, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"dw3x3s2_13_11x11", "11x11x13 k3x3 s2 p1 -> 6x6x13", "tail coverage",
     NNA_DWCONV, 0x18000, 11, 11, 13, 3, 3, 6, 6, 13, 2, 2, 1, 1,
     128, -128, -128, 127, -9, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Padded (clipped) windows and a channel tail.
    {"avgpool3x3s2_13_11x11", "11x11x13 k3x3 s2 p1 -> 6x6x13", "tail coverage",
     NNA_AVGPOOL, 0x1A000, 11, 11, 13, 3, 3, 6, 6, 13, 2, 2, 1, 1,
     0, 0, -100, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    {"maxpool3x3s2_13_11x11", "11x11x13 k3x3 s2 p1 -> 6x6x13", "tail coverage",
     NNA_MAXPOOL, 0x1B000, 11, 11, 13, 3, 3, 6, 6, 13, 2, 2, 1, 1,
     0, 0, -100, 120, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // An odd element count (a predicated tail) and an input shift of its own.
    {"add_13x7x7", "7x7x13 + 7x7x13", "tail and shift coverage",
     NNA_ADD, 0x16000, 7, 7, 13, 0, 0, 7, 7, 13, 0, 0, 0, 0,
     5, -3, -100, 100, 0, 0, 1288490189, -2, 1717986918, 0, 20, 1431655765, -18, 0, 0, 0},
    {"ad_fc_128to128", "128 -> 128", "Autoencoder (AD) dense 2",
     NNA_FC, 0x15000, 1, 1, 128, 0, 0, 1, 1, 128, 0, 0, 0, 0,
     7, -128, -128, 127, -10, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // Depth 103 = 12 x 8 + 4 + 3 (every tail of the DSP loop) and an odd output count.
    {"fc_103to11_tails", "103 -> 11", "tail coverage",
     NNA_FC, 0x1D000, 1, 1, 103, 0, 0, 1, 1, 11, 0, 0, 0, 0,
     -9, 4, -128, 127, -9, 16384, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
    // A left shift (shift_base 1: shift 1 or 0, the general requantization), a clamp inside
    // int8 and 4k + 2 outputs.
    {"fc_72to22_lshift", "72 -> 22", "shift coverage",
     NNA_FC, 0x1E000, 1, 1, 72, 0, 0, 1, 1, 22, 0, 0, 0, 0,
     3, -5, -100, 90, 1, 200, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

constexpr size_t kMaxAct = 20 * 1024;
constexpr size_t kMaxWeights = 96 * 1024;
constexpr size_t kMaxChannels = 256;
constexpr size_t kScratchBytes = 48 * 1024;
constexpr uint32_t kMinSpan = 200000;

alignas(16) int8_t g_in1[kMaxAct];
alignas(16) int8_t g_in2[kMaxAct];
alignas(16) int8_t g_out[kMaxAct];
alignas(16) int8_t g_weights[kMaxWeights];
alignas(16) uint8_t g_scratch[kScratchBytes];
int32_t g_bias[kMaxChannels];
int32_t g_mult[kMaxChannels];
int32_t g_shift[kMaxChannels];

volatile uint32_t* const kCounter = reinterpret_cast<volatile uint32_t*>(BENCH_COUNTER_ADDR);

void PutStr(char*& p, const char* s) {
  while (*s) *p++ = *s++;
}
void PutDec(char*& p, uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
}
void PutHex(char*& p, uint32_t v) {
  for (int i = 7; i >= 0; --i) *p++ = "0123456789abcdef"[(v >> (4 * i)) & 0xF];
}

uint32_t Crc32(const void* data, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= b[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// One call of the kernel under test for case c; its status.
KernelStatus Call(const nna_case& c) {
  Scratch scratch{g_scratch, kScratchBytes};
  const PerChannelRequant quant{g_mult, g_shift};
  switch (c.op) {
    case NNA_CONV: {
      ConvParams p;
      p.input = {1, c.in_h, c.in_w, c.in_c};
      p.filter = {c.out_c, c.k_h, c.k_w, c.in_c};
      p.output = {1, c.out_h, c.out_w, c.out_c};
      p.stride = {c.stride_h, c.stride_w};
      p.padding = {c.pad_h, c.pad_w};
      p.input_offset = c.input_offset;
      p.output_offset = c.output_offset;
      p.activation = {c.act_min, c.act_max};
      return Conv(p, quant, g_in1, g_weights, g_bias, g_out, scratch);
    }
    case NNA_DWCONV: {
      DepthwiseConvParams p;
      p.input = {1, c.in_h, c.in_w, c.in_c};
      p.filter = {1, c.k_h, c.k_w, c.out_c};
      p.output = {1, c.out_h, c.out_w, c.out_c};
      p.depth_multiplier = c.out_c / c.in_c;
      p.stride = {c.stride_h, c.stride_w};
      p.padding = {c.pad_h, c.pad_w};
      p.input_offset = c.input_offset;
      p.output_offset = c.output_offset;
      p.activation = {c.act_min, c.act_max};
      return DepthwiseConv(p, quant, g_in1, g_weights, g_bias, g_out, scratch);
    }
    case NNA_FC: {
      FullyConnectedParams p;
      p.batches = 1;
      p.input_depth = c.in_h * c.in_w * c.in_c;
      p.output_depth = c.out_c;
      p.input_offset = c.input_offset;
      p.output_offset = c.output_offset;
      p.activation = {c.act_min, c.act_max};
      return FullyConnected(p, quant, g_in1, g_weights, g_bias, g_out, scratch);
    }
    case NNA_ADD: {
      AddParams p;
      p.input1_offset = c.input_offset;
      p.input2_offset = c.input_offset;
      p.output_offset = c.output_offset;
      p.left_shift = c.add_left_shift;
      p.input1 = {c.add_in1_mult, c.add_in1_shift};
      p.input2 = {c.add_in2_mult, c.add_in2_shift};
      p.output = {c.add_out_mult, c.add_out_shift};
      p.activation = {c.act_min, c.act_max};
      Shape s;
      s.rank = 4;
      s.dims[0] = 1;
      s.dims[1] = c.in_h;
      s.dims[2] = c.in_w;
      s.dims[3] = c.in_c;
      return Add(p, s, g_in1, s, g_in2, s, g_out);
    }
    case NNA_SOFTMAX: {
      SoftmaxParams p;
      p.input_beta_multiplier = c.sm_mult;
      p.input_beta_left_shift = c.sm_shift;
      p.diff_min = c.sm_diff_min;
      return Softmax(p, c.in_h, c.in_c, g_in1, g_out);
    }
    case NNA_AVGPOOL:
    case NNA_MAXPOOL: {
      PoolParams p;
      p.input = {1, c.in_h, c.in_w, c.in_c};
      p.output = {1, c.out_h, c.out_w, c.out_c};
      p.filter_h = c.k_h;
      p.filter_w = c.k_w;
      p.stride = {c.stride_h, c.stride_w};
      p.padding = {c.pad_h, c.pad_w};
      p.activation = {c.act_min, c.act_max};
      return c.op == NNA_AVGPOOL ? AvgPool(p, g_in1, g_out) : MaxPool(p, g_in1, g_out);
    }
  }
  return KernelStatus::kNoImpl;
}

// Fills the inputs of case c the way nn_anchor_cases.h prescribes; false if it does not fit.
bool Generate(const nna_case& c) {
  const size_t in_len = nna_input_len(&c), out_len = nna_output_len(&c);
  const size_t w_len = nna_weight_len(&c);
  if (in_len > kMaxAct || out_len > kMaxAct || w_len > kMaxWeights ||
      static_cast<size_t>(c.out_c) > kMaxChannels) {
    return false;
  }
  nna_fill_s8(g_in1, in_len, c.seed_base + 1, -128, 127);
  if (c.op == NNA_ADD) nna_fill_s8(g_in2, in_len, c.seed_base + 2, -128, 127);
  if (c.op == NNA_CONV || c.op == NNA_DWCONV || c.op == NNA_FC) {
    nna_fill_s8(g_weights, w_len, c.seed_base + 2, -127, 127);
    nna_fill_s32(g_bias, static_cast<size_t>(c.out_c), c.seed_base + 3, -c.bias_range,
                 c.bias_range);
    nna_fill_requant(g_mult, g_shift, c.op == NNA_FC ? 1 : static_cast<size_t>(c.out_c),
                     c.seed_base + 4, c.shift_base);
  }
  for (size_t i = 0; i < out_len; ++i) g_out[i] = 0x55;
  return true;
}

void Run(const char* table, const nna_case& c) {
  char line[160];
  char* p = line;
  PutStr(p, table);
  *p++ = ' ';
  PutStr(p, c.name);
  *p++ = ' ';
  PutStr(p, IsaName(DefaultIsa()));
  *p++ = ' ';
  if (!Generate(c)) {
    PutStr(p, "0 0 00000000 toolarge\n");
    *p = 0;
    bench_puts(line);
    return;
  }
  uint32_t t0 = *kCounter;
  const KernelStatus status = Call(c);
  uint32_t t1 = *kCounter;
  const uint32_t crc = Crc32(g_out, nna_output_len(&c));
  uint64_t span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
  uint32_t reps = 1;
  if (span < kMinSpan) {
    reps = kMinSpan / (span > 0 ? static_cast<uint32_t>(span) : 1u) + 1;
    t0 = *kCounter;
    for (uint32_t r = 0; r < reps; ++r) Call(c);
    t1 = *kCounter;
    span = static_cast<uint64_t>(t1 - t0) * BENCH_TICK_NS;
  }
  PutDec(p, (span + reps / 2) / reps);
  *p++ = ' ';
  PutDec(p, nna_macs(&c));
  *p++ = ' ';
  PutHex(p, crc);
  PutStr(p, status == KernelStatus::kOk ? " ok\n" : " error\n");
  *p = 0;
  bench_puts(line);
}

// BENCH_ONLY="case": run that one case only (profile.py traces it).
bool Selected(const char* name) {
#ifdef BENCH_ONLY
  const char* want = BENCH_ONLY;
  while (*want != 0 && *want == *name) ++want, ++name;
  return *want == 0 && *name == 0;
#else
  (void)name;
  return true;
#endif
}

}  // namespace

int main() {
  for (int i = 0; i < NNA_NUM_CASES; ++i) {
    if (Selected(nna_cases[i].name)) Run("anchor", nna_cases[i]);
  }
  for (const nna_case& c : kLayers) {
    if (Selected(c.name)) Run("layer", c);
  }
  bench_puts("bench: done\n");
  return 0;
}
