// Replays files through a libFuzzer target without libFuzzer: the deterministic
// half of the fuzz step. Built with the normal compiler and sanitizers (one
// executable per fuzz_*.cc) and run by ctest over the committed corpus
// (test/fuzz/corpus/<target>/: every past finding is kept there as a regression
// input) and the shared models.
//
//   fuzz_replay_tflite FILE_OR_DIR...
//
// A failing input aborts inside LLVMFuzzerTestOneInput (the target's own
// checks, ASan or UBSan); the file being run is printed first so the log names
// it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

namespace fs = std::filesystem;

bool RunFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                   std::istreambuf_iterator<char>());
  std::fprintf(stderr, "fuzz replay: %s (%zu bytes)\n", path.c_str(),
               bytes.size());
  // A fresh heap copy sized exactly, as libFuzzer passes it, so ASan sees
  // overreads.
  std::vector<uint8_t> copy(bytes);
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
  return true;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry &e :
           fs::recursive_directory_iterator(arg, ec)) {
        if (e.is_regular_file())
          files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const fs::path &f : files)
        count += RunFile(f) ? 1 : 0;
    } else if (fs::is_regular_file(arg, ec)) {
      count += RunFile(arg) ? 1 : 0;
    } else {
      std::fprintf(stderr, "fuzz replay: %s is neither a file nor a folder\n",
                   argv[i]);
      return 1;
    }
  }
  std::printf("fuzz replay: %zu inputs, no finding\n", count);
  return count > 0 ? 0 : 1;
}
