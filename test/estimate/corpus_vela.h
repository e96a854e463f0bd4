// mica's Ethos-U estimate against Vela's recorded answers for the model corpus
// (test/corpus/reference/vela, described by its README.md): the differential test of
// ethos_u_corpus_test.cc and the report bench/corpus_vs_vela.sh prints share this code.
//
// Per model x profile x configuration (`vela`: Vela's own defaults, `mlia`: MLIA's meaning of
// the profile) it runs EstimateEthosU with the system config, memory mode and arena cache size
// the row was recorded with, and compares total cycles, SRAM used, off-chip (flash + DRAM) used
// and which operators run on the CPU. Models are split into a fitting and a validation half by
// test/corpus/split.json (the shared MLPerf Tiny models are in the validation half).
#ifndef MICA_TEST_ESTIMATE_CORPUS_VELA_H_
#define MICA_TEST_ESTIMATE_CORPUS_VELA_H_

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/target.h"
#include "mica/model/load.h"

namespace mica {
namespace estimate {
namespace corpus {

using Row = std::map<std::string, std::string>;

inline std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (ch == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"')
        cur += '"', ++i;
      else
        quoted = !quoted;
    } else if (ch == ',' && !quoted) {
      out.push_back(cur), cur.clear();
    } else if (ch != '\r') {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

inline std::vector<Row> ReadCsvFile(const std::string& path) {
  std::vector<Row> rows;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return rows;
  const std::vector<std::string> head = SplitCsvLine(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitCsvLine(line);
    Row row;
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) row[head[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

inline double Field(const Row& r, const std::string& k) {
  auto it = r.find(k);
  return it == r.end() || it->second.empty() ? 0.0 : std::atof(it->second.c_str());
}
inline std::string Str(const Row& r, const std::string& k) {
  auto it = r.find(k);
  return it == r.end() ? std::string() : it->second;
}

// Where the corpus and its records are: test/corpus of the source tree, or MICA_CORPUS_DIR
// (models/, split.json) and MICA_CORPUS_REFERENCE (the reference folder) when set.
struct Paths {
  std::string corpus;     // holds models/ and split.json
  std::string reference;  // holds vela/totals.csv
  std::string split;      // split.json
  std::string shared;     // MICA_SHARED_DIR ("" when absent)
};

inline Paths FindPaths(const std::string& source_dir, const std::string& shared_dir) {
  Paths p;
  const char* c = std::getenv("MICA_CORPUS_DIR");
  p.corpus = c ? c : source_dir + "/test/corpus";
  const char* r = std::getenv("MICA_CORPUS_REFERENCE");
  p.reference = r ? r : p.corpus + "/reference";
  const char* s = std::getenv("MICA_CORPUS_SPLIT");
  p.split = s ? s : p.corpus + "/split.json";
  p.shared = shared_dir;
  return p;
}

// The model names of one half ("fit" or "validate") in split.json: the strings of the
// "models" array of that half's object (written by test/corpus/make_corpus.py split).
inline std::set<std::string> SplitModels(const std::string& path, const std::string& half) {
  std::set<std::string> out;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  size_t at = text.find("\"" + half + "\": {");
  if (at == std::string::npos) at = text.find("\"" + half + "\":{");
  if (at == std::string::npos) return out;
  at = text.find("\"models\"", at);
  if (at == std::string::npos) return out;
  const size_t open = text.find('[', at), close = text.find(']', at);
  if (open == std::string::npos || close == std::string::npos) return out;
  size_t i = open;
  while (true) {
    const size_t q0 = text.find('"', i + 1);
    if (q0 == std::string::npos || q0 > close) break;
    const size_t q1 = text.find('"', q0 + 1);
    if (q1 == std::string::npos || q1 > close) break;
    out.insert(text.substr(q0 + 1, q1 - q0 - 1));
    i = q1;
  }
  return out;
}

// Vela's operator spelling and TFLite's, reduced to one key ("Conv2D", "CONV_2D" -> "conv2d").
inline std::string OpKey(const std::string& name) {
  std::string k;
  for (char ch : name) {
    if (ch != '_') k += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  static const std::map<std::string, std::string> alias = {
      {"logistic", "sigmoid"},
      {"concatenation", "concat"},
      {"averagepool2d", "avgpool"},
      {"maxpool2d", "maxpool"},
      {"fullyconnected", "fullyconnected"},
      {"unidirectionalsequencelstm", "unidirectionalsequencelstm"},
      {"resizebilinear", "resizebilinear"},
      {"depthwiseconv2d", "depthwiseconv2d"},
      {"reducemean", "mean"},
      {"transposeconv2d", "transposeconv"},
      {"reshape", "reshape"}};
  auto it = alias.find(k);
  return it == alias.end() ? k : it->second;
}

enum class Family { kU55, kU65, kU85 };
inline const char* FamilyName(Family f) {
  return f == Family::kU55 ? "U55" : f == Family::kU65 ? "U65" : "U85";
}
inline Family FamilyOf(const std::string& profile) {
  return profile.find("u55") != std::string::npos   ? Family::kU55
         : profile.find("u65") != std::string::npos ? Family::kU65
                                                    : Family::kU85;
}

// One compared model x profile x configuration.
struct Case {
  std::string source, model, profile, config, half;
  Family family = Family::kU55;
  bool vela_ok = false;  // Vela compiled the model
  bool mica_ok = false;  // mica estimated it
  std::string mica_error;
  double vela_cycles = 0, mica_cycles = 0;
  double vela_sram = 0, mica_sram = 0;
  double vela_offchip = 0, mica_offchip = 0;
  double vela_weights = 0, mica_weights = 0;  // encoded weight bytes
  double sram_limit = 0;                     // arena cache size of the memory mode (0 = none)
  int ops = 0;                               // operators of the model
  int placement_diff = 0;                    // operators placed differently (symmetric difference)
  std::vector<std::string> placement_notes;  // "OP 'ofm': mica CPU (reason) / Vela NPU"
  // Per operator type: cycles Vela and mica charge (NPU and CPU rows with cycles).
  std::map<std::string, std::pair<double, double>> by_op;
  // Per layer (NPU ops with cycles, aligned in order when the counts agree).
  struct Layer {
    std::string op;
    double vela = 0, mica = 0;
    int index = 0;
  };
  std::vector<Layer> layers;
};

inline double Rel(double ours, double ref) {
  return ref == 0 ? (ours == 0 ? 0 : 1) : (ours - ref) / ref;
}

// Builds the profile the row was recorded with: mica's profile of that name with the row's
// system config, memory mode and arena cache size.
inline absl::StatusOr<TargetProfile> ProfileForRow(const Row& r) {
  absl::StatusOr<TargetProfile> p = FindTargetProfile(Str(r, "profile"));
  if (!p.ok()) return p.status();
  absl::Status s = SetVelaConfig(&*p, Str(r, "system_config"), Str(r, "memory_mode"));
  if (!s.ok()) return s;
  // The column holds the figure of Vela's summary, in KiB (384 for the 384 KiB modes,
  // 4194304 = 4 GiB where the mode sets no limit), whatever its name says.
  const double cache = 1024 * Field(r, "arena_cache_size_bytes");
  p->ethos_u.memory_mode.arena_cache_bytes =
      cache >= 4294967296.0 || cache <= 0 ? 0 : static_cast<int64_t>(cache);
  return p;
}

struct Corpus {
  std::vector<Case> cases;
  int stale = 0;           // rows whose model file is missing
  int shared_missing = 0;  // rows of shared models skipped: no MICA_SHARED_DIR
  std::string skipped;     // why nothing was compared ("" when something was)
};

// Loads every recorded row and estimates it. `only_model` (non-empty) restricts to one model.
inline Corpus Compare(const Paths& paths, const std::string& only_model = "") {
  Corpus out;
  const std::string totals = paths.reference + "/vela/totals.csv";
  if (!std::filesystem::exists(totals)) {
    out.skipped = "no Vela records at " + totals;
    return out;
  }
  if (!std::filesystem::exists(paths.split)) {
    out.skipped = "no corpus split at " + paths.split;
    return out;
  }
  const std::set<std::string> fit = SplitModels(paths.split, "fit");
  const std::set<std::string> validate = SplitModels(paths.split, "validate");
  // Vela's CPU fallbacks per model x profile x config: (operator, ofm name, reason).
  std::map<std::string, std::vector<std::array<std::string, 3>>> fallbacks;
  for (const Row& r : ReadCsvFile(paths.reference + "/vela/cpu_fallbacks.csv")) {
    fallbacks[Str(r, "source") + "/" + Str(r, "model") + "/" + Str(r, "profile") + "/" +
              Str(r, "config")]
        .push_back({Str(r, "operator"), Str(r, "ofm"), Str(r, "reason")});
  }
  std::map<std::string, Graph> graphs;
  std::set<std::string> bad_models;
  for (const Row& r : ReadCsvFile(totals)) {
    Case c;
    c.source = Str(r, "source");
    c.model = Str(r, "model");
    if (!only_model.empty() && c.model != only_model) continue;
    c.profile = Str(r, "profile");
    c.config = Str(r, "config");
    c.family = FamilyOf(c.profile);
    if (c.source == "shared")
      c.half = "validate";  // by the split rule
    else if (fit.count(c.model))
      c.half = "fit";
    else if (validate.count(c.model))
      c.half = "validate";
    else
      continue;  // a model outside the split (not in the corpus any more)
    const std::string root = c.source == "shared" ? paths.shared : paths.corpus;
    if (root.empty()) {  // shared models without MICA_SHARED_DIR
      ++out.shared_missing;
      continue;
    }
    const std::string path = root + "/" + Str(r, "model_path");
    const std::string key = c.source + "/" + c.model;
    if (!graphs.count(key) && !bad_models.count(key)) {
      if (!std::filesystem::exists(path)) {
        bad_models.insert(key);
      } else {
        absl::StatusOr<Graph> g = LoadModel(path);
        if (g.ok())
          graphs[key] = *std::move(g);
        else
          bad_models.insert(key), c.mica_error = std::string(g.status().message());
      }
    }
    if (!std::filesystem::exists(path)) {
      ++out.stale;
      continue;
    }
    c.vela_ok = Str(r, "status") == "ok";
    if (!c.vela_ok) {
      out.cases.push_back(c);
      continue;
    }
    c.vela_cycles = Field(r, "total_cycles");
    c.vela_sram = Field(r, "sram_used_bytes");
    c.vela_offchip = Field(r, "dram_used_bytes") + Field(r, "off_chip_flash_used_bytes");
    c.vela_weights = Field(r, "weights_encoded_bytes");
    absl::StatusOr<TargetProfile> p = ProfileForRow(r);
    if (!p.ok()) {
      c.mica_error = std::string(p.status().message());
      out.cases.push_back(c);
      continue;
    }
    c.sram_limit = static_cast<double>(p->ethos_u.memory_mode.arena_cache_bytes);
    auto git = graphs.find(key);
    if (git == graphs.end()) {
      if (c.mica_error.empty()) c.mica_error = "model failed to load";
      out.cases.push_back(c);
      continue;
    }
    absl::StatusOr<Estimate> e = EstimateEthosU(git->second, *p);
    if (!e.ok()) {
      c.mica_error = std::string(e.status().message());
      out.cases.push_back(c);
      continue;
    }
    c.mica_ok = true;
    c.mica_cycles = e->total_cycles;
    c.mica_weights = static_cast<double>(e->weights_encoded_bytes);
    c.mica_sram = e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)];
    c.mica_offchip = e->memory_used_bytes[static_cast<int>(MemoryArea::kDram)] +
                     e->memory_used_bytes[static_cast<int>(MemoryArea::kOffChipFlash)];
    // Placement: operators on the CPU in mica against Vela's fallback warnings, matched by
    // output name, then (unnamed tensors) by operator type in order; what is left differs.
    std::vector<std::array<std::string, 3>> vela_cpu =
        fallbacks[c.source + "/" + c.model + "/" + c.profile + "/" + c.config];
    std::vector<const OpEstimate*> mica_cpu;
    c.ops = static_cast<int>(e->ops.size());
    for (const OpEstimate& op : e->ops) {
      if (op.placement != Placement::kCpu) continue;
      auto it = std::find_if(vela_cpu.begin(), vela_cpu.end(), [&](const auto& v) {
        return v[1] == op.output_name && OpKey(v[0]) == OpKey(op.op_name);
      });
      if (it != vela_cpu.end())
        vela_cpu.erase(it);
      else
        mica_cpu.push_back(&op);
    }
    for (const OpEstimate* op : mica_cpu) {
      auto it = std::find_if(vela_cpu.begin(), vela_cpu.end(),
                             [&](const auto& v) { return OpKey(v[0]) == OpKey(op->op_name); });
      if (it != vela_cpu.end()) {
        vela_cpu.erase(it);
        continue;
      }
      ++c.placement_diff;
      c.placement_notes.push_back(op->op_name + " '" + op->output_name + "': mica CPU (" +
                                  (op->reasons.empty() ? "" : op->reasons[0]) + "), Vela NPU");
    }
    for (const auto& v : vela_cpu) {
      ++c.placement_diff;
      c.placement_notes.push_back(v[0] + " '" + v[1] + "': mica NPU, Vela CPU (" + v[2] + ")");
    }
    // Per operator type and per layer from Vela's per-layer table.
    const std::string layers = paths.reference + "/vela/layers/" + c.source + "/" + c.model + "/" +
                               c.profile + "__" + c.config + ".csv";
    std::vector<Case::Layer> vela_layers;
    for (const Row& l : ReadCsvFile(layers)) {
      const std::string op = OpKey(Str(l, "original_op"));
      const double cyc = Field(l, "op_cycles");
      c.by_op[op].first += cyc;
      if (Str(l, "target") != "NPU") continue;
      // A new layer starts where the operator or the output name changes.
      const int id = static_cast<int>(Field(l, "name_id"));
      if (vela_layers.empty() || vela_layers.back().op != op || vela_layers.back().index != id) {
        vela_layers.push_back({op, 0, 0, id});
      }
      vela_layers.back().vela += cyc;
    }
    std::vector<Case::Layer> mica_layers;
    for (const OpEstimate& op : e->ops) {
      c.by_op[OpKey(op.op_name)].second += op.placement == Placement::kNpu ? op.total_cycles : 0.0;
      if (op.placement == Placement::kNpu && op.total_cycles > 0) {
        mica_layers.push_back({OpKey(op.op_name), 0, op.total_cycles, op.op_index});
      }
    }
    std::vector<Case::Layer> v_nz;
    for (const Case::Layer& l : vela_layers) {
      if (l.vela > 0) v_nz.push_back(l);
    }
    if (v_nz.size() == mica_layers.size()) {
      for (size_t i = 0; i < v_nz.size(); ++i) {
        c.layers.push_back(
            {mica_layers[i].op, v_nz[i].vela, mica_layers[i].mica, mica_layers[i].index});
      }
    }
    out.cases.push_back(std::move(c));
  }
  if (out.cases.empty() && out.skipped.empty()) out.skipped = "no recorded case has its model";
  return out;
}

inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

// Aggregate of one group of cases (a half x family x config).
struct Stats {
  int cases = 0, refused = 0, vela_rejected = 0;
  std::vector<double> cycles, sram, offchip;  // |relative error|
  int within10 = 0;
  int placement_ops = 0, placement_diff = 0, placement_cases_identical = 0;
  int sram_over_limit = 0;
  double cycles_median() const { return Percentile(cycles, 0.5); }
  double within10_share() const {
    return cycles.empty() ? 1.0
                          : static_cast<double>(within10) / static_cast<double>(cycles.size());
  }
  double placement_share() const {
    return placement_ops == 0 ? 1.0 : 1.0 - static_cast<double>(placement_diff) / placement_ops;
  }
};

// Memory figures below 1 KiB on Vela's side are too small for a relative error to mean much
// (a single 16-byte tensor); they are left out of the memory medians.
constexpr double kMinMemoryBytes = 1024;

inline Stats Aggregate(const std::vector<const Case*>& cases) {
  Stats s;
  for (const Case* c : cases) {
    if (!c->vela_ok) {
      ++s.vela_rejected;
      continue;
    }
    ++s.cases;
    if (!c->mica_ok) {
      ++s.refused;
      continue;
    }
    const double e = std::fabs(Rel(c->mica_cycles, c->vela_cycles));
    s.cycles.push_back(e);
    s.within10 += e <= 0.10;
    if (c->vela_sram >= kMinMemoryBytes)
      s.sram.push_back(std::fabs(Rel(c->mica_sram, c->vela_sram)));
    if (c->vela_offchip >= kMinMemoryBytes) {
      s.offchip.push_back(std::fabs(Rel(c->mica_offchip, c->vela_offchip)));
    }
    s.placement_ops += c->ops;
    s.placement_diff += c->placement_diff;
    s.placement_cases_identical += c->placement_diff == 0;
    if (c->sram_limit > 0 && c->mica_sram > c->sram_limit) ++s.sram_over_limit;
  }
  return s;
}

inline std::vector<const Case*> Select(const Corpus& corpus, const std::string& half, Family family,
                                       const std::string& config) {
  std::vector<const Case*> out;
  for (const Case& c : corpus.cases) {
    if (c.half == half && c.family == family && c.config == config) out.push_back(&c);
  }
  return out;
}

inline void PrintStatsHeader() {
  std::printf("%-9s %-4s %-5s %5s %4s | %-29s %6s | %-22s | %-22s | %s\n", "half", "fam", "cfg",
              "cases", "ref", "cycles |err|: med  p90  worst", "<=10%", "SRAM |err|: med  worst",
              "off-chip: med  worst", "placement ops / identical cases, SRAM > limit");
}

inline void PrintStats(const std::string& half, Family f, const std::string& config,
                       const Stats& s) {
  auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  std::printf(
      "%-9s %-4s %-5s %5d %4d | %17.1f%% %5.1f%% %5.0f%% | %5.1f%% | %13.1f%% %6.0f%% | "
      "%13.1f%% %6.0f%% | %6.2f%% %3d/%d %d\n",
      half.c_str(), FamilyName(f), config.c_str(), s.cases, s.refused, 100 * s.cycles_median(),
      100 * Percentile(s.cycles, 0.9), 100 * worst(s.cycles), 100 * s.within10_share(),
      100 * Percentile(s.sram, 0.5), 100 * worst(s.sram), 100 * Percentile(s.offchip, 0.5),
      100 * worst(s.offchip), 100 * s.placement_share(), s.placement_cases_identical,
      s.cases - s.refused, s.sram_over_limit);
}

}  // namespace corpus
}  // namespace estimate
}  // namespace mica

#endif  // MICA_TEST_ESTIMATE_CORPUS_VELA_H_
