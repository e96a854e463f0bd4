#include "mica/runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mica/base/status_macros.h"
#include "mica/base/text.h"
#include "mica/kernels/isa.h"
#include "mica/model/load.h"
#include "op_kernel.h"
#include "planner.h"

namespace mica {
namespace runtime {

using internal::EvalContext;
using internal::KernelPtr;
using internal::LowerContext;

absl::StatusOr<std::optional<kernels::Isa>> ParseIsa(const std::string& name) {
  if (name.empty() || name == "best") return std::optional<kernels::Isa>();
  if (name == "scalar") return std::optional<kernels::Isa>(kernels::Isa::kScalar);
  if (name == "dsp") return std::optional<kernels::Isa>(kernels::Isa::kDsp);
  if (name == "mve") return std::optional<kernels::Isa>(kernels::Isa::kMve);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown variant '", name, "' (expected scalar, dsp, mve or best)"));
}

bool HostSupportsIsa(kernels::Isa isa) { return kernels::IsaCompiled(isa); }

std::vector<kernels::Isa> HostIsas() {
  std::vector<kernels::Isa> out;
  for (kernels::Isa isa : {kernels::Isa::kScalar, kernels::Isa::kDsp, kernels::Isa::kMve}) {
    if (HostSupportsIsa(isa)) out.push_back(isa);
  }
  return out;
}

int64_t TensorView::num_elements() const {
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  return n;
}

HostTensor TensorView::ToHost() const {
  HostTensor t;
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.bytes.assign(data, data + bytes);
  return t;
}

struct Executor::Impl {
  Graph graph;
  int32_t sg_index = 0;
  ExecutorOptions options;
  kernels::Isa isa = kernels::Isa::kScalar;
  std::vector<KernelPtr> kernels;
  std::vector<ArenaSlot> layout;
  size_t arena_size = 0;
  std::vector<uint8_t> arena_storage;
  size_t state_size = 0;
  std::vector<uint8_t> state_storage;
  std::vector<std::pair<int32_t, size_t>> state_offsets;  // tensor, offset in state
  size_t scratch_size = 0;
  std::vector<uint8_t> scratch_storage;
  EvalContext ctx;
  TensorObserver observer;
  bool profiling = false;
  bool keep_state = false;
  bool state_initialised = false;
  std::vector<OpProfile> profile;

