// The plan compiler: runs the executor's lowering (LowerOp, PlanArena) and serialises what it
// prepared into the device plan format (mica/device/plan_format.h).
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/device/plan_format.h"
#include "mica/device/runtime.h"
#include "mica/model/load.h"
#include "mica/runtime/plan.h"
#include "op_kernel.h"
#include "plan_writer.h"
#include "planner.h"

namespace mica {
namespace runtime {

using device::OpRecord;
using device::PlanHeader;
using device::TensorRecord;

namespace {

size_t AlignUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

device::PlanDType PlanDTypeOf(DType t) {
  switch (t) {
    case DType::kInt8: return device::PlanDType::kInt8;
    case DType::kUInt8: return device::PlanDType::kUInt8;
    case DType::kInt16: return device::PlanDType::kInt16;
    case DType::kInt32: return device::PlanDType::kInt32;
    case DType::kInt64: return device::PlanDType::kInt64;
    case DType::kFloat32: return device::PlanDType::kFloat32;
    case DType::kBool: return device::PlanDType::kBool;
    default: return device::PlanDType::kOther;
  }
}

// Appends to the plan's data section.
class DataSection {
 public:
  explicit DataSection(size_t base) : base_(base) {}
  uint32_t Add(const void* p, size_t n, size_t align) {
    bytes_.resize(AlignUp(bytes_.size(), align), 0);
    const size_t at = bytes_.size();
    bytes_.resize(at + n);
    if (n > 0) std::memcpy(bytes_.data() + at, p, n);
    return static_cast<uint32_t>(base_ + at);
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  size_t base_;
  std::vector<uint8_t> bytes_;
};

template <typename T>
void Put(std::vector<uint8_t>* out, size_t at, const T& v) {
  std::memcpy(out->data() + at, &v, sizeof(T));
}

}  // namespace

kernels::Isa IsaOfCpu(const std::string& cpu) {
  if (cpu.find("nomve") != std::string::npos) {
    return cpu.find("nodsp") != std::string::npos ? kernels::Isa::kScalar : kernels::Isa::kDsp;
  }
  if (cpu.rfind("cortex-m55", 0) == 0 || cpu.rfind("cortex-m85", 0) == 0) return kernels::Isa::kMve;
  for (const char* dsp : {"cortex-m4", "cortex-m7", "cortex-m33", "cortex-m35p"}) {
    if (cpu == dsp) return kernels::Isa::kDsp;
  }
  return kernels::Isa::kScalar;
}

absl::StatusOr<CompiledPlan> CompilePlan(const Graph& graph, const PlanOptions& options) {
  const std::string origin = graph.source_path.empty() ? "model" : graph.source_path;
  if (options.subgraph < 0 || options.subgraph >= static_cast<int32_t>(graph.subgraphs.size())) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": no subgraph ", options.subgraph));
  }
  MICA_RETURN_IF_ERROR(ValidateGraph(graph));
  const Subgraph& sg = graph.subgraphs[options.subgraph];
  constexpr size_t kAlign = device::kPlanAlign;

