#include "mica/estimate/json_writer.h"

#include <cmath>
#include <cstdio>

#include "mica/base/check.h"
#include "mica/base/text.h"

namespace mica {

std::string JsonQuote(std::string_view raw) {
  // Strings from model files may hold any bytes; JSON must be valid UTF-8.
  const std::string s = ValidUtf8(raw);
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

std::string JsonDouble(double v, int significant) {
  if (!std::isfinite(v)) return "null";
  if (v == 0.0) return "0";
  if (significant < 1) significant = 1;
  if (significant > 17) significant = 17;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", significant, v);
  return buf;
}

void JsonWriter::Newline(size_t depth) {
  if (indent_ <= 0) return;
  out_ += '\n';
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (stack_.empty()) {
    MICA_CHECK(!wrote_top_);
    wrote_top_ = true;
    return;
  }
  Level& l = stack_.back();
  if (l.is_object) {
    MICA_CHECK(l.expecting_value);  // every object value needs a Key() first
    l.expecting_value = false;
    return;
  }
  if (l.count > 0) out_ += (l.inline_items || indent_ <= 0) ? (indent_ > 0 ? ", " : ",") : ",";
  if (!l.inline_items) Newline(stack_.size());
  ++l.count;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  MICA_CHECK(!stack_.empty() && stack_.back().is_object && !stack_.back().expecting_value);
  Level& l = stack_.back();
  if (l.count > 0) out_ += (l.inline_items && indent_ > 0) ? ", " : ",";
  if (!l.inline_items) Newline(stack_.size());
  ++l.count;
  out_ += JsonQuote(key);
  out_ += indent_ > 0 ? ": " : ":";
  l.expecting_value = true;
  return *this;
}

JsonWriter& JsonWriter::Begin(bool is_object, bool inline_items) {
  BeforeValue();
  out_ += is_object ? '{' : '[';
  // A container inside an inline container is inline too.
  const bool parent_inline = !stack_.empty() && stack_.back().inline_items;
  stack_.push_back(Level{is_object, inline_items || parent_inline});
  return *this;
}

JsonWriter& JsonWriter::End(bool is_object) {
  MICA_CHECK(!stack_.empty() && stack_.back().is_object == is_object &&
             !stack_.back().expecting_value);
  const Level l = stack_.back();
  stack_.pop_back();
  if (l.count > 0 && !l.inline_items) Newline(stack_.size());
  out_ += is_object ? '}' : ']';
  return *this;
}

JsonWriter& JsonWriter::BeginObject(bool inline_items) { return Begin(true, inline_items); }
JsonWriter& JsonWriter::EndObject() { return End(true); }
JsonWriter& JsonWriter::BeginArray(bool inline_items) { return Begin(false, inline_items); }
JsonWriter& JsonWriter::EndArray() { return End(false); }

JsonWriter& JsonWriter::String(std::string_view v) { return Raw(JsonQuote(v)); }
JsonWriter& JsonWriter::Int(int64_t v) { return Raw(std::to_string(v)); }
JsonWriter& JsonWriter::UInt(uint64_t v) { return Raw(std::to_string(v)); }
JsonWriter& JsonWriter::Double(double v, int significant) {
  return Raw(JsonDouble(v, significant));
}
JsonWriter& JsonWriter::Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return Null();
  if (decimals < 0) decimals = 0;
  if (decimals > 30) decimals = 30;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);  // -0.00
  return Raw(s);
}
JsonWriter& JsonWriter::Bool(bool v) { return Raw(v ? "true" : "false"); }
JsonWriter& JsonWriter::Null() { return Raw("null"); }
JsonWriter& JsonWriter::Raw(std::string_view json) {
  BeforeValue();
  out_.append(json.data(), json.size());
  return *this;
}

}  // namespace mica
