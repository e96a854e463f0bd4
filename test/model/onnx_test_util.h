// Test helpers: build tiny ONNX ModelProtos in-test and inspect the imported IR.
#ifndef MICA_TEST_MODEL_ONNX_TEST_UTIL_H_
#define MICA_TEST_MODEL_ONNX_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "absl/status/statusor.h"
#include "mica/model/graph.h"
#include "mica/model/load.h"
#include "testing/catch.h"

namespace mica {
namespace onnx_test {

class OnnxBuilder {
 public:
  explicit OnnxBuilder(int64_t opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("mica-test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& model() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  // Adds a float graph input; a negative dim is symbolic ("N").
  void Input(const std::string& name, const std::vector<int64_t>& dims,
             int elem = onnx::TensorProto::FLOAT) {
    auto* vi = graph().add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = shape->add_dim();
      if (d < 0) {
        dim->set_dim_param("N");
      } else {
        dim->set_dim_value(d);
      }
    }
  }
  void Output(const std::string& name) { graph().add_output()->set_name(name); }

  onnx::TensorProto* Init(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& data, bool raw = true) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    if (raw) {
      t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * 4));
    } else {
      for (float f : data) t->add_float_data(f);
    }
    return t;
  }
  onnx::TensorProto* InitI64(const std::string& name, const std::vector<int64_t>& dims,
                             const std::vector<int64_t>& data) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t->add_dims(d);
    for (int64_t v : data) t->add_int64_data(v);
    return t;
  }

  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + "_" + std::to_string(graph().node_size()) : name);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  std::shared_ptr<const std::vector<uint8_t>> Bytes() const {
    std::string s;
    REQUIRE(model_.SerializeToString(&s));
    return std::make_shared<const std::vector<uint8_t>>(s.begin(), s.end());
  }
  absl::StatusOr<Graph> Load() const { return LoadOnnx(Bytes(), "test.onnx"); }

 private:
  onnx::ModelProto model_;
};

inline void AttrI(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void AttrF(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void AttrInts(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void AttrS(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

inline std::vector<float> RandomFloats(std::mt19937& rng, size_t n, float lo = -1.0f,
                                       float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Returns the index of the tensor named `name` (fails the test when absent).
inline int32_t TensorIndex(const Subgraph& sg, const std::string& name) {
  for (size_t i = 0; i < sg.tensors.size(); ++i) {
    if (sg.tensors[i].name == name) return static_cast<int32_t>(i);
  }
  FAIL("no tensor named " << name);
  return -1;
}

inline std::vector<int32_t> Shape(const Subgraph& sg, int32_t t) { return sg.tensors[t].shape; }

inline std::vector<float> Floats(const Subgraph& sg, int32_t t) {
  const Tensor& x = sg.tensors[t];
  REQUIRE(x.is_constant());
  REQUIRE(x.dtype == DType::kFloat32);
  REQUIRE(x.data.size == static_cast<size_t>(x.num_elements()) * 4);
  std::vector<float> v(static_cast<size_t>(x.num_elements()));
  if (!v.empty()) std::memcpy(v.data(), x.data.ptr, x.data.size);
  return v;
}

inline std::vector<int32_t> Ints(const Subgraph& sg, int32_t t) {
  const Tensor& x = sg.tensors[t];
  REQUIRE(x.is_constant());
  REQUIRE(x.dtype == DType::kInt32);
  std::vector<int32_t> v(static_cast<size_t>(x.num_elements()));
  REQUIRE(x.data.size == v.size() * 4);
  if (!v.empty()) std::memcpy(v.data(), x.data.ptr, x.data.size);
  return v;
}

inline std::vector<OpKind> Kinds(const Subgraph& sg) {
  std::vector<OpKind> k;
  for (const auto& op : sg.ops) k.push_back(op.kind);
  return k;
}

inline std::string KindNames(const Subgraph& sg) {
  std::string s;
  for (const auto& op : sg.ops) {
    if (!s.empty()) s += ",";
    s += std::string(op.name());
  }
  return s;
}

}  // namespace onnx_test
}  // namespace mica

#endif  // MICA_TEST_MODEL_ONNX_TEST_UTIL_H_
