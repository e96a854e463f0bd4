// mica — shape inference: the output shapes of an operator, by TFLite's rules.
//
//   MICA_ASSIGN_OR_RETURN(auto shapes, mica::InferOutputShapes(sg, op));
#ifndef MICA_MODEL_SHAPE_INFERENCE_H_
#define MICA_MODEL_SHAPE_INFERENCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"

namespace mica {

// Returns the output shapes of `op` given the shapes (and, for shape operands such as
// RESHAPE's target, PAD's paddings or MEAN's axes, the constant data) of its inputs in `sg`.
// Supports convolutions (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV), pools, FULLY_CONNECTED,
// BATCH_MATMUL, broadcasting binary ops, unary activations, RESHAPE, SQUEEZE, EXPAND_DIMS,
// TRANSPOSE, CONCATENATION, MEAN/SUM/REDUCE_MAX, SOFTMAX, PAD/PADV2, QUANTIZE/DEQUANTIZE;
// others give Unimplemented. Inconsistent operands give InvalidArgument naming the op.
absl::StatusOr<std::vector<std::vector<int32_t>>> InferOutputShapes(const Subgraph& sg,
                                                                    const Operator& op);

// Returns the output size of a SAME/VALID convolution or pool along one axis (TFLite rules).
int32_t ConvOutputSize(int32_t in, int32_t filter, int32_t stride, int32_t dilation,
                       Padding padding);

// Returns "[1,49,10,1]".
std::string ShapeStr(const std::vector<int32_t>& shape);

}  // namespace mica

#endif  // MICA_MODEL_SHAPE_INFERENCE_H_
