#include "mica/args.h"

#include <algorithm>
#include <iostream>

#include "mica/command.h"

namespace mica {
namespace cli {

void ArgParser::Flag(const std::string& name, bool* value, const std::string& help) {
  Spec s;
  s.name = name;
  s.help = help;
  s.flag = value;
  specs_.push_back(s);
}

void ArgParser::Option(const std::string& name, std::string* value, const std::string& metavar,
                       const std::string& help) {
  Spec s;
  s.name = name;
  s.metavar = metavar;
  s.help = help;
  s.option = value;
  specs_.push_back(s);
}

void ArgParser::Repeated(const std::string& name, std::vector<std::string>* values,
                         const std::string& metavar, const std::string& help) {
  Spec s;
  s.name = name;
  s.metavar = metavar;
  s.help = help;
  s.repeated = values;
  specs_.push_back(s);
}

void ArgParser::Deprecated(const std::string& old_name, const std::string& canonical) {
  deprecated_.emplace_back(old_name, canonical);
}

namespace {

// The brief's short forms, valid wherever the long flag is declared.
constexpr std::pair<const char*, const char*> kShortForms[] = {
    {"-t", "--target-profile"}, {"-b", "--backend"}, {"-o", "--output"}};

}  // namespace

ArgParser::Spec* ArgParser::Find(const std::string& name) {
  std::string canonical = name;
  for (const auto& [short_name, long_name] : kShortForms) {
    if (name == short_name) canonical = long_name;
  }
  for (const auto& [old_name, new_name] : deprecated_) {
    if (name == old_name) {
      std::cerr << "mica " << command_ << ": warning: " << old_name << " is now " << new_name
                << "\n";
      canonical = new_name;
    }
  }
  auto it = std::find_if(specs_.begin(), specs_.end(),
                         [&](const Spec& s) { return s.name == canonical; });
  return it == specs_.end() ? nullptr : &*it;
}

void ArgParser::Positional(const std::string& metavar, std::vector<std::string>* values, int min,
                           int max) {
  positional_metavar_ = metavar;
  positional_ = values;
  positional_min_ = min;
  positional_max_ = max;
}

std::string ArgParser::Usage() const {
  std::string out = "usage: mica " + command_;
  if (positional_ != nullptr) out += " " + positional_metavar_ + (positional_max_ != 1 ? "..." : "");
  out += " [options]\n";
  std::string summary = summary_;
  for (const Command& c : Commands()) {
    if (summary.empty() && command_ == c.name) summary = c.summary;
  }
  if (!summary.empty()) out += "\n" + summary + "\n";
  out += "\noptions:\n";
  auto short_form = [](const std::string& name) -> std::string {
    for (const auto& [short_name, long_name] : kShortForms) {
      if (name == long_name) return std::string(short_name) + ", ";
    }
    return "";
  };
  size_t width = 10;
  for (const Spec& s : specs_) {
    width = std::max(width, short_form(s.name).size() + s.name.size() + s.metavar.size() + 1);
  }
  for (const Spec& s : specs_) {
    std::string left = short_form(s.name) + s.name + (s.metavar.empty() ? "" : " " + s.metavar);
    left.resize(width, ' ');
    out += "  " + left + "  " + s.help + (s.repeated ? " (repeatable)" : "") + "\n";
  }
  std::string help = "-h, --help";
  help.resize(width, ' ');
  out += "  " + help + "  show this help\n";
  return out;
}

int ArgParser::Parse(const std::vector<std::string>& args) {
  std::vector<std::string> positionals;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << Usage();
      return kExitOk;
    }
    if (a.size() < 2 || a[0] != '-' || a == "-") {
      positionals.push_back(a);
      continue;
    }
    if (a == "--") {
      positionals.insert(positionals.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    std::string name = a, value;
    bool has_inline_value = false;
    if (const size_t eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_inline_value = true;
    }
    Spec* it = Find(name);
    if (it == nullptr) {
      return UsageError(command_ + ": unknown flag '" + name + "' (try 'mica " + command_ +
                        " --help')");
    }
    if (it->flag != nullptr) {
      if (has_inline_value) return UsageError(command_ + ": " + name + " takes no value");
      *it->flag = true;
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return UsageError(command_ + ": " + name + " needs a value (" + it->metavar + ")");
      }
      value = args[++i];
    }
    if (it->option != nullptr) {
      if (it->seen) return UsageError(command_ + ": " + name + " given twice");
      *it->option = value;
    } else {
      it->repeated->push_back(value);
    }
    it->seen = true;
  }
  const int n = static_cast<int>(positionals.size());
  if (positional_ == nullptr && n > 0) {
    return UsageError(command_ + ": unexpected argument '" + positionals[0] + "'");
  }
  if (positional_ != nullptr) {
    if (n < positional_min_) return UsageError(command_ + ": missing " + positional_metavar_);
    if (positional_max_ >= 0 && n > positional_max_) {
      return UsageError(command_ + ": unexpected argument '" + positionals[positional_max_] + "'");
    }
    *positional_ = positionals;
  }
  return -1;
}

}  // namespace cli
}  // namespace mica
