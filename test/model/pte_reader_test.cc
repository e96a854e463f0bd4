// The ExecuTorch reader on programs exported by ExecuTorch 1.5.1 (test/executorch/: the
// Cortex-M flow's int8 programs and a portable float one), and on hostile variants of them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "mica/model/op_info.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

std::string Data(const std::string& name) {
  return testing::SourceDir() + "/test/executorch/" + name;
}

std::vector<std::string> OpNames(const Graph& g) {
  std::vector<std::string> out;
  for (const Operator& op : g.main().ops) out.emplace_back(op.name());
  return out;
}

bool HasOp(const Graph& g, OpKind k) {
  const auto& ops = g.main().ops;
  return std::any_of(ops.begin(), ops.end(), [k](const Operator& op) { return op.kind == k; });
}

absl::StatusOr<Graph> LoadBytes(std::vector<uint8_t> bytes) {
  return LoadExecuTorch(std::make_shared<const std::vector<uint8_t>>(std::move(bytes)), "x.pte");
}

TEST_CASE("A portable float program loads with NCHW tensors and transposes around convs",
          "[pte]") {
  absl::StatusOr<Graph> g = LoadModel(Data("tiny_float.pte"));
  REQUIRE(g.ok());
  CHECK(g->source_format == ModelFormat::kExecuTorch);
  const Subgraph& sg = g->main();
  REQUIRE(sg.inputs.size() == 1);
  REQUIRE(sg.outputs.size() == 1);
  CHECK(sg.tensors[sg.inputs[0]].shape == std::vector<int32_t>{1, 3, 8, 8});
  CHECK(sg.tensors[sg.inputs[0]].dtype == DType::kFloat32);
  CHECK(sg.tensors[sg.outputs[0]].shape == std::vector<int32_t>{1, 5});
  CAPTURE(OpNames(*g));
  for (OpKind k : {OpKind::kConv2D, OpKind::kDepthwiseConv2D, OpKind::kRelu, OpKind::kAdd,
                   OpKind::kAveragePool2D, OpKind::kMaxPool2D, OpKind::kFullyConnected,
                   OpKind::kSoftmax, OpKind::kTranspose}) {
    CAPTURE(OpKindName(k));
    CHECK(HasOp(*g, k));
  }
  CHECK_FALSE(HasOp(*g, OpKind::kOpaque));
  // Conv weights became OHWI: [8, 3, 3, 3] and depthwise 1HW(C*M): [1, 3, 3, 8].
  for (const Operator& op : sg.ops) {
    if (op.kind == OpKind::kDepthwiseConv2D) {
      CHECK(sg.tensors[op.inputs[1]].shape == std::vector<int32_t>{1, 3, 3, 8});
    }
  }
  CHECK(g->metadata.at("executorch.method") == "forward");
}

// nn.Linear exported with the default edge config: permute_copy of the weight, then addmm (mm
// without bias). mica reads the weight in its own [out, in] layout: FULLY_CONNECTED, no TRANSPOSE.
TEST_CASE("A portable nn.Linear (addmm / mm of a transposed weight) maps to FULLY_CONNECTED",
          "[pte]") {
  absl::StatusOr<Graph> g = LoadModel(Data("tiny_linear.pte"));
  REQUIRE(g.ok());
  CAPTURE(OpNames(*g));
  const Subgraph& sg = g->main();
  REQUIRE(sg.ops.size() == 3);
  CHECK(sg.ops[0].kind == OpKind::kFullyConnected);
  CHECK(sg.ops[1].kind == OpKind::kRelu);
  CHECK(sg.ops[2].kind == OpKind::kFullyConnected);
  CHECK_FALSE(HasOp(*g, OpKind::kOpaque));
  CHECK_FALSE(HasOp(*g, OpKind::kTranspose));
  // fc1: weight [8, 16] with an 8-float bias; fc2: weight [4, 8], no bias.
  REQUIRE(sg.ops[0].inputs.size() == 3);
  CHECK(sg.tensors[sg.ops[0].inputs[1]].shape == std::vector<int32_t>{8, 16});
  CHECK(sg.tensors[sg.ops[0].inputs[1]].is_constant());
  REQUIRE(sg.ops[0].inputs[2] >= 0);
  CHECK(sg.tensors[sg.ops[0].inputs[2]].shape == std::vector<int32_t>{8});
  CHECK(sg.tensors[sg.ops[2].inputs[1]].shape == std::vector<int32_t>{4, 8});
  CHECK((sg.ops[2].inputs.size() < 3 || sg.ops[2].inputs[2] < 0));
  CHECK(sg.tensors[sg.outputs[0]].shape == std::vector<int32_t>{2, 4});
  // Every tensor is used (the folded transposes left none behind).
  std::vector<bool> used(sg.tensors.size(), false);
  for (const Operator& op : sg.ops) {
    for (int32_t t : op.inputs) if (t >= 0) used[t] = true;
    for (int32_t t : op.outputs) used[t] = true;
  }
  CHECK(std::all_of(used.begin(), used.end(), [](bool u) { return u; }));
}

