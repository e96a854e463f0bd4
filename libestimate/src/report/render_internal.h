// Facts both check-report renderings print the same way.
#ifndef MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_
#define MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_

#include <string>

#include "mica/base/text.h"
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
    case ModelFormat::kExecuTorch: return "ExecuTorch";
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

// Returns `raw` as one CSV field (RFC 4180): valid UTF-8; quoted, with quotes doubled, when it
// holds a comma, a quote or a line break.
inline std::string CsvField(const std::string& raw) {
  const std::string s = ValidUtf8(raw);
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace render_internal
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_REPORT_RENDER_INTERNAL_H_
