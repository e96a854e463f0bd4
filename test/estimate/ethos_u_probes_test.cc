// mica against Vela 5.2 on the probe graphs of test/corpus/probes: one- or two-operator models
// that each isolate one behaviour of Vela (see make_probes.py there). A probe with a tolerance
// in the manifest must be within it of Vela's total cycles on every profile and configuration
// recorded; a known gap (no tolerance) must still be off by more than 1 % somewhere (once
// mica models it, the manifest must say so).
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "estimate/corpus_vela.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace {

TEST_CASE("ethos_u estimate against Vela on the probe graphs", "[ethos_u][vela][probes]") {
  const std::string dir = testing::SourceDir() + "/test/corpus/probes";
  const std::vector<corpus::Row> manifest = corpus::ReadCsvFile(dir + "/manifest.csv");
  const std::vector<corpus::Row> rows = corpus::ReadCsvFile(dir + "/reference/vela/totals.csv");
  REQUIRE(!manifest.empty());
  REQUIRE(!rows.empty());
  std::map<std::string, double> tolerance;  // fraction; < 0 for a known gap
  for (const corpus::Row& m : manifest) {
    const std::string t = corpus::Str(m, "tolerance");
    tolerance[corpus::Str(m, "name")] = t.empty() ? -1.0 : std::stod(t) / 100.0;
  }
  std::map<std::string, double> worst;  // per probe, the largest |error|
  std::map<std::string, absl::StatusOr<Graph>> graphs;  // each probe loaded once
  int compared = 0;
  for (const corpus::Row& r : rows) {
    if (corpus::Str(r, "status") != "ok") continue;
    const std::string name = corpus::Str(r, "model");
    CAPTURE(name, corpus::Str(r, "profile"), corpus::Str(r, "config"));
    REQUIRE(tolerance.count(name) == 1);
    auto loaded = graphs.find(name);
    if (loaded == graphs.end()) {
      loaded = graphs.emplace(name, LoadModel(dir + "/" + corpus::Str(r, "model_path"))).first;
    }
    const absl::StatusOr<Graph>& g = loaded->second;
    REQUIRE(g.ok());
    absl::StatusOr<TargetProfile> p = corpus::ProfileForRow(r);
    REQUIRE(p.ok());
    absl::StatusOr<Estimate> e = EstimateEthosU(*g, *p);
    REQUIRE(e.ok());
    const double vela = corpus::Field(r, "total_cycles");
    const double err = e->total_cycles / vela - 1.0;
    CAPTURE(vela, e->total_cycles);
    worst[name] = std::max(worst[name], std::fabs(err));
    if (tolerance[name] >= 0) CHECK(std::fabs(err) <= tolerance[name]);
    ++compared;
  }
  CHECK(compared >= static_cast<int>(manifest.size()) * 11);
  for (const auto& [name, w] : worst) {
    CAPTURE(name, w);
    std::printf("probe %-28s worst |error| %6.1f %% (%s)\n", name.c_str(), 100.0 * w,
                tolerance[name] >= 0 ? "modelled" : "known gap");
    if (tolerance[name] < 0) CHECK(w > 0.01);
  }
}

}  // namespace
}  // namespace estimate
}  // namespace mica
