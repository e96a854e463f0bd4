// TFLite Micro's tensor arena: head (greedy plan of activations and scratch) and tail
// (persistent structures), for a 32-bit target or the 64-bit host build.
#include "mica/estimate/tflm_arena.h"

#include <algorithm>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cortex_m/internal.h"
#include "mica/estimate/cortex_m.h"
#include "mica/base/status_macros.h"
#include "mica/model/analysis.h"
#include "mica/model/planner.h"
#include "mica/runtime/plan.h"

namespace mica {
namespace estimate {
namespace {

constexpr int64_t kAlign = 16;  // TFLite Micro's MicroArenaBufferAlignment()
constexpr int64_t kTargetBookkeepingBytes = 176;

int64_t RoundUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// What one operator's kernel asks TFLite Micro for, in the order it asks: the builtin-options
// struct parsed into the tail, the persistent buffers of its Init and Prepare (each 16-aligned),
// and the scratch buffers it requests in Prepare (planned in the head, one handle each in the
// tail).
struct KernelMemory {
  int64_t builtin_bytes = 0;
  int64_t builtin_align = 4;
  std::vector<int64_t> init;
  std::vector<int64_t> prepare;  // per-channel multipliers and shifts
  std::vector<int64_t> tables;   // lookup tables
  std::vector<int64_t> buffers;  // other Prepare buffers (BATCH_MATMUL's operand copy, ...)
  int64_t kernel_sums = 0;  // CMSIS-NN MVE fully connected (a Prepare buffer, reported apart)
  std::vector<int64_t> scratch;
};

const Tensor* At(const Subgraph& sg, int32_t t) {
  return t >= 0 && t < static_cast<int32_t>(sg.tensors.size()) ? &sg.tensors[t] : nullptr;
}

const Tensor* Input(const Subgraph& sg, const Operator& op, size_t i) {
  return i < op.inputs.size() ? At(sg, op.inputs[i]) : nullptr;
}

const Tensor* Output(const Subgraph& sg, const Operator& op, size_t i) {
  return i < op.outputs.size() ? At(sg, op.outputs[i]) : nullptr;
}

// The builtin-options struct TFLite Micro's flatbuffer parser allocates for `op`, with its
// alignment (C structs of ints, floats and bools; the same for both pointer sizes unless noted):
// TfLiteConvParams and TfLiteDepthwiseConvParams 28, TfLiteTransposeConvParams 20,
// TfLitePoolParams 40, TfLiteReshapeParams 36, TfLiteFullyConnectedParams 32 and 8-aligned on
// the host build (16, 4-aligned, on the measured 32-bit target), TfLiteSoftmaxParams 4,
// TfLiteAddParams and TfLiteSubParams 8 (activation, a bool), TfLiteMulParams 4,
// TfLiteConcatenationParams 8, TfLiteLeakyReluParams 4, TfLiteReducerParams 1 (a bool,
// byte-aligned), TfLiteResizeBilinearParams and TfLiteResizeNearestNeighborParams 2 (two bools),
// TfLiteSplitParams and TfLiteSplitVParams 4, TfLiteStridedSliceParams 24 (five masks and a
// bool), TfLiteUnpackParams 8, TfLiteUnidirectionalSequenceLSTMParams 16 (activation, two clips,
// three bools), TfLiteBatchMatMulParams 3 (three bools), TfLiteSVDFParams 12,
// TfLiteArgMaxParams/ArgMin, TfLiteDivParams, TfLiteSpaceToDepthParams and
// TfLiteDepthToSpaceParams 4, TfLiteGatherParams and TfLitePackParams 8, TfLiteSqueezeParams 36.
// Operators without options (PAD, PADV2, RELU, LOGISTIC, QUANTIZE, MAXIMUM, SLICE, EXPAND_DIMS,
// ...) parse nothing. Sizes: the
// interpreter's tail on a one-operator model less every category it reports, the scratch
// handles and the allocator's objects (the report counts an allocation's alignment padding
// with it, so this is the struct's size). The
// fully-connected alignment: a 1-byte MEAN option before a fully-connected one leaves the
// host's tail 4 bytes longer than 4-byte alignment gives (activation_silu_64, residual_add_64,
// densenet_b2222_64 and 10 more corpus models, each 16 bytes short without it).
void BuiltinData(const Operator& op, int p, KernelMemory* k) {
  auto set = [&](int64_t bytes, int64_t align) {
    k->builtin_bytes = bytes;
    k->builtin_align = align;
  };
  switch (op.kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: set(28, 4); break;
    case OpKind::kTransposeConv: set(20, 4); break;
    case OpKind::kAveragePool2D: case OpKind::kMaxPool2D: set(40, 4); break;
    case OpKind::kReshape: set(36, 4); break;
    case OpKind::kFullyConnected: set(p == 8 ? 32 : 16, p == 8 ? 8 : 4); break;
    case OpKind::kSoftmax: case OpKind::kMul: case OpKind::kLeakyRelu: set(4, 4); break;
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kConcatenation: set(8, 4); break;
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax: set(1, 1); break;
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor: set(2, 1); break;
    case OpKind::kSplit: case OpKind::kSplitV: set(4, 4); break;
    case OpKind::kStridedSlice: set(24, 4); break;
    case OpKind::kUnpack: set(8, 4); break;
    case OpKind::kUnidirectionalSequenceLstm: set(16, 4); break;
    case OpKind::kBatchMatMul: set(3, 1); break;
    case OpKind::kSvdf: set(12, 4); break;
    case OpKind::kArgMax: case OpKind::kArgMin: case OpKind::kDiv: case OpKind::kSpaceToDepth:
    case OpKind::kDepthToSpace:
      set(4, 4);
      break;
    case OpKind::kGather: case OpKind::kPack: set(8, 4); break;
    case OpKind::kSqueeze: set(36, 4); break;
    default: break;
  }
}

// The OpData a kernel allocates in Init (one persistent buffer; 0: the kernel has none). Host
// build (p = 8): TFLite Micro's Python interpreter, the interpreter's persistent-buffer report
// on one-operator models (its requested bytes less the graph input and output pointer
// arrays), built with USE_TFLM_COMPRESSION: OpDataConv 80, transpose convolution 88 (ConvParams,
// two buffer indices, two pointers), OpDataFullyConnected 72,
// OpDataAdd 60, OpDataSub 52, OpDataMul 36, OpDataPooling 32, SoftmaxParams 80 (a double, ints
// and table pointers), concatenation 80, HardSwish 20, LeakyRelu 24, PRelu 28, Quantize and
// Dequantize 32, Relu 28, Relu6 8, Abs and Rsqrt 28, Logistic and Tanh 16, OpDataReduce 44,
// Pad and PadV2 56, StridedSlice 84, SquaredDifference 112, OpDataSvdf 36, OpDataLSTM 688,
// OpDataBatchMatmul 32, Div 28, SpaceToDepth and DepthToSpace 20, Gather 12; RESHAPE, SQUEEZE,
// EXPAND_DIMS, TRANSPOSE, SPLIT, SPLIT_V, UNPACK, PACK, SLICE, RESIZE_*, MAXIMUM, MINIMUM, NEG,
// SQRT, LOG, ARG_MAX, ARG_MIN and REVERSE_V2 allocate none (the operators the corpus does not
// have: test/data/tflm_arena/ops, int8 one-operator models recorded the same way). 32-bit
// target (p = 4): the structs with pointers shrink (OpDataConv 64, OpDataFullyConnected 32,
// SoftmaxParams 56, OpDataBatchMatmul 16); CMSIS-NN's fully-connected OpData wraps the
// reference one with its buffer index and kernel-sum pointer, 32 bytes more (calibrated: the
// dsp-m4 and ref-m55 arenas of the autoencoder, ten fully-connected layers, differ by 320
// bytes); the others are pointer-free or not measured on a target and keep the host size,
// which a 32-bit layout never exceeds. Operators not measured count 16 bytes.
int64_t OpDataBytes(const Operator& op, int p, bool cmsis) {
  switch (op.kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: return p == 8 ? 80 : 64;
    case OpKind::kTransposeConv: return 88;
    case OpKind::kFullyConnected: return (p == 8 ? 72 : 32) + (cmsis ? 32 : 0);
    case OpKind::kAdd: return 60;
    case OpKind::kSub: return 52;
    case OpKind::kMul: return 36;
    case OpKind::kAveragePool2D: case OpKind::kMaxPool2D: return 32;
    case OpKind::kSoftmax: return p == 8 ? 80 : 56;
    case OpKind::kConcatenation: return 80;
    case OpKind::kHardSwish: return 20;
    case OpKind::kLeakyRelu: return 24;
    case OpKind::kPrelu: case OpKind::kRelu: case OpKind::kRsqrt: case OpKind::kAbs:
      return 28;
    case OpKind::kRelu6: return 8;
    case OpKind::kQuantize: case OpKind::kDequantize: return 32;
    case OpKind::kDiv: return 28;
    case OpKind::kSpaceToDepth: case OpKind::kDepthToSpace: return 20;
    case OpKind::kGather: return 12;
    case OpKind::kSvdf: return 36;
    case OpKind::kLogistic: case OpKind::kTanh: return 16;
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax: return 44;
    case OpKind::kPad: case OpKind::kPadV2: return 56;
    case OpKind::kStridedSlice: return 84;
    case OpKind::kSquaredDifference: return 112;
    case OpKind::kUnidirectionalSequenceLstm: return 688;
    case OpKind::kBatchMatMul: return p == 8 ? 32 : 16;  // three pointers, three bools
    case OpKind::kReshape: case OpKind::kSqueeze: case OpKind::kExpandDims:
    case OpKind::kTranspose: case OpKind::kSplit: case OpKind::kSplitV: case OpKind::kUnpack:
    case OpKind::kResizeBilinear: case OpKind::kResizeNearestNeighbor: case OpKind::kMaximum:
    case OpKind::kMinimum: case OpKind::kNeg: case OpKind::kSqrt: case OpKind::kLog:
    case OpKind::kArgMax: case OpKind::kArgMin: case OpKind::kPack: case OpKind::kSlice:
      return 0;
    case OpKind::kOpaque:
      return op.opaque_name == "REVERSE_V2" ? 0 : 16;
    default:
      return 16;
  }
}

// The allocator's own objects in the tail (the arena buffer allocator, the greedy planner, the
// MicroAllocator, the builtin-data allocator, SubgraphAllocations, ...). Host: 488 bytes,
// measured with tflite-micro on one-operator models (the tail less every category it reports
// and the builtin options). Target: calibrated on the arenas measured with TFLite Micro +
// CMSIS-NN on Cortex-M (../shared/reference/tflm-cmsis-nn), the smallest value that keeps the
// estimate at or above every measured arena; see test/estimate/tflm_arena_test.cc.
int64_t BookkeepingBytes(int p) { return p == 8 ? 488 : kTargetBookkeepingBytes; }

// The tail as TFLite Micro fills it: each allocation taken below the previous one, its start
// aligned down, so an allocation costs its size plus the padding its alignment needs.
class TailSimulator {
 public:
  // Allocates `bytes` aligned to `align` and returns what the tail grew by.
  int64_t Allocate(int64_t bytes, int64_t align) {
    const int64_t before = used_;
    used_ = RoundUp(used_ + bytes, align);
    return used_ - before;
  }
  int64_t used() const { return used_; }

