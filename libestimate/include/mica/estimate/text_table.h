// mica — aligned plain-text tables for human-readable reports and command output.
//
// Columns have a header and an alignment; cells are strings (format numbers with FormatInt /
// FormatFixed). Rendering pads every column to its widest cell, separates columns with two
// spaces, underlines the header with dashes and trims trailing spaces.
//
//   mica::Table t;
//   t.AddColumn("op");
//   t.AddColumn("MACs", mica::Align::kRight);
//   t.AddRow({"CONV_2D", mica::FormatInt(320000, /*thousands=*/true)});
//   t.AddSeparator();
//   t.AddRow({"total", "320,000"});
//   std::cout << t.Render();
#ifndef MICA_ESTIMATE_TEXT_TABLE_H_
#define MICA_ESTIMATE_TEXT_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace mica {

enum class Align { kLeft, kRight };

// Returns `v` in decimal, with ',' every three digits when `thousands` is set.
std::string FormatInt(int64_t v, bool thousands = false);

// Returns `v` with exactly `decimals` digits after the point ("-0.00" prints as "0.00").
std::string FormatFixed(double v, int decimals);

class Table {
 public:
  // Appends a column. Columns must all be added before the first row.
  void AddColumn(std::string header, Align align = Align::kLeft);
  // Appends a row; missing trailing cells are blank, extra cells are an error (MICA_CHECK).
  void AddRow(std::vector<std::string> cells);
  // Appends a dashed rule spanning the table (e.g. before a totals row).
  void AddSeparator();

  size_t num_columns() const { return columns_.size(); }
  size_t num_rows() const { return rows_.size(); }

  // Returns the table text, one line per row, each ending in '\n'. `indent` spaces lead every
  // line.
  std::string Render(int indent = 0) const;

 private:
  struct Column {
    std::string header;
    Align align;
  };
  struct Row {
    bool separator = false;
    std::vector<std::string> cells;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

}  // namespace mica

#endif  // MICA_ESTIMATE_TEXT_TABLE_H_
