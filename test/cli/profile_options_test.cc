// `mica check` profile configuration on the command line: MLIA's configurations under MLIA's
// profile names, per-profile options (`--target-profile NAME:system-config=...`), the global
// --system-config/--memory-mode refused unless they fit every profile, and advice whose
// suggested command lines all run.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::CountLines;
using testing::RunMica;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string Model(const std::string& name) {
  std::string shared = testing::SharedDir();
  return shared.empty() ? std::string() : shared + "/models/mlperf-tiny/" + name + ".tflite";
}

// The number after `"key": ` at the first occurrence of `key` from `from`.
std::string JsonValue(const std::string& json, const std::string& key, size_t from = 0) {
  size_t k = json.find("\"" + key + "\": ", from);
  if (k == std::string::npos) return "";
  size_t v = k + key.size() + 4;
  size_t end = json.find_first_of(",\n}", v);
  return json.substr(v, end - v);
}

TEST_CASE("mica check: a profile carries its own system config and memory mode", "[check]") {
  const std::string model = Model("kws_ds_cnn_int8");
  if (model.empty()) {
    WARN("shared models absent: skipped per-profile options");
    return;
  }
  // MLIA's ethos-u65-512 and Vela's command-line defaults, side by side.
  const std::string vela_defaults =
      "ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode=Dedicated_Sram_384KB";
  CliResult r = RunMica({"check", model, "--target-profile", "ethos-u65-512", "--target-profile",
                         vela_defaults, "--performance", "--json"});
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t first = r.out.find("\"name\": \"ethos-u65-512\"");
  const size_t second = r.out.find("\"name\": \"" + vela_defaults + "\"");
  REQUIRE(first != std::string::npos);
  REQUIRE(second != std::string::npos);
  CHECK(Has(r.out.substr(first, second - first), "\"name\": \"Ethos_U65_High_End\""));
  CHECK(Has(r.out.substr(first, second - first), "\"name\": \"Dedicated_Sram\""));
  CHECK(JsonValue(r.out, "arena_cache_bytes", first) == "393216");
  CHECK(Has(r.out.substr(second), "\"name\": \"Ethos_U65_Client_Server\""));
  CHECK(Has(r.out.substr(second), "\"name\": \"Dedicated_Sram_384KB\""));
  // Different DRAM: different cycles.
  CHECK(JsonValue(r.out, "total_cycles", first) != JsonValue(r.out, "total_cycles", second));

  // MLIA's Dedicated_Sram is Vela's Dedicated_Sram_384KB: the same figures.
  CliResult same = RunMica({"check", model, "--target-profile",
                            "ethos-u65-512:memory-mode=Dedicated_Sram_384KB", "--performance",
                            "--json"});
  REQUIRE(same.exit_code == 0);
  CHECK(JsonValue(same.out, "total_cycles") == JsonValue(r.out, "total_cycles", first));

  // A profile file takes the same options.
  std::string dir = testing::TempDir("profile_options");
  std::string cfg = dir + "/board.textproto";
  std::ofstream(cfg) << "base: \"ethos-u85-256\"\nname: \"board\"\n";
  CliResult f = RunMica({"check", model, "--target-config", cfg + ":memory-mode=Sram_Only",
                         "--performance"});
  CAPTURE(f.err);
  REQUIRE(f.exit_code == 0);
  CHECK(Has(f.out, "board:memory-mode=Sram_Only"));
  CHECK(Has(f.out, "Sram_Only"));
}

