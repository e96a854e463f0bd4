// MLPerf Tiny layer shapes of the conv-family benchmarks: the cases of CMSIS-NN's anchor table
// (../shared/reference/cmsis-nn/nn_anchor_cases.h), restated here as plain facts so the
// benchmarks build without the shared tree. Random data; quantization as the anchors.
#ifndef MICA_BENCH_KERNELS_CONV_BENCH_SHAPES_H_
#define MICA_BENCH_KERNELS_CONV_BENCH_SHAPES_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "mica/kernels/types.h"

namespace mica {
namespace bench {

struct ConvShape {
  const char* name;
  int32_t in_h, in_w, in_c, k_h, k_w, out_h, out_w, out_c, stride, pad_h, pad_w;
};

// conv: ResNet8 (IC) stack 1 and input conv, DS-CNN (KWS) pointwise and input conv.
inline const std::vector<ConvShape>& ConvShapes() {
  static const std::vector<ConvShape> kShapes = {
      {"conv3x3_16to16_32x32", 32, 32, 16, 3, 3, 32, 32, 16, 1, 1, 1},
      {"conv3x3_3to16_32x32", 32, 32, 3, 3, 3, 32, 32, 16, 1, 1, 1},
      {"conv1x1_64to64_25x5", 25, 5, 64, 1, 1, 25, 5, 64, 1, 0, 0},
      {"conv10x4s2_1to64_49x10", 49, 10, 1, 10, 4, 25, 5, 64, 2, 4, 1},
  };
  return kShapes;
}

// depthwise: DS-CNN (KWS) depthwise, MobileNetV1-0.25 (VWW) early depthwise.
inline const std::vector<ConvShape>& DepthwiseShapes() {
  static const std::vector<ConvShape> kShapes = {
      {"dw3x3_64_25x5", 25, 5, 64, 3, 3, 25, 5, 64, 1, 1, 1},
      {"dw3x3s2_8_48x48", 48, 48, 8, 3, 3, 24, 24, 8, 2, 0, 0},
  };
  return kShapes;
}

template <typename T>
std::vector<T> RandomVector(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(gen));
  return v;
}

// Reports multiply-accumulates per second ("MAC/s", shown as e.g. 1.2G/s).
inline void SetMacs(benchmark::State& state, int64_t macs) {
  state.counters["MAC/s"] =
      benchmark::Counter(static_cast<double>(macs), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace bench
}  // namespace mica

#endif  // MICA_BENCH_KERNELS_CONV_BENCH_SHAPES_H_
