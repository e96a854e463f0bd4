// Internal to the Ethos-U estimator: accelerator tables, the lowered NPU operation list, and
// the cycle/memory model (written from ../shared/docs/ethos-u-performance-model.md, which
// describes Vela 5.1.0's Regor core; section numbers below refer to that note).
#ifndef MICA_ESTIMATE_ETHOS_U_MODEL_H_
#define MICA_ESTIMATE_ETHOS_U_MODEL_H_

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {
namespace ethosu {

struct Shape3 {
  int32_t h = 1, w = 1, c = 1;
  // Saturates at the int64 range: the perf model's saturated extents of a hostile kernel,
  // stride or dilation (block_search.h) must not overflow when multiplied out.
  int64_t elements() const {
    const int64_t hw = int64_t{h} * w;  // |hw| < 2^62
    const double approx = static_cast<double>(hw) * c;
    if (approx >= 9.2e18) return std::numeric_limits<int64_t>::max();
    if (approx <= -9.2e18) return std::numeric_limits<int64_t>::min();
    return hw * c;
  }
  bool operator==(const Shape3& o) const { return h == o.h && w == o.w && c == o.c; }
  bool operator!=(const Shape3& o) const { return !(*this == o); }
};

// Accelerator constants of one configuration (doc section 2).
struct Arch {
  EthosUFamily family = EthosUFamily::kU55;
  int32_t macs = 256;
  int32_t cores = 1;
  std::vector<Shape3> ofm_ublocks;  // U55/U65: one entry
  Shape3 ifm_ublock;
  Shape3 max_block;
  // U55/U65 SHRAM.
  int32_t shram_banks = 48;
  // Granules: IFM8, IFM16, IFM8-ew, IFM16-ew, IFM32, Acc16, Acc32, Acc40.
  std::array<int32_t, 8> granules{};
  std::array<double, 8> ao_out{};  // U55: 8 entries; U85: 6 used
  std::array<double, 3> ao_act{};
  // U85 RAMs (bytes) and read-buffer slots (Mem2Mem, IFM-stream, Weight, FastWeight, IFM, Scale).
  int32_t ifm_ram = 0, acc_ram = 0, ob_ram = 0, cb_ram = 0;
  std::array<int32_t, 6> rb_slots{};
};

absl::StatusOr<Arch> MakeArch(EthosUFamily family, int32_t macs);

// Hardware operation classes (doc 4.1).
enum class HwOp : uint8_t {
  kConvolution,
  kDepthwise,
  kVectorProduct,
  kPooling,
  kReduceSum,
  kElementwise,
  kMatMul,
  kTranspose,
};
enum class PoolKind : uint8_t { kAvg, kMax };
// Output-unit cost classes for elementwise ops.
enum class EwKind : uint8_t { kAdd, kSub, kMul, kMinMax, kShift, kClz, kDiv, kOther };
enum class Act : uint8_t { kNone, kRelu, kLut, kOther };
enum class Format : uint8_t { kNhwc, kNhcwb16 };

// A feature map as an NPU op sees it: storage id (index into Lowered::fmaps) and its 3-D view.
struct FmRef {
  int32_t id = -1;
  Shape3 shape;
  int32_t bits = 8;
  bool scalar = false;  // a single constant element (encoded in the command stream)
};

// One NPU operation after lowering (fusions, decompositions).
struct NpuOp {
  int32_t src_op = 0;          // IR op index it came from
  int64_t repeat = 1;          // times the op runs as costed (a long sequence's last step)
  std::string name;            // "Conv2D", "Softmax/Sub", ...
  HwOp hw = HwOp::kConvolution;
  PoolKind pool = PoolKind::kAvg;
  EwKind ew = EwKind::kOther;
  bool unary = false;
  FmRef ifm, ifm2, ofm;
  bool has_ifm2 = false;
  int32_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int32_t upscale = 1;  // transpose conv / resize: IFM is upscaled by this factor
  Act act = Act::kNone;
  bool needs_lut = false;
  // U55/U65: a 16-bit IFM accumulated in 32 bits (Vela's bilinear resize kernels, whose
  // power-of-two weights it runs without the 40-bit accumulators of other 16-bit kernels).
  bool acc32 = false;
  // U55/U65: the op is itself a table lookup (an activation left unfused), not an op with a
  // fused activation: Vela 5.2 charges it the output unit's rate without the activation
  // unit's LUT rate (a standalone sigmoid of 48 x 48 x 16 costs 0.5 cycles per element on
  // U55-256, its MAC rate, not act[0] = 1.0).
  bool lut_op = false;
  // A memory copy (Vela's MemoryCopy: concatenation, padding and output copies). U85 picks its
  // block by the cost search of convolutions, not the depthwise fit of other pooling ops.
  bool mem_copy = false;
  int32_t weight_tensor = -1;     // IR tensor index of the weights (-1: none)
  int64_t weight_bytes = 0;       // original bytes
  int64_t encoded_weight_bytes = 0;
  int64_t scale_bytes = 0;        // 10 bytes per output channel
  bool sparse24 = false;          // U85 2:4 sparse weight format
  int64_t macs = 0;
  // The part of the weight tensor this op applies when the lowering split one kernel over
  // several ops (a grouped convolution's OFM channels [w_oc0, w_oc0 + ofm.c); a U85 transpose
  // convolution phase's taps: the op's tap (y, x) is the tensor's (w_ty0 + y * w_tsy,
  // w_tx0 + x * w_tsx)). Such an op's weights are encoded on their own.
  // A depthwise part of a depth multiplier M applies the tensor's channels w_oc0 + M c
  // (w_ocs = M).
  bool weight_view = false;
  int32_t w_oc0 = 0, w_ty0 = 0, w_tx0 = 0, w_tsy = 1, w_tsx = 1, w_ocs = 1;
  int32_t chained_into = -1;      // U85: this op runs inside op N's chain (0 cycles here)
  bool no_chain = false;          // U85: never chained into the previous op
  // Done by another op in place (a producer writing its concatenation slice): 0 cycles, but it
  // keeps its IFM live until its time step, as Vela's memory figures do.
  bool elided = false;
  double chain_ao_extra = 0;      // U85: AO cost per element added by chained stages
  bool chain_head = false;        // U85: later ops run in this op's chain
  // Maps streamed in by chained stages (storage id and the view the stage reads).
  std::vector<FmRef> extra_reads;
};

// A stored feature map (IR tensor or a lowering temporary).
struct FeatureMap {
  int32_t tensor = -1;   // IR tensor index or -1 for temporaries
  int64_t bytes = 0;     // storage bytes in its format
  Shape3 shape;
  int32_t bits = 8;
  Format format = Format::kNhcwb16;
  bool graph_io = false;
  bool cpu_touched = false;
  int32_t alias_of = -1;  // reshape-like: same storage as another fmap
  MemoryArea area = MemoryArea::kSram;
  int32_t first = -1, last = -1;  // live range in NPU-op time steps
  // Inside a cascade (doc 8.4): only a rolling buffer of this many bytes is stored, in the
  // staging SRAM (0: the whole map is stored).
  int64_t rolling_bytes = 0;
};

struct Lowered {
  std::vector<NpuOp> ops;
  std::vector<FeatureMap> fmaps;
  std::vector<int32_t> fmap_of_tensor;  // IR tensor -> fmap id (-1 none)
  std::vector<std::vector<std::string>> cpu_reasons;  // per IR op (empty = NPU)
  std::vector<std::string> ir_note;  // per IR op: "fused into op N", "no-op (reshape)", ...
  std::vector<std::string> ir_caveat;  // per IR op: a limit of the estimate, shown to users
};

// Places and lowers the graph's main subgraph for `config`.
absl::StatusOr<Lowered> Lower(const Graph& graph, const EthosUConfig& config, const Arch& arch);

// Compatibility of one IR op (doc section 10). Empty = NPU.
std::vector<std::string> OpCompatibility(const Subgraph& sg, int op_index,
                                         const EthosUConfig& config);

// Encoded size of the weights of `op` (doc section 9): Vela 5.2's MLW streams of its weight
// traversal (U55/U65, or U85 in one OFM-depth slice), the weights only, without the scales;
// and whether the weights satisfy 2:4 sparsity in the U85 sparse traversal order (the size is
// then that of the sparse order).
struct WeightEncoding {
  int64_t encoded_bytes = 0;
  bool sparse24 = false;
};
WeightEncoding EncodeWeightsEstimate(const Subgraph& sg, const NpuOp& op, const Arch& arch);
// EncodeWeightsEstimate of the ops EncodeWeights encodes (every weight view, the first other op
// of each weight tensor; default entries elsewhere), on up to `threads` threads (2: a second
// one when there is enough work and a second CPU). EncodeWeightsEstimate and what it calls
// (FindBlockConfig) must therefore keep no shared mutable state.
std::vector<WeightEncoding> EncodeWeightsEstimates(const Subgraph& sg,
                                                   const std::vector<NpuOp>& ops,
                                                   const Arch& arch, int threads = 2);

// Encoded bytes of a weight stream of `n` equal values (the kernels of ones Vela builds).
int64_t ConstantWeightStreamBytes(int64_t n);
// Encoded bytes of the kernel of ones of a lowered op without a weight tensor (MEAN's
// depthwise sums): on U85 laid out in the depthwise traversal, elsewhere
// ConstantWeightStreamBytes(op.weight_bytes).
int64_t LoweredKernelStreamBytes(const NpuOp& op, const Arch& arch);

// Block configuration chosen for one op (doc 4.2 / 6.1).
struct BlockConfig {
  Shape3 ofm_block;
  Shape3 ifm_block;
  Shape3 ublock;
  bool part_kernel = false;
  bool acc40 = false;
};
BlockConfig FindBlockConfig(const Arch& arch, const NpuOp& op);
BlockConfig FindBlockConfigU85(const Arch& arch, const NpuOp& op);
// IFM elements a block-walking op (convolution, depthwise, vector product, pooling, reduce
// sum) reads under block configuration `bc` (doc 5.1, Vela's element access): its IFM block,
// as deep as the IFM (rounded up to 16 in NHCWB16), once per OFM block (depthwise and pooling:
// per block position) and 8 x 8 sub-kernel. Both the cost model and the fast-storage ranking
// count with it.
double IfmBlockReads(const NpuOp& op, Format ifm_format, const BlockConfig& bc);

// Cycle/traffic result for one NPU op before the network-level combination.
struct OpCost {
  double op_cycles = 0;     // section 4.5 / 4.6
  double npu_cycles = 0;    // plus weight/LUT DMA not hidden
  PerArea bytes{};          // after burst inflation
  PerArea access_cycles{};
  double total = 0;
  bool weights_buffered = false;
  int64_t weight_buffer_bytes = 0;
  double slack_next = 0;       // cycles the next op's weight DMA can hide under this op
  double refetch = 1;          // weight re-reads (OFM block positions in W x H)
  double ifm_read_cycles = 0;  // IFM bytes / bandwidth + latency
  double full_dma = 0;         // DMA time of all weights and scales (buffered variant)
  double visible_dma = 0;      // part of the first slice's DMA not hidden
  BlockConfig block;
};

struct MemSystem {
  const EthosUConfig* config = nullptr;
  // Per area: bandwidth B/cycle, burst, latencies; valid[a] = area exists.
  std::array<bool, kNumMemoryAreas> valid{};
  std::array<MemoryConfig, kNumMemoryAreas> mem{};
  std::array<double, kNumMemoryAreas> bandwidth{};
  MemoryArea const_area = MemoryArea::kOffChipFlash;  // weights' home
  MemoryArea arena_area = MemoryArea::kSram;          // feature maps' home
  MemoryArea staging_area = MemoryArea::kSram;        // SRAM (cache / weight buffers)
};
MemSystem MakeMemSystem(const EthosUConfig& config);

// Costs op `i` of `lw` with block configuration `block` (memory placement already decided).
// `prev_slack` is the previous op's cycles with its feature maps in their home memory (Vela's
// scheduler's estimate: the time to prefetch weights/LUT under it). `allow_buffer`
// lets the op DMA its weights to SRAM.
OpCost CostOp(const Arch& arch, const MemSystem& ms, const Lowered& lw, int i,
              const BlockConfig& block, double prev_slack, bool allow_buffer);

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_ETHOS_U_MODEL_H_
