// `mica run` as a black box: goldens through the CLI, dumps, --compare, .npy inputs and the
// one-line errors for malformed inputs.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "mica/model/load.h"
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
  // `--dump-all` followed by a flag is the old form: dumps into --output-dir, with a warning.
  CHECK(r.err.find("warning: --dump-all now takes a folder") != std::string::npos);
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

// Reads a .npy's header dict ("{'descr': '|i1', 'fortran_order': False, 'shape': (1, 12), }").
std::string NpyHeader(const std::vector<uint8_t>& npy) {
  if (npy.size() < 10) return "";
  const size_t len = npy[8] | (npy[9] << 8);
  return std::string(npy.begin() + 10, npy.begin() + 10 + static_cast<long>(std::min(len, npy.size() - 10)));
}

TEST_CASE("cli run: output summary, --dump-all DIR as .npy with dtype and shape", "[cli]") {
  Fixture f;
  if (!GetFixture(&f)) {
    WARN("MICA_SHARED_DIR absent: skipped mica run summary test");
    return;
  }
  const std::string out = mica::testing::TempDir("run-summary");
  const std::string dumps = out + "/dumps";
  CliResult r = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", out,
                         "--dump-all", dumps, "--top-k", "3"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  // The golden output: 12 int8 classes, scale 1/256, zero point -128.
  const std::vector<uint8_t> golden = mica::testing::ReadFile(f.golden + "/output_0.bin");
  REQUIRE(golden.size() == 12);
  int best = 0;
  for (int i = 1; i < 12; ++i) {
    if (static_cast<int8_t>(golden[i]) > static_cast<int8_t>(golden[best])) best = i;
  }
  std::string first = "  values (first 8 of 12):";
  for (int i = 0; i < 8; ++i) first += " " + std::to_string(static_cast<int8_t>(golden[i]));
  CHECK(r.out.find(first + "\n") != std::string::npos);
  CHECK(r.out.find("  dequantized (0.00390625 * (q - -128)):") != std::string::npos);
  const std::string top = "  top-3 (class: value, dequantized): " + std::to_string(best) + ": ";
  CHECK(r.out.find(top) != std::string::npos);
  CHECK(r.out.find("dumps: ") != std::string::npos);
  // Every golden t<k>.bin is in the dump folder, identical, next to a .npy of the same bytes
  // whose header gives the dtype and shape; the graph input is dumped too.
  int npys = 0;
  for (const auto& e : fs::directory_iterator(dumps)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".npy") continue;
    ++npys;
    INFO(name);
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
          std::string::npos);
    const std::string k = name.substr(1, name.find('_') - 1);
    const std::vector<uint8_t> npy = mica::testing::ReadFile(e.path().string());
    const std::vector<uint8_t> bin = mica::testing::ReadFile(dumps + "/t" + k + ".bin");
    REQUIRE(npy.size() > bin.size());
    CHECK(std::equal(bin.begin(), bin.end(), npy.end() - static_cast<long>(bin.size())));
    CHECK(NpyHeader(npy).find("'descr': '|i1'") != std::string::npos);
  }
  CHECK(npys >= 14);
  CHECK(NpyHeader(mica::testing::ReadFile(dumps + "/t0_input_1.npy")).find("'shape': (1,49,10,1)") !=
        std::string::npos);
  for (const auto& e : fs::directory_iterator(f.golden)) {
    const std::string name = e.path().filename().string();
    if (name[0] != 't') continue;
    INFO(name);
    CHECK(mica::testing::ReadFile(dumps + "/" + name) == mica::testing::ReadFile(e.path().string()));
  }
  // Outputs and dumps in one folder make a --compare reference.
  const std::string ref = out + "/ref";
  REQUIRE(RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", ref,
                   "--dump-all", ref}).exit_code == 0);
  CliResult c = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir",
                         out + "/again", "--compare", ref});
  CHECK(c.exit_code == 0);
  CHECK(c.out.find("per-operator dumps: all identical") != std::string::npos);
  // --top-k 0 lists no classes; a bad --top-k is a usage error.
  CliResult k0 = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir",
                          out + "/k0", "--top-k", "0"});
  CHECK(k0.exit_code == 0);
  CHECK(k0.out.find("top-") == std::string::npos);
  CHECK(RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--output-dir", out,
                 "--top-k", "x"}).exit_code == 2);
}

