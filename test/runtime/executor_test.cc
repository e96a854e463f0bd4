// Executor: plan/arena invariants, hooks, errors, and the fp32 kernels against plain reference
// loops written here (seeded random shapes and parameters; MICA_TEST_SEED replays).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "mica/model/builder.h"
#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace runtime {
namespace {

HostTensor FloatTensor(const std::vector<int32_t>& shape, const std::vector<float>& v) {
  HostTensor h;
  h.dtype = DType::kFloat32;
  h.shape = shape;
  h.bytes.resize(v.size() * 4);
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

std::vector<float> Floats(const HostTensor& h) {
  std::vector<float> v(h.bytes.size() / 4);
  std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
  return v;
}

std::vector<float> RandomFloats(std::mt19937_64& rng, int64_t n) {
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

int64_t Count(const std::vector<int32_t>& s) {
  int64_t n = 1;
  for (int32_t d : s) n *= d;
  return n;
}

std::vector<float> ConstValues(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  std::memcpy(v.data(), t.data.bytes(), v.size() * 4);
  return v;
}

// Runs a built float graph on `inputs`, returns output 0.
std::vector<float> RunFloat(const Graph& g, const std::vector<std::vector<float>>& inputs) {
  auto exec = Executor::Create(g);
  if (!exec.ok()) FAIL(std::string(exec.status().message()));
  std::vector<HostTensor> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in.push_back(FloatTensor(g.main().tensors[g.main().inputs[i]].shape, inputs[i]));
  }
  auto out = (*exec)->Run(in);
  if (!out.ok()) FAIL(std::string(out.status().message()));
  return Floats((*out)[0]);
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(got[i] == Approx(want[i]).margin(1e-4).epsilon(1e-4));
  }
}

float Act(float v, Activation a) {
  switch (a) {
    case Activation::kRelu: return std::max(v, 0.f);
    case Activation::kRelu6: return std::min(std::max(v, 0.f), 6.f);
    case Activation::kReluN1To1: return std::min(std::max(v, -1.f), 1.f);
    default: return v;
  }
}

// TFLite output size and leading pad, written independently of the runtime's helpers.
void Geometry(Padding p, int in, int k, int s, int d, int* out, int* pad) {
  const int eff = (k - 1) * d + 1;
  *out = p == Padding::kSame ? (in + s - 1) / s : (in >= eff ? (in - eff) / s + 1 : 0);
  const int total = (*out - 1) * s + eff - in;
  *pad = p == Padding::kSame ? std::max(total, 0) / 2 : 0;
}

const Activation kActs[] = {Activation::kNone, Activation::kRelu, Activation::kRelu6,
                            Activation::kReluN1To1};

TEST_CASE("executor: float conv2d matches reference loops", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(101);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    const int n = U(1, 2), h = U(1, 9), w = U(1, 9), groups = U(1, 2);
    const int cin_g = U(1, 4), cout_g = U(1, 3), kh = U(1, 3), kw = U(1, 3);
    const int cin = cin_g * groups, cout = cout_g * groups;
    Conv2DAttrs a;
    a.padding = U(0, 1) ? Padding::kSame : Padding::kValid;
    a.stride_h = U(1, 2); a.stride_w = U(1, 2);
    a.dilation_h = U(1, 2); a.dilation_w = U(1, 2);
    a.activation = kActs[U(0, 3)];
    int oh, ow, ph, pw;
    Geometry(a.padding, h, kh, a.stride_h, a.dilation_h, &oh, &ph);
    Geometry(a.padding, w, kw, a.stride_w, a.dilation_w, &ow, &pw);
    if (oh <= 0 || ow <= 0) continue;
    GraphBuilder b("conv", seed + iter);
    const int32_t x = b.Input("x", {n, h, w, cin});
    const int32_t f = b.RandomConstant("f", {cout, kh, kw, cin_g}, -1.f, 1.f);
    const bool has_bias = U(0, 1);
    const int32_t bias = has_bias ? b.RandomBias("b", cout, 1.f) : kNoTensor;
    b.Output(b.Conv2D(x, f, bias, a));
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> in = RandomFloats(rng, Count({n, h, w, cin}));
    const std::vector<float> fv = ConstValues(g->main().tensors[f]);
    std::vector<float> bv(cout, 0.f);
    if (has_bias) bv = ConstValues(g->main().tensors[bias]);
    std::vector<float> want;
    for (int bn = 0; bn < n; ++bn)
      for (int oy = 0; oy < oh; ++oy)
        for (int ox = 0; ox < ow; ++ox)
          for (int oc = 0; oc < cout; ++oc) {
            const int grp = oc / cout_g;
            double acc = bv[oc];
            for (int ky = 0; ky < kh; ++ky)
              for (int kx = 0; kx < kw; ++kx)
                for (int ic = 0; ic < cin_g; ++ic) {
                  const int iy = oy * a.stride_h - ph + ky * a.dilation_h;
                  const int ix = ox * a.stride_w - pw + kx * a.dilation_w;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  acc += in[((bn * h + iy) * w + ix) * cin + grp * cin_g + ic] *
                         fv[((oc * kh + ky) * kw + kx) * cin_g + ic];
                }
            want.push_back(Act(static_cast<float>(acc), a.activation));
          }
    ExpectNear(RunFloat(*g, {in}), want);
  }
}

