// libFuzzer target: the ONNX reader on arbitrary bytes. Any outcome but a crash, hang, leak or
// sanitizer report is fine; errors must come back as absl::Status.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "mica/model/load.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto graph = mica::LoadOnnx(std::move(bytes), "fuzz.onnx");
  if (graph.ok()) {
    // Touch what consumers read so sanitizers see any bad view.
    size_t sum = 0;
    for (const auto& t : graph->main().tensors) {
      if (t.is_constant() && t.data.size > 0) sum += t.data.ptr[t.data.size - 1];
    }
    (void)sum;
  }
  return 0;
}
