// Float UNIDIRECTIONAL_SEQUENCE_LSTM (the fp32 fallback path) against a double-precision
// reference of TFLite's LSTM equations, with and without CIFG and cell clipping.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"

namespace mica {
namespace runtime {
namespace {

struct LstmCase {
  int batch = 2, steps = 3, input = 4, state = 5;
  bool cifg = false, time_major = false;
  float clip = 0.f;
};

void CheckFloatLstm(const LstmCase& c, uint32_t seed) {
  CAPTURE(c.cifg, c.time_major, c.clip, seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-0.8f, 0.8f);
  Graph g;
  g.source_path = "lstm.tflite";
  g.subgraphs.emplace_back();
  Subgraph& sg = g.main();
  std::vector<std::vector<float>> data(24);
  auto add = [&](std::vector<int32_t> shape, bool constant, std::string name) {
    Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    const int32_t idx = static_cast<int32_t>(sg.tensors.size());
    if (constant) {
      std::vector<float> v(static_cast<size_t>(t.num_elements()));
      for (float& x : v) x = dist(rng);
      data[idx] = v;
      std::vector<uint8_t> bytes(v.size() * 4);
      std::memcpy(bytes.data(), v.data(), bytes.size());
      t.data = g.AddConstData(std::move(bytes));
    }
    sg.tensors.push_back(std::move(t));
    return idx;
  };
  Operator op;
  op.kind = OpKind::kUnidirectionalSequenceLstm;
  LstmAttrs attrs;
  attrs.cell_clip = c.clip;
  attrs.time_major = c.time_major;
  op.attrs = attrs;
  op.inputs.assign(24, kNoTensor);
  const std::vector<int32_t> in_shape =
      c.time_major ? std::vector<int32_t>{c.steps, c.batch, c.input}
                   : std::vector<int32_t>{c.batch, c.steps, c.input};
  op.inputs[0] = add(in_shape, false, "x");
  for (int gi = 0; gi < 4; ++gi) {
    if (c.cifg && gi == 0) continue;
    op.inputs[1 + gi] = add({c.state, c.input}, true, "w" + std::to_string(gi));
    op.inputs[5 + gi] = add({c.state, c.state}, true, "r" + std::to_string(gi));
    op.inputs[12 + gi] = add({c.state}, true, "b" + std::to_string(gi));
  }
  op.inputs[18] = add({c.batch, c.state}, false, "h");
  op.inputs[19] = add({c.batch, c.state}, false, "c");
  sg.tensors[op.inputs[18]].is_variable = true;
  sg.tensors[op.inputs[19]].is_variable = true;
  std::vector<int32_t> out_shape = in_shape;
  out_shape[2] = c.state;
  const int32_t y = add(out_shape, false, "y");
  op.outputs = {y};
  sg.ops.push_back(op);
  sg.inputs = {op.inputs[0]};
  sg.outputs = {y};
  const absl::Status valid = ValidateGraph(g);
  INFO(std::string(valid.message()));
  REQUIRE(valid.ok());
  auto exec = Executor::Create(g);
  INFO((exec.ok() ? std::string("ok") : std::string(exec.status().message())));
  REQUIRE(exec.ok());
  std::vector<float> x(static_cast<size_t>(c.batch) * c.steps * c.input);
  for (float& v : x) v = 2 * dist(rng);
  HostTensor hx{DType::kFloat32, in_shape, std::vector<uint8_t>(x.size() * 4)};
  std::memcpy(hx.bytes.data(), x.data(), hx.bytes.size());
  auto out = (*exec)->Run({hx});
  REQUIRE(out.ok());
  std::vector<float> got(static_cast<size_t>(c.batch) * c.steps * c.state);
  REQUIRE((*out)[0].bytes.size() == got.size() * 4);
  std::memcpy(got.data(), (*out)[0].bytes.data(), (*out)[0].bytes.size());

  // Reference in double: gates i, f, g, o; c = f c + i g; h = o tanh(c).
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  for (int b = 0; b < c.batch; ++b) {
    std::vector<double> h(c.state, 0.0), cs(c.state, 0.0);
    for (int t = 0; t < c.steps; ++t) {
      const int row = c.time_major ? t * c.batch + b : b * c.steps + t;
      std::vector<double> gate[4];
      for (int gi = 0; gi < 4; ++gi) {
        gate[gi].assign(c.state, 0.0);
        if (c.cifg && gi == 0) continue;
        const auto& w = data[op.inputs[1 + gi]];
        const auto& r = data[op.inputs[5 + gi]];
        const auto& bias = data[op.inputs[12 + gi]];
        for (int s = 0; s < c.state; ++s) {
          double acc = bias[s];
          for (int k = 0; k < c.input; ++k) acc += double{w[s * c.input + k]} * x[row * c.input + k];
          for (int k = 0; k < c.state; ++k) acc += double{r[s * c.state + k]} * h[k];
          gate[gi][s] = acc;
        }
      }
      for (int s = 0; s < c.state; ++s) {
        const double f = sig(gate[1][s]);
        const double i = c.cifg ? 1.0 - f : sig(gate[0][s]);
        double cn = f * cs[s] + i * std::tanh(gate[2][s]);
        if (c.clip > 0) cn = std::min<double>(c.clip, std::max<double>(-c.clip, cn));
        cs[s] = cn;
      }
      for (int s = 0; s < c.state; ++s) {
        h[s] = sig(gate[3][s]) * std::tanh(cs[s]);
        CAPTURE(b, t, s);
        REQUIRE(std::abs(got[row * c.state + s] - h[s]) < 1e-5);
      }
    }
  }
}

TEST_CASE("float UNIDIRECTIONAL_SEQUENCE_LSTM matches TFLite's equations", "[runtime][lstm]") {
  CheckFloatLstm(LstmCase{}, 1);
  LstmCase cifg;
  cifg.cifg = true;
  CheckFloatLstm(cifg, 2);
  LstmCase tm;
  tm.time_major = true;
  tm.clip = 0.3f;
  CheckFloatLstm(tm, 3);
}

}  // namespace
}  // namespace runtime
}  // namespace mica
