// mica runtime — reading and writing tensors as NumPy .npy files or raw bytes.
//
//   MICA_ASSIGN_OR_RETURN(mica::runtime::HostTensor t, mica::runtime::ReadNpy("x.npy"));
//   MICA_RETURN_IF_ERROR(mica::runtime::WriteNpy("y.npy", t));
#ifndef MICA_RUNTIME_NPY_H_
#define MICA_RUNTIME_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/tensor.h"

namespace mica {
namespace runtime {

// A dense little-endian tensor in host memory.
struct HostTensor {
  DType dtype = DType::kInt8;
  std::vector<int32_t> shape;
  std::vector<uint8_t> bytes;
};

// Parses a .npy file (format 1.0-3.0, C order, little-endian or single-byte dtypes).
absl::StatusOr<HostTensor> ParseNpy(const std::vector<uint8_t>& file, const std::string& origin);

// Reads a .npy file.
absl::StatusOr<HostTensor> ReadNpy(const std::string& path);

// Serialises `t` as a version 1.0 .npy file.
std::vector<uint8_t> EncodeNpy(const HostTensor& t);

// Writes `t` as .npy (atomically).
absl::Status WriteNpy(const std::string& path, const HostTensor& t);

}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_NPY_H_
