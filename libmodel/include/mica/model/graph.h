// mica — the graph IR: a model is a list of subgraphs of tensors and operators.
//
// A Graph is a plain value: copy it, edit it, hand it to a writer. Constant tensor data are
// views into byte buffers the Graph keeps alive (`storage`), so loading a file copies no
// weights and copies of a Graph share them.
//
//   MICA_ASSIGN_OR_RETURN(mica::Graph g, mica::LoadModel("kws.tflite"));
//   const mica::Subgraph& sg = g.main();
//   for (const mica::Operator& op : sg.ops) std::cout << op.name() << "\n";
#ifndef MICA_MODEL_GRAPH_H_
#define MICA_MODEL_GRAPH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mica/model/op.h"
#include "mica/model/tensor.h"

namespace mica {

struct Subgraph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Operator> ops;  // in the file's (execution) order
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

// Where a Graph came from.
enum class ModelFormat : uint8_t { kUnknown, kTflite, kOnnx, kBuilt, kExecuTorch };

struct Graph {
  std::vector<Subgraph> subgraphs;  // subgraphs[0] is the entry point
  std::string description;
  std::map<std::string, std::string> metadata;  // small text metadata (producer, version, ...)
  ModelFormat source_format = ModelFormat::kUnknown;
  std::string source_path;  // file the graph was loaded from, for error messages
  // Keeps constant data alive; ConstData views point into these buffers.
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> storage;

  Subgraph& main() { return subgraphs.front(); }
  const Subgraph& main() const { return subgraphs.front(); }

  // Copies `bytes` into graph-owned storage and returns a view of the copy (used by builders,
  // the quantizer and importers that must transform data, e.g. ONNX layout conversion).
  ConstData AddConstData(std::vector<uint8_t> bytes);
};

}  // namespace mica

#endif  // MICA_MODEL_GRAPH_H_
