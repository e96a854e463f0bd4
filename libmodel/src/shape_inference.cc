// Shape inference: the output shapes of an operator from its inputs' shapes (and the constant
// data of shape operands), with TFLite's rules. Used by the builder, validation and importers.
#include "mica/model/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/kernels/padding.h"
#include "mica/model/op_info.h"

namespace mica {
namespace {


using Shape = std::vector<int32_t>;
using Shapes = std::vector<Shape>;

// Elements above this are refused: no MLPerf-Tiny-class model comes near it, and it keeps all
// byte counts comfortably inside int64/size_t.
constexpr int64_t kMaxElements = int64_t{1} << 31;


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

std::string ShapeStr(const std::vector<int32_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

int32_t ConvOutputSize(int32_t in, int32_t filter, int32_t stride, int32_t dilation,
                       Padding padding) {
  return kernels::PaddedOutputSize(padding == Padding::kSame, in, filter, stride, dilation);
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

}  // namespace mica
