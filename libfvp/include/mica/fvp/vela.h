// mica fvp — Arm's Vela compiler as an optional second opinion for Ethos-U profiles.
//
// RunVela compiles a model with an installed `vela` (pip install ethos-u-vela) for the profile's
// accelerator, system configuration and memory mode, and returns the figures of its summary CSV
// as an Estimate with backend "vela". mica never needs Vela: `mica check --backend vela` prints
// these figures beside mica's own.
//
//   MICA_ASSIGN_OR_RETURN(mica::estimate::Estimate v,
//                         mica::fvp::RunVela("kws.tflite", profile, {}));
//   std::cout << v.total_cycles << " cycles (vela)\n";
#ifndef MICA_FVP_VELA_H_
#define MICA_FVP_VELA_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"

namespace mica {
namespace fvp {

struct VelaOptions {
  std::string program = "vela";        // looked up on PATH
  std::string work_dir;                // Vela's --output-dir; empty = a fresh temporary dir
  absl::Duration timeout = absl::Seconds(300);
};

// Returns the one-line hint printed when Vela is missing.
std::string VelaInstallHint();

// Parses Vela's summary CSV (`<name>_summary_<system_config>.csv`: a header row and one data row;
// format in ../shared/docs/fvp-output-formats.md section 7.1). Memory figures (KiB in the CSV)
// become bytes. `origin` names the file in errors. InvalidArgument for a malformed file or a
// missing required column (cycles_total, cycles_npu).
absl::StatusOr<estimate::Estimate> ParseVelaSummaryCsv(const std::string& text,
                                                       const std::string& origin);

// Runs `vela MODEL --accelerator-config <profile> --system-config S --memory-mode M
// --output-dir DIR` and parses its summary CSV. FailedPrecondition (with VelaInstallHint) when
// Vela is not installed; Internal with Vela's last error line when it fails or times out;
// InvalidArgument for a Cortex-M profile.
absl::StatusOr<estimate::Estimate> RunVela(const std::string& model_path,
                                           const estimate::TargetProfile& profile,
                                           const VelaOptions& options);

}  // namespace fvp
}  // namespace mica

#endif  // MICA_FVP_VELA_H_
