#include "mica/fvp/simulator.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mica/device/bundle.h"
#include "mica/fvp/subprocess.h"

namespace mica {
namespace fvp {
namespace {

namespace fs = std::filesystem;

size_t Align16(size_t n) { return (n + 15) / 16 * 16; }

template <typename T>
void Put(std::vector<uint8_t>* b, size_t at, const T& v) {
  std::memcpy(b->data() + at, &v, sizeof(T));
}

// The last non-empty line of `text` (for one-line errors), shortened.
std::string LastLine(const std::string& text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    // QEMU's harmless board warning is not the reason for anything.
    if (it->find("has no peer") != std::string::npos) continue;
    std::string s(absl::StripAsciiWhitespace(*it));
    if (s.size() > 160) s = s.substr(0, 160) + "...";
    return s;
  }
  return "";
}

bool ParseHex(absl::string_view hex, std::vector<uint8_t>* out) {
  if (hex.size() % 2 != 0) return false;
  out->resize(hex.size() / 2);
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < out->size(); ++i) {
    const int h = nib(hex[2 * i]), l = nib(hex[2 * i + 1]);
    if (h < 0 || l < 0) return false;
    (*out)[i] = static_cast<uint8_t>(h * 16 + l);
  }
  return true;
}

// "key=value" with an integer value.
bool KeyValue(absl::string_view field, absl::string_view key, int64_t* v) {
  if (!absl::ConsumePrefix(&field, key) || !absl::ConsumePrefix(&field, "=")) return false;
  return absl::SimpleAtoi(field, v);
}

// A fresh private folder for the bundle, removed when this goes out of scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "mica-sim-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::vector<uint8_t> MakeBundle(const SimulationRequest& r) {
  const size_t n = r.inputs.size() + r.expected.size();
  size_t at = Align16(sizeof(device::BundleHeader) + n * sizeof(device::BundleEntry));
  const size_t plan_offset = at;
  at = Align16(at + r.plan.size());
  std::vector<std::pair<size_t, const std::vector<uint8_t>*>> blobs;
  for (const auto* list : {&r.inputs, &r.expected}) {
    for (const auto& b : *list) {
      blobs.emplace_back(at, &b);
      at = Align16(at + b.size());
    }
  }
  std::vector<uint8_t> out(at, 0);
  device::BundleHeader h{};
  h.magic = device::kBundleMagic;
  h.version = device::kBundleVersion;
  h.total_bytes = static_cast<uint32_t>(at);
  h.flags = (r.print_outputs ? device::kBundlePrintOutputs : 0u) |
            (r.per_op_counts ? device::kBundlePerOpCounts : 0u);
  h.plan_offset = static_cast<uint32_t>(plan_offset);
  h.plan_bytes = static_cast<uint32_t>(r.plan.size());
  h.num_inputs = static_cast<uint32_t>(r.inputs.size());
  h.num_expected = static_cast<uint32_t>(r.expected.size());
  Put(&out, 0, h);
  if (!r.plan.empty()) std::memcpy(out.data() + plan_offset, r.plan.data(), r.plan.size());
  for (size_t i = 0; i < blobs.size(); ++i) {
    device::BundleEntry e{static_cast<uint32_t>(blobs[i].first),
                          static_cast<uint32_t>(blobs[i].second->size())};
    Put(&out, sizeof(h) + i * sizeof(e), e);
    if (!blobs[i].second->empty()) {
      std::memcpy(out.data() + blobs[i].first, blobs[i].second->data(), blobs[i].second->size());
    }
  }
  return out;
}

