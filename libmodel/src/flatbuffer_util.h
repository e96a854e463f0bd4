// Reading verified flatbuffers safely: the helpers both flatbuffer readers (TFLite, ExecuTorch)
// share.
//
// flatbuffers' verifier checks a vector's length prefix for 4-byte alignment only, so the
// elements of a [long]/[ulong]/[double] vector may sit at any multiple of 4: they are copied as
// bytes, never read through a typed pointer (flatbuffers are little-endian, like every host mica
// builds for).
#ifndef MICA_MODEL_SRC_FLATBUFFER_UTIL_H_
#define MICA_MODEL_SRC_FLATBUFFER_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "flatbuffers/flatbuffers.h"
#include "mica/model/tensor.h"

namespace mica {
namespace internal {

// The alignment a typed view of constant data of `t` needs (copies are made below it).
inline uintptr_t ElementAlignment(DType t) {
  switch (t) {
    case DType::kInt64: return 8;
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kUInt32: return 4;
    case DType::kInt16:
    case DType::kFloat16: return 2;
    default: return 1;
  }
}

// Copies a verified vector of scalars (empty for a null vector).
template <typename T>
std::vector<T> ToVector(const flatbuffers::Vector<T>* v) {
  static_assert(std::is_arithmetic_v<T>, "ToVector copies scalars only");
  static_assert(FLATBUFFERS_LITTLEENDIAN, "mica reads flatbuffers on little-endian hosts only");
  if (v == nullptr) return {};
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;
}

// Element `i` (< v.size()) of a verified vector of scalars, copied as bytes.
template <typename T>
T VectorElement(const flatbuffers::Vector<T>& v, size_t i) {
  static_assert(std::is_arithmetic_v<T>, "VectorElement copies scalars only");
  static_assert(FLATBUFFERS_LITTLEENDIAN, "mica reads flatbuffers on little-endian hosts only");
  T out;
  std::memcpy(&out, v.Data() + sizeof(T) * i, sizeof(T));
  return out;
}

inline std::string ToString(const flatbuffers::String* s) {
  return s == nullptr ? std::string() : std::string(s->data(), s->size());
}

}  // namespace internal
}  // namespace mica

#endif  // MICA_MODEL_SRC_FLATBUFFER_UTIL_H_
