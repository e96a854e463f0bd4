// Cortex-M per-operator cost: kernel work from the graph, then the formulas of cortex_m.h.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "cortex_m/cost_table.h"
#include "cortex_m/internal.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/cortex_m.h"
#include "mica/model/op_info.h"

namespace mica {
namespace estimate {

using kernels::Isa;

namespace {

// Operators costed as copies of contiguous rows (bytes and rows, not elements). TRANSPOSE is
// data movement too, but places each element by index arithmetic: it is costed per element.
bool CopiesRows(OpKind k) { return HasOpTrait(k, kCopiesRows); }

bool Transcendental(OpKind k) { return HasOpTrait(k, kTranscendental); }

// Per-element cost class of the remaining elementwise/unary operators.
enum class ElemClass { kUnary, kLut, kOther, kIndex };

ElemClass ElementClass(OpKind k) {
  if (HasOpTrait(k, kRemapsElements)) return ElemClass::kIndex;
  // Integer kernels evaluate transcendental functions (and DIV's reciprocal) through tables.
  if (Transcendental(k) || k == OpKind::kDiv) return ElemClass::kLut;
  switch (k) {
    case OpKind::kRelu: case OpKind::kRelu6: case OpKind::kReluN1To1: case OpKind::kAbs:
    case OpKind::kNeg:
      return ElemClass::kUnary;  // a compare or a sign flip per element
    default:
      return ElemClass::kOther;
  }
}

std::string LowerName(OpKind k) { return absl::AsciiStrToLower(std::string(OpKindName(k))); }

// Bytes per weight load and how many outputs share one load, for flash wait states.
double WeightLoadsPerMac(OpKind k, Isa isa) {
  double bytes = isa == Isa::kMve ? 16 : isa == Isa::kDsp ? 4 : 1;
  double reuse = 1;
  if (k == OpKind::kConv2D || k == OpKind::kTransposeConv) reuse = isa == Isa::kMve ? 4 : 2;
  return 1.0 / (bytes * reuse);
}

}  // namespace

Isa CortexMVariant(const CortexMConfig& cpu) {
  if (cpu.has_mve) return Isa::kMve;
  if (cpu.has_dsp) return Isa::kDsp;
  return Isa::kScalar;
}

double CortexMCodeFactor(const CortexMConfig& cpu) {
  return cpu.cpu == "cortex-m0" ? cortex_m::kArmv6mFactor : 1.0;
}

namespace {

// Kernel rows (columns) inside the input for output row (column) `o`.
int64_t ValidKernelTaps(int32_t in, int32_t o, int32_t k, int32_t stride, int32_t pad) {
  const int64_t base = int64_t{o} * stride - pad;
  const int64_t lo = std::max<int64_t>(0, -base), hi = std::min<int64_t>(k, in - base);
  return std::max<int64_t>(0, hi - lo);
}

// Average count of kernel rows (columns) inside the input per output row (column): kernels
// that skip the padding do that much work per output pixel.
double ValidKernelSpan(int32_t in, int32_t out, int32_t k, int32_t stride, int32_t pad) {
  if (out <= 0 || k <= 0) return std::max(1, k);
  int64_t sum = 0;
  for (int32_t o = 0; o < out; ++o) sum += ValidKernelTaps(in, o, k, stride, pad);
  return double(sum) / out;
}

// TFLite's SAME padding before the map (the smaller half), for a window of extent `k`.
int32_t SamePadBefore(int32_t in, int32_t out, int32_t stride, int64_t k) {
  return static_cast<int32_t>(
      std::max<int64_t>(0, (int64_t{out} - 1) * stride + k - in) / 2);
}
double ValidKernelRows(const CortexMWork& w) {
  return ValidKernelSpan(w.in_h, w.out_h, w.k_h, std::max(1, w.stride_h), w.pad_h);
}
double ValidKernelCols(const CortexMWork& w) {
  return ValidKernelSpan(w.in_w, w.out_w, w.k_w, std::max(1, w.stride_w), w.pad_w);
}

// The CMSIS-NN (TFLite Micro) formulas of cortex_m.h.
CortexMOpCost CmsisNnKernelCost(const CortexMWork& w, Isa isa, const CortexMConfig& cpu) {
  const cortex_m::VariantCosts& c = cortex_m::CostsFor(isa);
  CortexMOpCost r;
  r.isa = isa;
  const std::string suffix = absl::StrCat("/", kernels::IsaName(isa));
  const bool is_float = w.dtype == DType::kFloat32 || w.dtype == DType::kFloat16;
  const bool is_s16 = w.dtype == DType::kInt16;
  const std::string type_tag = is_float ? "f32" : is_s16 ? "s16" : "s8";

  const double n = std::max(1, w.batch);
  const double pixels = n * w.out_h * w.out_w;           // P
  const double taps = static_cast<double>(w.k_h) * w.k_w;  // T
  const double outputs = pixels * w.out_c;               // O
  const double elements = w.elements > 0 ? double(w.elements) : outputs;
  double macs = double(w.macs);
  double instr = c.call;

  switch (w.kind) {
    case OpKind::kConv2D: {
      const double k = taps * w.in_c;
      macs = outputs * k;
      bool one_by_one = w.k_h == 1 && w.k_w == 1 && w.stride_h == 1 && w.stride_w == 1 &&
                        w.pad_h == 0 && w.pad_w == 0;
      if (one_by_one) {
        r.kernel = absl::StrCat("arm_convolve_1x1_", type_tag, "_fast");
        instr += c.conv1_mac * macs + c.conv1_out * outputs;
      } else {
        r.kernel = absl::StrCat("arm_convolve_", type_tag);
        instr += c.conv_mac * macs + c.conv_col * pixels * k + c.conv_out * outputs;
      }
      break;
    }
    case OpKind::kTransposeConv: {
      // Scatter form: every input pixel times the whole filter.
      const double in_pixels = n * w.in_h * w.in_w;
      macs = in_pixels * w.in_c * taps * w.out_c;
      r.kernel = absl::StrCat("arm_transpose_conv_", type_tag);
      instr += c.conv_mac * macs + c.conv_col * in_pixels * w.in_c + c.conv_out * outputs;
      r.notes.push_back("transpose convolution: cost extrapolated from convolution (uncalibrated)");
      break;
    }
    case OpKind::kDepthwiseConv2D: {
      macs = outputs * taps;
      bool three = w.k_h == 3 && w.k_w == 3 && w.depth_multiplier == 1 && w.pad_h <= 1 &&
                   w.pad_w <= 1;
      double factor = 1.0;
      if (w.depth_multiplier != 1) {
        // arm_depthwise_conv_s8: a tile kernel of 4 outputs per input channel when the
        // multiplier is a multiple of 4 (batch 1), else the generic one; both skip the taps
        // that fall in the padding.
        r.kernel = absl::StrCat("arm_depthwise_conv_", type_tag);
        const double rows = ValidKernelRows(w), valid = rows * ValidKernelCols(w);
        const double m = w.depth_multiplier, cin = std::max(1, w.in_c);
        if (w.depth_multiplier % 4 == 0 && w.batch <= 1) {
          instr += pixels * (c.dwm_pix + cin * (m / 4) *
                                             (c.dwm_tile + rows * c.dwm_row + valid * c.dwm_tap4 +
                                              c.dwm_req4));
        } else {
          instr += outputs * (c.dwg_out + valid * c.dwg_tap);
        }
        r.notes.push_back(
            "depthwise with channel multiplier > 1: cost from arm_depthwise_conv_s8's loops "
            "(no measured reference)");
        break;
      } else if (three && isa != Isa::kMve) {
        r.kernel = absl::StrCat("arm_depthwise_conv_3x3_", type_tag);
      } else {
        r.kernel = absl::StrCat("arm_depthwise_conv_", type_tag, "_opt");
      }
      instr += factor * (c.dw_mac * macs + c.dw_out * outputs + c.dw_tap * pixels * taps);
      break;
    }
    case OpKind::kFullyConnected:
    case OpKind::kBatchMatMul:
    case OpKind::kSvdf:
    case OpKind::kUnidirectionalSequenceLstm: {
      r.kernel = w.kind == OpKind::kFullyConnected
                     ? absl::StrCat("arm_fully_connected_", type_tag)
                 : w.kind == OpKind::kBatchMatMul ? absl::StrCat("arm_batch_matmul_", type_tag)
                 : w.kind == OpKind::kSvdf        ? absl::StrCat("arm_svdf_", type_tag)
                                                  : absl::StrCat("arm_lstm_unidirectional_",
                                                                 type_tag);
      if (w.kind == OpKind::kUnidirectionalSequenceLstm) {
        // Per step: 4 gates x (2 vec_mat_mul_result_acc + an s16 activation), the cell update
        // (s16 multiplies) and tanh of the cell, all over U units.
        const double su = double(std::max(1, w.steps)) * std::max(1, w.out_c);
        instr += c.fc_mac * macs + su * (8 * c.rec_row + 5 * c.act16_elem + 3 * c.ew16_elem) +
                 std::max(1, w.steps) * c.rec_step;
        r.notes.push_back("LSTM: cost from arm_lstm_unidirectional_s8's structure (no measured "
                          "reference)");
      } else if (w.kind == OpKind::kSvdf && w.svdf_features > 0) {
        // State shift, feature matmul, time dot products, bias and rank reduction, requantize.
        const double f = w.svdf_features, mem = std::max(1, w.svdf_memory);
        instr += c.fc_mac * f * std::max(1, w.in_c) + c.rec_row * f + f * mem * c.svdf_time +
                 f * c.svdf_feat + c.copy_byte * f * mem * std::max(1, w.state_bytes) +
                 double(std::max(1, w.out_c)) * std::max(1, w.batch) * c.svdf_req;
        r.notes.push_back("SVDF: cost from arm_svdf_s8's structure (no measured reference)");
      } else {
        // MVE: every row's dot product runs whole 16-byte vector steps (the last one
        // predicated), so a short depth costs a full vector (fc 8 -> 128: 16 lanes for 8).
        double mac_steps = macs;
        if (isa == Isa::kMve && macs > 0 && elements > 0) {
          const double depth = macs / elements;
          mac_steps = elements * std::ceil(depth / 16) * 16;
        }
        instr += c.fc_mac * mac_steps + c.fc_out * elements;
        if (w.kind == OpKind::kSvdf) {
          instr += 4 * c.mul_elem * elements;
          r.notes.push_back("recurrent op: matmul formula plus gate arithmetic (uncalibrated)");
        }
      }
      break;
    }
    case OpKind::kAdd:
    case OpKind::kSub:
      r.kernel = absl::StrCat("arm_elementwise_add_", type_tag);
      instr += c.add_elem * elements;
      break;
    case OpKind::kMul:
    case OpKind::kSquaredDifference:
      r.kernel = absl::StrCat("arm_elementwise_mul_", type_tag);
      instr += c.mul_elem * elements;
      break;
    case OpKind::kAveragePool2D: {
      r.kernel = absl::StrCat("arm_avgpool_", type_tag);
      const double window = outputs * taps;
      instr += c.avg_out * outputs + c.avg_row * outputs * w.k_h + c.avg_elem * window;
      break;
    }
    case OpKind::kMaxPool2D: {
      r.kernel = absl::StrCat("arm_max_pool_", type_tag);
      const double window = outputs * taps;
      instr += c.mp_tap * pixels * taps + c.mp_pix * pixels + c.mp_out * outputs +
               c.mp_elem * window;
      break;
    }
    case OpKind::kSoftmax: {
      r.kernel = absl::StrCat("arm_softmax_", type_tag);
      const double rows = std::max<int64_t>(1, w.rows);
      const double row_len = std::max(1.0, elements / rows);
      double p = 1.0;
      if (w.softmax_diff_min < 0 && w.dtype == DType::kInt8) {
        p = std::min(1.0, (-double(w.softmax_diff_min) + 1.0) / 256.0);
      }
      instr += rows * (c.sm_row + row_len * (c.sm_cheap + p * c.sm_exp));
      break;
    }
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax:
    case OpKind::kArgMax:
    case OpKind::kArgMin: {
      // One pass over the input plus a requantization per output.
      r.kernel = absl::StrCat("reference_", LowerName(w.kind), "_", type_tag);
      const double in_elems = w.bytes > 0 ? double(w.bytes) : elements;
      instr += 4.0 * in_elems + c.fc_out * elements;
      r.notes.push_back("reduction: reference kernel estimate (uncalibrated)");
      break;
    }
    case OpKind::kQuantize:
    case OpKind::kDequantize: {
      r.kernel = absl::StrCat("reference_", LowerName(w.kind));
      // One side of (de)quantize is float, except an integer requantize.
      bool float_side = !(w.kind == OpKind::kQuantize && w.dtype != DType::kFloat32);
      const cortex_m::FloatCosts& f = cortex_m::FloatCostsFor(cpu.has_fpu);
      instr += (float_side ? f.elem : c.other_elem) * elements;
      if (!cpu.has_fpu) r.notes.push_back("float conversion on a CPU without FPU: soft-float");
      break;
    }
    case OpKind::kOpaque:
      r.kernel = "unknown";
      instr = 0;
      r.notes.push_back("unknown operator: not costed");
      break;
    default:
      if (CopiesRows(w.kind)) {
        r.kernel = absl::StrCat("copy_", LowerName(w.kind));
        instr += c.copy_byte * double(w.bytes) + c.copy_row * double(std::max<int64_t>(1, w.rows));
      } else {
        r.kernel = absl::StrCat("reference_", LowerName(w.kind), "_", type_tag);
        switch (ElementClass(w.kind)) {
          case ElemClass::kUnary: instr += c.unary_elem * elements; break;
          case ElemClass::kLut: instr += c.lut_elem * elements; break;
          case ElemClass::kIndex: instr += 8.0 * elements; break;
          case ElemClass::kOther: instr += c.other_elem * elements; break;
        }
      }
      break;
  }

  if (is_float && w.kind != OpKind::kOpaque && !CopiesRows(w.kind) &&
      w.kind != OpKind::kQuantize && w.kind != OpKind::kDequantize) {
    // Float models run TFLite-reference-style float kernels, whatever the ISA.
    const cortex_m::FloatCosts& f = cortex_m::FloatCostsFor(cpu.has_fpu);
    double window = (w.kind == OpKind::kAveragePool2D || w.kind == OpKind::kMaxPool2D)
                        ? outputs * taps : 0;
    instr = c.call + f.mac * macs + f.elem * (elements + window) +
            (Transcendental(w.kind) ? f.transcendental * elements : 0);
    r.kernel = absl::StrCat("reference_", LowerName(w.kind), "_f32");
    if (!cpu.has_fpu) {
      r.notes.push_back(absl::StrCat("float32 on ", cpu.cpu.empty() ? "a CPU" : cpu.cpu,
                                     " without FPU: soft-float library calls"));
    }
  } else {
    r.kernel += suffix;
    if (is_s16) instr *= cortex_m::kInt16Factor;
  }
  if (w.broadcast) {
    instr *= 1.5;
    r.notes.push_back("broadcasting elementwise op: reference kernel (uncalibrated)");
  }

  r.macs = static_cast<int64_t>(macs);
  r.instructions = instr * (isa == Isa::kScalar ? CortexMCodeFactor(cpu) : 1.0);
  if (cpu.flash_wait_states > 0 && w.weight_bytes > 0) {
    double loads = macs > 0 ? macs * WeightLoadsPerMac(w.kind, isa)
                            : double(w.weight_bytes) / (isa == Isa::kScalar ? 1 : 4);
    r.flash_wait_cycles = loads * cpu.flash_wait_states;
  }
  r.cycles = r.instructions + r.flash_wait_cycles;
  r.scratch_bytes = cortex_m::ScratchBytes(w, isa, r.kernel);
  r.code_bytes = cortex_m::CodeBytes(w, isa);
  return r;
}

// Lanes of one multiply-accumulate step of mica's bodies: 1 scalar, 4 DSP (SIMD32 on four
// bytes), 16 MVE (one 128-bit vector of int8).
double Lanes(Isa isa) { return isa == Isa::kMve ? 16 : isa == Isa::kDsp ? 4 : 1; }

}  // namespace

CortexMMicaTerms CortexMMicaTermsFor(const CortexMWork& w, Isa isa) {
  using cortex_m::MicaFamily;
  CortexMMicaTerms t;
  const bool is_float = w.dtype == DType::kFloat32 || w.dtype == DType::kFloat16;
  const double all = w.elements > 0 ? double(w.elements) : 0.0;
  if (w.kind == OpKind::kQuantize) {
    // float -> int: one float multiply-round-clamp per element; int -> int: one integer
    // requantization per element (the same loop for every width).
    t.family = cortex_m::MicaFamilyName(MicaFamily::kQuantize);
    t.terms = {1, is_float ? all : 0, is_float ? 0 : all, 0, 0, 0, 0};
    return t;
  }
  if (w.kind == OpKind::kDequantize) {
    t.family = cortex_m::MicaFamilyName(MicaFamily::kDequantize);
    t.terms = {1, all, 0, 0, 0, 0, 0};
    return t;
  }
  if (is_float) return t;
  const bool s16 = w.dtype == DType::kInt16;
  const double n = std::max(1, w.batch);
  const double pixels = n * w.out_h * w.out_w;
  const double taps = static_cast<double>(w.k_h) * w.k_w;
  // Depthwise and pooling bodies skip the window taps in the padding: the average count of
  // taps inside the input per output pixel.
  const double valid = ValidKernelRows(w) * ValidKernelCols(w);
  const double outputs = pixels * w.out_c;
  const double elements = w.elements > 0 ? double(w.elements) : outputs;
  double lanes = Lanes(isa);
  // floor(x / lanes) and x mod lanes, times `times`.
  auto vec = [&](double x, double times) { return times * std::floor(x / lanes); };
  // The remainder after the full steps: DSP and scalar bodies finish it one element at a time;
  // MVE bodies finish a dot product with one predicated vector step, and a channel loop with
  // 4-lane (int32) steps.
  const bool mve = isa == Isa::kMve;
  auto tail = [&](double x, double times) {
    const double rest = std::fmod(x, lanes);
    return times * (mve ? (rest > 0 ? 1.0 : 0.0) : rest);
  };
  auto ctail = [&](double x, double times) {
    const double rest = std::fmod(x, lanes);
    return times * (mve ? std::ceil(rest / 4) : rest);
  };
  auto set = [&](MicaFamily f, std::array<double, kCortexMMicaTerms> terms) {
    t.family = cortex_m::MicaFamilyName(f);
    t.terms = terms;
  };
  switch (w.kind) {
    case OpKind::kConv2D: {
      const double k = taps * w.in_c;
      const bool one_by_one = w.k_h == 1 && w.k_w == 1 && w.stride_h == 1 && w.stride_w == 1 &&
                              w.pad_h == 0 && w.pad_w == 0;
      if (!s16 && w.groups > 1) {
        // Grouped: every variant loops over the groups, each an im2col convolution of its
        // channel slice (k = taps x channels per group).
        const double kg = k / w.groups;
        set(MicaFamily::kConvGrouped,
            {1, outputs * kg, outputs, pixels * k, pixels * w.groups, 0, 0});
      } else if (s16) {
        // Conv16x8 has scalar and DSP bodies only: MVE builds run the DSP one.
        lanes = Lanes(isa == Isa::kMve ? Isa::kDsp : isa);
        // Per output: a loop over the kernel rows inside the input, in each a run of the
        // in-bounds columns x in_c products (the scalar body loops per tap, the DSP body pairs
        // the run); padding taps cost nothing.
        const double k_c = double(w.in_c) / std::max(1, w.groups);
        const double rows_per_pixel = ValidKernelRows(w);  // average over output rows
        double run_vec = 0, run_tail = 0, cols = 0;       // summed over output columns
        const int32_t out_w = std::max(1, w.out_w);
        for (int32_t ox = 0; ox < out_w; ++ox) {
          const double taps_x =
              double(ValidKernelTaps(w.in_w, ox, w.k_w, std::max(1, w.stride_w), w.pad_w));
          run_vec += vec(taps_x * k_c, 1);
          run_tail += tail(taps_x * k_c, 1);
          cols += taps_x;
        }
        // Per output channel and output row: kernel rows x (sums over the output columns).
        const double per_col = n * w.out_h * w.out_c * rows_per_pixel;
        set(MicaFamily::kConvS16, {1, per_col * run_vec, per_col * run_tail, outputs, pixels,
                                   per_col * cols, per_col * out_w});
      } else if (w.k_h == 1 && w.k_w > 1) {
        // Kernel height 1 (1xN, the 1-D convolutions): the DSP body reads each output's one
        // kernel row in place (no im2col).
        set(MicaFamily::kConv1xn,
            {1, vec(k, outputs), tail(k, outputs), outputs, pixels, pixels * k, w.out_c * k / lanes});
      } else if (one_by_one) {
        set(MicaFamily::kConv1x1,
            {1, vec(k, outputs), tail(k, outputs), outputs, pixels, 0, w.out_c * k / lanes});
      } else if (isa == Isa::kDsp && w.in_c % 4 != 0) {
        // The DSP body's two-pixel path (channels not a multiple of 4: first layers on RGB or
        // audio input): two pixels' int16 columns, 2 filter rows x 2 columns per pass, each
        // filter row widened per pass (the four-pixel path widens it once for four pixels).
        set(MicaFamily::kConvPair,
            {1, vec(k, outputs), tail(k, outputs), outputs, pixels, pixels * k, w.out_c * k / lanes});
      } else {
        set(MicaFamily::kConv,
            {1, vec(k, outputs), tail(k, outputs), outputs, pixels, pixels * k, w.out_c * k / lanes});
      }
      break;
    }
    case OpKind::kDepthwiseConv2D:
      if (s16) {
        // Depthwise16x8 has scalar and DSP bodies (four channels per step) only: MVE builds
        // run the DSP one.
        lanes = Lanes(isa == Isa::kMve ? Isa::kDsp : isa);
        const double rest = std::fmod(double(w.out_c), lanes);
        set(MicaFamily::kDepthwiseS16, {1, vec(w.out_c, pixels * valid), rest * pixels * valid,
                                        outputs, pixels, pixels * valid, 0});
        break;
      }
      if (w.depth_multiplier != 1) {
        // Channel multiplier > 1: the scalar body on every variant, one output at a time.
        set(MicaFamily::kDepthwiseMult,
            {1, outputs * valid, outputs, pixels * valid, pixels, 0, 0});
        break;
      }
      set(MicaFamily::kDepthwise, {1, vec(w.out_c, pixels * valid), ctail(w.out_c, pixels * valid),
                                   outputs, pixels, pixels * valid, w.out_c * taps / lanes});
      break;
    case OpKind::kFullyConnected: {
      if (s16) {
        // FullyConnected16x8 has scalar and DSP bodies only: MVE builds run the DSP one.
        lanes = Lanes(isa == Isa::kMve ? Isa::kDsp : isa);
        const double out_n = std::max(1, w.out_c);
        const double rows = std::max(1.0, elements / out_n);
        const double k = w.macs > 0 ? double(w.macs) / std::max(1.0, elements) : 1.0;
        set(MicaFamily::kFullyConnectedS16,
            {1, vec(k, rows * out_n), std::fmod(k, lanes) * rows * out_n, rows * out_n, rows, 0,
             0});
        break;
      }
      const double out_n = std::max(1, w.out_c);
      const double rows = std::max(1.0, elements / out_n);
      const double k = w.macs > 0 ? double(w.macs) / std::max(1.0, elements) : 1.0;
      set(MicaFamily::kFullyConnected,
          {1, vec(k, rows * out_n), tail(k, rows * out_n), rows * out_n, rows, rows * k,
           out_n * k / lanes});
      break;
    }
    case OpKind::kTransposeConv: {
      if (s16) break;
      const double reach = taps / std::max(1, w.stride_h * w.stride_w);
      set(MicaFamily::kTransposeConv, {1, vec(w.in_c, outputs * reach),
                                       ctail(w.in_c, outputs * reach), outputs, pixels,
                                       pixels * reach, taps * w.in_c * w.out_c / lanes});
      break;
    }
    case OpKind::kAdd:
    case OpKind::kSub:
    case OpKind::kMul:
      if (s16) break;
      if (w.broadcast) {
        set(w.kind == OpKind::kMul ? MicaFamily::kMulBroadcast : MicaFamily::kAddBroadcast,
            {1, elements, 0, 0, 0, 0, 0});
        break;
      }
      set(w.kind == OpKind::kMul ? MicaFamily::kMul : MicaFamily::kAdd,
          {1, vec(elements, 1), tail(elements, 1), 0, 0, 0, 0});
      break;
    case OpKind::kMinimum:
    case OpKind::kMaximum: {
      // Rows of same-shape operands: MVE 16 lanes a step, DSP two words a step (8 int8
      // lanes), scalar one element; then the tail. Broadcasts keep the generic formula.
      if (s16 || w.broadcast) break;
      lanes = mve ? 16 : isa == Isa::kDsp ? 8 : 1;
      set(MicaFamily::kMinMax, {1, vec(elements, 1), tail(elements, 1), 0, 0, 0, 0});
      break;
    }
    case OpKind::kAveragePool2D:
    case OpKind::kMaxPool2D:
      if (s16) break;
      set(w.kind == OpKind::kMaxPool2D ? MicaFamily::kMaxPool : MicaFamily::kAvgPool,
          {1, vec(w.out_c, pixels * valid), ctail(w.out_c, pixels * valid), outputs, pixels,
           pixels * valid, 0});
      break;
    case OpKind::kSoftmax:
      if (s16) {
        // One scalar body: per element (maximum, exponential table, sum, reciprocal scaling)
        // and per row.
        set(MicaFamily::kSoftmaxS16,
            {1, elements, double(std::max<int64_t>(1, w.rows)), 0, 0, 0, 0});
        break;
      }
    {
      // Inputs further than diff_min below their row's maximum skip the exponential: the share
      // that takes it, for inputs spread over the int8 range (as the CMSIS-NN formula).
      double p = 1.0;
      if (w.softmax_diff_min < 0) p = std::min(1.0, (-double(w.softmax_diff_min) + 1.0) / 256.0);
      set(MicaFamily::kSoftmax, {1, elements * p, elements * (1 - p),
                                 double(std::max<int64_t>(1, w.rows)), 0, 0, 0});
    }
      break;
    case OpKind::kUnidirectionalSequenceLstm: {
      if (s16) break;
      // One scalar body on every variant: the gate matmuls, then per step and unit the gate
      // activations and the cell update.
      const double steps = std::max<double>(1, elements / std::max(1, w.out_c));
      set(MicaFamily::kLstm, {1, double(w.macs), elements, steps, 0, 0, 0});
      break;
    }
    case OpKind::kRelu:
    case OpKind::kRelu6:
    case OpKind::kReluN1To1:
    case OpKind::kHardSwish:
    case OpKind::kLeakyRelu:
      // One scalar body per function on every variant, element by element.
      if (s16) break;
      if (w.kind == OpKind::kRelu6 || w.kind == OpKind::kRelu || w.kind == OpKind::kReluN1To1) {
        // RELU6 keeps the input's quantization (a clamp); RELU and RELU_N1_TO_1 requantize.
        const bool clamp = w.kind == OpKind::kRelu6;
        set(MicaFamily::kRelu, {1, clamp ? elements : 0, clamp ? 0 : elements, 0, 0, 0, 0});
        break;
      }
      set(w.kind == OpKind::kHardSwish ? MicaFamily::kHardSwish : MicaFamily::kLeakyRelu,
          {1, elements, 0, 0, 0, 0, 0});
      break;
    case OpKind::kLogistic:
    case OpKind::kTanh: {
      // Fixed-point function per element; from 512 elements on, the 256 possible results are
      // tabulated first and the elements mapped through the table.
      if (s16) break;
      const bool table = elements >= 512;
      set(w.kind == OpKind::kLogistic ? MicaFamily::kLogistic : MicaFamily::kTanh,
          {1, table ? 0 : elements, table ? 1.0 : 0.0, table ? elements : 0, 0, 0, 0});
      break;
    }
    case OpKind::kMean:
      // The reduction pass over the input, then one requantization per output.
      if (s16) break;
      // Reducing over the innermost axis reads contiguous runs; other axes walk strides.
      set(MicaFamily::kMean, {1, w.inner_contiguous ? 0 : double(w.bytes),
                              w.inner_contiguous ? double(w.bytes) : 0, elements, 0, 0, 0});
      break;
    case OpKind::kSvdf: {
      // One scalar body: the state shift and the time dot products (per state element), the
      // feature products (per filter and input), per filter, per unit output.
      if (w.svdf_features <= 0 || w.svdf_memory <= 0) break;
      const double b = std::max(1, w.steps), f = w.svdf_features;
      set(MicaFamily::kSvdf, {1, b * f * w.svdf_memory, b * f * w.in_c, b * f, elements, 0, 0});
      break;
    }
    case OpKind::kTranspose:
      // A box copy element by element: per element, and per innermost output run.
      // Runs along a kept innermost axis are copied whole (per byte and per run).
      if (w.inner_contiguous) {
        set(MicaFamily::kTranspose,
            {1, 0, 0, double(w.bytes), double(std::max<int64_t>(1, w.rows)), 0, 0});
      } else {
        set(MicaFamily::kTranspose,
            {1, elements, double(std::max<int64_t>(1, w.rows)), 0, 0, 0, 0});
      }
      break;
    case OpKind::kPrelu:
      // One scalar body: per element, the slope broadcast and two requantizations.
      if (s16) break;
      set(MicaFamily::kPrelu, {1, elements, 0, 0, 0, 0, 0});
      break;
    case OpKind::kPad:
    case OpKind::kPadV2:
      // Fill and copy: per output element, and per contiguous output row; int16 elements copy
      // twice the bytes (one body for every element width).
      set(MicaFamily::kPad, {1, elements, double(std::max<int64_t>(1, w.rows)), s16 ? elements : 0,
                             0, 0, 0});
      break;
    default:
      if (CopiesRows(w.kind)) {
        set(MicaFamily::kCopy,
            {1, double(w.bytes), 0, double(std::max<int64_t>(1, w.rows)), 0, 0, 0});
      }
      break;
  }
  return t;
}

std::vector<std::string> CortexMMicaFamilies() {
  std::vector<std::string> out;
  for (int f = 0; f < static_cast<int>(cortex_m::MicaFamily::kCount); ++f) {
    out.push_back(cortex_m::MicaFamilyName(static_cast<cortex_m::MicaFamily>(f)));
  }
  return out;
}

bool CortexMMicaCoefficients(const std::string& family, Isa isa,
                             std::array<double, kCortexMMicaTerms>* out) {
  for (int f = 0; f < static_cast<int>(cortex_m::MicaFamily::kCount); ++f) {
    const auto fam = static_cast<cortex_m::MicaFamily>(f);
    if (family != cortex_m::MicaFamilyName(fam)) continue;
    const cortex_m::MicaCoefficients* c = cortex_m::MicaCoefficientsFor(fam, isa);
    if (c == nullptr) return false;
    for (int i = 0; i < kCortexMMicaTerms; ++i) (*out)[i] = (*c)[i];
    return true;
  }
  return false;
}

CortexMOpCost CortexMKernelCost(const CortexMWork& w, Isa isa, const CortexMConfig& cpu,
                                Runtime runtime) {
  CortexMOpCost r = CmsisNnKernelCost(w, isa, cpu);
  if (runtime != Runtime::kMica || w.kind == OpKind::kOpaque) return r;
  const CortexMMicaTerms t = CortexMMicaTermsFor(w, isa);
  std::array<double, kCortexMMicaTerms> coef{}, dispatch{};
  CortexMMicaCoefficients("dispatch", isa, &dispatch);
  if (t.family.empty() || !CortexMMicaCoefficients(t.family, isa, &coef)) {
    // No measured mica kernel for this work: CMSIS-NN's cost stands in for it.
    r.instructions += dispatch[0];
    r.notes.push_back("no measured mica kernel for this operator: CMSIS-NN's cost used");
  } else {
    double instr = dispatch[0];
    for (int i = 0; i < kCortexMMicaTerms; ++i) instr += coef[i] * t.terms[i];
    r.instructions = instr * (isa == Isa::kScalar ? CortexMCodeFactor(cpu) : 1.0);
    r.kernel = absl::StrCat("mica_", t.family, "/", kernels::IsaName(isa));
    // The CMSIS-NN notes (uncalibrated formulas) do not describe mica's kernels.
    r.notes.clear();
  }
  r.cycles = r.instructions + r.flash_wait_cycles;
  return r;
}

absl::StatusOr<CortexMOpCost> CortexMOpCostFor(const Graph& graph, int op_index,
                                               const CortexMConfig& cpu, Isa isa,
                                               Runtime runtime) {
  MICA_ASSIGN_OR_RETURN(CortexMWork w, DescribeCortexMWork(graph, op_index));
  return CortexMKernelCost(w, isa, cpu, runtime);
}

absl::StatusOr<CortexMOpCost> CortexMOpCostFor(const Graph& graph, int op_index,
                                               const CortexMConfig& cpu, Runtime runtime) {
  return CortexMOpCostFor(graph, op_index, cpu, CortexMVariant(cpu), runtime);
}

namespace {

// NHWC view of a tensor shape (leading 1s for lower ranks).
struct Nhwc {
  int32_t n = 1, h = 1, w = 1, c = 1;
};

Nhwc ToNhwc(const std::vector<int32_t>& s) {
  Nhwc r;
  size_t k = s.size();
  if (k >= 1) r.c = s[k - 1];
  if (k >= 2) r.w = s[k - 2];
  if (k >= 3) r.h = s[k - 3];
  if (k >= 4) {
    r.n = 1;
    for (size_t i = 0; i + 3 < k; ++i) r.n *= s[i];
  }
  return r;
}

int64_t Elements(const Tensor& t) { return t.num_elements(); }

}  // namespace

absl::StatusOr<CortexMWork> DescribeCortexMWork(const Graph& graph, int op_index) {
  if (graph.subgraphs.empty()) return absl::InvalidArgumentError("graph has no subgraph");
  const Subgraph& sg = graph.main();
  if (op_index < 0 || op_index >= static_cast<int>(sg.ops.size())) {
    return absl::InvalidArgumentError(absl::StrCat("operator index ", op_index, " out of range"));
  }
  const Operator& op = sg.ops[op_index];
  auto where = [&]() {
    return absl::StrCat("operator ", op_index, " (", std::string(op.name()), ")");
  };
  auto tensor = [&](int idx) -> const Tensor* {
    if (idx < 0 || idx >= static_cast<int>(sg.tensors.size())) return nullptr;
    return &sg.tensors[idx];
  };
  auto input = [&](size_t i) -> const Tensor* {
    return i < op.inputs.size() ? tensor(op.inputs[i]) : nullptr;
  };
  const Tensor* out = op.outputs.empty() ? nullptr : tensor(op.outputs[0]);

  CortexMWork w;
  w.kind = op.kind;
  // The activation type: the first non-constant input, else the output.
  const Tensor* act = nullptr;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor* t = input(i);
    if (t != nullptr && !t->is_constant()) {
      act = t;
      break;
    }
  }
  if (act == nullptr) act = out;
  if (act != nullptr) w.dtype = act->dtype;
  if (op.kind == OpKind::kQuantize && out != nullptr && act != nullptr &&
      act->dtype != DType::kFloat32) {
    w.dtype = act->dtype;  // requantize int -> int
  }
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Tensor* t = input(i);
    if (t != nullptr && t->is_constant()) w.weight_bytes += static_cast<int64_t>(t->num_bytes());
  }
  if (out != nullptr) {
    w.elements = Elements(*out);
    w.bytes = static_cast<int64_t>(out->num_bytes());
    Nhwc o = ToNhwc(out->shape);
    w.batch = o.n;
    w.out_h = o.h;
    w.out_w = o.w;
    w.out_c = o.c;
  }