TEST_CASE("executor: float depthwise conv matches reference loops", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(102);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    const int h = U(1, 8), w = U(1, 8), c = U(1, 5), m = U(1, 3), kh = U(1, 3), kw = U(1, 3);
    DepthwiseConv2DAttrs a;
    a.padding = U(0, 1) ? Padding::kSame : Padding::kValid;
    a.stride_h = U(1, 2); a.stride_w = U(1, 2);
    a.dilation_h = U(1, 2); a.dilation_w = U(1, 2);
    a.depth_multiplier = m;
    a.activation = kActs[U(0, 3)];
    int oh, ow, ph, pw;
    Geometry(a.padding, h, kh, a.stride_h, a.dilation_h, &oh, &ph);
    Geometry(a.padding, w, kw, a.stride_w, a.dilation_w, &ow, &pw);
    if (oh <= 0 || ow <= 0) continue;
    GraphBuilder b("dw", seed + iter);
    const int32_t x = b.Input("x", {1, h, w, c});
    const int32_t f = b.RandomConstant("f", {1, kh, kw, c * m}, -1.f, 1.f);
    const int32_t bias = b.RandomBias("b", c * m, 1.f);
    b.Output(b.DepthwiseConv2D(x, f, bias, a));
    auto g = b.Build();
    if (!g.ok()) FAIL(std::string(g.status().message()));
    const std::vector<float> in = RandomFloats(rng, h * w * c);
    const std::vector<float> fv = ConstValues(g->main().tensors[f]);
    const std::vector<float> bv = ConstValues(g->main().tensors[bias]);
    std::vector<float> want;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int oc = 0; oc < c * m; ++oc) {
          double acc = bv[oc];
          for (int ky = 0; ky < kh; ++ky)
            for (int kx = 0; kx < kw; ++kx) {
              const int iy = oy * a.stride_h - ph + ky * a.dilation_h;
              const int ix = ox * a.stride_w - pw + kx * a.dilation_w;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              acc += in[(iy * w + ix) * c + oc / m] * fv[(ky * kw + kx) * c * m + oc];
            }
          want.push_back(Act(static_cast<float>(acc), a.activation));
        }
    ExpectNear(RunFloat(*g, {in}), want);
  }
}

TEST_CASE("executor: float transpose conv matches a scatter reference", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(103);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 20; ++iter) {
    CAPTURE(iter);
    const int h = U(1, 5), w = U(1, 5), cin = U(1, 3), cout = U(1, 3), kh = U(1, 3),
              kw = U(1, 3);
    TransposeConvAttrs a;
    a.padding = U(0, 1) ? Padding::kSame : Padding::kValid;
    a.stride_h = U(1, 2); a.stride_w = U(1, 2);
    // Output size for TFLite's transpose conv: SAME in*stride, VALID (in-1)*stride+k.
    const int oh = a.padding == Padding::kSame ? h * a.stride_h : (h - 1) * a.stride_h + kh;
    const int ow = a.padding == Padding::kSame ? w * a.stride_w : (w - 1) * a.stride_w + kw;
    GraphBuilder b("tconv", seed + iter);
    const int32_t shape = b.Int32Constant("shape", {4}, {1, oh, ow, cout});
    const int32_t f = b.RandomConstant("f", {cout, kh, kw, cin}, -1.f, 1.f);
    const int32_t x = b.Input("x", {1, h, w, cin});
    const std::vector<int32_t> outs = b.AddOp(OpKind::kTransposeConv, a, {shape, f, x});
    if (!b.status().ok()) FAIL(std::string(b.status().message()));
    b.Output(outs[0]);
    auto g = b.Build();
    REQUIRE(g.ok());
    // Padding: TFLite computes it from the output size as for a forward conv.
    int unused, ph, pw;
    Geometry(a.padding, oh, kh, a.stride_h, 1, &unused, &ph);
    Geometry(a.padding, ow, kw, a.stride_w, 1, &unused, &pw);
    const std::vector<float> in = RandomFloats(rng, h * w * cin);
    const std::vector<float> fv = ConstValues(g->main().tensors[f]);
    std::vector<double> acc(static_cast<size_t>(oh * ow * cout), 0.0);
    for (int iy = 0; iy < h; ++iy)
      for (int ix = 0; ix < w; ++ix)
        for (int ky = 0; ky < kh; ++ky)
          for (int kx = 0; kx < kw; ++kx)
            for (int oc = 0; oc < cout; ++oc)
              for (int ic = 0; ic < cin; ++ic) {
                const int oy = iy * a.stride_h - ph + ky, ox = ix * a.stride_w - pw + kx;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                acc[(oy * ow + ox) * cout + oc] +=
                    in[(iy * w + ix) * cin + ic] * fv[((oc * kh + ky) * kw + kx) * cin + ic];
              }
    std::vector<float> want(acc.begin(), acc.end());
    ExpectNear(RunFloat(*g, {in}), want);
  }
}

