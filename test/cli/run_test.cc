// `mica run` as a black box: goldens through the CLI, dumps, --compare, .npy inputs and the
// one-line errors for malformed inputs.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

namespace fs = std::filesystem;
using mica::testing::CliResult;
using mica::testing::CountLines;
using mica::testing::RunMica;

void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// A minimal .npy (version 1.0) of int8 values with `shape`, written by hand.
std::vector<uint8_t> Int8Npy(const std::vector<int>& shape, const std::vector<uint8_t>& data) {
  std::string dims;
  for (int d : shape) dims += std::to_string(d) + ", ";
  std::string header = "{'descr': '|i1', 'fortran_order': False, 'shape': (" + dims + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              static_cast<uint8_t>(header.size() & 0xff),
                              static_cast<uint8_t>(header.size() >> 8)};
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

struct Fixture {
  std::string model, golden;
};

bool GetFixture(Fixture* f) {
  const std::string shared = mica::testing::SharedDir();
  if (shared.empty()) return false;
  f->model = shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite";
  f->golden = shared + "/golden/mlperf-tiny/kws_ds_cnn_int8/seed1";
  return true;
}

TEST_CASE("cli run: reproduces a golden, dumps every operator, compares", "[cli]") {
  Fixture f;
  if (!GetFixture(&f)) {
    WARN("MICA_SHARED_DIR absent: skipped mica run golden test");
    return;
  }
  const std::string out = mica::testing::TempDir("run-golden");
  CliResult r = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", out,
                         "--dump-all", "--compare", f.golden});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("compare output 0: identical") != std::string::npos);
  CHECK(r.out.find("per-operator dumps: all identical") != std::string::npos);
  CHECK(mica::testing::ReadFile(out + "/output_0.bin") ==
        mica::testing::ReadFile(f.golden + "/output_0.bin"));
  // Every golden dump is reproduced by --dump-all with the same name.
  int dumps = 0;
  for (const auto& e : fs::directory_iterator(f.golden)) {
    const std::string name = e.path().filename().string();
    if (name[0] != 't') continue;
    ++dumps;
    INFO(name);
    REQUIRE(fs::exists(out + "/" + name));
    CHECK(mica::testing::ReadFile(out + "/" + name) == mica::testing::ReadFile(e.path().string()));
  }
  CHECK(dumps > 5);
  // The .npy output holds the same bytes after its header.
  const std::vector<uint8_t> npy = mica::testing::ReadFile(out + "/output_0.npy");
  const std::vector<uint8_t> bin = mica::testing::ReadFile(out + "/output_0.bin");
  REQUIRE(npy.size() > bin.size());
  CHECK(std::equal(bin.begin(), bin.end(), npy.end() - bin.size()));

  // Each variant the host runs gives the same bytes; mve is refused on x86 hosts.
  for (const char* v : {"scalar", "dsp"}) {
    CliResult rv = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir",
                            out + "/" + v, "--variant", v, "--compare", f.golden});
    INFO(v << ": " << rv.out << rv.err);
    CHECK(rv.exit_code == 0);
  }
#if !defined(__arm__) && !defined(__aarch64__)
  CliResult mve = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir",
                           out + "/mve", "--variant", "mve"});
  CHECK(mve.exit_code == 1);
  CHECK(mve.err.find("mve") != std::string::npos);
  CHECK(CountLines(mve.err) == 1);
#endif
}

