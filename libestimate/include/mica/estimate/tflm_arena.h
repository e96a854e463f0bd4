// mica estimate — the tensor arena TensorFlow Lite Micro needs for a model, to the byte: what a
// deployment must reserve as `tensor_arena[...]`.
//
// TFLite Micro splits one arena into a head (the non-persistent section, planned once) and a
// tail (persistent allocations, taken from the top downwards). The rules below are facts read
// from TFLite Micro's allocator and planner sources (micro_allocator.cc,
// micro_allocation_info.cc, greedy_memory_planner.cc) and checked against its interpreter's own
// report (the `tflite-micro` PyPI build, 64-bit) and against arenas measured on Cortex-M
// (../shared/reference/tflm-cmsis-nn/totals.csv):
//
//   head  = the greedy plan of every activation tensor (non-constant, non-variable, bytes > 0)
//           and every kernel scratch buffer, sizes rounded up to 16. Lifetimes count in
//           "scopes": graph inputs are created at scope 0, operator i runs at scope i+1, a
//           scratch buffer lives at its operator's scope only, graph outputs live to the end.
//           Buffers are handed to the planner tensors first then scratch buffers, the planner
//           reverses that list and bubble-sorts it by size, largest first, stably: equal sizes
//           go later-added first. Each buffer takes the first gap between time-overlapping
//           placed buffers walked in offset order.
//   tail  = TfLiteEvalTensor per tensor (3 words), NodeAndRegistration per operator (8 words),
//           parsed builtin options per operator, kernels' persistent data (OpData from Init;
//           from Prepare per-channel multipliers and shifts of convolutions and per-channel
//           fully-connected layers, int16 softmax lookup tables, BATCH_MATMUL's transposed
//           operand copy, CMSIS-NN MVE fully-connected kernel sums), scratch-buffer handles
//           (1 word each), persistent TfLiteTensors for the graph inputs and outputs the
//           application reads, variable tensors, and the allocator's own objects. Scratch
//           requests of the reference kernels (MEAN/SUM, REDUCE_MAX, TRANSPOSE_CONV's
//           accumulators, SVDF's, the LSTM's four gate buffers) and of CMSIS-NN's convolutions
//           and pooling are planned in the head.
//
// The word size is the build's pointer size: 4 on Cortex-M (the target), 8 on a 64-bit host
// (TFLite Micro's Python interpreter), so the same model has two arenas. The tail is simulated
// in TFLite Micro's allocation order (allocator objects, eval tensors, nodes, builtin options,
// every kernel's Init, every kernel's Prepare, scratch handles, variables, the inputs' and
// outputs' TfLiteTensors), each allocation aligned down, so alignment padding is counted.
//
// How exact (test/estimate/tflm_arena_test.cc):
//   host, 64-bit, reference kernels (tflite-micro 0.dev20261023182759): head, tail and total
//     byte for byte on the four MLPerf Tiny int8 models, on each of their 70 operators alone,
//     on the 85 models of the corpus the interpreter runs (test/corpus/reference/tflm:
//     CNNs, transpose convolutions, GRU and LSTM models, per-channel fully-connected stacks,
//     int16 variants) and on the ten shared models recorded beside them (SVDF, LSTM, float
//     models with QUANTIZE/DEQUANTIZE, MAXIMUM). Struct sizes come from the interpreter's own
//     allocation report on one-operator models cut from the corpus (test/corpus/tools/
//     record_tflm_single_op.py; 1,671 distinct operators, each checked byte for byte) and on
//     prefixes of corpus models (which showed the 8-byte alignment of the host's
//     fully-connected options), and agree with TFLite Micro's headers where those were read;
//     the allocator's own objects (488 bytes) are measured the same way.
//   target, 32-bit (TFLite Micro + CMSIS-NN measured on Cortex-M, 16 model x build figures):
//     the head is TFLite Micro's plan (exact where the tail is known); the tail uses 32-bit
//     struct sizes, and two figures are calibrated on the measurements: the allocator's own
//     objects (176 bytes, the smallest keeping every estimate at or above the measured arena)
//     and the CMSIS-NN fully-connected OpData (32 bytes over the reference one). Result: 0 to
//     56 bytes above the measured arena (at most +0.35 %), never below. Kernels not in those
//     models keep their 64-bit OpData size on the target (an upper bound: a 32-bit layout is
//     never larger) and the reference kernels' scratch (CMSIS-NN's own transpose-convolution
//     and LSTM buffers are not modelled).
// Not modelled: offline-planned offsets (OfflineMemoryAllocation metadata), control flow
// subgraphs (IF/WHILE), kernels the corpus does not exercise (their OpData counts 16 bytes,
// no Prepare buffers or scratch), the temporary head use during Prepare.
//   mica::estimate::TflmArenaOptions o;               // 32-bit target, CMSIS-NN
//   o.isa = mica::kernels::Isa::kMve;
//   MICA_ASSIGN_OR_RETURN(mica::estimate::TflmArena a, mica::estimate::EstimateTflmArena(g, o));
//   std::cout << a.total_bytes << " = head " << a.head_bytes << " + tail " << a.tail_bytes;
#ifndef MICA_ESTIMATE_TFLM_ARENA_H_
#define MICA_ESTIMATE_TFLM_ARENA_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

