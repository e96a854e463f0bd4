// The bundled-I/O image a simulator loads next to the mica runner firmware: a plan, its
// inputs and (optionally) the expected outputs, each 16-byte aligned. Written by libfvp,
// read by firmware/runner.cc. Little-endian.
//
//   BundleHeader | BundleEntry[num_inputs + num_expected] | plan | inputs... | expected...
#ifndef MICA_DEVICE_BUNDLE_H_
#define MICA_DEVICE_BUNDLE_H_

#include <cstdint>

namespace mica {
namespace device {

constexpr uint32_t kBundleMagic = 0x4C444E42u;  // "BNDL"
constexpr uint32_t kBundleVersion = 1;

enum BundleFlags : uint32_t {
  kBundlePrintOutputs = 1,  // print every output tensor as hex
  kBundlePerOpCounts = 2,   // an extra run with per-operator instruction counts
};

struct BundleHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t total_bytes;
  uint32_t flags;
  uint32_t plan_offset;
  uint32_t plan_bytes;
  uint32_t num_inputs;
  uint32_t num_expected;  // 0 (no self-check) or the plan's output count
};

struct BundleEntry {
  uint32_t offset;
  uint32_t bytes;
};

}  // namespace device
}  // namespace mica

#endif  // MICA_DEVICE_BUNDLE_H_
