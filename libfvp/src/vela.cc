// Running Arm's Vela and reading its summary CSV.
#include "mica/fvp/vela.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "mica/base/status_macros.h"
#include "mica/fvp/subprocess.h"

namespace mica {
namespace fvp {
namespace {

namespace fs = std::filesystem;
using estimate::Estimate;
using estimate::MemoryArea;

// Splits one CSV line (Vela writes no quoted fields with commas; quotes are stripped).
std::vector<std::string> SplitCsvLine(std::string_view line) {
  std::vector<std::string> out;
  for (absl::string_view f : absl::StrSplit(absl::string_view(line.data(), line.size()), ',')) {
    std::string s(absl::StripAsciiWhitespace(f));
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    out.push_back(s);
  }
  return out;
}

std::string LastLine(const std::string& text) {
  std::string last;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!absl::StripAsciiWhitespace(line).empty()) last = std::string(absl::StripAsciiWhitespace(line));
  }
  return last;
}

}  // namespace

std::string VelaInstallHint() {
  return "Vela is not installed: install it with `pip install ethos-u-vela` (or put `vela` on "
         "PATH)";
}

absl::StatusOr<Estimate> ParseVelaSummaryCsv(const std::string& text, const std::string& origin) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!absl::StripAsciiWhitespace(line).empty()) lines.push_back(line);
  }
  if (lines.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": expected a header and a data row, found ", lines.size(),
                     " line(s)"));
  }
  std::vector<std::string> header = SplitCsvLine(lines[0]);
  std::vector<std::string> row = SplitCsvLine(lines[1]);
  if (row.size() != header.size()) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": data row has ", row.size(),
                                                   " fields, header has ", header.size()));
  }
  std::map<std::string, std::string> field;
  for (size_t i = 0; i < header.size(); ++i) field[header[i]] = row[i];

  auto number = [&](const std::string& name, bool required, double* out) -> absl::Status {
    auto it = field.find(name);
    if (it == field.end() || it->second.empty()) {
      if (required) {
        return absl::InvalidArgumentError(absl::StrCat(origin, ": missing column '", name, "'"));
      }
      return absl::OkStatus();
    }
    double v = 0;
    if (!absl::SimpleAtod(it->second, &v)) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": column '", name, "' is not a number: '", it->second, "'"));
    }
    *out = v;
    return absl::OkStatus();
  };

  Estimate e;
  e.backend = "vela";
  auto at = [](MemoryArea a) { return static_cast<int>(a); };
  MICA_RETURN_IF_ERROR(number("cycles_total", true, &e.total_cycles));
  MICA_RETURN_IF_ERROR(number("cycles_npu", true, &e.npu_cycles));
  MICA_RETURN_IF_ERROR(
      number("cycles_sram_access", false, &e.access_cycles[at(MemoryArea::kSram)]));
  MICA_RETURN_IF_ERROR(
      number("cycles_dram_access", false, &e.access_cycles[at(MemoryArea::kDram)]));
  MICA_RETURN_IF_ERROR(number("cycles_on_chip_flash_access", false,
                              &e.access_cycles[at(MemoryArea::kOnChipFlash)]));
  MICA_RETURN_IF_ERROR(number("cycles_off_chip_flash_access", false,
                              &e.access_cycles[at(MemoryArea::kOffChipFlash)]));
  const char* used[] = {"sram_memory_used", "dram_memory_used", "on_chip_flash_memory_used",
                        "off_chip_flash_memory_used"};
  for (int a = 0; a < estimate::kNumMemoryAreas; ++a) {
    double kib = 0;
    MICA_RETURN_IF_ERROR(number(used[a], false, &kib));
    e.memory_used_bytes[a] = kib * 1024.0;
  }
  double v = 0;
  MICA_RETURN_IF_ERROR(number("core_clock", false, &e.clock_hz));
  v = 0;
  MICA_RETURN_IF_ERROR(number("nn_macs", false, &v));
  e.macs = static_cast<int64_t>(v);
  v = 0;
  MICA_RETURN_IF_ERROR(number("total_original_weights", false, &v));
  e.weights_original_bytes = static_cast<int64_t>(v);
  v = 0;
  MICA_RETURN_IF_ERROR(number("total_npu_encoded_weights", false, &v));
  e.weights_encoded_bytes = static_cast<int64_t>(v);
  if (field.count("accelerator_configuration")) e.target = field["accelerator_configuration"];
  if (field.count("system_config")) {
    e.notes.push_back(absl::StrCat("Vela system config ", field["system_config"],
                                   ", memory mode ", field["memory_mode"]));
  }
  if (!(e.total_cycles >= 0) || !(e.npu_cycles >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": negative cycle counts"));
  }
  return e;
}

