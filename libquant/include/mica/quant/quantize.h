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
//   mica::quant::QuantizeOptions opt;          // int8 in, int8 out
//   MICA_ASSIGN_OR_RETURN(mica::Graph q, mica::quant::QuantizeGraph(float_graph, ranges, opt));
#ifndef MICA_QUANT_QUANTIZE_H_
#define MICA_QUANT_QUANTIZE_H_

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/quant/observer.h"

namespace mica {
namespace quant {

struct QuantizeOptions {
  // Keep float32 graph inputs/outputs: add QUANTIZE after each input and DEQUANTIZE before
  // each output. Off: the graph's inputs and outputs are int8.
  bool float_io = false;
  // Per-channel weights for convolutions (TFLite's default). Off: per tensor everywhere.
  bool per_channel = true;
};

// Returns the int8 version of `float_graph`'s entry subgraph. `ranges` must cover every float
// activation tensor whose parameters are not fixed by its operator (FailedPrecondition names
// the first missing one). Operators the pass does not support give Unimplemented naming the
// operator index and kind. The result owns its constants (ModelFormat::kBuilt) and shares no
// storage with `float_graph`.
absl::StatusOr<Graph> QuantizeGraph(const Graph& float_graph, const TensorRanges& ranges,
                                    const QuantizeOptions& options = {});

}  // namespace quant
}  // namespace mica

#endif  // MICA_QUANT_QUANTIZE_H_
