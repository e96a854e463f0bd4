// The mica CLI's subcommand registry.
//
// Each file in commands/ defines one subcommand and registers it with a static Registration:
//
//   int RunInspect(const std::vector<std::string>& args);
//   const mica::cli::Registration kInspect{
//       {"inspect", "MODEL [--json]", "List operators, tensors, MACs and memory", RunInspect}};
//
// A command returns the process exit code: 0 success, 1 failure, 2 usage error.
#ifndef MICA_APPS_COMMAND_H_
#define MICA_APPS_COMMAND_H_

#include <string>
#include <vector>

namespace mica {
namespace cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  const char* name;
  const char* usage;    // arguments after the name
  const char* summary;  // one line for `mica --help`
  int (*run)(const std::vector<std::string>& args);
  int order = 100;      // position in --help
};

// Returns all registered commands, sorted by `order` then name.
std::vector<Command> Commands();

struct Registration {
  explicit Registration(Command c);
};

// Prints "mica: <message>" to stderr and returns kExitUsage.
int UsageError(const std::string& message);
// Prints "mica: <message>" to stderr and returns kExitFailure.
int Failure(const std::string& message);

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_COMMAND_H_
