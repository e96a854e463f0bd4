// Integer LSTM against a per-batch, per-step reference (time- and batch-major layouts,
// several batches and steps, cell clipping), and against a float LSTM built from the same
// quantized weights, which checks the meaning of the documented parameters.
#include "mica/kernels/lstm.h"

#include <cmath>
#include <vector>

#include "elem_test_util.h"
#include "testing/catch.h"
#include "testing/reference/recurrent_ref.h"
#include "testing/shared.h"

namespace mica {
namespace {

using kernels::KernelStatus;
using kernels::LstmGateParams;
using kernels::LstmParams;
using testing::ElemRng;
using testing::RefClamp;
using testing::RefMultiplyByQuantizedMultiplier;

struct GateData {
  std::vector<int8_t> w, r;
  std::vector<int32_t> b;
  double sw = 0, sr = 0;
};

struct LstmCase {
  LstmParams p;
  GateData g[4];  // forget, input, cell, output
  double sx = 0, sh = 0, sc = 0;
};

LstmCase MakeCase(ElemRng& rng) {
  LstmCase c;
  LstmParams& p = c.p;
  p.batch = rng.Uniform(1, 3);
  p.time_steps = rng.Uniform(1, 5);
  p.input_size = rng.Uniform(1, 12);
  p.state_size = rng.Uniform(1, 10);
  p.time_major = rng.Chance(0.5);
  c.sx = rng.Real(0.01, 0.05);
  c.sh = rng.Real(1.0 / 110, 1.0 / 90);  // int8 hidden must cover (-1, 1)
  p.cell_state_scale_power = rng.Uniform(-13, -10);
  c.sc = std::ldexp(1.0, p.cell_state_scale_power);
  p.input_zero_point = rng.Uniform(-20, 20);
  p.hidden_zero_point = rng.Uniform(-5, 5);
  kernels::LstmGateParams* gates[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate, &p.output_gate};
  for (int k = 0; k < 4; ++k) {
    GateData& g = c.g[k];
    g.sw = rng.Real(0.002, 0.01);
    g.sr = rng.Real(0.002, 0.01);
    g.w = rng.Fill<int8_t>(static_cast<size_t>(p.state_size) * p.input_size, -127, 127);
    g.r = rng.Fill<int8_t>(static_cast<size_t>(p.state_size) * p.state_size, -127, 127);
    g.b = rng.Fill<int32_t>(static_cast<size_t>(p.state_size), -3000, 3000);
    gates[k]->input_weights = g.w.data();
    gates[k]->recurrent_weights = g.r.data();
    gates[k]->bias = rng.Chance(0.9) ? g.b.data() : nullptr;
    if (gates[k]->bias == nullptr) std::fill(g.b.begin(), g.b.end(), 0);
    gates[k]->input_fc = testing::QuantizeRef(static_cast<double>(static_cast<float>(c.sx * g.sw)) / std::ldexp(1.0, -12));
    gates[k]->recurrent_fc = testing::QuantizeRef(static_cast<double>(static_cast<float>(c.sh * g.sr)) / std::ldexp(1.0, -12));
  }
  p.forget_cell_mul = testing::QuantizeRef(std::ldexp(1.0, -15) * c.sc / c.sc);
  p.input_cell_mul = testing::QuantizeRef(std::ldexp(1.0, -30) / c.sc);
  p.hidden_mul = testing::QuantizeRef(std::ldexp(1.0, -30) / c.sh);
  p.cell_clip_enabled = rng.Chance(0.3);
  p.quantized_cell_clip = static_cast<int16_t>(rng.Uniform(500, 20000));
  return c;
}

int16_t Sat16(int64_t v) { return static_cast<int16_t>(RefClamp(v, -32768, 32767)); }

// Reference: one batch row, one step.
void RefStep(const LstmCase& c, const int8_t* x, int8_t* h, int16_t* cell) {
  const LstmParams& p = c.p;
  const int n = p.state_size;
  const kernels::LstmGateParams* gp[4] = {&p.forget_gate, &p.input_gate, &p.cell_gate, &p.output_gate};
  std::vector<int16_t> gate[4];
  auto compute = [&](int k) {
    gate[k].resize(n);
    for (int j = 0; j < n; ++j) {
      int64_t a = c.g[k].b[j];
      for (int i = 0; i < p.input_size; ++i) a += int64_t{c.g[k].w[j * p.input_size + i]} * (x[i] - p.input_zero_point);
      int64_t r = 0;
      for (int i = 0; i < n; ++i) r += int64_t{c.g[k].r[j * n + i]} * (h[i] - p.hidden_zero_point);
      const int16_t in = Sat16(RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(a), gp[k]->input_fc.multiplier, gp[k]->input_fc.shift));
      const int16_t re = Sat16(RefMultiplyByQuantizedMultiplier(static_cast<int32_t>(r), gp[k]->recurrent_fc.multiplier, gp[k]->recurrent_fc.shift));
      const int16_t s = Sat16(int64_t{in} + re);
      const bool sig = k != 2 || p.cell_gate_sigmoid;
      gate[k][j] = sig ? testing::RefSigmoidQ12(s) : testing::RefTanhInt16(s, 3, 0);
    }
  };
  compute(0);
  compute(1);
  compute(2);
  for (int j = 0; j < n; ++j) {
    const int16_t fc = Sat16(RefMultiplyByQuantizedMultiplier(gate[0][j] * cell[j], p.forget_cell_mul.multiplier, p.forget_cell_mul.shift));
    const int16_t ic = Sat16(RefMultiplyByQuantizedMultiplier(gate[1][j] * gate[2][j], p.input_cell_mul.multiplier, p.input_cell_mul.shift));
    int16_t v = Sat16(int64_t{fc} + ic);
    if (p.cell_clip_enabled) v = static_cast<int16_t>(std::min<int>(std::max<int>(v, -p.quantized_cell_clip), p.quantized_cell_clip));
    cell[j] = v;
  }
  compute(3);
  const int sh = 12 + p.cell_state_scale_power;  // 15 + power - 3
  const int32_t mult = sh < 0 ? 3 : 3 << sh, rshift = sh < 0 ? -sh : 0;
  for (int j = 0; j < n; ++j) {
    const int16_t t = testing::RefTanhInt16(cell[j], mult, rshift);
    h[j] = static_cast<int8_t>(RefClamp(int64_t{RefMultiplyByQuantizedMultiplier(t * gate[3][j], p.hidden_mul.multiplier, p.hidden_mul.shift)} + p.hidden_zero_point, -128, 127));
  }
}

TEST_CASE("Lstm matches the step reference and a float LSTM", "[kernels][lstm]") {
  const uint64_t seed = testing::TestSeed(0x157);
  CAPTURE(seed);
  ElemRng rng(seed);
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    LstmCase c = MakeCase(rng);
    const LstmParams& p = c.p;
    CAPTURE(p.batch, p.time_steps, p.input_size, p.state_size, p.time_major, p.cell_state_scale_power,
            p.cell_clip_enabled);
    const size_t n_in = static_cast<size_t>(p.batch) * p.time_steps * p.input_size;
    const size_t n_out = static_cast<size_t>(p.batch) * p.time_steps * p.state_size;
    const auto x = rng.Fill<int8_t>(n_in, -128, 127);
    std::vector<int8_t> h(static_cast<size_t>(p.batch) * p.state_size);
    std::vector<int16_t> cell(h.size());
    for (auto& v : h) v = static_cast<int8_t>(rng.Uniform(-100, 100));
    for (auto& v : cell) v = static_cast<int16_t>(rng.Uniform(-4000, 4000));
    std::vector<int8_t> h_ref = h;
    std::vector<int16_t> c_ref = cell;
    const std::vector<int8_t> h0 = h;
    const std::vector<int16_t> c0 = cell;
    std::vector<double> hf(h.size()), cf(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      hf[i] = c.sh * (h[i] - p.hidden_zero_point);
      cf[i] = c.sc * cell[i];
    }
    std::vector<int8_t> out(n_out, 0x55), out_ref(n_out);
    std::vector<uint8_t> scratch(kernels::LstmScratchBytes(p, kernels::Isa::kScalar));
    REQUIRE(kernels::Lstm(p, x.data(), h.data(), cell.data(), out.data(), {scratch.data(), scratch.size()}) ==
            KernelStatus::kOk);
    double max_err = 0, first_err = 0;
    for (int b = 0; b < p.batch; ++b) {
      for (int t = 0; t < p.time_steps; ++t) {
        const size_t row = p.time_major ? static_cast<size_t>(t) * p.batch + b : static_cast<size_t>(b) * p.time_steps + t;
        const int8_t* xr = &x[row * p.input_size];
        RefStep(c, xr, &h_ref[static_cast<size_t>(b) * p.state_size], &c_ref[static_cast<size_t>(b) * p.state_size]);
        std::copy_n(&h_ref[static_cast<size_t>(b) * p.state_size], p.state_size, &out_ref[row * p.state_size]);
        // Float LSTM on the dequantized weights.
        if (p.cell_clip_enabled) continue;
        double* hb = &hf[static_cast<size_t>(b) * p.state_size];
        double* cb = &cf[static_cast<size_t>(b) * p.state_size];
        std::vector<double> gv[4];
        for (int k = 0; k < 4; ++k) {
          gv[k].resize(p.state_size);
          for (int j = 0; j < p.state_size; ++j) {
            double a = c.sx * c.g[k].sw * c.g[k].b[j];
            for (int i = 0; i < p.input_size; ++i) a += c.g[k].sw * c.g[k].w[j * p.input_size + i] * c.sx * (xr[i] - p.input_zero_point);
            for (int i = 0; i < p.state_size; ++i) a += c.g[k].sr * c.g[k].r[j * p.state_size + i] * hb[i];
            gv[k][j] = k == 2 ? std::tanh(a) : 1 / (1 + std::exp(-a));
          }
        }
        for (int j = 0; j < p.state_size; ++j) {
          cb[j] = gv[0][j] * cb[j] + gv[1][j] * gv[2][j];
          hb[j] = gv[3][j] * std::tanh(cb[j]);
          const double hq = c.sh * (out_ref[row * p.state_size + j] - p.hidden_zero_point);
          max_err = std::max(max_err, std::abs(hq - hb[j]));
          if (t == 0) first_err = std::max(first_err, std::abs(hq - hb[j]));
        }
      }
    }
    REQUIRE(out == out_ref);
    REQUIRE(h == h_ref);
    REQUIRE(cell == c_ref);
    // Every compiled body, from the same initial state.
    for (const auto& v : kernels::LstmVariants()) {
      CAPTURE(v.name);
      std::vector<int8_t> hv = h0, ov(n_out, 0x55);
      std::vector<int16_t> cv = c0;
      REQUIRE(v.fn(p, x.data(), hv.data(), cv.data(), ov.data(),
                   {scratch.data(), scratch.size()}) == KernelStatus::kOk);
      REQUIRE(ov == out_ref);
      REQUIRE(hv == h_ref);
      REQUIRE(cv == c_ref);
    }
    CAPTURE(max_err, first_err);
    // The quantized LSTM tracks the float one (hidden in (-1, 1)): tightly on the first step,
    // more loosely later as random recurrent weights amplify earlier rounding.
    REQUIRE(first_err < 0.02);
    REQUIRE(max_err < 0.15);
  }
}

