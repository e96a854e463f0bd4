// `mica run` on an ExecuTorch bundled program (.bpte): runs each bundled test case on the host
// and checks its outputs against the expected ones the bundle carries, as ExecuTorch's runner
// does (`Test_result: PASS/FAIL`).
#ifndef MICA_APPS_BUNDLED_RUN_H_
#define MICA_APPS_BUNDLED_RUN_H_

#include <string>

namespace mica {
namespace cli {

// Returns true when `path` holds an ExecuTorch bundled program (by its contents).
bool IsBundledProgramFile(const std::string& path);

// Runs every test case of the bundled program at `path` with the kernel `variant` ("" for the
// best), prints a per-tensor comparison and `Test_result: PASS` or `FAIL`, and writes the
// outputs of test case 0 to `output_dir` (output_<i>.bin/.npy) when it is not empty. Integer
// outputs must be identical; float outputs may differ by at most 1e-5 + 1e-5 |expected| (the
// bundled-program tolerance ExecuTorch's verification uses by default; identical bytes are
// reported as such). Returns the exit code: 0 pass, 1 fail or error.
// `method` picks the test suite (and the program's method) by name; "" for the first suite.
//
// With a Cortex-M `target` profile (not empty), the same is done on a simulated Cortex-M of
// that profile (QEMU, through the device runtime and the runner `firmware`, "" for the one
// built with mica): each test case runs on the device and its outputs are checked as above.
int RunBundledProgram(const std::string& path, const std::string& variant,
                      const std::string& output_dir, const std::string& method = "",
                      const std::string& target = "", const std::string& firmware = "");

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_BUNDLED_RUN_H_
