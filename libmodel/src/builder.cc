#include "mica/model/builder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "mica/model/op_info.h"

namespace mica {
namespace {

using Shape = std::vector<int32_t>;
using Shapes = std::vector<Shape>;

// Elements above this are refused: no MLPerf-Tiny-class model comes near it, and it keeps all
// byte counts comfortably inside int64/size_t.
constexpr int64_t kMaxElements = int64_t{1} << 31;

std::string ShapeStr(const Shape& s) { return absl::StrCat("[", absl::StrJoin(s, ","), "]"); }

absl::Status OpError(const Operator& op, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(op.name()), ": ", what));
}

// Returns the tensor behind input `i`, or nullptr when absent or out of range.
const Tensor* Input(const Subgraph& sg, const Operator& op, size_t i) {
  if (i >= op.inputs.size()) return nullptr;
  const int32_t t = op.inputs[i];
  if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) return nullptr;
  return &sg.tensors[static_cast<size_t>(t)];
}

absl::StatusOr<const Tensor*> RequireInput(const Subgraph& sg, const Operator& op, size_t i,
                                           const char* role, int rank = -1) {
  const Tensor* t = Input(sg, op, i);
  if (t == nullptr) return OpError(op, absl::StrCat("missing input ", i, " (", role, ")"));
  if (rank >= 0 && static_cast<int>(t->shape.size()) != rank) {
    return OpError(op, absl::StrCat(role, " '", t->name, "' must have rank ", rank, ", has shape ",
                                    ShapeStr(t->shape)));
  }
  return t;
}

// Reads an int32 or int64 constant (shape operands, axes, paddings).
absl::StatusOr<std::vector<int64_t>> ReadInts(const Operator& op, const Tensor& t,
                                              const char* role) {
  if (!t.is_constant()) {
    return absl::UnimplementedError(
        absl::StrCat(std::string(op.name()), ": ", role, " '", t.name, "' is not a constant"));
  }
  const int64_t n = t.num_elements();
  std::vector<int64_t> out;
  if (t.dtype == DType::kInt32 && t.data.size >= static_cast<size_t>(n) * 4) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t v;
      std::memcpy(&v, t.data.bytes() + i * 4, 4);
      out.push_back(v);
    }
  } else if (t.dtype == DType::kInt64 && t.data.size >= static_cast<size_t>(n) * 8) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t v;
      std::memcpy(&v, t.data.bytes() + i * 8, 8);
      out.push_back(v);
    }
  } else {
    return OpError(op, absl::StrCat(role, " '", t.name, "' must be int32/int64 with ", n,
                                    " elements"));
  }
  return out;
}