  const Subgraph& sg() const { return graph.subgraphs[sg_index]; }
  void Observe(int32_t t) {
    if (!observer) return;
    const Tensor& tensor = sg().tensors[t];
    TensorView v;
    v.dtype = tensor.dtype;
    v.shape = absl::MakeConstSpan(tensor.shape);
    v.data = ctx.data[t];
    v.bytes = tensor.num_bytes();
    observer(t, v);
  }
  void ResetState();
};

namespace {

uint8_t* AlignUp(uint8_t* p, size_t align) {
  const uintptr_t v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<uint8_t*>((v + align - 1) / align * align);
}

// Float graphs with integer weights ("hybrid" / weight-only quantization, e.g. float MLPerf
// Tiny models with int8 filters): their constant quantized operands of float operators become
// float constants (scale * (q - zero_point), per channel along the quantized axis), so the fp32
// kernels run them. TFLite's hybrid kernels instead quantize activations on the fly, so results
// differ from TFLite within quantization error; there is no bit-exact reference for those.
void DequantizeHybridWeights(Subgraph* sg, Graph* graph) {
  std::vector<bool> done(sg->tensors.size(), false);
  for (const Operator& op : sg->ops) {
    if (op.kind == OpKind::kQuantize || op.kind == OpKind::kDequantize) continue;
    if (op.outputs.empty() || op.outputs[0] < 0 ||
        sg->tensors[op.outputs[0]].dtype != DType::kFloat32) {
      continue;
    }
    for (int32_t t : op.inputs) {
      if (t < 0 || done[t]) continue;
      Tensor& tensor = sg->tensors[t];
      if (!tensor.is_constant() || tensor.quant.empty()) continue;
      if (tensor.dtype != DType::kInt8 && tensor.dtype != DType::kUInt8 &&
          tensor.dtype != DType::kInt16) {
        continue;
      }
      const int64_t n = tensor.num_elements();
      const size_t channels = tensor.quant.scale.size();
      int64_t inner = 1;
      const int axis = tensor.quant.axis;
      if (channels > 1) {
        if (axis < 0 || axis >= static_cast<int>(tensor.shape.size()) ||
            tensor.shape[axis] != static_cast<int32_t>(channels)) {
          continue;  // malformed: the lowering reports the dtype mismatch
        }
        for (size_t d = axis + 1; d < tensor.shape.size(); ++d) inner *= tensor.shape[d];
      }
      std::vector<uint8_t> bytes(static_cast<size_t>(n) * 4);
      for (int64_t i = 0; i < n; ++i) {
        const size_t c = channels > 1 ? static_cast<size_t>((i / inner) % channels) : 0;
        int32_t q = 0;
        if (tensor.dtype == DType::kInt8) q = tensor.data.as<int8_t>()[i];
        if (tensor.dtype == DType::kUInt8) q = tensor.data.as<uint8_t>()[i];
        if (tensor.dtype == DType::kInt16) q = tensor.data.as<int16_t>()[i];
        const int64_t zp = c < tensor.quant.zero_point.size() ? tensor.quant.zero_point[c] : 0;
        const float v = static_cast<float>(static_cast<double>(tensor.quant.scale[c]) * (q - zp));
        std::memcpy(&bytes[static_cast<size_t>(i) * 4], &v, 4);
      }
      tensor.data = graph->AddConstData(std::move(bytes));
      tensor.dtype = DType::kFloat32;
      tensor.quant = Quantization{};
      done[t] = true;
    }
  }
}

}  // namespace

void Executor::Impl::ResetState() {
  for (const auto& [t, offset] : state_offsets) {
    const Tensor& tensor = sg().tensors[t];
    // TFLite Micro resets int8 state to its zero point and everything else to zero.
    int value = 0;
    if (tensor.dtype == DType::kInt8 && !tensor.quant.zero_point.empty()) {
      value = static_cast<int>(tensor.quant.zero_point[0]);
    }
    std::memset(ctx.data[t], value, tensor.num_bytes());
  }
}

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

absl::StatusOr<std::unique_ptr<Executor>> Executor::Create(const Graph& graph,
                                                           const ExecutorOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->graph = graph;
  impl->options = options;
  const std::string origin = graph.source_path.empty() ? "model" : graph.source_path;
  if (options.subgraph < 0 || options.subgraph >= static_cast<int32_t>(graph.subgraphs.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": no subgraph ", options.subgraph, " (model has ",
                     graph.subgraphs.size(), ")"));
  }
  if (options.arena_alignment == 0 || (options.arena_alignment & (options.arena_alignment - 1))) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena alignment ", options.arena_alignment, " is not a power of two"));
  }
  MICA_RETURN_IF_ERROR(ValidateGraph(graph));
  impl->sg_index = options.subgraph;
  if (options.isa.has_value()) {
    if (!HostSupportsIsa(*options.isa)) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel variant '", kernels::IsaName(*options.isa),
                       "' cannot run on this host (available: ",
                       [] {
                         std::string s;
                         for (kernels::Isa i : HostIsas()) {
                           absl::StrAppend(&s, s.empty() ? "" : ", ", kernels::IsaName(i));
                         }
                         return s;
                       }(),
                       ")"));
    }
    impl->isa = *options.isa;
  } else {
    impl->isa = HostIsas().back();
  }
  DequantizeHybridWeights(&impl->graph.subgraphs[impl->sg_index], &impl->graph);
  const Subgraph& sg = impl->sg();

  // Lower every operator.
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    LowerContext lc{sg, sg.ops[i], static_cast<int32_t>(i), impl->isa};
    for (int32_t t : sg.ops[i].outputs) {
      if (t >= 0 && sg.tensors[t].is_constant()) {
        return lc.Invalid("output tensor ", t, " '", sg.tensors[t].name, "' is a constant");
      }
    }
    auto kernel = internal::LowerOp(lc);
    if (!kernel.ok()) {
      const absl::Status& s = kernel.status();
      // Tensor names come from the file: printable, so the error stays one line (fuzz_run
      // finding: a name holding a newline).
      std::string msg = PrintableText(std::string(s.message()));
      if (msg.rfind(origin, 0) != 0) msg = absl::StrCat(origin, ": ", msg);
      return absl::Status(s.code(), msg);
    }
    impl->scratch_size = std::max(impl->scratch_size, (*kernel)->scratch_bytes);
    impl->kernels.push_back(std::move(*kernel));
  }

  // Memory: arena for activations, a state buffer for variable tensors.
  MICA_ASSIGN_OR_RETURN(internal::ArenaPlan plan,
                        internal::PlanArena(sg, options.arena_alignment));
  impl->layout = plan.slots;
  impl->arena_size = plan.arena_bytes;
  impl->arena_storage.assign(impl->arena_size + options.arena_alignment, 0);
  uint8_t* arena = AlignUp(impl->arena_storage.data(), options.arena_alignment);

  impl->ctx.data.assign(sg.tensors.size(), nullptr);
  for (const ArenaSlot& s : impl->layout) impl->ctx.data[s.tensor_index] = arena + s.offset;
  size_t state = 0;
  for (size_t t = 0; t < sg.tensors.size(); ++t) {
    const Tensor& tensor = sg.tensors[t];
    if (tensor.is_constant()) {
      impl->ctx.data[t] = const_cast<uint8_t*>(tensor.data.bytes());
    } else if (tensor.is_variable) {
      impl->state_offsets.emplace_back(static_cast<int32_t>(t), state);
      state += (tensor.num_bytes() + options.arena_alignment - 1) / options.arena_alignment *
               options.arena_alignment;
    }
  }
  impl->state_size = state;
  impl->state_storage.assign(state + options.arena_alignment, 0);
  uint8_t* state_base = AlignUp(impl->state_storage.data(), options.arena_alignment);
  for (const auto& [t, offset] : impl->state_offsets) impl->ctx.data[t] = state_base + offset;

  impl->scratch_storage.assign(impl->scratch_size + options.arena_alignment, 0);
  impl->ctx.scratch = AlignUp(impl->scratch_storage.data(), options.arena_alignment);
  impl->ctx.scratch_bytes = impl->scratch_size;

  // Every tensor an operator touches must have memory now (optional inputs are -1).
  for (size_t i = 0; i < sg.ops.size(); ++i) {
    for (int32_t t : sg.ops[i].inputs) {
      if (t >= 0 && impl->ctx.data[t] == nullptr && sg.tensors[t].num_elements() > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": operator #", i, " (", internal::OpName(sg.ops[i]), ") reads tensor ", t,
                         " '", sg.tensors[t].name, "', which nothing produces"));
      }
    }
  }
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