  // Lower every operator exactly as Executor::Create does, then export it.
  std::vector<internal::PlanOpWriter> ops(sg.ops.size());
  size_t scratch = 0;
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    internal::LowerContext lc{sg, sg.ops[i], static_cast<int32_t>(i), options.isa};
    auto kernel = internal::LowerOp(lc);
    if (!kernel.ok()) {
      std::string msg(kernel.status().message());
      if (msg.rfind(origin, 0) != 0) msg = absl::StrCat(origin, ": ", msg);
      return absl::Status(kernel.status().code(), msg);
    }
    if (!(*kernel)->ExportToPlan(ops[i])) {
      const DType t = lc.HasInput(0) ? lc.input(0).dtype : lc.output(0).dtype;
      return absl::UnimplementedError(absl::StrCat(
          origin, ": ", lc.Where(), ": the device runtime has no ", internal::DT(t),
          " kernel for it (run it on the host with `mica run`)"));
    }
    scratch = std::max(scratch, (*kernel)->scratch_bytes);
  }
  MICA_ASSIGN_OR_RETURN(internal::ArenaPlan arena, internal::PlanArena(sg, kAlign));

  CompiledPlan out;
  out.activation_bytes = AlignUp(arena.arena_bytes, kAlign);
  out.scratch_bytes = AlignUp(scratch, kAlign);
  const size_t scratch_offset = out.activation_bytes;
  size_t state = scratch_offset + out.scratch_bytes;

  // Fixed part: header, tensor table, op table, io list; then the data section.
  const size_t nt = sg.tensors.size(), no = ops.size();
  const size_t tensors_offset = sizeof(PlanHeader);
  const size_t ops_offset = tensors_offset + nt * sizeof(TensorRecord);
  const size_t io_offset = ops_offset + no * sizeof(OpRecord);
  const size_t data_offset = AlignUp(io_offset + 4 * (sg.inputs.size() + sg.outputs.size()), kAlign);
  DataSection data(data_offset);

  std::vector<TensorRecord> trec(nt);
  std::vector<bool> used(nt, false);
  for (const Operator& op : sg.ops) {
    for (int32_t t : op.inputs) if (t >= 0) used[t] = true;
    for (int32_t t : op.outputs) if (t >= 0) used[t] = true;
  }
  for (int32_t t : sg.inputs) used[t] = true;
  for (int32_t t : sg.outputs) used[t] = true;
  for (const ArenaSlot& s : arena.slots) {
    TensorRecord& r = trec[s.tensor_index];
    r.loc = static_cast<uint8_t>(device::TensorLoc::kArena);
    r.offset = static_cast<uint32_t>(s.offset);
  }
  for (size_t t = 0; t < nt; ++t) {
    const Tensor& tensor = sg.tensors[t];
    TensorRecord& r = trec[t];
    r.dtype = static_cast<uint8_t>(PlanDTypeOf(tensor.dtype));
    r.bytes = static_cast<uint32_t>(tensor.num_bytes());
    r.elements = static_cast<uint32_t>(tensor.num_elements());
    if (!used[t]) {
      r.loc = static_cast<uint8_t>(device::TensorLoc::kNone);
    } else if (tensor.is_constant()) {
      r.loc = static_cast<uint8_t>(device::TensorLoc::kConst);
      r.offset = data.Add(tensor.data.bytes(), tensor.num_bytes(), kAlign);
      out.constant_bytes += tensor.num_bytes();
    } else if (tensor.is_variable) {
      r.loc = static_cast<uint8_t>(device::TensorLoc::kState);
      r.offset = static_cast<uint32_t>(state);
      // As the executor: int8 state starts at its zero point, everything else at zero.
      if (tensor.dtype == DType::kInt8 && !tensor.quant.zero_point.empty()) {
        r.fill = static_cast<int8_t>(tensor.quant.zero_point[0]);
      }
      state += AlignUp(tensor.num_bytes(), kAlign);
    }
  }
  out.state_bytes = state - scratch_offset - out.scratch_bytes;
  out.arena_bytes = state;

  std::vector<OpRecord> orec(no);
  for (size_t i = 0; i < no; ++i) {
    const internal::PlanOpWriter& w = ops[i];
    OpRecord& r = orec[i];
    r.code = static_cast<uint16_t>(w.code);
    r.num_tensors = static_cast<uint16_t>(w.tensors.size());
    r.num_arrays = static_cast<uint16_t>(w.arrays.size());
    r.model_op = static_cast<uint32_t>(i);
    r.params_offset = data.Add(w.params.data(), w.params.size(), 8);
    r.params_bytes = static_cast<uint32_t>(w.params.size());
    std::vector<uint32_t> list;
    for (int32_t t : w.tensors) list.push_back(static_cast<uint32_t>(t));
    for (const auto& a : w.arrays) {
      list.push_back(data.Add(a.data(), a.size(), 8));
      list.push_back(static_cast<uint32_t>(a.size()));
    }
    r.list_offset = data.Add(list.data(), list.size() * 4, 4);
    out.op_names.push_back(internal::OpName(sg.ops[i]));
  }
  // Per-op scratch as the lowering sized it (for reporting; the arena has the maximum).
  (void)scratch;

  const size_t total = AlignUp(data_offset + data.bytes().size(), kAlign);
  if (total > 0xFFFFFFF0u || out.arena_bytes > 0xFFFFFFF0u) {
    return absl::InvalidArgumentError(absl::StrCat(origin, ": plan too large for a device"));
  }
  std::vector<uint8_t>& b = out.bytes;
  b.assign(total, 0);
  PlanHeader h{};
  h.magic = device::kPlanMagic;
  h.version = device::kPlanVersion;
  h.header_bytes = sizeof(PlanHeader);
  h.total_bytes = static_cast<uint32_t>(total);
  h.isa = static_cast<uint8_t>(options.isa);
  h.arena_bytes = static_cast<uint32_t>(out.arena_bytes);
  h.scratch_offset = static_cast<uint32_t>(scratch_offset);
  h.scratch_bytes = static_cast<uint32_t>(out.scratch_bytes);
  h.num_tensors = static_cast<uint32_t>(nt);
  h.tensors_offset = static_cast<uint32_t>(tensors_offset);
  h.num_ops = static_cast<uint32_t>(no);
  h.ops_offset = static_cast<uint32_t>(ops_offset);
  h.num_inputs = static_cast<uint32_t>(sg.inputs.size());
  h.num_outputs = static_cast<uint32_t>(sg.outputs.size());
  h.io_offset = static_cast<uint32_t>(io_offset);
  h.data_offset = static_cast<uint32_t>(data_offset);
  h.data_bytes = static_cast<uint32_t>(total - data_offset);
  h.activation_bytes = static_cast<uint32_t>(out.activation_bytes);
  h.state_bytes = static_cast<uint32_t>(out.state_bytes);
  for (size_t t = 0; t < nt; ++t) Put(&b, tensors_offset + t * sizeof(TensorRecord), trec[t]);
  for (size_t i = 0; i < no; ++i) {
    orec[i].scratch_bytes = h.scratch_bytes;
    Put(&b, ops_offset + i * sizeof(OpRecord), orec[i]);
  }
  size_t io = io_offset;
  for (int32_t t : sg.inputs) { Put(&b, io, static_cast<uint32_t>(t)); io += 4; }
  for (int32_t t : sg.outputs) { Put(&b, io, static_cast<uint32_t>(t)); io += 4; }
  if (!data.bytes().empty()) std::memcpy(b.data() + data_offset, data.bytes().data(), data.bytes().size());
  h.crc32 = 0;
  Put(&b, 0, h);
  h.crc32 = device::Crc32(b.data() + 16, total - 16);
  Put(&b, 0, h);
  // The device verifies every plan before use: a plan it would refuse is a compiler error here
  // (the bytes are copied to 16-byte aligned memory, as the device holds them).
  std::vector<uint64_t> aligned((b.size() + 7) / 8);
  std::memcpy(aligned.data(), b.data(), b.size());
  device::Plan check;
  uint32_t where = 0;
  const device::PlanStatus vs = device::VerifyPlan(aligned.data(), b.size(), &check, &where);
  if (vs != device::PlanStatus::kOk) {
    std::string what = device::PlanStatusName(vs);
    if (vs == device::PlanStatus::kBadOp && where < sg.ops.size()) {
      what = absl::StrCat(what, " at operator #", where, " (", internal::OpName(sg.ops[where]), ")");
    } else if (vs == device::PlanStatus::kBadTensor && where < nt) {
      what = absl::StrCat(what, " at tensor #", where);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        origin, ": the device runtime would refuse this plan: ", what));
  }
  return out;
}

std::string PlanToC(const std::vector<uint8_t>& plan, const std::string& symbol) {
  std::string s = absl::StrCat("// mica device plan (mica compile --format c): ", plan.size(),
                               " bytes.\n#include <stddef.h>\n_Alignas(16) const unsigned char ",
                               symbol, "[", plan.size(), "] = {");
  static const char* kHex = "0123456789abcdef";
  for (size_t i = 0; i < plan.size(); ++i) {
    s += i % 16 == 0 ? "\n  " : " ";
    s += "0x";
    s += kHex[plan[i] >> 4];
    s += kHex[plan[i] & 15];
    s += ',';
  }
  absl::StrAppend(&s, "\n};\nconst size_t ", symbol, "_size = ", plan.size(), ";\n");
  return s;
}

}  // namespace runtime
}  // namespace mica