absl::StatusOr<int32_t> NormalizeAxis(const Operator& op, int64_t axis, size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) {
    return OpError(op, absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return static_cast<int32_t>(axis < 0 ? axis + r : axis);
}

absl::StatusOr<Shape> Broadcast(const Operator& op, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int32_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int32_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return OpError(op, absl::StrCat("shapes ", ShapeStr(a), " and ", ShapeStr(b),
                                      " do not broadcast"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

absl::Status CheckStrides(const Operator& op, int32_t sh, int32_t sw, int32_t dh, int32_t dw) {
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1) {
    return OpError(op, absl::StrCat("strides (", sh, ",", sw, ") and dilations (", dh, ",", dw,
                                    ") must be >= 1"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> SpatialOut(const Operator& op, const Shape& in, int32_t kh, int32_t kw,
                                 int32_t sh, int32_t sw, int32_t dh, int32_t dw, Padding p,
                                 int32_t channels) {
  MICA_RETURN_IF_ERROR(CheckStrides(op, sh, sw, dh, dw));
  if (kh < 1 || kw < 1) return OpError(op, absl::StrCat("filter ", kh, "x", kw, " is empty"));
  const int32_t oh = ConvOutputSize(in[1], kh, sh, dh, p);
  const int32_t ow = ConvOutputSize(in[2], kw, sw, dw, p);
  if (oh < 1 || ow < 1) {
    return OpError(op, absl::StrCat("filter ", kh, "x", kw, " (dilation ", dh, "x", dw,
                                    ") does not fit input ", ShapeStr(in), " with VALID padding"));
  }
  return Shape{in[0], oh, ow, channels};
}

// Output shapes the op table states: elementwise binary ops broadcast their two operands;
// kSameShape ops keep input 0's shape.
absl::StatusOr<Shapes> InferFromTable(const Subgraph& sg, const Operator& op) {
  if (GetOpCategory(op.kind) == OpCategory::kElementwiseBinary) {
    MICA_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(sg, op, 0, "lhs"));
    MICA_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(sg, op, 1, "rhs"));
    MICA_ASSIGN_OR_RETURN(Shape s, Broadcast(op, a->shape, b->shape));
    return Shapes{s};
  }
  if (HasOpTrait(op.kind, kSameShape)) {
    MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
    return Shapes{in->shape};
  }
  return absl::UnimplementedError(absl::StrCat(
      std::string(op.name()), ": shape inference is not implemented for this operator"));
}

absl::StatusOr<Shapes> InferImpl(const Subgraph& sg, const Operator& op) {
  switch (op.kind) {
    case OpKind::kConv2D: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input", 4));
      MICA_ASSIGN_OR_RETURN(const Tensor* f, RequireInput(sg, op, 1, "filter", 4));
      const auto& a = op.Attrs<Conv2DAttrs>();
      if (f->shape[3] < 1 || in->shape[3] % f->shape[3] != 0) {
        return OpError(op, absl::StrCat("input channels ", in->shape[3],
                                        " are not a multiple of filter depth ", f->shape[3]));
      }
      MICA_ASSIGN_OR_RETURN(Shape s, SpatialOut(op, in->shape, f->shape[1], f->shape[2],
                                                a.stride_h, a.stride_w, a.dilation_h,
                                                a.dilation_w, a.padding, f->shape[0]));
      return Shapes{s};
    }
    case OpKind::kDepthwiseConv2D: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input", 4));
      MICA_ASSIGN_OR_RETURN(const Tensor* f, RequireInput(sg, op, 1, "filter", 4));
      const auto& a = op.Attrs<DepthwiseConv2DAttrs>();
      if (f->shape[0] != 1 || in->shape[3] < 1 || f->shape[3] % in->shape[3] != 0) {
        return OpError(op, absl::StrCat("depthwise filter ", ShapeStr(f->shape),
                                        " does not match input channels ", in->shape[3]));
      }
      MICA_ASSIGN_OR_RETURN(Shape s, SpatialOut(op, in->shape, f->shape[1], f->shape[2],
                                                a.stride_h, a.stride_w, a.dilation_h,
                                                a.dilation_w, a.padding, f->shape[3]));
      return Shapes{s};
    }
    case OpKind::kTransposeConv: {
      MICA_ASSIGN_OR_RETURN(const Tensor* os, RequireInput(sg, op, 0, "output_shape", 1));
      MICA_ASSIGN_OR_RETURN(const Tensor* f, RequireInput(sg, op, 1, "filter", 4));
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 2, "input", 4));
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(op, *os, "output_shape"));
      if (v.size() != 4) return OpError(op, "output_shape must have 4 elements");
      Shape s(v.begin(), v.end());
      if (s[3] != f->shape[0] || in->shape[3] != f->shape[3]) {
        return OpError(op, absl::StrCat("filter ", ShapeStr(f->shape), " does not match input ",
                                        ShapeStr(in->shape), " and output ", ShapeStr(s)));
      }
      return Shapes{s};
    }
    case OpKind::kFullyConnected: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* w, RequireInput(sg, op, 1, "weights", 2));
      const int32_t depth = w->shape[1];
      const int64_t n = in->num_elements();
      if (depth < 1 || in->shape.empty() || n % depth != 0) {
        return OpError(op, absl::StrCat("input ", ShapeStr(in->shape),
                                        " does not flatten to rows of weights depth ", depth));
      }
      if (op.Attrs<FullyConnectedAttrs>().keep_num_dims) {
        if (in->shape.back() != depth) {
          return OpError(op, "keep_num_dims needs the input's last dimension to equal the depth");
        }
        Shape s = in->shape;
        s.back() = w->shape[0];
        return Shapes{s};
      }
      return Shapes{{static_cast<int32_t>(n / depth), w->shape[0]}};
    }
    case OpKind::kBatchMatMul: {
      MICA_ASSIGN_OR_RETURN(const Tensor* x, RequireInput(sg, op, 0, "x"));
      MICA_ASSIGN_OR_RETURN(const Tensor* y, RequireInput(sg, op, 1, "y"));
      if (x->shape.size() < 2 || y->shape.size() < 2) return OpError(op, "operands need rank >= 2");
      const auto& a = op.Attrs<BatchMatMulAttrs>();
      const size_t rx = x->shape.size(), ry = y->shape.size();
      const int32_t m = a.adj_x ? x->shape[rx - 1] : x->shape[rx - 2];
      const int32_t kx = a.adj_x ? x->shape[rx - 2] : x->shape[rx - 1];
      const int32_t ky = a.adj_y ? y->shape[ry - 1] : y->shape[ry - 2];
      const int32_t n = a.adj_y ? y->shape[ry - 2] : y->shape[ry - 1];
      if (kx != ky) {
        return OpError(op, absl::StrCat("inner dimensions differ: ", ShapeStr(x->shape), " x ",
                                        ShapeStr(y->shape)));
      }
      MICA_ASSIGN_OR_RETURN(Shape batch,
                            Broadcast(op, Shape(x->shape.begin(), x->shape.end() - 2),
                                      Shape(y->shape.begin(), y->shape.end() - 2)));
      batch.push_back(m);
      batch.push_back(n);
      return Shapes{batch};
    }
    case OpKind::kPrelu: {
      MICA_ASSIGN_OR_RETURN(const Tensor* a, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* b, RequireInput(sg, op, 1, "alpha"));
      MICA_ASSIGN_OR_RETURN(Shape s, Broadcast(op, a->shape, b->shape));
      return Shapes{s};
    }
    case OpKind::kMaxPool2D:
    case OpKind::kAveragePool2D: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input", 4));
      const auto& a = op.Attrs<Pool2DAttrs>();
      MICA_ASSIGN_OR_RETURN(Shape s, SpatialOut(op, in->shape, a.filter_h, a.filter_w,
                                                a.stride_h, a.stride_w, 1, 1, a.padding,
                                                in->shape[3]));
      return Shapes{s};
    }
    case OpKind::kReshape: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      std::vector<int64_t> want;
      if (const Tensor* s = Input(sg, op, 1); s != nullptr) {
        MICA_ASSIGN_OR_RETURN(want, ReadInts(op, *s, "shape"));
      } else {
        const auto& ns = op.Attrs<ReshapeAttrs>().new_shape;
        want.assign(ns.begin(), ns.end());
      }
      int64_t known = 1;
      int unknown = -1;
      for (size_t i = 0; i < want.size(); ++i) {
        if (want[i] == -1 && unknown < 0) {
          unknown = static_cast<int>(i);
        } else if (want[i] < 0 || want[i] > kMaxElements) {
          return OpError(op, absl::StrCat("bad target dimension ", want[i]));
        } else {
          known *= want[i];
          if (known > kMaxElements) return OpError(op, "target shape too large");
        }
      }
      const int64_t n = in->num_elements();
      if (unknown >= 0) {
        if (known == 0 || n % known != 0) {
          return OpError(op, absl::StrCat("cannot reshape ", ShapeStr(in->shape), " to [",
                                          absl::StrJoin(want, ","), "]"));
        }
        want[static_cast<size_t>(unknown)] = n / known;
      } else if (known != n) {
        return OpError(op, absl::StrCat("cannot reshape ", ShapeStr(in->shape), " (", n,
                                        " elements) to [", absl::StrJoin(want, ","), "]"));
      }
      return Shapes{Shape(want.begin(), want.end())};
    }
    case OpKind::kSqueeze: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      const auto& dims = op.Attrs<SqueezeAttrs>().squeeze_dims;
      std::vector<bool> drop(in->shape.size(), false);
      for (int32_t d : dims) {
        MICA_ASSIGN_OR_RETURN(int32_t ax, NormalizeAxis(op, d, in->shape.size()));
        if (in->shape[static_cast<size_t>(ax)] != 1) {
          return OpError(op, absl::StrCat("cannot squeeze dimension ", ax, " of ",
                                          ShapeStr(in->shape)));
        }
        drop[static_cast<size_t>(ax)] = true;
      }
      Shape s;
      for (size_t i = 0; i < in->shape.size(); ++i) {
        if (dims.empty() ? in->shape[i] != 1 : !drop[i]) s.push_back(in->shape[i]);
      }
      return Shapes{s};
    }
    case OpKind::kExpandDims: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* ax, RequireInput(sg, op, 1, "axis"));
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(op, *ax, "axis"));
      if (v.size() != 1) return OpError(op, "axis must be a single value");
      MICA_ASSIGN_OR_RETURN(int32_t a, NormalizeAxis(op, v[0], in->shape.size() + 1));
      Shape s = in->shape;
      s.insert(s.begin() + a, 1);
      return Shapes{s};
    }
    case OpKind::kTranspose: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* p, RequireInput(sg, op, 1, "perm"));
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ReadInts(op, *p, "perm"));
      if (perm.size() != in->shape.size()) return OpError(op, "perm length differs from rank");
      std::vector<bool> seen(perm.size(), false);
      Shape s;
      for (int64_t d : perm) {
        if (d < 0 || d >= static_cast<int64_t>(perm.size()) || seen[static_cast<size_t>(d)]) {
          return OpError(op, absl::StrCat("perm [", absl::StrJoin(perm, ","),
                                          "] is not a permutation"));
        }
        seen[static_cast<size_t>(d)] = true;
        s.push_back(in->shape[static_cast<size_t>(d)]);
      }
      return Shapes{s};
    }
    case OpKind::kConcatenation: {
      MICA_ASSIGN_OR_RETURN(const Tensor* first, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(int32_t axis, NormalizeAxis(op, op.Attrs<ConcatenationAttrs>().axis,
                                                        first->shape.size()));
      Shape s = first->shape;
      for (size_t i = 1; i < op.inputs.size(); ++i) {
        MICA_ASSIGN_OR_RETURN(const Tensor* t, RequireInput(sg, op, i, "input"));
        if (t->shape.size() != s.size()) return OpError(op, "inputs differ in rank");
        for (size_t d = 0; d < s.size(); ++d) {
          if (static_cast<int32_t>(d) == axis) {
            s[d] += t->shape[d];
          } else if (s[d] != t->shape[d]) {
            return OpError(op, absl::StrCat("input ", i, " shape ", ShapeStr(t->shape),
                                            " differs off the concatenation axis"));
          }
        }
      }
      return Shapes{s};
    }
    case OpKind::kMean:
    case OpKind::kSum:
    case OpKind::kReduceMax: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* ax, RequireInput(sg, op, 1, "axes"));
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadInts(op, *ax, "axes"));
      std::vector<bool> reduce(in->shape.size(), false);
      for (int64_t a : axes) {
        MICA_ASSIGN_OR_RETURN(int32_t n, NormalizeAxis(op, a, in->shape.size()));
        reduce[static_cast<size_t>(n)] = true;
      }
      const bool keep = op.Attrs<ReduceAttrs>().keep_dims;
      Shape s;
      for (size_t i = 0; i < in->shape.size(); ++i) {
        if (!reduce[i]) {
          s.push_back(in->shape[i]);
        } else if (keep) {
          s.push_back(1);
        }
      }
      return Shapes{s};
    }
    case OpKind::kPad:
    case OpKind::kPadV2: {
      MICA_ASSIGN_OR_RETURN(const Tensor* in, RequireInput(sg, op, 0, "input"));
      MICA_ASSIGN_OR_RETURN(const Tensor* p, RequireInput(sg, op, 1, "paddings"));
      MICA_ASSIGN_OR_RETURN(std::vector<int64_t> pads, ReadInts(op, *p, "paddings"));
      if (pads.size() != 2 * in->shape.size()) {
        return OpError(op, absl::StrCat("paddings need ", in->shape.size(), "x2 values"));
      }
      Shape s = in->shape;
      for (size_t d = 0; d < s.size(); ++d) {
        const int64_t before = pads[2 * d], after = pads[2 * d + 1];
        const int64_t v = s[d] + before + after;
        if (before < 0 || after < 0 || v > kMaxElements) {
          return OpError(op, absl::StrCat("bad paddings for dimension ", d));
        }
        s[d] = static_cast<int32_t>(v);
      }
      return Shapes{s};
    }
    default: return InferFromTable(sg, op);
  }
}

}  // namespace

