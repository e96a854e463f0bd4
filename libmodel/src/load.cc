#include "mica/model/load.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"

namespace mica {

absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>> ReadFileBytes(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::DataLossError(absl::StrCat(path, ": cannot read file size"));
  if (static_cast<uint64_t>(size) > kMaxModelBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": file is ", size, " bytes, above mica's limit of ", kMaxModelBytes));
  }
  auto bytes = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes->data()), size)) {
    return absl::DataLossError(absl::StrCat(path, ": read failed"));
  }
  return std::shared_ptr<const std::vector<uint8_t>>(std::move(bytes));
}

absl::StatusOr<Graph> LoadModel(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  if (bytes->empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  // TFLite flatbuffers carry the file identifier "TFL3" at byte offset 4.
  const bool is_tflite = bytes->size() >= 8 && std::memcmp(bytes->data() + 4, "TFL3", 4) == 0;
  if (is_tflite) return LoadTflite(std::move(bytes), path);
  return LoadOnnx(std::move(bytes), path);
}

absl::Status WriteFileBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrCat(path, ": cannot create file"));
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::DataLossError(absl::StrCat(path, ": write failed"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot rename into place"));
  }
  return absl::OkStatus();
}

}  // namespace mica
