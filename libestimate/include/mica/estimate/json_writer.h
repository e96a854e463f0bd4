// mica — a tiny streaming JSON writer for machine-readable reports (`mica check --json`, the
// other commands' --json output).
//
// Output is stable: keys appear in the order written, floats use a fixed printf format, and
// strings are escaped per RFC 8259 (control characters as \u00XX, valid UTF-8 passed through,
// invalid UTF-8 replaced by U+FFFD so the document is always valid).
// Nesting mistakes (a value without a key inside an object, unbalanced End*) are programming
// errors and abort via MICA_CHECK.
//
//   mica::JsonWriter w;                 // pretty, 2-space indent; JsonWriter(0) is compact
//   w.BeginObject();
//   w.Key("ops").Int(13);
//   w.Key("shape").BeginArray(/*inline_items=*/true).Int(1).Int(49).EndArray();
//   w.Key("scale").Double(0.0123);      // "%.9g"; NaN/Inf become null
//   w.EndObject();
//   std::cout << w.str() << "\n";
#ifndef MICA_ESTIMATE_JSON_WRITER_H_
#define MICA_ESTIMATE_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mica {

// Returns `s` as a quoted JSON string literal.
std::string JsonQuote(std::string_view s);

// Returns `v` formatted with printf "%.*g" (`significant` digits), or "null" when not finite.
// "-0" is printed as "0" so outputs compare equal across platforms.
std::string JsonDouble(double v, int significant = 9);

class JsonWriter {
 public:
  // `indent` spaces per nesting level; 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  // Starts an object or array. With `inline_items`, its items stay on one line even when
  // pretty-printing (used for shapes and short number lists).
  JsonWriter& BeginObject(bool inline_items = false);
  JsonWriter& EndObject();
  JsonWriter& BeginArray(bool inline_items = false);
  JsonWriter& EndArray();

  // Writes an object key; the next call must write its value.
  JsonWriter& Key(std::string_view key);

  JsonWriter& String(std::string_view v);
  JsonWriter& Int(int64_t v);
  JsonWriter& UInt(uint64_t v);
  // Writes `v` as JsonDouble(v, significant).
  JsonWriter& Double(double v, int significant = 9);
  // Writes `v` with exactly `decimals` digits after the point ("%.*f"), or null if not finite.
  JsonWriter& Fixed(double v, int decimals);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // Writes pre-formatted JSON text as a value (caller guarantees it is valid JSON).
  JsonWriter& Raw(std::string_view json);

  // Returns the document written so far (complete once every Begin* has its End*).
  const std::string& str() const { return out_; }
  // Returns true when all containers are closed and one top-level value was written.
  bool complete() const { return stack_.empty() && wrote_top_; }

 private:
  struct Level {
    bool is_object;
    bool inline_items;
    int count = 0;
    bool expecting_value = false;  // objects: a key was written
  };
  void BeforeValue();
  void Newline(size_t depth);
  JsonWriter& Begin(bool is_object, bool inline_items);
  JsonWriter& End(bool is_object);

  int indent_;
  std::string out_;
  std::vector<Level> stack_;
  bool wrote_top_ = false;
};

}  // namespace mica

#endif  // MICA_ESTIMATE_JSON_WRITER_H_
