// `mica check --csv FILE`: one row per profile x operator of mica's estimate.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/estimate/render.h"
#include "report/render_internal.h"

namespace mica {
namespace estimate {
namespace {

using render_internal::At;
using render_internal::CsvField;
using render_internal::kAreas;

std::string Number(double v) { return absl::StrCat(static_cast<int64_t>(v + (v >= 0 ? 0.5 : -0.5))); }

}  // namespace

std::string RenderCheckCsv(const CheckReport& report) {
  std::string out =
      "model,profile,backend,op_index,operator,output,placement,kernel,macs,total_cycles,share,"
      "compute_cycles,bottleneck";
  for (MemoryArea a : kAreas) absl::StrAppend(&out, ",", MemoryAreaName(a), "_bytes");
  for (MemoryArea a : kAreas) absl::StrAppend(&out, ",", MemoryAreaName(a), "_access_cycles");
  out += ",reasons\n";
  for (const ProfileReport& r : report.profiles) {
    const Estimate& e = r.mica;
    for (const OpEstimate& o : e.ops) {
      const bool cpu = r.profile.kind == TargetKind::kCortexM || o.placement == Placement::kCpu;
      std::string reasons = absl::StrJoin(o.reasons, "; ");
      if (!o.notes.empty()) {
        absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", absl::StrJoin(o.notes, "; "));
      }
      absl::StrAppend(&out, CsvField(report.model_path), ",", CsvField(r.profile.name), ",",
                      CsvField(e.backend), ",", o.op_index, ",", CsvField(o.op_name), ",",
                      CsvField(o.output_name), ",", cpu ? "cpu" : "npu", ",", CsvField(o.kernel), ",",
                      o.macs, ",", Number(o.total_cycles), ",",
                      absl::StrFormat("%.6f", e.total_cycles > 0 ? o.total_cycles / e.total_cycles
                                                                 : 0.0),
                      ",", Number(o.compute_cycles), ",", BottleneckName(o.bottleneck));
      for (MemoryArea a : kAreas) absl::StrAppend(&out, ",", Number(o.bytes[At(a)]));
      for (MemoryArea a : kAreas) absl::StrAppend(&out, ",", Number(o.access_cycles[At(a)]));
      absl::StrAppend(&out, ",", CsvField(reasons), "\n");
    }
  }
  return out;
}

}  // namespace estimate
}  // namespace mica
