// Hand-crafted TFLite flatbuffers for reader tests, built with the flatbuffers builder through
// mica's generated schema accessors (independent of mica's writer). Every field can be set to
// a hostile value.
#ifndef MICA_TEST_MODEL_TFLITE_TEST_UTIL_H_
#define MICA_TEST_MODEL_TFLITE_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "tflite_schema_generated.h"

namespace mica {
namespace testing {

namespace tfl = ::mica::tflite_fb;

struct FbTensor {
  std::vector<int32_t> shape;
  int8_t type = tfl::TensorType_INT8;
  uint32_t buffer = 0;
  std::string name;
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t quantized_dimension = 0;
  std::optional<std::vector<int32_t>> shape_signature;
  bool is_variable = false;
  // Writes `zero_point` with its int64 elements 4 bytes past an 8-byte boundary (see
  // CreateMisalignedInt64Vector).
  bool misaligned_zero_point = false;
};

inline FbTensor MakeTensor(std::vector<int32_t> shape, int8_t type, uint32_t buffer,
                           std::string name, std::vector<float> scale = {},
                           std::vector<int64_t> zero_point = {}) {
  FbTensor t;
  t.shape = std::move(shape);
  t.type = type;
  t.buffer = buffer;
  t.name = std::move(name);
  t.scale = std::move(scale);
  t.zero_point = std::move(zero_point);
  return t;
}

using FbOptionsFn = std::function<std::pair<tfl::BuiltinOptions, flatbuffers::Offset<void>>(
    flatbuffers::FlatBufferBuilder&)>;

struct FbOp {
  int32_t builtin_code = 0;
  std::optional<int8_t> deprecated_code;  // default: min(builtin_code, 127)
  std::string custom_code;
  int32_t version = 1;
  std::optional<uint32_t> opcode_index;  // default: this operator's own code entry
  std::vector<int32_t> inputs, outputs, intermediates;
  FbOptionsFn options;
  std::vector<uint8_t> custom_options;
  uint64_t large_custom_options_offset = 0, large_custom_options_size = 0;
};

struct FbBuffer {
  std::optional<std::vector<uint8_t>> data;
  uint64_t offset = 0, size = 0;
};

inline FbBuffer DataBuffer(std::vector<uint8_t> bytes) {
  FbBuffer b;
  b.data = std::move(bytes);
  return b;
}

struct FbModel {
  uint32_t version = 3;
  std::vector<FbTensor> tensors;
  std::vector<FbOp> ops;
  std::vector<int32_t> inputs, outputs;
  std::vector<FbBuffer> buffers = {FbBuffer{}};            // buffers[0]: the empty sentinel
  std::vector<std::pair<std::string, uint32_t>> metadata;  // name, buffer index
  std::string description;
  std::string subgraph_name;
  int extra_subgraphs = 0;  // copies of the subgraph appended after it
};

// Returns a [long] vector whose elements start 4 bytes past an 8-byte boundary of the finished
// buffer. The flatbuffers verifier accepts it (it checks a vector's length prefix for 4-byte
// alignment only), so a reader must not load the elements through an int64 pointer. Built as
// an int32 vector [n, lo0, hi0, lo1, hi1, ...] whose first element doubles as the int64
// vector's length prefix.
inline flatbuffers::Offset<flatbuffers::Vector<int64_t>> CreateMisalignedInt64Vector(
    flatbuffers::FlatBufferBuilder& b, const std::vector<int64_t>& values) {
  std::vector<int32_t> words = {static_cast<int32_t>(values.size())};
  for (int64_t v : values) {
    words.push_back(static_cast<int32_t>(static_cast<uint64_t>(v) & 0xffffffffu));
    words.push_back(static_cast<int32_t>(static_cast<uint64_t>(v) >> 32));
  }
  b.Align(8);  // the finished buffer's size becomes a multiple of 8
  // The int32 vector's offset (from the buffer's end) must be 4 mod 8, so that the fake
  // length prefix 4 bytes further on sits on an 8-byte boundary and the elements do not.
  if ((b.GetSize() + 4 * (words.size() + 1)) % 8 != 4) b.PushElement<uint32_t>(0);
  const flatbuffers::uoffset_t o = b.CreateVector(words).o;
  return flatbuffers::Offset<flatbuffers::Vector<int64_t>>(o - 4);
}

inline std::vector<uint8_t> BuildFlatbuffer(const FbModel& m) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<tfl::Buffer>> buffers;
  for (const FbBuffer& fbuf : m.buffers) {
    flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data = 0;
    if (fbuf.data) {
      b.ForceVectorAlignment(fbuf.data->size(), 1, 16);
      data = b.CreateVector(*fbuf.data);
    }
    buffers.push_back(tfl::CreateBuffer(b, data, fbuf.offset, fbuf.size));
  }
  std::vector<flatbuffers::Offset<tfl::OperatorCode>> codes;
  std::vector<flatbuffers::Offset<tfl::Operator>> ops;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const FbOp& op = m.ops[i];
    const int8_t deprecated =
        op.deprecated_code ? *op.deprecated_code
                           : static_cast<int8_t>(op.builtin_code < 127 ? op.builtin_code : 127);
    codes.push_back(tfl::CreateOperatorCode(
        b, deprecated, op.custom_code.empty() ? 0 : b.CreateString(op.custom_code), op.version,
        op.builtin_code));
    std::pair<tfl::BuiltinOptions, flatbuffers::Offset<void>> options{tfl::BuiltinOptions_NONE, 0};
    if (op.options) options = op.options(b);
    ops.push_back(tfl::CreateOperator(
        b, op.opcode_index ? *op.opcode_index : static_cast<uint32_t>(i), b.CreateVector(op.inputs),
        b.CreateVector(op.outputs), options.first, options.second,
        op.custom_options.empty() ? 0 : b.CreateVector(op.custom_options), 0, 0,
        op.intermediates.empty() ? 0 : b.CreateVector(op.intermediates),
        op.large_custom_options_offset, op.large_custom_options_size));
  }
  std::vector<flatbuffers::Offset<tfl::Tensor>> tensors;
  for (const FbTensor& t : m.tensors) {
    flatbuffers::Offset<tfl::QuantizationParameters> q = 0;
    if (!t.scale.empty() || !t.zero_point.empty()) {
      q = tfl::CreateQuantizationParameters(
          b, 0, 0, b.CreateVector(t.scale),
          t.misaligned_zero_point ? CreateMisalignedInt64Vector(b, t.zero_point)
                                  : b.CreateVector(t.zero_point),
          tfl::QuantizationDetails_NONE, 0, t.quantized_dimension);
    }
    tensors.push_back(
        tfl::CreateTensor(b, b.CreateVector(t.shape), static_cast<tfl::TensorType>(t.type),
                          t.buffer, b.CreateString(t.name), q, t.is_variable, 0,
                          t.shape_signature ? b.CreateVector(*t.shape_signature) : 0));
  }
  const auto tensors_vec = b.CreateVector(tensors);
  const auto inputs = b.CreateVector(m.inputs);
  const auto outputs = b.CreateVector(m.outputs);
  const auto ops_vec = b.CreateVector(ops);
  const auto name = b.CreateString(m.subgraph_name);
  std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs(
      1 + m.extra_subgraphs, tfl::CreateSubGraph(b, tensors_vec, inputs, outputs, ops_vec, name));
  std::vector<flatbuffers::Offset<tfl::Metadata>> metadata;
  for (const auto& [mname, buffer] : m.metadata) {
    metadata.push_back(tfl::CreateMetadata(b, b.CreateString(mname), buffer));
  }
  const auto model =
      tfl::CreateModel(b, m.version, b.CreateVector(codes), b.CreateVector(subgraphs),
                       m.description.empty() ? 0 : b.CreateString(m.description),
                       b.CreateVector(buffers), 0, metadata.empty() ? 0 : b.CreateVector(metadata));
  tfl::FinishModelBuffer(b, model);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

inline std::shared_ptr<const std::vector<uint8_t>> Share(std::vector<uint8_t> bytes) {
  return std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  const auto* p = reinterpret_cast<const uint8_t*>(values.data());
  return std::vector<uint8_t>(p, p + values.size() * sizeof(T));
}

// A valid int8 convolution: input [1,5,5,2] -> CONV_2D (filter [4,3,3,2] per-channel along
// axis 0, bias [4] int32, stride (w 1, h 2), RELU6) -> output [1,2,3,4].
inline FbModel ConvModel() {
  FbModel m;
  m.tensors = {
      MakeTensor({1, 5, 5, 2}, tfl::TensorType_INT8, 0, "input", {0.5f}, {-3}),
      MakeTensor({4, 3, 3, 2}, tfl::TensorType_INT8, 1, "filter", {0.1f, 0.2f, 0.3f, 0.4f},
                 {0, 0, 0, 0}),
      MakeTensor({4}, tfl::TensorType_INT32, 2, "bias", {0.05f, 0.1f, 0.15f, 0.2f}, {0, 0, 0, 0}),
      MakeTensor({1, 2, 3, 4}, tfl::TensorType_INT8, 0, "output", {0.25f}, {5}),
  };
  std::vector<int8_t> filter(4 * 3 * 3 * 2);
  for (size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<int8_t>(i * 7 - 60);
  m.buffers.push_back(DataBuffer(Bytes(filter)));
  m.buffers.push_back(DataBuffer(Bytes(std::vector<int32_t>{100, -200, 300, -400})));
  FbOp conv;
  conv.builtin_code = 3;  // CONV_2D
  conv.version = 3;
  conv.inputs = {0, 1, 2};
  conv.outputs = {3};
  conv.options = [](flatbuffers::FlatBufferBuilder& b) {
    return std::make_pair(
        tfl::BuiltinOptions_Conv2DOptions,
        tfl::CreateConv2DOptions(b, tfl::Padding_VALID, /*stride_w=*/1,
                                 /*stride_h=*/2, tfl::ActivationFunctionType_RELU6)
            .Union());
  };
  m.ops = {conv};
  m.inputs = {0};
  m.outputs = {3};
  return m;
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TEST_MODEL_TFLITE_TEST_UTIL_H_
