// Issue 16, section 1: quantized unary activations (int8 and int16) whose output is declared
// smaller or larger than their input once wrote as many elements as the input has into the
// output (a heap overflow in `run`). The executor must refuse them when it prepares the model,
// before any kernel runs; the well-formed model runs.
#include <string>
#include <vector>

#include "mica/model/graph.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"

namespace mica {
namespace {

Graph UnaryGraph(OpKind kind, DType dtype, int32_t in_n, int32_t out_n) {
  Graph g;
  g.source_path = "unary.tflite";
  g.subgraphs.emplace_back();
  Subgraph& sg = g.subgraphs.back();
  const bool logistic_like = kind == OpKind::kLogistic || kind == OpKind::kTanh;
  auto tensor = [&](const std::string& name, int32_t n, bool output) {
    Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = {1, n};
    if (dtype == DType::kInt8) {
      t.quant.scale = {output && logistic_like ? 1.0f / 256 : 0.05f};
      t.quant.zero_point = {output && kind == OpKind::kLogistic ? -128 : 0};
    } else {
      t.quant.scale = {output && logistic_like ? 1.0f / 32768 : 0.001f};
      t.quant.zero_point = {0};
    }
    sg.tensors.push_back(t);
    return static_cast<int32_t>(sg.tensors.size()) - 1;
  };
  const int32_t x = tensor("x", in_n, false);
  const int32_t y = tensor("y", out_n, true);
  Operator op;
  op.kind = kind;
  if (kind == OpKind::kLeakyRelu) op.attrs = LeakyReluAttrs{0.1f};
  op.inputs = {x};
  op.outputs = {y};
  sg.ops.push_back(op);
  sg.inputs = {x};
  sg.outputs = {y};
  return g;
}

TEST_CASE("runtime: unary activations refuse an output sized unlike their input") {
  for (OpKind kind : {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1, OpKind::kLeakyRelu,
                      OpKind::kHardSwish, OpKind::kLogistic, OpKind::kTanh}) {
    for (DType dtype : {DType::kInt8, DType::kInt16}) {
      // TFLite has no int16 HARD_SWISH; mica refuses it whatever the shapes.
      const bool unsupported = kind == OpKind::kHardSwish && dtype == DType::kInt16;
      for (const auto& [in_n, out_n] :
           std::vector<std::pair<int32_t, int32_t>>{{64, 64}, {4096, 16}, {16, 4096}, {2, 1}}) {
        CAPTURE(static_cast<int>(kind), static_cast<int>(dtype), in_n, out_n);
        const Graph g = UnaryGraph(kind, dtype, in_n, out_n);
        auto exec = runtime::Executor::Create(g, {});
        if (in_n != out_n || unsupported) {
          REQUIRE_FALSE(exec.ok());
          const std::string msg(exec.status().message());
          CHECK_THAT(msg, Catch::Contains("unary.tflite"));
          // The graph validation every command shares refuses it first; the lowering's own
          // shape check stays behind it.
          if (!unsupported) CHECK_THAT(msg, Catch::Contains("has shape"));
          continue;
        }
        INFO(exec.status().message());
        REQUIRE(exec.ok());
        runtime::HostTensor in;
        in.dtype = dtype;
        in.shape = {1, in_n};
        in.bytes.assign(static_cast<size_t>(in_n) * (dtype == DType::kInt8 ? 1 : 2), 1);
        auto out = (*exec)->Run({in});
        INFO(out.status().message());
        REQUIRE(out.ok());
        CHECK(out->at(0).bytes.size() == in.bytes.size());
      }
    }
  }
}

}  // namespace
}  // namespace mica
