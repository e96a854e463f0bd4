// mica — private helpers shared by the validator, the readers and the writers.
#ifndef MICA_MODEL_VALIDATE_H_
#define MICA_MODEL_VALIDATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "mica/model/graph.h"
#include "mica/model/op.h"

namespace mica {
namespace internal {

// Largest rank mica accepts for a tensor.
inline constexpr size_t kMaxRank = 8;
// Largest tensor mica accepts, in bytes.
inline constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 31;

// Index of `T` among the alternatives of std::variant `V`.
template <typename T, typename V>
struct VariantIndex;
template <typename T, typename... Ts>
struct VariantIndex<T, std::variant<T, Ts...>> : std::integral_constant<size_t, 0> {};
template <typename T, typename U, typename... Ts>
struct VariantIndex<T, std::variant<U, Ts...>>
    : std::integral_constant<size_t, 1 + VariantIndex<T, std::variant<Ts...>>::value> {};

template <typename T>
inline constexpr size_t kAttrIndex = VariantIndex<T, OpAttrs>::value;

// Returns the OpAttrs alternative index operators of `kind` carry (0, std::monostate, for
// kinds without attributes), from the op table.
size_t AttrsIndexFor(OpKind kind);

// Returns `s` made safe for a one-line message: control characters become '?', long names
// are cut to 64 characters, and the result is quoted.
std::string QuoteForMessage(std::string_view s);

// Returns how messages name an operator: its kind ("CONV_2D"), or its quoted name when opaque.
std::string OpLabel(const Operator& op);

// Returns "<file>: " (or "" when the graph has no source path) for error messages.
std::string FilePrefix(const Graph& graph);

}  // namespace internal
}  // namespace mica

#endif  // MICA_MODEL_VALIDATE_H_