uint64_t SeededRng::Next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float SeededRng::Uniform01() {
  return static_cast<float>(Next() >> 40) * (1.0f / 16777216.0f);
}

int32_t ConvOutputSize(int32_t in, int32_t filter, int32_t stride, int32_t dilation,
                       Padding padding) {
  if (stride < 1) return 0;
  const int64_t eff = (static_cast<int64_t>(filter) - 1) * dilation + 1;
  if (padding == Padding::kSame) return static_cast<int32_t>((int64_t{in} + stride - 1) / stride);
  if (in < eff) return 0;
  return static_cast<int32_t>((in - eff + stride) / stride);
}

absl::StatusOr<Shapes> InferOutputShapes(const Subgraph& sg, const Operator& op) {
  // Attribute structs are read with std::get: a mismatched variant is bad input, not a crash.
  // Only the kinds below read attributes during inference; the rest accept any.
  const bool attrs_ok = [&] {
    switch (op.kind) {
      case OpKind::kConv2D:
      case OpKind::kDepthwiseConv2D:
      case OpKind::kFullyConnected:
      case OpKind::kBatchMatMul:
      case OpKind::kMaxPool2D:
      case OpKind::kAveragePool2D:
      case OpKind::kMean:
      case OpKind::kSum:
      case OpKind::kReduceMax:
      case OpKind::kSqueeze:
      case OpKind::kConcatenation: return op.attrs.index() == GetOpInfo(op.kind).attrs_index;
      case OpKind::kReshape:  // the shape operand may stand in for the attribute
        return op.attrs.index() == GetOpInfo(op.kind).attrs_index ||
               (std::holds_alternative<std::monostate>(op.attrs) && op.inputs.size() > 1);
      default: return true;
    }
  }();
  if (!attrs_ok) return OpError(op, "attributes do not match the operator kind");
  MICA_ASSIGN_OR_RETURN(Shapes shapes, InferImpl(sg, op));
  for (const Shape& s : shapes) {
    int64_t n = 1;
    for (int32_t d : s) {
      if (d < 0) return OpError(op, absl::StrCat("negative output dimension in ", ShapeStr(s)));
      n *= d;
      if (n > kMaxElements) return OpError(op, absl::StrCat("output ", ShapeStr(s), " too large"));
    }
  }
  return shapes;
}