 private:
  int64_t used_ = 0;
};

// The scratch buffer TFLite Micro's CMSIS-NN kernels request for `w` (int8), by the
// ..._get_buffer_size rules of CMSIS-NN's wrappers: convolution 1x1 (no padding, stride 1)
// none, otherwise an im2col of two int16 columns (DSP, scalar) or four int8 columns rounded up
// to 8 (MVE); depthwise with multiplier 1: the 3x3 kernel (padding <= 1) none except on MVE,
// otherwise one int16 column of channels x taps (DSP/scalar) or 4 x 124 x taps (MVE); average
// pooling one int32 per channel on DSP. Fully connected keeps MVE kernel sums in the tail
// instead (see below).
int64_t CmsisNnScratchBytes(const CortexMWork& w, kernels::Isa isa) {
  const int64_t taps = int64_t{w.k_h} * w.k_w;
  const bool mve = isa == kernels::Isa::kMve;
  switch (w.kind) {
    case OpKind::kConv2D: {
      if (w.k_h == 1 && w.k_w == 1 && w.pad_h == 0 && w.pad_w == 0 && w.stride_h == 1 &&
          w.stride_w == 1) {
        return 0;
      }
      const int64_t col = taps * w.in_c;
      return mve ? 4 * ((col + 7) / 8) * 8 : 2 * col * 2;
    }
    case OpKind::kDepthwiseConv2D: {
      if (w.depth_multiplier != 1) return 0;
      if (mve) return 4 * 124 * taps;
      if (w.k_h == 3 && w.k_w == 3 && w.pad_h <= 1 && w.pad_w <= 1) return 0;
      return isa == kernels::Isa::kDsp ? 2 * int64_t{w.in_c} * taps : 0;
    }
    case OpKind::kAveragePool2D:
      return isa == kernels::Isa::kDsp ? 4 * int64_t{w.in_c} : 0;
    default:
      return 0;
  }
}

// Everything `op` (operator `index` of the main subgraph) asks of the allocator; see
// KernelMemory. Persistent buffers in Prepare: per-channel output multipliers and shifts (two
// int32 arrays of the filter's output channels) for every convolution, and for a fully
// connected layer whose filter is quantized per channel; the two int16 lookup tables
// (513 entries each) of an int16 softmax; BATCH_MATMUL's quantization block and transposed
// operand (see below); CMSIS-NN's MVE fully-connected kernel sums. Scratch
// requests of the reference kernels: MEAN and SUM of int8, uint8 and int16 one int32 per output
// element, then (every type) one int per input dimension and one per reduced axis (measured: a
// one-operator MEAN's head is 32 bytes above the sum buffer and its tail holds three handles);
// REDUCE_MAX one int per input dimension and one per reduced axis; TRANSPOSE_CONV one
// int32 (int8) or int64 (int16) accumulator per output element, then for an int16 bias its
// int64 copy; SVDF one int32 per batch and filter, and for int8 one per batch and unit;
// UNIDIRECTIONAL_SEQUENCE_LSTM four gate buffers, each the size of the cell state
// (batch x cells of the cell type). With CMSIS-NN the convolutions and average pooling ask for
// CMSIS-NN's buffers instead (CmsisNnScratchBytes).
KernelMemory DescribeKernel(const Graph& graph, int32_t index, const TflmArenaOptions& options) {
  const Subgraph& sg = graph.main();
  const Operator& op = sg.ops[static_cast<size_t>(index)];
  const int p = options.pointer_bytes;
  const bool cmsis = options.kernels == TflmKernels::kCmsisNn;
  KernelMemory k;
  BuiltinData(op, p, &k);
  if (const int64_t od = OpDataBytes(op, p, cmsis); od > 0) k.init.push_back(od);
  const Tensor* in = Input(sg, op, 0);
  const Tensor* out = Output(sg, op, 0);
  const int64_t channels = out != nullptr && !out->shape.empty() ? out->shape.back() : 0;
  switch (op.kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kTransposeConv:
      if (channels > 0) {
        k.prepare.push_back(4 * channels);
        k.prepare.push_back(4 * channels);
      }
      break;
    case OpKind::kFullyConnected: {
      const Tensor* filter = Input(sg, op, 1);
      if (filter != nullptr && filter->quant.per_channel()) {
        const int64_t n = static_cast<int64_t>(filter->quant.scale.size());
        k.prepare.push_back(4 * n);
        k.prepare.push_back(4 * n);
      }
      if (cmsis && options.isa == kernels::Isa::kMve && out != nullptr &&
          out->dtype == DType::kInt8 && channels > 0) {
        k.kernel_sums = 4 * channels;
      }
      break;
    }
    case OpKind::kBatchMatMul: {
      // OpDataBatchMatmul's quantization block (7 ints) for int8/int16, a transposed copy of an
      // operand that is not already transposed (a TfLiteEvalTensor, its dims, its data: the
      // right-hand side unless adj_y, the left-hand side if adj_x), and the output's writable
      // dims copy.
      const Tensor* rhs = Input(sg, op, 1);
      const auto* attrs = std::get_if<BatchMatMulAttrs>(&op.attrs);
      const bool adj_x = attrs != nullptr && attrs->adj_x;
      const bool adj_y = attrs != nullptr && attrs->adj_y;
      if (in != nullptr && (in->dtype == DType::kInt8 || in->dtype == DType::kInt16)) {
        k.buffers.push_back(28);
      }
      auto transposed = [&](const Tensor* t) {
        if (t == nullptr) return;
        k.buffers.push_back(3 * p);
        k.buffers.push_back(4 + 4 * static_cast<int64_t>(t->shape.size()));
        k.buffers.push_back(static_cast<int64_t>(t->num_bytes()));
      };
      if (adj_x) transposed(in);
      if (!adj_y) transposed(rhs);
      if (out != nullptr) k.buffers.push_back(4 + 4 * static_cast<int64_t>(out->shape.size()));
      break;
    }
    case OpKind::kSoftmax:
      if (in != nullptr && in->dtype == DType::kInt16) {
        k.tables.push_back(2 * 513);
        k.tables.push_back(2 * 513);
      }
      break;
    default:
      break;
  }
  if (cmsis) {
    absl::StatusOr<CortexMWork> w = DescribeCortexMWork(graph, index);
    if (w.ok() && w->dtype == DType::kInt8) {
      if (const int64_t b = CmsisNnScratchBytes(*w, options.isa); b > 0) k.scratch.push_back(b);
    }
  }
  switch (op.kind) {
    case OpKind::kMean: case OpKind::kSum: {
      if (in != nullptr && out != nullptr &&
          (in->dtype == DType::kInt8 || in->dtype == DType::kUInt8 ||
           in->dtype == DType::kInt16)) {
        k.scratch.push_back(4 * out->num_elements());
      }
      const Tensor* axis = Input(sg, op, 1);
      if (in != nullptr && axis != nullptr) {
        k.scratch.push_back(4 * static_cast<int64_t>(in->shape.size()));
        k.scratch.push_back(4 * axis->num_elements());
      }
      break;
    }
    case OpKind::kReduceMax: {
      const Tensor* axis = Input(sg, op, 1);
      if (in != nullptr && axis != nullptr) {
        k.scratch.push_back(4 * static_cast<int64_t>(in->shape.size()));
        k.scratch.push_back(4 * axis->num_elements());
      }
      break;
    }
    case OpKind::kTransposeConv: {
      const Tensor* x = Input(sg, op, 2);
      const Tensor* bias = Input(sg, op, 3);
      if (x != nullptr && out != nullptr) {
        if (x->dtype == DType::kInt8) k.scratch.push_back(4 * out->num_elements());
        if (x->dtype == DType::kInt16) {
          k.scratch.push_back(8 * out->num_elements());
          if (bias != nullptr && bias->dtype == DType::kInt16) {
            k.scratch.push_back(8 * bias->num_elements());
          }
        }
      }
      break;
    }
    case OpKind::kSvdf: {
      // One int32 (or float) per batch and filter; int8 adds one int32 per batch and unit
      // (filters / rank).
      const Tensor* feature = Input(sg, op, 1);
      const auto* attrs = std::get_if<SvdfAttrs>(&op.attrs);
      if (in != nullptr && feature != nullptr && !in->shape.empty() && !feature->shape.empty()) {
        const int64_t batch = in->shape[0], filters = feature->shape[0];
        const int64_t rank = attrs != nullptr && attrs->rank > 0 ? attrs->rank : 1;
        k.scratch.push_back(4 * batch * filters);
        if (in->dtype == DType::kInt8) k.scratch.push_back(4 * batch * (filters / rank));
      }
      break;
    }
    case OpKind::kUnidirectionalSequenceLstm: {
      const Tensor* cell = Input(sg, op, 19);  // the cell state
      if (cell != nullptr) {
        for (int b = 0; b < 4; ++b) k.scratch.push_back(static_cast<int64_t>(cell->num_bytes()));
      }
      break;
    }
    default:
      break;
  }
  return k;
}

}  // namespace

std::string_view RuntimeName(Runtime runtime) {
  switch (runtime) {
    case Runtime::kTflm: return "tflm";
    case Runtime::kExecuTorch: return "executorch";
    case Runtime::kMica: return "mica";
  }
  return "unknown";
}

absl::StatusOr<Runtime> ParseRuntime(std::string_view name) {
  for (Runtime r : {Runtime::kTflm, Runtime::kExecuTorch, Runtime::kMica}) {
    if (name == RuntimeName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown runtime '", std::string(name), "' (expected tflm, executorch or mica)"));
}

absl::StatusOr<TflmArena> EstimateTflmArena(const Graph& graph, const TflmArenaOptions& options) {
  const int p = options.pointer_bytes;
  if (p != 4 && p != 8) {
    return absl::InvalidArgumentError(absl::StrCat("pointer size ", p, " is not 4 or 8"));
  }
  if (graph.subgraphs.empty()) return absl::InvalidArgumentError("graph has no subgraph");
  const Subgraph& sg = graph.main();
  const int32_t n_t = static_cast<int32_t>(sg.tensors.size());
  const int32_t n_ops = static_cast<int32_t>(sg.ops.size());

  // Lifetimes in TFLite Micro's scopes (inputs at 0, operator i at i + 1).
  std::vector<int32_t> first(n_t, -1), last(n_t, -1);
  auto needs_arena = [&](int32_t t) {
    const Tensor* tensor = At(sg, t);
    return tensor != nullptr && !tensor->is_constant() && !tensor->is_variable &&
           tensor->num_bytes() > 0;
  };
  auto create = [&](int32_t t, int32_t scope) {
    if (t < 0 || t >= n_t) return;
    first[t] = scope;
    last[t] = scope;
  };
  for (int32_t t : sg.inputs) create(t, 0);
  for (int32_t t : sg.outputs) create(t, 0);
  std::vector<KernelMemory> kernels(static_cast<size_t>(n_ops));
  std::vector<int64_t> scratch(n_ops, 0);  // per operator, each request rounded up to 16
  for (int32_t i = 0; i < n_ops; ++i) {
    const Operator& op = sg.ops[i];
    for (int32_t t : op.outputs) create(t, i + 1);
    for (int32_t t : op.inputs) {
      if (t >= 0 && t < n_t) last[t] = i + 1;
    }
    for (int32_t t : op.outputs) {
      if (t >= 0 && t < n_t) last[t] = i + 1;
    }
    kernels[static_cast<size_t>(i)] = DescribeKernel(graph, i, options);
    for (int64_t b : kernels[static_cast<size_t>(i)].scratch) scratch[i] += RoundUp(b, kAlign);
  }
  for (int32_t t : sg.outputs) {
    if (t >= 0 && t < n_t) last[t] = n_ops;
  }

  // The planner's input list: tensors in index order, then scratch buffers in request order;
  // TFLite Micro reverses it before its stable largest-first sort, so it is handed over
  // reversed here (libmodel's kTflmGreedy keeps ties in the order given).
  std::vector<TensorLifetime> buffers;
  for (int32_t t = 0; t < n_t; ++t) {
    if (!needs_arena(t)) continue;
    buffers.push_back({t, first[t], last[t], sg.tensors[t].num_bytes()});
  }
  const size_t n_tensor_buffers = buffers.size();
  int64_t n_scratch = 0;
  TflmArena a;
  for (int32_t i = 0; i < n_ops; ++i) {
    for (int64_t b : kernels[static_cast<size_t>(i)].scratch) {
      ++n_scratch;
      if (b <= 0) continue;
      buffers.push_back({n_t + static_cast<int32_t>(n_scratch) - 1, i + 1, i + 1,
                         static_cast<size_t>(b)});
    }
    a.scratch_bytes += scratch[i];
  }
  auto plan_peak = [](std::vector<TensorLifetime> list) -> absl::StatusOr<ArenaPlan> {
    std::reverse(list.begin(), list.end());
    return PlanArena(list, Planner::kTflmGreedy, ArenaOptions{static_cast<size_t>(kAlign)});
  };
  absl::StatusOr<ArenaPlan> plan = plan_peak(buffers);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<ArenaPlan> act = plan_peak(
      std::vector<TensorLifetime>(buffers.begin(), buffers.begin() + n_tensor_buffers));
  if (!act.ok()) return act.status();
  a.head_bytes = static_cast<int64_t>(plan->peak_bytes);
  a.activation_bytes = static_cast<int64_t>(act->peak_bytes);

  // The peak: the buffer reaching the top of the head; of the scopes it lives in, the one
  // with the most bytes live is the operator at the peak.
  std::vector<int64_t> live(static_cast<size_t>(n_ops) + 1, 0);
  for (const TensorLifetime& b : buffers) {
    for (int32_t s = std::max(b.first_op, 0); s <= b.last_op && s <= n_ops; ++s) {
      live[static_cast<size_t>(s)] += RoundUp(static_cast<int64_t>(b.bytes), kAlign);
    }
  }
  int64_t top = -1;
  const TensorLifetime* top_buffer = nullptr;
  for (const ArenaAllocation& al : plan->allocations) {
    const int64_t end =
        static_cast<int64_t>(al.offset) + RoundUp(static_cast<int64_t>(al.bytes), kAlign);
    if (end <= top) continue;
    top = end;
    for (const TensorLifetime& b : buffers) {
      if (b.tensor == al.tensor) top_buffer = &b;
    }
  }
  if (top_buffer != nullptr && n_ops > 0) {
    int32_t best = -1;
    for (int32_t s = std::max(top_buffer->first_op, 1); s <= std::min(top_buffer->last_op, n_ops);
         ++s) {
      if (best < 0 || live[static_cast<size_t>(s)] > live[static_cast<size_t>(best)]) best = s;
    }
    if (best < 0) best = 1;
    a.peak_op = best - 1;
  }
  if (a.peak_op >= 0) {
    const int32_t scope = a.peak_op + 1;
    for (const TensorLifetime& b : buffers) {
      if (b.tensor < n_t && b.first_op <= scope && scope <= b.last_op) {
        a.peak_tensors.push_back(b.tensor);
      }
    }
    std::stable_sort(a.peak_tensors.begin(), a.peak_tensors.end(), [&](int32_t x, int32_t y) {
      return sg.tensors[x].num_bytes() > sg.tensors[y].num_bytes();
    });
    a.peak_scratch_bytes = scratch[a.peak_op];
  }

  // The tail, in TFLite Micro's order: the allocator's objects, eval tensors and nodes
  // (StartModelAllocation), builtin options (parsing), each kernel's Init (OpData), each
  // kernel's Prepare (per-channel multipliers and shifts, MVE kernel sums), scratch handles and
  // variables (FinishModelAllocation), then the graph inputs' and outputs' pointer arrays and
  // persistent TfLiteTensors (AllocateTensors).
  TailSimulator tail;
  const int64_t struct_align = p;
  const int64_t bookkeeping = tail.Allocate(BookkeepingBytes(p), struct_align);
  const int64_t eval = tail.Allocate(int64_t{n_t} * 3 * p, struct_align);
  const int64_t nodes = tail.Allocate(int64_t{n_ops} * 8 * p, struct_align);
  int64_t builtin = 0, opdata = 0, opdata_n = 0, per_channel = 0, per_channel_n = 0;
  int64_t kernel_sums = 0, kernel_sums_n = 0, variables = 0, variables_n = 0;
  int64_t tables = 0, tables_n = 0, other = 0, other_n = 0;
  for (const KernelMemory& k : kernels) {
    if (k.builtin_bytes > 0) builtin += tail.Allocate(k.builtin_bytes, k.builtin_align);
  }
  for (const KernelMemory& k : kernels) {
    for (int64_t b : k.init) {
      opdata += tail.Allocate(b, kAlign);
      ++opdata_n;
    }
  }
  for (const KernelMemory& k : kernels) {
    for (int64_t b : k.prepare) {
      per_channel += tail.Allocate(b, kAlign);
      ++per_channel_n;
    }
    for (int64_t b : k.tables) {
      tables += tail.Allocate(b, kAlign);
      ++tables_n;
    }
    for (int64_t b : k.buffers) {
      other += tail.Allocate(b, kAlign);
      ++other_n;
    }
    if (k.kernel_sums > 0) {
      kernel_sums += tail.Allocate(k.kernel_sums, kAlign);
      ++kernel_sums_n;
    }
  }
  const int64_t handles = n_scratch > 0 ? tail.Allocate(n_scratch * p, struct_align) : 0;
  for (const Tensor& t : sg.tensors) {
    if (t.is_variable) {
      variables += tail.Allocate(static_cast<int64_t>(t.num_bytes()), kAlign);
      ++variables_n;
    }
  }
  int64_t io = 0;
  for (const std::vector<int32_t>* list : {&sg.inputs, &sg.outputs}) {
    if (list->empty()) continue;
    io += tail.Allocate(static_cast<int64_t>(list->size()) * p, kAlign);
    for (int32_t t : *list) {
      const Tensor* tensor = At(sg, t);
      io += tail.Allocate(p == 8 ? 64 : 40, struct_align);  // TfLiteTensor
      if (tensor != nullptr && !tensor->quant.scale.empty() && !tensor->quant.zero_point.empty()) {
        io += tail.Allocate(3 * p, struct_align);  // TfLiteAffineQuantization
        io += tail.Allocate(4 + 4 * static_cast<int64_t>(tensor->quant.scale.size()), 4);
      }
    }
  }
  const int64_t n_io = static_cast<int64_t>(sg.inputs.size() + sg.outputs.size());
  a.tail = {
      {"eval tensors", eval, n_t},
      {"node and registration", nodes, n_ops},
      {"builtin options", builtin, n_ops},
      {"kernel op data", opdata, opdata_n},
      {"per-channel quantization", per_channel, per_channel_n},
      {"lookup tables", tables, tables_n},
      {"kernel buffers", other, other_n},
      {"kernel sums (MVE)", kernel_sums, kernel_sums_n},
      {"scratch handles", handles, n_scratch},
      {"variable tensors", variables, variables_n},
      {"input/output tensors", io, n_io},
      {"allocator bookkeeping", bookkeeping, 1},
  };
  for (const TflmTailItem& it : a.tail) a.tail_bytes += it.bytes;
  a.total_bytes = a.head_bytes + a.tail_bytes;
  return a;
}

namespace {

// ExecuTorch plans memory when it exports: the program's memory plan lists the buffers the
// application hands the method (every non-constant tensor sits at a planned offset in one of
// them). That plan is the arena to reserve; the runtime's method allocator (EValues, kernel and
// delegate bookkeeping) and temp allocator come on top and are not in the program.
absl::Status AddExecuTorchMemory(const Graph& graph, const TargetProfile& profile, Estimate* e) {
  if (graph.source_format != ModelFormat::kExecuTorch) {
    return absl::InvalidArgumentError(
        "runtime executorch: the memory plan comes from an ExecuTorch program (.pte/.bpte), "
        "made when ExecuTorch exports the model; this model is not one (use --runtime tflm or "
        "--runtime mica)");
  }
  RuntimeMemory m;
  m.runtime = std::string(RuntimeName(Runtime::kExecuTorch));
  m.sram_bytes = profile.cortex_m.sram_bytes;
  m.flash_capacity_bytes = profile.cortex_m.flash_bytes;
  m.model_flash_bytes = e->weights_original_bytes;
  m.code_flash_bytes = e->code_bytes;
  m.flash_bytes = m.model_flash_bytes + m.code_flash_bytes;
  auto it = graph.metadata.find("executorch.planned_buffers");
  std::vector<int64_t> buffers;
  if (it != graph.metadata.end()) {
    for (absl::string_view part : absl::StrSplit(it->second, ',')) {
      int64_t b = 0;
      if (!absl::SimpleAtoi(part, &b) || b < 0) {
        return absl::InternalError("runtime executorch: malformed planned-buffer list");
      }
      buffers.push_back(b);
    }
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    m.arena_bytes += buffers[i];
    if (buffers.size() > 1) m.tail.emplace_back(absl::StrCat("planned buffer ", i + 1), buffers[i]);
  }
  m.head_bytes = m.arena_bytes;
  m.basis = absl::StrCat("ExecuTorch memory plan of method '",
                         graph.main().name, "': ", buffers.size(),
                         " planned buffer(s); the method and temp allocators are not included");
  e->memory = std::move(m);
  return absl::OkStatus();
}

}  // namespace

absl::Status AddRuntimeMemory(const Graph& graph, const TargetProfile& profile, Runtime runtime,
                              Estimate* e) {
  if (profile.kind != TargetKind::kCortexM) {
    return absl::InvalidArgumentError(
        absl::StrCat("--runtime applies to Cortex-M profiles; '", profile.name, "' is not one"));
  }
  if (graph.subgraphs.empty()) return absl::InvalidArgumentError("graph has no subgraph");
  if (runtime == Runtime::kExecuTorch) return AddExecuTorchMemory(graph, profile, e);
  const Subgraph& sg = graph.main();
  RuntimeMemory m;
  m.runtime = std::string(RuntimeName(runtime));
  m.sram_bytes = profile.cortex_m.sram_bytes;
  m.flash_capacity_bytes = profile.cortex_m.flash_bytes;
  m.model_flash_bytes = e->weights_original_bytes;
  m.code_flash_bytes = e->code_bytes;
  m.flash_bytes = m.model_flash_bytes + m.code_flash_bytes;
  if (runtime == Runtime::kTflm) {
    TflmArenaOptions o;
    o.isa = CortexMVariant(profile.cortex_m);
    MICA_ASSIGN_OR_RETURN(TflmArena a, EstimateTflmArena(graph, o));
    m.basis = absl::StrCat("TFLite Micro arena, 32-bit, CMSIS-NN ", kernels::IsaName(o.isa),
                           " kernels");
    m.arena_bytes = a.total_bytes;
    m.head_bytes = a.head_bytes;
    m.scratch_bytes = a.scratch_bytes;
    m.tail_bytes = a.tail_bytes;
    for (const TflmTailItem& it : a.tail) {
      if (it.bytes > 0) m.tail.emplace_back(it.name, it.bytes);
    }
    m.peak_op_index = a.peak_op;
    for (int32_t t : a.peak_tensors) m.peak_tensors.push_back(sg.tensors[t].name);
  } else {
    std::vector<TensorLifetime> lts = ComputeLifetimes(sg);
    MICA_ASSIGN_OR_RETURN(ArenaPlan plan, PlanArena(lts, Planner::kFirstFit));
    // The device runtime's own figure: the plan compiler's arena (activations from the
    // executor's planner, the largest scratch of the profile's kernel variant, state tensors),
    // the exact bytes the plan header asks the caller for and the firmware reports.
    const kernels::Isa isa = CortexMVariant(profile.cortex_m);
    absl::StatusOr<runtime::CompiledPlan> compiled = runtime::CompilePlan(graph, {isa, 0});
    if (compiled.ok()) {
      m.basis = absl::StrCat("mica device runtime, plan for ", kernels::IsaName(isa),
                             " kernels (mica compile): the arena its plan header asks for");
      m.arena_bytes = static_cast<int64_t>(compiled->arena_bytes);
      m.head_bytes = static_cast<int64_t>(compiled->activation_bytes + compiled->scratch_bytes);
      m.scratch_bytes = static_cast<int64_t>(compiled->scratch_bytes);
      m.tail_bytes = static_cast<int64_t>(compiled->state_bytes);
      if (compiled->state_bytes > 0) {
        m.tail.emplace_back("state tensors", static_cast<int64_t>(compiled->state_bytes));
      }
      m.model_flash_bytes = static_cast<int64_t>(compiled->bytes.size());
      m.flash_bytes = m.model_flash_bytes + m.code_flash_bytes;
    } else {
      // A graph the device runtime cannot run: the host executor's activation plan, saying why.
      m.basis = absl::StrCat("mica host executor's planned activations (no device plan: ",
                             compiled.status().message(), ")");
      m.arena_bytes = m.head_bytes = static_cast<int64_t>(plan.peak_bytes);
    }
    // The peak: the operator where the planned buffers reach the top.
    size_t top = 0;
    for (const ArenaAllocation& al : plan.allocations) {
      if (al.offset + al.bytes < top) continue;
      top = al.offset + al.bytes;
      for (const TensorLifetime& l : lts) {
        if (l.tensor == al.tensor) m.peak_op_index = l.first_op;
      }
    }
    std::vector<std::pair<size_t, std::string>> live;
    for (const TensorLifetime& l : lts) {
      if (l.first_op <= m.peak_op_index && m.peak_op_index <= l.last_op) {
        live.emplace_back(l.bytes, sg.tensors[l.tensor].name);
      }
    }
    std::stable_sort(live.begin(), live.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (auto& [bytes, name] : live) m.peak_tensors.push_back(name);
  }
  if (m.peak_op_index >= 0 && m.peak_op_index < static_cast<int32_t>(sg.ops.size())) {
    m.peak_operator = std::string(sg.ops[m.peak_op_index].name());
  }
  e->memory = std::move(m);
  return absl::OkStatus();
}

}  // namespace estimate
}  // namespace mica