TEST_CASE("mica check: global --system-config/--memory-mode must fit every profile", "[check]") {
  const std::string model = Model("kws_ds_cnn_int8");
  if (model.empty()) {
    WARN("shared models absent: skipped global --system-config");
    return;
  }
  // Fits both U65 profiles: applied to both.
  CliResult ok = RunMica({"check", model, "--target-profile", "ethos-u65-256", "--target-profile",
                          "ethos-u65-512", "--system-config", "Ethos_U65_Client_Server",
                          "--performance", "--json"});
  CAPTURE(ok.err);
  REQUIRE(ok.exit_code == 0);
  size_t n = 0;
  for (size_t at = ok.out.find("\"Ethos_U65_Client_Server\""); at != std::string::npos;
       at = ok.out.find("\"Ethos_U65_Client_Server\"", at + 1)) {
    ++n;
  }
  CHECK(n == 2);

  // A profile's own option overrides the global one.
  CliResult over = RunMica({"check", model, "--target-profile", "ethos-u65-512:memory-mode=Sram_Only",
                            "--target-profile", "ethos-u65-256", "--memory-mode", "Shared_Sram",
                            "--json"});
  REQUIRE(over.exit_code == 0);
  const size_t second = over.out.find("\"name\": \"ethos-u65-256\"");
  REQUIRE(second != std::string::npos);
  CHECK(Has(over.out.substr(0, second), "\"name\": \"Sram_Only\""));
  CHECK(Has(over.out.substr(second), "\"name\": \"Shared_Sram\""));

  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  const std::vector<Case> cases = {
      // The case: a U65 DRAM system given to a U55 on the same line.
      {{"--target-profile", "ethos-u55-256", "--target-profile", "ethos-u65-512",
        "--system-config", "Ethos_U65_High_End"},
       "does not fit ethos-u55-256"},
      {{"--target-profile", "ethos-u55-256", "--target-profile", "ethos-u65-512",
        "--memory-mode", "Dedicated_Sram"},
       "--target-profile NAME:memory-mode=Dedicated_Sram"},
      {{"--target-profile", "ethos-u65-512", "--target-profile", "cortex-m55", "--memory-mode",
        "Sram_Only"},
       "does not fit cortex-m55"},
      {{"--target-profile", "cortex-m4", "--system-config", "Ethos_U55_Deep_Embedded"},
       "Cortex-M profile"},
      {{"--target-profile", "ethos-u55-256:system-config=Ethos_U65_High_End"}, "not for"},
      {{"--target-profile", "ethos-u55-256:memory-mode=Dedicated_Sram"}, "flash"},
      {{"--target-profile", "ethos-u65-512:memory=Sram_Only"}, "unknown option 'memory'"},
      {{"--target-profile", "ethos-u65-512:arena-cache-size=-1"}, "byte count"},
      {{"--target-profile", "cortex-m4:memory-mode=Sram_Only"}, "Cortex-M profile"},
      {{"--target-profile", "ethos-u65-512:system-config=Nope"}, "unknown Vela system config"},
      {{"--target-profile", "ethos-u65-512:memory-mode=Sram_Only", "--target-profile",
        "ethos-u65-512:memory-mode=Sram_Only"},
       "given twice"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"check", model};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CAPTURE(args, c.expect);
    CliResult r = RunMica(args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(CountLines(r.err) == 1);
    CHECK(Has(r.err, c.expect));
    CHECK(r.out.empty());
  }

  // --help documents both.
  CliResult h = RunMica({"check", model, "--help"});
  CHECK(h.exit_code == 0);
  CHECK(Has(h.out + h.err, "NAME:system-config="));
  CHECK(Has(h.out + h.err, "unless it fits each of them"));
}

// The `mica ...` command lines quoted between backquotes in a report.
std::vector<std::vector<std::string>> QuotedCommands(const std::string& report) {
  std::vector<std::vector<std::string>> out;
  size_t at = 0;
  while ((at = report.find("`mica ", at)) != std::string::npos) {
    size_t end = report.find('`', at + 1);
    if (end == std::string::npos) break;
    std::vector<std::string> words =
        absl::StrSplit(report.substr(at + 6, end - at - 6), ' ', absl::SkipEmpty());
    out.push_back(words);
    at = end + 1;
  }
  return out;
}

TEST_CASE("mica check: every command line the advice suggests runs", "[check][advice]") {
  if (Model("kws_ds_cnn_int8").empty()) {
    WARN("shared models absent: skipped the advice commands");
    return;
  }
  std::string dir = testing::TempDir("advice_commands");
  // A profile file whose staging area is tiny in a shared (not dedicated) mode.
  std::string cfg = dir + "/small-cache.textproto";
  std::ofstream(cfg) << "base: \"ethos-u65-256\"\nname: \"small-cache\"\n"
                        "ethos_u { memory_mode { name: \"Shared_Sram\" arena_cache_bytes: 4096 } }\n";
  // Cases chosen to make mica emit each kind of suggestion it has (every Advice with a command
  // in libestimate/src/report.cc): a larger named Dedicated_Sram size, an explicit
  // arena-cache-size, Shared_Sram for DRAM-bound feature maps, Sram_Only for flash-bound
  // weights, a smaller NPU beside an under-used one, `mica targets` for a Cortex-M that is too
  // small; plus float models.
  const std::vector<std::vector<std::string>> checks = {
      {Model("ad_autoencoder_int8"), "--target-profile", "ethos-u55-256"},
      {Model("vww_mobilenet_v1_025_int8"), "--target-profile",
       "ethos-u65-512:arena-cache-size=16384"},
      {Model("ic_resnet8_int8"), "--target-config", cfg},
      {Model("kws_ds_cnn_int8"), "--target-profile", "ethos-u85-2048"},
      {Model("kws_ds_cnn_int8"), "--target-profile", "ethos-u65-512"},
      {Model("kws_ds_cnn_float"), "--target-profile", "ethos-u55-128", "--target-profile",
       "cortex-m4"},
      {Model("vww_mobilenet_v1_025_int8"), "--target-profile", "cortex-m0"},
  };
  std::vector<std::vector<std::string>> commands;
  std::string all_reports;
  for (const std::vector<std::string>& c : checks) {
    std::vector<std::string> args = {"check"};
    args.insert(args.end(), c.begin(), c.end());
    args.push_back("--performance");
    CAPTURE(args);
    CliResult r = RunMica(args);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    all_reports += r.out;
    for (auto& cmd : QuotedCommands(r.out)) commands.push_back(std::move(cmd));
  }
  // Each kind of suggestion appeared.
  std::set<std::string> kinds;
  for (const auto& cmd : commands) {
    std::string line;
    for (const std::string& w : cmd) line += w + " ";
    if (Has(line, "memory-mode=Dedicated_Sram_")) kinds.insert("larger dedicated");
    if (Has(line, "arena-cache-size=")) kinds.insert("arena cache size");
    if (Has(line, "memory-mode=Shared_Sram ") || Has(line, "memory-mode=Shared_Sram,")) {
      kinds.insert("shared sram");
    }
    if (Has(line, "memory-mode=Sram_Only")) kinds.insert("sram only");
    if (Has(line, "--target-profile ethos-u85-1024")) kinds.insert("smaller npu");
    if (line == "targets ") kinds.insert("list targets");
    if (cmd[0] == "quantize") kinds.insert("quantize");
  }
  CAPTURE(all_reports);
  CHECK(kinds == std::set<std::string>{"larger dedicated", "arena cache size", "shared sram",
                                       "sram only", "smaller npu", "list targets", "quantize"});
  // Float models are told to quantize: with mica (run below) or TensorFlow's converter.
  CHECK(Has(all_reports, "TFLITE_BUILTINS_INT8"));
  CHECK(Has(all_reports, "`mica quantize "));
  CHECK(Has(all_reports, "[error, compatibility]"));
  // And each suggested command is accepted by mica.
  REQUIRE_FALSE(commands.empty());
  for (auto cmd : commands) {
    CAPTURE(cmd);
    REQUIRE_FALSE(cmd.empty());
    // The quantize suggestion writes <stem>_int8.tflite in the current folder: here, a
    // scratch folder (the words are otherwise run as suggested).
    std::string written;
    if (cmd[0] == "quantize") {
      REQUIRE(cmd.size() == 6);
      CHECK(cmd[4] == "-o");
      written = dir + "/" + cmd[5];
      cmd[5] = written;
    }
    CliResult r = RunMica(cmd);
    CAPTURE(r.err);
    CHECK(r.exit_code == 0);
    CHECK(Has(r.out, cmd[0] == "check"      ? "Advice for"
                     : cmd[0] == "quantize" ? "SQNR dB"
                                            : "cortex-m85"));
    if (!written.empty()) {
      CHECK(std::filesystem::exists(written));
      // The quantized model places on the NPU: no floating-point advice any more.
      CliResult c = RunMica({"check", written, "--target-profile", "ethos-u55-128"});
      CHECK(c.exit_code == 0);
      CHECK_FALSE(Has(c.out, "computes in floating point"));
    }
  }
}

}  // namespace
}  // namespace mica
