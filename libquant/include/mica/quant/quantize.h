// mica quant — the float32 -> int8 post-training quantization pass.
//
// QuantizeGraph turns a float graph plus calibration ranges into the int8 graph a TFLite
// converter would produce: int8 activations (asymmetric, per tensor), int8 weights (symmetric,
// per channel on CONV_2D axis 0 / DEPTHWISE_CONV_2D axis 3 / TRANSPOSE_CONV axis 0, per tensor
// on FULLY_CONNECTED and BATCH_MATMUL), int32 biases (scale = input scale x weight scale).
// Operators that only move data (RESHAPE, SQUEEZE, EXPAND_DIMS, TRANSPOSE, PAD, PADV2,
// MAX_POOL_2D, AVERAGE_POOL_2D, SLICE, STRIDED_SLICE, GATHER, SPLIT) give their outputs their
// input's parameters; CONCATENATION gives all inputs and its output one shared set (inserting
// a requantizing QUANTIZE where an input's parameters are fixed elsewhere). SOFTMAX and
// LOGISTIC outputs are fixed at scale 1/256, zero point -128; TANH at 1/128, 0.
//
// Schemes beyond a8w8 (QuantizeOptions):
//  * int16 activations (TFLite's 16x8 mode): symmetric, zero point 0, q in [-32767, 32767];
//    conv-like biases become int64; SOFTMAX/LOGISTIC/TANH outputs are fixed at 1/32768, 0.
//    Operators TFLite has no 16x8 kernel for stay float (with float_fallback) or fail.
//  * int4 weights (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED): symmetric q in [-7, 7],
//    packed two per byte, low nibble first (TFLite's INT4 tensors); the per-channel scale is
//    the MSE-optimal clip of the channel's range, so some weights may saturate. int4
//    FULLY_CONNECTED weights stay per tensor (TFLite Micro refuses per-channel int4 filters).
//  * float fallback: listed operators (keep_float) and, with float_fallback, the ones the pass
//    cannot quantize stay float32, with DEQUANTIZE before and QUANTIZE after them.
//
//   mica::quant::QuantizeOptions opt;          // int8 in, int8 out
//   MICA_ASSIGN_OR_RETURN(mica::Graph q, mica::quant::QuantizeGraph(float_graph, ranges, opt));
#ifndef MICA_QUANT_QUANTIZE_H_
#define MICA_QUANT_QUANTIZE_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/quant/observer.h"

namespace mica {
namespace quant {

enum class ActivationType { kInt8, kInt16 };
enum class WeightType { kInt8, kInt4 };

struct QuantizeOptions {
  // Keep float32 graph inputs/outputs: add QUANTIZE after each input and DEQUANTIZE before
  // each output. Off: the graph's inputs and outputs are int8 (int16).
  bool float_io = false;
  // uint8 graph inputs/outputs around an int8 graph (QUANTIZE uint8 <-> int8 at the edges,
  // zero point shifted by 128). Only with int8 activations; float_io wins.
  bool uint8_io = false;
  // Per-channel weights for convolutions (TFLite's default). Off: per tensor everywhere.
  bool per_channel = true;
  // Per-channel (axis 0) weights for FULLY_CONNECTED too, as TensorFlow 2.21's converter
  // writes them; off: per tensor, as the published MLPerf Tiny int8 models have them.
  bool per_channel_fc = false;
  ActivationType activations = ActivationType::kInt8;
  WeightType weights = WeightType::kInt8;
  // Operator indices (entry subgraph) to keep in float32.
  std::set<int32_t> keep_float;
  // Operators the pass cannot quantize stay float32 (listed in QuantizeReport::fallbacks)
  // instead of failing with Unimplemented.
  bool float_fallback = false;
};

// An operator left in float32, and why.
struct FloatFallback {
  int32_t op = -1;  // index in the float graph
  std::string op_name;
  std::string reason;
};

// How one constant weight tensor was quantized.
struct WeightReport {
  int32_t op = -1;  // index in the float graph
  std::string tensor;
  int32_t channels = 1;       // scales written (1: per tensor)
  int32_t bits = 8;
  int64_t elements = 0;
  int64_t clipped = 0;        // weights beyond the quantized range (saturated)
  double sqnr_db = 0;         // dequantized weights vs float
  int64_t bias_saturated = 0; // bias values that did not fit the bias type
};

struct QuantizeResult {
  Graph graph;
  std::vector<FloatFallback> fallbacks;
  std::vector<WeightReport> weights;
  // For each tensor of graph.main(): the float graph tensor it stands for (its quantized or
  // float copy), or -1 for a tensor the pass made up.
  std::vector<int32_t> source_tensor;
};

// Returns the int8 version of `float_graph`'s entry subgraph. `ranges` must cover every float
// activation tensor whose parameters are not fixed by its operator (FailedPrecondition names
// the first missing one). Operators the pass does not support give Unimplemented naming the
// operator index and kind. The result owns its constants (ModelFormat::kBuilt) and shares no
// storage with `float_graph`.
absl::StatusOr<Graph> QuantizeGraph(const Graph& float_graph, const TensorRanges& ranges,
                                    const QuantizeOptions& options = {});

// QuantizeGraph with the fallbacks, the weight statistics and the tensor correspondence.
absl::StatusOr<QuantizeResult> QuantizeWithReport(const Graph& float_graph,
                                                  const TensorRanges& ranges,
                                                  const QuantizeOptions& options = {});

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_QUANTIZE_H_