// A stateful model of the committed corpus: int8 UNIDIRECTIONAL_SEQUENCE_LSTM with variable
// hidden and cell state, input int8 [1, 20, 16].
const std::string kLstm =
    std::string(MICA_TEST_DATA_DIR) + "/../corpus/models/rnn_lstm32_20x16.tflite";

TEST_CASE("cli run: several frames of a stateful model keep the state", "[cli]") {
  const std::string dir = mica::testing::TempDir("run-frames");
  std::vector<uint8_t> a(320), b(320);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<uint8_t>((i * 37) % 251);
    b[i] = static_cast<uint8_t>((i * 11 + 5) % 253);
  }
  WriteBytes(dir + "/a.bin", a);
  WriteBytes(dir + "/b.bin", b);
  // Frame f of output_0_frames.npy ([frames, 1, 8] int8).
  auto frame = [&](const std::string& out, int f) {
    const std::vector<uint8_t> npy = mica::testing::ReadFile(out + "/output_0_frames.npy");
    const size_t frames = NpyHeader(npy).find("'shape': (3,") != std::string::npos ? 3 : 2;
    REQUIRE(npy.size() > 8 * frames);
    const auto start = npy.end() - static_cast<long>(8 * (frames - static_cast<size_t>(f)));
    return std::vector<uint8_t>(start, start + 8);
  };
  // One frame each, from a fresh state.
  CliResult ra = RunMica({"run", kLstm, "--input", dir + "/a.bin", "--output-dir", dir + "/a"});
  INFO(ra.out << ra.err);
  REQUIRE(ra.exit_code == 0);
  CHECK(ra.out.find("frames:") == std::string::npos);
  CliResult rb = RunMica({"run", kLstm, "--input", dir + "/b.bin", "--output-dir", dir + "/b"});
  REQUIRE(rb.exit_code == 0);
  const std::vector<uint8_t> out_a = mica::testing::ReadFile(dir + "/a/output_0.bin");
  const std::vector<uint8_t> out_b = mica::testing::ReadFile(dir + "/b/output_0.bin");

  // a then b in a row: frame 0 is a's fresh output, frame 1 sees the state a left behind.
  CliResult ab = RunMica({"run", kLstm, "--input", dir + "/a.bin", "--input", dir + "/b.bin",
                          "--output-dir", dir + "/ab"});
  INFO(ab.out << ab.err);
  REQUIRE(ab.exit_code == 0);
  CHECK(ab.out.find("frames: 2 in a row, state kept between frames") != std::string::npos);
  CHECK(ab.out.find("  frame 0: output 0 top-1 ") != std::string::npos);
  CHECK(ab.out.find("  frame 1: output 0 top-1 ") != std::string::npos);
  CHECK(ab.out.find("(last frame)") != std::string::npos);
  CHECK(NpyHeader(mica::testing::ReadFile(dir + "/ab/output_0_frames.npy"))
            .find("'shape': (2,1,8)") != std::string::npos);
  CHECK(frame(dir + "/ab", 0) == out_a);
  CHECK(frame(dir + "/ab", 1) != out_b);
  CHECK(mica::testing::ReadFile(dir + "/ab/output_0.bin") == frame(dir + "/ab", 1));

  // --frames 3 repeats one input; the state keeps changing the output.
  CliResult aaa = RunMica({"run", kLstm, "--input", dir + "/a.bin", "--frames", "3",
                           "--output-dir", dir + "/aaa"});
  INFO(aaa.out << aaa.err);
  REQUIRE(aaa.exit_code == 0);
  CHECK(frame(dir + "/aaa", 0) == out_a);
  CHECK(frame(dir + "/aaa", 1) != out_a);
  CHECK(NpyHeader(mica::testing::ReadFile(dir + "/aaa/output_0_frames.npy"))
            .find("'shape': (3,1,8)") != std::string::npos);
  // A long run prints the first and last 16 frames only.
  CliResult forty = RunMica({"run", kLstm, "--input", dir + "/a.bin", "--frames", "40",
                             "--output-dir", dir + "/forty"});
  REQUIRE(forty.exit_code == 0);
  CHECK(forty.out.find("  frame 15: ") != std::string::npos);
  CHECK(forty.out.find("  frame 16: ") == std::string::npos);
  CHECK(forty.out.find("  ... 8 frames not shown") != std::string::npos);
  CHECK(forty.out.find("  frame 39: ") != std::string::npos);
  CHECK(RunMica({"run", kLstm, "--input", dir + "/a.bin", "--frames", "1000001", "--output-dir",
                 dir + "/many"}).exit_code == 2);
  // Frame outputs are bounded (1 GiB in all): a million frames of a 2,560-byte output are
  // refused before running, with one line.
  const std::string shared = mica::testing::SharedDir();
  if (!shared.empty()) {
    const std::string ad = shared + "/models/mlperf-tiny/ad_autoencoder_float.tflite";
    WriteBytes(dir + "/ad.bin", std::vector<uint8_t>(2560, 0));
    CliResult big = RunMica({"run", ad, "--input", dir + "/ad.bin", "--frames", "1000000",
                             "--output-dir", dir + "/big"});
    INFO(big.err);
    CHECK(big.exit_code == 1);
    CHECK(CountLines(big.err) == 1);
    CHECK(big.err.find("exceed the 1 GiB") != std::string::npos);
  }
  // The frames are deterministic.
  CliResult again = RunMica({"run", kLstm, "--input", dir + "/a.bin", "--frames", "3",
                             "--output-dir", dir + "/aaa2"});
  REQUIRE(again.exit_code == 0);
  for (int f = 0; f < 3; ++f) CHECK(frame(dir + "/aaa", f) == frame(dir + "/aaa2", f));
}

