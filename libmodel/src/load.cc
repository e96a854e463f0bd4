#include "mica/model/load.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"

namespace mica {

absl::StatusOr<Graph> LoadModel(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path, kMaxModelBytes));
  if (bytes->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  // TFLite flatbuffers carry the file identifier "TFL3" at byte offset 4.
  const bool is_tflite = bytes->size() >= 8 && std::memcmp(bytes->data() + 4, "TFL3", 4) == 0;
  if (is_tflite) return LoadTflite(std::move(bytes), path);
  return LoadOnnx(std::move(bytes), path);
}

}  // namespace mica
