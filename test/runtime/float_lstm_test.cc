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
  bool peephole = false, layer_norm = false;
  int projection = 0;  // output size with a projection layer (0: none)
  float proj_clip = 0.f;
};

void CheckFloatLstm(const LstmCase& c, uint32_t seed) {
  CAPTURE(c.cifg, c.time_major, c.clip, c.peephole, c.layer_norm, c.projection, c.proj_clip, seed);
  const int n_out = c.projection > 0 ? c.projection : c.state;
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
  attrs.proj_clip = c.proj_clip;
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
    op.inputs[5 + gi] = add({c.state, n_out}, true, "r" + std::to_string(gi));
    op.inputs[12 + gi] = add({c.state}, true, "b" + std::to_string(gi));
    if (c.layer_norm) op.inputs[20 + gi] = add({c.state}, true, "ln" + std::to_string(gi));
  }
  if (c.peephole) {
    if (!c.cifg) op.inputs[9] = add({c.state}, true, "pi");
    op.inputs[10] = add({c.state}, true, "pf");
    op.inputs[11] = add({c.state}, true, "po");
  }
  if (c.projection > 0) {
    op.inputs[16] = add({n_out, c.state}, true, "pw");
    op.inputs[17] = add({n_out}, true, "pb");
  }
  op.inputs[18] = add({c.batch, n_out}, false, "h");
  op.inputs[19] = add({c.batch, c.state}, false, "c");
  sg.tensors[op.inputs[18]].is_variable = true;
  sg.tensors[op.inputs[19]].is_variable = true;
  std::vector<int32_t> out_shape = in_shape;
  out_shape[2] = n_out;
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
  std::vector<float> got(static_cast<size_t>(c.batch) * c.steps * n_out);
  REQUIRE((*out)[0].bytes.size() == got.size() * 4);
  std::memcpy(got.data(), (*out)[0].bytes.data(), (*out)[0].bytes.size());

  // Reference in double: gates i, f, g, o (peepholes on the previous cell state for i and f,
  // on the new one for o; layer norm before the bias); c = f c + i g; h = o tanh(c); then the
  // projection.
  auto sig = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  auto vec = [&](int idx) { return idx >= 0 ? data[idx] : std::vector<float>(); };
  for (int b = 0; b < c.batch; ++b) {
    std::vector<double> h(n_out, 0.0), cs(c.state, 0.0);
    for (int t = 0; t < c.steps; ++t) {
      const int row = c.time_major ? t * c.batch + b : b * c.steps + t;
      std::vector<double> gate[4];
      for (int gi = 0; gi < 4; ++gi) {
        gate[gi].assign(c.state, 0.0);
        if (c.cifg && gi == 0) continue;
        const auto& w = data[op.inputs[1 + gi]];
        const auto& r = data[op.inputs[5 + gi]];
        for (int s = 0; s < c.state; ++s) {
          double acc = 0;
          for (int k = 0; k < c.input; ++k) acc += double{w[s * c.input + k]} * x[row * c.input + k];
          for (int k = 0; k < n_out; ++k) acc += double{r[s * n_out + k]} * h[k];
          gate[gi][s] = acc;
        }
      }
      auto finish = [&](int gi, const std::vector<double>& cell_state) {
        const int peep_input = gi == 0 ? 9 : gi == 1 ? 10 : gi == 3 ? 11 : -1;
        if (c.peephole && peep_input >= 0) {
          const auto p = vec(op.inputs[peep_input]);
          for (int s = 0; s < c.state; ++s) gate[gi][s] += double{p[s]} * cell_state[s];
        }
        if (c.layer_norm) {
          double mean = 0, var = 0;
          for (double v : gate[gi]) mean += v;
          mean /= c.state;
          for (double v : gate[gi]) var += (v - mean) * (v - mean);
          var /= c.state;
          const auto ln = vec(op.inputs[20 + gi]);
          for (int s = 0; s < c.state; ++s) {
            gate[gi][s] = (gate[gi][s] - mean) / std::sqrt(var + 1e-8) * ln[s];
          }
        }
        const auto bias = vec(op.inputs[12 + gi]);
        for (int s = 0; s < c.state; ++s) gate[gi][s] += bias[s];
      };
      if (!c.cifg) finish(0, cs);
      finish(1, cs);
      finish(2, cs);
      std::vector<double> cn(c.state);
      for (int s = 0; s < c.state; ++s) {
        const double f = sig(gate[1][s]);
        const double i = c.cifg ? 1.0 - f : sig(gate[0][s]);
        cn[s] = f * cs[s] + i * std::tanh(gate[2][s]);
        if (c.clip > 0) cn[s] = std::min<double>(c.clip, std::max<double>(-c.clip, cn[s]));
      }
      cs = cn;
      finish(3, cs);
      std::vector<double> hid(c.state);
      for (int s = 0; s < c.state; ++s) hid[s] = sig(gate[3][s]) * std::tanh(cs[s]);
      if (c.projection > 0) {
        const auto pw = vec(op.inputs[16]);
        const auto pb = vec(op.inputs[17]);
        for (int o = 0; o < n_out; ++o) {
          double acc = pb[o];
          for (int s = 0; s < c.state; ++s) acc += double{pw[o * c.state + s]} * hid[s];
          if (c.proj_clip > 0) acc = std::min<double>(c.proj_clip, std::max<double>(-c.proj_clip, acc));
          h[o] = acc;
        }
      } else {
        h = hid;
      }
      for (int o = 0; o < n_out; ++o) {
        CAPTURE(b, t, o);
        REQUIRE(std::abs(got[row * n_out + o] - h[o]) < 2e-5);
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

TEST_CASE("float LSTM variants: peephole, projection, layer norm (TFLite's equations)",
          "[runtime][lstm]") {
  uint32_t seed = 10;
  for (bool cifg : {false, true}) {
    LstmCase peep;
    peep.cifg = cifg;
    peep.peephole = true;
    CheckFloatLstm(peep, seed++);
    LstmCase proj;
    proj.cifg = cifg;
    proj.projection = 3;
    CheckFloatLstm(proj, seed++);
    proj.proj_clip = 0.2f;
    proj.projection = 7;
    CheckFloatLstm(proj, seed++);
    LstmCase ln;
    ln.cifg = cifg;
    ln.layer_norm = true;
    CheckFloatLstm(ln, seed++);
    LstmCase all;
    all.cifg = cifg;
    all.peephole = all.layer_norm = true;
    all.projection = 4;
    all.clip = 0.5f;
    all.time_major = true;
    CheckFloatLstm(all, seed++);
  }
}

TEST_CASE("float LSTM variants: inconsistent variant inputs are refused", "[runtime][lstm]") {
  // Built by hand: one peephole of three is invalid.
  Graph g;
  g.source_path = "lstm.tflite";
  g.subgraphs.emplace_back();
  Subgraph& sg = g.main();
  auto add = [&](std::vector<int32_t> shape, bool constant) {
    Tensor t;
    t.shape = std::move(shape);
    if (constant) {
      t.data = g.AddConstData(std::vector<uint8_t>(static_cast<size_t>(t.num_elements()) * 4, 0));
    }
    sg.tensors.push_back(std::move(t));
    return static_cast<int32_t>(sg.tensors.size() - 1);
  };
  Operator op;
  op.kind = OpKind::kUnidirectionalSequenceLstm;
  op.attrs = LstmAttrs{};
  op.inputs.assign(24, kNoTensor);
  op.inputs[0] = add({1, 2, 3}, false);
  for (int gi = 0; gi < 4; ++gi) {
    op.inputs[1 + gi] = add({4, 3}, true);
    op.inputs[5 + gi] = add({4, 4}, true);
    op.inputs[12 + gi] = add({4}, true);
  }
  op.inputs[10] = add({4}, true);  // forget peephole only
  op.inputs[18] = add({1, 4}, false);
  op.inputs[19] = add({1, 4}, false);
  sg.tensors[op.inputs[18]].is_variable = sg.tensors[op.inputs[19]].is_variable = true;
  op.outputs = {add({1, 2, 4}, false)};
  sg.ops.push_back(op);
  sg.inputs = {op.inputs[0]};
  sg.outputs = op.outputs;
  auto exec = Executor::Create(g);
  REQUIRE_FALSE(exec.ok());
  CHECK_THAT(std::string(exec.status().message()), Catch::Contains("peephole weights"));
}

}  // namespace
}  // namespace runtime
}  // namespace mica
