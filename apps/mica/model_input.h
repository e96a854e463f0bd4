// Loading the MODEL argument of `mica inspect/check/run/compile`: what LoadModel reads, plus
// PyTorch ExportedPrograms (.pt2) converted to an ExecuTorch program through ExecuTorch's own
// exporter (optional Python), and the choice of an ExecuTorch program's method.
//
// The .pt2 conversion runs `$MICA_EXECUTORCH_PYTHON` (default: python3 on PATH) with a short
// script: torch.export.load, executorch.exir.to_edge_transform_and_lower (no partitioner: the
// portable operators), to_executorch, written to a temporary .pte that is read and removed.
// Without an importable executorch the .pt2 is refused with a message naming what to install.
#ifndef MICA_APPS_MODEL_INPUT_H_
#define MICA_APPS_MODEL_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"

namespace mica {
namespace cli {

// Returns true when `path` names a PyTorch ExportedProgram archive: a zip file whose name ends
// in .pt2, or a zip holding an `archive_format` entry (what torch.export.save writes).
bool IsPt2File(const std::string& path);

// Loads `path` as LoadModel does; a .pt2 is converted first. `method` picks an ExecuTorch
// program's method by name ("" for the first); for other formats a method is an error.
absl::StatusOr<Graph> LoadModelInput(const std::string& path, const std::string& method = "");

// The value of metadata `key`, or `fallback`.
std::string MetadataOr(const Graph& g, const std::string& key, const std::string& fallback);

// Every method of a loaded ExecuTorch program, in file order (the one read when it has one).
std::vector<std::string> ExecuTorchMethods(const Graph& g);

// For an ExecuTorch program with several methods or delegated calls: a text section naming
// the method checked and each delegate call (backend id, blob size; opaque to mica). Else "".
std::string ExecuTorchNotes(const Graph& g);

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_MODEL_INPUT_H_
