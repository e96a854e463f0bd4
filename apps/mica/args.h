// A small, strict flag parser for mica's subcommands.
//
//   ArgParser p("inspect");
//   bool json = false; std::string out;
//   p.Flag("--json", &json, "print JSON");
//   p.Option("--output", &out, "FILE", "write here instead of stdout");
//   std::vector<std::string> models;
//   p.Positional("MODEL", &models, 1, 1);
//   if (int rc = p.Parse(args); rc >= 0) return rc;   // usage error (2) or --help (0)
//
// Unknown flags, missing values and wrong positional counts are one-line usage errors.
// Both "--flag value" and "--flag=value" are accepted. The brief's short forms exist wherever
// their long flag does: -t (--target-profile), -b (--backend), -o (--output), -h (--help).
// Old spellings stay as aliases that print a one-line warning (Deprecated).
#ifndef MICA_APPS_ARGS_H_
#define MICA_APPS_ARGS_H_

#include <string>
#include <utility>
#include <vector>

namespace mica {
namespace cli {

class ArgParser {
 public:
  explicit ArgParser(std::string command) : command_(std::move(command)) {}

  // A boolean switch.
  void Flag(const std::string& name, bool* value, const std::string& help);
  // An option taking one value; given twice is an error.
  void Option(const std::string& name, std::string* value, const std::string& metavar,
              const std::string& help);
  // An option that may repeat; values accumulate in order.
  void Repeated(const std::string& name, std::vector<std::string>* values,
                const std::string& metavar, const std::string& help);
  // An old spelling of flag `canonical` (already declared): still accepted, with a warning on
  // stderr naming the new spelling.
  void Deprecated(const std::string& old_name, const std::string& canonical);
  // A one-line description printed under the usage line of --help.
  void Summary(const std::string& summary) { summary_ = summary; }
  // Positional arguments: between `min` and `max` of them (max < 0: unbounded).
  void Positional(const std::string& metavar, std::vector<std::string>* values, int min, int max);

  // Parses `args`. Returns -1 when the command should run, else the exit code to return
  // (0 after printing --help, 2 after printing a usage error).
  int Parse(const std::vector<std::string>& args);

  // Returns the usage text (one line per flag).
  std::string Usage() const;

 private:
  struct Spec {
    std::string name, metavar, help;
    bool* flag = nullptr;
    std::string* option = nullptr;
    std::vector<std::string>* repeated = nullptr;
    bool seen = false;
  };
  // Returns the declared flag `name` (resolving short forms and deprecated aliases), or null.
  Spec* Find(const std::string& name);

  std::string command_;
  std::string summary_;
  std::vector<Spec> specs_;
  std::vector<std::pair<std::string, std::string>> deprecated_;  // old name, canonical name
  std::string positional_metavar_;
  std::vector<std::string>* positional_ = nullptr;
  int positional_min_ = 0, positional_max_ = 0;
};

}  // namespace cli
}  // namespace mica

#endif  // MICA_APPS_ARGS_H_
