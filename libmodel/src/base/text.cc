#include "mica/base/text.h"

#include <cstdint>
#include <cstdio>

namespace mica {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when it is
// invalid. Sets `cp` to the code point.
size_t DecodeOne(std::string_view s, size_t i, uint32_t *cp) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t len;
  uint32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, *cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, *cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, *cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80)
      return 0;
    *cp = (*cp << 6) | (b & 0x3F);
  }
  if (*cp < min || *cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
    return 0;
  return len;
}

template <typename Emit> std::string Rewrite(std::string_view s, Emit emit) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    const size_t len = DecodeOne(s, i, &cp);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    emit(s.substr(i, len), cp, &out);
    i += len;
  }
  return out;
}

} // namespace

std::string ValidUtf8(std::string_view s) {
  return Rewrite(s, [](std::string_view bytes, uint32_t, std::string *out) {
    *out += bytes;
  });
}

std::string PrintableText(std::string_view s) {
  return Rewrite(s, [](std::string_view bytes, uint32_t cp, std::string *out) {
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
      *out += buf;
    } else {
      *out += bytes;
    }
  });
}

} // namespace mica