absl::StatusOr<SimulationResult> ParseRunnerOutput(const std::string& text,
                                                   const std::string& origin) {
  SimulationResult r;
  bool begun = false, ended = false, have_total = false;
  int64_t end_status = -1;
  std::string last;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view line = absl::StripTrailingAsciiWhitespace(raw);
    auto bad = [&](const char* why) {
      std::string shown(line.substr(0, 120));
      for (char& c : shown) {
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
      }
      return absl::InvalidArgumentError(absl::StrCat(origin, ": garbage in the runner's output (line ",
                                                     line_no, ", ", why, "): '", shown, "'"));
    };
    if (absl::ConsumePrefix(&line, "Test_result: ")) {
      if (!begun || ended) return bad("result outside a run");
      if (line == "PASS") r.passed = true;
      else if (line == "FAIL") r.passed = false;
      else return bad("unknown test result");
      continue;
    }
    if (!absl::ConsumePrefix(&line, "MICA ")) continue;  // the simulator's own lines
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.empty()) return bad("empty record");
    if (f[0] == "begin") {
      if (begun) return bad("second begin");
      begun = true;
      for (size_t i = 1; i < f.size(); ++i) {
        absl::string_view v = f[i];
        if (absl::ConsumePrefix(&v, "board=")) r.board = std::string(v);
        if (absl::ConsumePrefix(&v, "isa=")) r.isa = std::string(v);
      }
      continue;
    }
    if (!begun) return bad("record before the runner's begin line");
    if (ended) return bad("record after the end line");
    if (f[0] == "error") {
      return absl::InternalError(absl::StrCat(origin, ": the runner failed: ",
                                              line.substr(std::min<size_t>(6, line.size()))));
    } else if (f[0] == "plan") {
      int64_t ops = 0, arena = 0, plan = 0;
      if (f.size() != 4 || !KeyValue(f[1], "ops", &ops) || !KeyValue(f[2], "arena", &arena) ||
          !KeyValue(f[3], "plan", &plan) || ops < 0 || arena < 0 || plan < 0) {
        return bad("plan record");
      }
      r.ops = ops;
      r.arena_bytes = arena;
      r.plan_bytes = plan;
    } else if (f[0] == "op") {
      OpCount c;
      uint64_t insn = 0;
      if (f.size() != 4 || !absl::SimpleAtoi(f[1], &c.index) || !absl::SimpleAtoi(f[3], &insn) ||
          c.index != static_cast<int32_t>(r.op_counts.size())) {
        return bad("op record");
      }
      c.name = std::string(f[2]);
      c.instructions = insn;
      r.op_counts.push_back(std::move(c));
    } else if (f[0] == "total") {
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &r.total_instructions)) return bad("total");
      have_total = true;
    } else if (f[0] == "output") {
      int32_t index = 0;
      size_t bytes = 0;
      std::vector<uint8_t> data;
      if (f.size() < 3 || f.size() > 4 || !absl::SimpleAtoi(f[1], &index) ||
          !absl::SimpleAtoi(f[2], &bytes) || index != static_cast<int32_t>(r.outputs.size()) ||
          !ParseHex(f.size() == 4 ? f[3] : absl::string_view(), &data) || data.size() != bytes) {
        return bad("output record");
      }
      r.outputs.push_back(std::move(data));
    } else if (f[0] == "check") {
      OutputCheck c;
      int64_t diffs = 0;
      if (f.size() == 5 && absl::SimpleAtoi(f[1], &c.index) &&
          KeyValue(f[2], "first", &c.first_difference) && KeyValue(f[3], "diffs", &diffs) &&
          KeyValue(f[4], "maxdiff", &c.max_difference) && diffs >= 0) {
        c.differences = static_cast<uint64_t>(diffs);
      } else if (f.size() >= 3 && absl::SimpleAtoi(f[1], &c.index) && f[2] == "size") {
        c.size_mismatch = true;
      } else {
        return bad("check record");
      }
      r.checks.push_back(c);
    } else if (f[0] == "end") {
      if (f.size() != 2 || !absl::SimpleAtoi(f[1], &end_status)) return bad("end record");
      ended = true;
    } else {
      return bad("unknown record");
    }
    last = std::string(absl::StripTrailingAsciiWhitespace(raw));
  }
  if (!begun) {
    return absl::InternalError(absl::StrCat(
        origin, ": the runner never started (no output from the firmware; wrong firmware for "
                "the machine, or semihosting disabled)"));
  }
  if (!ended) {
    return absl::InternalError(absl::StrCat(origin, ": truncated runner output (the run stopped after '",
                                            last.empty() ? "MICA begin" : last, "')"));
  }
  if (end_status == 3) return absl::InternalError(absl::StrCat(origin, ": the firmware faulted"));
  if (!have_total) return absl::InvalidArgumentError(absl::StrCat(origin, ": no instruction total in the runner's output"));
  if (!r.checks.empty() && !r.passed.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": output checks without a Test_result"));
  }
  return r;
}

