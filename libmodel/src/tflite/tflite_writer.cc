// WriteTflite: a mica Graph becomes a TFLite flatbuffer (schema version 3).
//
// The graph is validated first, so a malformed graph gives an error, never a broken file.
// Constants are written as 16-byte aligned buffers (tensors sharing one view share one
// buffer); operator codes are deduplicated by (code, custom name, version).
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "tflite/tflite_ops.h"
#include "tflite/tflite_options.h"
#include "tflite_schema_generated.h"
#include "validate.h"

namespace mica {
namespace {

namespace fb = ::mica::tflite_fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint32_t kSchemaVersion = 3;
constexpr size_t kBufferAlignment = 16;  // what the format's schema asks for buffer data
// The builder cannot grow past 2 GiB; leave room for everything that is not constant data.
constexpr uint64_t kMaxFlatbufferBytes = FLATBUFFERS_MAX_BUFFER_SIZE;

class TfliteWriter {
 public:
  explicit TfliteWriter(const Graph& graph) : graph_(graph) {}

  absl::StatusOr<std::vector<uint8_t>> Write() {
    MICA_RETURN_IF_ERROR(ValidateGraph(graph_));
    MICA_RETURN_IF_ERROR(CheckSize());

    buffers_.push_back(fb::CreateBuffer(b_));  // buffers[0]: the empty sentinel
    std::vector<Offset<fb::SubGraph>> subgraphs;
    for (size_t s = 0; s < graph_.subgraphs.size(); ++s) {
      MICA_ASSIGN_OR_RETURN(Offset<fb::SubGraph> sg, WriteSubgraph(s, graph_.subgraphs[s]));
      subgraphs.push_back(sg);
    }
    std::vector<Offset<fb::Metadata>> metadata;
    for (const auto& [name, value] : graph_.metadata) {
      const auto index = static_cast<uint32_t>(buffers_.size());
      buffers_.push_back(DataBuffer(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
      metadata.push_back(fb::CreateMetadata(b_, b_.CreateString(name), index));
    }
    const auto model = fb::CreateModel(
        b_, kSchemaVersion, b_.CreateVector(opcodes_), b_.CreateVector(subgraphs),
        graph_.description.empty() ? 0 : b_.CreateString(graph_.description),
        b_.CreateVector(buffers_), 0, metadata.empty() ? 0 : b_.CreateVector(metadata));
    fb::FinishModelBuffer(b_, model);
    return std::vector<uint8_t>(b_.GetBufferPointer(), b_.GetBufferPointer() + b_.GetSize());
  }

 private:
  // Refuses graphs whose constants alone would overflow a flatbuffer (the large-model
  // extension, data after the flatbuffer, is read but not written).
  absl::Status CheckSize() const {
    uint64_t total = 0;
    for (const Subgraph& sg : graph_.subgraphs) {
      total += 256 * (sg.tensors.size() + sg.ops.size());
      for (const Tensor& t : sg.tensors) {
        total += t.data.size + kBufferAlignment + t.name.size() +
                 8 * (t.quant.scale.size() + t.quant.zero_point.size());
      }
    }
    for (const auto& [name, value] : graph_.metadata) total += name.size() + value.size() + 64;
    total += graph_.description.size();
    if (total >= kMaxFlatbufferBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(internal::FilePrefix(graph_), "model needs about ", total,
                       " bytes, more than a TFLite flatbuffer holds (", kMaxFlatbufferBytes, ")"));
    }
    return absl::OkStatus();
  }

  Offset<fb::Buffer> DataBuffer(const uint8_t* data, size_t size) {
    b_.ForceVectorAlignment(size, sizeof(uint8_t), kBufferAlignment);
    return fb::CreateBuffer(b_, b_.CreateVector(data, size));
  }

  uint32_t ConstantBuffer(const ConstData& data) {
    const auto key = std::make_pair(data.ptr, data.size);
    auto it = const_buffers_.find(key);
    if (it != const_buffers_.end()) return it->second;
    const auto index = static_cast<uint32_t>(buffers_.size());
    buffers_.push_back(DataBuffer(data.ptr, data.size));
    const_buffers_.emplace(key, index);
    return index;
  }

  absl::StatusOr<uint32_t> OpcodeIndex(const Operator& op, const std::string& where) {
    int32_t code = -1;
    std::string custom;
    if (op.kind == OpKind::kOpaque) {
      code = op.opaque_custom ? -1 : tflite::BuiltinCodeFromName(op.opaque_name);
      if (code < 0) {
        code = tflite::kCustomCode;
        custom = op.opaque_name;
      }
    } else {
      code = tflite::BuiltinFromKind(op.kind);
      if (code < 0) {
        return absl::UnimplementedError(
            absl::StrCat(internal::FilePrefix(graph_), where, "has no TFLite builtin"));
      }
    }
    const auto key = std::make_tuple(code, custom, op.version);
    auto it = opcode_index_.find(key);
    if (it != opcode_index_.end()) return it->second;
    const auto index = static_cast<uint32_t>(opcodes_.size());
    const auto deprecated = static_cast<int8_t>(code < tflite::kPlaceholderForGreaterOpCodes
                                                    ? code
                                                    : tflite::kPlaceholderForGreaterOpCodes);
    opcodes_.push_back(fb::CreateOperatorCode(
        b_, deprecated, custom.empty() ? 0 : b_.CreateString(custom), op.version, code));
    opcode_index_.emplace(key, index);
    return index;
  }

  absl::StatusOr<Offset<fb::SubGraph>> WriteSubgraph(size_t s, const Subgraph& sg) {
    std::vector<Offset<fb::Tensor>> tensors;
    tensors.reserve(sg.tensors.size());
    for (const Tensor& t : sg.tensors) {
      const uint32_t buffer = t.is_constant() ? ConstantBuffer(t.data) : 0;
      Offset<fb::QuantizationParameters> quant = 0;
      if (!t.quant.empty()) {
        quant = fb::CreateQuantizationParameters(b_, 0, 0, b_.CreateVector(t.quant.scale),
                                                 b_.CreateVector(t.quant.zero_point),
                                                 fb::QuantizationDetails_NONE, 0, t.quant.axis);
      }
      tensors.push_back(fb::CreateTensor(
          b_, b_.CreateVector(t.shape), tflite::TfliteType(t.dtype), buffer, b_.CreateString(t.name), quant,
          t.is_variable, 0, t.shape_signature.empty() ? 0 : b_.CreateVector(t.shape_signature)));
    }
    std::vector<Offset<fb::Operator>> ops;
    ops.reserve(sg.ops.size());
    for (size_t o = 0; o < sg.ops.size(); ++o) {
      const Operator& op = sg.ops[o];
      const std::string where =
          absl::StrCat("subgraph ", s, ", operator ", o, " (", internal::OpLabel(op), "): ");
      MICA_ASSIGN_OR_RETURN(const uint32_t opcode, OpcodeIndex(op, where));
      const tflite::BuiltinOptions options = tflite::WriteBuiltinOptions(b_, op);
      Offset<flatbuffers::Vector<uint8_t>> custom_options = 0;
      if (op.kind == OpKind::kOpaque && !op.opaque_options.empty()) {
        custom_options = b_.CreateVector(op.opaque_options);
      }
      ops.push_back(
          fb::CreateOperator(b_, opcode, b_.CreateVector(op.inputs), b_.CreateVector(op.outputs),
                             options.type, options.table, custom_options, 0, 0,
                             op.intermediates.empty() ? 0 : b_.CreateVector(op.intermediates)));
    }
    return fb::CreateSubGraph(b_, b_.CreateVector(tensors), b_.CreateVector(sg.inputs),
                              b_.CreateVector(sg.outputs), b_.CreateVector(ops),
                              sg.name.empty() ? 0 : b_.CreateString(sg.name));
  }

  const Graph& graph_;
  FlatBufferBuilder b_{1 << 16};
  std::vector<Offset<fb::Buffer>> buffers_;
  std::map<std::pair<const uint8_t*, size_t>, uint32_t> const_buffers_;
  std::vector<Offset<fb::OperatorCode>> opcodes_;
  std::map<std::tuple<int32_t, std::string, int32_t>, uint32_t> opcode_index_;
};

}  // namespace

absl::StatusOr<std::vector<uint8_t>> WriteTflite(const Graph& graph) {
  return TfliteWriter(graph).Write();
}

}  // namespace mica