  auto need = [&](const Tensor* t, size_t rank, const char* what) -> absl::Status {
    if (t == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": missing ", what));
    }
    if (t->shape.size() != rank) {
      return absl::InvalidArgumentError(absl::StrCat(where(), ": ", what, " '", t->name,
                                                     "' has rank ", t->shape.size(),
                                                     ", expected ", rank));
    }
    return absl::OkStatus();
  };

  switch (op.kind) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D: {
      const Tensor* in = input(0);
      const Tensor* filter = input(1);
      MICA_RETURN_IF_ERROR(need(in, 4, "input"));
      MICA_RETURN_IF_ERROR(need(filter, 4, "filter"));
      MICA_RETURN_IF_ERROR(need(out, 4, "output"));
      w.in_h = in->shape[1];
      w.in_w = in->shape[2];
      w.in_c = in->shape[3];
      w.k_h = filter->shape[1];
      w.k_w = filter->shape[2];
      if (op.kind == OpKind::kConv2D && filter->shape[3] > 0 && w.in_c % filter->shape[3] == 0) {
        w.groups = std::max(1, w.in_c / filter->shape[3]);
      }
      int32_t dil_h = 1, dil_w = 1;
      Padding pad = Padding::kValid;
      if (op.kind == OpKind::kConv2D &&
          std::holds_alternative<Conv2DAttrs>(op.attrs)) {
        const auto& a = op.Attrs<Conv2DAttrs>();
        w.stride_h = a.stride_h, w.stride_w = a.stride_w;
        dil_h = a.dilation_h, dil_w = a.dilation_w;
        pad = a.padding;
      } else if (std::holds_alternative<DepthwiseConv2DAttrs>(op.attrs)) {
        const auto& a = op.Attrs<DepthwiseConv2DAttrs>();
        w.stride_h = a.stride_h, w.stride_w = a.stride_w;
        dil_h = a.dilation_h, dil_w = a.dilation_w;
        pad = a.padding;
        w.depth_multiplier = a.depth_multiplier;
      }
      if (pad == Padding::kSame) {  // over the dilated kernel's extent
        w.pad_h = SamePadBefore(w.in_h, w.out_h, w.stride_h, int64_t{dil_h} * (w.k_h - 1) + 1);
        w.pad_w = SamePadBefore(w.in_w, w.out_w, w.stride_w, int64_t{dil_w} * (w.k_w - 1) + 1);
      }
      if (op.kind == OpKind::kDepthwiseConv2D && w.in_c > 0) {
        w.depth_multiplier = std::max(1, w.out_c / w.in_c);
      }
      break;
    }
    case OpKind::kTransposeConv: {
      const Tensor* filter = input(1);
      const Tensor* in = input(2);
      MICA_RETURN_IF_ERROR(need(in, 4, "input"));
      MICA_RETURN_IF_ERROR(need(filter, 4, "filter"));
      w.in_h = in->shape[1];
      w.in_w = in->shape[2];
      w.in_c = in->shape[3];
      w.k_h = filter->shape[1];
      w.k_w = filter->shape[2];
      if (std::holds_alternative<TransposeConvAttrs>(op.attrs)) {
        const auto& a = op.Attrs<TransposeConvAttrs>();
        w.stride_h = std::max(1, a.stride_h), w.stride_w = std::max(1, a.stride_w);
      }
      break;
    }
    case OpKind::kFullyConnected: {
      const Tensor* weights = input(1);
      MICA_RETURN_IF_ERROR(need(weights, 2, "weights"));
      w.macs = w.elements * int64_t{weights->shape[1]};
      break;
    }
    case OpKind::kBatchMatMul: {
      const Tensor* a = input(0);
      if (a == nullptr || a->shape.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(where(), ": missing input"));
      }
      const auto& attrs = std::holds_alternative<BatchMatMulAttrs>(op.attrs)
                              ? op.Attrs<BatchMatMulAttrs>() : BatchMatMulAttrs{};
      int64_t k = a->shape.size() >= 2 && attrs.adj_x ? a->shape[a->shape.size() - 2]
                                                       : a->shape.back();
      w.macs = w.elements * k;
      break;
    }
    case OpKind::kSvdf:
    case OpKind::kUnidirectionalSequenceLstm: {
      // Every 2-D constant weight matrix is applied once per time step and batch row.
      const Tensor* in = input(0);
      int64_t steps = 1;
      if (in != nullptr && !in->shape.empty() && in->shape.back() > 0) {
        steps = Elements(*in) / in->shape.back();
        w.in_c = in->shape.back();
      }
      w.steps = static_cast<int32_t>(std::min<int64_t>(steps, 1 << 30));
      if (op.kind == OpKind::kSvdf) {
        // Inputs: input, weights_feature [F, K], weights_time [F, M], bias, state.
        const Tensor* feature = input(1);
        const Tensor* time = input(2);
        const Tensor* state = input(4);
        if (feature != nullptr && feature->shape.size() == 2) w.svdf_features = feature->shape[0];
        if (time != nullptr && time->shape.size() == 2) w.svdf_memory = time->shape[1];
        if (state != nullptr && state->num_elements() > 0) {
          w.state_bytes = static_cast<int32_t>(state->num_bytes() / state->num_elements());
        }
      }
      for (size_t i = 1; i < op.inputs.size(); ++i) {
        const Tensor* t = input(i);
        if (t != nullptr && t->is_constant() && t->shape.size() == 2) {
          w.macs += steps * Elements(*t);
        }
      }
      break;
    }
    case OpKind::kAveragePool2D:
    case OpKind::kMaxPool2D: {
      const Tensor* in = input(0);
      MICA_RETURN_IF_ERROR(need(in, 4, "input"));
      w.in_h = in->shape[1];
      w.in_w = in->shape[2];
      w.in_c = in->shape[3];
      if (std::holds_alternative<Pool2DAttrs>(op.attrs)) {
        const auto& a = op.Attrs<Pool2DAttrs>();
        w.k_h = a.filter_h, w.k_w = a.filter_w;
        w.stride_h = a.stride_h, w.stride_w = a.stride_w;
        if (a.padding == Padding::kSame) {
          w.pad_h = SamePadBefore(w.in_h, w.out_h, w.stride_h, w.k_h);
          w.pad_w = SamePadBefore(w.in_w, w.out_w, w.stride_w, w.k_w);
        }
      }
      break;
    }
    case OpKind::kSoftmax: {
      const Tensor* in = input(0);
      if (in != nullptr && !in->shape.empty() && in->shape.back() > 0) {
        w.rows = Elements(*in) / in->shape.back();
      }
      float beta = std::holds_alternative<SoftmaxAttrs>(op.attrs) ? op.Attrs<SoftmaxAttrs>().beta
                                                                  : 1.0f;
      if (in != nullptr && in->dtype == DType::kInt8 && in->quant.scale.size() == 1) {
        w.softmax_diff_min = cortex_m::SoftmaxDiffMin(in->quant.scale[0], beta);
      }
      break;
    }
    case OpKind::kTranspose: {
      // Innermost output runs, and whether the permutation keeps the innermost axis.
      if (out != nullptr && !out->shape.empty() && out->shape.back() > 0) {
        w.rows = w.elements / out->shape.back();
      }
      const Tensor* perm = input(1);
      if (perm != nullptr && perm->is_constant() && perm->dtype == DType::kInt32 &&
          perm->num_elements() > 0 &&
          perm->data.size >= static_cast<size_t>(perm->num_elements()) * sizeof(int32_t)) {
        const int64_t r = perm->num_elements();
        w.inner_contiguous = perm->data.as<int32_t>()[r - 1] == r - 1;
      }
      break;
    }
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax: case OpKind::kArgMax:
    case OpKind::kArgMin: {
      const Tensor* in = input(0);
      if (in != nullptr) w.bytes = Elements(*in);  // input elements, for the reduction pass
      const Tensor* axes = input(1);
      if (in != nullptr && !in->shape.empty() && axes != nullptr && axes->is_constant() &&
          axes->dtype == DType::kInt32 &&
          axes->data.size >= static_cast<size_t>(axes->num_elements()) * sizeof(int32_t)) {
        const int64_t rank = static_cast<int64_t>(in->shape.size());
        for (int64_t i = 0; i < axes->num_elements(); ++i) {
          const int64_t a = axes->data.as<int32_t>()[i];
          if (a == rank - 1 || a == -1) w.inner_contiguous = true;
        }
      }
      break;
    }
    default:
      if (GetOpCategory(op.kind) == OpCategory::kElementwiseBinary) {
        const Tensor* a = input(0);
        const Tensor* b = input(1);
        if (a != nullptr && b != nullptr && a->shape != b->shape) w.broadcast = true;
      } else if (CopiesRows(op.kind) && out != nullptr && !out->shape.empty() &&
          out->shape.back() > 0) {
        w.rows = w.elements / out->shape.back();
        // All outputs of split/unpack are written.
        if (op.outputs.size() > 1) {
          w.bytes = 0;
          for (int32_t t : op.outputs) {
            if (const Tensor* o = tensor(t)) w.bytes += static_cast<int64_t>(o->num_bytes());
          }
        }
      }
      break;
  }
  return w;
}

}  // namespace estimate
}  // namespace mica
