// .npy reading and writing: round trips, the files NumPy writes, and malformed files.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mica/runtime/npy.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace runtime {
namespace {

std::vector<uint8_t> Bytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

// A .npy file as NumPy 1.x writes it (v1.0 header padded to 64 bytes).
std::vector<uint8_t> NumpyFile(const std::string& dict, const std::vector<uint8_t>& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              static_cast<uint8_t>(header.size() & 0xff),
                              static_cast<uint8_t>(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

TEST_CASE("npy: round trips every supported dtype and rank", "[runtime]") {
  const std::vector<std::pair<DType, size_t>> types = {
      {DType::kFloat32, 4}, {DType::kInt8, 1}, {DType::kUInt8, 1}, {DType::kInt16, 2},
      {DType::kInt32, 4},   {DType::kInt64, 8}, {DType::kBool, 1}};
  const std::vector<std::vector<int32_t>> shapes = {{}, {3}, {2, 3}, {1, 4, 2, 1}, {0, 5}};
  for (const auto& [dtype, es] : types) {
    for (const auto& shape : shapes) {
      CAPTURE(DTypeName(dtype), shape.size());
      HostTensor t;
      t.dtype = dtype;
      t.shape = shape;
      int64_t n = 1;
      for (int32_t d : shape) n *= d;
      t.bytes.resize(static_cast<size_t>(n) * es);
      for (size_t i = 0; i < t.bytes.size(); ++i) t.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
      const std::vector<uint8_t> file = EncodeNpy(t);
      CHECK((file.size() - t.bytes.size()) % 64 == 0);  // data aligned like NumPy's
      auto back = ParseNpy(file, "x.npy");
      REQUIRE(back.ok());
      CHECK(back->dtype == dtype);
      CHECK(back->shape == shape);
      CHECK(back->bytes == t.bytes);
    }
  }
}

TEST_CASE("npy: reads NumPy-written headers", "[runtime]") {
  auto a = ParseNpy(NumpyFile("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }",
                              {1, 0, 2, 0, 3, 0, 0xff, 0xff}),
                    "a.npy");
  REQUIRE(a.ok());
  CHECK(a->dtype == DType::kInt16);
  CHECK(a->shape == std::vector<int32_t>{2, 2});
  auto b = ParseNpy(NumpyFile("{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", {1, 2, 3}),
                    "b.npy");
  REQUIRE(b.ok());
  CHECK(b->shape == std::vector<int32_t>{3});
}

TEST_CASE("npy: malformed files give errors naming the file", "[runtime]") {
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> bad = {
      {"empty", {}},
      {"bad magic", Bytes("NOTNUMPYFILE")},
      {"float64", NumpyFile("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                            std::vector<uint8_t>(8))},
      {"fortran", NumpyFile("{'descr': '|i1', 'fortran_order': True, 'shape': (2, 2), }",
                            std::vector<uint8_t>(4))},
      {"short data", NumpyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }",
                               std::vector<uint8_t>(11))},
      {"negative dim", NumpyFile("{'descr': '|i1', 'fortran_order': False, 'shape': (-1,), }", {})},
      {"huge", NumpyFile("{'descr': '|i1', 'fortran_order': False, 'shape': (65536, 65536), }", {})},
      {"no shape", NumpyFile("{'descr': '|i1', 'fortran_order': False, }", {1})},
      {"version 9", {0x93, 'N', 'U', 'M', 'P', 'Y', 9, 0, 0, 0}},
  };
  for (const auto& [what, file] : bad) {
    CAPTURE(what);
    auto r = ParseNpy(file, "bad.npy");
    REQUIRE(!r.ok());
    CHECK(std::string(r.status().message()).find("bad.npy") != std::string::npos);
  }
}

TEST_CASE("npy: random corruption never crashes", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(301);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HostTensor t{DType::kInt16, {2, 3}, std::vector<uint8_t>(12, 5)};
  const std::vector<uint8_t> good = EncodeNpy(t);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> f = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) f[rng() % f.size()] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) f.resize(rng() % f.size());
    auto r = ParseNpy(f, "fuzz.npy");
    if (r.ok()) {
      int64_t n = 1;
      for (int32_t d : r->shape) n *= d;
      CHECK(r->bytes.size() == DTypeBytes(r->dtype, n));
    }
  }
}

}  // namespace
}  // namespace runtime
}  // namespace mica