TEST_CASE("executor: float fully connected and batch matmul", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(104);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 20; ++iter) {
    CAPTURE(iter);
    const int batches = U(1, 3), in = U(1, 9), out = U(1, 7);
    FullyConnectedAttrs a;
    a.activation = kActs[U(0, 3)];
    GraphBuilder b("fc", seed + iter);
    const int32_t x = b.Input("x", {batches, in});
    const int32_t wt = b.RandomConstant("w", {out, in}, -1.f, 1.f);
    const int32_t bias = b.RandomBias("b", out, 1.f);
    b.Output(b.FullyConnected(x, wt, bias, a));
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> xv = RandomFloats(rng, batches * in);
    const std::vector<float> wv = ConstValues(g->main().tensors[wt]);
    const std::vector<float> bv = ConstValues(g->main().tensors[bias]);
    std::vector<float> want;
    for (int bt = 0; bt < batches; ++bt)
      for (int o = 0; o < out; ++o) {
        double acc = bv[o];
        for (int i = 0; i < in; ++i) acc += xv[bt * in + i] * wv[o * in + i];
        want.push_back(Act(static_cast<float>(acc), a.activation));
      }
    ExpectNear(RunFloat(*g, {xv}), want);
  }
  for (int iter = 0; iter < 20; ++iter) {
    CAPTURE(iter);
    const int bl = U(1, 3), br = U(0, 1) ? bl : 1, m = U(1, 4), k = U(1, 5), n = U(1, 4);
    BatchMatMulAttrs a;
    a.adj_x = U(0, 1);
    a.adj_y = U(0, 1);
    GraphBuilder b("bmm", seed + iter);
    const int32_t l = b.Input("l", a.adj_x ? std::vector<int32_t>{bl, k, m}
                                           : std::vector<int32_t>{bl, m, k});
    const int32_t r = b.Input("r", a.adj_y ? std::vector<int32_t>{br, n, k}
                                           : std::vector<int32_t>{br, k, n});
    const std::vector<int32_t> outs = b.AddOp(OpKind::kBatchMatMul, a, {l, r});
    if (!b.status().ok()) FAIL(std::string(b.status().message()));
    b.Output(outs[0]);
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> lv = RandomFloats(rng, bl * m * k);
    const std::vector<float> rv = RandomFloats(rng, br * k * n);
    std::vector<float> want;
    for (int bt = 0; bt < bl; ++bt)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int p = 0; p < k; ++p) {
            const float lx = a.adj_x ? lv[(bt * k + p) * m + i] : lv[(bt * m + i) * k + p];
            const int rb = br == 1 ? 0 : bt;
            const float ry = a.adj_y ? rv[(rb * n + j) * k + p] : rv[(rb * k + p) * n + j];
            acc += lx * ry;
          }
          want.push_back(static_cast<float>(acc));
        }
    ExpectNear(RunFloat(*g, {lv, rv}), want);
  }
}

TEST_CASE("executor: float elementwise ops broadcast like NumPy", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(105);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const OpKind kinds[] = {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv,
                          OpKind::kMaximum, OpKind::kMinimum, OpKind::kSquaredDifference};
  for (int iter = 0; iter < 40; ++iter) {
    CAPTURE(iter);
    const OpKind kind = kinds[U(0, 6)];
    CAPTURE(OpKindName(kind));
    const int rank = U(1, 4);
    std::vector<int32_t> out(rank), sa(rank), sb(rank);
    for (int d = 0; d < rank; ++d) {
      out[d] = U(1, 4);
      sa[d] = U(0, 2) ? out[d] : 1;
      sb[d] = U(0, 2) ? out[d] : 1;
    }
    // Drop leading dims of b sometimes (rank broadcast).
    const int drop = U(0, rank - 1);
    for (int d = 0; d < rank; ++d) out[d] = std::max(sa[d], d >= drop ? sb[d] : 1);
    std::vector<int32_t> sb_short(sb.begin() + drop, sb.end());
    GraphBuilder b("ew", seed + iter);
    const int32_t x = b.Input("a", sa);
    const int32_t y = b.Input("b", sb_short);
    OpAttrs attrs = std::monostate{};
    if (kind == OpKind::kAdd || kind == OpKind::kSub || kind == OpKind::kMul ||
        kind == OpKind::kDiv) {
      attrs = ElementwiseAttrs{kActs[U(0, 3)]};
    }
    const std::vector<int32_t> outs = b.AddOp(kind, attrs, {x, y});
    if (!b.status().ok()) FAIL(std::string(b.status().message()));
    b.Output(outs[0]);
    auto g = b.Build();
    REQUIRE(g.ok());
    std::vector<float> av = RandomFloats(rng, Count(sa));
    std::vector<float> bv = RandomFloats(rng, Count(sb_short));
    if (kind == OpKind::kDiv) {
      for (float& v : bv) v = v >= 0 ? v + 0.5f : v - 0.5f;
    }
    const Activation act = std::holds_alternative<ElementwiseAttrs>(attrs)
                               ? std::get<ElementwiseAttrs>(attrs).activation
                               : Activation::kNone;
    std::vector<float> want;
    std::vector<int> idx(rank, 0);
    for (int64_t o = 0; o < Count(out); ++o) {
      int64_t rem = o, ia = 0, ib = 0, st_a = 1, st_b = 1;
      for (int d = rank - 1; d >= 0; --d) {
        const int i = static_cast<int>(rem % out[d]);
        rem /= out[d];
        ia += (sa[d] == 1 ? 0 : i) * st_a;
        st_a *= sa[d];
        if (d >= drop) {
          ib += (sb[d] == 1 ? 0 : i) * st_b;
          st_b *= sb[d];
        }
      }
      const float p = av[ia], q = bv[ib];
      float r = 0;
      switch (kind) {
        case OpKind::kAdd: r = p + q; break;
        case OpKind::kSub: r = p - q; break;
        case OpKind::kMul: r = p * q; break;
        case OpKind::kDiv: r = p / q; break;
        case OpKind::kMaximum: r = std::max(p, q); break;
        case OpKind::kMinimum: r = std::min(p, q); break;
        default: r = (p - q) * (p - q); break;
      }
      want.push_back(Act(r, act));
    }
    ExpectNear(RunFloat(*g, {av, bv}), want);
  }
}

