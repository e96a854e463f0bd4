// Unit tests of the JSON writer and text tables the reports are written with.
#include <string>

#include "mica/estimate/json_writer.h"
#include "mica/estimate/text_table.h"
#include "testing/catch.h"

namespace mica {
namespace {

TEST_CASE("JsonQuote escapes quotes, backslashes and control characters") {
  CHECK(JsonQuote("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(JsonQuote("\n\t\r\b\f") == "\"\\n\\t\\r\\b\\f\"");
  CHECK(JsonQuote(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
  CHECK(JsonQuote("caf\xc3\xa9") == "\"caf\xc3\xa9\"");  // UTF-8 passes through
  CHECK(JsonQuote(std::string("a\0b", 3)) == "\"a\\u0000b\"");
}

TEST_CASE("JsonDouble is fixed-format and maps non-finite to null") {
  CHECK(JsonDouble(0.5) == "0.5");
  CHECK(JsonDouble(-0.0) == "0");
  CHECK(JsonDouble(1.0 / 3.0) == "0.333333333");
  CHECK(JsonDouble(1.0 / 3.0, 3) == "0.333");
  CHECK(JsonDouble(1e-7) == "1e-07");
  CHECK(JsonDouble(1.0 / 0.0) == "null");
  CHECK(JsonDouble(0.0 / 0.0) == "null");
}

TEST_CASE("JsonWriter pretty-prints with keys in written order") {
  JsonWriter w;
  w.BeginObject();
  w.Key("z").Int(-3);
  w.Key("a").String("x");
  w.Key("shape").BeginArray(true).Int(1).Int(49).Int(10).EndArray();
  w.Key("empty").BeginArray().EndArray();
  w.Key("list").BeginArray().BeginObject().Key("k").Bool(true).EndObject().Null().EndArray();
  w.Key("f").Fixed(-0.0001, 2);
  w.Key("u").UInt(18446744073709551615ull);
  w.EndObject();
  CHECK(w.complete());
  CHECK(w.str() ==
        "{\n"
        "  \"z\": -3,\n"
        "  \"a\": \"x\",\n"
        "  \"shape\": [1, 49, 10],\n"
        "  \"empty\": [],\n"
        "  \"list\": [\n"
        "    {\n"
        "      \"k\": true\n"
        "    },\n"
        "    null\n"
        "  ],\n"
        "  \"f\": 0.00,\n"
        "  \"u\": 18446744073709551615\n"
        "}");
}

TEST_CASE("JsonWriter compact mode has no whitespace") {
  JsonWriter w(0);
  w.BeginObject().Key("a").BeginArray().Int(1).Int(2).EndArray().Key("b").Double(2.5);
  w.Key("o").BeginObject(true).Key("x").Int(1).Key("y").Int(2).EndObject();
  w.EndObject();
  CHECK(w.str() == "{\"a\":[1,2],\"b\":2.5,\"o\":{\"x\":1,\"y\":2}}");
}

TEST_CASE("JsonWriter inline object") {
  JsonWriter w;
  w.BeginArray().BeginObject(true).Key("x").Int(1).Key("y").BeginArray().Int(2).EndArray()
      .EndObject().EndArray();
  CHECK(w.str() == "[\n  {\"x\": 1, \"y\": [2]}\n]");
}

TEST_CASE("FormatInt groups thousands") {
  CHECK(FormatInt(0, true) == "0");
  CHECK(FormatInt(999, true) == "999");
  CHECK(FormatInt(1000, true) == "1,000");
  CHECK(FormatInt(2656768, true) == "2,656,768");
  CHECK(FormatInt(-1234567, true) == "-1,234,567");
  CHECK(FormatInt(-123, true) == "-123");
  CHECK(FormatInt(1234567, false) == "1234567");
  CHECK(FormatFixed(1.005, 1) == "1.0");
  CHECK(FormatFixed(-0.001, 2) == "0.00");
  CHECK(FormatFixed(-2.5, 2) == "-2.50");
}

TEST_CASE("Table aligns columns and right-aligns numbers") {
  Table t;
  t.AddColumn("op");
  t.AddColumn("MACs", Align::kRight);
  t.AddColumn("note");
  t.AddRow({"CONV_2D", "320,000", "first"});
  t.AddRow({"FC", "768"});
  t.AddSeparator();
  t.AddRow({"total", "320,768", ""});
  CHECK(t.Render() ==
        "op          MACs  note\n"
        "-----------------------\n"
        "CONV_2D  320,000  first\n"
        "FC           768\n"
        "-----------------------\n"
        "total    320,768\n");
  CHECK(t.Render(2).rfind("  op ", 0) == 0);
}

TEST_CASE("Table counts UTF-8 code points for width") {
  Table t;
  t.AddColumn("shape");
  t.AddColumn("n", Align::kRight);
  t.AddRow({"1×49", "1"});
  t.AddRow({"1x490", "22"});
  CHECK(t.Render() ==
        "shape   n\n"
        "---------\n"
        "1×49    1\n"
        "1x490  22\n");
}

}  // namespace
}  // namespace mica
