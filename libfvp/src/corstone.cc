#include "mica/fvp/corstone.h"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mica/fvp/subprocess.h"

namespace mica {
namespace fvp {
namespace {

namespace fs = std::filesystem;

// Strips `\r`, MLEK's "INFO - " style prefixes and ExecuTorch's "I [executorch:...] ".
std::string Payload(absl::string_view line) {
  line = absl::StripTrailingAsciiWhitespace(line);
  for (const char* p : {"INFO - ", "WARN - ", "ERROR - ", "DEBUG - "}) {
    if (absl::ConsumePrefix(&line, p)) return std::string(line);
  }
  if (line.size() > 3 && line[1] == ' ' && line[2] == '[') {
    const size_t close = line.find("] ");
    if (close != absl::string_view::npos && line.substr(3, 10) == "executorch") {
      return std::string(line.substr(close + 2));
    }
  }
  return std::string(line);
}

std::string Canonical(std::string name) {
  name = std::string(absl::StripAsciiWhitespace(name));
  absl::AsciiStrToUpper(&name);
  return name;
}

absl::Status AddCounter(FvpTranscript* t, const std::string& name, uint64_t v) {
  auto [it, inserted] = t->npu_counters.emplace(name, v);
  if (!inserted && it->second != v) {
    return absl::InvalidArgumentError(absl::StrCat("FVP output: counter '", name,
                                                   "' reported twice (", it->second, ", ", v, ")"));
  }
  return absl::OkStatus();
}

// MLIA's <metrics>BASE64</metrics>: a JSON list of profiling groups with samples
// {"name": ..., "value": [N]}; read without a JSON library (names and first values only).
absl::Status ParseMetrics(const std::string& b64, FvpTranscript* t) {
  std::string json;
  if (!absl::Base64Unescape(b64, &json) || json.empty() || json.front() != '[') {
    return absl::InvalidArgumentError("FVP output: <metrics> block is not base64 JSON");
  }
  static const std::regex kSample(
      R"re(\{\s*"name"\s*:\s*"([^"]*)"\s*,\s*"value"\s*:\s*\[\s*(\d+))re");
  std::map<std::string, uint64_t> seen;
  for (auto it = std::sregex_iterator(json.begin(), json.end(), kSample);
       it != std::sregex_iterator(); ++it) {
    uint64_t v = 0;
    if (!absl::SimpleAtoi((*it)[2].str(), &v)) {
      return absl::InvalidArgumentError("FVP output: <metrics> value out of range");
    }
    const std::string name = Canonical((*it)[1].str());
    if (!seen.emplace(name, v).second) {
      return absl::InvalidArgumentError(absl::StrCat("FVP output: <metrics> names '", name,
                                                     "' twice"));
    }
  }
  if (seen.empty()) return absl::InvalidArgumentError("FVP output: <metrics> block has no samples");
  for (const auto& [name, v] : seen) {
    absl::Status s = AddCounter(t, name, v);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FvpTranscript> ParseFvpTranscript(const std::string& text) {
  FvpTranscript t;
  static const std::regex kExit(R"(^Application exit code: (-?\d+)\.?$)");
  static const std::regex kStop(R"(^Info: Simulation is stopping\. Reason: (.*?)\.?$)");
  static const std::regex kCpu(R"(^(\S+)\s+:\s+[\d.]+ MIPS \(\s*(\d+) Inst\)$)");
  static const std::regex kSimTime(R"(^Simulated time\s+:\s+([\d.]+)s$)");
  // MLEK: "NPU ACTIVE cycles: N" (legacy), "NPU ACTIVE: N cycles" (current), "... beats".
  static const std::regex kNpuLegacy(R"(^(NPU [A-Za-z0-9_ ]+?) (cycles|beats): (\d+)$)",
                                     std::regex::icase);
  static const std::regex kNpuCurrent(R"(^(NPU [A-Za-z0-9_ ]+?): (\d+) (cycles|beats)$)",
                                      std::regex::icase);
  static const std::regex kEtCycle(R"(^ethosu_pmu_cycle_cntr :\s*(\d+))");
  static const std::regex kEtCntr(R"(^ethosu_pmu_cntr(\d+) : (\d+))");
  static const std::regex kEtEvents(R"(^Ethos-U PMU Events:\[(.*)\]$)");
  static const std::regex kEtRuntime(R"(^Inference runtime: (\d+) CPU cycles total)");
  static const std::regex kTflmOp(R"(^(\w+) took (\d+) ticks \((\d+) ms\)\.$)");
  static const std::regex kMetrics(R"(<metrics>(.*)</metrics>)");
  std::vector<std::string> events;
  std::map<int, uint64_t> et_counters;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    const std::string line = Payload(raw);
    std::smatch m;
    // libstdc++'s regex recurses per character: long lines (only a metrics block is
    // legitimately long) are searched without it.
    if (line.size() > 2048) {
      const size_t open = line.find("<metrics>");
      const size_t close = line.rfind("</metrics>");
      if (open != std::string::npos && close != std::string::npos && close > open) {
        absl::Status s = ParseMetrics(line.substr(open + 9, close - open - 9), &t);
        if (!s.ok()) return s;
      }
      continue;
    }
    if (line.find("Test_result: PASS") != std::string::npos ||
        line.find("~~~ALL TESTS PASSED~~~") != std::string::npos) {
      if (!t.passed.has_value()) t.passed = true;
    } else if (line.find("Test_result: FAIL") != std::string::npos ||
               line.find("~~~SOME TESTS FAILED~~~") != std::string::npos) {
      t.passed = false;
    } else if (std::regex_match(line, m, kExit)) {
      int code = 0;
      if (absl::SimpleAtoi(m[1].str(), &code)) t.exit_code = code;
    } else if (std::regex_match(line, m, kStop)) {
      t.stop_reason = m[1].str();
    } else if (std::regex_match(line, m, kCpu)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[2].str(), &v)) t.cpu_instructions[m[1].str()] = v;
    } else if (std::regex_match(line, m, kSimTime)) {
      double s = 0;
      if (absl::SimpleAtod(m[1].str(), &s)) t.simulated_seconds = s;
    } else if (std::regex_match(line, m, kNpuLegacy)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[3].str(), &v)) {
        absl::Status s = AddCounter(&t, Canonical(m[1].str()), v);
        if (!s.ok()) return s;
      }
    } else if (std::regex_match(line, m, kNpuCurrent)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[2].str(), &v)) {
        absl::Status s = AddCounter(&t, Canonical(m[1].str()), v);
        if (!s.ok()) return s;
      }
    } else if (std::regex_search(line, m, kEtCycle)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[1].str(), &v)) t.npu_counters["ETHOSU_PMU_CYCLE_CNTR"] = v;
    } else if (std::regex_search(line, m, kEtCntr)) {
      uint64_t v = 0;
      int k = 0;
      if (absl::SimpleAtoi(m[2].str(), &v) && absl::SimpleAtoi(m[1].str(), &k) && k < 64) {
        et_counters[k] = v;
      }
    } else if (std::regex_match(line, m, kEtEvents)) {
      events.clear();
      for (absl::string_view e : absl::StrSplit(m[1].str(), ',', absl::SkipWhitespace())) {
        events.push_back(std::string(absl::StripAsciiWhitespace(e)));
      }
    } else if (std::regex_search(line, m, kEtRuntime)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[1].str(), &v)) t.cpu_cycles = v;
    } else if (std::regex_match(line, m, kTflmOp)) {
      uint64_t v = 0;
      if (absl::SimpleAtoi(m[2].str(), &v)) t.op_ticks.emplace_back(m[1].str(), v);
    } else if (std::regex_search(line, m, kMetrics)) {
      absl::Status s = ParseMetrics(m[1].str(), &t);
      if (!s.ok()) return s;
    }
  }
  for (const auto& [k, v] : et_counters) {
    const std::string name = k >= 0 && k < static_cast<int>(events.size())
                                 ? Canonical(events[k])
                                 : absl::StrCat("ETHOSU_PMU_CNTR", k);
    absl::Status s = AddCounter(&t, name, v);
    if (!s.ok()) return s;
  }
  return t;
}