TEST_CASE("cli run: --compare names the first diverging operator", "[cli]") {
  Fixture f;
  if (!GetFixture(&f)) {
    WARN("MICA_SHARED_DIR absent: skipped mica run compare test");
    return;
  }
  // A reference directory whose dump of one middle operator has one byte changed.
  const std::string ref = mica::testing::TempDir("run-compare-ref");
  std::vector<std::string> dumps;
  for (const auto& e : fs::directory_iterator(f.golden)) {
    fs::copy_file(e.path(), ref + "/" + e.path().filename().string());
    const std::string name = e.path().filename().string();
    if (name[0] == 't') dumps.push_back(name);
  }
  std::sort(dumps.begin(), dumps.end(), [](const std::string& a, const std::string& b) {
    return std::stoi(a.substr(1)) < std::stoi(b.substr(1));
  });
  REQUIRE(dumps.size() > 3);
  const std::string victim = dumps[dumps.size() / 2];
  std::vector<uint8_t> bytes = mica::testing::ReadFile(ref + "/" + victim);
  bytes[3] ^= 0x10;
  WriteBytes(ref + "/" + victim, bytes);
  const std::string out = mica::testing::TempDir("run-compare-out");
  CliResult r = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", out,
                         "--compare", ref});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  const std::string tensor = "tensor " + victim.substr(1, victim.size() - 5) + " ";
  CHECK(r.out.find("first diverging operator") != std::string::npos);
  CHECK(r.out.find(tensor) != std::string::npos);
  CHECK(r.out.find("first at index 3") != std::string::npos);
}

TEST_CASE("cli run: .npy input and one-line errors for bad inputs", "[cli]") {
  Fixture f;
  if (!GetFixture(&f)) {
    WARN("MICA_SHARED_DIR absent: skipped mica run input tests");
    return;
  }
  const std::string dir = mica::testing::TempDir("run-inputs");
  const std::vector<uint8_t> input = mica::testing::ReadFile(f.golden + "/input_0.bin");
  REQUIRE(input.size() == 490);

  SECTION(".npy input gives the golden output") {
    WriteBytes(dir + "/in.npy", Int8Npy({1, 49, 10, 1}, input));
    CliResult r = RunMica({"run", f.model, "--input", dir + "/in.npy", "--output-dir", dir + "/o",
                           "--compare", f.golden});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 0);
  }
  SECTION(".npy of the wrong shape") {
    WriteBytes(dir + "/bad.npy", Int8Npy({49, 5}, std::vector<uint8_t>(input.begin(), input.begin() + 245)));
    CliResult r = RunMica({"run", f.model, "--input", dir + "/bad.npy", "--output-dir", dir + "/o"});
    CHECK(r.exit_code == 1);
    CHECK(CountLines(r.err) == 1);
    CHECK(r.err.find("[1,49,10,1]") != std::string::npos);
  }
  SECTION("raw input of the wrong size names the input and the expected size") {
    WriteBytes(dir + "/short.bin", std::vector<uint8_t>(input.begin(), input.end() - 1));
    CliResult r = RunMica({"run", f.model, "--input", dir + "/short.bin", "--output-dir", dir + "/o"});
    CHECK(r.exit_code == 1);
    CHECK(CountLines(r.err) == 1);
    CHECK(r.err.find("input 0") != std::string::npos);
    CHECK(r.err.find("489 bytes") != std::string::npos);
    CHECK(r.err.find("490 bytes") != std::string::npos);
    CHECK(!fs::exists(dir + "/o/output_0.bin"));
  }
  SECTION("missing and extra inputs") {
    CliResult none = RunMica({"run", f.model, "--output-dir", dir + "/o"});
    CHECK(none.exit_code == 1);
    CHECK(CountLines(none.err) == 1);
    CliResult two = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--input",
                             f.golden + "/input_0.bin", "--output-dir", dir + "/o"});
    CHECK(two.exit_code == 1);
    CHECK(two.err.find("takes 1 input") != std::string::npos);
  }
  SECTION("missing file, bad model, usage errors") {
    CliResult nofile = RunMica({"run", f.model, "--input", dir + "/nope.bin", "--output-dir", dir + "/o"});
    CHECK(nofile.exit_code == 1);
    CHECK(CountLines(nofile.err) == 1);
    WriteBytes(dir + "/junk.tflite", {1, 2, 3, 4, 5, 6, 7, 8});
    CliResult junk = RunMica({"run", dir + "/junk.tflite", "--input", f.golden + "/input_0.bin",
                              "--output-dir", dir + "/o"});
    CHECK(junk.exit_code == 1);
    CHECK(CountLines(junk.err) == 1);
    CHECK(RunMica({"run", f.model, "--input", f.golden + "/input_0.bin"}).exit_code == 2);
    CHECK(RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", dir + "/o",
                   "--variant", "neon"}).exit_code == 2);
  }
}

}  // namespace
}  // namespace mica