// Which kernels the TFLite Micro build links.
enum class TflmKernels {
  kReference,  // TFLite Micro's reference kernels (no scratch buffers, no kernel sums)
  kCmsisNn,    // CMSIS-NN kernels for `isa`
};

struct TflmArenaOptions {
  int pointer_bytes = 4;                    // 4: Cortex-M; 8: the 64-bit host build
  TflmKernels kernels = TflmKernels::kCmsisNn;
  kernels::Isa isa = kernels::Isa::kScalar;  // CMSIS-NN variant (ignored for kReference)
};

// One persistent (tail) category.
struct TflmTailItem {
  std::string name;   // "eval tensors", "node and registration", ...
  int64_t bytes = 0;
  int64_t count = 0;  // allocations or entries in the category
};

struct TflmArena {
  int64_t head_bytes = 0;         // planned activations + scratch (the non-persistent section)
  int64_t activation_bytes = 0;   // the plan of activations alone (no scratch buffers)
  int64_t scratch_bytes = 0;      // sum of scratch requests (rounded to 16), planned with them
  int64_t tail_bytes = 0;         // sum of `tail`
  int64_t total_bytes = 0;        // head + tail: the arena to reserve
  std::vector<TflmTailItem> tail;
  // The operator at the head's peak and the tensors (indices) live there, largest first.
  int32_t peak_op = -1;
  std::vector<int32_t> peak_tensors;
  int64_t peak_scratch_bytes = 0;  // scratch of peak_op, part of the peak
};

// Returns the arena TFLite Micro needs for the main subgraph of `graph` with `options`.
// InvalidArgument when the pointer size is not 4 or 8 or the graph has no subgraph.
absl::StatusOr<TflmArena> EstimateTflmArena(const Graph& graph, const TflmArenaOptions& options);

// The runtimes `mica check --runtime` knows.
enum class Runtime { kTflm, kExecuTorch, kMica };

// "tflm", "executorch", "mica".
std::string_view RuntimeName(Runtime runtime);

// Parses a runtime name as RuntimeName spells it; InvalidArgument listing the names otherwise.
absl::StatusOr<Runtime> ParseRuntime(std::string_view name);

// Fills e->memory for `runtime` on the Cortex-M profile `profile`: kTflm the TFLite Micro arena
// for the profile's kernel variant (32-bit); kMica the arena of mica's device runtime, the exact
// figure of the plan compiled for the profile's kernel variant (runtime::CompilePlan; the
// firmware reports the same), or the host executor's planned activations when the graph has an
// operator the device runtime cannot run (the basis says so); kExecuTorch the program's memory
// plan (the planned buffers of an ExecuTorch .pte/.bpte; InvalidArgument for other formats).
// InvalidArgument for other profile kinds.
absl::Status AddRuntimeMemory(const Graph& graph, const TargetProfile& profile, Runtime runtime,
                              Estimate* e);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_TFLM_ARENA_H_
