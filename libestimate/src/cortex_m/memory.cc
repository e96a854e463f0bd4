// Cortex-M memory: activation arena planner, CMSIS-NN scratch sizes, kernel code sizes, and the
// whole-model Cortex-M estimate.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cortex_m/internal.h"
#include "mica/base/status_macros.h"
#include "mica/estimate/cortex_m.h"
#include "mica/estimate/tflm_arena.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/fully_connected.h"
#include "mica/model/analysis.h"

namespace mica {
namespace estimate {

using kernels::Isa;

namespace cortex_m {

int32_t SoftmaxDiffMin(float scale, float beta) {
  // TFLite: the multiplier beta*scale*2^(31-5) as (q31, left_shift), then the input radius
  // floor((2^5 - 1) * 2^(31-5) / 2^left_shift).
  double real = double{beta} * double{scale} * std::ldexp(1.0, 26);
  if (!(real > 0) || !std::isfinite(real)) return 0;
  int exponent = 0;
  double mantissa = std::frexp(real, &exponent);
  if (std::llround(mantissa * std::ldexp(1.0, 31)) == (int64_t{1} << 31)) ++exponent;
  double radius = std::floor(31.0 * std::ldexp(1.0, 26 - exponent));
  radius = std::min(radius, 1e9);
  return -static_cast<int32_t>(radius);
}

int64_t ScratchBytes(const CortexMWork& w, Isa isa, const std::string& kernel) {
  const int64_t taps = int64_t{w.k_h} * w.k_w;
  const bool is_float = absl::StrContains(kernel, "_f32");
  const bool s16 = w.dtype == DType::kInt16;
  if (is_float) return 0;
  const int32_t n = std::max(1, w.batch);
  // Convolutions and fully connected: mica's own kernels say what their body for `isa` needs
  // (libkernels' ...ScratchBytes, pure arithmetic valid for any ISA on the host).
  switch (w.kind) {
    case OpKind::kConv2D: {
      kernels::ConvParams p;
      p.input = {n, w.in_h, w.in_w, w.in_c};
      p.filter = {w.out_c, w.k_h, w.k_w, w.in_c};
      p.output = {n, w.out_h, w.out_w, w.out_c};
      p.stride = {w.stride_h, w.stride_w};
      p.padding = {w.pad_h, w.pad_w};
      return static_cast<int64_t>(s16 ? kernels::Conv16x8ScratchBytes(p, isa)
                                      : kernels::ConvScratchBytes(p, isa));
    }
    case OpKind::kDepthwiseConv2D: {
      kernels::DepthwiseConvParams p;
      p.input = {n, w.in_h, w.in_w, w.in_c};
      p.filter = {1, w.k_h, w.k_w, w.out_c};
      p.output = {n, w.out_h, w.out_w, w.out_c};
      p.depth_multiplier = w.depth_multiplier;
      p.stride = {w.stride_h, w.stride_w};
      p.padding = {w.pad_h, w.pad_w};
      return static_cast<int64_t>(s16 ? kernels::DepthwiseConv16x8ScratchBytes(p, isa)
                                      : kernels::DepthwiseConvScratchBytes(p, isa));
    }
    case OpKind::kFullyConnected: {
      kernels::FullyConnectedParams p;
      p.output_depth = std::max(1, w.out_c);
      p.batches = static_cast<int32_t>(std::max<int64_t>(1, w.elements / p.output_depth));
      p.input_depth = static_cast<int32_t>(
          std::max<int64_t>(1, w.macs / std::max<int64_t>(1, w.elements)));
      return static_cast<int64_t>(s16 ? kernels::FullyConnected16x8ScratchBytes(p, isa)
                                      : kernels::FullyConnectedScratchBytes(p, isa));
    }
    case OpKind::kTransposeConv:
      // CMSIS-NN rule: two int16 im2col columns (DSP/scalar) or four int8 columns (MVE).
      return isa == Isa::kMve ? 4 * (taps * w.in_c + 8) : 2 * taps * w.in_c * 2;
    case OpKind::kAveragePool2D:
      return isa == Isa::kDsp ? 4 * int64_t{w.in_c} : 0;  // int32 accumulators
    case OpKind::kUnidirectionalSequenceLstm:
    case OpKind::kSvdf:
      return 16 * int64_t{w.out_c} * w.batch;  // gate buffers
    default:
      return 0;
  }
}

int64_t CodeBytes(const CortexMWork& w, Isa isa) {
  // Thumb-2 code of the kernel and its helpers (bytes; typical CMSIS-NN object sizes at -Os,
  // rounded). MVE and DSP bodies are larger than scalar ones.
  int64_t base = 500;
  switch (w.kind) {
    case OpKind::kConv2D: base = 2400; break;
    case OpKind::kTransposeConv: base = 2400; break;
    case OpKind::kDepthwiseConv2D: base = 1800; break;
    case OpKind::kFullyConnected: case OpKind::kBatchMatMul: base = 900; break;
    case OpKind::kSvdf: base = 1600; break;
    case OpKind::kUnidirectionalSequenceLstm: base = 3000; break;
    case OpKind::kAdd: case OpKind::kSub: base = 800; break;
    case OpKind::kMul: base = 700; break;
    case OpKind::kAveragePool2D: base = 800; break;
    case OpKind::kMaxPool2D: base = 600; break;
    case OpKind::kSoftmax: base = 1100; break;
    case OpKind::kReshape: case OpKind::kSqueeze: case OpKind::kExpandDims: base = 150; break;
    case OpKind::kOpaque: return 0;
    default: break;
  }
  double factor = isa == Isa::kScalar ? 0.8 : isa == Isa::kMve ? 1.1 : 1.0;
  return static_cast<int64_t>(base * factor);
}

}  // namespace cortex_m

int64_t CortexMArenaBytes(const Graph& graph) {
  if (graph.subgraphs.empty()) return 0;
  const Subgraph& sg = graph.main();
  // libmodel's planner (greedy by size, first fit, 16-byte aligned) when the graph is in
  // topological order; otherwise the same rule over stored order below.
  if (absl::StatusOr<ArenaPlan> plan = PlanArena(sg); plan.ok()) {
    return static_cast<int64_t>(plan->peak_bytes);
  }
  const int n_ops = static_cast<int>(sg.ops.size());
  const int n_t = static_cast<int>(sg.tensors.size());
  std::vector<int> first(n_t, -1), last(n_t, -1);
  auto touch = [&](int32_t t, int when) {
    if (t < 0 || t >= n_t || sg.tensors[t].is_constant()) return;
    if (first[t] < 0 || when < first[t]) first[t] = when;
    last[t] = std::max(last[t], when);
  };
  for (int32_t t : sg.inputs) touch(t, 0);
  for (int i = 0; i < n_ops; ++i) {
    for (int32_t t : sg.ops[i].inputs) touch(t, i);
    for (int32_t t : sg.ops[i].outputs) touch(t, i);
    for (int32_t t : sg.ops[i].intermediates) touch(t, i);
  }
  for (int32_t t : sg.outputs) touch(t, std::max(0, n_ops - 1));
  for (int t = 0; t < n_t; ++t) {
    if (first[t] >= 0 && sg.tensors[t].is_variable) {
      first[t] = 0;
      last[t] = std::max(0, n_ops - 1);
    }
  }

  struct Buf {
    int first, last;
    int64_t size;
    int64_t offset = 0;
  };
  std::vector<Buf> bufs;
  for (int t = 0; t < n_t; ++t) {
    if (first[t] < 0) continue;
    int64_t size = static_cast<int64_t>(sg.tensors[t].num_bytes());
    size = (size + 15) / 16 * 16;
    if (size > 0) bufs.push_back({first[t], last[t], size});
  }
  std::stable_sort(bufs.begin(), bufs.end(),
                   [](const Buf& a, const Buf& b) { return a.size > b.size; });
  int64_t peak = 0;
  std::vector<const Buf*> placed;
  for (Buf& b : bufs) {
    // Lowest offset that fits between the buffers alive at the same time (first fit).
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Buf* p : placed) {
      if (p->first <= b.last && b.first <= p->last) busy.emplace_back(p->offset, p->offset + p->size);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : busy) {
      if (offset + b.size <= lo) break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    placed.push_back(&b);
    peak = std::max(peak, offset + b.size);
  }
  return peak;
}

absl::StatusOr<Estimate> EstimateCortexM(const Graph& graph, const TargetProfile& profile,
                                         Runtime runtime) {
  if (profile.kind != TargetKind::kCortexM) {
    return absl::InvalidArgumentError(
        absl::StrCat("EstimateCortexM: '", profile.name, "' is not a Cortex-M profile"));
  }
  if (graph.subgraphs.empty()) return absl::InvalidArgumentError("graph has no subgraph");
  const CortexMConfig& cpu = profile.cortex_m;
  const Subgraph& sg = graph.main();
  Estimate e;
  e.target = profile.name;
  e.clock_hz = cpu.clock_hz;
  std::map<std::string, int64_t> code;
  std::set<std::string> notes;
  std::set<std::string> unmeasured;  // --runtime mica: operators without a measured mica kernel
  for (int i = 0; i < static_cast<int>(sg.ops.size()); ++i) {
    const Operator& op = sg.ops[i];
    MICA_ASSIGN_OR_RETURN(CortexMOpCost c, CortexMOpCostFor(graph, i, cpu, runtime));
    OpEstimate o;
    o.op_index = i;
    o.op_name = std::string(op.name());
    if (!op.outputs.empty() && op.outputs[0] >= 0 &&
        op.outputs[0] < static_cast<int32_t>(sg.tensors.size())) {
      o.output_name = sg.tensors[op.outputs[0]].name;
    }
    o.placement = Placement::kCpu;
    o.macs = c.macs;
    o.compute_cycles = c.instructions;
    o.access_cycles[static_cast<int>(MemoryArea::kOnChipFlash)] = c.flash_wait_cycles;
    for (int32_t t : op.inputs) {
      if (t < 0 || t >= static_cast<int32_t>(sg.tensors.size())) continue;
      const Tensor& tt = sg.tensors[t];
      MemoryArea area = tt.is_constant() ? MemoryArea::kOnChipFlash : MemoryArea::kSram;
      o.bytes[static_cast<int>(area)] += static_cast<double>(tt.num_bytes());
    }
    for (int32_t t : op.outputs) {
      if (t < 0 || t >= static_cast<int32_t>(sg.tensors.size())) continue;
      o.bytes[static_cast<int>(MemoryArea::kSram)] +=
          static_cast<double>(sg.tensors[t].num_bytes());
    }
    o.total_cycles = c.cycles;
    o.bottleneck = c.flash_wait_cycles > 0.5 * c.cycles ? Bottleneck::kOnChipFlash
                                                        : Bottleneck::kCompute;
    o.kernel = c.kernel;
    o.notes = c.notes;
    for (const std::string& n : c.notes) {
      if (absl::StrContains(n, "soft-float")) notes.insert(n);
      if (absl::StrContains(n, "no measured mica")) unmeasured.insert(std::string(op.name()));
    }
    e.total_cycles += c.cycles;
    e.cpu_cycles += c.cycles;
    e.macs += c.macs;
    e.scratch_bytes = std::max(e.scratch_bytes, c.scratch_bytes);
    if (c.code_bytes > 0) code[c.kernel] = c.code_bytes;
    for (int a = 0; a < kNumMemoryAreas; ++a) e.access_cycles[a] += o.access_cycles[a];
    e.ops.push_back(std::move(o));
    ++e.cpu_ops;
  }
  for (const Tensor& t : sg.tensors) {
    if (t.is_constant()) e.weights_original_bytes += static_cast<int64_t>(t.num_bytes());
  }
  e.weights_encoded_bytes = e.weights_original_bytes;
  e.arena_bytes = CortexMArenaBytes(graph);
  e.code_bytes = kCortexMRuntimeCodeBytes;
  for (const auto& [kernel, bytes] : code) e.code_bytes += bytes;
  e.memory_used_bytes[static_cast<int>(MemoryArea::kSram)] =
      static_cast<double>(e.arena_bytes + e.scratch_bytes);
  e.memory_used_bytes[static_cast<int>(MemoryArea::kOnChipFlash)] =
      static_cast<double>(e.weights_original_bytes + e.code_bytes);
  e.notes.push_back(absl::StrCat(runtime == Runtime::kMica ? "mica's own " : "CMSIS-NN ",
                                 kernels::IsaName(CortexMVariant(cpu)), " kernels on ", cpu.cpu, "; cycles = estimated instructions",
                                 cpu.flash_wait_states > 0
                                     ? absl::StrCat(" + ", cpu.flash_wait_states,
                                                    " flash wait state(s) per weight load")
                                     : std::string()));
  for (const std::string& n : notes) e.notes.push_back(n);
  if (!unmeasured.empty()) {
    std::string kinds;
    for (const std::string& k : unmeasured) absl::StrAppend(&kinds, kinds.empty() ? "" : ", ", k);
    e.notes.push_back(absl::StrCat("no measured mica kernel for ", kinds,
                                   ": costed with CMSIS-NN's formulas"));
  }
  MICA_RETURN_IF_ERROR(AddRuntimeMemory(graph, profile, Runtime::kTflm, &e));
  return e;
}

}  // namespace estimate
}  // namespace mica
