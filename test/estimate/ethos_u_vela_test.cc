// mica's Ethos-U estimate against Vela 5.1.0 (Regor core) on the MLPerf Tiny models:
// totals over every model x accelerator (summary.csv) and per-layer agreement
// (per-layer/<model>__<accelerator>/regor_per-layer.csv). Prints the comparison table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) out.push_back(cur), cur.clear();
    else if (ch != '\r') cur += ch;
  }
  out.push_back(cur);
  return out;
}

std::vector<std::map<std::string, std::string>> ReadCsv(std::istream& in) {
  std::vector<std::map<std::string, std::string>> rows;
  std::string line;
  if (!std::getline(in, line)) return rows;
  const std::vector<std::string> head = SplitCsv(line);
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> f = SplitCsv(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < head.size() && i < f.size(); ++i) row[head[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  return ReadCsv(in);
}

// Vela 5.2.0 run as MLIA runs it, per MLIA profile and model (test/tools/mlia_vela_reference.py).
constexpr const char kMliaVelaReference[] =
#include "estimate/mlia_vela_reference.inc"
    ;

double Num(const std::map<std::string, std::string>& r, const std::string& k) {
  auto it = r.find(k);
  return it == r.end() || it->second.empty() ? 0.0 : std::atof(it->second.c_str());
}

TargetProfile ProfileFor(const std::string& accel, std::string system = "",
                         std::string memory_mode = "") {
  // "ethos-u55-256" -> family U55, 256 MACs, and the configuration the reference was recorded
  // with (reference/vela/README.md: Vela's command-line defaults), given explicitly: mica's
  // built-in profiles mean MLIA's configurations instead.
  TargetProfile p;
  p.name = accel;
  p.kind = TargetKind::kEthosU;
  const bool u55 = accel.find("u55") != std::string::npos;
  const bool u65 = accel.find("u65") != std::string::npos;
  p.ethos_u.family = u55 ? EthosUFamily::kU55 : u65 ? EthosUFamily::kU65 : EthosUFamily::kU85;
  p.ethos_u.macs = std::atoi(accel.substr(accel.rfind('-') + 1).c_str());
  if (system.empty()) {
    system = u55 ? "Ethos_U55_High_End_Embedded" : u65 ? "Ethos_U65_Client_Server"
                                                       : "Ethos_U85_SYS_DRAM_Mid";
  }
  if (memory_mode.empty()) memory_mode = u55 ? "Shared_Sram" : "Dedicated_Sram_384KB";
  absl::StatusOr<SystemConfig> sys = VelaSystemConfig(system);
  absl::StatusOr<MemoryMode> mode = VelaMemoryMode(memory_mode);
  REQUIRE(sys.ok());
  REQUIRE(mode.ok());
  p.ethos_u.system = *sys;
  p.ethos_u.memory_mode = *mode;
  REQUIRE(ValidateEthosUConfig(p.ethos_u).ok());
  return p;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double RelErr(double ours, double ref) { return ref == 0 ? 0 : (ours - ref) / ref; }

struct Group {
  std::string op;
  double cycles = 0, npu = 0, sram = 0, dram = 0, flash = 0;
};

// Vela's per-layer rows grouped per original TFLite operator (fused activations and the
// SOFTMAX decomposition are extra rows of the same operator).
std::vector<Group> VelaGroups(const std::string& path) {
  std::vector<Group> g;
  for (const auto& r : ReadCsv(path)) {
    const std::string orig = r.at("Original Operator");
    const std::string nng = r.at("NNG Operator");
    if (g.empty() || g.back().op != orig || nng == orig) g.push_back({orig, 0});
    g.back().cycles += Num(r, "Op Cycles");
    g.back().npu += Num(r, "NPU");
    g.back().sram += Num(r, "SRAM AC");
    g.back().dram += Num(r, "DRAM AC");
    g.back().flash += Num(r, "OffFlash AC") + Num(r, "OnFlash AC");
  }
  return g;
}

TEST_CASE("ethos_u matches Vela totals and per-layer cycles on MLPerf Tiny", "[ethos_u][vela]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipping the Vela comparison");
    return;
  }
  const std::string vela = shared + "/reference/vela";
  const auto rows = ReadCsv(vela + "/summary.csv");
  REQUIRE(!rows.empty());
  std::map<std::string, Graph> models;
  std::vector<double> errs, abs_errs, layer_errs, sram_errs, const_errs, enc_errs;
  double worst = 0, worst_layer = 0;
  std::string worst_case, worst_layer_case;
  std::printf("%-28s %-15s %10s %10s %7s %9s %9s %7s %7s\n", "model", "accelerator", "vela",
              "mica", "err%", "vela_npu", "mica_npu", "sram%", "enc%");
  for (const auto& r : rows) {
    if (r.at("core") != "regor") continue;
    const std::string model = r.at("model");
    const std::string accel = r.at("accelerator");
    if (!models.count(model)) {
      absl::StatusOr<Graph> g =
          LoadModel(shared + "/models/mlperf-tiny/" + model + ".tflite");
      INFO(model << ": " << g.status().message());
      REQUIRE(g.ok());
      models[model] = *std::move(g);
    }
    // The configuration each reference row was recorded with, as the row names it.
    const TargetProfile p = ProfileFor(accel, r.at("system_config"), r.at("memory_mode"));
    CHECK(p.clock_hz() == Num(r, "core_clock_hz"));
    absl::StatusOr<Estimate> e = EstimateEthosU(models[model], p);
    INFO(model << " on " << accel << ": " << e.status().message());
    REQUIRE(e.ok());
    CHECK(e->cpu_ops == static_cast<int32_t>(Num(r, "cpu_operators")));
    const double ref = Num(r, "total_cycles");
    const double err = RelErr(e->total_cycles, ref);
    errs.push_back(err);
    abs_errs.push_back(std::fabs(err));
    if (std::fabs(err) > worst) worst = std::fabs(err), worst_case = model + " " + accel;
    // Memory: SRAM used (KiB in the CSV) and encoded weights.
    const double sram_ref = Num(r, "sram_memory_used_kib") * 1024;
    const double sram = e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)];
    const double sram_err = sram_ref > 4096 ? RelErr(sram, sram_ref) : 0;
    if (sram_ref > 4096) sram_errs.push_back(std::fabs(sram_err));
    const double enc_err = RelErr(double(e->weights_encoded_bytes), Num(r, "weights_encoded_bytes"));
    // Flash (U55) or DRAM (U65/U85 defaults) used: constants, plus DRAM-resident feature maps.
    const bool dram = Num(r, "dram_memory_used_kib") > 0;
    const double const_ref =
        1024 * (dram ? Num(r, "dram_memory_used_kib") : Num(r, "off_chip_flash_memory_used_kib"));
    const double const_mica = e->memory_used_bytes[static_cast<int>(
        dram ? MemoryArea::kDram : MemoryArea::kOffChipFlash)];
    const_errs.push_back(std::fabs(RelErr(const_mica, const_ref)));
    enc_errs.push_back(std::fabs(enc_err));
    CHECK(std::fabs(RelErr(double(e->weights_original_bytes), Num(r, "weights_original_bytes"))) <
          0.01);
    std::printf("%-28s %-15s %10.0f %10.0f %+7.1f %9.0f %9.0f %+7.1f %+7.1f\n", model.c_str(),
                accel.c_str(), ref, e->total_cycles, 100 * err, Num(r, "npu_cycles"),
                e->npu_cycles, 100 * sram_err, 100 * enc_err);
    // Per layer.
    const std::string pl = vela + "/per-layer/" + model + "__" + accel + "/regor_per-layer.csv";
    const std::vector<Group> groups = VelaGroups(pl);
    std::vector<double> ours;
    for (const OpEstimate& op : e->ops) {
      if (op.placement == Placement::kNpu && op.total_cycles > 0) ours.push_back(op.total_cycles);
    }
    std::vector<double> vela_nonzero;
    for (const Group& g : groups) {
      if (g.cycles > 0) vela_nonzero.push_back(g.cycles);
    }
    if (ours.size() == vela_nonzero.size()) {
      for (size_t i = 0; i < ours.size(); ++i) {
        // Layers that are a meaningful share of the network (>= 2 % of Vela's total).
        if (vela_nonzero[i] >= 0.02 * ref) {
          const double le = std::fabs(RelErr(ours[i], vela_nonzero[i]));
          layer_errs.push_back(le);
          if (le > worst_layer) {
            worst_layer = le;
            worst_layer_case = model + " " + accel + " layer " + std::to_string(i);
          }
        }
      }
    }
  }
  const double med = Median(abs_errs);
  const double med_layer = Median(layer_errs);
  const double max_layer = layer_errs.empty() ? 0 : *std::max_element(layer_errs.begin(), layer_errs.end());
  std::printf("total cycles: median |err| %.2f %%, worst %.2f %% (%s), %zu cases\n", 100 * med,
              100 * worst, worst_case.c_str(), abs_errs.size());
  size_t within10 = 0;
  for (double le : layer_errs) within10 += le <= 0.10;
  std::printf("per-layer (>=2%% of total): median |err| %.1f %%, %zu/%zu within 10 %%, max %.1f %% "
              "(%s)\n",
              100 * med_layer, within10, layer_errs.size(), 100 * max_layer,
              worst_layer_case.c_str());
  std::printf("SRAM used: median |err| %.1f %%, max %.1f %%; encoded weights median |err| %.1f %%, max %.1f %%\n",
              100 * Median(sram_errs),
              100 * (sram_errs.empty() ? 0 : *std::max_element(sram_errs.begin(), sram_errs.end())),
              100 * Median(enc_errs), 100 * *std::max_element(enc_errs.begin(), enc_errs.end()));
  std::printf("flash/DRAM used: median |err| %.1f %%, max %.1f %%\n", 100 * Median(const_errs),
              100 * *std::max_element(const_errs.begin(), const_errs.end()));
  CHECK(abs_errs.size() == 44);
  // Acceptance: total cycles median within 5 %, every case within 16 %. These records are Vela
  // 5.1.0, which charges operators without a fused activation the sigmoid/LUT output cost (the
  // quirk of doc 4.3); mica models Vela 5.2.0, which does not (the MLIA-configuration test below
  // and the corpus test compare against 5.2.0): ic_resnet8's residual ADDs make it -15.6 %
  // (U65-256) against 5.1.0 while it is within 2.3 % of 5.2.0.
  CHECK(med <= 0.05);
  CHECK(worst <= 0.16);
  // Per-layer (layers >= 2 % of the network): median within 5 %.
  CHECK(med_layer <= 0.05);
  // Memory: encoded weights within 15 % (median 5 %); flash/DRAM used within 15 %
  // (median 5 %); SRAM used median within 10 % (single cases differ where Vela slices weight
  // buffers or its allocator packs better: up to ~100 % on small SRAM figures).
  CHECK(Median(enc_errs) <= 0.05);
  CHECK(*std::max_element(enc_errs.begin(), enc_errs.end()) <= 0.15);
  CHECK(Median(const_errs) <= 0.05);
  CHECK(*std::max_element(const_errs.begin(), const_errs.end()) <= 0.15);
  CHECK(Median(sram_errs) <= 0.10);
}