absl::StatusOr<Estimate> RunVela(const std::string& model_path,
                                 const estimate::TargetProfile& profile,
                                 const VelaOptions& options) {
  if (profile.kind != estimate::TargetKind::kEthosU) {
    return absl::InvalidArgumentError(
        absl::StrCat("the vela backend needs an Ethos-U profile; '", profile.name,
                     "' is a Cortex-M profile"));
  }
  if (FindProgram(options.program).empty()) {
    return absl::FailedPreconditionError(VelaInstallHint());
  }
  std::string dir = options.work_dir;
  bool own_dir = false;
  if (dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / "mica-vela-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      return absl::InternalError("cannot create a temporary directory for Vela's output");
    }
    dir = tmpl;
    own_dir = true;
  }
  struct Cleanup {
    std::string dir;
    bool active;
    ~Cleanup() {
      if (active) {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    }
  } cleanup{dir, own_dir};

  // Vela knows Vela's names: strip mica's "(customised)" marker (custom fields are not passed).
  auto vela_name = [](std::string s) {
    size_t p = s.find(" (customised)");
    return p == std::string::npos ? s : s.substr(0, p);
  };
  const estimate::EthosUConfig& eu = profile.ethos_u;
  std::string accel = absl::StrCat("ethos-", estimate::EthosUFamilyName(eu.family), "-", eu.macs);
  std::vector<std::string> argv = {options.program,
                                   model_path,
                                   "--accelerator-config",
                                   accel,
                                   "--system-config",
                                   vela_name(eu.system.name),
                                   "--memory-mode",
                                   vela_name(eu.memory_mode.name),
                                   "--output-dir",
                                   dir};
  // The profile's staging size, which may differ from the named mode's in Vela's vela.ini
  // (MLIA's Dedicated_Sram has 384 KiB; Vela's own none).
  if (eu.memory_mode.arena_cache_bytes > 0) {
    argv.push_back("--arena-cache-size");
    argv.push_back(absl::StrCat(eu.memory_mode.arena_cache_bytes));
  }
  MICA_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(argv, options.timeout));
  if (r.timed_out) {
    return absl::DeadlineExceededError(
        absl::StrCat("vela did not finish within ", absl::FormatDuration(options.timeout)));
  }
  if (r.exit_code != 0) {
    std::string last = LastLine(r.stderr_text.empty() ? r.stdout_text : r.stderr_text);
    return absl::InternalError(
        absl::StrCat("vela failed (exit ", r.exit_code, ") on ", model_path, ": ", last));
  }
  std::string csv;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.find("_summary_") != std::string::npos && absl::EndsWith(name, ".csv")) {
      csv = entry.path().string();
      break;
    }
  }
  if (csv.empty()) {
    return absl::InternalError(absl::StrCat("vela wrote no summary CSV into ", dir));
  }
  std::ifstream in(csv);
  std::stringstream text;
  text << in.rdbuf();
  MICA_ASSIGN_OR_RETURN(Estimate e, ParseVelaSummaryCsv(text.str(), csv));
  e.target = profile.name;
  if (!(e.clock_hz > 0)) e.clock_hz = profile.clock_hz();
  return e;
}

}  // namespace fvp
}  // namespace mica