TEST_CASE("executor: float pools, mean, softmax and activations", "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(106);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  auto U = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 20; ++iter) {
    CAPTURE(iter);
    const int h = U(1, 7), w = U(1, 7), c = U(1, 3);
    Pool2DAttrs a;
    a.padding = U(0, 1) ? Padding::kSame : Padding::kValid;
    a.filter_h = U(1, 3); a.filter_w = U(1, 3);
    a.stride_h = U(1, 2); a.stride_w = U(1, 2);
    int oh, ow, ph, pw;
    Geometry(a.padding, h, a.filter_h, a.stride_h, 1, &oh, &ph);
    Geometry(a.padding, w, a.filter_w, a.stride_w, 1, &ow, &pw);
    if (oh <= 0 || ow <= 0) continue;
    const bool max = U(0, 1);
    GraphBuilder b("pool", seed + iter);
    const int32_t x = b.Input("x", {1, h, w, c});
    b.Output(max ? b.MaxPool2D(x, a) : b.AveragePool2D(x, a));
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> in = RandomFloats(rng, h * w * c);
    std::vector<float> want;
    for (int oy = 0; oy < oh; ++oy)
      for (int ox = 0; ox < ow; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          float best = -1e30f;
          double sum = 0;
          int cnt = 0;
          for (int ky = 0; ky < a.filter_h; ++ky)
            for (int kx = 0; kx < a.filter_w; ++kx) {
              const int iy = oy * a.stride_h - ph + ky, ix = ox * a.stride_w - pw + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const float v = in[(iy * w + ix) * c + ch];
              best = std::max(best, v);
              sum += v;
              ++cnt;
            }
          want.push_back(max ? best : static_cast<float>(sum / cnt));
        }
    ExpectNear(RunFloat(*g, {in}), want);
  }
  {  // mean over H, W
    GraphBuilder b("mean");
    const int32_t x = b.Input("x", {1, 3, 4, 2});
    b.Output(b.Mean(x, {1, 2}, false));
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> in = RandomFloats(rng, 24);
    std::vector<float> want(2, 0.f);
    for (int i = 0; i < 12; ++i) {
      want[0] += in[2 * i] / 12;
      want[1] += in[2 * i + 1] / 12;
    }
    ExpectNear(RunFloat(*g, {in}), want);
  }
  {  // softmax with beta
    GraphBuilder b("softmax");
    const int32_t x = b.Input("x", {2, 5});
    b.Output(b.Softmax(x, 0.7f));
    auto g = b.Build();
    REQUIRE(g.ok());
    const std::vector<float> in = RandomFloats(rng, 10);
    std::vector<float> want;
    for (int r = 0; r < 2; ++r) {
      double s = 0;
      for (int i = 0; i < 5; ++i) s += std::exp(0.7 * in[r * 5 + i]);
      for (int i = 0; i < 5; ++i) want.push_back(static_cast<float>(std::exp(0.7 * in[r * 5 + i]) / s));
    }
    ExpectNear(RunFloat(*g, {in}), want);
  }
  const std::pair<OpKind, float (*)(float)> unary[] = {
      {OpKind::kLogistic, [](float v) { return 1.f / (1.f + std::exp(-v)); }},
      {OpKind::kTanh, [](float v) { return std::tanh(v); }},
      {OpKind::kRelu, [](float v) { return std::max(v, 0.f); }},
      {OpKind::kRelu6, [](float v) { return std::min(std::max(v, 0.f), 6.f); }},
      {OpKind::kReluN1To1, [](float v) { return std::min(std::max(v, -1.f), 1.f); }},
      {OpKind::kHardSwish, [](float v) { return v * std::min(std::max(v + 3.f, 0.f), 6.f) / 6.f; }},
      {OpKind::kAbs, [](float v) { return std::fabs(v); }},
      {OpKind::kNeg, [](float v) { return -v; }},
  };
  for (const auto& [kind, fn] : unary) {
    CAPTURE(OpKindName(kind));
    GraphBuilder b("unary");
    const int32_t x = b.Input("x", {3, 7});
    b.Output(b.Unary(kind, x));
    auto g = b.Build();
    REQUIRE(g.ok());
    std::vector<float> in = RandomFloats(rng, 21);
    for (float& v : in) v *= 8.f;
    std::vector<float> want;
    for (float v : in) want.push_back(fn(v));
    ExpectNear(RunFloat(*g, {in}), want);
  }
}

// Builds a one-op graph by hand (for ops the builder cannot infer shapes of).
Graph OneOp(OpKind kind, OpAttrs attrs, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
            std::vector<int32_t> graph_inputs) {
  Graph g;
  g.source_format = ModelFormat::kBuilt;
  g.subgraphs.emplace_back();
  Subgraph& sg = g.main();
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  for (Tensor& t : inputs) {
    op.inputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.tensors.push_back(std::move(t));
  }
  for (Tensor& t : outputs) {
    op.outputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.outputs.push_back(static_cast<int32_t>(sg.tensors.size()));
    sg.tensors.push_back(std::move(t));
  }
  sg.inputs = std::move(graph_inputs);
  sg.ops.push_back(std::move(op));
  return g;
}