GraphBuilder::GraphBuilder(std::string name, uint64_t seed) : rng_(seed) {
  graph_.subgraphs.emplace_back();
  graph_.main().name = std::move(name);
  graph_.source_format = ModelFormat::kBuilt;
}

void GraphBuilder::Fail(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

bool GraphBuilder::CheckShape(const std::string& what, const std::vector<int32_t>& shape) {
  int64_t n = 1;
  for (int32_t d : shape) {
    if (d < 0) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(what, ": negative dimension in ", ShapeStr(shape))));
      return false;
    }
    n *= d;
    if (n > kMaxElements) {
      Fail(absl::InvalidArgumentError(absl::StrCat(what, ": shape ", ShapeStr(shape),
                                                   " too large")));
      return false;
    }
  }
  return true;
}

int32_t GraphBuilder::AddTensorImpl(const std::string& name, std::vector<int32_t> shape,
                                    DType dtype) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  graph_.main().tensors.push_back(std::move(t));
  return static_cast<int32_t>(graph_.main().tensors.size() - 1);
}

int32_t GraphBuilder::Input(const std::string& name, std::vector<int32_t> shape, DType dtype) {
  const int32_t t = AddTensorImpl(name, std::move(shape), dtype);
  if (t != kNoTensor) graph_.main().inputs.push_back(t);
  return t;
}

