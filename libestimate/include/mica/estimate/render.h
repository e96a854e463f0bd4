// mica estimate — the `mica check` report, rendered for people (aligned text tables) or for
// programs (one JSON document, schema "mica.check/1", documented in libestimate/REPORT.md).
//
// The CLI fills a CheckReport with one ProfileReport per target profile and prints one of the
// renderings; library users get byte-for-byte the same output:
//
//   mica::estimate::CheckReport report{"kws.tflite", &graph, {}, true, true, "0.1.0"};
//   MICA_ASSIGN_OR_RETURN(mica::estimate::TargetProfile p, FindTargetProfile("ethos-u55-256"));
//   MICA_ASSIGN_OR_RETURN(mica::estimate::Estimate e, EstimateModel(graph, p));
//   report.profiles.push_back({p, e, {}, {}, Advise(graph, p, e)});
//   std::cout << mica::estimate::RenderCheckText(report);
#ifndef MICA_ESTIMATE_RENDER_H_
#define MICA_ESTIMATE_RENDER_H_

#include <string>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/report.h"
#include "mica/estimate/target.h"
#include "mica/model/graph.h"

namespace mica {
namespace estimate {

// The JSON schema name and version RenderCheckJson writes.
inline constexpr char kCheckSchema[] = "mica.check/1";

// The operators listed under "Top operators by cycles" (text) and `top_operators` (JSON).
inline constexpr int kCheckTopOperators = 5;

// Everything the report says about one target profile.
// Figures measured by running the model on a simulator (`mica check --backend qemu`): exact
// instruction counts, not cycles, printed beside mica's estimate.
struct MeasuredOp {
  int32_t index = -1;        // operator index in the model
  std::string name;          // operator type
  int64_t instructions = 0;
  double estimate_instructions = 0;  // mica's estimate (compute cycles, no flash wait states)
};
struct Measurement {
  std::string backend;   // "qemu"
  std::string board;     // "mps3-an547"
  std::string build;     // runner firmware build, e.g. "m55-mve"
  std::string kernels;   // kernel variant of the plan: "mve", "dsp", "scalar"
  std::string inputs;    // what the inputs were
  int64_t total_instructions = 0;  // one inference
  double estimate_instructions = 0;  // mica's estimate: sum of the operators' compute cycles
  int64_t arena_bytes = 0;         // the device runtime's arena
  int64_t plan_bytes = 0;
  std::vector<MeasuredOp> ops;
};

struct ProfileReport {
  TargetProfile profile;
  Estimate mica;                            // mica's own estimate (always present)
  std::vector<Estimate> extra;              // other backends' figures (vela), shown beside it
  std::vector<std::string> backend_errors;  // why an extra backend produced nothing
  std::vector<Advice> advice;               // Advise(graph, profile, mica)
  std::vector<Measurement> measured = {};   // simulator runs (--backend qemu), if any
};

// One `mica check` report: a model against one or more profiles.
struct CheckReport {
  std::string model_path;                 // as given by the user, printed verbatim
  const Graph* graph = nullptr;           // the model; not owned, must outlive the rendering
  std::vector<ProfileReport> profiles;    // in command-line order
  bool compatibility = true;              // print the operator placement section
  bool performance = false;               // print cycles, memory and top operators
  std::string tool_version;               // JSON `mica_version`
  bool per_layer = false;                 // text: also every operator's row, per profile
};

// Returns the human-readable report: model summary, target table, then (as requested) the
// operator placement table, the performance table and top operators, notes, and advice.
// Every line ends in '\n'. `report.graph` must be set.
std::string RenderCheckText(const CheckReport& report);

// Returns one CSV row per profile x operator (with a header line): the per-layer figures of
// mica's estimate, for spreadsheets and sweeps. Columns are documented in REPORT.md.
std::string RenderCheckCsv(const CheckReport& report);

// Many models at once (`mica check A B ... | --models-from FILE`): one row per model x profile.
inline constexpr const char* kSweepSchema = "mica.check.row/1";
struct SweepRow {
  std::string model;    // path as given
  std::string profile;  // profile name
  bool ok = false;      // false: `error` says why (unreadable model, estimate failed)
  std::string error;
  double total_cycles = 0;
  double clock_hz = 0;
  int64_t macs = 0;
  int32_t npu_ops = 0, cpu_ops = 0;
  PerArea memory_used_bytes{};
  int64_t arena_bytes = 0;
  bool fits = true;  // every memory with a known capacity holds what the model needs
};
SweepRow MakeSweepRow(const std::string& model, const TargetProfile& profile, const Estimate& e);
SweepRow FailedSweepRow(const std::string& model, const std::string& profile,
                        const std::string& error);
// An aligned table with a final count line; JSON Lines (one compact object per row, schema
// kSweepSchema); CSV with a header. Columns and keys are documented in REPORT.md.
std::string RenderSweepText(const std::vector<SweepRow>& rows);
std::string RenderSweepJsonl(const std::vector<SweepRow>& rows);
std::string RenderSweepCsv(const std::vector<SweepRow>& rows);

// Returns the report as one self-contained HTML page (inline SVG charts, no script or network):
// profiles side by side, per-layer cycle bars split by bottleneck, a memory timeline against
// each profile's SRAM, and the advice. `report.graph` must be set.
std::string RenderCheckHtml(const CheckReport& report);

// Returns the report as one pretty-printed JSON document (schema kCheckSchema) ending in '\n'.
// `report.graph` must be set.
std::string RenderCheckJson(const CheckReport& report);

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_RENDER_H_
