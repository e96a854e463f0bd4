#include "mica/model_input.h"

#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "mica/base/file.h"
#include "mica/base/text.h"
#include "mica/fvp/subprocess.h"

namespace mica {
namespace cli {
namespace {

namespace fs = std::filesystem;

// Exit code of the conversion script when torch or executorch cannot be imported.
constexpr int kImportFailed = 3;

// The conversion, run by the Python that has ExecuTorch: argv[1] the .pt2, argv[2] the .pte.
// Prints the versions used on its first stdout line.
constexpr const char* kConvertScript = R"PY(
import sys
try:
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from importlib.metadata import version
except Exception as e:
    print(f"{type(e).__name__}: {e}", file=sys.stderr)
    sys.exit(3)
ep = torch.export.load(sys.argv[1])
program = to_edge_transform_and_lower(ep).to_executorch()
with open(sys.argv[2], "wb") as f:
    f.write(program.buffer)
print(f"executorch {version('executorch')}, torch {torch.__version__}")
)PY";

// A fresh private folder, removed (with its contents) when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mica-pt2-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool EndsWithPt2(const std::string& path) {
  std::string ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".pt2";
}

// The last non-empty line of `text` (a Python traceback's error line), or "".
std::string LastLine(const std::string& text) {
  std::string last;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!line.empty()) last = std::string(line);
  }
  return PrintableText(last);
}

// Converts the .pt2 at `path` into `pte` through ExecuTorch; returns the versions line.
absl::StatusOr<std::string> ConvertPt2(const std::string& path, const std::string& pte) {
  const char* env = std::getenv("MICA_EXECUTORCH_PYTHON");
  const std::string python = env != nullptr && *env != '\0' ? env : "python3";
  const std::string install =
      "install ExecuTorch (pip install executorch, which brings torch) for that Python, or set "
      "MICA_EXECUTORCH_PYTHON to a Python that has it, or export a .pte yourself "
      "(executorch.exir.to_edge_transform_and_lower(...).to_executorch())";
  if (fvp::FindProgram(python).empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": is a PyTorch ExportedProgram (.pt2); mica converts it through ExecuTorch's "
        "exporter, which needs Python, but '", python, "' is not found; ", install));
  }
  // Importing torch takes seconds to minutes on a loaded machine; the export itself is quick.
  absl::StatusOr<fvp::ProcessResult> r =
      fvp::RunProcess({python, "-c", kConvertScript, path, pte}, absl::Minutes(10));
  if (!r.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": cannot run '", python, "': ",
                                                      r.status().message()));
  }
  if (r->exit_code == kImportFailed) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": is a PyTorch ExportedProgram (.pt2); mica converts it through ExecuTorch's "
        "exporter, which '", python, "' cannot import (", LastLine(r->stderr_text), "); ",
        install));
  }
  if (r->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(
        path, ": ExecuTorch's exporter did not finish within 10 minutes; convert it to a .pte "
        "yourself"));
  }
  if (r->exit_code != 0 || !fs::exists(pte)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ExecuTorch's exporter could not convert it to a .pte (exit ", r->exit_code,
        "): ", LastLine(r->stderr_text)));
  }
  return LastLine(r->stdout_text);
}

}  // namespace

bool IsPt2File(const std::string& path) {
  // Only a regular file is opened (a FIFO would block; LoadModel names what is wrong with
  // others), and only a zip is read whole (for the archive_format entry when the name does not
  // say .pt2).
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  char magic[4] = {};
  std::ifstream f(path, std::ios::binary);
  if (!f.read(magic, sizeof(magic)) || std::memcmp(magic, "PK\x03\x04", 4) != 0) return false;
  if (EndsWithPt2(path)) return true;
  auto bytes = ReadFileBytes(path, kMaxModelBytes);
  if (!bytes.ok()) return false;
  const std::string_view text(reinterpret_cast<const char*>((*bytes)->data()), (*bytes)->size());
  return text.find("/archive_format") != std::string_view::npos;
}

absl::StatusOr<Graph> LoadModelInput(const std::string& path, const std::string& method) {
  if (IsPt2File(path)) {
    TempDir dir;
    if (dir.path().empty()) {
      return absl::InternalError("cannot create a temporary folder for the .pt2 conversion");
    }
    const std::string pte = (fs::path(dir.path()) / "converted.pte").string();
    absl::StatusOr<std::string> versions = ConvertPt2(path, pte);
    if (!versions.ok()) return versions.status();
    auto bytes = ReadFileBytes(pte, kMaxModelBytes);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<Graph> g = LoadExecuTorch(*std::move(bytes), path, method);
    if (!g.ok()) return g.status();
    g->source_path = path;
    g->metadata["executorch.converted_from"] =
        absl::StrCat("PyTorch ExportedProgram (.pt2) by ", *versions);
    return g;
  }
  // The file is read once (it may be a pipe).
  if (method.empty()) return LoadModel(path);
  auto bytes = ReadFileBytes(path, kMaxModelBytes);
  if (!bytes.ok()) return bytes.status();
  const bool executorch = (*bytes)->size() >= 8 &&
                          (std::equal((*bytes)->begin() + 4, (*bytes)->begin() + 8, "ET12") ||
                           IsBundledProgram(**bytes));
  if (!executorch) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": --method picks a method of an ExecuTorch program (.pte, .bpte, .pt2); this "
        "file is not one"));
  }
  return LoadExecuTorch(*std::move(bytes), path, method);
}

std::string MetadataOr(const Graph& g, const std::string& key, const std::string& fallback) {
  auto it = g.metadata.find(key);
  return it == g.metadata.end() ? fallback : it->second;
}

std::vector<std::string> ExecuTorchMethods(const Graph& g) {
  const std::string all = MetadataOr(g, "executorch.methods", "");
  if (all.empty()) {
    const std::string one = MetadataOr(g, "executorch.method", "");
    return one.empty() ? std::vector<std::string>{} : std::vector<std::string>{one};
  }
  return absl::StrSplit(all, ',');
}

std::string ExecuTorchNotes(const Graph& g) {
  if (g.source_format != ModelFormat::kExecuTorch || g.subgraphs.empty()) return "";
  std::string out;
  const std::vector<std::string> methods = ExecuTorchMethods(g);
  if (methods.size() > 1) {
    std::vector<std::string> quoted;
    for (const std::string& m : methods) quoted.push_back("'" + PrintableText(m) + "'");
    absl::StrAppend(&out, "\nExecuTorch program: method '",
                    PrintableText(MetadataOr(g, "executorch.method", "")), "' checked (",
                    methods.size(), " methods: ", absl::StrJoin(quoted, ", "),
                    "; --method NAME checks another)\n");
  }
  const Subgraph& sg = g.main();
  bool first = true;
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    const Operator& op = sg.ops[i];
    if (op.kind != OpKind::kOpaque || std::string(op.name()).rfind("delegate:", 0) != 0) continue;
    if (first) {
      absl::StrAppend(&out, "\nDelegated calls (run by another ExecuTorch backend; not costed "
                            "in the figures above)\n");
    }
    first = false;
    absl::StrAppend(&out, "  #", i, " ", PrintableText(std::string(op.name())), ": ",
                    PrintableText(op.opaque_reason), "\n");
  }
  return out;
}

}  // namespace cli
}  // namespace mica