// The weight operand computed at run time (here: its transpose renamed to an operator mica
// does not map, so it is an opaque operator's output): addmm stays opaque with its reason, mm
// is a BATCH_MATMUL.
TEST_CASE("addmm of a weight that is not a transposed constant stays opaque with a reason",
          "[pte]") {
  std::vector<uint8_t> bytes = testing::ReadFile(Data("tiny_linear.pte"));
  const std::string from = "aten::permute_copy";
  auto it = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  REQUIRE(it != bytes.end());
  it[from.size() - 1] = 'z';
  absl::StatusOr<Graph> g = LoadBytes(bytes);
  REQUIRE(g.ok());
  CAPTURE(OpNames(*g));
  bool addmm = false;
  for (const Operator& op : g->main().ops) {
    if (op.kind != OpKind::kOpaque || op.opaque_name != "aten::addmm.out") continue;
    addmm = true;
    CHECK(op.opaque_reason ==
          "its weight operand is not the transpose of a constant matrix (mica maps addmm as a "
          "linear layer only)");
  }
  CHECK(addmm);
  CHECK(HasOp(*g, OpKind::kBatchMatMul));
  CHECK_FALSE(HasOp(*g, OpKind::kFullyConnected));
}

TEST_CASE("A Cortex-M int8 program maps every operator and keeps channels-last tensors",
          "[pte]") {
  absl::StatusOr<Graph> g = LoadModel(Data("tiny_conv.pte"));
  REQUIRE(g.ok());
  const Subgraph& sg = g->main();
  CAPTURE(OpNames(*g));
  // The input is channels-last in the program: NHWC in memory, NHWC in the IR.
  CHECK(sg.tensors[sg.inputs[0]].shape == std::vector<int32_t>{1, 8, 8, 3});
  for (OpKind k : {OpKind::kQuantize, OpKind::kConv2D, OpKind::kDepthwiseConv2D, OpKind::kAdd,
                   OpKind::kPad, OpKind::kAveragePool2D, OpKind::kMaxPool2D,
                   OpKind::kFullyConnected, OpKind::kSoftmax, OpKind::kDequantize}) {
    CAPTURE(OpKindName(k));
    CHECK(HasOp(*g, k));
  }
  CHECK_FALSE(HasOp(*g, OpKind::kOpaque));
  // No transposes around the convolutions: the program's activations are channels-last.
  int transposes = 0;
  for (const Operator& op : sg.ops) transposes += op.kind == OpKind::kTranspose;
  CHECK(transposes == 1);  // the program's own copy to contiguous order before the linear
  // Every int8 activation carries per-tensor quantization; weights per-channel scales.
  for (const Operator& op : sg.ops) {
    for (int32_t t : op.outputs) {
      if (sg.tensors[t].dtype == DType::kInt8) {
        CAPTURE(sg.tensors[t].name);
        CHECK(sg.tensors[t].quant.scale.size() == 1);
        CHECK(sg.tensors[t].quant.scale[0] > 0.0f);
      }
    }
    if (op.kind == OpKind::kConv2D) CHECK(sg.tensors[op.inputs[1]].quant.scale.size() == 8);
  }
  CHECK(g->metadata.count("executorch.quantization") == 1);
}

