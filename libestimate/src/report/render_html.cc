// `mica check --html FILE`: one self-contained page (no script, no network): the profiles side
// by side, per-layer cycle bars split by what bounds each layer, a memory timeline (live
// activation bytes per operator against each profile's SRAM), and the advice. Charts are
// inline SVG, so the file opens anywhere, prints, and diffs as text.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mica/base/text.h"
#include "mica/estimate/render.h"
#include "mica/estimate/report.h"
#include "mica/model/analysis.h"
#include "report/render_internal.h"

namespace mica {
namespace estimate {
namespace {

using render_internal::At;
using render_internal::ConstantBytes;
using render_internal::FormatName;
using render_internal::kAreas;

// Escapes text for HTML element content and attribute values (valid UTF-8, no controls).
std::string Esc(const std::string& raw) {
  const std::string s = PrintableText(raw);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Int(double v) {
  const auto n = static_cast<int64_t>(std::llround(v));
  std::string digits = absl::StrCat(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Kib(double bytes) { return absl::StrFormat("%.1f KiB", bytes / 1024.0); }

// Colours of the parts of a layer's bar: compute, then each memory area's access cycles.
constexpr const char* kComputeColour = "#4e79a7";
constexpr const char* kAreaColours[] = {"#f28e2b", "#e15759", "#76b7b2", "#59a14f"};

const char* AreaLabel(MemoryArea a) {
  switch (a) {
    case MemoryArea::kSram: return "SRAM";
    case MemoryArea::kDram: return "DRAM";
    case MemoryArea::kOnChipFlash: return "on-chip flash";
    case MemoryArea::kOffChipFlash: return "off-chip flash";
  }
  return "";
}

std::string ProfileTable(const CheckReport& report) {
  std::string out = "<table class=\"num\"><tr><th>metric</th>";
  for (const ProfileReport& r : report.profiles) {
    absl::StrAppend(&out, "<th>", Esc(r.profile.name), "</th>");
  }
  out += "</tr>\n";
  auto row = [&](const std::string& metric, auto cell) {
    absl::StrAppend(&out, "<tr><td>", metric, "</td>");
    for (const ProfileReport& r : report.profiles) absl::StrAppend(&out, "<td>", cell(r), "</td>");
    out += "</tr>\n";
  };
  row("kind", [](const ProfileReport& r) {
    return r.profile.kind == TargetKind::kEthosU ? std::string("Ethos-U") : std::string("Cortex-M");
  });
  row("total cycles", [](const ProfileReport& r) { return Int(r.mica.total_cycles); });
  row("inference time", [](const ProfileReport& r) {
    const double hz = r.mica.clock_hz > 0 ? r.mica.clock_hz : r.profile.clock_hz();
    return hz > 0 ? absl::StrFormat("%.3f ms", 1e3 * r.mica.total_cycles / hz) : std::string("-");
  });
  row("operators on the NPU / CPU", [](const ProfileReport& r) {
    return r.profile.kind == TargetKind::kEthosU
               ? absl::StrCat(r.mica.npu_ops, " / ", r.mica.cpu_ops)
               : absl::StrCat("- / ", r.mica.ops.size());
  });
  row("MACs", [](const ProfileReport& r) { return Int(static_cast<double>(r.mica.macs)); });
  for (MemoryArea a : kAreas) {
    row(absl::StrCat(AreaLabel(a), " used"),
        [a](const ProfileReport& r) { return Kib(r.mica.memory_used_bytes[At(a)]); });
  }
  row("activation arena", [](const ProfileReport& r) {
    return Kib(static_cast<double>(r.mica.arena_bytes));
  });
  row("memory fits", [](const ProfileReport& r) {
    std::string cell;
    for (const MemoryFit& f : MemoryFits(r.mica, r.profile)) {
      if (f.capacity_bytes <= 0) continue;
      absl::StrAppend(&cell, cell.empty() ? "" : "<br>", AreaLabel(f.area), ": ",
                      f.fits() ? "<span class=\"ok\">fits</span>"
                               : "<span class=\"bad\">does not fit</span>",
                      " (", Kib(static_cast<double>(f.used_bytes)), " of ",
                      Kib(static_cast<double>(f.capacity_bytes)), ")");
    }
    return cell.empty() ? std::string("-") : cell;
  });
  out += "</table>\n";
  return out;
}

// One horizontal bar per operator, its length the operator's cycles, split into compute and
// each memory area's access cycles in proportion (the parts show what bounds the layer).
std::string LayerBars(const ProfileReport& r) {
  const Estimate& e = r.mica;
  double longest = 0;
  for (const OpEstimate& o : e.ops) longest = std::max(longest, o.total_cycles);
  const int row_h = 14, label_w = 260, bar_w = 520, value_w = 110;
  const int height = row_h * static_cast<int>(e.ops.size()) + 24;
  std::string svg = absl::StrCat("<svg class=\"bars\" role=\"img\" width=\"",
                                 label_w + bar_w + value_w, "\" height=\"", height,
                                 "\" xmlns=\"http://www.w3.org/2000/svg\"><title>cycles per "
                                 "operator on ",
                                 Esc(r.profile.name), "</title>\n");
  for (size_t i = 0; i < e.ops.size(); ++i) {
    const OpEstimate& o = e.ops[i];
    const int y = static_cast<int>(i) * row_h;
    absl::StrAppend(&svg, "<text x=\"0\" y=\"", y + 11, "\" class=\"lbl\">#", o.op_index, " ",
                    Esc(o.op_name), o.placement == Placement::kCpu && r.profile.kind ==
                    TargetKind::kEthosU ? " (CPU)" : "", "</text>");
    const double len = longest > 0 ? bar_w * o.total_cycles / longest : 0;
    // Parts: compute and each area's access cycles, scaled to the bar's length.
    double parts_sum = o.compute_cycles;
    for (MemoryArea a : kAreas) parts_sum += o.access_cycles[At(a)];
    double x = label_w;
    auto part = [&](double cycles, const char* colour, const std::string& what) {
      if (!(cycles > 0) || !(parts_sum > 0)) return;
      const double w = len * cycles / parts_sum;
      absl::StrAppend(&svg, "<rect x=\"", absl::StrFormat("%.1f", x), "\" y=\"", y + 2,
                      "\" width=\"", absl::StrFormat("%.1f", std::max(w, 0.5)), "\" height=\"",
                      row_h - 4, "\" fill=\"", colour, "\"><title>", what, ": ", Int(cycles),
                      " cycles</title></rect>");
      x += w;
    };
    part(o.compute_cycles, kComputeColour, "compute");
    for (MemoryArea a : kAreas) {
      part(o.access_cycles[At(a)], kAreaColours[At(a)], absl::StrCat(AreaLabel(a), " access"));
    }
    absl::StrAppend(&svg, "<text x=\"", label_w + bar_w + 6, "\" y=\"", y + 11,
                    "\" class=\"val\">", Int(o.total_cycles), "</text>\n");
  }
  // Legend.
  const int ly = height - 8;
  int lx = label_w;
  auto legend = [&](const char* colour, const char* what) {
    absl::StrAppend(&svg, "<rect x=\"", lx, "\" y=\"", ly - 9, "\" width=\"10\" height=\"10\" fill=\"",
                    colour, "\"/><text x=\"", lx + 14, "\" y=\"", ly, "\" class=\"lbl\">", what,
                    "</text>");
    lx += 24 + 7 * static_cast<int>(std::string(what).size());
  };
  legend(kComputeColour, "compute");
  for (MemoryArea a : kAreas) legend(kAreaColours[At(a)], AreaLabel(a));
  svg += "</svg>\n";
  return svg;
}

// Live activation bytes after each operator (from the tensors' lifetimes), with a line at
// each profile's SRAM capacity when the profile states one.
std::string MemoryTimeline(const CheckReport& report) {
  const Subgraph& sg = report.graph->main();
  const std::vector<TensorLifetime> lifetimes = ComputeLifetimes(sg);
  const size_t n = sg.ops.size();
  std::vector<double> live(n, 0);
  for (const TensorLifetime& t : lifetimes) {
    for (int32_t k = std::max(0, t.first_op); k <= t.last_op && k < static_cast<int32_t>(n); ++k) {
      live[static_cast<size_t>(k)] += static_cast<double>(t.bytes);
    }
  }
  double top = 1;
  for (double v : live) top = std::max(top, v);
  struct Line {
    std::string name;
    double bytes;
  };
  std::vector<Line> lines;
  for (const ProfileReport& r : report.profiles) {
    for (const MemoryFit& f : MemoryFits(r.mica, r.profile)) {
      if (f.area == MemoryArea::kSram && f.capacity_bytes > 0) {
        lines.push_back({r.profile.name, static_cast<double>(f.capacity_bytes)});
      }
    }
  }
  // Capacities far above the peak would flatten the chart: show those as a note instead.
  std::string note;
  std::vector<Line> drawn;
  for (const Line& l : lines) {
    if (l.bytes <= 4 * top) {
      drawn.push_back(l);
      top = std::max(top, l.bytes);
    } else {
      absl::StrAppend(&note, note.empty() ? "" : "; ", Esc(l.name), " SRAM ", Kib(l.bytes));
    }
  }
  const int w = 900, h = 220, left = 70, bottom = 20;
  const double step = n > 0 ? static_cast<double>(w - left) / static_cast<double>(n) : 0;
  std::string svg = absl::StrCat("<svg class=\"timeline\" role=\"img\" width=\"", w,
                                 "\" height=\"", h + bottom,
                                 "\" xmlns=\"http://www.w3.org/2000/svg\"><title>live activation "
                                 "bytes per operator</title>\n");
  for (size_t i = 0; i < n; ++i) {
    const double bh = (h - 10) * live[i] / top;
    absl::StrAppend(&svg, "<rect x=\"", absl::StrFormat("%.1f", left + step * i), "\" y=\"",
                    absl::StrFormat("%.1f", h - bh), "\" width=\"",
                    absl::StrFormat("%.1f", std::max(step - 1, 0.5)), "\" height=\"",
                    absl::StrFormat("%.1f", bh), "\" fill=\"#4e79a7\"><title>#", i, " ",
                    Esc(std::string(sg.ops[i].name())), ": ", Kib(live[i]), " live</title></rect>");
  }
  for (const Line& l : drawn) {
    const double y = h - (h - 10) * l.bytes / top;
    absl::StrAppend(&svg, "<line x1=\"", left, "\" x2=\"", w, "\" y1=\"",
                    absl::StrFormat("%.1f", y), "\" y2=\"", absl::StrFormat("%.1f", y),
                    "\" stroke=\"#e15759\" stroke-dasharray=\"4 3\"/><text x=\"", left + 4,
                    "\" y=\"", absl::StrFormat("%.1f", y - 3), "\" class=\"lbl\">", Esc(l.name),
                    " SRAM ", Kib(l.bytes), "</text>");
  }
  absl::StrAppend(&svg, "<text x=\"0\" y=\"12\" class=\"lbl\">", Kib(top), "</text><text x=\"0\" y=\"",
                  h, "\" class=\"lbl\">0</text><text x=\"", left, "\" y=\"", h + 15,
                  "\" class=\"lbl\">operator 0</text><text x=\"", w - 80, "\" y=\"", h + 15,
                  "\" class=\"lbl\">operator ", n > 0 ? n - 1 : 0, "</text></svg>\n");
  if (!note.empty()) absl::StrAppend(&svg, "<p class=\"note\">Above the chart: ", note, ".</p>\n");
  return svg;
}

constexpr const char* kStyle = R"(<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1100px}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}h3{font-size:1em}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;vertical-align:top}
table.num td:not(:first-child){text-align:right}th{background:#f3f3f3}
.ok{color:#2a7f2a}.bad{color:#b00020;font-weight:bold}.lbl{font-size:11px;fill:#333}.val{font-size:11px;fill:#555}
.sev-error{color:#b00020}.sev-warning{color:#9a6700}.sev-info{color:#555}.note{color:#555;font-size:.9em}
code{background:#f3f3f3;padding:0 3px}
</style>)";

}  // namespace

std::string RenderCheckHtml(const CheckReport& report) {
  const Graph& graph = *report.graph;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  absl::StrAppend(&out, "<title>mica check: ", Esc(report.model_path), "</title>\n", kStyle,
                  "</head><body>\n");
  const int64_t macs = AnalyzeCost(graph.main()).total_macs;
  absl::StrAppend(&out, "<h1>mica check: ", Esc(report.model_path), "</h1>\n<p>",
                  FormatName(graph.source_format), ", ", graph.main().ops.size(), " operators, ",
                  Int(static_cast<double>(macs)), " MACs, ",
                  Kib(static_cast<double>(ConstantBytes(graph))), " of constants. mica ",
                  Esc(report.tool_version), ".</p>\n");
  absl::StrAppend(&out, "<h2 id=\"profiles\">Profiles side by side</h2>\n", ProfileTable(report));
  absl::StrAppend(&out, "<h2 id=\"layers\">Cycles per layer</h2>\n<p class=\"note\">Each bar is "
                        "one operator's cycles, split into compute and each memory's access "
                        "cycles in proportion: the largest part is what bounds the layer.</p>\n");
  for (const ProfileReport& r : report.profiles) {
    absl::StrAppend(&out, "<h3>", Esc(r.profile.name), "</h3>\n", LayerBars(r));
  }
  absl::StrAppend(&out, "<h2 id=\"memory\">Memory timeline</h2>\n<p class=\"note\">Activation "
                        "bytes live at each operator (inputs, outputs and everything still "
                        "needed later), against each profile's SRAM.</p>\n",
                  MemoryTimeline(report));
  absl::StrAppend(&out, "<h2 id=\"advice\">Advice</h2>\n");
  for (const ProfileReport& r : report.profiles) {
    absl::StrAppend(&out, "<h3>", Esc(r.profile.name), "</h3>\n<ol>\n");
    for (const Advice& a : r.advice) {
      absl::StrAppend(&out, "<li class=\"sev-", AdviceSeverityName(a.severity), "\">[",
                      AdviceSeverityName(a.severity), ", ", AdviceCategoryName(a.category), "] ",
                      Esc(a.message), "</li>\n");
    }
    for (const std::string& e : r.backend_errors) {
      absl::StrAppend(&out, "<li class=\"sev-error\">backend: ", Esc(e), "</li>\n");
    }
    out += "</ol>\n";
  }
  out += "<p class=\"note\">Estimates from mica's static cost models.</p>\n</body></html>\n";
  return out;
}

}  // namespace estimate
}  // namespace mica
