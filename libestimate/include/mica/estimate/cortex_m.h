// mica estimate — Arm Cortex-M cost model: cycles, RAM and flash of a model run with
// CMSIS-NN-style int8 kernels (the variant the CPU would run: scalar, DSP or MVE).
//
// Two sets of kernels are described. By default TFLite Micro + CMSIS-NN: the model counts
// executed instructions per operator from the work the kernel does (MACs, im2col elements,
// outputs, window taps, elements) with per-variant constants calibrated on CMSIS-NN's kernels
// measured instruction by instruction on QEMU (../shared/reference/cmsis-nn/kernels.csv and the
// whole-model totals of ../shared/reference/tflm-cmsis-nn; test/estimate/cortex_m_test.cc checks
// both), and, where no measurement exists (LSTM, SVDF, depthwise with a channel multiplier),
// from the loops of the CMSIS-NN sources. With Runtime::kMica, mica's own kernels: per-family
// loop terms with coefficients solved from mica's own runs on QEMU (CortexMMicaTermsFor below;
// test/estimate/cortex_m_qemu_test.cc checks them against test/corpus/reference/qemu).
// Cycles are instructions (CPI 1, which is what the reference measures: QEMU counts
// instructions, not pipeline stalls) times the CPU's code-generation factor, plus flash wait
// states on weight loads.
//
//   MICA_ASSIGN_OR_RETURN(mica::estimate::TargetProfile p,
//                         mica::estimate::FindTargetProfile("cortex-m4"));
//   MICA_ASSIGN_OR_RETURN(mica::estimate::Estimate e, mica::estimate::EstimateCortexM(graph, p));
//
// Formulas (instructions per call; P = output pixels N*OH*OW, T = KH*KW taps, K = T*Cin,
// O = output elements, E = elements, W = pooling window elements O*T). Constants per variant
// (scalar / DSP / MVE) are in cortex_m/cost_table.cc, with the calibration residuals:
//
//   op                      kernel (CMSIS-NN)               instructions
//   CONV_2D                 arm_convolve_s8 (im2col+matmul) call + mac*MACs + col*P*K + out*O
//   CONV_2D 1x1, stride 1   arm_convolve_1x1_s8_fast        call + mac*MACs + out1*O
//   DEPTHWISE_CONV_2D       arm_depthwise_conv_3x3 / _opt   call + dmac*MACs + dout*O + tap*P*T
//   FULLY_CONNECTED         arm_fully_connected_s8          call + fmac*MACs + fout*O
//   ADD, SUB                arm_elementwise_add_s8          call + add*E
//   MUL                     arm_elementwise_mul_s8          call + mul*E
//   AVERAGE_POOL_2D         arm_avgpool_s8                  call + aout*O + arow*O*KH + aelem*W
//   MAX_POOL_2D             arm_max_pool_s8                 call + mtap*P*T + mpix*P + mout*O + melem*W
//   DEPTHWISE, multiplier M>1  arm_depthwise_conv_s8: M%4==0 -> the 4-output tile kernel
//                           call + P*(pix + Cin*(M/4)*(tile + KH*row + Tv*tap4 + req4));
//                           else the generic one call + O*(gout + Tv*gtap) (Tv: valid taps)
//   LSTM (S steps, U units) arm_lstm_unidirectional_s8: per step 4 gates, each two
//                           vec_mat_mul_result_acc (fmac*MACs + row*rows) and an s16
//                           activation (plain C on every variant), then s16 elementwise muls:
//                           call + fmac*MACs + S*U*(8*row + 5*act16 + 3*ew16) + S*step
//   SVDF (F filters, M memory, U units)  arm_svdf_s8: state shift (memmove), feature matmul,
//                           time dot products (scalar loop also on MVE, SMLAD blocks on DSP),
//                           bias + rank reduction, requantization:
//                           call + fmac*F*K + row*F + F*M*time + F*feat + copy*F*M*b + U*req
//   SOFTMAX (rows of n)     arm_softmax_s8                  call + rows*(row + n*(cheap + p*exp))
//                           p = share of inputs within diff_min of the row maximum
//                           (data-dependent; assumes inputs spread over the int8 range)
//   elementwise / unary     reference kernels               call + per_element*E
//   data movement           memcpy-like                     call + per_byte*bytes + per_row*rows
//   float32 ops             reference float kernels         fp_mac*MACs + fp_elem*E; on a CPU
//                                                           without FPU soft-float costs (~25x)
//   int16 ops               s16 kernels                     the int8 formula * 1.3
//
// Per CPU: M0 (Armv6-M: no MLA/SMULL/SSAT/IT) runs scalar code at 1.6x the instructions of
// Armv7-M/Armv8-M scalar; M3 scalar; M4/M7/M33 DSP; M55/M85 MVE (the reference shows DSP builds
// on M4, M7, M33 and M55 within 7 % of each other, so they share constants).
// Flash: each weight load from flash costs `flash_wait_states` extra cycles; loads per MAC are
// 1/(bytes per load * reuse) with 1/4/16 bytes per load (scalar/DSP/MVE) and reuse 2 (4 on MVE)
// for convolutions, 1 otherwise.
// Memory: Estimate::memory holds what a deployment reserves with a runtime (TFLite Micro's
// arena by default: head + tail, mica/estimate/tflm_arena.h) and the fit verdicts.
// memory_used_bytes (kept as it was): RAM = activation arena peak (libmodel's greedy lifetime-based planner, 16-byte
// aligned) + the largest kernel scratch (libkernels' ConvScratchBytes/DepthwiseConvScratchBytes/
// FullyConnectedScratchBytes for the variant; CMSIS-NN buffer-size rules for the rest); flash =
// constant tensors + code (a per-kernel code-size estimate for each distinct kernel used + a
// fixed runtime size).
#ifndef MICA_ESTIMATE_CORTEX_M_H_
#define MICA_ESTIMATE_CORTEX_M_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/estimate/tflm_arena.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