Tensor T(const std::string& name, std::vector<int32_t> shape, DType dtype = DType::kFloat32) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

Tensor IntConst(Graph* g, const std::string& name, std::vector<int32_t> shape,
                const std::vector<int32_t>& values) {
  Tensor t = T(name, std::move(shape), DType::kInt32);
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  t.data = g->AddConstData(std::move(bytes));
  return t;
}

// --variant on the host: every body the host can run (HostIsas) of the ops whose runtime
// kernels pick a body from the op's variant list (MINIMUM / MAXIMUM, TRANSPOSE, PAD, int8 to
// int16 softmax, SVDF with int16 and int8 state) gives the scalar body's bytes. Each graph runs
// three times on the same executor (SVDF's state carries over between runs).
Tensor Quant(Tensor t, float scale, int64_t zero_point) {
  t.quant.scale = {scale};
  t.quant.zero_point = {zero_point};
  return t;
}

// A constant of `shape` with values uniform in [lo, hi] (int8, int16 or int32).
Tensor RandomConst(Graph* g, std::mt19937_64& rng, const std::string& name,
                   std::vector<int32_t> shape, DType dtype, int32_t lo, int32_t hi) {
  Tensor t = T(name, std::move(shape), dtype);
  const size_t n = static_cast<size_t>(t.num_elements());
  const size_t es = dtype == DType::kInt8 ? 1 : dtype == DType::kInt16 ? 2 : 4;
  std::vector<uint8_t> bytes(n * es);
  std::uniform_int_distribution<int32_t> d(lo, hi);
  for (size_t i = 0; i < n; ++i) {
    const int32_t v = d(rng);
    std::memcpy(bytes.data() + i * es, &v, es);  // little-endian host
  }
  t.data = g->AddConstData(std::move(bytes));
  return t;
}

void CheckHostVariantsAgree(const Graph& g, uint64_t seed) {
  const std::vector<kernels::Isa> isas = HostIsas();
  REQUIRE(isas.size() >= 2);  // scalar and dsp: something to compare
  std::vector<std::vector<uint8_t>> want;
  for (kernels::Isa isa : isas) {
    CAPTURE(kernels::IsaName(isa));
    ExecutorOptions o;
    o.isa = isa;
    auto exec = Executor::Create(g, o);
    if (!exec.ok()) FAIL(std::string(exec.status().message()));
    std::mt19937_64 rng(seed);
    std::vector<std::vector<uint8_t>> got;
    for (int run = 0; run < 3; ++run) {
      std::vector<HostTensor> in;
      for (int32_t k : g.main().inputs) {
        const Tensor& t = g.main().tensors[k];
        HostTensor h{t.dtype, t.shape, std::vector<uint8_t>(t.num_bytes())};
        for (uint8_t& b : h.bytes) b = static_cast<uint8_t>(rng());
        in.push_back(std::move(h));
      }
      auto out = (*exec)->Run(in);
      if (!out.ok()) FAIL(std::string(out.status().message()));
      for (const HostTensor& h : *out) got.push_back(h.bytes);
    }
    if (want.empty()) {
      want = got;
    } else {
      CHECK(got == want);
    }
  }
}

TEST_CASE("executor: every host variant of the variant-listed ops gives the same bytes",
          "[runtime]") {
  const uint64_t seed = mica::testing::TestSeed(131);
  std::mt19937_64 rng(seed);
  Graph holder;
  SECTION("minimum / maximum, int8 and int16, with broadcast") {
    for (OpKind kind : {OpKind::kMinimum, OpKind::kMaximum}) {
      for (DType dt : {DType::kInt8, DType::kInt16}) {
        const int64_t zp = dt == DType::kInt8 ? -3 : 0;
        Graph g = OneOp(kind, std::monostate{},
                        {Quant(T("a", {2, 3, 37}, dt), 0.1f, zp),
                         Quant(T("b", {1, 3, 37}, dt), 0.1f, zp)},
                        {Quant(T("y", {2, 3, 37}, dt), 0.1f, zp)}, {0, 1});
        CheckHostVariantsAgree(g, seed);
      }
    }
  }
  SECTION("transpose, int8 and int16") {
    for (DType dt : {DType::kInt8, DType::kInt16}) {
      Graph g = OneOp(OpKind::kTranspose, std::monostate{},
                      {T("x", {2, 5, 6, 7}, dt), IntConst(&holder, "perm", {4}, {0, 3, 1, 2})},
                      {T("y", {2, 7, 5, 6}, dt)}, {0});
      g.storage = holder.storage;
      CheckHostVariantsAgree(g, seed);
    }
  }
  SECTION("pad, int8") {
    Graph g = OneOp(OpKind::kPad, std::monostate{},
                    {Quant(T("x", {1, 5, 6, 7}, DType::kInt8), 0.1f, 4),
                     IntConst(&holder, "p", {4, 2}, {0, 0, 1, 2, 2, 1, 0, 3})},
                    {Quant(T("y", {1, 8, 9, 10}, DType::kInt8), 0.1f, 4)}, {0});
    g.storage = holder.storage;
    CheckHostVariantsAgree(g, seed);
  }
  SECTION("softmax int8 to int16") {
    Graph g = OneOp(OpKind::kSoftmax, SoftmaxAttrs{1.f},
                    {Quant(T("x", {3, 50}, DType::kInt8), 0.1f, -5)},
                    {Quant(T("y", {3, 50}, DType::kInt16), 1.f / 32768.f, 0)}, {0});
    CheckHostVariantsAgree(g, seed);
  }
  SECTION("svdf, int16 and int8 state") {
    for (bool int8_state : {false, true}) {
      CAPTURE(int8_state);
      const DType st = int8_state ? DType::kInt8 : DType::kInt16;
      const int32_t batch = 2, input = 20, filters = 12, rank = 2, memory = 9;
      SvdfAttrs a;
      a.rank = rank;
      Tensor state = Quant(T("state", {batch, filters * memory}, st), int8_state ? 0.05f : 0.002f,
                           int8_state ? 3 : 0);
      state.is_variable = true;
      Graph g = OneOp(
          OpKind::kSvdf, a,
          {Quant(T("x", {batch, input}, DType::kInt8), 0.05f, -2),
           Quant(RandomConst(&holder, rng, "wf", {filters, input}, DType::kInt8, -127, 127),
                 0.01f, 0),
           Quant(RandomConst(&holder, rng, "wt", {filters, memory}, st, int8_state ? -127 : -3000,
                             int8_state ? 127 : 3000),
                 int8_state ? 0.01f : 0.0005f, 0),
           RandomConst(&holder, rng, "bias", {filters / rank}, DType::kInt32, -4000, 4000),
           std::move(state)},
          {Quant(T("y", {batch, filters / rank}, DType::kInt8), 0.05f, 1)}, {0});
      g.storage = holder.storage;
      CheckHostVariantsAgree(g, seed);
    }
  }
}