int32_t GraphBuilder::Intermediate(const std::string& name, std::vector<int32_t> shape,
                                   DType dtype) {
  return AddTensorImpl(name, std::move(shape), dtype);
}

int32_t GraphBuilder::Constant(const std::string& name, std::vector<int32_t> shape, DType dtype,
                               std::vector<uint8_t> bytes) {
  const int32_t t = AddTensorImpl(name, std::move(shape), dtype);
  if (t == kNoTensor) return t;
  Tensor& tensor = graph_.main().tensors[static_cast<size_t>(t)];
  if (bytes.size() != tensor.num_bytes()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(name, ": constant has ", bytes.size(),
                                                 " bytes, shape ", ShapeStr(tensor.shape), " ",
                                                 std::string(DTypeName(dtype)), " needs ",
                                                 tensor.num_bytes())));
    graph_.main().tensors.pop_back();
    return kNoTensor;
  }
  tensor.data = graph_.AddConstData(std::move(bytes));
  return t;
}

int32_t GraphBuilder::FloatConstant(const std::string& name, std::vector<int32_t> shape,
                                    const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Constant(name, std::move(shape), DType::kFloat32, std::move(bytes));
}

int32_t GraphBuilder::Int32Constant(const std::string& name, std::vector<int32_t> shape,
                                    const std::vector<int32_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return Constant(name, std::move(shape), DType::kInt32, std::move(bytes));
}