// Code size assumed for the interpreter/runtime around the kernels (flash bytes).
inline constexpr int64_t kCortexMRuntimeCodeBytes = 24 * 1024;

// The work one kernel call does: what the cost formulas above consume. Shapes are NHWC.
struct CortexMWork {
  OpKind kind = OpKind::kOpaque;
  DType dtype = DType::kInt8;       // activation type (int8, int16, float32, ...)
  int32_t batch = 1;
  int32_t in_h = 1, in_w = 1, in_c = 1;
  int32_t out_h = 1, out_w = 1, out_c = 1;
  int32_t k_h = 1, k_w = 1;         // filter or pooling window
  int32_t stride_h = 1, stride_w = 1;
  int32_t pad_h = 0, pad_w = 0;     // top/left padding
  int32_t depth_multiplier = 1;
  int32_t groups = 1;               // convolution groups (input channels / filter channels)
  int64_t macs = 0;                 // for kinds without a conv shape (FC, matmul, LSTM, SVDF)
  int64_t elements = 0;             // output elements (elementwise, data movement)
  int64_t bytes = 0;                // bytes moved (data movement)
  int64_t rows = 1;                 // softmax rows / data-movement contiguous runs
  int64_t weight_bytes = 0;         // constant bytes the kernel reads (flash)
  // Softmax: the input radius diff_min as CMSIS-NN gets it (negative; 0 = unknown, assume all
  // inputs take the exp path).
  int32_t softmax_diff_min = 0;
  bool broadcast = false;           // elementwise with broadcasting (reference kernel)
  // Transpose keeping the innermost axis (runs copied whole); reduction over the innermost axis.
  bool inner_contiguous = false;
  // Recurrent ops: LSTM time steps and units (out_c), input size (in_c); SVDF feature rows
  // (filters = units x rank) and memory length.
  int32_t steps = 1;
  int32_t svdf_features = 0, svdf_memory = 0;
  int32_t state_bytes = 1;          // bytes per SVDF state element (int8 or int16 state)
};

// The estimate for one operator on a Cortex-M.
struct CortexMOpCost {
  std::string kernel;          // kernel and variant, e.g. "arm_convolve_s8/dsp"
  kernels::Isa isa = kernels::Isa::kScalar;
  double instructions = 0;     // estimated executed instructions
  double flash_wait_cycles = 0;
  double cycles = 0;           // instructions * CPU factor + flash_wait_cycles
  int64_t macs = 0;
  int64_t scratch_bytes = 0;   // CMSIS-NN scratch buffer the kernel needs
  int64_t code_bytes = 0;      // code size of the kernel (counted once per distinct kernel)
  std::vector<std::string> notes;  // soft-float, uncalibrated, unknown op, ...
};

// Returns the kernel variant `cpu` runs: MVE if it has Helium, else DSP if it has the DSP
// extension, else scalar.
kernels::Isa CortexMVariant(const CortexMConfig& cpu);

// Returns the instructions-per-instruction factor of `cpu` relative to Armv7-M/Armv8-M code
// (1.6 for cortex-m0's Armv6-M, 1.0 otherwise).
double CortexMCodeFactor(const CortexMConfig& cpu);

// Costs one kernel call described by `work` with variant `isa` on `cpu` (whose DSP/MVE flags
// are not consulted: the caller picks the variant, as the calibration test does). `runtime`
// says whose kernels run: TFLite Micro's (and ExecuTorch's) CMSIS-NN, or mica's own
// (Runtime::kMica, the formulas of CortexMMicaTermsFor).
CortexMOpCost CortexMKernelCost(const CortexMWork& work, kernels::Isa isa,
                                const CortexMConfig& cpu, Runtime runtime = Runtime::kTflm);

