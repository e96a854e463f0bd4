#include "mica/model/tensor.h"

namespace mica {

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kFloat32: return "float32";
    case DType::kInt8: return "int8";
    case DType::kUInt8: return "uint8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
    case DType::kInt4: return "int4";
    case DType::kFloat16: return "float16";
    case DType::kUInt32: return "uint32";
  }
  return "unknown";
}

size_t DTypeBytes(DType t, int64_t count) {
  if (count <= 0) return 0;
  const auto n = static_cast<size_t>(count);
  switch (t) {
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool: return n;
    case DType::kInt16:
    case DType::kFloat16: return 2 * n;
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kUInt32: return 4 * n;
    case DType::kInt64: return 8 * n;
    case DType::kInt4: return (n + 1) / 2;
  }
  return 0;
}

int64_t Tensor::num_elements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

}  // namespace mica