// mica's built-in Ethos-U profiles against Vela 5.2.0 run the way MLIA runs it for the profile
// of the same name (MLIA's target-profile TOML and vela.ini; test/tools/mlia_vela_reference.py
// wrote test/estimate/mlia_vela_reference.inc): the same configuration, and cycles close.
TEST_CASE("ethos_u built-in profiles match Vela run with MLIA's configuration",
          "[ethos_u][vela][mlia]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipping the MLIA-configuration comparison");
    return;
  }
  std::istringstream reference(kMliaVelaReference);
  const auto rows = ReadCsv(reference);
  REQUIRE(rows.size() == 36);  // 9 MLIA profiles x 4 models
  std::map<std::string, Graph> models;
  std::vector<double> errs;
  for (const auto& r : rows) {
    const std::string model = r.at("model");
    const std::string profile = r.at("profile");
    CAPTURE(model, profile);
    if (!models.count(model)) {
      absl::StatusOr<Graph> g = LoadModel(shared + "/models/mlperf-tiny/" + model + ".tflite");
      REQUIRE(g.ok());
      models[model] = *std::move(g);
    }
    absl::StatusOr<TargetProfile> p = FindTargetProfile(profile);
    REQUIRE(p.ok());
    // Same hardware: system config, memory mode and arena cache size (Vela's "no limit" is its
    // largest address offset, 4 GiB or more; mica's is 0).
    CHECK(p->ethos_u.system.name == r.at("system_config"));
    CHECK(p->ethos_u.memory_mode.name == r.at("memory_mode"));
    const double cache = Num(r, "arena_cache_bytes");
    CHECK(p->ethos_u.memory_mode.arena_cache_bytes ==
          (cache >= 4294967296.0 ? 0 : static_cast<int64_t>(cache)));
    absl::StatusOr<Estimate> e = EstimateEthosU(models[model], *p);
    REQUIRE(e.ok());
    const double err = RelErr(e->total_cycles, Num(r, "total_cycles"));
    std::printf("mlia-config %-28s %-15s vela %8.0f mica %8.0f %+6.1f%%\n", model.c_str(),
                profile.c_str(), Num(r, "total_cycles"), e->total_cycles, 100 * err);
    CHECK(std::fabs(err) <= 0.15);
    errs.push_back(std::fabs(err));
  }
  CHECK(Median(errs) <= 0.05);
}

