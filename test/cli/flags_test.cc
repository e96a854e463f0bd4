// The flag names every command shares (the brief's table): short forms, old spellings that
// warn, per-command --help describing each flag, --version; and the CLI's handling of
// hostile paths (a folder or FIFO as the model, the model as the report file, planted links).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

std::string ZooModel() {
  static const std::string dir = [] {
    // Per process: ctest runs each test case as its own process, possibly in parallel.
    const std::string d = testing::TempDir("flags-zoo-" + std::to_string(::getpid()));
    REQUIRE(RunMica({"zoo", "--output-dir", d, "--model", "kws_ds_cnn", "--calibration-samples",
                     "1"})
                .exit_code == 0);
    return d;
  }();
  return dir + "/kws_ds_cnn_int8.tflite";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_CASE("every command answers -h and --help with each of its flags", "[cli][flags]") {
  for (const char* command : {"check", "inspect", "run", "targets", "zoo"}) {
    CAPTURE(command);
    for (const char* help : {"--help", "-h"}) {
      const CliResult r = RunMica({command, help});
      CHECK(r.exit_code == 0);
      CHECK(r.out.rfind(std::string("usage: mica ") + command, 0) == 0);
      CHECK(r.out.find("options:") != std::string::npos);
      CHECK(r.out.find("-h, --help") != std::string::npos);
      CHECK(CountLines(r.out) >= 5);  // usage, summary, and one line per flag
    }
  }
  const CliResult check = RunMica({"check", "--help"});
  for (const char* flag : {"-t, --target-profile", "-b, --backend", "-o, --output", "--json",
                           "--compatibility", "--performance"}) {
    CHECK(check.out.find(flag) != std::string::npos);
  }
  CHECK(RunMica({"run", "--help"}).out.find("--output-dir DIR") != std::string::npos);
  CHECK(RunMica({"zoo", "--help"}).out.find("--output-dir DIR") != std::string::npos);
}

TEST_CASE("the version flags print the version", "[cli][flags]") {
  for (const char* v : {"--version", "-v", "-V"}) {
    const CliResult r = RunMica({v});
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("mica ", 0) == 0);
  }
}

