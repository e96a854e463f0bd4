#include "mica/model/op.h"

namespace mica {

std::string_view OpKindName(OpKind k) {
  switch (k) {
    case OpKind::kOpaque: return "OPAQUE";
    case OpKind::kConv2D: return "CONV_2D";
    case OpKind::kDepthwiseConv2D: return "DEPTHWISE_CONV_2D";
    case OpKind::kTransposeConv: return "TRANSPOSE_CONV";
    case OpKind::kFullyConnected: return "FULLY_CONNECTED";
    case OpKind::kBatchMatMul: return "BATCH_MATMUL";
    case OpKind::kAdd: return "ADD";
    case OpKind::kSub: return "SUB";
    case OpKind::kMul: return "MUL";
    case OpKind::kDiv: return "DIV";
    case OpKind::kMaximum: return "MAXIMUM";
    case OpKind::kMinimum: return "MINIMUM";
    case OpKind::kSquaredDifference: return "SQUARED_DIFFERENCE";
    case OpKind::kMaxPool2D: return "MAX_POOL_2D";
    case OpKind::kAveragePool2D: return "AVERAGE_POOL_2D";
    case OpKind::kMean: return "MEAN";
    case OpKind::kSum: return "SUM";
    case OpKind::kReduceMax: return "REDUCE_MAX";
    case OpKind::kSoftmax: return "SOFTMAX";
    case OpKind::kLogistic: return "LOGISTIC";
    case OpKind::kTanh: return "TANH";
    case OpKind::kRelu: return "RELU";
    case OpKind::kRelu6: return "RELU6";
    case OpKind::kReluN1To1: return "RELU_N1_TO_1";
    case OpKind::kLeakyRelu: return "LEAKY_RELU";
    case OpKind::kHardSwish: return "HARD_SWISH";
    case OpKind::kPrelu: return "PRELU";
    case OpKind::kExp: return "EXP";
    case OpKind::kLog: return "LOG";
    case OpKind::kSqrt: return "SQRT";
    case OpKind::kRsqrt: return "RSQRT";
    case OpKind::kAbs: return "ABS";
    case OpKind::kNeg: return "NEG";
    case OpKind::kReshape: return "RESHAPE";
    case OpKind::kSqueeze: return "SQUEEZE";
    case OpKind::kExpandDims: return "EXPAND_DIMS";
    case OpKind::kTranspose: return "TRANSPOSE";
    case OpKind::kPad: return "PAD";
    case OpKind::kPadV2: return "PADV2";
    case OpKind::kConcatenation: return "CONCATENATION";
    case OpKind::kSplit: return "SPLIT";
    case OpKind::kSplitV: return "SPLIT_V";
    case OpKind::kStridedSlice: return "STRIDED_SLICE";
    case OpKind::kSlice: return "SLICE";
    case OpKind::kGather: return "GATHER";
    case OpKind::kPack: return "PACK";
    case OpKind::kUnpack: return "UNPACK";
    case OpKind::kResizeNearestNeighbor: return "RESIZE_NEAREST_NEIGHBOR";
    case OpKind::kResizeBilinear: return "RESIZE_BILINEAR";
    case OpKind::kSpaceToDepth: return "SPACE_TO_DEPTH";
    case OpKind::kDepthToSpace: return "DEPTH_TO_SPACE";
    case OpKind::kArgMax: return "ARG_MAX";
    case OpKind::kArgMin: return "ARG_MIN";
    case OpKind::kQuantize: return "QUANTIZE";
    case OpKind::kDequantize: return "DEQUANTIZE";
    case OpKind::kSvdf: return "SVDF";
    case OpKind::kUnidirectionalSequenceLstm: return "UNIDIRECTIONAL_SEQUENCE_LSTM";
  }
  return "UNKNOWN";
}

std::string_view PaddingName(Padding p) { return p == Padding::kSame ? "SAME" : "VALID"; }

std::string_view ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "NONE";
    case Activation::kRelu: return "RELU";
    case Activation::kReluN1To1: return "RELU_N1_TO_1";
    case Activation::kRelu6: return "RELU6";
    case Activation::kTanh: return "TANH";
    case Activation::kSignBit: return "SIGN_BIT";
  }
  return "UNKNOWN";
}

std::string_view Operator::name() const {
  return kind == OpKind::kOpaque ? std::string_view(opaque_name) : OpKindName(kind);
}

}  // namespace mica