TEST_CASE("executor: data movement (transpose, pad, concat, split, slices)", "[runtime]") {
  std::vector<float> in(24);
  for (int i = 0; i < 24; ++i) in[i] = static_cast<float>(i);
  Graph holder;
  SECTION("transpose") {
    Graph g = OneOp(OpKind::kTranspose, std::monostate{},
                    {T("x", {2, 3, 4}), IntConst(&holder, "perm", {3}, {2, 0, 1})},
                    {T("y", {4, 2, 3})}, {0});
    g.storage = holder.storage;
    std::vector<float> want;
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) want.push_back(in[(i * 3 + j) * 4 + k]);
    ExpectNear(RunFloat(g, {in}), want);
  }
  SECTION("pad") {
    Graph g = OneOp(OpKind::kPad, std::monostate{},
                    {T("x", {2, 12}), IntConst(&holder, "p", {2, 2}, {1, 0, 2, 1})},
                    {T("y", {3, 15})}, {0});
    std::vector<float> want(45, 0.f);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 12; ++j) want[(i + 1) * 15 + j + 2] = in[i * 12 + j];
    ExpectNear(RunFloat(g, {in}), want);
  }
  SECTION("concatenation") {
    Graph g = OneOp(OpKind::kConcatenation, ConcatenationAttrs{1, Activation::kNone},
                    {T("a", {2, 12}), T("b", {2, 3})}, {T("y", {2, 15})}, {0, 1});
    const std::vector<float> bv = {100, 101, 102, 103, 104, 105};
    std::vector<float> want;
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 12; ++j) want.push_back(in[i * 12 + j]);
      for (int j = 0; j < 3; ++j) want.push_back(bv[i * 3 + j]);
    }
    ExpectNear(RunFloat(g, {in, bv}), want);
  }
  SECTION("split") {
    Graph g = OneOp(OpKind::kSplit, SplitAttrs{2},
                    {IntConst(&holder, "axis", {}, {-1}), T("x", {6, 4})},
                    {T("y0", {6, 2}), T("y1", {6, 2})}, {1});
    std::vector<float> want;
    for (int i = 0; i < 6; ++i) {
      want.push_back(in[i * 4 + 2]);
      want.push_back(in[i * 4 + 3]);
    }
    auto exec = Executor::Create(g);
    REQUIRE(exec.ok());
    auto out = (*exec)->Run({FloatTensor({6, 4}, in)});
    REQUIRE(out.ok());
    ExpectNear(Floats((*out)[1]), want);
  }
  SECTION("strided slice with masks and negative stride") {
    StridedSliceAttrs a;
    a.begin_mask = 1;        // axis 0 from the start
    a.shrink_axis_mask = 0;
    Graph g = OneOp(OpKind::kStridedSlice, a,
                    {T("x", {4, 6}), IntConst(&holder, "b", {2}, {3, -1}),
                     IntConst(&holder, "e", {2}, {3, 0}), IntConst(&holder, "s", {2}, {2, -2})},
                    {T("y", {2, 3})}, {0});
    // rows 0, 2; columns 5, 3, 1.
    const std::vector<float> want = {in[5], in[3], in[1], in[17], in[15], in[13]};
    ExpectNear(RunFloat(g, {in}), want);
  }
  SECTION("slice") {
    Graph g = OneOp(OpKind::kSlice, std::monostate{},
                    {T("x", {4, 6}), IntConst(&holder, "b", {2}, {1, 2}),
                     IntConst(&holder, "s", {2}, {2, -1})},
                    {T("y", {2, 4})}, {0});
    std::vector<float> want;
    for (int i = 1; i < 3; ++i)
      for (int j = 2; j < 6; ++j) want.push_back(in[i * 6 + j]);
    ExpectNear(RunFloat(g, {in}), want);
  }
}

