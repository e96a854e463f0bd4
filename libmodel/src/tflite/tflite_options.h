// mica — private: TFLite builtin options <-> mica operator attributes.
//
// One codec per options table reads and writes its fields side by side; which
// table a kind uses comes from the op table (mica/model/ops.inc, column
// OPTIONS). Also the element-type conversions the reader and writer share.
#ifndef MICA_MODEL_TFLITE_TFLITE_OPTIONS_H_
#define MICA_MODEL_TFLITE_TFLITE_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "flatbuffers/flatbuffers.h"
#include "mica/model/op.h"
#include "mica/model/tensor.h"
#include "tflite_schema_generated.h"

namespace mica {
namespace tflite {

// Returns the mica element type of TFLite TensorType `t`, or Unimplemented
// naming it.
absl::StatusOr<DType> DTypeFromTflite(int8_t t);

// Returns the TFLite TensorType of `t`.
tflite_fb::TensorType TfliteType(DType t);

// What reading options needs from the reader: how errors name the file and the
// operator, and how the reader copies verified int32 vectors out of the file.
struct OptionsReadContext {
  const std::string &origin;  // the file, as the reader names it
  const std::string &where;   // "subgraph S, operator O (NAME): "
  std::vector<int32_t> (*int32s)(const flatbuffers::Vector<int32_t> *);

  // Returns InvalidArgument "<origin>: <where><what>".
  absl::Status Error(const std::string &what) const;
  // Returns Unimplemented "<origin>: <where><what>".
  absl::Status Unsupported(const std::string &what) const;
};

// Reads the builtin options of `fop` into op->attrs for op->kind, a known
// non-opaque kind. Kinds without attributes do not look at the options; absent
// options give the defaults.
absl::Status ReadBuiltinOptions(const tflite_fb::Operator &fop, const OptionsReadContext &ctx,
                                Operator *op);

// An operator's builtin options as written: union type and table offset.
struct BuiltinOptions {
  tflite_fb::BuiltinOptions type = tflite_fb::BuiltinOptions_NONE;
  flatbuffers::Offset<void> table;
};

// Writes the options table of `op`'s kind from its attributes (none for kinds
// without a table, such as LOGISTIC, and for opaque operators).
BuiltinOptions WriteBuiltinOptions(flatbuffers::FlatBufferBuilder &b, const Operator &op);

}  // namespace tflite
}  // namespace mica

#endif  // MICA_MODEL_TFLITE_TFLITE_OPTIONS_H_