absl::StatusOr<QemuOptions> QemuOptionsFor(const std::string& build) {
  QemuOptions o;
  if (build == "m55-mve" || build == "m55-scalar") {
    o.machine = "mps3-an547";
    o.bundle_address = 0x60000000;
  } else if (build == "m4-dsp") {
    o.machine = "mps2-an386";
    o.bundle_address = 0x21000000;
  } else if (build == "m7-dsp") {
    o.machine = "mps2-an500";
    o.bundle_address = 0x60000000;
  } else if (build == "m33-dsp") {
    o.machine = "mps2-an505";
    o.bundle_address = 0x80000000;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "no QEMU build '", build, "' (expected m55-mve, m55-scalar, m4-dsp, m7-dsp or m33-dsp)"));
  }
  o.build = build;
  return o;
}

absl::StatusOr<SimulationResult> QemuSimulator::Run(const SimulationRequest& request) {
  const std::string program = options_.program.find('/') == std::string::npos
                                  ? FindProgram(options_.program)
                                  : (access(options_.program.c_str(), X_OK) == 0 ? options_.program : "");
  if (program.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        options_.program, " not found: install QEMU (Debian: apt-get install qemu-system-arm)"));
  }
  struct stat st;
  if (options_.firmware.empty() || stat(options_.firmware.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "runner firmware '", options_.firmware, "' not found: build it with `cmake --workflow "
        "--preset qemu-", options_.build.empty() ? "m55-mve" : options_.build, "`"));
  }
  TempDir dir;
  if (dir.path().empty()) return absl::InternalError("cannot create a temporary folder for the bundle");
  const std::string bundle = dir.path() + "/bundle.bin";
  {
    const std::vector<uint8_t> bytes = MakeBundle(request);
    std::ofstream f(bundle, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) return absl::InternalError(absl::StrCat("cannot write ", bundle));
  }
  const std::string origin = name();
  auto run = RunProcess({program, "-M", options_.machine, "-nographic", "-icount",
                         "shift=0,align=off,sleep=off", "-semihosting-config",
                         "enable=on,target=native", "-kernel", options_.firmware, "-device",
                         absl::StrCat("loader,file=", bundle, ",addr=0x",
                                      absl::Hex(options_.bundle_address))},
                        options_.timeout);
  if (!run.ok()) {
    return absl::InternalError(absl::StrCat(origin, ": cannot start ", program, ": ",
                                            run.status().message()));
  }
  if (run->timed_out) {
    return absl::DeadlineExceededError(absl::StrCat(origin, ": timed out after ",
                                                    absl::FormatDuration(options_.timeout),
                                                    " (killed)"));
  }
  const bool runner_ended = run->stdout_text.find("MICA end ") != std::string::npos;
  if (run->exit_code >= 128 || (run->exit_code != 0 && !runner_ended &&
                                run->stdout_text.find("MICA begin") == std::string::npos)) {
    const std::string why = LastLine(run->stderr_text);
    return absl::InternalError(absl::StrCat(origin, ": crashed (exit ", run->exit_code, ")",
                                            why.empty() ? "" : ": ", why));
  }
  auto result = ParseRunnerOutput(run->stdout_text, origin);
  if (!result.ok()) return result.status();
  return result;
}

}  // namespace fvp
}  // namespace mica
