#include "mica/runtime/npy.h"

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mica/base/status_macros.h"
#include "mica/base/text.h"
#include "mica/model/load.h"

namespace mica {
namespace runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

struct DescrEntry {
  const char* descr;
  DType dtype;
};
constexpr DescrEntry kDescrs[] = {
    {"<f4", DType::kFloat32}, {"|i1", DType::kInt8},  {"|u1", DType::kUInt8},
    {"<i2", DType::kInt16},   {"<i4", DType::kInt32}, {"<i8", DType::kInt64},
    {"|b1", DType::kBool},    {"<f2", DType::kFloat16}, {"<u4", DType::kUInt32},
};

// Returns the text after `key` in the header dict, up to the next top-level comma.
absl::StatusOr<std::string> HeaderField(const std::string& header, const std::string& key,
                                        const std::string& origin) {
  const std::string quoted = absl::StrCat("'", key, "'");
  size_t pos = header.find(quoted);
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": .npy header has no '", PrintableText(key), "'"));
  }
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": malformed .npy header"));
  }
  ++pos;
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if ((c == ',' && depth == 0) || c == '}') break;
  }
  return std::string(absl::StripAsciiWhitespace(header.substr(pos, end - pos)));
}

}  // namespace

absl::StatusOr<HostTensor> ParseNpy(const std::vector<uint8_t>& file, const std::string& origin) {
  if (file.size() < 10 || std::memcmp(file.data(), kMagic, 6) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": not a .npy file (bad magic)"));
  }
  const int major = file[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = file[8] | (file[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) return absl::InvalidArgumentError(absl::StrCat(origin, ": truncated .npy"));
    header_len = file[8] | (file[9] << 8) | (file[10] << 16) | (size_t{file[11]} << 24);
    header_start = 12;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": unsupported .npy version ", major));
  }
  if (header_start + header_len > file.size()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": truncated .npy header"));
  }
  const std::string header(reinterpret_cast<const char*>(file.data() + header_start), header_len);
  MICA_ASSIGN_OR_RETURN(std::string descr, HeaderField(header, "descr", origin));
  MICA_ASSIGN_OR_RETURN(std::string order, HeaderField(header, "fortran_order", origin));
  MICA_ASSIGN_OR_RETURN(std::string shape_text, HeaderField(header, "shape", origin));
  descr = std::string(absl::StripSuffix(absl::StripPrefix(descr, "'"), "'"));
  if (descr.size() == 3 && descr[0] == '<' &&
      (descr[2] == '1')) {  // single-byte types may be written with '<'
    descr[0] = '|';
  }
  HostTensor t;
  bool found = false;
  for (const DescrEntry& e : kDescrs) {
    if (descr == e.descr) {
      t.dtype = e.dtype;
      found = true;
    }
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": unsupported .npy dtype '", PrintableText(descr), "'"));
  }
  if (order != "False") {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": Fortran-order .npy not supported"));
  }
  shape_text = std::string(absl::StripSuffix(absl::StripPrefix(shape_text, "("), ")"));
  int64_t count = 1;
  for (absl::string_view dim : absl::StrSplit(shape_text, ',', absl::SkipWhitespace())) {
    int32_t d = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(dim), &d) || d < 0 || d > (1 << 28)) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": bad .npy shape (", PrintableText(shape_text), ")"));
    }
    t.shape.push_back(d);
    count *= d;
    if (count > (int64_t{1} << 31)) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ": .npy tensor too large"));
    }
  }
  const size_t want = DTypeBytes(t.dtype, count);
  const size_t data_start = header_start + header_len;
  if (file.size() - data_start != want) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": .npy holds ", file.size() - data_start,
                                                   " data bytes, shape and dtype need ", want));
  }
  t.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(data_start), file.end());
  return t;
}

absl::StatusOr<HostTensor> ReadNpy(const std::string& path) {
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  return ParseNpy(*bytes, path);
}

std::vector<uint8_t> EncodeNpy(const HostTensor& t) {
  const char* descr = "|i1";
  for (const DescrEntry& e : kDescrs) {
    if (e.dtype == t.dtype) descr = e.descr;
  }
  std::string shape;
  for (size_t i = 0; i < t.shape.size(); ++i) absl::StrAppend(&shape, t.shape[i], ",");
  if (t.shape.size() > 1) shape.pop_back();  // "(3,)" for rank 1, "(2,3)" otherwise
  std::string header = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (",
                                    shape, "), }");
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends in '\n'.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::vector<uint8_t> out(kMagic, kMagic + 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), t.bytes.begin(), t.bytes.end());
  return out;
}

absl::Status WriteNpy(const std::string& path, const HostTensor& t) {
  return WriteFileBytes(path, EncodeNpy(t));
}

}  // namespace runtime
}  // namespace mica