// Non-default configurations quoted in ethos-u-performance-model.md section 11.4 (Vela 5.1.0,
// Regor): the autoencoder on U55 Deep_Embedded / Sram_Only, VWW with Shared_Sram on U65/U85.
TEST_CASE("ethos_u matches Vela on non-default system configs and memory modes",
          "[ethos_u][vela]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipping");
    return;
  }
  struct Case {
    const char* model;
    const char* accel;
    const char* system;
    const char* mode;
    double vela_total;
  };
  const Case cases[] = {
      {"ad_autoencoder_int8", "ethos-u55-256", "Ethos_U55_Deep_Embedded", "Shared_Sram", 402000},
      {"ad_autoencoder_int8", "ethos-u55-256", "Ethos_U55_High_End_Embedded", "Sram_Only", 41000},
      {"vww_mobilenet_v1_025_int8", "ethos-u65-256", "Ethos_U65_Client_Server", "Shared_Sram",
       121500},
      {"vww_mobilenet_v1_025_int8", "ethos-u85-256", "Ethos_U85_SYS_DRAM_Mid", "Shared_Sram",
       139000},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Graph> g = LoadModel(shared + "/models/mlperf-tiny/" + c.model + ".tflite");
    REQUIRE(g.ok());
    TargetProfile p = ProfileFor(c.accel);
    absl::StatusOr<SystemConfig> sys = VelaSystemConfig(c.system);
    absl::StatusOr<MemoryMode> mode = VelaMemoryMode(c.mode);
    REQUIRE(sys.ok());
    REQUIRE(mode.ok());
    p.ethos_u.system = *sys;
    p.ethos_u.memory_mode = *mode;
    absl::StatusOr<Estimate> e = EstimateEthosU(*g, p);
    REQUIRE(e.ok());
    const double err = RelErr(e->total_cycles, c.vela_total);
    std::printf("%-28s %-15s %-28s %-12s vela %8.0f mica %8.0f %+6.1f%%\n", c.model, c.accel,
                c.system, c.mode, c.vela_total, e->total_cycles, 100 * err);
    CAPTURE(c.model, c.accel, c.system, c.mode);
    CHECK(std::fabs(err) <= 0.15);
  }
}