// mica's own kernels (--runtime mica). A call costs sum(coefficient[i] * term[i]); the terms
// follow the loops of mica's kernel bodies, with L the lanes of one multiply-accumulate step of
// the variant (1 scalar, 4 DSP, 16 MVE), P output pixels, O output elements, K = KH*KW*Cin,
// T = KH*KW taps, C channels, R rows of a fully connected layer with N outputs, E elements:
//
//   family           t0  t1                t2               t3    t4  t5        t6
//   conv             1   O*floor(K/L)      O*(K mod L)      O     P   P*K       W/L
//   conv1x1          1   O*floor(K/L)      O*(K mod L)      O     P   0         W/L
//   conv_s16         as conv, with the DSP body's L on MVE (16x8 has no MVE body)
//   depthwise        1   P*T*floor(C/L)    P*T*(C mod L)    O     P   P*T       W/L
//   fully_connected  1   R*N*floor(K/L)    R*N*(K mod L)    R*N   R   R*K       W/L
//   transpose_conv   1   O*Te*floor(Ci/L)  O*Te*(Ci mod L)  O     P   P*Te      W/L
//                        (Te = T / (stride_h*stride_w): taps reaching one output)
//   add, mul         1   floor(E/L)        E mod L          -     -   -         -
//   avg/max_pool     1   P*T*floor(C/L)    P*T*(C mod L)    O     P   P*T       -
//   softmax          1   E*p               E*(1-p)          rows  -   -         -
//                        (p: share of inputs within diff_min of the maximum, as CMSIS-NN's)
//   lstm             1   MACs              steps*units      steps -   -         -  (scalar)
//   copy             1   bytes             -                rows  -   -         -
//   dispatch         1 per operator (the device runtime's loop and hooks)
//
// (W = weight elements: per-call work over the filter, e.g. the per-channel sums of the
// weights MVE bodies fold the input offset with. "x mod L" counts the remainder steps: single
// elements on scalar and DSP; on MVE one predicated step for a dot product (conv, FC) and
// ceil((x mod 16) / 4) 4-lane steps for a channel loop (depthwise, pools, transpose conv).)
//
// The coefficients (libestimate/src/cortex_m/cost_table.cc) are solved per family and variant
// from mica's own runs on QEMU (bench/cortex_m_vs_qemu.py, which re-measures and prints a new
// table when the kernels change). Work outside these families (and families without
// coefficients for a variant) is costed with the CMSIS-NN formulas.
inline constexpr int kCortexMMicaTerms = 7;
struct CortexMMicaTerms {
  std::string family;  // "conv", "depthwise", ...; empty when no mica family applies
  std::array<double, kCortexMMicaTerms> terms{};
};

// Returns the terms of one call of mica's kernel for `work` with variant `isa`.
CortexMMicaTerms CortexMMicaTermsFor(const CortexMWork& work, kernels::Isa isa);

// Returns the names of mica's kernel families, in table order (the last is "dispatch").
std::vector<std::string> CortexMMicaFamilies();

// Sets `*out` to the table's coefficients of `family` for `isa`; false when it has none.
bool CortexMMicaCoefficients(const std::string& family, kernels::Isa isa,
                             std::array<double, kCortexMMicaTerms>* out);

// Describes operator `op_index` of the main subgraph as kernel work. InvalidArgument when its
// tensors are inconsistent (rank, shapes), naming the operator.
absl::StatusOr<CortexMWork> DescribeCortexMWork(const Graph& graph, int op_index);

// Costs operator `op_index` of the main subgraph on `cpu` with the variant it would run (or
// `isa` when given) and the kernels of `runtime`.
absl::StatusOr<CortexMOpCost> CortexMOpCostFor(const Graph& graph, int op_index,
                                               const CortexMConfig& cpu,
                                               Runtime runtime = Runtime::kTflm);
absl::StatusOr<CortexMOpCost> CortexMOpCostFor(const Graph& graph, int op_index,
                                               const CortexMConfig& cpu, kernels::Isa isa,
                                               Runtime runtime);

// Returns the activation arena peak in bytes of the main subgraph: non-constant tensors placed
// by a greedy first-fit planner over their lifetimes (largest first, 16-byte aligned; libmodel's
// PlanArena, or the same rule over stored order when the graph is not topologically ordered).
int64_t CortexMArenaBytes(const Graph& graph);

// Estimates the whole model on the Cortex-M profile `profile` (kind kCortexM): per-op cycles and
// kernels, totals, RAM (arena + largest scratch) and flash (weights + code) in
// memory_used_bytes[kSram] / [kOnChipFlash]. `runtime` picks the kernels costed (CMSIS-NN under
// TFLite Micro by default, mica's own with Runtime::kMica); the memory figures stay TFLite
// Micro's (AddRuntimeMemory replaces them).
absl::StatusOr<Estimate> EstimateCortexM(const Graph& graph, const TargetProfile& profile,
                                         Runtime runtime = Runtime::kTflm);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_CORTEX_M_H_