int32_t GraphBuilder::HeWeights(const std::string& name, std::vector<int32_t> shape,
                                bool depthwise) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  int64_t fan_in = 1;
  const size_t last = depthwise ? std::min<size_t>(3, shape.size()) : shape.size();
  for (size_t i = 1; i < last; ++i) fan_in *= shape[i];
  if (fan_in < 1) fan_in = 1;
  const float limit = std::sqrt(6.0f / static_cast<float>(fan_in));
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = rng_.Symmetric(limit);
  return FloatConstant(name, std::move(shape), v);
}

int32_t GraphBuilder::RandomBias(const std::string& name, int32_t n, float limit) {
  return RandomConstant(name, {n}, -limit, limit);
}

int32_t GraphBuilder::RandomConstant(const std::string& name, std::vector<int32_t> shape,
                                     float lo, float hi) {
  if (!status_.ok() || !CheckShape(name, shape)) return kNoTensor;
  int64_t n = 1;
  for (int32_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = lo + (hi - lo) * rng_.Uniform01();
  return FloatConstant(name, std::move(shape), v);
}

void GraphBuilder::Output(int32_t tensor) {
  if (!status_.ok()) return;
  if (tensor < 0 || static_cast<size_t>(tensor) >= graph_.main().tensors.size()) {
    Fail(absl::InvalidArgumentError(absl::StrCat("Output: no tensor ", tensor)));
    return;
  }
  graph_.main().outputs.push_back(tensor);
}

bool GraphBuilder::CheckOperands(const std::vector<int32_t>& inputs, bool allow_absent,
                                 OpKind kind) {
  if (!status_.ok()) return false;
  for (int32_t t : inputs) {
    if (t == kNoTensor && allow_absent) continue;
    if (t < 0 || static_cast<size_t>(t) >= graph_.main().tensors.size()) {
      Fail(absl::InvalidArgumentError(
          absl::StrCat(std::string(OpKindName(kind)), ": operand ", t, " is not a tensor of this graph")));
      return false;
    }
  }
  return true;
}

std::string GraphBuilder::OpName(OpKind kind, const std::string& name) const {
  if (!name.empty()) return name;
  std::string k(OpKindName(kind));
  std::transform(k.begin(), k.end(), k.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  return absl::StrCat(k, "_", graph_.main().ops.size());
}

std::vector<int32_t> GraphBuilder::AddOp(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                                         int num_outputs, const std::string& name) {
  if (!CheckOperands(inputs, true, kind)) return std::vector<int32_t>(num_outputs, kNoTensor);
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.inputs = std::move(inputs);
  auto shapes = InferOutputShapes(graph_.main(), op);
  if (!shapes.ok()) {
    Fail(absl::Status(shapes.status().code(),
                      absl::StrCat(OpName(kind, name), ": ", shapes.status().message())));
    return std::vector<int32_t>(num_outputs, kNoTensor);
  }
  if (static_cast<int>(shapes->size()) != num_outputs) {
    Fail(absl::InvalidArgumentError(absl::StrCat(OpName(kind, name), ": operator has ",
                                                 shapes->size(), " outputs, asked for ",
                                                 num_outputs)));
    return std::vector<int32_t>(num_outputs, kNoTensor);
  }
  // The output takes the dtype of the data operand (TRANSPOSE_CONV's data is input 2).
  const auto data_input = static_cast<size_t>(DataInput(kind));
  DType dtype = graph_.main().tensors[static_cast<size_t>(op.inputs[data_input])].dtype;
  if (kind == OpKind::kDequantize) dtype = DType::kFloat32;
  if (kind == OpKind::kQuantize) dtype = DType::kInt8;
  const std::string base = OpName(kind, name);
  for (int i = 0; i < num_outputs; ++i) {
    op.outputs.push_back(AddTensorImpl(i == 0 ? base : absl::StrCat(base, ":", i),
                                       (*shapes)[static_cast<size_t>(i)], dtype));
  }
  std::vector<int32_t> outs = op.outputs;
  graph_.main().ops.push_back(std::move(op));
  return outs;
}

void GraphBuilder::AddOpWithOutputs(OpKind kind, OpAttrs attrs, std::vector<int32_t> inputs,
                                    std::vector<int32_t> outputs) {
  if (!CheckOperands(inputs, true, kind) || !CheckOperands(outputs, false, kind)) return;
  Operator op;
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.inputs = std::move(inputs);
  op.outputs = std::move(outputs);
  auto shapes = InferOutputShapes(graph_.main(), op);
  if (!shapes.ok()) {
    Fail(shapes.status());
    return;
  }
  if (shapes->size() != op.outputs.size()) {
    Fail(absl::InvalidArgumentError(absl::StrCat(std::string(OpKindName(kind)), ": wrong output count")));
    return;
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Tensor& t = graph_.main().tensors[static_cast<size_t>(op.outputs[i])];
    if (t.shape != (*shapes)[i]) {
      Fail(absl::InvalidArgumentError(absl::StrCat(std::string(OpKindName(kind)), ": output '", t.name,
                                                   "' has shape ", ShapeStr(t.shape),
                                                   ", inference gives ",
                                                   ShapeStr((*shapes)[i]))));
      return;
    }
  }
  graph_.main().ops.push_back(std::move(op));
}

int32_t GraphBuilder::Conv2D(int32_t input, int32_t filter, int32_t bias,
                             const Conv2DAttrs& attrs, const std::string& name) {
  return AddOp(OpKind::kConv2D, attrs, {input, filter, bias}, 1, name)[0];
}

int32_t GraphBuilder::DepthwiseConv2D(int32_t input, int32_t filter, int32_t bias,
                                      const DepthwiseConv2DAttrs& attrs,
                                      const std::string& name) {
  return AddOp(OpKind::kDepthwiseConv2D, attrs, {input, filter, bias}, 1, name)[0];
}

int32_t GraphBuilder::FullyConnected(int32_t input, int32_t weights, int32_t bias,
                                     const FullyConnectedAttrs& attrs, const std::string& name) {
  return AddOp(OpKind::kFullyConnected, attrs, {input, weights, bias}, 1, name)[0];
}

int32_t GraphBuilder::MaxPool2D(int32_t input, const Pool2DAttrs& attrs,
                                const std::string& name) {
  return AddOp(OpKind::kMaxPool2D, attrs, {input}, 1, name)[0];
}

int32_t GraphBuilder::AveragePool2D(int32_t input, const Pool2DAttrs& attrs,
                                    const std::string& name) {
  return AddOp(OpKind::kAveragePool2D, attrs, {input}, 1, name)[0];
}

int32_t GraphBuilder::Add(int32_t a, int32_t b, Activation act, const std::string& name) {
  return AddOp(OpKind::kAdd, ElementwiseAttrs{act}, {a, b}, 1, name)[0];
}

int32_t GraphBuilder::Mul(int32_t a, int32_t b, Activation act, const std::string& name) {
  return AddOp(OpKind::kMul, ElementwiseAttrs{act}, {a, b}, 1, name)[0];
}

int32_t GraphBuilder::Reshape(int32_t input, std::vector<int32_t> new_shape,
                              const std::string& name) {
  if (!CheckOperands({input}, false, OpKind::kReshape)) return kNoTensor;
  // Resolve -1 first so the stored option and shape operand hold the final shape, as TFLite
  // converters write them.
  Operator probe;
  probe.kind = OpKind::kReshape;
  probe.attrs = ReshapeAttrs{new_shape};
  probe.inputs = {input};
  auto shapes = InferOutputShapes(graph_.main(), probe);
  if (!shapes.ok()) {
    Fail(shapes.status());
    return kNoTensor;
  }
  const Shape resolved = (*shapes)[0];
  const std::string base = OpName(OpKind::kReshape, name);
  const int32_t shape_t =
      Int32Constant(base + "/shape", {static_cast<int32_t>(resolved.size())}, resolved);
  return AddOp(OpKind::kReshape, ReshapeAttrs{resolved}, {input, shape_t}, 1, base)[0];
}

int32_t GraphBuilder::Concatenation(std::vector<int32_t> inputs, int32_t axis,
                                    const std::string& name) {
  return AddOp(OpKind::kConcatenation, ConcatenationAttrs{axis, Activation::kNone},
               std::move(inputs), 1, name)[0];
}

int32_t GraphBuilder::Mean(int32_t input, std::vector<int32_t> axes, bool keep_dims,
                           const std::string& name) {
  if (!status_.ok()) return kNoTensor;
  const std::string base = OpName(OpKind::kMean, name);
  const int32_t axes_t = Int32Constant(base + "/axes", {static_cast<int32_t>(axes.size())}, axes);
  return AddOp(OpKind::kMean, ReduceAttrs{keep_dims}, {input, axes_t}, 1, base)[0];
}

int32_t GraphBuilder::Softmax(int32_t input, float beta, const std::string& name) {
  return AddOp(OpKind::kSoftmax, SoftmaxAttrs{beta}, {input}, 1, name)[0];
}

int32_t GraphBuilder::Pad(int32_t input, std::vector<std::vector<int32_t>> paddings,
                          const std::string& name) {
  if (!status_.ok()) return kNoTensor;
  std::vector<int32_t> flat;
  for (const auto& p : paddings) {
    if (p.size() != 2) {
      Fail(absl::InvalidArgumentError("Pad: each padding needs (before, after)"));
      return kNoTensor;
    }
    flat.insert(flat.end(), p.begin(), p.end());
  }
  const std::string base = OpName(OpKind::kPad, name);
  const int32_t pads =
      Int32Constant(base + "/paddings", {static_cast<int32_t>(paddings.size()), 2}, flat);
  return AddOp(OpKind::kPad, std::monostate{}, {input, pads}, 1, base)[0];
}

int32_t GraphBuilder::Unary(OpKind kind, int32_t input, const std::string& name) {
  OpAttrs attrs;
  if (kind == OpKind::kLeakyRelu) attrs = LeakyReluAttrs{};
  if (kind == OpKind::kSoftmax) attrs = SoftmaxAttrs{};
  return AddOp(kind, attrs, {input}, 1, name)[0];
}

absl::StatusOr<Graph> GraphBuilder::Build() {
  if (!status_.ok()) return status_;
  Graph g = std::move(graph_);
  graph_ = Graph();
  graph_.subgraphs.emplace_back();
  graph_.source_format = ModelFormat::kBuilt;
  MICA_RETURN_IF_ERROR(ValidateGraph(g));
  return g;
}

}  // namespace mica
