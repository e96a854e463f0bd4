// mica — ExecuTorch programs (.pte) and bundled programs (.bpte), parsed (private to libmodel).
//
// ParseProgram verifies the flatbuffer (and the extended header's segment ranges) and copies
// out what the importer needs: the first execution plan's values (tensors with sizes, dim
// order, element type and, for constants, a view of their bytes in the file's constant
// segment or inline buffer), its inputs and outputs, the operators and delegates it names and
// its instructions. Nothing here interprets an operator; pte_import.cc maps them to the IR.
#ifndef MICA_MODEL_PTE_PTE_PROGRAM_H_
#define MICA_MODEL_PTE_PTE_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"

namespace mica {
namespace pte {

// The kinds of an ExecuTorch value (the format's KernelTypes union, kNone for "no value").
enum class ValueKind : uint8_t {
  kNone,
  kInt,
  kBool,
  kDouble,
  kTensor,
  kString,
  kIntList,
  kDoubleList,
  kBoolList,
  kTensorList,
  kOptionalTensorList,
};

struct TensorValue {
  int32_t scalar_type = 0;        // ExecuTorch ScalarType code
  DType dtype = DType::kFloat32;  // mica's element type for it
  std::vector<int32_t> sizes;     // logical (PyTorch) dimensions
  std::vector<int32_t> dim_order; // memory order of the logical dimensions, outermost first
  ConstData data;                 // constants: their bytes (aligned for `dtype`)
  bool planned = false;           // the program places it in a memory-planned arena
  uint32_t memory_id = 0;         // planned tensors: arena and byte offset in it (tensors at
  uint64_t memory_offset = 0;     // one place share their bytes: ExecuTorch's removed views)

  // Returns the dimensions in memory order (sizes permuted by dim_order).
  std::vector<int32_t> PhysicalShape() const;
  // Returns true when dim_order is the identity (contiguous, PyTorch's default layout).
  bool Contiguous() const;
};

struct Value {
  ValueKind kind = ValueKind::kNone;
  int64_t i = 0;
  bool b = false;
  double d = 0.0;
  std::string s;
  std::vector<int64_t> ints;     // kIntList (the listed Int values), kBoolList
  std::vector<double> doubles;   // kDoubleList
  std::vector<int32_t> refs;     // kTensorList / kOptionalTensorList: value indices (-1: none)
  TensorValue tensor;            // kTensor
};

struct Call {
  bool delegate = false;
  int32_t index = 0;          // operator (kernel call) or delegate index
  std::vector<int32_t> args;  // value indices
};

struct Delegate {
  std::string id;     // backend name
  uint64_t bytes = 0; // size of its processed (opaque) blob
};

struct Program {
  std::string method;                     // the method read
  std::vector<std::string> method_names;  // every method of the program, in file order
  std::vector<Value> values;
  std::vector<int32_t> inputs, outputs;
  std::vector<std::string> operators;  // "namespace::name.overload"
  std::vector<Delegate> delegates;
  std::vector<Call> calls;             // the first chain's kernel and delegate calls, in order
  uint64_t planned_bytes = 0;          // sum of the plan's non-constant buffer sizes
  std::vector<int64_t> planned_buffers;  // the memory plan's buffers (non_const_buffer_sizes
                                         // from index 1; index 0 is reserved for constants)
  uint32_t version = 0;
  size_t num_plans = 0;
};

// Parses a .pte already in memory. Constant views point into `*bytes` or into buffers added to
// `owner->storage` (aligned copies), so the returned Program is valid while `owner` lives.
// `method` names the execution plan to read ("" for the first); an unknown name is an error
// listing the program's methods.
absl::StatusOr<Program> ParseProgram(const std::shared_ptr<const std::vector<uint8_t>>& bytes,
                                     const std::string& origin, Graph* owner,
                                     const std::string& method = "");

// A .bpte's parts: the embedded program's bytes and the test cases of one method (the first
// suite's, or those of the method asked for: none when it has no suite).
struct Bundle {
  std::shared_ptr<const std::vector<uint8_t>> program;
  std::string method;
  std::vector<BundledTestCase> test_cases;
};

// Parses a .bpte already in memory.
absl::StatusOr<Bundle> ParseBundle(const std::vector<uint8_t>& bytes, const std::string& origin,
                                   const std::string& method = "");

// Returns mica's element type for an ExecuTorch ScalarType code, or an error naming it.
absl::StatusOr<DType> DTypeFromScalarType(int32_t code);

// Imports a parsed program as a mica Graph (pte_import.cc).
absl::StatusOr<Graph> ImportProgram(const Program& program, Graph graph);

}  // namespace pte
}  // namespace mica

#endif  // MICA_MODEL_PTE_PTE_PROGRAM_H_
