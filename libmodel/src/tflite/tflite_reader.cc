// Placeholder until the TFLite reader lands (issue 3); owned by the TFLite work.
#include "mica/model/load.h"

namespace mica {

absl::StatusOr<Graph> LoadTflite(std::shared_ptr<const std::vector<uint8_t>>,
                                 const std::string& origin) {
  return absl::UnimplementedError(origin + ": TFLite reader not built yet");
}

absl::StatusOr<std::vector<uint8_t>> WriteTflite(const Graph&) {
  return absl::UnimplementedError("TFLite writer not built yet");
}

absl::Status ValidateGraph(const Graph&) { return absl::OkStatus(); }

}  // namespace mica