absl::StatusOr<std::string> FvpProgramFor(const std::string& platform) {
  if (platform == "corstone-300") return std::string("FVP_Corstone_SSE-300_Ethos-U55");
  if (platform == "corstone-310") return std::string("FVP_Corstone_SSE-310");
  if (platform == "corstone-320") return std::string("FVP_Corstone_SSE-320");
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown FVP platform '", platform, "' (expected corstone-300, corstone-310 or corstone-320)"));
}

std::string FvpInstallHint(const std::string& platform) {
  auto program = FvpProgramFor(platform);
  return absl::StrCat(program.ok() ? *program : platform,
                      " not found: Arm's Corstone FVPs are a free but licensed download "
                      "(developer.arm.com, Arm Ecosystem FVPs); install it and put its folder "
                      "on PATH, or use --backend qemu");
}

absl::StatusOr<std::vector<std::string>> CorstoneCommand(const CorstoneOptions& o,
                                                         const std::string& bundle_path) {
  auto program = FvpProgramFor(o.platform);
  if (!program.ok()) return program.status();
  const std::string board = o.platform == "corstone-320" ? "mps4_board" : "mps3_board";
  const std::string npu = o.platform == "corstone-320" ? "mps4_board.subsystem.ethosu" : "ethosu";
  const std::string cpu = o.platform == "corstone-320" ? "mps4_board.subsystem.cpu0" : "cpu0";
  const int64_t limit = std::max<int64_t>(1, absl::ToInt64Seconds(o.timeout));
  return std::vector<std::string>{
      o.program.empty() ? *program : o.program,
      "-a", o.firmware,
      "--data", absl::StrCat(bundle_path, "@0x", absl::Hex(o.bundle_address)),
      "-C", board + ".visualisation.disable-visualisation=1",
      "-C", board + ".telnetterminal0.start_telnet=0",
      "-C", board + ".uart0.out_file=-",
      "-C", board + ".uart0.unbuffered_output=1",
      "-C", cpu + ".semihosting-enable=1",
      "-C", absl::StrCat(npu, ".num_macs=", o.npu_macs),
      "--stat",
      "--timelimit", absl::StrCat(limit)};
}