TEST_CASE("short forms -t -b -o mean their long flags", "[cli][flags]") {
  const std::string model = ZooModel();
  const std::string out = testing::TempDir("flags-short") + "/report.json";
  const CliResult r = RunMica({"check", model, "-t", "ethos-u55-128", "-b", "mica", "--json",
                               "-o", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.empty());
  CHECK(Slurp(out).find("\"mica.check/1\"") != std::string::npos);
}

TEST_CASE("old spellings still work and warn", "[cli][flags]") {
  const std::string dir = testing::TempDir("flags-old");
  const CliResult zoo = RunMica({"zoo", "--out", dir, "--model", "ad_autoencoder",
                                 "--calibration-samples", "1"});
  CHECK(zoo.exit_code == 0);
  CHECK(zoo.err.find("warning: --out is now --output-dir") != std::string::npos);
  CHECK(fs::exists(dir + "/ad_autoencoder_int8.tflite"));
}

TEST_CASE("the model is never overwritten by a report", "[cli][hostile]") {
  const std::string dir = testing::TempDir("flags-self");
  const std::string model = dir + "/model.tflite";
  fs::copy_file(ZooModel(), model);
  const std::string before = Slurp(model);
  const CliResult r = RunMica({"check", model, "-t", "cortex-m4", "-o", dir + "/./model.tflite"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is the model itself") != std::string::npos);
  CHECK(Slurp(model) == before);
}

TEST_CASE("a report is never written through a planted link or onto a device", "[cli][hostile]") {
  const std::string dir = testing::TempDir("flags-link");
  std::ofstream(dir + "/victim") << "precious";
  REQUIRE(::symlink((dir + "/victim").c_str(), (dir + "/r.json.tmp").c_str()) == 0);
  REQUIRE(RunMica({"check", ZooModel(), "-t", "cortex-m4", "--json", "-o", dir + "/r.json"})
              .exit_code == 0);
  CHECK(Slurp(dir + "/victim") == "precious");
  const CliResult dev = RunMica({"check", ZooModel(), "-t", "cortex-m4", "-o", "/dev/null"});
  CHECK(dev.exit_code == 1);
  CHECK(dev.err.find("character device") != std::string::npos);
}

TEST_CASE("a folder or a FIFO given as the model is a one-line error, never a hang",
          "[cli][hostile]") {
  const std::string dir = testing::TempDir("flags-fifo");
  CliResult r = RunMica({"inspect", dir});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is a folder, not a model file") != std::string::npos);
  CHECK(CountLines(r.err) == 1);
  const std::string fifo = dir + "/model.tflite";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  r = RunMica({"inspect", fifo});  // nobody writes: gives up after the stream timeout
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no data arrived") != std::string::npos);
  CHECK(CountLines(r.err) == 1);
}

}  // namespace
}  // namespace mica

namespace mica {
namespace {

size_t LongestLine(const std::string& s) {
  size_t longest = 0, start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '\n') {
      longest = std::max(longest, i - start);
      start = i + 1;
    }
  }
  return longest;
}

TEST_CASE("check --per-layer prints every operator; --csv writes one row per profile x op",
          "[cli][check]") {
  const std::string model = ZooModel();
  const std::string csv = testing::TempDir("flags-csv") + "/layers.csv";
  const CliResult r = RunMica({"check", model, "-t", "ethos-u55-128", "-t", "cortex-m4",
                               "--per-layer", "--csv", csv});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("Per layer: ethos-u55-128") != std::string::npos);
  CHECK(r.out.find("Per layer: cortex-m4") != std::string::npos);
  const std::string text = Slurp(csv);
  REQUIRE_FALSE(text.empty());
  CHECK(text.rfind("model,profile,backend,op_index,operator,", 0) == 0);
  // Header plus one row per operator per profile (13 operators in the zoo's KWS model).
  CHECK(CountLines(text) == 1 + 2 * 13);
}

TEST_CASE("many profiles do not make lines hundreds of characters long", "[cli][check]") {
  const std::string model = ZooModel();
  std::vector<std::string> args = {"check", model, "--compatibility", "--performance"};
  for (const char* p : {"ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256",
                        "ethos-u65-256", "ethos-u65-512", "ethos-u85-128", "ethos-u85-256",
                        "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048", "cortex-m0",
                        "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55",
                        "cortex-m85"}) {
    args.push_back("-t");
    args.push_back(p);
  }
  const CliResult r = RunMica(args);
  REQUIRE(r.exit_code == 0);
  // Advice lines are prose and may be long; the tables must not be.
  std::string tables = r.out.substr(0, r.out.find("Advice for"));
  CHECK(LongestLine(tables) < 260);
}

}  // namespace
}  // namespace mica

