// Placeholder until the ONNX reader lands (issue 3); owned by the ONNX work.
#include "mica/model/load.h"

namespace mica {

absl::StatusOr<Graph> LoadOnnx(std::shared_ptr<const std::vector<uint8_t>>,
                               const std::string& origin) {
  return absl::UnimplementedError(origin + ": not a TFLite file, and the ONNX reader is not built yet");
}

}  // namespace mica
