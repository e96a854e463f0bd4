// mica — loading and saving model files.
//
// LoadModel picks the reader from the file's contents (TFLite's "TFL3" identifier,
// ExecuTorch's "ET12" program and "BP08" bundled-program identifiers, else ONNX protobuf) and validates the result: a malformed file gives an error naming the file and
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

// Loads a TFLite, ExecuTorch (.pte, or the program of a .bpte) or ONNX model, choosing the
// reader from the contents.
absl::StatusOr<Graph> LoadModel(const std::string& path);

// Parses an ExecuTorch program (.pte) or the program inside a bundled program (.bpte) already
// in memory: the execution plan named `method` (the first when empty; an unknown name is an
// error listing the program's methods, all of which are in metadata "executorch.methods" when
// there are several) becomes the main subgraph. Tensors keep their memory
// order (a channels-last activation is NHWC in the IR; a contiguous NCHW one gets transposes
// around the operators that need channels-last); quantization comes from the operators'
// arguments. Operators mica does not map, and delegate calls, load as opaque operators with
// a reason.
absl::StatusOr<Graph> LoadExecuTorch(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                     const std::string& origin, const std::string& method = "");

// One tensor of a bundled test case. `bytes` are in memory order; `shape` is the dimensions in
// that order (the layout the IR gives the graph's inputs and outputs). Test data are the bytes
// the runtime copies into the method's own input/output tensor, so when the sizes match they
// take that tensor's dim order (ExecuTorch 1.5.1 records a contiguous dim order for
// channels-last data whose bytes are the channels-last storage); otherwise the recorded one.
struct BundledTensor {
  DType dtype = DType::kFloat32;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<int32_t> sizes;    // logical sizes, as in the file
  bool dim_order_given = false;  // the file records a dim order
};

// Inputs and expected outputs of one test case of a bundled program.
struct BundledTestCase {
  std::vector<BundledTensor> inputs;
  std::vector<BundledTensor> expected_outputs;
};

// A bundled program (.bpte): the loaded program (the method of its test cases) and the test
// cases of its first method suite, or of the method asked for.
struct BundledProgram {
  Graph graph;
  std::string method;
  std::vector<BundledTestCase> test_cases;
};

// Returns true when the file's first bytes carry the bundled-program identifier ("BP08").
bool IsBundledProgram(const std::vector<uint8_t>& bytes);

// Loads a bundled program (.bpte) from `path`: the test suite of `method` ("" for the first
// suite) and that method's execution plan; a method without a suite has no test cases.
absl::StatusOr<BundledProgram> LoadBundledProgram(const std::string& path,
                                                  const std::string& method = "");

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
