#include "mica/base/file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"

namespace mica {
namespace {

// Closes a file descriptor on scope exit.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_;
};

std::string ErrnoText(int err) { return std::strerror(err); }

const char *KindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a folder";
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

absl::Status ReadAll(int fd, const std::string &path, size_t max_bytes,
                     bool stream, int timeout_ms, std::vector<uint8_t> *out) {
  uint8_t chunk[1 << 16];
  for (;;) {
    if (stream) {
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, timeout_ms);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return absl::DataLossError(
            absl::StrCat(path, ": read failed: ", ErrnoText(errno)));
      if (r == 0) {
        return absl::DeadlineExceededError(
            absl::StrCat(path, ": no data arrived for ", timeout_ms / 1000,
                         " s (a FIFO nobody writes to?)"));
      }
    }
    const ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return absl::DataLossError(
          absl::StrCat(path, ": read failed: ", ErrnoText(errno)));
    if (n == 0)
      return absl::OkStatus();
    if (out->size() + static_cast<size_t>(n) > max_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": file is larger than mica's limit of ", max_bytes, " bytes"));
    }
    out->insert(out->end(), chunk, chunk + n);
  }
}

// A temporary file next to `path`, created exclusively (never an existing file
// or link).
struct TempFile {
  std::string path;
  int fd = -1;
};

absl::StatusOr<TempFile> CreateTempNextTo(const std::string &path) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base =
      slash == std::string::npos ? path : path.substr(slash + 1);
  std::string pattern = absl::StrCat(dir, ".", base, ".tmp-XXXXXX");
  // mkstemp opens with O_CREAT | O_EXCL: it never follows a link or reuses a
  // file.
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        path, ": cannot create a file in its folder: ", ErrnoText(errno)));
  }
  // mkstemp makes the file 0600; give it the permissions a new file normally
  // gets.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  return TempFile{pattern, fd};
}

absl::Status CheckWritableTarget(const std::string &path) {
  if (path.empty())
    return absl::InvalidArgumentError("empty output file name");
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, ": is ", KindOf(st.st_mode), "; mica writes only regular files"));
  }
  return absl::OkStatus();
}

// Writes `size` bytes to a new temporary file next to `path`; on failure
// nothing is left.
absl::StatusOr<std::string> WriteTemp(const std::string &path,
                                      const uint8_t *data, size_t size) {
  MICA_RETURN_IF_ERROR(CheckWritableTarget(path));
  absl::StatusOr<TempFile> tmp = CreateTempNextTo(path);
  if (!tmp.ok())
    return tmp.status();
  Fd fd(tmp->fd);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd.get(), data + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::unlink(tmp->path.c_str());
      return absl::DataLossError(
          absl::StrCat(path, ": write failed: ", ErrnoText(err)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || ::close(fd.release()) != 0) {
    const int err = errno;
    ::unlink(tmp->path.c_str());
    return absl::DataLossError(
        absl::StrCat(path, ": write failed: ", ErrnoText(err)));
  }
  return tmp->path;
}

absl::Status RenameIntoPlace(const std::string &tmp, const std::string &path) {
  // Checked again just before the rename: the target may have changed since.
  absl::Status target = CheckWritableTarget(path);
  if (target.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    target = absl::PermissionDeniedError(absl::StrCat(
        path, ": cannot move the written file into place: ", ErrnoText(errno)));
  }
  if (!target.ok())
    ::unlink(tmp.c_str());
  return target;
}

} // namespace

absl::StatusOr<std::shared_ptr<const std::vector<uint8_t>>>
ReadFileBytes(const std::string &path, size_t max_bytes,
              int stream_timeout_ms) {
  if (path.empty())
    return absl::InvalidArgumentError("empty file name");
  // O_NONBLOCK: opening a FIFO nobody writes to must not block; cleared below
  // for reading.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT)
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open file: ", ErrnoText(err)));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return absl::DataLossError(
        absl::StrCat(path, ": cannot read file status: ", ErrnoText(errno)));
  }
  const bool stream =
      S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode);
  if (!S_ISREG(st.st_mode) && !stream) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": is ", KindOf(st.st_mode), ", not a model file"));
  }
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": file is ", st.st_size,
                     " bytes, above mica's limit of ", max_bytes));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0 && !stream)
    ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  if (S_ISREG(st.st_mode))
    bytes->reserve(static_cast<size_t>(st.st_size));
  MICA_RETURN_IF_ERROR(ReadAll(fd.get(), path, max_bytes, stream,
                               stream_timeout_ms, bytes.get()));
  return std::shared_ptr<const std::vector<uint8_t>>(std::move(bytes));
}

absl::Status WriteFileBytes(const std::string &path,
                            const std::vector<uint8_t> &bytes) {
  MICA_ASSIGN_OR_RETURN(std::string tmp,
                        WriteTemp(path, bytes.data(), bytes.size()));
  return RenameIntoPlace(tmp, path);
}

absl::Status WriteFileBytes(const std::string &path, const std::string &text) {
  MICA_ASSIGN_OR_RETURN(
      std::string tmp,
      WriteTemp(path, reinterpret_cast<const uint8_t *>(text.data()),
                text.size()));
  return RenameIntoPlace(tmp, path);
}

absl::Status WriteFilesAllOrNone(
    const std::vector<std::pair<std::string, std::vector<uint8_t>>> &files) {
  std::vector<std::string> temps;
  auto remove_temps = [&temps] {
    for (const std::string &t : temps)
      ::unlink(t.c_str());
  };
  for (const auto &[path, bytes] : files) {
    absl::StatusOr<std::string> tmp =
        WriteTemp(path, bytes.data(), bytes.size());
    if (!tmp.ok()) {
      remove_temps();
      return tmp.status();
    }
    temps.push_back(*std::move(tmp));
  }
  for (const auto &[path, bytes] : files)
    MICA_RETURN_IF_ERROR(CheckWritableTarget(path));
  for (size_t i = 0; i < files.size(); ++i) {
    if (::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      const int err = errno;
      // Undo: the files renamed so far are new outputs of this call; remove
      // them too.
      for (size_t j = 0; j < i; ++j)
        ::unlink(files[j].first.c_str());
      for (size_t j = i; j < temps.size(); ++j)
        ::unlink(temps[j].c_str());
      return absl::PermissionDeniedError(absl::StrCat(
          files[i].first,
          ": cannot move the written file into place: ", ErrnoText(err)));
    }
  }
  return absl::OkStatus();
}

bool IsSameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0)
    return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

} // namespace mica
