// mica kernels — which instruction-set variants this build of the kernel core contains.
//
//   if (mica::kernels::IsaCompiled(mica::kernels::Isa::kDsp)) { ... }
#ifndef MICA_KERNELS_ISA_H_
#define MICA_KERNELS_ISA_H_

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {

// Returns true when bodies of `isa` are compiled into this build and can run here (on the host:
// scalar and the emulated DSP bodies; on a target: what its feature macros allow).
bool IsaCompiled(Isa isa);

// Returns the variant the public entry points use on this build (the best compiled in).
Isa DefaultIsa();

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_ISA_H_
