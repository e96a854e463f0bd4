// Locating ../shared (reference models, goldens) and the source/binary trees from tests.
#ifndef MICA_TESTING_SHARED_H_
#define MICA_TESTING_SHARED_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mica {
namespace testing {

// Returns the shared reference directory (MICA_SHARED_DIR), or "" when it is absent. Tests
// that need it call this and WARN + return when it is empty, naming what they skipped.
std::string SharedDir();

// Returns the project source and build directories (set by ctest's environment).
std::string SourceDir();
std::string BinaryDir();

// Returns a fresh empty temporary directory under the build tree, named after `tag`.
std::string TempDir(const std::string& tag);

// Reads a whole file; fails the current test when it cannot.
std::vector<uint8_t> ReadFile(const std::string& path);

// Returns the test seed: MICA_TEST_SEED from the environment if set, else `fallback`.
uint64_t TestSeed(uint64_t fallback);

}  // namespace testing
}  // namespace mica

#endif  // MICA_TESTING_SHARED_H_
