// mica — loading and saving model files.
//
// LoadModel picks the reader from the file's contents (TFLite's "TFL3" identifier, else ONNX
// protobuf) and validates the result: a malformed file gives an error naming the file and
// the subgraph, operator or tensor at fault, never a crash.
//
//   absl::StatusOr<mica::Graph> g = mica::LoadModel(path);
//   if (!g.ok()) { std::cerr << g.status().message() << "\n"; return 1; }
#ifndef MICA_MODEL_LOAD_H_
#define MICA_MODEL_LOAD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/base/file.h"
#include "mica/model/graph.h"

namespace mica {

// Maximum model file size mica reads (larger files are refused, not truncated).
inline constexpr size_t kMaxModelBytes = kMaxFileBytes;

// Loads a TFLite or ONNX model, choosing the reader from the contents.
absl::StatusOr<Graph> LoadModel(const std::string& path);

// Parses a TFLite flatbuffer already in memory. `origin` names it in error messages.
// The returned Graph keeps `bytes` alive and its constants point into it.
absl::StatusOr<Graph> LoadTflite(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                 const std::string& origin);

// Parses an ONNX ModelProto already in memory, converting to NHWC / TFLite weight layouts.
absl::StatusOr<Graph> LoadOnnx(std::shared_ptr<const std::vector<uint8_t>> bytes,
                               const std::string& origin);

// Serialises `graph` as a TFLite flatbuffer.
absl::StatusOr<std::vector<uint8_t>> WriteTflite(const Graph& graph);

// Checks the semantic invariants every consumer relies on: indices in range, constant sizes
// equal shape x dtype, bounded non-negative shapes, acyclic graph, operator arity and attribute
// ranges, quantization array lengths. Loaders call it; builders and passes may too.
absl::Status ValidateGraph(const Graph& graph);

}  // namespace mica

#endif  // MICA_MODEL_LOAD_H_
