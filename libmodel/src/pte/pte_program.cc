// ParseProgram / ParseBundle: an ExecuTorch .pte / .bpte in memory becomes a pte::Program.
//
// Layout of a .pte: a flatbuffer (root offset, identifier "ET12") optionally followed by data
// segments. When segments are present an extended header sits right after the identifier, at
// byte 8: magic "eh00", its length (uint32), then the flatbuffer's size, the segments' base
// offset and (when the header is long enough) their total size, each uint64 little-endian.
// Segment i is [base + segments[i].offset, + segments[i].size). Constant tensor k lives in the
// constant segment at offsets[k] (or, in programs without one, in constant_buffer[k]); index 0
// means "no data". Every offset, size and index is checked against the file before use.
#include "pte/pte_program.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bpte_schema_generated.h"
#include "flatbuffers/flatbuffers.h"
#include "mica/base/status_macros.h"
#include "pte_schema_generated.h"
#include "flatbuffer_util.h"
#include "validate.h"

namespace mica {
namespace pte {

namespace fb = ::mica::pte_fb;
namespace bfb = ::mica::bpte_fb;
using internal::QuoteForMessage;

std::vector<int32_t> TensorValue::PhysicalShape() const {
  std::vector<int32_t> out(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) out[i] = sizes[dim_order[i]];
  return out;
}

bool TensorValue::Contiguous() const {
  for (size_t i = 0; i < dim_order.size(); ++i) {
    if (dim_order[i] != static_cast<int32_t>(i)) return false;
  }
  return true;
}

absl::StatusOr<DType> DTypeFromScalarType(int32_t code) {
  switch (code) {
    case 0: return DType::kUInt8;     // Byte
    case 1: return DType::kInt8;      // Char
    case 2: return DType::kInt16;     // Short
    case 3: return DType::kInt32;     // Int
    case 4: return DType::kInt64;     // Long
    case 5: return DType::kFloat16;   // Half
    case 6: return DType::kFloat32;   // Float
    case 11: return DType::kBool;     // Bool
    case 28: return DType::kUInt32;   // UInt32
    default: break;
  }
  static constexpr const char* kNames[] = {
      "Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "ComplexHalf",
      "ComplexFloat", "ComplexDouble", "Bool", "QInt8", "QUInt8", "QInt32", "BFloat16",
      "QUInt4x2", "QUInt2x4", "Bits1x8", "Bits2x4", "Bits4x2", "Bits8", "Bits16",
      "Float8_e5m2", "Float8_e4m3fn", "Float8_e5m2fnuz", "Float8_e4m3fnuz", "UInt16",
      "UInt32", "UInt64"};
  if (code >= 0 && code < static_cast<int32_t>(std::size(kNames))) {
    return absl::UnimplementedError(
        absl::StrCat("element type ", kNames[code], " (ScalarType ", code, ") is not supported"));
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ScalarType ", code));
}

namespace {

constexpr uint32_t kHeaderMagicOffset = 8;
// Constant data is handed out as typed pointers: see the TFLite reader.
using internal::ElementAlignment;
using internal::ToString;
using internal::ToVector;

uint64_t ReadLe(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

flatbuffers::Verifier::Options VerifierOptions() {
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 1'000'000;
  return options;
}

// Checks sizes and dim order of a tensor and returns its element count.
absl::StatusOr<int64_t> CheckShape(const std::vector<int32_t>& sizes,
                                   std::vector<int32_t>* dim_order) {
  if (sizes.size() > internal::kMaxRank) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", sizes.size(),
                                                   " exceeds mica's limit of ", internal::kMaxRank));
  }
  int64_t n = 1;
  for (int32_t d : sizes) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative size ", d));
    n *= d;
    if (n > static_cast<int64_t>(internal::kMaxTensorBytes)) {
      return absl::InvalidArgumentError("tensor too large");
    }
  }
  if (dim_order->empty()) {
    dim_order->resize(sizes.size());
    std::iota(dim_order->begin(), dim_order->end(), 0);
  }
  if (dim_order->size() != sizes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("dim order has ", dim_order->size(),
                                                   " entries for rank ", sizes.size()));
  }
  std::vector<bool> seen(sizes.size(), false);
  for (int32_t d : *dim_order) {
    if (d < 0 || d >= static_cast<int32_t>(sizes.size()) || seen[d]) {
      return absl::InvalidArgumentError("dim order is not a permutation of the dimensions");
    }
    seen[d] = true;
  }
  return n;
}