namespace mica {
namespace {

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("check --html writes one self-contained page with the charts", "[cli][check][html]") {
  const std::string dir = fs::absolute(testing::TempDir("flags-html")).string();
  const std::string html = dir + "/report.html";
  const CliResult r = RunMica({"check", ZooModel(), "-t", "ethos-u55-128", "-t", "cortex-m55",
                               "--html", html});
  REQUIRE(r.exit_code == 0);
  const std::string page = Slurp(html);
  REQUIRE(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</html>") != std::string::npos);
  // Self-contained: no script, no stylesheet or image fetched from anywhere.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=") == std::string::npos);
  // Profiles side by side, one bar chart per profile with a value per operator (13 in the
  // zoo's KWS model), the memory timeline with a bar per operator, and the advice.
  CHECK(page.find("id=\"profiles\"") != std::string::npos);
  CHECK(Count(page, "<svg class=\"bars\"") == 2);
  CHECK(Count(page, "class=\"val\"") == 2 * 13);
  CHECK(Count(page, "<svg class=\"timeline\"") == 1);
  CHECK(Count(page, " live</title>") == 13);
  CHECK(page.find("id=\"advice\"") != std::string::npos);

  // Optional: the page renders in headless Chromium with the charts present.
  const char* candidates[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
  std::string chromium;
  for (const char* c : candidates) {
    if (fs::exists(c)) chromium = c;
  }
  if (chromium.empty()) {
    WARN("chromium absent (Debian package 'chromium'): skipped rendering the HTML report");
    return;
  }
  const std::string png = dir + "/report.png";
  const testing::CliResult shot = testing::RunBinary(
      chromium, {"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                 "--window-size=1200,2000", "--screenshot=" + png, "file://" + html});
  CHECK(shot.exit_code == 0);
  REQUIRE(fs::exists(png));
  CHECK(fs::file_size(png) > 20000);  // a blank page is a few KB
  const testing::CliResult dom = testing::RunBinary(
      chromium, {"--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", "file://" + html});
  CHECK(Count(dom.out, "<svg") == 3);
  CHECK(Count(dom.out, "<rect") >= 2 * 13 + 13);
}

}  // namespace
}  // namespace mica

namespace mica {
namespace {

// Model list of `n` lines cycling through the corpus models (the same file may repeat).
std::string CorpusList(const std::string& dir, int n) {
  const std::string corpus = std::string(MICA_SOURCE_DIR_FOR_TESTS) + "/test/corpus/models";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(corpus)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  const std::string list = dir + "/models.txt";
  std::ofstream out(list);
  out << "# a sweep\n\n";
  for (int i = 0; i < n; ++i) out << files[static_cast<size_t>(i) % files.size()] << "\n";
  return list;
}

TEST_CASE("check sweeps many models: --models-from, --jobs, --shard, JSON Lines and CSV",
          "[cli][check][sweep]") {
  const std::string dir = testing::TempDir("flags-sweep");
  const std::string list = CorpusList(dir, 100);
  const std::vector<std::string> profiles = {"-t", "ethos-u55-128", "-t", "ethos-u65-512", "-t",
                                             "ethos-u85-256", "-t", "cortex-m55", "-t",
                                             "cortex-m4"};
  std::vector<std::string> args = {"check", "--models-from", list, "--jobs", "2", "--jsonl",
                                   dir + "/rows.jsonl", "--summary-csv", dir + "/rows.csv"};
  args.insert(args.end(), profiles.begin(), profiles.end());
  const CliResult r = RunMica(args);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("500 rows") != std::string::npos);
  const std::string jsonl = Slurp(dir + "/rows.jsonl");
  CHECK(CountLines(jsonl) == 500);
  CHECK(Count(jsonl, "\"schema\":\"mica.check.row/1\"") == 500);
  CHECK(Count(jsonl, "\"ok\":true") == 500);
  CHECK(CountLines(Slurp(dir + "/rows.csv")) == 501);

  // Shards partition the list: 3 shards together give every row exactly once.
  size_t rows = 0;
  for (const char* shard : {"1/3", "2/3", "3/3"}) {
    std::vector<std::string> a = {"check", "--models-from", list, "--shard", shard, "--json",
                                  "-t", "cortex-m4"};
    const CliResult s = RunMica(a);
    REQUIRE(s.exit_code == 0);
    rows += static_cast<size_t>(CountLines(s.out));
  }
  CHECK(rows == 100);
  CHECK(RunMica({"check", "--models-from", list, "--shard", "4/3", "-t", "cortex-m4"}).exit_code ==
        2);

  // A missing model gives error rows and exit code 1, after the others are checked.
  const CliResult bad = RunMica({"check", dir + "/missing.tflite",
                                 std::string(MICA_SOURCE_DIR_FOR_TESTS) +
                                     "/test/corpus/models/mlp_784_256_128_10.tflite",
                                 "-t", "cortex-m4", "--json"});
  CHECK(bad.exit_code == 1);
  CHECK(Count(bad.out, "\"ok\":false") == 1);
  CHECK(CountLines(bad.err) == 1);
}

}  // namespace
}  // namespace mica
