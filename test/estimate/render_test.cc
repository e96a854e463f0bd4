// The check-report renderers as a library user calls them: sections follow the flags, the JSON
// is one complete document of schema mica.check/1, and the header line names the model.
// Byte-for-byte output is pinned by test/cli/check_golden_test.cc.
#include "mica/estimate/render.h"

#include <string>

#include "estimate/ethos_u_net.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/report.h"
#include "mica/estimate/target.h"
#include "testing/catch.h"

namespace mica {
namespace estimate {
namespace {

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

CheckReport ReportFor(const Net& n, bool performance) {
  CheckReport report;
  report.model_path = "conv.tflite";
  report.graph = &n.graph();
  report.compatibility = true;
  report.performance = performance;
  report.tool_version = "9.9.9";
  for (const char* name : {"ethos-u55-128", "cortex-m4"}) {
    absl::StatusOr<TargetProfile> p = FindTargetProfile(name);
    REQUIRE(p.ok());
    absl::StatusOr<Estimate> e = EstimateModel(n.graph(), *p);
    REQUIRE(e.ok());
    report.profiles.push_back({*p, *e, {}, {}, Advise(n.graph(), *p, *e)});
  }
  return report;
}

TEST_CASE("RenderCheckText prints the sections the flags ask for", "[report]") {
  Net n = ConvNet(16, 16, 8, 16, 3, Activation::kRelu, 5);
  const std::string compat = RenderCheckText(ReportFor(n, false));
  CHECK(compat.rfind("Model: conv.tflite (", 0) == 0);
  CHECK(Has(compat, "1 operators"));
  CHECK(Has(compat, "Target profiles"));
  CHECK(Has(compat, "Operators (placement"));
  CHECK(Has(compat, "ethos-u55-128: 1 of 1 operators on the NPU"));
  CHECK(Has(compat, "Advice for cortex-m4"));
  CHECK_FALSE(Has(compat, "Performance (cycles"));
  const std::string perf = RenderCheckText(ReportFor(n, true));
  CHECK(Has(perf, "Performance (cycles"));
  CHECK(Has(perf, "Top operators by cycles: ethos-u55-128"));
  CHECK(Has(perf, "Top operators by cycles: cortex-m4"));
  CHECK(perf.back() == '\n');
}

TEST_CASE("RenderCheckJson writes one mica.check/1 document", "[report]") {
  Net n = ConvNet(16, 16, 8, 16, 3, Activation::kRelu, 5);
  const std::string compat = RenderCheckJson(ReportFor(n, false));
  CHECK(compat.rfind("{\n  \"schema\": \"mica.check/1\",\n  \"mica_version\": \"9.9.9\",", 0) == 0);
  CHECK(Has(compat, "\"path\": \"conv.tflite\""));
  CHECK(Has(compat, "\"performance_requested\": false"));
  CHECK_FALSE(Has(compat, "\"top_operators\""));
  CHECK(compat.substr(compat.size() - 2) == "}\n");
  const std::string perf = RenderCheckJson(ReportFor(n, true));
  CHECK(Has(perf, "\"performance_requested\": true"));
  CHECK(Has(perf, "\"top_operators\""));
  CHECK(Has(perf, "\"other_backends\": []"));
  CHECK(std::string(kCheckSchema) == "mica.check/1");
}

}  // namespace
}  // namespace estimate
}  // namespace mica
