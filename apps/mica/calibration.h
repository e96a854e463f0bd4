// Calibration data for `mica quantize`: representative float inputs read from files, or
// seeded random ones.
//
//   MICA_ASSIGN_OR_RETURN(std::vector<Sample> samples,
//                         mica::cli::LoadCalibration("calib/", graph.main()));
//
// DATA is a folder (its regular files, in name order) or one file:
//  * .npy: one sample (the input's shape; size-1 dimensions may differ) or N stacked samples
//    (a leading dimension of N, then the input's shape). Single-input models only.
//  * .npz (np.savez; compressed archives are refused): one array per model input, named after
//    the input or arr_0, arr_1, ... in input order, each one sample or N stacked; a
//    single-input model also takes any array names (each array is samples of that input).
//  * any other file: raw little-endian float32, a whole number of samples.
// Only float32 data is accepted (.npy of other dtypes is refused with the dtype named): the
// model's float inputs take the values it was trained on (normalise images first).
#ifndef MICA_APPS_CALIBRATION_H_
#define MICA_APPS_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/runtime/npy.h"

namespace mica {
namespace cli {

// One calibration sample: a float32 tensor per graph input, in input order.
using Sample = std::vector<runtime::HostTensor>;

// Reads the calibration samples in `data` for the float inputs of `sg`.
absl::StatusOr<std::vector<Sample>> LoadCalibration(const std::string& data, const Subgraph& sg);

// Returns `count` samples uniform in [-1, 1) (seeded, platform independent).
std::vector<Sample> RandomCalibration(const Subgraph& sg, int count, uint64_t seed);

// The arrays of a .npz archive (stored entries only), named without ".npy".
absl::StatusOr<std::vector<std::pair<std::string, runtime::HostTensor>>> ParseNpz(
    const std::vector<uint8_t>& file, const std::string& origin);

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_CALIBRATION_H_