TEST_CASE("A bundled program gives its program and its test case", "[pte]") {
  absl::StatusOr<BundledProgram> b = LoadBundledProgram(Data("tiny_conv.bpte"));
  REQUIRE(b.ok());
  CHECK(b->method == "forward");
  REQUIRE(b->test_cases.size() == 1);
  const Subgraph& sg = b->graph.main();
  REQUIRE(b->test_cases[0].inputs.size() == 1);
  REQUIRE(b->test_cases[0].expected_outputs.size() == 1);
  const BundledTensor& in = b->test_cases[0].inputs[0];
  CHECK(in.dtype == DType::kFloat32);
  CHECK(in.shape == sg.tensors[sg.inputs[0]].shape);  // memory order, as the graph's input
  CHECK(in.bytes.size() == 4u * 8 * 8 * 3);
  CHECK(b->test_cases[0].expected_outputs[0].shape == std::vector<int32_t>{1, 5});
  // The same file through LoadModel gives the program.
  absl::StatusOr<Graph> g = LoadModel(Data("tiny_conv.bpte"));
  REQUIRE(g.ok());
  CHECK(g->main().ops.size() == sg.ops.size());
  // A .pte is not a bundled program.
  CHECK_FALSE(LoadBundledProgram(Data("tiny_conv.pte")).ok());
}

TEST_CASE("A program with several methods: the first by default, any by name", "[pte]") {
  const std::vector<uint8_t> bytes = testing::ReadFile(Data("tiny_methods.pte"));
  auto shared = std::make_shared<const std::vector<uint8_t>>(bytes);
  absl::StatusOr<Graph> first = LoadExecuTorch(shared, "m.pte");
  REQUIRE(first.ok());
  CHECK(first->metadata.at("executorch.method") == "forward");
  CHECK(first->metadata.at("executorch.methods") == "forward,scale");
  CHECK(first->main().inputs.size() == 1);
  absl::StatusOr<Graph> scale = LoadExecuTorch(shared, "m.pte", "scale");
  REQUIRE(scale.ok());
  CHECK(scale->metadata.at("executorch.method") == "scale");
  CHECK(scale->main().name == "scale");
  CHECK(scale->main().inputs.size() == 2);
  CHECK(HasOp(*scale, OpKind::kMul));
  CHECK(HasOp(*scale, OpKind::kRelu));
  absl::StatusOr<Graph> none = LoadExecuTorch(shared, "m.pte", "backward");
  REQUIRE_FALSE(none.ok());
  CHECK(std::string(none.status().message()) ==
        "m.pte: no method 'backward' (the program has 'forward', 'scale')");
  // A one-method program records no method list.
  absl::StatusOr<Graph> one = LoadModel(Data("tiny_conv.pte"));
  REQUIRE(one.ok());
  CHECK(one->metadata.count("executorch.methods") == 0);

  // The bundled program: one suite per method; each suite loads its own method.
  absl::StatusOr<BundledProgram> b = LoadBundledProgram(Data("tiny_methods.bpte"));
  REQUIRE(b.ok());
  CHECK(b->method == "forward");
  REQUIRE(b->test_cases.size() == 1);
  CHECK(b->test_cases[0].inputs.size() == 1);
  absl::StatusOr<BundledProgram> bs = LoadBundledProgram(Data("tiny_methods.bpte"), "scale");
  REQUIRE(bs.ok());
  CHECK(bs->method == "scale");
  CHECK(bs->graph.main().name == "scale");
  REQUIRE(bs->test_cases.size() == 1);
  CHECK(bs->test_cases[0].inputs.size() == 2);
  CHECK(bs->test_cases[0].expected_outputs[0].shape == std::vector<int32_t>{4});
  CHECK_FALSE(LoadBundledProgram(Data("tiny_methods.bpte"), "backward").ok());
}

