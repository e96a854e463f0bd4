#include "mica/model/load.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"

namespace mica {

namespace {

constexpr const char* kFormatsRead =
    "mica reads TFLite flatbuffers (.tflite), ExecuTorch programs (.pte, .bpte) and ONNX "
    "protobufs (.onnx)";

bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }

// Returns true when the first bytes look like text (UTF-8 or ASCII, no control bytes but
// whitespace), e.g. a README or a JSON file given by mistake.
bool LooksLikeText(const std::vector<uint8_t>& b) {
  const size_t n = std::min<size_t>(b.size(), 512);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = b[i];
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    if (c == 0x7f) return false;
  }
  return true;
}

bool StartsWith(const std::vector<uint8_t>& b, std::string_view magic, size_t at = 0) {
  return b.size() >= at + magic.size() && std::memcmp(b.data() + at, magic.data(), magic.size()) == 0;
}

// Names what a file that is neither TFLite nor ONNX was recognised as, or "" when unknown.
std::string Recognise(const std::vector<uint8_t>& b) {
  // Flatbuffer file identifiers sit at byte offset 4 (ET12 and BP08 are read before this).
  if (b.size() >= 8 && b[4] == 'E' && b[5] == 'T' && IsDigit(b[6]) && IsDigit(b[7])) {
    return absl::StrCat("an ExecuTorch program of format ", std::string(b.begin() + 4, b.begin() + 8),
                        " (mica reads ET12)");
  }
  if (b.size() >= 8 && b[4] == 'B' && b[5] == 'P' && IsDigit(b[6]) && IsDigit(b[7])) {
    return absl::StrCat("an ExecuTorch bundled program of format ",
                        std::string(b.begin() + 4, b.begin() + 8), " (mica reads BP08)");
  }
  if (StartsWith(b, "PK\x03\x04")) return "a zip archive (a PyTorch .pt/.pt2 or Keras .keras file?)";
  if (StartsWith(b, "\x89HDF\r\n")) return "an HDF5 file (a Keras .h5 model?)";
  if (StartsWith(b, "\x93NUMPY")) return "a NumPy .npy array";
  if (StartsWith(b, "\x7f" "ELF")) return "an ELF executable";
  if (LooksLikeText(b)) return "a text file";
  return "";
}

}  // namespace

absl::StatusOr<Graph> LoadModel(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path, kMaxModelBytes));
  if (bytes->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  // TFLite flatbuffers carry the file identifier "TFL3" at byte offset 4.
  if (StartsWith(*bytes, "TFL3", 4)) return LoadTflite(std::move(bytes), path);
  // ExecuTorch: "ET12" (a program) or "BP08" (a bundled program) at byte offset 4.
  if (StartsWith(*bytes, "ET12", 4) || StartsWith(*bytes, "BP08", 4)) {
    return LoadExecuTorch(std::move(bytes), path);
  }
  if (const std::string what = Recognise(*bytes); !what.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is ", what, ", not a model mica reads; ", kFormatsRead));
  }
  absl::StatusOr<Graph> onnx = LoadOnnx(std::move(bytes), path);
  if (!onnx.ok() && onnx.status().message().find("not a valid ONNX model") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not a TFLite model (no \"TFL3\" identifier) and not a valid ONNX model (the "
        "protobuf does not parse: truncated, corrupt, or another format); ", kFormatsRead));
  }
  return onnx;
}

}  // namespace mica
