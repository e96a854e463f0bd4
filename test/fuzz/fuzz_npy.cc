// libFuzzer target: the .npy reader (`run --input`). Every input is refused with a one-line
// error naming the file, or parses into a tensor whose bytes match its shape and dtype and
// which EncodeNpy writes back to a file that parses to the same tensor.
//
// Structure-aware: LLVMFuzzerCustomMutator rewrites one entry of the header dictionary (the
// shape tuple, the dtype descriptor, fortran_order) or the data length, and keeps the header
// length field and padding consistent, so mutants get past the magic and length checks.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mica/runtime/npy.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_npy: %s\n", what.c_str());
  std::abort();
}

}  // namespace

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  // Version 1.0 layout: magic (6), version (2), header length (2, LE), header, data.
  if (rng() % 4 == 0 || size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0 || data[6] != 1) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  const size_t hlen = data[8] | (size_t{data[9]} << 8);
  if (10 + hlen > size) return LLVMFuzzerMutate(data, size, max_size);
  std::string header(reinterpret_cast<const char*>(data) + 10, hlen);
  std::string body(reinterpret_cast<const char*>(data) + 10 + hlen, size - 10 - hlen);
  while (!header.empty() && (header.back() == ' ' || header.back() == '\n')) header.pop_back();
  static const char* const kDescr[] = {"|i1", "|u1", "<i2", "<i4", "<f4", "<f8", ">i2", "<i8",
                                       "|b1", "<U3", "O", "<f2", "|V4", ""};
  static const char* const kDims[] = {"0", "1", "2", "3", "4", "-1", "65536", "2147483648",
                                      "9223372036854775807", "99999999999999999999", "1.5", "()"};
  switch (rng() % 5) {
    case 0: {
      const size_t at = header.find("'descr': '");
      if (at != std::string::npos) {
        const size_t end = header.find('\'', at + 10);
        if (end != std::string::npos) {
          header.replace(at + 10, end - at - 10, kDescr[rng() % (sizeof(kDescr) / sizeof(*kDescr))]);
        }
      }
      break;
    }
    case 1: {
      const size_t at = header.find("'shape': (");
      if (at != std::string::npos) {
        const size_t end = header.find(')', at);
        if (end != std::string::npos) {
          std::string dims;
          const int rank = static_cast<int>(rng() % 6);
          for (int i = 0; i < rank; ++i) {
            dims += kDims[rng() % (sizeof(kDims) / sizeof(*kDims))];
            dims += ", ";
          }
          header.replace(at + 10, end - at - 10, dims);
        }
      }
      break;
    }
    case 2: {
      const size_t at = header.find("'fortran_order': ");
      if (at != std::string::npos) {
        const size_t end = header.find(',', at);
        if (end != std::string::npos) {
          header.replace(at + 17, end - at - 17, rng() % 2 ? "True" : "False");
        }
      }
      break;
    }
    case 3: body.resize(rng() % 2 ? body.size() / 2 : body.size() + 1 + rng() % 16, '\x01'); break;
    default: {
      const size_t k = rng() % (header.size() + 1);
      header.insert(k, 1, "{}(),':# \\\"x0"[rng() % 14]);
      break;
    }
  }
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  if (header.size() > 65535 || 10 + header.size() + body.size() > max_size) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  data[8] = static_cast<uint8_t>(header.size() & 0xff);
  data[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(data + 10, header.data(), header.size());
  std::memcpy(data + 10 + header.size(), body.data(), body.size());
  return 10 + header.size() + body.size();
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> file(data, data + size);
  absl::StatusOr<mica::runtime::HostTensor> t = mica::runtime::ParseNpy(file, "fuzz.npy");
  if (!t.ok()) {
    const std::string msg(t.status().message());
    if (msg.find("fuzz.npy") == std::string::npos || msg.find('\n') != std::string::npos) {
      Fail("error message is not one line naming the file: " + msg);
    }
    return 0;
  }
  int64_t n = 1;
  for (int32_t d : t->shape) {
    if (d < 0) Fail("negative dimension");
    n *= d;
  }
  const std::vector<uint8_t> again = mica::runtime::EncodeNpy(*t);
  absl::StatusOr<mica::runtime::HostTensor> u = mica::runtime::ParseNpy(again, "again.npy");
  if (!u.ok()) Fail("EncodeNpy output does not parse: " + std::string(u.status().message()));
  if (u->dtype != t->dtype || u->shape != t->shape || u->bytes != t->bytes) {
    Fail("EncodeNpy round trip changed the tensor");
  }
  (void)n;
  return 0;
}
