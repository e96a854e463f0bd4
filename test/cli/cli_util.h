// Running the built `mica` binary from CLI tests (black box).
//
//   mica::testing::CliResult r = mica::testing::RunMica({"inspect", path, "--json"});
//   CHECK(r.exit_code == 0);
//   CHECK(r.out.find("\"schema\"") != std::string::npos);
#ifndef MICA_TEST_CLI_CLI_UTIL_H_
#define MICA_TEST_CLI_CLI_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "testing/shared.h"

namespace mica {
namespace testing {

struct CliResult {
  int exit_code = -1;  // the process exit status (128 + signal when killed by a signal)
  std::string out;     // everything written to stdout
  std::string err;     // everything written to stderr
};

// Returns `s` quoted for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

// Returns the number of lines in `s` (a final line without '\n' counts).
inline int CountLines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n' ? 1 : 0);
}

// Runs `binary` with `args` (no shell interpretation of the arguments), capturing stdout,
// stderr and the exit code. `env` entries ("NAME=value") are set for the child only.
inline CliResult RunBinary(const std::string& binary, const std::vector<std::string>& args,
                           const std::vector<std::string>& env = {}) {
  static int counter = 0;
  static const std::string dir = TempDir("cli-stderr-" + std::to_string(getpid()));
  const std::string err_path = dir + "/stderr" + std::to_string(counter++) + ".txt";
  std::string cmd;
  for (const std::string& e : env) cmd += "env " + ShellQuote(e) + " ";
  cmd += ShellQuote(binary);
  for (const std::string& a : args) cmd += " " + ShellQuote(a);
  cmd += " 2>" + ShellQuote(err_path) + " </dev/null";
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.exit_code = 128 + WTERMSIG(status);
  }
  std::ifstream err(err_path, std::ios::binary);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  return r;
}

// Runs the `mica` binary under test (MICA_CLI_PATH, set by CMake).
inline CliResult RunMica(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {}) {
  return RunBinary(MICA_CLI_PATH, args, env);
}

}  // namespace testing
}  // namespace mica

#endif  // MICA_TEST_CLI_CLI_UTIL_H_