TEST_CASE("A delegated call loads as an opaque operator naming its backend and blob", "[pte]") {
  absl::StatusOr<Graph> g = LoadModel(Data("tiny_xnnpack.pte"));
  REQUIRE(g.ok());
  REQUIRE(g->main().ops.size() == 1);
  const Operator& op = g->main().ops[0];
  CHECK(op.kind == OpKind::kOpaque);
  CHECK(op.opaque_name == "delegate:XnnpackBackend");
  CHECK_THAT(op.opaque_reason, Catch::StartsWith("delegated to backend 'XnnpackBackend' ("));
  CHECK_THAT(op.opaque_reason, Catch::EndsWith("-byte blob, opaque to mica)"));
  REQUIRE(op.inputs.size() == 1);
  REQUIRE(op.outputs.size() == 1);
  CHECK(g->main().tensors[op.inputs[0]].shape == std::vector<int32_t>{1, 2, 6, 6});
  CHECK(g->main().tensors[op.outputs[0]].shape == std::vector<int32_t>{1, 2, 3, 3});
}

TEST_CASE("Operators mica does not map load as opaque ones with a reason", "[pte]") {
  std::vector<uint8_t> bytes = testing::ReadFile(Data("tiny_float.pte"));
  // Rename the program's relu operator ("aten::relu" -> "aten::relv"): same length, so the
  // flatbuffer stays valid.
  const std::string from = "aten::relu";
  auto it = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  REQUIRE(it != bytes.end());
  it[from.size() - 1] = 'v';
  absl::StatusOr<Graph> g = LoadBytes(bytes);
  REQUIRE(g.ok());
  int opaque = 0;
  for (const Operator& op : g->main().ops) {
    if (op.kind != OpKind::kOpaque) continue;
    ++opaque;
    CHECK(op.opaque_name == "aten::relv.out");
    CHECK(op.opaque_reason == "not an operator mica maps");
    REQUIRE(op.inputs.size() == 1);
    REQUIRE(op.outputs.size() == 1);
    CHECK(g->main().tensors[op.outputs[0]].shape == std::vector<int32_t>{1, 8, 8, 8});
  }
  CHECK(opaque == 2);
  CHECK_FALSE(HasOp(*g, OpKind::kRelu));
}

// Every truncation and many single-byte corruptions of a valid program either load into a
// valid graph or fail with one line naming the file.
TEST_CASE("Hostile programs: truncations and corruptions are refused in one line", "[pte]") {
  for (const char* name :
       {"tiny_conv.pte", "tiny_float.pte", "tiny_conv.bpte", "tiny_linear.pte"}) {
    const std::vector<uint8_t> good = testing::ReadFile(Data(name));
    REQUIRE(LoadBytes(good).ok());
    auto check = [](const absl::StatusOr<Graph>& g) {
      if (g.ok()) return;
      const std::string msg(g.status().message());
      CAPTURE(msg);
      CHECK(msg.rfind("x.pte: ", 0) == 0);
      CHECK(msg.find('\n') == std::string::npos);
    };
    for (size_t n = 0; n < good.size(); n += 1 + n / 16) {
      check(LoadBytes(std::vector<uint8_t>(good.begin(), good.begin() + n)));
    }
    for (size_t i = 0; i < good.size(); i += 3) {
      std::vector<uint8_t> bad = good;
      bad[i] ^= static_cast<uint8_t>(0x5a + i);
      check(LoadBytes(bad));
    }
  }
}

