// mica fvp — running an external program (a simulator, Vela) with a time limit.
//
// The child's stdout and stderr are captured; a child that outlives its time limit is killed
// (with its process group), so a hung simulator never hangs mica.
//
//   MICA_ASSIGN_OR_RETURN(mica::fvp::ProcessResult r,
//                         mica::fvp::RunProcess({"vela", "--version"}, absl::Seconds(10)));
//   if (r.exit_code != 0) ...
#ifndef MICA_FVP_SUBPROCESS_H_
#define MICA_FVP_SUBPROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace mica {
namespace fvp {

struct ProcessResult {
  int exit_code = 0;       // the child's exit status, or 128 + signal number
  bool timed_out = false;  // killed because it exceeded the time limit
  std::string stdout_text;
  std::string stderr_text;
};

// Runs argv[0] (looked up on PATH) with `argv`, waiting at most `timeout`. Returns an error
// only when the program cannot be started; a non-zero exit is reported in the result.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout);

// Returns the full path of `program` on PATH, or an empty string when it is not installed.
std::string FindProgram(const std::string& program);

}  // namespace fvp
}  // namespace mica

#endif  // MICA_FVP_SUBPROCESS_H_
