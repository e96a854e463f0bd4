// mica runtime — lowers a Graph into a plan of kernel calls over one arena and executes it.
//
// Create() prepares every operator once: it checks dtypes and shapes, computes the fixed-point
// multipliers, shifts, offsets and activation ranges TFLite's reference kernels compute in
// their Prepare step, sizes scratch, and lays out every activation tensor in one arena. Run()
// then only calls kernels. int8/int16 operators run on the kernel core (a chosen ISA variant or
// the best one this host can run); float32 operators and float<->integer (de)quantization run on
// host fp32 kernels.
//
//   MICA_ASSIGN_OR_RETURN(mica::Graph g, mica::LoadModel("kws.tflite"));
//   MICA_ASSIGN_OR_RETURN(auto exec, mica::runtime::Executor::Create(g, {}));
//   exec->SetTensorObserver([](int32_t index, const mica::runtime::TensorView& t) { ... });
//   MICA_ASSIGN_OR_RETURN(std::vector<mica::runtime::HostTensor> out, exec->Run({input}));
#ifndef MICA_RUNTIME_EXECUTOR_H_
#define MICA_RUNTIME_EXECUTOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mica/kernels/types.h"
#include "mica/model/graph.h"
#include "mica/runtime/npy.h"

namespace mica {
namespace runtime {

struct ExecutorOptions {
  // Kernel-core variant for integer operators; empty picks the best the host can run.
  // Create() fails with FailedPrecondition when the host cannot run the requested one. An
  // operator with no body of that variant uses its best body below it (as a Cortex-M build
  // of that ISA would).
  std::optional<kernels::Isa> isa;
  // Alignment of every tensor in the arena, in bytes (a power of two, >= 1).
  size_t arena_alignment = 16;
  // Subgraph to execute (0: the entry point).
  int32_t subgraph = 0;
};

// Parses "scalar", "dsp", "mve" (or "best": empty).
absl::StatusOr<std::optional<kernels::Isa>> ParseIsa(const std::string& name);

// Returns true when this host can execute integer kernels of `isa`.
bool HostSupportsIsa(kernels::Isa isa);

// Returns the variants this host can execute, best last.
std::vector<kernels::Isa> HostIsas();

// A read-only view of a tensor's data during a run. Valid only inside the observer call.
struct TensorView {
  DType dtype = DType::kFloat32;
  absl::Span<const int32_t> shape;
  const uint8_t* data = nullptr;
  size_t bytes = 0;

  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data); }
  int64_t num_elements() const;
  // Copies the view into an owning tensor.
  HostTensor ToHost() const;
};

// Called after every operator, once per output tensor of that operator (index into the
// executed subgraph's tensors). Also called for graph inputs before the first operator.
using TensorObserver = std::function<void(int32_t tensor_index, const TensorView& tensor)>;

// Wall time of one operator in the last Run() (profiling must be enabled).
struct OpProfile {
  int32_t op_index = 0;
  std::string name;  // OpKindName (or the opaque name)
  int64_t nanoseconds = 0;
};

// Where an activation tensor lives in the arena.
struct ArenaSlot {
  int32_t tensor_index = 0;
  size_t offset = 0;
  size_t bytes = 0;
};

class Executor {
 public:
  // Prepares `graph` for execution (the Executor keeps its own copy of the Graph, which shares
  // the constant data). Unsupported operators or dtype combinations give Unimplemented naming
  // the operator index and kind; inconsistent shapes give InvalidArgument.
  static absl::StatusOr<std::unique_ptr<Executor>> Create(const Graph& graph,
                                                          const ExecutorOptions& options = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs the graph once. `inputs` are in subgraph input order; each must have the input's dtype
  // and element count (the shape is taken from the model). Variable (state) tensors are reset
  // to zero before every run unless `keep_state` was set with SetKeepState(true).
  absl::StatusOr<std::vector<HostTensor>> Run(const std::vector<HostTensor>& inputs);

  // Installs (or, with nullptr, removes) the per-tensor observer.
  void SetTensorObserver(TensorObserver observer);
  // Enables per-operator timing; see profile().
  void SetProfiling(bool enabled);
  const std::vector<OpProfile>& profile() const;
  // Keeps variable tensors (LSTM/SVDF state) between runs instead of zeroing them.
  void SetKeepState(bool keep);

  // The graph being executed and its executed subgraph.
  const Graph& graph() const;
  const Subgraph& subgraph() const;
  // The integer kernel variant in use.
  kernels::Isa isa() const;
  // Bytes of the activation arena, of kernel scratch and of persistent state.
  size_t arena_bytes() const;
  size_t scratch_bytes() const;
  size_t state_bytes() const;
  // The arena layout (one slot per non-constant, non-variable tensor the plan uses).
  const std::vector<ArenaSlot>& arena_layout() const;

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace runtime
}  // namespace mica

#endif  // MICA_RUNTIME_EXECUTOR_H_
