// LoadOnnx: parses an ONNX ModelProto from memory (size- and depth-capped) and converts it.
#include <climits>
#include <utility>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "absl/strings/str_cat.h"
#include "mica/model/load.h"
#include "onnx/onnx_importer.h"

namespace mica {

namespace {

// Message nesting mica parses (ModelProto > GraphProto > NodeProto > AttributeProto > GraphProto
// ... : about ten levels of control-flow subgraphs, which mica rejects anyway).
constexpr int kOnnxRecursionLimit = 32;

// Whether `bytes` parse as a ModelProto when nesting up to 16 times deeper is allowed: tells a
// valid but too deeply nested model from a corrupt file. The deeper parse stays bounded (a
// few hundred stack frames).
bool ParsesWithDeeperNesting(const std::vector<uint8_t>& bytes) {
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kOnnxRecursionLimit * 16);
  return model.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

}  // namespace

absl::StatusOr<Graph> LoadOnnx(std::shared_ptr<const std::vector<uint8_t>> bytes,
                               const std::string& origin) {
  if (bytes == nullptr || bytes->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": empty ONNX model"));
  }
  // Protobuf's stream API counts in int; the file cap is the smaller of the two.
  constexpr size_t kLimit = kMaxModelBytes < static_cast<size_t>(INT_MAX)
                                ? kMaxModelBytes
                                : static_cast<size_t>(INT_MAX);
  if (bytes->size() > kLimit) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ONNX model is ", bytes->size(),
                                                   " bytes, above the limit of ", kLimit));
  }
  onnx::ModelProto model;
  {
    google::protobuf::io::ArrayInputStream raw(bytes->data(), static_cast<int>(bytes->size()));
    google::protobuf::io::CodedInputStream in(&raw);
    in.SetTotalBytesLimit(static_cast<int>(kLimit));
    // ONNX nests graphs only in control-flow attributes, which mica rejects anyway; a shallow
    // limit stops deeply nested hostile messages from exhausting the stack.
    in.SetRecursionLimit(kOnnxRecursionLimit);
    if (!model.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) {
      if (ParsesWithDeeperNesting(*bytes)) {
        return absl::UnimplementedError(absl::StrCat(
            origin, ": ONNX model nests messages more than ", kOnnxRecursionLimit,
            " levels deep (subgraphs inside control-flow attributes); the file is valid but "
            "mica reads at most ", kOnnxRecursionLimit, " levels"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": not a valid ONNX model (protobuf ModelProto failed to parse; the file is "
                  "truncated, corrupt, or not ONNX)"));
    }
  }
  if (!model.has_graph()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ONNX model has no graph"));
  }
  onnx_import::OnnxImporter importer(model, origin);
  return importer.Import();
}

}  // namespace mica
