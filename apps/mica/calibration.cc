#include "mica/calibration.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/file.h"
#include "mica/base/status_macros.h"
#include "mica/model/builder.h"

namespace mica {
namespace cli {
namespace {

namespace fs = std::filesystem;
using runtime::HostTensor;

std::string ShapeText(const std::vector<int32_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

std::vector<int32_t> WithoutOnes(const std::vector<int32_t>& s) {
  std::vector<int32_t> out;
  for (int32_t d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// Returns float32 data; refuses other dtypes.
absl::StatusOr<std::vector<float>> AsFloats(const HostTensor& t, const std::string& who) {
  std::vector<float> v;
  if (t.dtype == DType::kFloat32) {
    v.resize(t.bytes.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), t.bytes.data(), v.size() * 4);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": holds ", std::string(DTypeName(t.dtype)),
        " data; calibration needs float32 values as the float model takes them "
        "(normalise integer data first)"));
  }
  return v;
}

HostTensor FloatTensor(const std::vector<int32_t>& shape, const float* v, size_t n) {
  HostTensor h;
  h.dtype = DType::kFloat32;
  h.shape = shape;
  h.bytes.resize(n * 4);
  if (n) std::memcpy(h.bytes.data(), v, n * 4);
  return h;
}

// Splits `values` (of `shape`) into samples of input `t`: one sample of t's shape, or a
// leading dimension of stacked samples.
absl::StatusOr<std::vector<HostTensor>> SplitSamples(const std::vector<float>& values,
                                                     const std::vector<int32_t>& shape,
                                                     const Tensor& t, const std::string& who) {
  const size_t per = static_cast<size_t>(t.num_elements());
  std::vector<HostTensor> out;
  const bool one = WithoutOnes(shape) == WithoutOnes(t.shape);
  std::vector<int32_t> rest(shape.begin() + (shape.empty() ? 0 : 1), shape.end());
  const bool stacked = !shape.empty() && shape[0] > 0 && WithoutOnes(rest) == WithoutOnes(t.shape);
  if (per == 0 || (!one && !stacked) || values.size() % per != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": shape ", ShapeText(shape), " does not match input '", t.name, "' ",
        ShapeText(t.shape), " (one sample of that shape, or N stacked along a leading axis)"));
  }
  for (size_t s = 0; s < values.size() / per; ++s) {
    out.push_back(FloatTensor(t.shape, values.data() + s * per, per));
  }
  return out;
}

std::vector<const Tensor*> FloatInputs(const Subgraph& sg) {
  std::vector<const Tensor*> in;
  for (int32_t i : sg.inputs) in.push_back(&sg.tensors[static_cast<size_t>(i)]);
  return in;
}

// Appends the samples of one file.
absl::Status ReadFile(const std::string& path, const Subgraph& sg, std::vector<Sample>* out) {
  const std::vector<const Tensor*> inputs = FloatInputs(sg);
  MICA_ASSIGN_OR_RETURN(auto bytes, ReadFileBytes(path));
  const bool npy = bytes->size() >= 6 && std::memcmp(bytes->data(), "\x93NUMPY", 6) == 0;
  const bool zip = bytes->size() >= 4 && Le32(bytes->data()) == 0x04034b50;
  if (npy) {
    if (inputs.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the model has ", inputs.size(),
          " inputs; give each sample as an .npz with one array per input"));
    }
    MICA_ASSIGN_OR_RETURN(HostTensor h, runtime::ParseNpy(*bytes, path));
    MICA_ASSIGN_OR_RETURN(std::vector<float> v, AsFloats(h, path));
    MICA_ASSIGN_OR_RETURN(std::vector<HostTensor> s, SplitSamples(v, h.shape, *inputs[0], path));
    for (HostTensor& t : s) out->push_back({std::move(t)});
    return absl::OkStatus();
  }
  if (zip) {
    MICA_ASSIGN_OR_RETURN(auto arrays, ParseNpz(*bytes, path));
    if (arrays.empty()) return absl::InvalidArgumentError(path + ": the .npz holds no arrays");
    if (inputs.size() == 1) {
      for (auto& [name, h] : arrays) {
        const std::string who = absl::StrCat(path, " '", name, "'");
        MICA_ASSIGN_OR_RETURN(std::vector<float> v, AsFloats(h, who));
        MICA_ASSIGN_OR_RETURN(std::vector<HostTensor> s, SplitSamples(v, h.shape, *inputs[0], who));
        for (HostTensor& t : s) out->push_back({std::move(t)});
      }
      return absl::OkStatus();
    }
    std::vector<std::vector<HostTensor>> per_input;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const HostTensor* found = nullptr;
      std::string name;
      for (const auto& [n, h] : arrays) {
        if (n == inputs[k]->name || n == absl::StrCat("arr_", k)) {
          found = &h;
          name = n;
        }
      }
      if (found == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": no array named '", inputs[k]->name,
                                                       "' or 'arr_", k, "' for input ", k));
      }
      const std::string who = absl::StrCat(path, " '", name, "'");
      MICA_ASSIGN_OR_RETURN(std::vector<float> v, AsFloats(*found, who));
      MICA_ASSIGN_OR_RETURN(std::vector<HostTensor> s, SplitSamples(v, found->shape, *inputs[k], who));
      if (k > 0 && s.size() != per_input[0].size()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": input ", k, " has ", s.size(),
                                                       " samples, input 0 has ", per_input[0].size()));
      }
      per_input.push_back(std::move(s));
    }
    for (size_t s = 0; s < per_input[0].size(); ++s) {
      Sample sample;
      for (auto& v : per_input) sample.push_back(std::move(v[s]));
      out->push_back(std::move(sample));
    }
    return absl::OkStatus();
  }
  // Raw float32.
  if (inputs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": raw data is only for single-input models; use .npz (one array per input)"));
  }
  const size_t per = static_cast<size_t>(inputs[0]->num_elements()) * 4;
  if (bytes->empty() || per == 0 || bytes->size() % per != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", bytes->size(), " bytes of raw data is not a whole number of float32 samples of ",
        ShapeText(inputs[0]->shape), " (", per, " bytes each)"));
  }
  for (size_t s = 0; s < bytes->size() / per; ++s) {
    out->push_back({FloatTensor(inputs[0]->shape,
                                reinterpret_cast<const float*>(bytes->data() + s * per), per / 4)});
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::pair<std::string, HostTensor>>> ParseNpz(
    const std::vector<uint8_t>& f, const std::string& origin) {
  std::vector<std::pair<std::string, HostTensor>> out;
  size_t at = 0;
  while (at + 4 <= f.size() && Le32(&f[at]) == 0x04034b50) {
    if (at + 30 > f.size()) return absl::InvalidArgumentError(origin + ": truncated .npz");
    const uint16_t flags = Le16(&f[at + 6]);
    const uint16_t method = Le16(&f[at + 8]);
    const uint32_t size = Le32(&f[at + 18]);
    const uint32_t usize = Le32(&f[at + 22]);
    const size_t name_len = Le16(&f[at + 26]), extra_len = Le16(&f[at + 28]);
    const size_t data = at + 30 + name_len + extra_len;
    if (data > f.size()) return absl::InvalidArgumentError(origin + ": truncated .npz");
    std::string name(reinterpret_cast<const char*>(&f[at + 30]), name_len);
    if (method != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": entry '", name,
          "' is compressed (np.savez_compressed); save it with np.savez instead"));
    }
    if ((flags & 0x8) != 0 || size == 0xFFFFFFFFu || size != usize) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin, ": entry '", name, "' has no size in its header (streamed or ZIP64 archive)"));
    }
    if (data + size > f.size()) return absl::InvalidArgumentError(origin + ": truncated .npz");
    std::vector<uint8_t> entry(f.begin() + static_cast<std::ptrdiff_t>(data),
                               f.begin() + static_cast<std::ptrdiff_t>(data + size));
    if (EndsWith(name, ".npy")) name.resize(name.size() - 4);
    MICA_ASSIGN_OR_RETURN(HostTensor h, runtime::ParseNpy(entry, absl::StrCat(origin, " '", name, "'")));
    out.emplace_back(std::move(name), std::move(h));
    at = data + size;
  }
  if (out.empty()) return absl::InvalidArgumentError(origin + ": not a readable .npz archive");
  return out;
}