TEST_CASE("ethos_u handles float models and every Vela system/memory combination",
          "[ethos_u][vela]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared reference dir absent: skipping");
    return;
  }
  for (const char* m : {"kws_ds_cnn_float", "ic_resnet8_float"}) {
    absl::StatusOr<Graph> g = LoadModel(shared + "/models/mlperf-tiny/" + m + ".tflite");
    REQUIRE(g.ok());
    absl::StatusOr<Estimate> e = EstimateEthosU(*g, ProfileFor("ethos-u55-128"));
    REQUIRE(e.ok());
    CHECK(e->npu_ops == 0);
    CHECK(e->cpu_ops == static_cast<int32_t>(g->main().ops.size()));
    for (const OpEstimate& op : e->ops) CHECK(!op.reasons.empty());
  }
  absl::StatusOr<Graph> g = LoadModel(shared + "/models/mlperf-tiny/kws_ds_cnn_int8.tflite");
  REQUIRE(g.ok());
  int valid = 0;
  for (const std::string& sys : VelaSystemConfigNames()) {
    for (const std::string& mode : VelaMemoryModeNames()) {
      const char* accel = sys.find("U55") != std::string::npos   ? "ethos-u55-64"
                          : sys.find("U65") != std::string::npos ? "ethos-u65-512"
                                                                 : "ethos-u85-1024";
      TargetProfile p = ProfileFor(accel);
      p.ethos_u.system = *VelaSystemConfig(sys);
      p.ethos_u.memory_mode = *VelaMemoryMode(mode);
      absl::StatusOr<Estimate> e = EstimateEthosU(*g, p);
      CAPTURE(sys, mode);
      if (!ValidateEthosUConfig(p.ethos_u).ok()) {
        CHECK(!e.ok());  // flash systems cannot hold feature maps
        continue;
      }
      REQUIRE(e.ok());
      ++valid;
      CHECK(e->total_cycles > 0);
      CHECK(e->total_cycles >= e->npu_cycles);
    }
  }
  CHECK(valid > 30);
}

