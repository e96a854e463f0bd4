#include "testing/shared.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "testing/catch.h"

namespace mica {
namespace testing {
namespace fs = std::filesystem;

std::string SharedDir() {
  const char* dir = std::getenv("MICA_SHARED_DIR");
  if (dir == nullptr || !fs::is_directory(fs::path(dir) / "models")) return "";
  return fs::canonical(dir).string();
}

std::string SourceDir() {
  const char* dir = std::getenv("MICA_SOURCE_DIR");
  return dir ? dir : MICA_DEFAULT_SOURCE_DIR;
}

std::string BinaryDir() {
  const char* dir = std::getenv("MICA_BINARY_DIR");
  return dir ? dir : MICA_DEFAULT_BINARY_DIR;
}

std::string TempDir(const std::string& tag) {
  fs::path p = fs::path(BinaryDir()) / "test-tmp" / tag;
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_directories(p);
  return p.string();
}

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  INFO("reading " << path);
  REQUIRE(in.good());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

uint64_t TestSeed(uint64_t fallback) {
  const char* s = std::getenv("MICA_TEST_SEED");
  return s ? std::strtoull(s, nullptr, 0) : fallback;
}

}  // namespace testing
}  // namespace mica