TEST_CASE("executor: each operator family rejects what it has no kernel or shape for",
          "[runtime]") {
  auto q8 = [](const std::string& name, std::vector<int32_t> shape) {
    Tensor t = T(name, std::move(shape), DType::kInt8);
    t.quant.scale = {0.5f};
    t.quant.zero_point = {0};
    return t;
  };
  auto fails = [](const Graph& g) {
    auto exec = Executor::Create(g);
    REQUIRE(!exec.ok());
    return std::string(exec.status().message());
  };
  SECTION("int8 DIV has no kernel") {
    Graph g = OneOp(OpKind::kDiv, ElementwiseAttrs{}, {q8("a", {4}), q8("b", {4})},
                    {q8("y", {4})}, {0, 1});
    auto exec = Executor::Create(g);
    REQUIRE(!exec.ok());
    CHECK(exec.status().code() == absl::StatusCode::kUnimplemented);
    CHECK(std::string(exec.status().message()).find("no int8 kernel for DIV") !=
          std::string::npos);
  }
  SECTION("float SVDF has no kernel") {
    Graph g = OneOp(OpKind::kSvdf, SvdfAttrs{}, {T("x", {1, 4})}, {T("y", {1, 4})}, {0});
    CHECK(fails(g).find("(SVDF)") != std::string::npos);
  }
  SECTION("binary inputs that do not broadcast") {
    Graph g = OneOp(OpKind::kAdd, ElementwiseAttrs{}, {q8("a", {2, 3}), q8("b", {4})},
                    {q8("y", {2, 3})}, {0, 1});
    fails(g);
  }
  SECTION("a conv without its filter") {
    Graph g = OneOp(OpKind::kConv2D, Conv2DAttrs{}, {T("x", {1, 4, 4, 2})},
                    {T("y", {1, 4, 4, 2})}, {0});
    fails(g);
  }
}

TEST_CASE("executor: errors name the operator; inputs are checked", "[runtime]") {
  {
    Tensor x = T("x", {4}, DType::kInt8);
    x.quant.scale = {0.5f};
    x.quant.zero_point = {0};
    Tensor y = x;
    y.name = "y";
    Graph g = OneOp(OpKind::kLog, std::monostate{}, {x}, {y}, {0});
    auto exec = Executor::Create(g);
    REQUIRE(!exec.ok());
    CAPTURE(exec.status().message());
    CHECK(exec.status().code() == absl::StatusCode::kUnimplemented);
    CHECK(std::string(exec.status().message()).find("operator #0 (LOG)") != std::string::npos);
  }
  {
    Graph g = OneOp(OpKind::kOpaque, std::monostate{}, {T("x", {4})}, {T("y", {4})}, {0});
    g.main().ops[0].opaque_name = "MY_CUSTOM";
    auto exec = Executor::Create(g);
    REQUIRE(!exec.ok());
    CHECK(std::string(exec.status().message()).find("MY_CUSTOM") != std::string::npos);
  }
  GraphBuilder b("relu");
  const int32_t x = b.Input("x", {2, 3});
  b.Output(b.Unary(OpKind::kRelu, x));
  auto g = b.Build();
  REQUIRE(g.ok());
  auto exec = Executor::Create(*g);
  REQUIRE(exec.ok());
  CHECK(!(*exec)->Run({}).ok());                                    // missing input
  CHECK(!(*exec)->Run({FloatTensor({2, 3}, std::vector<float>(6)),  // extra input
                       FloatTensor({2, 3}, std::vector<float>(6))})
             .ok());
  CHECK(!(*exec)->Run({FloatTensor({5}, std::vector<float>(5))}).ok());  // wrong size
  HostTensor wrong_type;
  wrong_type.dtype = DType::kInt8;
  wrong_type.shape = {2, 3};
  wrong_type.bytes.resize(24);
  CHECK(!(*exec)->Run({wrong_type}).ok());
  // A variant the host cannot run is refused at Create.
  for (kernels::Isa isa : {kernels::Isa::kScalar, kernels::Isa::kDsp, kernels::Isa::kMve}) {
    ExecutorOptions o;
    o.isa = isa;
    CHECK(Executor::Create(*g, o).ok() == HostSupportsIsa(isa));
  }
  CHECK(ParseIsa("dsp").ok());
  CHECK(!ParseIsa("neon").ok());
}