absl::StatusOr<std::vector<Sample>> LoadCalibration(const std::string& data, const Subgraph& sg) {
  for (int32_t i : sg.inputs) {
    const Tensor& t = sg.tensors[static_cast<size_t>(i)];
    if (t.dtype != DType::kFloat32) {
      return absl::InvalidArgumentError(absl::StrCat(
          "input '", t.name, "' is ", std::string(DTypeName(t.dtype)),
          ", not float32: only float models can be calibrated"));
    }
  }
  std::error_code ec;
  std::vector<std::string> files;
  if (fs::is_directory(data, ec)) {
    for (const fs::directory_entry& e : fs::directory_iterator(data, ec)) {
      if (e.is_regular_file(ec) && e.path().filename().string()[0] != '.') {
        files.push_back(e.path().string());
      }
    }
    if (ec) return absl::InvalidArgumentError(absl::StrCat(data, ": ", ec.message()));
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "calibration folder '", data, "' holds no files (.npy, .npz or raw float32)"));
    }
  } else if (fs::exists(data, ec)) {
    files.push_back(data);
  } else {
    return absl::NotFoundError(absl::StrCat("calibration data '", data, "' does not exist"));
  }
  std::vector<Sample> samples;
  for (const std::string& f : files) MICA_RETURN_IF_ERROR(ReadFile(f, sg, &samples));
  if (samples.empty()) return absl::InvalidArgumentError(data + ": no calibration samples");
  return samples;
}

std::vector<Sample> RandomCalibration(const Subgraph& sg, int count, uint64_t seed) {
  SeededRng rng(seed);
  std::vector<Sample> out;
  for (int s = 0; s < count; ++s) {
    Sample sample;
    for (int32_t i : sg.inputs) {
      const Tensor& t = sg.tensors[static_cast<size_t>(i)];
      std::vector<float> v(static_cast<size_t>(t.num_elements()));
      for (float& x : v) x = rng.Symmetric(1.0f);
      sample.push_back(FloatTensor(t.shape, v.data(), v.size()));
    }
    out.push_back(std::move(sample));
  }
  return out;
}

}  // namespace cli
}  // namespace mica
