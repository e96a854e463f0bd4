// Private: how a prepared operator (OpKernel::ExportToPlan) describes itself to the plan
// compiler (plan_compiler.cc): the device op code, its parameter block, its tensor operands
// and its constant arrays, all exactly as the host lowering computed them.
#ifndef MICA_RUNTIME_PLAN_WRITER_H_
#define MICA_RUNTIME_PLAN_WRITER_H_

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "mica/device/plan_format.h"
#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/transpose_conv.h"
#include "mica/kernels/variants.h"

namespace mica {
namespace runtime {
namespace internal {

struct PlanOpWriter {
  device::PlanOp code = device::PlanOp::kCount;
  std::vector<uint8_t> params;
  std::vector<int32_t> tensors;            // subgraph tensor indices, -1 = absent
  std::vector<std::vector<uint8_t>> arrays;

  template <typename T>
  void SetParams(const T& p) {
    static_assert(std::is_trivially_copyable_v<T>, "plan params must be plain data");
    params.resize(sizeof(T));
    std::memcpy(params.data(), &p, sizeof(T));
  }
  template <typename T>
  void AddArray(const std::vector<T>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(T));
    if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
    arrays.push_back(std::move(b));
  }
};

// The device op of a conv-like kernel-core params struct (kCount: none).
inline device::PlanOp ConvPlanOp(const kernels::ConvParams&, bool i16) {
  return i16 ? device::PlanOp::kConv16x8 : device::PlanOp::kConv;
}
inline device::PlanOp ConvPlanOp(const kernels::DepthwiseConvParams&, bool i16) {
  return i16 ? device::PlanOp::kDepthwiseConv16x8 : device::PlanOp::kDepthwiseConv;
}
inline device::PlanOp ConvPlanOp(const kernels::FullyConnectedParams&, bool i16) {
  return i16 ? device::PlanOp::kFullyConnected16x8 : device::PlanOp::kFullyConnected;
}
inline device::PlanOp ConvPlanOp(const kernels::TransposeConvParams&, bool i16) {
  return i16 ? device::PlanOp::kCount : device::PlanOp::kTransposeConv;
}

// True when `fn` is `entry` or one of its run-time variants.
template <typename Fn>
bool IsBodyOf(Fn fn, const kernels::VariantList<Fn>& list, Fn entry) {
  if (fn == entry) return true;
  for (const auto& v : list) {
    if (v.fn == fn) return true;
  }
  return false;
}

}  // namespace internal
}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_PLAN_WRITER_H_