TEST_CASE("executor: observer sees every op output, profile times every op, arena is sound",
          "[runtime]") {
  GraphBuilder b("chain", 7);
  const int32_t x = b.Input("x", {1, 8, 8, 3});
  Conv2DAttrs ca;
  ca.padding = Padding::kSame;
  int32_t t = b.Conv2D(x, b.HeWeights("w0", {4, 3, 3, 3}), b.RandomBias("b0", 4), ca);
  const int32_t skip = t;
  t = b.Unary(OpKind::kRelu, t);
  t = b.Conv2D(t, b.HeWeights("w1", {4, 1, 1, 4}), kNoTensor, ca);
  t = b.Add(t, skip);
  t = b.Mean(t, {1, 2}, false);
  b.Output(b.Softmax(t));
  auto g = b.Build();
  REQUIRE(g.ok());
  auto exec = Executor::Create(*g);
  REQUIRE(exec.ok());
  std::map<int32_t, int> seen;
  (*exec)->SetTensorObserver([&](int32_t k, const TensorView& v) {
    ++seen[k];
    CHECK(v.bytes == g->main().tensors[k].num_bytes());
    CHECK(v.ToHost().bytes.size() == v.bytes);
  });
  (*exec)->SetProfiling(true);
  std::mt19937_64 rng(3);
  auto out = (*exec)->Run({FloatTensor({1, 8, 8, 3}, RandomFloats(rng, 192))});
  REQUIRE(out.ok());
  const Subgraph& sg = g->main();
  for (const Operator& op : sg.ops) CHECK(seen[op.outputs[0]] == 1);
  CHECK(seen[x] == 1);
  REQUIRE((*exec)->profile().size() == sg.ops.size());
  CHECK((*exec)->profile()[0].name == "CONV_2D");
  float sum = 0;
  for (float v : Floats((*out)[0])) sum += v;
  CHECK(sum == Approx(1.f));
  // Arena: tensors live at the same time never overlap; every activation has a slot.
  std::map<int32_t, std::pair<int, int>> life;
  for (int32_t in : sg.inputs) life[in] = {0, 0};
  for (int i = 0; i < static_cast<int>(sg.ops.size()); ++i) {
    for (int32_t k : sg.ops[i].outputs) life[k] = {i, i};
    for (int32_t k : sg.ops[i].inputs) {
      if (life.count(k)) life[k].second = std::max(life[k].second, i);
    }
  }
  for (int32_t o : sg.outputs) life[o].second = static_cast<int>(sg.ops.size());
  const auto& layout = (*exec)->arena_layout();
  CHECK(layout.size() == life.size());
  for (const ArenaSlot& a : layout) {
    CHECK(a.offset + a.bytes <= (*exec)->arena_bytes());
    for (const ArenaSlot& c : layout) {
      if (a.tensor_index >= c.tensor_index) continue;
      const auto la = life[a.tensor_index], lc = life[c.tensor_index];
      const bool live_together = la.first <= lc.second && lc.first <= la.second;
      const bool overlap = a.offset < c.offset + c.bytes && c.offset < a.offset + a.bytes;
      CHECK(!(live_together && overlap));
    }
  }
}

TEST_CASE("executor: float MLPerf Tiny models agree with their int8 twins", "[runtime]") {
  const std::string shared = mica::testing::SharedDir();
  if (shared.empty()) {
    WARN("MICA_SHARED_DIR absent: skipped float/int8 model agreement");
    return;
  }
  for (const char* name : {"kws_ds_cnn", "ic_resnet8", "ad_autoencoder", "vww_mobilenet_v1_025"}) {
    CAPTURE(name);
    auto fg = LoadModel(shared + "/models/mlperf-tiny/" + name + "_float.tflite");
    auto qg = LoadModel(shared + "/models/mlperf-tiny/" + name + "_int8.tflite");
    REQUIRE(fg.ok());
    REQUIRE(qg.ok());
    auto fe = Executor::Create(*fg);
    if (!fe.ok()) FAIL(std::string(fe.status().message()));
    auto qe = Executor::Create(*qg);
    REQUIRE(qe.ok());
    const Tensor& fin = fg->main().tensors[fg->main().inputs[0]];
    const Tensor& qin = qg->main().tensors[qg->main().inputs[0]];
    REQUIRE(fin.num_elements() == qin.num_elements());
    // A smooth input in the int8 input's range, fed to both models.
    std::vector<float> xf(static_cast<size_t>(fin.num_elements()));
    HostTensor xq{DType::kInt8, qin.shape, std::vector<uint8_t>(xf.size())};
    const float s = qin.quant.scale[0];
    const int64_t zp = qin.quant.zero_point[0];
    for (size_t i = 0; i < xf.size(); ++i) {
      const int q = static_cast<int>(std::lround(60.0 * std::sin(0.05 * i) + 20.0 * std::cos(0.3 * i)));
      xq.bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp<int64_t>(q + zp, -128, 127)));
      xf[i] = s * (static_cast<int8_t>(xq.bytes[i]) - zp);
    }
    auto fo = (*fe)->Run({FloatTensor(fin.shape, xf)});
    auto qo = (*qe)->Run({xq});
    REQUIRE(fo.ok());
    REQUIRE(qo.ok());
    const std::vector<float> f = Floats((*fo)[0]);
    const Tensor& qout = qg->main().tensors[qg->main().outputs[0]];
    REQUIRE(f.size() == static_cast<size_t>(qout.num_elements()));
    double max_err = 0, range = 1e-6;
    for (size_t i = 0; i < f.size(); ++i) {
      const float deq = qout.quant.scale[0] *
                        (static_cast<int8_t>((*qo)[0].bytes[i]) - qout.quant.zero_point[0]);
      max_err = std::max(max_err, std::fabs(static_cast<double>(deq) - f[i]));
      range = std::max(range, std::fabs(static_cast<double>(f[i])));
    }
    CAPTURE(max_err, range);
    // Quantization error of whole networks: a loose bound, but float kernels that were wrong
    // (layout, padding, activation) give errors of the order of the output range.
    CHECK(max_err <= 0.25 * range + 2 * qout.quant.scale[0]);
  }
}

}  // namespace
}  // namespace runtime
}  // namespace mica
