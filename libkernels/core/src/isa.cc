#include "mica/kernels/isa.h"

#include "internal/isa_config.h"

namespace mica {
namespace kernels {

bool IsaCompiled(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
    case Isa::kDsp: return MICA_KERNELS_BUILD_DSP != 0;
    case Isa::kMve: return MICA_KERNELS_BUILD_MVE != 0;
  }
  return false;
}

Isa DefaultIsa() {
#if MICA_KERNELS_HAVE_MVE
  return Isa::kMve;
#elif MICA_KERNELS_HAVE_DSP
  return Isa::kDsp;
#else
  return Isa::kScalar;
#endif
}

}  // namespace kernels
}  // namespace mica
