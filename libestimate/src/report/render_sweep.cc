// Many models at once: one summary row per model x profile, as an aligned table, JSON Lines
// or CSV (documented in REPORT.md, "Sweeps").
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mica/estimate/json_writer.h"
#include "mica/estimate/render.h"
#include "mica/estimate/report.h"
#include "mica/estimate/text_table.h"
#include "report/render_internal.h"

namespace mica {
namespace estimate {

using render_internal::At;
using render_internal::CsvField;
using render_internal::kAreas;

SweepRow MakeSweepRow(const std::string& model, const TargetProfile& profile, const Estimate& e) {
  SweepRow row;
  row.model = model;
  row.profile = profile.name;
  row.ok = true;
  row.total_cycles = e.total_cycles;
  row.clock_hz = e.clock_hz > 0 ? e.clock_hz : profile.clock_hz();
  row.macs = e.macs;
  row.npu_ops = profile.kind == TargetKind::kEthosU ? e.npu_ops : 0;
  row.cpu_ops = profile.kind == TargetKind::kEthosU ? e.cpu_ops : static_cast<int32_t>(e.ops.size());
  row.memory_used_bytes = e.memory_used_bytes;
  row.arena_bytes = e.arena_bytes;
  row.fits = true;
  for (const MemoryFit& f : MemoryFits(e, profile)) row.fits = row.fits && f.fits();
  return row;
}

SweepRow FailedSweepRow(const std::string& model, const std::string& profile,
                        const std::string& error) {
  SweepRow row;
  row.model = model;
  row.profile = profile;
  row.ok = false;
  row.error = error;
  return row;
}

std::string RenderSweepText(const std::vector<SweepRow>& rows) {
  Table t;
  t.AddColumn("model");
  t.AddColumn("profile");
  t.AddColumn("cycles", Align::kRight);
  t.AddColumn("ms", Align::kRight);
  t.AddColumn("NPU/CPU ops", Align::kRight);
  t.AddColumn("SRAM KiB", Align::kRight);
  t.AddColumn("arena KiB", Align::kRight);
  t.AddColumn("fits");
  int failed = 0;
  for (const SweepRow& r : rows) {
    std::string model = r.model;
    if (model.size() > 48) model = "..." + model.substr(model.size() - 45);
    if (!r.ok) {
      ++failed;
      std::string error = r.error.size() > 80 ? r.error.substr(0, 77) + "..." : r.error;
      t.AddRow({model, r.profile, "-", "-", "-", "-", "-", "error: " + error});
      continue;
    }
    t.AddRow({model, r.profile, FormatInt(static_cast<int64_t>(r.total_cycles + 0.5), true),
              r.clock_hz > 0 ? FormatFixed(1e3 * r.total_cycles / r.clock_hz, 3) : "-",
              absl::StrCat(r.npu_ops, "/", r.cpu_ops),
              FormatFixed(r.memory_used_bytes[At(MemoryArea::kSram)] / 1024.0, 1),
              FormatFixed(static_cast<double>(r.arena_bytes) / 1024.0, 1),
              r.fits ? "yes" : "NO"});
  }
  std::string out = t.Render(0);
  absl::StrAppend(&out, rows.size(), " rows", failed ? absl::StrCat(", ", failed, " failed") : "",
                  "\n");
  return out;
}

std::string RenderSweepJsonl(const std::vector<SweepRow>& rows) {
  std::string out;
  for (const SweepRow& r : rows) {
    JsonWriter w(0);
    w.BeginObject();
    w.Key("schema").String(kSweepSchema);
    w.Key("model").String(r.model);
    w.Key("profile").String(r.profile);
    w.Key("ok").Bool(r.ok);
    if (!r.ok) {
      w.Key("error").String(r.error);
    } else {
      w.Key("total_cycles").Double(r.total_cycles, 12);
      w.Key("clock_hz").Double(r.clock_hz, 12);
      w.Key("inference_seconds").Double(r.clock_hz > 0 ? r.total_cycles / r.clock_hz : 0);
      w.Key("macs").Int(r.macs);
      w.Key("npu_ops").Int(r.npu_ops);
      w.Key("cpu_ops").Int(r.cpu_ops);
      w.Key("memory_used_bytes").BeginObject(true);
      for (MemoryArea a : kAreas) w.Key(MemoryAreaName(a)).Double(r.memory_used_bytes[At(a)], 12);
      w.EndObject();
      w.Key("arena_bytes").Int(r.arena_bytes);
      w.Key("fits").Bool(r.fits);
    }
    w.EndObject();
    absl::StrAppend(&out, w.str(), "\n");
  }
  return out;
}

std::string RenderSweepCsv(const std::vector<SweepRow>& rows) {
  std::string out = "model,profile,ok,total_cycles,clock_hz,inference_seconds,macs,npu_ops,cpu_ops";
  for (MemoryArea a : kAreas) absl::StrAppend(&out, ",", MemoryAreaName(a), "_used_bytes");
  out += ",arena_bytes,fits,error\n";
  for (const SweepRow& r : rows) {
    absl::StrAppend(&out, CsvField(r.model), ",", CsvField(r.profile), ",", r.ok ? "true" : "false");
    if (r.ok) {
      absl::StrAppend(&out, ",", absl::StrFormat("%.0f", r.total_cycles), ",",
                      absl::StrFormat("%.0f", r.clock_hz), ",",
                      absl::StrFormat("%.9g", r.clock_hz > 0 ? r.total_cycles / r.clock_hz : 0),
                      ",", r.macs, ",", r.npu_ops, ",", r.cpu_ops);
      for (MemoryArea a : kAreas) {
        absl::StrAppend(&out, ",", absl::StrFormat("%.0f", r.memory_used_bytes[At(a)]));
      }
      absl::StrAppend(&out, ",", r.arena_bytes, ",", r.fits ? "true" : "false", ",\n");
    } else {
      // Empty figures (6 counts, one per memory area, arena, fits), then the error.
      out += std::string(6 + std::size(kAreas) + 2, ',');
      absl::StrAppend(&out, ",", CsvField(r.error), "\n");
    }
  }
  return out;
}

}  // namespace estimate
}  // namespace mica
