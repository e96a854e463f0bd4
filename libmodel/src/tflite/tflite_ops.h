// mica — private: TFLite builtin operator codes and their mapping to mica's OpKind.
#ifndef MICA_MODEL_TFLITE_TFLITE_OPS_H_
#define MICA_MODEL_TFLITE_TFLITE_OPS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "mica/model/op.h"

namespace mica {
namespace tflite {

// TFLite's builtin code for custom operators.
inline constexpr int32_t kCustomCode = 32;
// Codes at or above this value are stored only in OperatorCode.builtin_code; the deprecated
// int8 field then holds this placeholder.
inline constexpr int32_t kPlaceholderForGreaterOpCodes = 127;

// Returns the builtin operator's upper-case name, or "" when `code` is not a known builtin.
std::string_view BuiltinName(int32_t code);

// Returns the builtin code named `name` ("CONV_2D"), or -1 when there is none. Also accepts
// "BUILTIN_<n>", the name mica gives builtins newer than it knows.
int32_t BuiltinCodeFromName(std::string_view name);

// Returns the OpKind for a builtin code, or OpKind::kOpaque when mica has no kind for it.
OpKind KindFromBuiltin(int32_t code);

// Returns the builtin code for a (non-opaque) OpKind, or -1 when it has none.
int32_t BuiltinFromKind(OpKind kind);

// Returns the name mica records for an opaque builtin with `code`.
std::string OpaqueBuiltinName(int32_t code);

}  // namespace tflite
}  // namespace mica

#endif  // MICA_MODEL_TFLITE_TFLITE_OPS_H_