// Every stateful corpus model, frames A, B, A in a row, against TFLite Micro's outputs for the
// same sequence through one interpreter (test/corpus/reference/tflm/frames.csv, recorded by
// test/corpus/tools/record_tflm_frames.py).
TEST_CASE("cli run: frames in a row match TFLite Micro's recorded frames", "[cli]") {
  const std::string corpus = std::string(MICA_TEST_DATA_DIR) + "/../corpus";
  std::ifstream csv(corpus + "/reference/tflm/frames.csv");
  REQUIRE(csv.good());
  std::string line;
  std::getline(csv, line);
  REQUIRE(line == "model,model_sha256,tflm_version,frame,input,output,values");
  std::map<std::string, std::vector<std::string>> want;  // model -> values of frames 0, 1, 2
  while (std::getline(csv, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    REQUIRE(cells.size() == 7);
    REQUIRE(cells[5] == "0");
    want[cells[0]].push_back(cells[6]);
  }
  REQUIRE(want.size() >= 3);
  const std::string dir = mica::testing::TempDir("run-frames-tflm");
  for (const auto& [model, frames] : want) {
    CAPTURE(model);
    REQUIRE(frames.size() == 3);
    const std::string path = corpus + "/models/" + model + ".tflite";
    auto g = LoadModel(path);
    REQUIRE(g.ok());
    const size_t n = static_cast<size_t>(g->main().tensors[g->main().inputs[0]].num_elements());
    std::vector<uint8_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) {
      a[i] = static_cast<uint8_t>((i * 37) % 251);
      b[i] = static_cast<uint8_t>((i * 11 + 5) % 253);
    }
    WriteBytes(dir + "/" + model + ".a", a);
    WriteBytes(dir + "/" + model + ".b", b);
    const std::string out = dir + "/" + model;
    CliResult r = RunMica({"run", path, "--input", out + ".a", "--input", out + ".b", "--input",
                           out + ".a", "--output-dir", out});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // The same frames as one .npy with a leading frame axis: [3, ...input shape].
    std::vector<uint8_t> seq = a;
    seq.insert(seq.end(), b.begin(), b.end());
    seq.insert(seq.end(), a.begin(), a.end());
    std::vector<int> npy_shape = {3};
    for (int32_t d : g->main().tensors[g->main().inputs[0]].shape) npy_shape.push_back(d);
    WriteBytes(out + ".npy", Int8Npy(npy_shape, seq));
    CliResult rn = RunMica({"run", path, "--input", out + ".npy", "--output-dir", out + "_npy"});
    INFO(rn.out << rn.err);
    REQUIRE(rn.exit_code == 0);
    CHECK(rn.out.find("frames: 3 in a row") != std::string::npos);
    CHECK(mica::testing::ReadFile(out + "/output_0_frames.npy") ==
          mica::testing::ReadFile(out + "_npy/output_0_frames.npy"));
    CHECK(RunMica({"run", path, "--input", out + ".npy", "--frames", "2", "--output-dir",
                   out + "_bad"}).exit_code == 1);
    const std::vector<uint8_t> npy = mica::testing::ReadFile(out + "/output_0_frames.npy");
    std::vector<std::vector<int>> expected(3);
    size_t total = 0;
    for (int f = 0; f < 3; ++f) {
      std::stringstream values(frames[static_cast<size_t>(f)]);
      for (int v; values >> v;) expected[static_cast<size_t>(f)].push_back(v);
      total += expected[static_cast<size_t>(f)].size();
    }
    REQUIRE(npy.size() > total);
    size_t at = npy.size() - total;
    for (int f = 0; f < 3; ++f) {
      std::vector<int> got;
      for (size_t i = 0; i < expected[static_cast<size_t>(f)].size(); ++i) {
        got.push_back(static_cast<int8_t>(npy[at++]));
      }
      CAPTURE(f);
      CHECK(got == expected[static_cast<size_t>(f)]);
    }
  }
}

