// Facts both check-report renderings print the same way.
#ifndef MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_
#define MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_

#include <string>

#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {
namespace render_internal {

// The memory areas in the order every table and JSON object lists them.
inline constexpr MemoryArea kAreas[] = {MemoryArea::kSram, MemoryArea::kDram,
                                        MemoryArea::kOnChipFlash, MemoryArea::kOffChipFlash};

inline int At(MemoryArea a) { return static_cast<int>(a); }

// Returns "TFLite", "ONNX", "built" or "unknown".
inline std::string FormatName(ModelFormat f) {
  switch (f) {
    case ModelFormat::kTflite: return "TFLite";
    case ModelFormat::kOnnx: return "ONNX";
    case ModelFormat::kBuilt: return "built";
    case ModelFormat::kUnknown: break;
  }
  return "unknown";
}

// Returns the memory behind AXI port `port` (0 or 1) of an Ethos-U system.
inline const MemoryConfig& Axi(const EthosUConfig& e, int port) {
  return port == 0 ? e.system.axi0 : e.system.axi1;
}

// Returns the bytes of all constant tensors of the main subgraph.
inline int64_t ConstantBytes(const Graph& graph) {
  int64_t bytes = 0;
  for (const Tensor& t : graph.main().tensors) {
    if (t.is_constant()) bytes += static_cast<int64_t>(t.num_bytes());
  }
  return bytes;
}

}  // namespace render_internal
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_
