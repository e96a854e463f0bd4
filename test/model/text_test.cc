#include "mica/base/text.h"

#include <string>

#include "testing/catch.h"

namespace mica {
namespace {

TEST_CASE("ValidUtf8 keeps valid text and replaces every invalid sequence",
          "[text]") {
  CHECK(ValidUtf8("conv2d/Relu6") == "conv2d/Relu6");
  CHECK(ValidUtf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80") ==
        "\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  const std::string r = "\xEF\xBF\xBD";
  CHECK(ValidUtf8("a\xFF"
                  "b") == "a" + r + "b");                // invalid lead byte
  CHECK(ValidUtf8("a\xC3") == "a" + r);                  // truncated at the end
  CHECK(ValidUtf8("\xC0\xAF") == r + r);                 // overlong '/'
  CHECK(ValidUtf8("\xED\xA0\x80") == r + r + r);         // surrogate U+D800
  CHECK(ValidUtf8("\xF4\x90\x80\x80") == r + r + r + r); // above U+10FFFF
  CHECK(ValidUtf8("\xE2\x82"
                  "x") == r + r + "x"); // bad continuation
}

TEST_CASE("PrintableText shows control characters instead of sending them",
          "[text]") {
  CHECK(PrintableText("input_1") == "input_1");
  CHECK(PrintableText("\x1b[2Jclear") == "\\x1b[2Jclear");
  CHECK(PrintableText("a\rb\nc\td\x07") == "a\\x0db\\x0ac\\x09d\\x07");
  CHECK(PrintableText("del\x7f") == "del\\x7f");
  CHECK(PrintableText("c1 \xC2\x9B"
                      "31m") == "c1 \\x9b31m"); // C1 CSI
  CHECK(PrintableText("\xC3\xA9") == "\xC3\xA9");
  CHECK(PrintableText("bad\xFF") == "bad\xEF\xBF\xBD");
}

} // namespace
} // namespace mica
