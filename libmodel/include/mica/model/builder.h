// mica — building graphs in C++: tensors, operators with typed attributes, seeded weights.
//
// GraphBuilder creates one-subgraph Graphs (ModelFormat::kBuilt) whose constants live in the
// Graph's own storage. Operator helpers infer output shapes (InferOutputShapes below) and
// return the output tensor index. Errors are sticky: a helper that fails records the first
// error, returns kNoTensor, and every later call that sees a kNoTensor operand does nothing;
// Build() then returns that error. So straight-line model code needs no per-call checks.
//
//   mica::GraphBuilder b("tiny", /*seed=*/7);
//   int32_t x = b.Input("input", {1, 8, 8, 3});
//   int32_t w = b.HeWeights("conv/w", {16, 3, 3, 3});   // OHWI, fan_in = 3*3*3
//   int32_t y = b.Conv2D(x, w, b.RandomBias("conv/b", 16), {mica::Padding::kSame, 2, 2});
//   b.Output(b.Softmax(b.Reshape(y, {1, -1})));
//   absl::StatusOr<mica::Graph> g = b.Build();
#ifndef MICA_MODEL_BUILDER_H_
#define MICA_MODEL_BUILDER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/model/shape_inference.h"
#include "mica/model/op.h"
#include "mica/model/tensor.h"

namespace mica {

// A small deterministic RNG (SplitMix64): the same seed gives the same stream on every
// platform and compiler, unlike std:: distributions.
class SeededRng {
 public:
  explicit SeededRng(uint64_t seed) : state_(seed) {}
  // Returns the next 64 random bits.
  uint64_t Next();
  // Returns a float uniform in [0, 1) with 24 random bits (exact, platform independent).
  float Uniform01();
  // Returns a float uniform in [-limit, limit).
  float Symmetric(float limit) { return (2.0f * Uniform01() - 1.0f) * limit; }

 private:
  uint64_t state_;
};

class GraphBuilder {
 public:
  // `name` becomes the subgraph name; `seed` drives HeWeights/RandomBias/RandomConstant.
  explicit GraphBuilder(std::string name = "main", uint64_t seed = 1);

  // --- Tensors. All return the new tensor's index (kNoTensor after an error). ---

  // Adds a graph input (also appended to the subgraph's inputs).
  int32_t Input(const std::string& name, std::vector<int32_t> shape,
                DType dtype = DType::kFloat32);
  // Adds a non-constant tensor with no producer yet (for AddOp with explicit outputs).
  int32_t Intermediate(const std::string& name, std::vector<int32_t> shape,
                       DType dtype = DType::kFloat32);
  // Adds a constant whose bytes are copied into graph storage; bytes.size() must equal
  // shape x dtype.
  int32_t Constant(const std::string& name, std::vector<int32_t> shape, DType dtype,
                   std::vector<uint8_t> bytes);
  int32_t FloatConstant(const std::string& name, std::vector<int32_t> shape,
                        const std::vector<float>& values);
  int32_t Int32Constant(const std::string& name, std::vector<int32_t> shape,
                        const std::vector<int32_t>& values);
  // Adds float weights drawn uniformly from [-limit, limit) with limit = sqrt(6 / fan_in)
  // (He uniform). fan_in is the product of all dimensions but the output one: dims 1.. for
  // OHWI conv and [out, in] FC filters; dims 1..2 (KH*KW) for depthwise 1HWC filters when
  // `depthwise` is set.
  int32_t HeWeights(const std::string& name, std::vector<int32_t> shape, bool depthwise = false);
  // Adds a float [n] bias drawn uniformly from [-limit, limit).
  int32_t RandomBias(const std::string& name, int32_t n, float limit = 0.05f);
  // Adds float values uniform in [lo, hi).
  int32_t RandomConstant(const std::string& name, std::vector<int32_t> shape, float lo, float hi);

  // Marks a tensor as a graph output (in call order).
  void Output(int32_t tensor);

  // --- Operators. Output tensors get shapes from InferOutputShapes and the input's dtype. ---

  // Adds `kind` with `attrs` over `inputs` (kNoTensor marks an absent optional input), creating `num_outputs` outputs named
  // `name`/`name:1`... (an empty name derives one from the kind and op index).
  std::vector<int32_t> AddOp(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                             int num_outputs = 1, const std::string& name = "");
  // Like AddOp, but with pre-made output tensors (shapes are checked against inference).
  void AddOpWithOutputs(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                        std::vector<int32_t> outputs);

  // Convolution helpers: filter OHWI; `bias` may be kNoTensor for none.
  int32_t Conv2D(int32_t input, int32_t filter, int32_t bias, const Conv2DAttrs& attrs,
                 const std::string& name = "");
  // filter 1HW(C*M).
  int32_t DepthwiseConv2D(int32_t input, int32_t filter, int32_t bias,
                          const DepthwiseConv2DAttrs& attrs, const std::string& name = "");
  // weights [out, in]; the input's last dimension must be `in` (other dims are flattened).
  int32_t FullyConnected(int32_t input, int32_t weights, int32_t bias,
                         const FullyConnectedAttrs& attrs = {}, const std::string& name = "");
  int32_t MaxPool2D(int32_t input, const Pool2DAttrs& attrs, const std::string& name = "");
  int32_t AveragePool2D(int32_t input, const Pool2DAttrs& attrs, const std::string& name = "");
  int32_t Add(int32_t a, int32_t b, Activation act = Activation::kNone,
              const std::string& name = "");
  int32_t Mul(int32_t a, int32_t b, Activation act = Activation::kNone,
              const std::string& name = "");
  // new_shape may hold one -1; it is also stored as an int32 constant second input.
  int32_t Reshape(int32_t input, std::vector<int32_t> new_shape, const std::string& name = "");
  int32_t Concatenation(std::vector<int32_t> inputs, int32_t axis,
                        const std::string& name = "");
  int32_t Mean(int32_t input, std::vector<int32_t> axes, bool keep_dims,
               const std::string& name = "");
  int32_t Softmax(int32_t input, float beta = 1.0f, const std::string& name = "");
  // paddings: rank x 2 (before, after) per dimension.
  int32_t Pad(int32_t input, std::vector<std::vector<int32_t>> paddings,
              const std::string& name = "");
  // Unary ops without attributes (RELU, RELU6, LOGISTIC, TANH, ...).
  int32_t Unary(OpKind kind, int32_t input, const std::string& name = "");

  // Returns the subgraph built so far (for inspection while building).
  const Subgraph& subgraph() const { return graph_.main(); }
  // Returns the first error recorded, or OK.
  const absl::Status& status() const { return status_; }

  // Returns the finished Graph (ModelFormat::kBuilt), or the first error. The builder is
  // left empty afterwards.
  absl::StatusOr<Graph> Build();

 private:
  int32_t AddTensorImpl(const std::string& name, std::vector<int32_t> shape, DType dtype);
  bool CheckShape(const std::string& what, const std::vector<int32_t>& shape);
  bool CheckOperands(const std::vector<int32_t>& inputs, bool allow_absent, OpKind kind);
  void Fail(absl::Status s);
  std::string OpName(OpKind kind, const std::string& name) const;

  Graph graph_;
  SeededRng rng_;
  absl::Status status_;
};

}  // namespace mica

#endif  // MICA_MODEL_BUILDER_H_
