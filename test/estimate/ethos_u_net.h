// Test helpers for the Ethos-U estimator tests: hand-built quantized graphs and profiles.
#ifndef MICA_TEST_ESTIMATE_ETHOS_U_NET_H_
#define MICA_TEST_ESTIMATE_ETHOS_U_NET_H_

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "mica/estimate/estimate.h"
#include "mica/estimate/ethos_u.h"
#include "mica/model/graph.h"
#include "testing/catch.h"

namespace mica {
namespace estimate {

// Builds one-subgraph graphs of quantized tensors.
class Net {
 public:
  Net() { g_.subgraphs.emplace_back(); }

  int32_t Tensor8(const std::string& name, std::vector<int32_t> shape, DType t = DType::kInt8) {
    mica::Tensor x;
    x.name = name;
    x.dtype = t;
    x.shape = std::move(shape);
    if (t != DType::kFloat32) {
      x.quant.scale = {0.05f};
      x.quant.zero_point = {0};
    }
    sg().tensors.push_back(x);
    return static_cast<int32_t>(sg().tensors.size()) - 1;
  }
  int32_t Weights(const std::string& name, std::vector<int32_t> shape, uint32_t seed,
                  DType t = DType::kInt8) {
    const int32_t id = Tensor8(name, shape, t);
    mica::Tensor& x = sg().tensors[id];
    std::mt19937 rng(seed);
    const size_t n = x.num_bytes();
    std::vector<uint8_t> bytes(n);
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(rng() % 200 + 28);
    if (t == DType::kFloat32) {
      for (size_t i = 0; i < n / 4; ++i) {
        const float f = 0.01f * static_cast<float>(static_cast<int>(rng() % 200) - 100);
        std::memcpy(&bytes[i * 4], &f, 4);
      }
    }
    x.data = g_.AddConstData(std::move(bytes));
    return id;
  }
  // int8 weights with the given values.
  int32_t Int8Weights(const std::string& name, std::vector<int32_t> shape,
                      const std::vector<int8_t>& v) {
    const int32_t id = Tensor8(name, std::move(shape), DType::kInt8);
    std::vector<uint8_t> bytes(v.size());
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    sg().tensors[id].data = g_.AddConstData(std::move(bytes));
    return id;
  }
  // An int32 constant with the given values (PAD's paddings, axes).
  int32_t Ints(const std::string& name, std::vector<int32_t> shape, const std::vector<int32_t>& v) {
    const int32_t id = Tensor8(name, std::move(shape), DType::kInt32);
    std::vector<uint8_t> bytes(v.size() * 4);
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    sg().tensors[id].data = g_.AddConstData(std::move(bytes));
    return id;
  }
  int32_t Bias(const std::string& name, int32_t n) {
    const int32_t id = Tensor8(name, {n}, DType::kInt32);
    sg().tensors[id].data = g_.AddConstData(std::vector<uint8_t>(size_t(n) * 4, 0));
    return id;
  }
  void Op(OpKind k, OpAttrs attrs, std::vector<int32_t> in, std::vector<int32_t> out) {
    Operator o;
    o.kind = k;
    o.attrs = std::move(attrs);
    o.inputs = std::move(in);
    o.outputs = std::move(out);
    sg().ops.push_back(o);
  }
  void Io(std::vector<int32_t> in, std::vector<int32_t> out) {
    sg().inputs = std::move(in);
    sg().outputs = std::move(out);
  }
  Subgraph& sg() { return g_.subgraphs.front(); }
  const Graph& graph() const { return g_; }

 private:
  Graph g_;
};

inline TargetProfile Profile(EthosUFamily f, int32_t macs) {
  TargetProfile p;
  p.name = "test";
  p.kind = TargetKind::kEthosU;
  absl::StatusOr<EthosUConfig> c = DefaultEthosUConfig(f, macs);
  REQUIRE(c.ok());
  p.ethos_u = *c;
  return p;
}

// One weighted operator (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED) from the graph input
// `ifm` to the graph output `ofm`: seeded weights of `w_shape` (int8, or float32 in a float
// net) and a zero bias of the OFM's channels.
inline Net WeightedOpNet(OpKind kind, OpAttrs attrs, std::vector<int32_t> ifm,
                         std::vector<int32_t> w_shape, std::vector<int32_t> ofm, uint32_t seed,
                         DType dt = DType::kInt8) {
  Net n;
  const int32_t cout = ofm.back();
  const int32_t x = n.Tensor8("ifm", std::move(ifm), dt);
  const int32_t wt = n.Weights("w", std::move(w_shape), seed,
                               dt == DType::kFloat32 ? DType::kFloat32 : DType::kInt8);
  const int32_t b = n.Bias("b", cout);
  const int32_t y = n.Tensor8("ofm", std::move(ofm), dt);
  n.Op(kind, std::move(attrs), {x, wt, b}, {y});
  n.Io({x}, {y});
  return n;
}

// One convolution: IFM 1 x h x w x cin, OFM cout channels, k x k kernel.
inline Net ConvNet(int32_t h, int32_t w, int32_t cin, int32_t cout, int32_t k, Activation act,
            uint32_t seed, DType dt = DType::kInt8) {
  Conv2DAttrs a;
  a.activation = act;
  return WeightedOpNet(OpKind::kConv2D, a, {1, h, w, cin}, {cout, k, k, cin},
                       {1, h - k + 1, w - k + 1, cout}, seed, dt);
}

// x [1, steps, 8] -> UNIDIRECTIONAL_SEQUENCE_LSTM (16 units) -> y [1, steps, 16].
inline Net LstmNet(int32_t steps) {
  Net n;
  const int32_t nin = 8, units = 16;
  const int32_t x = n.Tensor8("x", {1, steps, nin});
  std::vector<int32_t> in(24, kNoTensor);
  in[0] = x;
  for (int g = 0; g < 4; ++g) {
    in[1 + g] = n.Weights("wi" + std::to_string(g), {units, nin}, 10 + g);
    in[5 + g] = n.Weights("wr" + std::to_string(g), {units, units}, 20 + g);
    in[12 + g] = n.Bias("b" + std::to_string(g), units);
  }
  in[18] = n.Tensor8("h_state", {1, units});
  in[19] = n.Tensor8("c_state", {1, units}, DType::kInt16);
  const int32_t y = n.Tensor8("y", {1, steps, units});
  n.Op(OpKind::kUnidirectionalSequenceLstm, LstmAttrs{}, in, {y});
  n.Io({x}, {y});
  return n;
}

}  // namespace estimate
}  // namespace mica

#endif  // MICA_TEST_ESTIMATE_ETHOS_U_NET_H_
