#include "mica/estimate/target.h"

namespace mica {
namespace estimate {

const char* MemoryAreaName(MemoryArea a) {
  switch (a) {
    case MemoryArea::kSram: return "sram";
    case MemoryArea::kDram: return "dram";
    case MemoryArea::kOnChipFlash: return "on_chip_flash";
    case MemoryArea::kOffChipFlash: return "off_chip_flash";
  }
  return "unknown";
}

}  // namespace estimate
}  // namespace mica
