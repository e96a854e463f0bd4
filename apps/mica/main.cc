// mica — ML Inference Cost Advisor: the command-line front end.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "mica/command.h"

namespace mica {
namespace cli {
namespace {

std::vector<Command>& Registry() {
  static std::vector<Command> commands;
  return commands;
}

void PrintHelp() {
  std::cout << "mica " << MICA_VERSION
            << " — ML Inference Cost Advisor for Arm Cortex-M and Ethos-U\n\n"
               "usage: mica <command> [arguments]\n\ncommands:\n";
  size_t width = 0;
  for (const Command& c : Commands()) width = std::max(width, std::string(c.name).size());
  for (const Command& c : Commands()) {
    std::string name = c.name;
    name.resize(width, ' ');
    std::cout << "  " << name << "  " << c.summary << "\n";
  }
  std::cout << "\nRun 'mica <command> --help' for a command's arguments.\n"
               "Exit codes: 0 success, 1 failure, 2 usage error.\n";
}

}  // namespace

std::vector<Command> Commands() {
  std::vector<Command> out = Registry();
  std::sort(out.begin(), out.end(), [](const Command& a, const Command& b) {
    return a.order != b.order ? a.order < b.order : std::string(a.name) < b.name;
  });
  return out;
}

Registration::Registration(Command c) { Registry().push_back(c); }

int UsageError(const std::string& message) {
  std::cerr << "mica: " << message << "\n";
  return kExitUsage;
}

int Failure(const std::string& message) {
  std::cerr << "mica: " << message << "\n";
  return kExitFailure;
}

}  // namespace cli
}  // namespace mica

namespace {

int Main(const std::vector<std::string>& args) {
  using namespace mica::cli;
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintHelp();
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version" || args[0] == "-V" || args[0] == "-v") {
    std::cout << "mica " << MICA_VERSION << "\n";
    return kExitOk;
  }
  for (const Command& c : Commands()) {
    if (args[0] != c.name) continue;
    // Each command's flag parser answers --help/-h with every flag described.
    return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  if (args[0].rfind("-", 0) == 0) return UsageError("unknown flag '" + args[0] + "' (try --help)");
  return UsageError("unknown command '" + args[0] + "' (try --help)");
}

}  // namespace

// No path may end in an uncaught exception: a model that needs more memory than the machine
// has (or a library's exception) becomes one line and exit code 1, like any other failure.
int main(int argc, char** argv) {
  try {
    return Main(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    return mica::cli::Failure(
        "out of memory (the model or its data are too large for this machine)");
  } catch (const std::exception& e) {
    return mica::cli::Failure(std::string("internal error: ") + e.what());
  }
}
