// mica — reading and writing the files users name, safely.
//
// Every path here comes from a user and is untrusted: reading refuses folders
// and devices and never blocks forever on a FIFO; writing never leaves a
// partial file, never follows a link planted next to the target, never replaces
// anything but a regular file, and lets concurrent writers of one path each
// leave a complete file.
//
//   MICA_ASSIGN_OR_RETURN(auto bytes, mica::ReadFileBytes("kws.tflite",
//   mica::kMaxModelBytes));
//   MICA_RETURN_IF_ERROR(mica::WriteFileBytes("report.json", text_bytes));
#ifndef MICA_BASE_FILE_H_
#define MICA_BASE_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mica {

// Default size limit for files mica reads (larger files are refused, not
// truncated).
inline constexpr size_t kMaxFileBytes = size_t{1} << 31;

// Reads a whole file into memory; errors name the path. Regular files are read
// directly; pipes and FIFOs are read as streams, giving up when no data arrives
// for `stream_timeout_ms` (a FIFO nobody writes to). Folders, devices and files
// above `max_bytes` are refused.
absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>>
ReadFileBytes(const std::string &path, size_t max_bytes = kMaxFileBytes,
              int stream_timeout_ms = 10'000);

// Writes `bytes` to `path` atomically: into a fresh temporary file created
// exclusively in the target's folder, then renamed over the target. An existing
// target must be a regular file (not a link, folder, device or FIFO).
absl::Status WriteFileBytes(const std::string &path,
                            const std::vector<uint8_t> &bytes);
absl::Status WriteFileBytes(const std::string &path, const std::string &text);

// Writes several files all or none: every temporary file is written before any
// is renamed into place, and a failure removes what this call created.
absl::Status WriteFilesAllOrNone(
    const std::vector<std::pair<std::string, std::vector<uint8_t>>> &files);

// Returns true when both paths name the same existing file (same device and
// inode), e.g. an output that would overwrite the model it was computed from.
bool IsSameFile(const std::string &a, const std::string &b);

} // namespace mica

#endif // MICA_BASE_FILE_H_