absl::StatusOr<SimulationResult> CorstoneFvpSimulator::Run(const SimulationRequest& request) {
  transcript_ = FvpTranscript{};
  auto default_program = FvpProgramFor(options_.platform);
  if (!default_program.ok()) return default_program.status();
  const std::string wanted = options_.program.empty() ? *default_program : options_.program;
  const std::string program = wanted.find('/') == std::string::npos
                                  ? FindProgram(wanted)
                                  : (access(wanted.c_str(), X_OK) == 0 ? wanted : "");
  if (program.empty()) return absl::FailedPreconditionError(FvpInstallHint(options_.platform));
  if (options_.firmware.empty() || !fs::is_regular_file(options_.firmware)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "runner firmware '", options_.firmware, "' not found: build it with `cmake --workflow "
        "--preset qemu-m55-mve` (the SSE-300 memory map QEMU's mps3-an547 shares)"));
  }
  std::string tmpl = (fs::temp_directory_path() / "mica-fvp-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) return absl::InternalError("cannot create a temporary folder");
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{tmpl};
  const std::string bundle = tmpl + "/bundle.bin";
  {
    const std::vector<uint8_t> bytes = MakeBundle(request);
    std::ofstream f(bundle, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) return absl::InternalError(absl::StrCat("cannot write ", bundle));
  }
  CorstoneOptions o = options_;
  o.program = program;
  auto argv = CorstoneCommand(o, bundle);
  if (!argv.ok()) return argv.status();
  const std::string origin = name();
  // The FVP's own --timelimit stops it first; the process limit is the backstop.
  auto run = RunProcess(*argv, options_.timeout + absl::Seconds(30));
  if (!run.ok()) {
    return absl::InternalError(absl::StrCat(origin, ": cannot start ", program, ": ",
                                            run.status().message()));
  }
  if (run->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(origin, ": timed out after ",
                                                    absl::FormatDuration(options_.timeout),
                                                    " (killed)"));
  }
  std::string text = run->stdout_text;
  text.erase(std::remove(text.begin(), text.end(), '\r'), text.end());
  auto transcript = ParseFvpTranscript(text);
  if (!transcript.ok()) return absl::InvalidArgumentError(absl::StrCat(origin, ": ", transcript.status().message()));
  transcript_ = *transcript;
  if (!transcript_.stop_reason.empty() &&
      transcript_.stop_reason.find("exceeded") != std::string::npos) {
    return absl::DeadlineExceededError(absl::StrCat(origin, ": the FVP stopped the run: ",
                                                    transcript_.stop_reason));
  }
  if (run->exit_code >= 128) {
    std::string why(absl::StripAsciiWhitespace(run->stderr_text));
    if (const size_t nl = why.rfind('\n'); nl != std::string::npos) why = why.substr(nl + 1);
    return absl::InternalError(absl::StrCat(origin, ": crashed (exit ", run->exit_code, ")",
                                            why.empty() ? "" : ": ", why));
  }
  auto result = ParseRunnerOutput(text, origin);
  if (!result.ok()) return result.status();
  // No verdict where one was expected is a failure, never a pass.
  if (!request.expected.empty() && !result->passed.has_value()) {
    return absl::InternalError(absl::StrCat(origin, ": no Test_result line in the FVP's output"));
  }
  return result;
}

}  // namespace fvp
}  // namespace mica
