#include "mica/estimate/text_table.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "mica/base/check.h"
#include "mica/base/text.h"

namespace mica {
namespace {

// Display width: counts UTF-8 code points, not bytes, so "×" or "—" align.
size_t DisplayWidth(const std::string& s) {
  size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace

std::string FormatInt(int64_t v, bool thousands) {
  std::string digits = std::to_string(v);
  if (!thousands) return digits;
  const bool neg = !digits.empty() && digits[0] == '-';
  if (neg) digits.erase(0, 1);
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    const size_t left = n - 1 - i;
    if (left > 0 && left % 3 == 0) out += ',';
  }
  return neg ? "-" + out : out;
}

std::string FormatFixed(double v, int decimals) {
  decimals = std::clamp(decimals, 0, 30);
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

void Table::AddColumn(std::string header, Align align) {
  MICA_CHECK(rows_.empty());
  columns_.push_back(Column{std::move(header), align});
}

void Table::AddRow(std::vector<std::string> cells) {
  MICA_CHECK(cells.size() <= columns_.size());
  cells.resize(columns_.size());
  // Cells may carry names from model files: never send their control bytes to a terminal.
  for (std::string& cell : cells) cell = PrintableText(cell);
  rows_.push_back(Row{false, std::move(cells)});
}

void Table::AddSeparator() { rows_.push_back(Row{true, {}}); }

std::string Table::Render(int indent) const {
  std::vector<size_t> width(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) width[c] = DisplayWidth(columns_[c].header);
  for (const Row& r : rows_) {
    for (size_t c = 0; c < r.cells.size(); ++c) {
      width[c] = std::max(width[c], DisplayWidth(r.cells[c]));
    }
  }
  const std::string lead(static_cast<size_t>(std::max(indent, 0)), ' ');
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out = lead;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out += "  ";
      const size_t pad = width[c] - DisplayWidth(cells[c]);
      if (columns_[c].align == Align::kRight) {
        out.append(pad, ' ');
        out += cells[c];
      } else {
        out += cells[c];
        out.append(pad, ' ');
      }
    }
    while (out.size() > lead.size() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  size_t total = 0;
  for (size_t c = 0; c < columns_.size(); ++c) total += width[c] + (c > 0 ? 2 : 0);
  const std::string rule = lead + std::string(total, '-') + "\n";

  std::vector<std::string> headers;
  for (const Column& col : columns_) headers.push_back(col.header);
  std::string out = line(headers) + rule;
  for (const Row& r : rows_) out += r.separator ? rule : line(r.cells);
  return out;
}

}  // namespace mica