// Patches every 8-byte value of `good` (at 4-byte steps) that `plausible` accepts with each of
// `hostile` in turn; each patched program must load or fail with a one-line error naming the
// file. Returns how many programs were tried.
template <typename T, typename Plausible>
int LoadWithEachPatched(const std::vector<uint8_t>& good, Plausible plausible,
                        std::initializer_list<T> hostile) {
  int patched = 0;
  for (size_t at = 0; at + 8 <= good.size(); at += 4) {
    T v;
    std::memcpy(&v, good.data() + at, 8);
    if (!plausible(v)) continue;
    for (T h : hostile) {
      std::vector<uint8_t> bad = good;
      std::memcpy(bad.data() + at, &h, 8);
      ++patched;
      const absl::StatusOr<Graph> g = LoadBytes(std::move(bad));
      if (!g.ok()) {
        const std::string msg(g.status().message());
        CAPTURE(at, h, msg);
        CHECK(msg.rfind("x.pte: ", 0) == 0);
        CHECK(msg.find('\n') == std::string::npos);
      }
    }
  }
  return patched;
}

// Every small integer the program stores as a 64-bit value (operator arguments: depth
// multipliers, zero points, clamps, shifts) set to the extremes of int64: the importer must
// refuse or map each without overflowing (UBSan aborts on signed overflow in CI's build).
TEST_CASE("Hostile programs: integer arguments at the extremes of int64", "[pte]") {
  const std::vector<uint8_t> good = testing::ReadFile(Data("ds_cnn.pte"));
  REQUIRE(LoadBytes(good).ok());
  const int patched = LoadWithEachPatched<int64_t>(
      good, [](int64_t v) { return v >= -256 && v <= 256 && v != 0; },
      {INT64_MAX, INT64_MIN, int64_t{0x7a00000000000001}, -(int64_t{1} << 40)});
  CHECK(patched > 100);
}

TEST_CASE("Hostile programs: floating-point arguments out of every integer's range", "[pte]") {
  // A quantized PAD's value becomes a zero point: 1e19 or NaN there once reached a float to
  // int64 conversion (undefined behaviour, found by fuzz_pte). Every plausible double of the
  // program is set to values no integer type holds.
  const std::vector<uint8_t> good = testing::ReadFile(Data("ds_cnn.pte"));
  REQUIRE(LoadBytes(good).ok());
  const int patched = LoadWithEachPatched<double>(
      good,
      [](double v) { return std::isfinite(v) && std::fabs(v) >= 1e-6 && std::fabs(v) <= 1e6; },
      {1e19, -1e19, std::numeric_limits<double>::quiet_NaN(),
       std::numeric_limits<double>::infinity(), 0.5});
  CHECK(patched > 10);
}

TEST_CASE("Hostile programs: extended header and segments outside the file", "[pte]") {
  const std::vector<uint8_t> good = testing::ReadFile(Data("tiny_conv.pte"));
  REQUIRE(good.size() > 40);
  REQUIRE(std::memcmp(good.data() + 8, "eh00", 4) == 0);
  auto put64 = [](std::vector<uint8_t>& b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  std::vector<uint8_t> bad = good;
  put64(bad, 16, good.size() + 1);  // program size past the end
  absl::StatusOr<Graph> g = LoadBytes(bad);
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("program size"));
  bad = good;
  put64(bad, 24, uint64_t{1} << 40);  // segments far past the end
  g = LoadBytes(bad);
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("past the end"));
  // The file cut right after its flatbuffer: the constant segment is gone.
  uint64_t program_size = 0;
  for (int i = 7; i >= 0; --i) program_size = (program_size << 8) | good[16 + i];
  REQUIRE(program_size < good.size());
  g = LoadBytes(std::vector<uint8_t>(good.begin(), good.begin() + program_size));
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("past the end of the"));
  // Another program format version is named.
  bad = good;
  bad[6] = '1', bad[7] = '0';
  g = LoadBytes(bad);
  REQUIRE_FALSE(g.ok());
  CHECK_THAT(std::string(g.status().message()), Catch::Contains("'ET10' is not supported"));
}

}  // namespace
}  // namespace mica