class ProgramParser {
 public:
  ProgramParser(const std::shared_ptr<const std::vector<uint8_t>>& bytes, std::string origin,
                Graph* owner, std::string method)
      : bytes_(bytes), origin_(std::move(origin)), owner_(owner), method_(std::move(method)) {}

  absl::StatusOr<Program> Parse() {
    const size_t size = bytes_->size();
    const uint8_t* data = bytes_->data();
    if (size < 8) return Error(absl::StrCat("file is ", size, " bytes, too small for a program"));
    if (size > kMaxModelBytes) {
      return Error(absl::StrCat("file is ", size, " bytes, above mica's limit of ",
                                kMaxModelBytes));
    }
    if (!fb::ProgramBufferHasIdentifier(data)) {
      if (data[4] == 'E' && data[5] == 'T') {
        return Unsupported(absl::StrCat(
            "ExecuTorch program format ",
            QuoteForMessage(std::string(reinterpret_cast<const char*>(data) + 4, 4)),
            " is not supported (mica reads ET12)"));
      }
      return Error("not an ExecuTorch program (no \"ET12\" file identifier)");
    }
    size_t program_size = size;
    if (size >= kHeaderMagicOffset + 8 &&
        std::memcmp(data + kHeaderMagicOffset, "eh00", 4) == 0) {
      const uint64_t length = ReadLe(data + kHeaderMagicOffset + 4, 4);
      if (length < 24 || length > size - kHeaderMagicOffset) {
        return Error(absl::StrCat("extended header length ", length, " is invalid"));
      }
      const uint64_t psize = ReadLe(data + kHeaderMagicOffset + 8, 8);
      const uint64_t base = ReadLe(data + kHeaderMagicOffset + 16, 8);
      if (psize < kHeaderMagicOffset + length || psize > size) {
        return Error(absl::StrCat("extended header gives a program size of ", psize,
                                  " bytes for a ", size, "-byte file"));
      }
      if (base > size) {
        return Error(absl::StrCat("segments start at byte ", base, ", past the end of the ",
                                  size, "-byte file"));
      }
      program_size = static_cast<size_t>(psize);
      segment_base_ = base;
      has_segments_ = true;
    }
    flatbuffers::Verifier verifier(data, std::min<size_t>(program_size,
                                                          FLATBUFFERS_MAX_BUFFER_SIZE - 1),
                                   VerifierOptions());
    if (!fb::VerifyProgramBuffer(verifier)) {
      return Error("corrupt or truncated ExecuTorch program (flatbuffer verification failed)");
    }
    const fb::Program& program = *fb::GetProgram(data);
    Program out;
    out.version = program.version();
    const auto* plans = program.execution_plan();
    if (plans == nullptr || plans->size() == 0) return Error("program has no execution plan");
    out.num_plans = plans->size();
    // Every method's name; the one asked for (by name), else the first, is read.
    flatbuffers::uoffset_t chosen = 0;
    bool found = method_.empty();
    for (flatbuffers::uoffset_t i = 0; i < plans->size(); ++i) {
      std::string name = ToString(plans->Get(i)->name());
      MICA_RETURN_IF_ERROR(Charge(name.size(), "execution plan names: "));
      if (!found && name == method_) {
        chosen = i;
        found = true;
      }
      out.method_names.push_back(std::move(name));
    }
    if (!found) {
      std::vector<std::string> quoted;
      for (const std::string& name : out.method_names) quoted.push_back(QuoteForMessage(name));
      return Error(absl::StrCat("no method ", QuoteForMessage(method_), " (the program has ",
                                absl::StrJoin(quoted, ", "), ")"));
    }
    MICA_RETURN_IF_ERROR(ReadSegments(program));
    const fb::ExecutionPlan& plan = *plans->Get(chosen);
    out.method = out.method_names[chosen];
    const std::string where = absl::StrCat("method ", QuoteForMessage(out.method), ": ");
    MICA_RETURN_IF_ERROR(Charge(out.method.size(), where));
    if (const auto* sizes = plan.non_const_buffer_sizes()) {
      const std::vector<int64_t> all = ToVector(sizes);
      for (size_t i = 0; i < all.size(); ++i) {
        if (all[i] < 0) {
          return Error(absl::StrCat(where, "memory plan buffer ", i, " has negative size ", all[i]));
        }
        if (i == 0) continue;  // index 0: reserved by ExecuTorch's planner, never allocated
        if (all[i] > (int64_t{1} << 40)) {
          return Error(absl::StrCat(where, "memory plan buffer ", i, " of ", all[i],
                                    " bytes is beyond any device"));
        }
        out.planned_buffers.push_back(all[i]);
        out.planned_bytes += static_cast<uint64_t>(all[i]);
      }
    }
    const auto* values = plan.values();
    const size_t num_values = values == nullptr ? 0 : values->size();
    out.values.resize(num_values);
    for (size_t v = 0; v < num_values; ++v) {
      MICA_RETURN_IF_ERROR(ReadValue(program, where, v, values->Get(v), &out.values[v]));
    }
    // Int lists are boxed: their items are the indices of Int values.
    for (size_t v = 0; v < num_values; ++v) {
      if (out.values[v].kind != ValueKind::kIntList) continue;
      for (int64_t& item : out.values[v].ints) {
        if (item < 0 || static_cast<uint64_t>(item) >= num_values ||
            out.values[item].kind != ValueKind::kInt) {
          return Error(absl::StrCat(where, "value ", v, ": int list item ", item,
                                    " is not an Int value"));
        }
        item = out.values[item].i;
      }
    }
    out.inputs = ToVector(plan.inputs());
    out.outputs = ToVector(plan.outputs());
    MICA_RETURN_IF_ERROR(Charge(4 * (out.inputs.size() + out.outputs.size()), where));
    for (int32_t v : out.inputs) MICA_RETURN_IF_ERROR(CheckIndex(where + "input", v, num_values));
    for (int32_t v : out.outputs) {
      MICA_RETURN_IF_ERROR(CheckIndex(where + "output", v, num_values));
    }
    if (const auto* ops = plan.operators()) {
      for (flatbuffers::uoffset_t i = 0; i < ops->size(); ++i) {
        const fb::Operator* op = ops->Get(i);
        std::string name = ToString(op->name());
        const std::string overload = ToString(op->overload());
        if (!overload.empty()) absl::StrAppend(&name, ".", overload);
        MICA_RETURN_IF_ERROR(Charge(name.size(), where));
        out.operators.push_back(std::move(name));
      }
    }
    if (const auto* delegates = plan.delegates()) {
      for (flatbuffers::uoffset_t i = 0; i < delegates->size(); ++i) {
        MICA_RETURN_IF_ERROR(ReadDelegate(program, where, i, *delegates->Get(i), &out));
      }
    }
    const auto* chains = plan.chains();
    if (chains != nullptr && chains->size() > 1) {
      return Unsupported(absl::StrCat(where, chains->size(),
                                      " chains (mica reads single-chain methods)"));
    }
    if (chains != nullptr && chains->size() == 1 && chains->Get(0)->instructions() != nullptr) {
      const auto* instructions = chains->Get(0)->instructions();
      for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i) {
        MICA_RETURN_IF_ERROR(ReadInstruction(where, i, *instructions->Get(i), out));
      }
    }
    return out;
  }

 private:
  struct Range {
    uint64_t offset = 0, size = 0;
  };

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", what));
  }
  absl::Status Unsupported(const std::string& what) const {
    return absl::UnimplementedError(absl::StrCat(origin_, ": ", what));
  }
  absl::Status CheckIndex(const std::string& what, int64_t v, size_t n) const {
    if (v < 0 || static_cast<uint64_t>(v) >= n) {
      return Error(absl::StrCat(what, " refers to value ", v, "; the method has ", n));
    }
    return absl::OkStatus();
  }
  absl::Status Charge(uint64_t bytes, const std::string& where) const {
    copied_ += bytes;
    if (copied_ > 2 * static_cast<uint64_t>(bytes_->size()) + (uint64_t{1} << 20)) {
      return Error(absl::StrCat(where, "objects share data far beyond the file's size (", copied_,
                                " bytes copied from a ", bytes_->size(), "-byte file)"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadSegments(const fb::Program& program) {
    const auto* segments = program.segments();
    if (segments == nullptr) return absl::OkStatus();
    const uint64_t size = bytes_->size();
    for (flatbuffers::uoffset_t i = 0; i < segments->size(); ++i) {
      const fb::DataSegment* s = segments->Get(i);
      const uint64_t avail = size - segment_base_;
      if (!has_segments_ || s->offset() > avail || s->size() > avail - s->offset()) {
        return Error(absl::StrCat("data segment ", i, " [", s->offset(), ", +", s->size(),
                                  ") lies outside the file (", has_segments_ ? "" : "no ",
                                  "extended header)"));
      }
      segments_.push_back({segment_base_ + s->offset(), s->size()});
    }
    return absl::OkStatus();
  }

  // Returns the `nbytes` bytes of constant `idx`, aligned for `dtype`.
  absl::StatusOr<ConstData> Constant(const fb::Program& program, uint32_t idx, size_t nbytes,
                                     DType dtype, const std::string& where) {
    const uint8_t* ptr = nullptr;
    const fb::SubsegmentOffsets* cs = program.constant_segment();
    if (cs != nullptr && cs->offsets() != nullptr && cs->offsets()->size() > 0) {
      if (cs->segment_index() >= segments_.size()) {
        return Error(absl::StrCat("constant segment is segment ", cs->segment_index(),
                                  "; the program has ", segments_.size()));
      }
      const Range& seg = segments_[cs->segment_index()];
      if (idx >= cs->offsets()->size()) {
        return Error(absl::StrCat(where, "constant ", idx, " is past the ",
                                  cs->offsets()->size(), " entries of the constant segment"));
      }
      const uint64_t off = internal::VectorElement(*cs->offsets(), idx);
      if (off > seg.size || nbytes > seg.size - off) {
        return Error(absl::StrCat(where, "constant ", idx, " [", off, ", +", nbytes,
                                  ") lies outside its ", seg.size, "-byte segment"));
      }
      ptr = bytes_->data() + seg.offset + off;
    } else {
      const auto* buffers = program.constant_buffer();
      if (buffers == nullptr || idx >= buffers->size()) {
        return Error(absl::StrCat(where, "constant buffer ", idx, " is out of range (",
                                  buffers == nullptr ? 0 : buffers->size(), " buffers)"));
      }
      const auto* storage = buffers->Get(idx)->storage();
      const size_t have = storage == nullptr ? 0 : storage->size();
      if (have < nbytes) {
        return Error(absl::StrCat(where, "constant buffer ", idx, " holds ", have,
                                  " bytes; the tensor needs ", nbytes));
      }
      ptr = storage == nullptr ? nullptr : storage->data();
    }
    static const uint8_t kEmpty = 0;
    if (nbytes == 0 || ptr == nullptr) return ConstData{&kEmpty, 0};
    if (reinterpret_cast<uintptr_t>(ptr) % ElementAlignment(dtype) != 0) {
      return owner_->AddConstData(std::vector<uint8_t>(ptr, ptr + nbytes));
    }
    return ConstData{ptr, nbytes};
  }

  absl::Status ReadValue(const fb::Program& program, const std::string& method, size_t v,
                         const fb::EValue* ev, Value* out) {
    const std::string where = absl::StrCat(method, "value ", v, ": ");
    if (ev->val_type() != fb::KernelTypes_NONE && ev->val_type() != fb::KernelTypes_Null &&
        ev->val() == nullptr) {
      return Error(where + "has a type but no contents");
    }
    switch (ev->val_type()) {
      case fb::KernelTypes_NONE:
      case fb::KernelTypes_Null: out->kind = ValueKind::kNone; break;
      case fb::KernelTypes_Int:
        out->kind = ValueKind::kInt;
        out->i = ev->val_as_Int()->int_val();
        break;
      case fb::KernelTypes_Bool:
        out->kind = ValueKind::kBool;
        out->b = ev->val_as_Bool()->bool_val();
        break;
      case fb::KernelTypes_Double:
        out->kind = ValueKind::kDouble;
        out->d = ev->val_as_Double()->double_val();
        break;
      case fb::KernelTypes_String:
        out->kind = ValueKind::kString;
        out->s = ToString(ev->val_as_String()->string_val());
        MICA_RETURN_IF_ERROR(Charge(out->s.size(), where));
        break;
      case fb::KernelTypes_IntList:
        out->kind = ValueKind::kIntList;
        out->ints = ToVector(ev->val_as_IntList()->items());
        MICA_RETURN_IF_ERROR(Charge(8 * out->ints.size(), where));
        break;
      case fb::KernelTypes_DoubleList:
        out->kind = ValueKind::kDoubleList;
        out->doubles = ToVector(ev->val_as_DoubleList()->items());
        MICA_RETURN_IF_ERROR(Charge(8 * out->doubles.size(), where));
        break;
      case fb::KernelTypes_BoolList: {
        out->kind = ValueKind::kBoolList;
        const auto* items = ev->val_as_BoolList()->items();
        if (items != nullptr) {
          for (flatbuffers::uoffset_t k = 0; k < items->size(); ++k) {
            out->ints.push_back(items->Get(k) ? 1 : 0);
          }
          MICA_RETURN_IF_ERROR(Charge(8 * out->ints.size(), where));
        }
        break;
      }
      case fb::KernelTypes_TensorList:
      case fb::KernelTypes_OptionalTensorList: {
        const bool optional = ev->val_type() == fb::KernelTypes_OptionalTensorList;
        out->kind = optional ? ValueKind::kOptionalTensorList : ValueKind::kTensorList;
        out->refs = optional ? ToVector(ev->val_as_OptionalTensorList()->items())
                             : ToVector(ev->val_as_TensorList()->items());
        MICA_RETURN_IF_ERROR(Charge(4 * out->refs.size(), where));
        for (int32_t r : out->refs) {
          if (optional && r == -1) continue;
          if (r < 0 || static_cast<size_t>(r) >= v) {
            // A list refers to values defined before it.
            return Error(absl::StrCat(where, "list item refers to value ", r,
                                      " (lists refer to earlier values)"));
          }
        }
        break;
      }
      case fb::KernelTypes_Tensor:
        out->kind = ValueKind::kTensor;
        return ReadTensor(program, where, *ev->val_as_Tensor(), &out->tensor);
      default:
        return Unsupported(absl::StrCat(where, "value type ", static_cast<int>(ev->val_type()),
                                        " is not supported"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadTensor(const fb::Program& program, const std::string& where,
                          const fb::Tensor& ft, TensorValue* t) {
    t->scalar_type = ft.scalar_type();
    absl::StatusOr<DType> dtype = DTypeFromScalarType(t->scalar_type);
    if (!dtype.ok()) {
      const std::string msg = where + std::string(dtype.status().message());
      return dtype.status().code() == absl::StatusCode::kUnimplemented ? Unsupported(msg)
                                                                       : Error(msg);
    }
    t->dtype = *dtype;
    t->sizes = ToVector(ft.sizes());
    const std::vector<uint8_t> order = ToVector(ft.dim_order());
    t->dim_order.assign(order.begin(), order.end());
    MICA_RETURN_IF_ERROR(Charge(4 * (t->sizes.size() + t->dim_order.size()), where));
    absl::StatusOr<int64_t> n = CheckShape(t->sizes, &t->dim_order);
    if (!n.ok()) return Error(where + std::string(n.status().message()));
    if (ft.storage_offset() != 0) {
      return Unsupported(absl::StrCat(where, "storage offset ", ft.storage_offset(),
                                      " (tensor views are not supported)"));
    }
    t->planned = ft.allocation_info() != nullptr;
    if (t->planned) {
      t->memory_id = ft.allocation_info()->memory_id();
      t->memory_offset = (uint64_t{ft.allocation_info()->memory_offset_high()} << 32) |
                         ft.allocation_info()->memory_offset_low();
    }
    if (const fb::ExtraTensorInfo* extra = ft.extra_tensor_info()) {
      if (extra->location() == 1) {
        return Unsupported(absl::StrCat(
            where, "data of ", QuoteForMessage(ToString(extra->fully_qualified_name())),
            " is in an external data file (.ptd), which mica does not read"));
      }
    }
    if (ft.data_buffer_idx() != 0 && !t->planned) {
      MICA_ASSIGN_OR_RETURN(t->data, Constant(program, ft.data_buffer_idx(),
                                              DTypeBytes(t->dtype, *n), t->dtype, where));
    }
    return absl::OkStatus();
  }

  absl::Status ReadDelegate(const fb::Program& program, const std::string& where, uint32_t i,
                            const fb::BackendDelegate& d, Program* out) {
    Delegate del;
    del.id = ToString(d.id());
    MICA_RETURN_IF_ERROR(Charge(del.id.size(), where));
    if (const fb::BackendDelegateDataReference* ref = d.processed()) {
      if (ref->location() == 0) {
        const auto* inline_data = program.backend_delegate_data();
        if (inline_data == nullptr || ref->index() >= inline_data->size()) {
          return Error(absl::StrCat(where, "delegate ", i, " refers to inline blob ",
                                    ref->index(), " which does not exist"));
        }
        const auto* blob = inline_data->Get(ref->index())->data();
        del.bytes = blob == nullptr ? 0 : blob->size();
      } else {
        if (ref->index() >= segments_.size()) {
          return Error(absl::StrCat(where, "delegate ", i, " refers to segment ", ref->index(),
                                    "; the program has ", segments_.size()));
        }
        del.bytes = segments_[ref->index()].size;
      }
    }
    out->delegates.push_back(std::move(del));
    return absl::OkStatus();
  }

  absl::Status ReadInstruction(const std::string& method, uint32_t i,
                               const fb::Instruction& ins, Program& out) const {
    const std::string where = absl::StrCat(method, "instruction ", i, ": ");
    if (ins.instr_args() == nullptr) return Error(where + "has no arguments table");
    Call call;
    switch (ins.instr_args_type()) {
      case fb::InstructionArguments_KernelCall: {
        const fb::KernelCall* k = ins.instr_args_as_KernelCall();
        call.index = k->op_index();
        if (call.index < 0 || static_cast<size_t>(call.index) >= out.operators.size()) {
          return Error(absl::StrCat(where, "operator index ", call.index,
                                    " is out of range (", out.operators.size(), " operators)"));
        }
        call.args = ToVector(k->args());
        break;
      }
      case fb::InstructionArguments_DelegateCall: {
        const fb::DelegateCall* d = ins.instr_args_as_DelegateCall();
        call.delegate = true;
        call.index = d->delegate_index();
        if (call.index < 0 || static_cast<size_t>(call.index) >= out.delegates.size()) {
          return Error(absl::StrCat(where, "delegate index ", call.index,
                                    " is out of range (", out.delegates.size(), " delegates)"));
        }
        call.args = ToVector(d->args());
        break;
      }
      case fb::InstructionArguments_FreeCall: return absl::OkStatus();
      case fb::InstructionArguments_MoveCall:
      case fb::InstructionArguments_JumpFalseCall:
        return Unsupported(where + "control flow (move/jump instructions) is not supported");
      default:
        return Error(absl::StrCat(where, "unknown instruction type ",
                                  static_cast<int>(ins.instr_args_type())));
    }
    MICA_RETURN_IF_ERROR(Charge(4 * call.args.size(), where));
    for (int32_t a : call.args) MICA_RETURN_IF_ERROR(CheckIndex(where + "argument", a,
                                                                out.values.size()));
    out.calls.push_back(std::move(call));
    return absl::OkStatus();
  }

  const std::shared_ptr<const std::vector<uint8_t>>& bytes_;
  std::string origin_;
  Graph* owner_;
  std::string method_;  // the method to read ("": the first)
  uint64_t segment_base_ = 0;
  bool has_segments_ = false;
  std::vector<Range> segments_;
  mutable uint64_t copied_ = 0;
};

}  // namespace

absl::StatusOr<Program> ParseProgram(const std::shared_ptr<const std::vector<uint8_t>>& bytes,
                                     const std::string& origin, Graph* owner,
                                     const std::string& method) {
  if (bytes == nullptr) return absl::InvalidArgumentError(absl::StrCat(origin, ": no data"));
  return ProgramParser(bytes, origin, owner, method).Parse();
}

absl::StatusOr<Bundle> ParseBundle(const std::vector<uint8_t>& bytes, const std::string& origin,
                                   const std::string& method) {
  auto error = [&origin](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": ", what));
  };
  if (bytes.size() < 8 || !bfb::BundledProgramBufferHasIdentifier(bytes.data())) {
    return error("not an ExecuTorch bundled program (no \"BP08\" file identifier)");
  }
  if (bytes.size() > kMaxModelBytes) {
    return error(absl::StrCat("file is ", bytes.size(), " bytes, above mica's limit of ",
                              kMaxModelBytes));
  }
  flatbuffers::Verifier verifier(bytes.data(),
                                 std::min<size_t>(bytes.size(), FLATBUFFERS_MAX_BUFFER_SIZE - 1),
                                 VerifierOptions());
  if (!bfb::VerifyBundledProgramBuffer(verifier)) {
    return error("corrupt or truncated ExecuTorch bundled program (flatbuffer verification "
                 "failed)");
  }
  const bfb::BundledProgram& bp = *bfb::GetBundledProgram(bytes.data());
  if (bp.program() == nullptr || bp.program()->size() == 0) {
    return error("ExecuTorch bundled program holds no program");
  }
  Bundle out;
  out.program = std::make_shared<const std::vector<uint8_t>>(bp.program()->begin(),
                                                             bp.program()->end());
  uint64_t copied = 0;
  const uint64_t limit = 2 * static_cast<uint64_t>(bytes.size()) + (uint64_t{1} << 20);
  auto read_values = [&](const flatbuffers::Vector<flatbuffers::Offset<bfb::Value>>* values,
                         const std::string& where,
                         std::vector<BundledTensor>* tensors) -> absl::Status {
    if (values == nullptr) return absl::OkStatus();
    for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
      const bfb::Value* v = values->Get(i);
      const std::string what = absl::StrCat(where, " ", i, ": ");
      if (v->val_type() != bfb::ValueUnion_Tensor || v->val() == nullptr) {
        return absl::UnimplementedError(absl::StrCat(
            origin, ": ", what, "only tensor values are supported in bundled test cases"));
      }
      const bfb::Tensor& t = *v->val_as_Tensor();
      BundledTensor bt;
      absl::StatusOr<DType> dtype = DTypeFromScalarType(t.scalar_type());
      if (!dtype.ok()) {
        return absl::Status(dtype.status().code(),
                            absl::StrCat(origin, ": ", what, dtype.status().message()));
      }
      bt.dtype = *dtype;
      std::vector<int32_t> sizes = ToVector(t.sizes());
      const std::vector<uint8_t> order8 = ToVector(t.dim_order());
      std::vector<int32_t> order(order8.begin(), order8.end());
      absl::StatusOr<int64_t> n = CheckShape(sizes, &order);
      if (!n.ok()) return error(what + std::string(n.status().message()));
      for (size_t k = 0; k < sizes.size(); ++k) bt.shape.push_back(sizes[order[k]]);
      bt.sizes = sizes;
      bt.dim_order_given = !order8.empty();
      const size_t want = DTypeBytes(bt.dtype, *n);
      const size_t have = t.data() == nullptr ? 0 : t.data()->size();
      if (have != want) {
        return error(absl::StrCat(what, "holds ", have, " bytes; its shape and type need ",
                                  want));
      }
      copied += have + 4 * sizes.size();
      if (copied > limit) return error(what + "test data share bytes far beyond the file size");
      if (have > 0) bt.bytes.assign(t.data()->begin(), t.data()->end());
      tensors->push_back(std::move(bt));
    }
    return absl::OkStatus();
  };
  const auto* suites = bp.method_test_suites();
  flatbuffers::uoffset_t chosen = 0;
  if (!method.empty()) {
    // The suite of that method; a method without one has no test cases.
    out.method = method;
    chosen = suites == nullptr ? 0 : suites->size();
    for (flatbuffers::uoffset_t i = 0; suites != nullptr && i < suites->size(); ++i) {
      if (ToString(suites->Get(i)->method_name()) == method) {
        chosen = i;
        break;
      }
    }
  }
  if (suites != nullptr && chosen < suites->size()) {
    const bfb::BundledMethodTestSuite& suite = *suites->Get(chosen);
    out.method = ToString(suite.method_name());
    if (const auto* cases = suite.test_cases()) {
      for (flatbuffers::uoffset_t c = 0; c < cases->size(); ++c) {
        BundledTestCase tc;
        const std::string where = absl::StrCat("test case ", c);
        MICA_RETURN_IF_ERROR(read_values(cases->Get(c)->inputs(), where + ", input", &tc.inputs));
        MICA_RETURN_IF_ERROR(read_values(cases->Get(c)->expected_outputs(),
                                         where + ", expected output", &tc.expected_outputs));
        out.test_cases.push_back(std::move(tc));
      }
    }
  }
  return out;
}

}  // namespace pte
}  // namespace mica
