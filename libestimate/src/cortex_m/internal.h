// Helpers shared by the Cortex-M cost model's files.
#ifndef MICA_ESTIMATE_SRC_CORTEX_M_INTERNAL_H_
#define MICA_ESTIMATE_SRC_CORTEX_M_INTERNAL_H_

#include <cstdint>
#include <string>

#include "mica/estimate/cortex_m.h"
#include "mica/kernels/types.h"

namespace mica {
namespace estimate {
namespace cortex_m {

// Returns CMSIS-NN's softmax diff_min (negative input radius, TFLite's CalculateInputRadius
// with 5 integer bits) for an int8 input of `scale` and `beta`.
int32_t SoftmaxDiffMin(float scale, float beta);

// Returns the scratch buffer `kernel` (with variant `isa`) needs for `work`, following
// CMSIS-NN's ..._get_buffer_size rules.
int64_t ScratchBytes(const CortexMWork& work, kernels::Isa isa, const std::string& kernel);

// Returns the code size (bytes of Thumb-2) of the kernel that runs `work`.
int64_t CodeBytes(const CortexMWork& work, kernels::Isa isa);

}  // namespace cortex_m
}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_SRC_CORTEX_M_INTERNAL_H_