// Hidden diagnostic: MICA_VELA_CASE=model:accelerator prints the per-layer comparison.
TEST_CASE("ethos_u per-layer detail", "[.vela-detail]") {
  const std::string shared = testing::SharedDir();
  const char* c = std::getenv("MICA_VELA_CASE");
  if (shared.empty() || c == nullptr) return;
  const std::string spec = c;
  const std::string model = spec.substr(0, spec.find(':'));
  const std::string accel = spec.substr(spec.find(':') + 1);
  absl::StatusOr<Graph> g = LoadModel(shared + "/models/mlperf-tiny/" + model + ".tflite");
  REQUIRE(g.ok());
  absl::StatusOr<Estimate> e = EstimateEthosU(*g, ProfileFor(accel));
  REQUIRE(e.ok());
  const std::vector<Group> groups = VelaGroups(shared + "/reference/vela/per-layer/" + model +
                                               "__" + accel + "/regor_per-layer.csv");
  size_t gi = 0;
  double tv = 0, tm = 0;
  for (const OpEstimate& op : e->ops) {
    if (op.total_cycles == 0 && op.placement == Placement::kNpu) continue;
    Group v = gi < groups.size() ? groups[gi++] : Group{};
    tv += v.cycles, tm += op.total_cycles;
    std::printf("%-3d %-18s vela %7.0f (npu %7.0f sram %6.0f dram %6.0f fl %6.0f) | mica %7.0f "
                "(npu %7.0f sram %6.0f dram %6.0f fl %6.0f) %+6.1f%%\n",
                op.op_index, op.op_name.c_str(), v.cycles, v.npu, v.sram, v.dram, v.flash,
                op.total_cycles, op.compute_cycles, op.access_cycles[0], op.access_cycles[1],
                op.access_cycles[2] + op.access_cycles[3],
                v.cycles > 0 ? 100 * (op.total_cycles - v.cycles) / v.cycles : 0.0);
  }
  std::printf("total vela %.0f mica %.0f\n", tv, tm);
}

}  // namespace
}  // namespace estimate
}  // namespace mica
