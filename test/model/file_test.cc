// ReadFileBytes / WriteFileBytes on hostile paths: folders, FIFOs, devices,
// planted links, concurrent writers, and all-or-none writes of several files.
#include "mica/base/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

std::string Slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void Spit(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> Entries(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("ReadFileBytes names folders, missing files and oversized files",
          "[file]") {
  const std::string dir = testing::TempDir("file_read");
  auto r = ReadFileBytes(dir);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("is a folder, not a model file"));
  r = ReadFileBytes(dir + "/missing.tflite");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("missing.tflite: no such file"));
  Spit(dir + "/big", std::string(100, 'x'));
  r = ReadFileBytes(dir + "/big", 99);
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("100 bytes, above mica's limit"));
  r = ReadFileBytes(dir + "/big", 100);
  REQUIRE(r.ok());
  CHECK((*r)->size() == 100);
}

TEST_CASE("ReadFileBytes does not hang on a FIFO nobody writes to", "[file]") {
  const std::string fifo = testing::TempDir("file_fifo") + "/model.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = ReadFileBytes(fifo, kMaxFileBytes, /*stream_timeout_ms=*/200);
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(std::string(r.status().message()),
             Catch::Contains("no data arrived"));
  CHECK(waited < std::chrono::seconds(5));
}

TEST_CASE("ReadFileBytes reads a FIFO that is written", "[file]") {
  const std::string fifo = testing::TempDir("file_fifo_data") + "/model.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer(
      [&] { std::ofstream(fifo, std::ios::binary) << "TFL3 and more"; });
  auto r = ReadFileBytes(fifo, kMaxFileBytes, 5000);
  writer.join();
  REQUIRE(r.ok());
  CHECK(std::string((*r)->begin(), (*r)->end()) == "TFL3 and more");
}

TEST_CASE("WriteFileBytes never follows a link planted next to the target",
          "[file]") {
  const std::string dir = testing::TempDir("file_link");
  Spit(dir + "/victim", "precious");
  // The name the previous implementation used for its temporary file.
  REQUIRE(::symlink((dir + "/victim").c_str(),
                    (dir + "/report.json.tmp").c_str()) == 0);
  REQUIRE(WriteFileBytes(dir + "/report.json", std::string("{}\n")).ok());
  CHECK(Slurp(dir + "/victim") == "precious");
  CHECK(Slurp(dir + "/report.json") == "{}\n");
  CHECK(Entries(dir) ==
        std::vector<std::string>{"report.json", "report.json.tmp", "victim"});
}

TEST_CASE("WriteFileBytes replaces only regular files", "[file]") {
  const std::string dir = testing::TempDir("file_targets");
  Spit(dir + "/victim", "precious");
  REQUIRE(::symlink((dir + "/victim").c_str(), (dir + "/link.json").c_str()) ==
          0);
  absl::Status s = WriteFileBytes(dir + "/link.json", std::string("x"));
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("is a symbolic link; mica writes only"));
  CHECK(Slurp(dir + "/victim") == "precious");
  s = WriteFileBytes(dir, std::string("x"));
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()), Catch::Contains("is a folder"));
  s = WriteFileBytes("/dev/null", std::string("x"));
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("is a character device"));
  s = WriteFileBytes(dir + "/no/such/folder/out.json", std::string("x"));
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("cannot create a file in its folder"));
  // Nothing but the two files of this test is left behind.
  CHECK(Entries(dir) == std::vector<std::string>{"link.json", "victim"});
}

TEST_CASE("Concurrent writers of one path each leave a complete file",
          "[file]") {
  const std::string path = testing::TempDir("file_concurrent") + "/report.json";
  const std::string a = "{\"writer\": \"" + std::string(200000, 'a') + "\"}\n";
  const std::string b = "{\"writer\": \"" + std::string(300000, 'b') + "\"}\n";
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back(
        [&, i] { CHECK(WriteFileBytes(path, i % 2 ? a : b).ok()); });
  }
  for (std::thread &t : writers)
    t.join();
  const std::string got = Slurp(path);
  CHECK((got == a || got == b));
}

TEST_CASE("WriteFilesAllOrNone writes every file or none", "[file]") {
  const std::string dir = testing::TempDir("file_all_or_none");
  REQUIRE(::mkdir((dir + "/output_1.bin").c_str(), 0700) ==
          0); // cannot be replaced
  const std::vector<uint8_t> bytes = {1, 2, 3};
  absl::Status s = WriteFilesAllOrNone(
      {{dir + "/output_0.bin", bytes}, {dir + "/output_1.bin", bytes}});
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(std::string(s.message()),
             Catch::Contains("output_1.bin: is a folder"));
  CHECK(Entries(dir) == std::vector<std::string>{"output_1.bin"});
  REQUIRE(WriteFilesAllOrNone(
              {{dir + "/output_0.bin", bytes}, {dir + "/output_2.bin", bytes}})
              .ok());
  CHECK(Entries(dir) == std::vector<std::string>{"output_0.bin", "output_1.bin",
                                                 "output_2.bin"});
}

TEST_CASE("IsSameFile sees through different spellings of one path", "[file]") {
  const std::string dir = testing::TempDir("file_same");
  Spit(dir + "/model.tflite", "m");
  Spit(dir + "/other.tflite", "m");
  CHECK(IsSameFile(dir + "/model.tflite", dir + "/./model.tflite"));
  CHECK_FALSE(IsSameFile(dir + "/model.tflite", dir + "/other.tflite"));
  CHECK_FALSE(IsSameFile(dir + "/model.tflite", dir + "/missing.tflite"));
}

} // namespace
} // namespace mica
