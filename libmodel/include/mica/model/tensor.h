// mica — tensors of the graph IR: element types, shapes, quantization, constant data.
//
// Activations are channels-last (NHWC). Convolution filters are OHWI, depthwise filters are
// 1HW(I*M), fully-connected weights are [out, in] (TFLite's conventions; the ONNX importer
// converts to them).
//
//   const Tensor& t = graph.main().tensors[op.inputs[1]];
//   if (t.is_constant() && t.quant.per_channel()) { ... t.data.bytes() ... }
#ifndef MICA_MODEL_TENSOR_H_
#define MICA_MODEL_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mica {

// Element types a tensor may hold. kInt4 is packed two per byte (low nibble first).
enum class DType : uint8_t {
  kFloat32,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kBool,
  kInt4,
  kFloat16,
  kUInt32,  // loads and is estimated; no kernel runs it (signal-processing models)
};

// Returns the name used in reports and JSON ("float32", "int8", ...).
std::string_view DTypeName(DType t);

// Returns the storage bytes for `count` elements of `t` (rounds int4 up to whole bytes).
size_t DTypeBytes(DType t, int64_t count);

// Quantization parameters: real = scale * (q - zero_point). Empty `scale` means not quantized.
// One entry means per-tensor; more means per-channel along `axis`.
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int32_t axis = 0;

  bool empty() const { return scale.empty(); }
  bool per_channel() const { return scale.size() > 1; }
  bool operator==(const Quantization& o) const {
    return scale == o.scale && zero_point == o.zero_point && axis == o.axis;
  }
  bool operator!=(const Quantization& o) const { return !(*this == o); }
};

// A read-only view of a constant buffer. The bytes are owned by the Graph that holds the tensor
// (a loaded file or builder storage) and live as long as that Graph or any copy of it.
// Loaders guarantee `ptr` is aligned for the tensor's element type (a TFLite buffer that is not
// is read through an aligned copy), so `as<T>()` with that type is a valid typed view.
struct ConstData {
  const uint8_t* ptr = nullptr;
  size_t size = 0;

  bool empty() const { return ptr == nullptr; }
  const uint8_t* bytes() const { return ptr; }
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(ptr); }
};

struct Tensor {
  std::string name;
  DType dtype = DType::kFloat32;
  // Dimensions, outermost first. A scalar has rank 0. Dimensions are >= 0 (the loaders
  // resolve TFLite's dynamic -1 batch to 1 and record it in `shape_signature`).
  std::vector<int32_t> shape;
  std::vector<int32_t> shape_signature;  // as stored in the file; empty when equal to shape
  Quantization quant;
  ConstData data;            // non-empty for constants (weights, biases, shape operands)
  bool is_variable = false;  // state tensors (LSTM/SVDF), written by the op

  bool is_constant() const { return !data.empty(); }
  // Returns the number of elements (1 for a scalar).
  int64_t num_elements() const;
  // Returns the storage bytes of the whole tensor.
  size_t num_bytes() const { return DTypeBytes(dtype, num_elements()); }
};

}  // namespace mica

#endif  // MICA_MODEL_TENSOR_H_
