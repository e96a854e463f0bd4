// mica — the model zoo: the four MLPerf Tiny reference architectures with seeded weights.
//
// Each builder returns a float32 Graph (ModelFormat::kBuilt) whose layer structure, shapes and
// fused activations match the MLPerf Tiny v1.x reference TFLite models (BatchNorm folded into
// the preceding layer, ReLU fused, dropout removed). Weights are He-uniform from mica's own
// integer RNG (SeededRng), so the same seed gives bit-identical weights on every platform.
//
//   MICA_ASSIGN_OR_RETURN(mica::Graph g, mica::zoo::Build("kws_ds_cnn", /*seed=*/1));
//   for (const mica::zoo::ZooModel& m : mica::zoo::Models()) std::cout << m.name << "\n";
#ifndef MICA_MODEL_ZOO_H_
#define MICA_MODEL_ZOO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"

namespace mica {
namespace zoo {

struct ZooModel {
  const char* name;         // file stem: "kws_ds_cnn", "vww_mobilenet_v1_025", ...
  const char* description;  // one line
  absl::StatusOr<Graph> (*build)(uint64_t seed);
};

// Returns the zoo in a fixed order: kws_ds_cnn, vww_mobilenet_v1_025, ic_resnet8,
// ad_autoencoder.
const std::vector<ZooModel>& Models();

// Builds the model called `name` (NotFound lists the valid names otherwise).
absl::StatusOr<Graph> Build(const std::string& name, uint64_t seed = 1);

// DS-CNN keyword spotting: 1x49x10x1 -> conv 10x4 s2 64 -> 4x (dw 3x3 + pw 64) -> avgpool
// 25x5 -> FC 12 -> softmax.
absl::StatusOr<Graph> BuildKwsDsCnn(uint64_t seed = 1);
// MobileNetV1 width 0.25 visual wake words: 1x96x96x3 -> 2 classes.
absl::StatusOr<Graph> BuildVwwMobileNetV1025(uint64_t seed = 1);
// ResNet-8 CIFAR-10: 1x32x32x3, stages of 16/32/64 channels with residual adds -> 10 classes.
absl::StatusOr<Graph> BuildIcResnet8(uint64_t seed = 1);
// Deep autoencoder anomaly detection: 1x640 -> FC 128 x4 -> 8 -> FC 128 x4 -> 640.
absl::StatusOr<Graph> BuildAdAutoencoder(uint64_t seed = 1);

}  // namespace zoo
}  // namespace mica

#endif  // MICA_MODEL_ZOO_H_
