// LoadExecuTorch / LoadBundledProgram: entry points of the ExecuTorch reader.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "pte/pte_program.h"

namespace mica {

bool IsBundledProgram(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 8 && bytes[4] == 'B' && bytes[5] == 'P' && bytes[6] == '0' &&
         bytes[7] == '8';
}

absl::StatusOr<Graph> LoadExecuTorch(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                     const std::string& origin, const std::string& method) {
  if (bytes == nullptr) return absl::InvalidArgumentError(absl::StrCat(origin, ": no data"));
  if (IsBundledProgram(*bytes)) {
    MICA_ASSIGN_OR_RETURN(pte::Bundle bundle, pte::ParseBundle(*bytes, origin));
    bytes = bundle.program;
  }
  Graph graph;
  graph.source_path = origin;
  graph.storage.push_back(bytes);
  MICA_ASSIGN_OR_RETURN(pte::Program program, pte::ParseProgram(bytes, origin, &graph, method));
  return pte::ImportProgram(program, std::move(graph));
}

absl::StatusOr<BundledProgram> LoadBundledProgram(const std::string& path,
                                                  const std::string& method) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path, kMaxModelBytes));
  MICA_ASSIGN_OR_RETURN(pte::Bundle bundle, pte::ParseBundle(*bytes, path, method));
  BundledProgram out;
  Graph graph;
  graph.source_path = path;
  graph.storage.push_back(bundle.program);
  // The test cases belong to the suite's method: that execution plan is read.
  MICA_ASSIGN_OR_RETURN(pte::Program program,
                        pte::ParseProgram(bundle.program, path, &graph, bundle.method));
  // Test data are the bytes the runtime copies into the method's own tensor: they take its
  // memory order. (ExecuTorch 1.5.1 records a contiguous dim order for channels-last test
  // data whose bytes are the tensor's channels-last storage.)
  auto resolve = [&program](std::vector<BundledTensor>* tensors, const std::vector<int32_t>& ids) {
    for (size_t i = 0; i < tensors->size() && i < ids.size(); ++i) {
      BundledTensor& t = (*tensors)[i];
      const pte::Value& v = program.values[ids[i]];
      if (v.kind != pte::ValueKind::kTensor || v.tensor.sizes != t.sizes) {
        continue;
      }
      t.shape = v.tensor.PhysicalShape();
    }
  };
  for (BundledTestCase& tc : bundle.test_cases) {
    resolve(&tc.inputs, program.inputs);
    resolve(&tc.expected_outputs, program.outputs);
  }
  MICA_ASSIGN_OR_RETURN(out.graph, pte::ImportProgram(program, std::move(graph)));
  out.method = bundle.method;
  out.test_cases = std::move(bundle.test_cases);
  return out;
}

}  // namespace mica