absl::StatusOr<std::vector<HostTensor>> Executor::Run(const std::vector<HostTensor>& inputs) {
  Impl& m = *impl_;
  const Subgraph& sg = m.sg();
  if (inputs.size() != sg.inputs.size()) {
    return absl::InvalidArgumentError(absl::StrCat("model takes ", sg.inputs.size(),
                                                   " input(s), got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.inputs[i]];
    const HostTensor& h = inputs[i];
    if (h.dtype != t.dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " '", t.name, "': expected ",
                                                     internal::DT(t.dtype), ", got ",
                                                     internal::DT(h.dtype)));
    }
    if (h.bytes.size() != t.num_bytes()) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " '", t.name, "': expected ",
                                                     t.num_bytes(), " bytes, got ",
                                                     h.bytes.size()));
    }
  }
  if (!m.keep_state || !m.state_initialised) {
    m.ResetState();
    m.state_initialised = true;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (m.ctx.data[sg.inputs[i]] != nullptr && !inputs[i].bytes.empty()) {
      std::memcpy(m.ctx.data[sg.inputs[i]], inputs[i].bytes.data(), inputs[i].bytes.size());
    }
    m.Observe(sg.inputs[i]);
  }
  m.profile.clear();
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = m.kernels[i]->Eval(m.ctx);
    const auto end = std::chrono::steady_clock::now();
    if (!s.ok()) {
      // Name the model, the operator (index, kind, first output) and the kernel's reason.
      const Operator& op = sg.ops[i];
      std::string out_name;
      if (!op.outputs.empty() && op.outputs[0] >= 0) {
        out_name = absl::StrCat(", output '", sg.tensors[op.outputs[0]].name, "'");
      }
      const std::string origin =
          m.graph.source_path.empty() ? "model" : m.graph.source_path;
      return absl::Status(s.code(), PrintableText(absl::StrCat(origin, ": operator #", i, " (",
                                                              internal::OpName(op), out_name,
                                                              "): ", s.message())));
    }
    if (m.profiling) {
      OpProfile p;
      p.op_index = static_cast<int32_t>(i);
      p.name = internal::OpName(sg.ops[i]);
      p.nanoseconds =
          std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count();
      m.profile.push_back(std::move(p));
    }
    for (int32_t t : sg.ops[i].outputs) {
      if (t >= 0) m.Observe(t);
    }
  }
  std::vector<HostTensor> out;
  out.reserve(sg.outputs.size());
  for (int32_t t : sg.outputs) {
    const Tensor& tensor = sg.tensors[t];
    HostTensor h;
    h.dtype = tensor.dtype;
    h.shape = tensor.shape;
    const uint8_t* p = m.ctx.data[t];
    if (p != nullptr) h.bytes.assign(p, p + tensor.num_bytes());
    out.push_back(std::move(h));
  }
  return out;
}

void Executor::SetTensorObserver(TensorObserver observer) { impl_->observer = std::move(observer); }
void Executor::SetProfiling(bool enabled) { impl_->profiling = enabled; }
const std::vector<OpProfile>& Executor::profile() const { return impl_->profile; }
void Executor::SetKeepState(bool keep) { impl_->keep_state = keep; }
const Graph& Executor::graph() const { return impl_->graph; }
const Subgraph& Executor::subgraph() const { return impl_->sg(); }
kernels::Isa Executor::isa() const { return impl_->isa; }
size_t Executor::arena_bytes() const { return impl_->arena_size; }
size_t Executor::scratch_bytes() const { return impl_->scratch_size; }
size_t Executor::state_bytes() const { return impl_->state_size; }
const std::vector<ArenaSlot>& Executor::arena_layout() const { return impl_->layout; }

}  // namespace runtime
}  // namespace mica