TEST_CASE("Lstm rejects bad arguments and sizes its scratch", "[kernels][lstm]") {
  LstmParams p;
  p.input_size = 3;
  p.state_size = 4;
  p.batch = 2;
  p.time_major = true;
  CHECK(kernels::LstmScratchBytes(p, kernels::Isa::kDsp) == 3 * 2 * 4 * sizeof(int16_t));
  p.time_major = false;
  CHECK(kernels::LstmScratchBytes(p, kernels::Isa::kScalar) == 3 * 4 * sizeof(int16_t));
  int8_t x[6] = {}, h[8] = {}, out[8] = {};
  int16_t c[8] = {};
  uint8_t s[64];
  CHECK(kernels::Lstm(p, x, h, c, out, {s, sizeof(s)}) == KernelStatus::kArgError);  // no weights
  // Zero points outside int8's range (with weights present).
  int8_t w[16] = {};
  for (LstmGateParams* g : {&p.forget_gate, &p.input_gate, &p.cell_gate, &p.output_gate}) {
    g->input_weights = w;
    g->recurrent_weights = w;
  }
  for (const auto& v : kernels::LstmVariants()) {
    CAPTURE(v.name);
    CHECK(v.fn(p, x, h, c, out, {s, sizeof(s)}) == KernelStatus::kOk);
    p.input_zero_point = 128;
    CHECK(v.fn(p, x, h, c, out, {s, sizeof(s)}) == KernelStatus::kArgError);
    p.input_zero_point = 0;
    p.hidden_zero_point = -129;
    CHECK(v.fn(p, x, h, c, out, {s, sizeof(s)}) == KernelStatus::kArgError);
    p.hidden_zero_point = 0;
  }
}

}  // namespace
}  // namespace mica
