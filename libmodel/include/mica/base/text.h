// mica — making untrusted text (names and strings from model files) safe to
// print.
//
// A model's tensor and operator names are bytes chosen by whoever made the
// file: they may hold terminal escape sequences or invalid UTF-8. Reports pass
// every such string through these.
//
//   std::cout << mica::PrintableText(tensor.name);     // "\x1b[2J" prints as
//   \x1b[2J json.String(mica::ValidUtf8(tensor.name));          // invalid
//   bytes become U+FFFD
#ifndef MICA_BASE_TEXT_H_
#define MICA_BASE_TEXT_H_

#include <string>
#include <string_view>

namespace mica {

// Returns `s` with every invalid UTF-8 sequence (bad lead or continuation
// bytes, overlong forms, surrogates, code points above U+10FFFF, truncated
// sequences) replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// Returns `s` as valid UTF-8 with control characters (C0, DEL and C1, which
// terminals interpret: escape sequences, bells, carriage returns) written as
// visible escapes "\xNN".
std::string PrintableText(std::string_view s);

} // namespace mica

#endif // MICA_BASE_TEXT_H_