// int8 LSTM variants (peephole, projection, layer norm, CIFG; made from a corpus model by
// test/corpus/tools/record_tflm_lstm_variants.py): the pinned TFLite Micro refuses each in
// Prepare, as recorded; mica inspects them and `run` refuses them with one line saying so.
TEST_CASE("cli run: int8 LSTM variants TFLite Micro refuses are refused with the reason", "[cli]") {
  const std::string dir = std::string(MICA_TEST_DATA_DIR) + "/lstm_variants";
  std::ifstream csv(dir + "/tflm.csv");
  REQUIRE(csv.good());
  std::string line;
  std::getline(csv, line);
  REQUIRE(line == "file,sha256,tflm_version,tflm_status");
  const std::string tmp = mica::testing::TempDir("run-lstm-variants");
  WriteBytes(tmp + "/x.bin", std::vector<uint8_t>(320, 3));
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    const std::string file = line.substr(0, line.find(','));
    CAPTURE(file);
    CHECK(line.substr(line.rfind(',') + 1) == "refused");
    CHECK(RunMica({"inspect", dir + "/" + file}).exit_code == 0);
    CliResult r = RunMica({"run", dir + "/" + file, "--input", tmp + "/x.bin", "--output-dir",
                           tmp + "/out"});
    INFO(r.err);
    CHECK(r.exit_code == 1);
    CHECK(CountLines(r.err) == 1);
    CHECK(r.err.find("UNIDIRECTIONAL_SEQUENCE_LSTM") != std::string::npos);
    CHECK(r.err.find("TFLite Micro refuses") != std::string::npos);
    CHECK(!fs::exists(tmp + "/out/output_0.bin"));
  }
  CHECK(rows == 4);
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
    // No --input: the inputs the model expects, their types and how to pass them.
    CliResult none = RunMica({"run", f.model, "--output-dir", dir + "/o"});
    INFO(none.err);
    CHECK(none.exit_code == 2);
    CHECK(none.out.empty());
    CHECK(none.err.find("takes 1 input(s); give one --input FILE per input") != std::string::npos);
    CHECK(none.err.find("input 0 'input_1': int8 [1,49,10,1] (490 bytes, real = ") !=
          std::string::npos);
    CHECK(none.err.find(".npy of that dtype and shape") != std::string::npos);
    CHECK(none.err.find("does not make up inputs") != std::string::npos);
    CHECK(!fs::exists(dir + "/o"));
    // Two inputs for a one-input model are two frames; three with --frames 2 are refused.
    CliResult three = RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--input",
                               f.golden + "/input_0.bin", "--input", f.golden + "/input_0.bin",
                               "--frames", "2", "--output-dir", dir + "/o"});
    CHECK(three.exit_code == 1);
    CHECK(CountLines(three.err) == 1);
    CHECK(three.err.find("takes 1 input(s), got 3 --input for 2 frames") != std::string::npos);
    CHECK(RunMica({"run", f.model, "--input", f.golden + "/input_0.bin", "--frames", "0",
                   "--output-dir", dir + "/o"}).exit_code == 2);
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
