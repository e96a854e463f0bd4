// ImportProgram: a parsed ExecuTorch method becomes a mica Graph.
//
// Tensors. Each tensor value becomes a mica tensor in its memory order (sizes permuted by the
// dim order): a channels-last activation is NHWC, as mica's kernels want it, and the graph's
// inputs and outputs keep the byte layout ExecuTorch gives them. Operators whose meaning
// depends on the logical order (permute, cat, softmax, view, pad) get their axes remapped;
// convolutions and pools of a contiguous (NCHW) activation get a TRANSPOSE on either side.
// The Cortex-M backend's explicit-layout variants (`*_nhwc`) take logically NHWC tensors.
// Convolution weights are reordered to mica's OHWI (depthwise 1HW(C*M)) in graph storage.
//
// Quantization. A Cortex-M program carries no scales on its tensors: each operator carries
// zero points and the fixed-point multipliers its kernel uses. mica's IR keeps TFLite's
// convention (scales on tensors, multipliers derived from them), so scales are solved for:
// operators that pass values through (pools, copies, min/max, cat) tie their tensors to one
// scale; ADD ties its operands to its output by the ratios its multipliers encode; QUANTIZE /
// DEQUANTIZE, SOFTMAX (input and output) and a ReLU6 clamp fix absolute scales; tensors no
// operator constrains get 1.0. Weight scales then absorb each convolution's requantization
// (s_w = M * 2^(shift-31) * s_out / s_in). Because mica holds scales as float32, a derived
// multiplier can differ from the file's in its last bits (the run is exact to within that
// rounding, not by construction); the graph's metadata records that the scales are derived.
//
// Operators mica does not map, or whose arguments it cannot express, and delegate calls load
// as opaque operators with a reason (inputs: the tensor arguments read, outputs: those written).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "mica/model/op_info.h"
#include "pte/pte_program.h"
#include "validate.h"

namespace mica {
namespace pte {
namespace {

// Offsets the Cortex-M operators add to int8 values (zero points and their negations) lie in
// [-255, 255]; a program's 64-bit argument outside it is refused before any arithmetic on it.
constexpr const char* kOffsetRange = "a zero-point offset outside [-255, 255]";
constexpr bool IsByteOffset(int64_t v) { return v >= -255 && v <= 255; }

using internal::QuoteForMessage;

// Fixed-point multiplier M (Q31) and shift: real = M * 2^(shift - 31).
double RealFromMultiplier(int64_t m, int64_t shift) {
  return std::ldexp(static_cast<double>(m), static_cast<int>(std::clamp<int64_t>(shift, -64, 64)) - 31);
}

// A reason an operator is not mapped: the importer emits it as opaque.
struct NotMapped {
  std::string reason;
};

class Importer {
 public:
  Importer(const Program& p, Graph graph) : p_(p), g_(std::move(graph)) {}

  absl::StatusOr<Graph> Import() {
    g_.source_format = ModelFormat::kExecuTorch;
    g_.subgraphs.resize(1);
    sg_ = &g_.main();
    sg_->name = p_.method;
    value_tensor_.assign(p_.values.size(), kNoTensor);
    g_.metadata["executorch.method"] = p_.method;
    g_.metadata["executorch.program_version"] = absl::StrCat(p_.version);
    if (!p_.planned_buffers.empty()) {
      // ExecuTorch's memory plan: the buffers the application hands the method (non-constant
      // tensors at planned offsets); mica check --runtime executorch reports them.
      g_.metadata["executorch.planned_buffers"] = absl::StrJoin(p_.planned_buffers, ",");
    }
    if (p_.method_names.size() > 1) {
      // Every method, in file order (mica reads one: the first unless another is asked for).
      g_.metadata["executorch.methods"] = absl::StrJoin(p_.method_names, ",");
    }
    for (int32_t v : p_.inputs) {
      MICA_ASSIGN_OR_RETURN(int32_t t, InputTensor(v, "input"));
      sg_->inputs.push_back(t);
      produced_.insert(t);
    }
    for (size_t c = 0; c < p_.calls.size(); ++c) {
      MICA_RETURN_IF_ERROR(ImportCall(c, p_.calls[c]));
    }
    for (int32_t v : p_.outputs) {
      MICA_ASSIGN_OR_RETURN(int32_t t, InputTensor(v, "output"));
      sg_->outputs.push_back(t);
    }
    MICA_RETURN_IF_ERROR(SolveScales());
    DropFoldedTransposes();
    if (derived_scales_) {
      g_.metadata["executorch.quantization"] =
          "scales derived from the operators' zero points and multipliers";
    }
    MICA_RETURN_IF_ERROR(ValidateGraph(g_));
    return std::move(g_);
  }

 private:
  // ---------------------------------------------------------------- errors and arguments
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(g_.source_path, ": ", what));
  }

  const Value& Arg(const Call& c, size_t k) const { return p_.values[c.args[k]]; }
  std::optional<NotMapped> NeedArgs(const Call& c, size_t n) const {
    if (c.args.size() < n) {
      return NotMapped{absl::StrCat("has ", c.args.size(), " arguments, expected ", n)};
    }
    return std::nullopt;
  }
  bool IsTensor(const Call& c, size_t k) const {
    return k < c.args.size() && Arg(c, k).kind == ValueKind::kTensor;
  }
  bool IsNone(const Call& c, size_t k) const {
    return k >= c.args.size() || Arg(c, k).kind == ValueKind::kNone;
  }
  std::optional<int64_t> Int(const Call& c, size_t k) const {
    if (k >= c.args.size()) return std::nullopt;
    const Value& v = Arg(c, k);
    if (v.kind == ValueKind::kInt) return v.i;
    if (v.kind == ValueKind::kBool) return v.b ? 1 : 0;
    return std::nullopt;
  }
  std::optional<double> Double(const Call& c, size_t k) const {
    if (k >= c.args.size()) return std::nullopt;
    const Value& v = Arg(c, k);
    if (v.kind == ValueKind::kDouble) return v.d;
    if (v.kind == ValueKind::kInt) return static_cast<double>(v.i);
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> Ints(const Call& c, size_t k) const {
    if (k >= c.args.size()) return std::nullopt;
    const Value& v = Arg(c, k);
    if (v.kind == ValueKind::kIntList || v.kind == ValueKind::kBoolList) return v.ints;
    if (v.kind == ValueKind::kInt) return std::vector<int64_t>{v.i};
    return std::nullopt;
  }
  // Integers of a constant int32 tensor argument (requantization multipliers and shifts).
  std::optional<std::vector<int64_t>> IntTensor(const Call& c, size_t k) const {
    if (!IsTensor(c, k)) return Ints(c, k);
    const TensorValue& t = Arg(c, k).tensor;
    if (t.data.empty() || t.dtype != DType::kInt32) return std::nullopt;
    std::vector<int64_t> out(t.data.size / 4);
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data.as<int32_t>()[i];
    return out;
  }
  const TensorValue& T(const Call& c, size_t k) const { return Arg(c, k).tensor; }

  // ---------------------------------------------------------------- tensors
  absl::StatusOr<int32_t> InputTensor(int32_t v, const std::string& what) {
    if (p_.values[v].kind != ValueKind::kTensor) {
      return absl::UnimplementedError(absl::StrCat(g_.source_path, ": method ", what, " value ",
                                                   v, " is not a tensor"));
    }
    return TensorOf(v);
  }

  // Returns the mica tensor of tensor value `v` (physical shape), creating it on first use. A
  // planned tensor that nothing wrote but that shares its arena bytes with a tensor an earlier
  // operator wrote (ExecuTorch removes static views that way) is that tensor, reshaped.
  int32_t TensorOf(int32_t v) {
    if (value_tensor_[v] != kNoTensor) return value_tensor_[v];
    const int32_t alias = writing_.count(v) ? kNoTensor : AliasOf(v);
    if (alias != kNoTensor) {
      const int32_t src = value_tensor_[alias];
      Tensor t;
      t.name = absl::StrCat("v", v);
      t.dtype = p_.values[v].tensor.dtype;
      t.shape = p_.values[v].tensor.PhysicalShape();
      value_tensor_[v] = AddTensor(std::move(t));
      ReshapeAttrs a;
      a.new_shape = sg_->tensors[value_tensor_[v]].shape;
      if (IsQuantizedType(p_.values[v].tensor.dtype)) Tie(value_tensor_[v], src, 1.0);
      AddOp(OpKind::kReshape, {src, Int32Const(absl::StrCat("v", v, "_shape"), a.new_shape)},
            {value_tensor_[v]}, a);
      return value_tensor_[v];
    }
    const TensorValue& tv = p_.values[v].tensor;
    Tensor t;
    t.name = absl::StrCat("v", v);
    t.dtype = tv.dtype;
    t.shape = tv.PhysicalShape();
    t.data = tv.data;
    value_tensor_[v] = AddTensor(std::move(t));
    return value_tensor_[v];
  }

  // Returns the latest written tensor value sharing `v`'s planned bytes, or kNoTensor.
  int32_t AliasOf(int32_t v) const {
    const TensorValue& tv = p_.values[v].tensor;
    if (!tv.planned || !tv.data.empty()) return kNoTensor;
    const size_t bytes = DTypeBytes(tv.dtype, [&] {
      int64_t n = 1;
      for (int32_t d : tv.sizes) n *= d;
      return n;
    }());
    int32_t best = kNoTensor;
    for (size_t u = 0; u < p_.values.size(); ++u) {
      if (static_cast<int32_t>(u) == v || value_tensor_[u] == kNoTensor) continue;
      if (p_.values[u].kind != ValueKind::kTensor) continue;
      const TensorValue& tu = p_.values[u].tensor;
      if (!tu.planned || tu.memory_id != tv.memory_id || tu.memory_offset != tv.memory_offset ||
          tu.dtype != tv.dtype || sg_->tensors[value_tensor_[u]].num_bytes() != bytes) {
        continue;
      }
      const int32_t t = value_tensor_[u];
      if (produced_.count(t) == 0) continue;
      // The latest writer: the highest-numbered producing operator.
      if (best == kNoTensor || writer_index(t) > writer_index(value_tensor_[best])) {
        best = static_cast<int32_t>(u);
      }
    }
    return best;
  }
  int64_t writer_index(int32_t t) const {
    for (size_t o = sg_->ops.size(); o-- > 0;) {
      for (int32_t out : sg_->ops[o].outputs) {
        if (out == t) return static_cast<int64_t>(o);
      }
    }
    return -1;
  }

  int32_t AddTensor(Tensor t) {
    sg_->tensors.push_back(std::move(t));
    return static_cast<int32_t>(sg_->tensors.size() - 1);
  }
  int32_t NewLike(int32_t src, std::vector<int32_t> shape, const std::string& suffix) {
    Tensor t;
    t.name = sg_->tensors[src].name + suffix;
    t.dtype = sg_->tensors[src].dtype;
    t.shape = std::move(shape);
    const int32_t id = AddTensor(std::move(t));
    if (IsQuantizedType(sg_->tensors[id].dtype)) Tie(id, src, 1.0);
    return id;
  }
  int32_t Int32Const(const std::string& name, const std::vector<int32_t>& data) {
    std::vector<uint8_t> bytes(data.size() * 4);
    if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
    Tensor t;
    t.name = name;
    t.dtype = DType::kInt32;
    t.shape = {static_cast<int32_t>(data.size())};
    static const uint8_t kEmpty = 0;
    t.data = data.empty() ? ConstData{&kEmpty, 0} : g_.AddConstData(std::move(bytes));
    return AddTensor(std::move(t));
  }
  int32_t AddOp(OpKind kind, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                OpAttrs attrs = {}) {
    Operator op;
    op.kind = kind;
    op.inputs = std::move(inputs);
    op.outputs = std::move(outputs);
    op.attrs = std::move(attrs);
    for (int32_t o : op.outputs) produced_.insert(o);
    sg_->ops.push_back(std::move(op));
    return static_cast<int32_t>(sg_->ops.size() - 1);
  }
  static bool IsQuantizedType(DType d) { return d == DType::kInt8 || d == DType::kInt16; }

  // Adds TRANSPOSE(src, perm) writing `out`, or a RESHAPE when the permutation moves no
  // element (it only reorders size-1 dimensions: channels-last with one channel is NCHW).
  void Permute(int32_t src, const std::vector<int32_t>& perm, int32_t out) {
    const std::vector<int32_t>& s = sg_->tensors[src].shape;
    std::vector<int32_t> moved;
    for (int32_t p : perm) {
      if (p >= 0 && static_cast<size_t>(p) < s.size() && s[p] != 1) moved.push_back(p);
    }
    const std::string name = sg_->tensors[out].name;
    if (std::is_sorted(moved.begin(), moved.end())) {
      ReshapeAttrs a;
      a.new_shape = sg_->tensors[out].shape;
      AddOp(OpKind::kReshape, {src, Int32Const(name + "_shape", a.new_shape)}, {out}, a);
    } else {
      AddOp(OpKind::kTranspose, {src, Int32Const(name + "_perm", perm)}, {out});
    }
  }

  // Adds TRANSPOSE(src, perm) into a new tensor and returns it.
  int32_t Transpose(int32_t src, const std::vector<int32_t>& perm, const std::string& suffix) {
    const std::vector<int32_t>& s = sg_->tensors[src].shape;
    std::vector<int32_t> shape(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) shape[i] = s[perm[i]];
    const int32_t out = NewLike(src, shape, suffix);
    Permute(src, perm, out);
    return out;
  }

  // Returns a tensor holding value `v` (rank 4) with the memory order N, H, W, C. `nhwc`: the
  // value's logical dimensions already are N, H, W, C (explicit-layout variants).
  int32_t AsNhwc(int32_t v, bool nhwc) {
    const TensorValue& tv = p_.values[v].tensor;
    // Physical position i holds logical dim dim_order[i]; wanted physical order in logical
    // dims is {0,2,3,1} (NCHW logical) or {0,1,2,3} (NHWC logical).
    const std::vector<int32_t> want = nhwc ? std::vector<int32_t>{0, 1, 2, 3}
                                           : std::vector<int32_t>{0, 2, 3, 1};
    const int32_t t = TensorOf(v);
    if (tv.dim_order == want) return t;
    auto key = std::make_pair(v, nhwc);
    if (auto it = nhwc_cache_.find(key); it != nhwc_cache_.end()) return it->second;
    std::vector<int32_t> perm(4);
    for (int i = 0; i < 4; ++i) perm[i] = PhysPos(tv, want[i]);
    const int32_t out = Transpose(t, perm, "_nhwc");
    nhwc_cache_[key] = out;
    return out;
  }
  // Returns a tensor to write as NHWC whose contents end up in value `v`; Finish() adds the
  // transpose into v's own layout when needed.
  int32_t OutNhwc(int32_t v, bool nhwc, std::vector<std::pair<int32_t, int32_t>>* fixups) {
    const TensorValue& tv = p_.values[v].tensor;
    const std::vector<int32_t> want = nhwc ? std::vector<int32_t>{0, 1, 2, 3}
                                           : std::vector<int32_t>{0, 2, 3, 1};
    const int32_t t = TensorOf(v);
    if (tv.dim_order == want) return t;
    std::vector<int32_t> shape(4);
    for (int i = 0; i < 4; ++i) shape[i] = tv.sizes[want[i]];
    const int32_t tmp = NewLike(t, shape, "_nhwc");
    fixups->push_back({tmp, v});
    return tmp;
  }
  void Finish(const std::vector<std::pair<int32_t, int32_t>>& fixups, bool nhwc) {
    const std::vector<int32_t> have = nhwc ? std::vector<int32_t>{0, 1, 2, 3}
                                           : std::vector<int32_t>{0, 2, 3, 1};
    for (const auto& [tmp, v] : fixups) {
      const TensorValue& tv = p_.values[v].tensor;
      // Output physical position i holds logical dim dim_order[i], which sits in the NHWC
      // temporary at the position of that dim in `have`.
      std::vector<int32_t> perm(4);
      for (int i = 0; i < 4; ++i) {
        perm[i] = static_cast<int32_t>(std::find(have.begin(), have.end(), tv.dim_order[i]) -
                                       have.begin());
      }
      Permute(tmp, perm, TensorOf(v));
      nhwc_cache_[{v, nhwc}] = tmp;  // a later conv or pool of v reads the NHWC form
    }
  }
  static int32_t PhysPos(const TensorValue& tv, int32_t logical) {
    return static_cast<int32_t>(std::find(tv.dim_order.begin(), tv.dim_order.end(), logical) -
                                tv.dim_order.begin());
  }

  // Returns constant value `v`'s data reordered so that output dim i is logical dim order[i].
  std::optional<ConstData> Reorder(int32_t v, const std::vector<int32_t>& order) {
    const TensorValue& tv = p_.values[v].tensor;
    const size_t rank = tv.sizes.size();
    if (tv.data.empty() || order.size() != rank) return std::nullopt;
    const size_t esize = DTypeBytes(tv.dtype, 1);
    if (tv.dtype == DType::kInt4) return std::nullopt;
    // Physical strides of logical dims.
    std::vector<int64_t> stride(rank, 1);
    int64_t s = 1;
    for (size_t i = rank; i-- > 0;) {
      stride[tv.dim_order[i]] = s;
      s *= tv.sizes[tv.dim_order[i]];
    }
    const int64_t n = s;
    if (tv.data.size < static_cast<size_t>(n) * esize) return std::nullopt;
    std::vector<uint8_t> out(static_cast<size_t>(n) * esize);
    std::vector<int64_t> idx(rank, 0);
    for (int64_t k = 0; k < n; ++k) {
      int64_t src = 0;
      for (size_t i = 0; i < rank; ++i) src += idx[i] * stride[order[i]];
      std::memcpy(out.data() + k * esize, tv.data.ptr + src * esize, esize);
      for (size_t i = rank; i-- > 0;) {
        if (++idx[i] < tv.sizes[order[i]]) break;
        idx[i] = 0;
      }
    }
    return g_.AddConstData(std::move(out));
  }
  // A new constant tensor with `data` laid out as `shape`.
  int32_t ConstTensor(int32_t v, ConstData data, std::vector<int32_t> shape,
                      const std::string& suffix) {
    Tensor t;
    t.name = absl::StrCat("v", v, suffix);
    t.dtype = p_.values[v].tensor.dtype;
    t.shape = std::move(shape);
    t.data = data;
    return AddTensor(std::move(t));
  }

  // ---------------------------------------------------------------- scales
  // Relations recorded while importing, solved once every operator is in (SolveScales).
  struct Relation {
    enum Kind { kTie, kAnchor, kZeroPoint, kWeights, kProduct } kind = kTie;
    int32_t a = kNoTensor, b = kNoTensor, c = kNoTensor;  // tensors
    double k = 1.0;                  // kTie: s_a = k * s_b; kAnchor: s_a = k; kProduct: s_c = s_a*s_b/k
    int64_t zp = 0;                  // kZeroPoint, kAnchor (with has_zp)
    bool has_zp = false;
    std::vector<double> eff;         // kWeights: a = weights, b = input, c = output
  };
  static Relation Rel(Relation::Kind kind, int32_t a, int32_t b = kNoTensor,
                      int32_t c = kNoTensor, double k = 1.0) {
    Relation r;
    r.kind = kind, r.a = a, r.b = b, r.c = c, r.k = k;
    return r;
  }
  // s_a = k s_b; `same_zp`: a and b also share their zero point (copies, pools, pads).
  void Tie(int32_t a, int32_t b, double k, bool same_zp = true) {
    Relation r = Rel(Relation::kTie, a, b, kNoTensor, k);
    r.has_zp = same_zp;
    rel_.push_back(r);
  }
  void Anchor(int32_t a, double s) { rel_.push_back(Rel(Relation::kAnchor, a, kNoTensor, kNoTensor, s)); }
  void Product(int32_t a, int32_t b, int32_t out, double real) {
    rel_.push_back(Rel(Relation::kProduct, a, b, out, real));
  }
  void ZeroPoint(int32_t a, int64_t zp) {
    Relation r = Rel(Relation::kZeroPoint, a);
    r.zp = zp;
    rel_.push_back(r);
  }
  void WeightScales(int32_t w, int32_t in, int32_t out, std::vector<double> eff) {
    Relation r = Rel(Relation::kWeights, w, in, out);
    r.eff = std::move(eff);
    rel_.push_back(std::move(r));
  }

  struct Node {
    int32_t parent;
    double ratio;  // s = ratio * s_parent
  };
  std::pair<int32_t, double> Find(int32_t t) {
    double r = 1.0;
    int32_t x = t;
    while (uf_[x].parent != x) {
      r *= uf_[x].ratio;
      x = uf_[x].parent;
    }
    uf_[t] = {x, r};
    return {x, r};
  }

  absl::Status SolveScales() {
    const size_t n = sg_->tensors.size();
    uf_.resize(n);
    for (size_t i = 0; i < n; ++i) uf_[i] = {static_cast<int32_t>(i), 1.0};
    std::vector<std::optional<double>> root_scale(n);
    std::vector<std::optional<int64_t>> zp(n);
    // Zero points: given ones, then shared along ties that keep them until nothing changes.
    for (const Relation& r : rel_) {
      if (r.kind == Relation::kZeroPoint && !zp[r.a]) zp[r.a] = r.zp;
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (const Relation& r : rel_) {
        if (r.kind != Relation::kTie || !r.has_zp || zp[r.a].has_value() == zp[r.b].has_value()) {
          continue;
        }
        if (zp[r.a]) zp[r.b] = zp[r.a];
        else zp[r.a] = zp[r.b];
        changed = true;
      }
    }
    // Ties first (they do not fix values), then absolute scales in program order.
    for (const Relation& r : rel_) {
      if (r.kind != Relation::kTie) continue;
      auto [ra, ka] = Find(r.a);
      auto [rb, kb] = Find(r.b);
      if (ra == rb || !(r.k > 0) || !std::isfinite(r.k)) continue;
      // s_a = k s_b: s_ra * ka = k * s_rb * kb  =>  s_ra = (k kb / ka) s_rb.
      uf_[ra] = {rb, r.k * kb / ka};
    }
    auto scale_of = [&](int32_t t) {
      auto [root, k] = Find(t);
      if (!root_scale[root]) root_scale[root] = 1.0;
      return *root_scale[root] * k;
    };
    for (const Relation& r : rel_) {
      if (r.kind == Relation::kAnchor) {
        auto [root, k] = Find(r.a);
        if (!root_scale[root] && r.k > 0 && std::isfinite(r.k)) root_scale[root] = r.k / k;
      } else if (r.kind == Relation::kProduct) {
        auto [root, k] = Find(r.c);
        const double s = scale_of(r.a) * scale_of(r.b) / r.k;
        if (!root_scale[root] && s > 0 && std::isfinite(s)) root_scale[root] = s / k;
      }
    }
    for (size_t t = 0; t < n; ++t) {
      Tensor& tensor = sg_->tensors[t];
      if (!IsQuantizedType(tensor.dtype) || tensor.is_constant() || !tensor.quant.empty()) {
        continue;
      }
      tensor.quant.scale = {static_cast<float>(scale_of(static_cast<int32_t>(t)))};
      tensor.quant.zero_point = {zp[t].value_or(0)};
    }
    for (const Relation& r : rel_) {
      if (r.kind != Relation::kWeights) continue;
      Tensor& w = sg_->tensors[r.a];
      const double ratio = scale_of(r.c) / scale_of(r.b);
      w.quant.scale.clear();
      for (double e : r.eff) w.quant.scale.push_back(static_cast<float>(e * ratio));
      w.quant.zero_point.assign(r.eff.size(), 0);
      w.quant.axis = w.shape.size() == 4 && w.shape[0] == 1 && r.eff.size() > 1 ? 3 : 0;
      derived_scales_ = true;
    }
    return absl::OkStatus();
  }

  // Removes the TRANSPOSEs of constant weights whose only readers became FULLY_CONNECTED (the
  // weight is read in its own layout), then the tensors nothing refers to any more.
  void DropFoldedTransposes() {
    std::vector<bool> drop(sg_->ops.size(), false);
    bool any = false;
    for (const auto& [v, t] : transposed_) {
      const int32_t out = value_tensor_[v];
      if (t.op < 0 || static_cast<size_t>(t.op) >= sg_->ops.size() || out == kNoTensor) continue;
      const Operator& op = sg_->ops[t.op];
      if (op.kind != OpKind::kTranspose || op.outputs != std::vector<int32_t>{out}) continue;
      bool read = std::count(sg_->outputs.begin(), sg_->outputs.end(), out) > 0;
      for (const Operator& o : sg_->ops) {
        read = read || std::count(o.inputs.begin(), o.inputs.end(), out) > 0;
      }
      if (!read) drop[t.op] = any = true;
    }
    if (!any) return;
    std::vector<Operator> kept;
    for (size_t i = 0; i < sg_->ops.size(); ++i) {
      if (!drop[i]) kept.push_back(std::move(sg_->ops[i]));
    }
    sg_->ops = std::move(kept);
    // Renumber the tensors still referred to, in their order.
    std::vector<int32_t> renum(sg_->tensors.size(), kNoTensor);
    auto mark = [&](const std::vector<int32_t>& ids) {
      for (int32_t t : ids) {
        if (t >= 0 && static_cast<size_t>(t) < renum.size()) renum[t] = 0;
      }
    };
    mark(sg_->inputs);
    mark(sg_->outputs);
    for (const Operator& o : sg_->ops) mark(o.inputs), mark(o.outputs);
    std::vector<Tensor> tensors;
    for (size_t t = 0; t < sg_->tensors.size(); ++t) {
      if (renum[t] == kNoTensor) continue;
      renum[t] = static_cast<int32_t>(tensors.size());
      tensors.push_back(std::move(sg_->tensors[t]));
    }
    sg_->tensors = std::move(tensors);
    auto apply = [&](std::vector<int32_t>& ids) {
      for (int32_t& t : ids) {
        if (t >= 0 && static_cast<size_t>(t) < renum.size()) t = renum[t];
      }
    };
    apply(sg_->inputs);
    apply(sg_->outputs);
    for (Operator& o : sg_->ops) apply(o.inputs), apply(o.outputs);
    for (int32_t& t : value_tensor_) {
      if (t >= 0 && static_cast<size_t>(t) < renum.size()) t = renum[t];
    }
  }

  // ---------------------------------------------------------------- calls
  absl::Status ImportCall(size_t index, const Call& call) {
    const std::string name = call.delegate ? absl::StrCat("delegate:", p_.delegates[call.index].id)
                                           : p_.operators[call.index];
    // The values the call writes: ExecuTorch passes each out argument twice (as the out
    // argument and as the returned value), or returns several in a trailing list.
    writing_.clear();
    for (size_t i = 0; i < call.args.size(); ++i) {
      if (std::count(call.args.begin(), call.args.end(), call.args[i]) > 1) {
        writing_.insert(call.args[i]);
      }
    }
    if (!call.args.empty()) {
      const Value& last = p_.values[call.args.back()];
      if (last.kind == ValueKind::kTensorList) {
        writing_.insert(last.refs.begin(), last.refs.end());
      } else {
        writing_.insert(call.args.back());
      }
    }
    // Snapshot, so a half-mapped operator can be rolled back to an opaque one.
    const size_t ops = sg_->ops.size(), tensors = sg_->tensors.size(), rels = rel_.size();
    const auto values = value_tensor_;
    const auto cache = nhwc_cache_;
    const auto produced = produced_;
    std::optional<NotMapped> r;
    if (call.delegate) {
      const Delegate& d = p_.delegates[call.index];
      r = NotMapped{absl::StrCat("delegated to backend ", QuoteForMessage(d.id), " (", d.bytes,
                                 "-byte blob, opaque to mica)")};
    } else {
      r = Map(StripOverload(name), call);
    }
    if (!r) return absl::OkStatus();
    sg_->ops.resize(ops);
    sg_->tensors.resize(tensors);
    rel_.resize(rels);
    value_tensor_ = values;
    nhwc_cache_ = cache;
    produced_ = produced;
    return AddOpaque(index, name, call, r->reason);
  }

  static std::string StripOverload(const std::string& name) {
    const size_t colon = name.find("::");
    const size_t dot = name.find('.', colon == std::string::npos ? 0 : colon);
    return dot == std::string::npos ? name : name.substr(0, dot);
  }

  absl::Status AddOpaque(size_t index, const std::string& name, const Call& call,
                         const std::string& reason) {
    Operator op;
    op.kind = OpKind::kOpaque;
    op.opaque_name = name;
    op.opaque_reason = reason;
    // Tensors nothing has written yet are what the call writes (out arguments); the rest are
    // read. A value passed twice (ExecuTorch passes an out argument and the returned value)
    // appears once.
    std::vector<int32_t> seen;
    for (int32_t v : call.args) {
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      std::vector<int32_t> list;
      const Value& val = p_.values[v];
      if (val.kind == ValueKind::kTensor) {
        list.push_back(v);
      } else if (val.kind == ValueKind::kTensorList || val.kind == ValueKind::kOptionalTensorList) {
        for (int32_t r : val.refs) {
          if (r >= 0 && p_.values[r].kind == ValueKind::kTensor) list.push_back(r);
        }
      }
      for (int32_t tv : list) {
        const int32_t t = TensorOf(tv);
        const bool written = produced_.count(t) == 0 && !sg_->tensors[t].is_constant();
        (written ? op.outputs : op.inputs).push_back(t);
      }
    }
    if (op.outputs.empty()) {
      return Error(absl::StrCat("method ", QuoteForMessage(p_.method), ", instruction ", index,
                                " (", QuoteForMessage(name), "): writes no tensor"));
    }
    for (int32_t o : op.outputs) produced_.insert(o);
    sg_->ops.push_back(std::move(op));
    return absl::OkStatus();
  }

  std::optional<NotMapped> Map(const std::string& name, const Call& c);
  std::optional<NotMapped> MapConv(const Call& c, bool cortex_m, bool depthwise, bool nhwc);
  std::optional<NotMapped> MapLinear(const Call& c, bool cortex_m);
  std::optional<NotMapped> MapPool(const Call& c, bool max, bool cortex_m, bool nhwc);
  std::optional<NotMapped> MapQuantize(const Call& c, bool quantize);
  std::optional<NotMapped> MapCortexAdd(const Call& c);
  std::optional<NotMapped> MapCortexMul(const Call& c);
  std::optional<NotMapped> MapSoftmax(const Call& c, bool cortex_m);
  std::optional<NotMapped> MapPermute(const Call& c);
  std::optional<NotMapped> MapView(const Call& c);
  std::optional<NotMapped> MapClone(const Call& c);
  std::optional<NotMapped> MapCat(const Call& c);
  std::optional<NotMapped> MapPad(const Call& c, bool cortex_m);
  std::optional<NotMapped> MapBmm(const Call& c, bool cortex_m);
  std::optional<NotMapped> MapMatmulLinear(const Call& c, bool addmm);
  std::optional<NotMapped> MapTable(const std::string& name, const Call& c);
  std::optional<NotMapped> ActivationFor(int64_t lo, int64_t hi, int32_t out, int64_t zp,
                                         Activation* act);

  const Program& p_;
  Graph g_;
  Subgraph* sg_ = nullptr;
  std::vector<int32_t> value_tensor_;
  std::map<std::pair<int32_t, bool>, int32_t> nhwc_cache_;
  std::set<int32_t> produced_;
  std::set<int32_t> writing_;  // values the current call writes (never aliases of others)
  std::vector<Relation> rel_;
  std::vector<Node> uf_;
  bool derived_scales_ = false;
  // Values written by a 2-D transpose of a constant matrix (permute_copy [1, 0] or t_copy): the
  // constant's value and the TRANSPOSE's index. addmm / mm of such a value is a linear layer.
  struct Transposed {
    int32_t src;
    int32_t op;
  };
  std::map<int32_t, Transposed> transposed_;
};

// Output value of a call: its last argument (ExecuTorch passes out arguments last, and repeats
// the returned value after them).
// A call returning several tensors ends with their list: the first is the output.
int32_t OutValue(const Call& c, const Program& p) {
  const Value& last = p.values[c.args.back()];
  if ((last.kind == ValueKind::kTensorList) && !last.refs.empty()) return last.refs[0];
  return c.args.back();
}

std::optional<NotMapped> Importer::ActivationFor(int64_t lo, int64_t hi, int32_t out, int64_t zp,
                                                 Activation* act) {
  const DType d = sg_->tensors[out].dtype;
  const int64_t qmin = d == DType::kInt16 ? -32768 : -128, qmax = d == DType::kInt16 ? 32767 : 127;
  // A zero point outside the output type's range is refused before hi - zp is formed.
  if (zp < qmin || zp > qmax) {
    return NotMapped{absl::StrCat("output zero point ", zp, " is outside the output type's range")};
  }
  if (lo <= qmin && hi >= qmax) {
    *act = Activation::kNone;
  } else if (lo == std::max(zp, qmin) && hi >= qmax) {
    *act = Activation::kRelu;
  } else if (lo == std::max(zp, qmin) && hi > zp) {
    *act = Activation::kRelu6;
    Anchor(out, 6.0 / static_cast<double>(hi - zp));
  } else {
    return NotMapped{absl::StrCat("output clamp [", lo, ", ", hi, "] with zero point ", zp,
                                  " is not a ReLU or ReLU6 mica can express")};
  }
  return std::nullopt;
}

std::optional<NotMapped> Importer::Map(const std::string& name, const Call& c) {
  if (c.args.empty()) return NotMapped{"has no arguments"};
  if (p_.values[OutValue(c, p_)].kind != ValueKind::kTensor) {
    return NotMapped{"its last argument is not a tensor"};
  }
  if (name == "aten::convolution") return MapConv(c, false, false, false);
  if (name == "cortex_m::quantized_conv2d") return MapConv(c, true, false, false);
  if (name == "cortex_m::quantized_conv2d_nhwc") return MapConv(c, true, false, true);
  if (name == "cortex_m::quantized_depthwise_conv2d") return MapConv(c, true, true, false);
  if (name == "cortex_m::quantized_depthwise_conv2d_nhwc") return MapConv(c, true, true, true);
  if (name == "aten::linear") return MapLinear(c, false);
  if (name == "cortex_m::quantized_linear") return MapLinear(c, true);
  if (name == "aten::avg_pool2d") return MapPool(c, false, false, false);
  if (name == "aten::max_pool2d_with_indices" || name == "aten::max_pool2d") {
    return MapPool(c, true, false, false);
  }
  if (name == "cortex_m::quantized_avg_pool2d") return MapPool(c, false, true, false);
  if (name == "cortex_m::quantized_avg_pool2d_nhwc") return MapPool(c, false, true, true);
  if (name == "cortex_m::quantized_max_pool2d") return MapPool(c, true, true, false);
  if (name == "cortex_m::quantized_max_pool2d_nhwc") return MapPool(c, true, true, true);
  if (name == "quantized_decomposed::quantize_per_tensor" ||
      name == "cortex_m::quantize_per_tensor") {
    return MapQuantize(c, true);
  }
  if (name == "quantized_decomposed::dequantize_per_tensor" ||
      name == "cortex_m::dequantize_per_tensor") {
    return MapQuantize(c, false);
  }
  if (name == "cortex_m::quantized_add") return MapCortexAdd(c);
  if (name == "cortex_m::quantized_mul") return MapCortexMul(c);
  if (name == "aten::_softmax" || name == "aten::softmax") return MapSoftmax(c, false);
  if (name == "cortex_m::softmax") return MapSoftmax(c, true);
  if (name == "aten::permute_copy" || name == "cortex_m::transpose" || name == "aten::t_copy") {
    return MapPermute(c);
  }
  if (name == "dim_order_ops::_clone_dim_order" || name == "dim_order_ops::_to_dim_order_copy" ||
      name == "aten::clone") {
    return MapClone(c);
  }
  if (name == "aten::view_copy" || name == "aten::_unsafe_view" || name == "aten::reshape" ||
      name == "executorch_prim::et_view" || name == "aten::squeeze_copy" ||
      name == "aten::unsqueeze_copy" || name == "aten::flatten") {
    return MapView(c);
  }
  if (name == "aten::cat") return MapCat(c);
  if (name == "aten::constant_pad_nd") return MapPad(c, false);
  if (name == "cortex_m::pad") return MapPad(c, true);
  if (name == "aten::bmm") return MapBmm(c, false);
  if (name == "aten::mm") return MapMatmulLinear(c, false);
  if (name == "aten::addmm") return MapMatmulLinear(c, true);
  if (name == "cortex_m::quantized_batch_matmul") return MapBmm(c, true);
  if (name == "cortex_m::minimum" || name == "cortex_m::maximum") {
    const bool is_min = name == "cortex_m::minimum";
    if (auto e = NeedArgs(c, 3)) return e;
    if (!IsTensor(c, 0) || !IsTensor(c, 1)) return NotMapped{"operands are not tensors"};
    const TensorValue &a = T(c, 0), &b = T(c, 1), &o = p_.values[OutValue(c, p_)].tensor;
    if (a.dim_order != o.dim_order || b.dim_order != o.dim_order) {
      return NotMapped{"operands in different memory orders"};
    }
    const int32_t out = TensorOf(OutValue(c, p_));
    Tie(TensorOf(c.args[0]), out, 1.0);
    Tie(TensorOf(c.args[1]), out, 1.0);
    AddOp(is_min ? OpKind::kMinimum : OpKind::kMaximum,
          {TensorOf(c.args[0]), TensorOf(c.args[1])}, {out});
    return std::nullopt;
  }
  return MapTable(name, c);
}

// Elementwise operators found through the op table's ExecuTorch column: same-shape unary ops
// and broadcast binary ones on float tensors in one memory order.
std::optional<NotMapped> Importer::MapTable(const std::string& name, const Call& c) {
  // "aten::relu" is the table's "aten.relu.<overload>".
  std::string dotted = name;
  if (const size_t p = dotted.find("::"); p != std::string::npos) dotted.replace(p, 2, ".");
  std::optional<OpKind> kind;
  for (size_t k = 1; k < kNumOpKinds; ++k) {
    const OpInfo& info = GetOpInfo(static_cast<OpKind>(k));
    if (info.executorch.empty()) continue;
    const std::string_view e = info.executorch;
    if (e.substr(0, e.rfind('.')) == dotted) {
      kind = info.kind;
      break;
    }
  }
  if (!kind) {
    if (name == "aten::hardtanh") {
      const auto lo = Double(c, 1), hi = Double(c, 2);
      if (lo && hi && *lo == 0.0 && *hi == 6.0) kind = OpKind::kRelu6;
      else if (lo && hi && *lo == -1.0 && *hi == 1.0) kind = OpKind::kReluN1To1;
      else return NotMapped{"hardtanh bounds other than [0, 6] or [-1, 1]"};
    } else if (name == "aten::clamp") {
      const auto lo = Double(c, 1), hi = Double(c, 2);
      if (lo && *lo == 0.0 && IsNone(c, 2)) kind = OpKind::kRelu;
      else if (lo && hi && *lo == 0.0 && *hi == 6.0) kind = OpKind::kRelu6;
      else return NotMapped{"clamp bounds other than [0, inf) or [0, 6]"};
    } else {
      return NotMapped{"not an operator mica maps"};
    }
  }
  const OpInfo& info = GetOpInfo(*kind);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  const bool unary = info.category == OpCategory::kElementwiseUnary ||
                     info.category == OpCategory::kActivation;
  const bool binary = info.category == OpCategory::kElementwiseBinary;
  if (!(unary && (info.traits & kSameShape)) && !binary) {
    return NotMapped{absl::StrCat("maps to ", std::string(info.name),
                                  ", which mica imports only from TFLite")};
  }
  if (info.attrs_index != 0 &&
      info.attrs_index != internal::kAttrIndex<ElementwiseAttrs>) {
    return NotMapped{absl::StrCat("maps to ", std::string(info.name),
                                  ", whose attributes are not read")};
  }
  if (o.dtype != DType::kFloat32) {
    return NotMapped{absl::StrCat("a ", std::string(DTypeName(o.dtype)), " ", std::string(info.name),
                                  " (mica maps float portable operators; quantized ones come "
                                  "from the Cortex-M backend's operators)")};
  }
  std::vector<int32_t> inputs;
  const int n = binary ? 2 : 1;
  for (int k = 0; k < n; ++k) {
    if (!IsTensor(c, k)) return NotMapped{"a scalar operand (not a tensor)"};
    const TensorValue& a = T(c, k);
    if (a.dim_order != o.dim_order && !(a.Contiguous() && a.sizes.size() < o.sizes.size())) {
      return NotMapped{"operands in different memory orders"};
    }
    if (!a.Contiguous() && a.sizes != o.sizes) {
      return NotMapped{"broadcast of a non-contiguous operand"};
    }
    inputs.push_back(TensorOf(c.args[k]));
  }
  if (binary && (*kind == OpKind::kAdd || *kind == OpKind::kSub)) {
    const auto alpha = Double(c, 2);
    if (alpha && *alpha != 1.0) return NotMapped{"alpha other than 1"};
  }
  OpAttrs attrs;
  if (info.attrs_index == internal::kAttrIndex<ElementwiseAttrs>) attrs = ElementwiseAttrs{};
  AddOp(*kind, inputs, {TensorOf(outv)}, attrs);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapConv(const Call& c, bool cortex_m, bool depthwise,
                                           bool nhwc) {
  // aten: (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
  // cortex_m: (input, weight, bias, stride, padding, dilation, [depth_multiplier,]
  //            input_offset, output_offset, multipliers, shifts, act_min, act_max, scratch)
  if (auto e = NeedArgs(c, cortex_m ? (depthwise ? 15 : 14) : 10)) return e;
  if (!IsTensor(c, 0) || !IsTensor(c, 1)) return NotMapped{"input or weight is not a tensor"};
  const TensorValue& in = T(c, 0);
  const TensorValue& w = T(c, 1);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  if (in.sizes.size() != 4 || w.sizes.size() != 4 || o.sizes.size() != 4) {
    return NotMapped{"not a 2-D convolution (rank-4 input, weight and output)"};
  }
  if (w.data.empty()) return NotMapped{"weights are not constant"};
  const auto stride = Ints(c, 3), padding = Ints(c, 4), dilation = Ints(c, 5);
  if (!stride || !padding || !dilation || stride->size() != 2 || padding->size() != 2 ||
      dilation->size() != 2) {
    return NotMapped{"stride, padding or dilation is not a pair"};
  }
  // Logical dims: N, C, H, W (or N, H, W, C for the explicit-layout variants).
  const int hd = nhwc ? 1 : 2, wd = nhwc ? 2 : 3, cd = nhwc ? 3 : 1;
  const int32_t cin = in.sizes[cd], cout = o.sizes[cd];
  int64_t groups = 1;
  if (!cortex_m) {
    const auto transposed = Int(c, 6), g = Int(c, 8);
    if (!transposed || *transposed) return NotMapped{"transposed convolution"};
    groups = g.value_or(1);
    if (groups != 1 && !(groups == cin && cout % cin == 0)) {
      return NotMapped{absl::StrCat("grouped convolution (", groups, " groups)")};
    }
    depthwise = groups != 1;
  }
  // Weight logical dims: [O, I/g, kh, kw] (aten) or [O, kh, kw, I] (Cortex-M operators;
  // depthwise [1, kh, kw, C*M]). Bring them to OHWI / 1HW(C*M).
  std::vector<int32_t> worder;
  int32_t kh, kw;
  if (nhwc || cortex_m) {
    // The Cortex-M operators take OHWI (depthwise 1HW(C*M)) weights whatever the variant.
    worder = {0, 1, 2, 3};
    kh = w.sizes[1], kw = w.sizes[2];
  } else {
    worder = depthwise ? std::vector<int32_t>{1, 2, 3, 0} : std::vector<int32_t>{0, 2, 3, 1};
    kh = w.sizes[2], kw = w.sizes[3];
  }
  std::vector<int32_t> wshape(4);
  for (int i = 0; i < 4; ++i) wshape[i] = w.sizes[worder[i]];
  if (depthwise) {
    if (wshape[0] != 1 || wshape[3] != cout) {
      return NotMapped{"depthwise weight shape does not match the output channels"};
    }
  } else if (wshape[0] != cout || wshape[3] != cin) {
    return NotMapped{"weight shape does not match the input and output channels"};
  }
  auto wdata = Reorder(c.args[1], worder);
  if (!wdata) return NotMapped{"weight data does not match its shape"};

  Activation act = Activation::kNone;
  std::vector<double> eff;
  int64_t in_zp = 0, out_zp = 0;
  if (cortex_m) {
    const size_t b = depthwise ? 7 : 6;  // input_offset index
    const auto ioff = Int(c, b), ooff = Int(c, b + 1);
    const auto mult = IntTensor(c, b + 2), shift = IntTensor(c, b + 3);
    const auto lo = Int(c, b + 4), hi = Int(c, b + 5);
    if (!ioff || !ooff || !mult || !shift || !lo || !hi || mult->size() != shift->size() ||
        (mult->size() != 1 && mult->size() != static_cast<size_t>(cout))) {
      return NotMapped{"requantization arguments are missing or do not match the channels"};
    }
    if (in.dtype != DType::kInt8 || w.dtype != DType::kInt8) {
      return NotMapped{"not an int8 convolution"};
    }
    if (!IsByteOffset(*ioff) || !IsByteOffset(*ooff)) return NotMapped{kOffsetRange};
    in_zp = -*ioff;
    out_zp = *ooff;
    for (size_t k = 0; k < mult->size(); ++k) eff.push_back(RealFromMultiplier((*mult)[k], (*shift)[k]));
    if (depthwise) {
      const auto dm = Int(c, 6);
      // cin * dm is formed only once dm <= cout, so it cannot overflow.
      if (!dm || *dm < 1 || *dm > cout || static_cast<int64_t>(cin) * *dm != cout) {
        return NotMapped{"depth multiplier does not match"};
      }
    }
  } else if (in.dtype != DType::kFloat32) {
    return NotMapped{absl::StrCat("a ", std::string(DTypeName(in.dtype)), " portable convolution")};
  }

  std::vector<std::pair<int32_t, int32_t>> fixups;
  int32_t x = AsNhwc(c.args[0], nhwc);
  const int32_t out = OutNhwc(outv, nhwc, &fixups);
  if (cortex_m) {
    if (auto e = ActivationFor(*Int(c, depthwise ? 11 : 10), *Int(c, depthwise ? 12 : 11), out,
                               out_zp, &act)) {
      return e;
    }
    ZeroPoint(TensorOf(c.args[0]), in_zp);
    ZeroPoint(x, in_zp);
    ZeroPoint(out, out_zp);
    ZeroPoint(TensorOf(outv), out_zp);
  }
  // Padding: SAME or VALID when the explicit padding is one of them, else an explicit PAD.
  const int32_t ih = in.sizes[hd], iw = in.sizes[wd];
  const int32_t oh = o.sizes[hd], ow = o.sizes[wd];
  const int64_t sh = (*stride)[0], sw = (*stride)[1], dh = (*dilation)[0], dw = (*dilation)[1];
  const int64_t ph = (*padding)[0], pw = (*padding)[1];
  if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || ph < 0 || pw < 0 || sh > 65535 || sw > 65535 ||
      dh > 65535 || dw > 65535 || ph > 65535 || pw > 65535) {
    return NotMapped{"stride, dilation or padding out of range"};
  }
  auto same_pad = [](int64_t in_size, int64_t out_size, int64_t s, int64_t k, int64_t d) {
    const int64_t total = std::max<int64_t>((out_size - 1) * s + (k - 1) * d + 1 - in_size, 0);
    return std::make_pair(total / 2, total - total / 2);
  };
  Padding pad = Padding::kValid;
  if (ph != 0 || pw != 0) {
    const auto [bh, ah] = same_pad(ih, oh, sh, kh, dh);
    const auto [bw, aw] = same_pad(iw, ow, sw, kw, dw);
    const bool same_out = oh == (ih + sh - 1) / sh && ow == (iw + sw - 1) / sw;
    if (same_out && bh == ph && bw == pw && ah <= ph + (sh - 1) + 1 && aw <= pw + (sw - 1) + 1 &&
        ah >= ph && aw >= pw) {
      pad = Padding::kSame;
    } else {
      const std::vector<int32_t> s = sg_->tensors[x].shape;
      if (s[1] + 2 * ph > INT32_MAX || s[2] + 2 * pw > INT32_MAX) {
        return NotMapped{"padded input too large"};
      }
      const int32_t padded = NewLike(x, {s[0], static_cast<int32_t>(s[1] + 2 * ph),
                                         static_cast<int32_t>(s[2] + 2 * pw), s[3]}, "_pad");
      const int32_t pads = Int32Const(sg_->tensors[x].name + "_pads",
                                      {0, 0, static_cast<int32_t>(ph), static_cast<int32_t>(ph),
                                       static_cast<int32_t>(pw), static_cast<int32_t>(pw), 0, 0});
      AddOp(OpKind::kPad, {x, pads}, {padded});
      x = padded;
    }
  }
  const int32_t wt = ConstTensor(c.args[1], *wdata, wshape, "_ohwi");
  int32_t bias = kNoTensor;
  if (IsTensor(c, 2)) {
    if (T(c, 2).data.empty()) return NotMapped{"bias is not constant"};
    bias = TensorOf(c.args[2]);
  }
  if (cortex_m) WeightScales(wt, x, out, eff);
  if (depthwise) {
    DepthwiseConv2DAttrs a;
    a.padding = pad;
    a.stride_h = static_cast<int32_t>(sh), a.stride_w = static_cast<int32_t>(sw);
    a.dilation_h = static_cast<int32_t>(dh), a.dilation_w = static_cast<int32_t>(dw);
    a.depth_multiplier = cout / std::max(cin, 1);
    a.activation = act;
    AddOp(OpKind::kDepthwiseConv2D, {x, wt, bias}, {out}, a);
  } else {
    Conv2DAttrs a;
    a.padding = pad;
    a.stride_h = static_cast<int32_t>(sh), a.stride_w = static_cast<int32_t>(sw);
    a.dilation_h = static_cast<int32_t>(dh), a.dilation_w = static_cast<int32_t>(dw);
    a.activation = act;
    AddOp(OpKind::kConv2D, {x, wt, bias}, {out}, a);
  }
  Finish(fixups, nhwc);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapLinear(const Call& c, bool cortex_m) {
  // aten: (input, weight, bias); cortex_m: (input, weights, bias, kernel_sum, input_offset,
  // filter_offset, output_offset, multipliers, shifts, act_max, act_min)
  if (auto e = NeedArgs(c, cortex_m ? 12 : 4)) return e;
  if (!IsTensor(c, 0) || !IsTensor(c, 1)) return NotMapped{"input or weight is not a tensor"};
  const TensorValue& in = T(c, 0);
  const TensorValue& w = T(c, 1);
  const int32_t outv = OutValue(c, p_);
  if (w.sizes.size() != 2 || w.data.empty()) return NotMapped{"weight is not a constant matrix"};
  if (!in.Contiguous()) return NotMapped{"non-contiguous input"};
  if (in.sizes.empty() || in.sizes.back() != w.sizes[1]) {
    return NotMapped{"input depth does not match the weights"};
  }
  auto wdata = Reorder(c.args[1], {0, 1});
  if (!wdata) return NotMapped{"weight data does not match its shape"};
  const int32_t rows = w.sizes[0], cols = w.sizes[1];
  if (IsTensor(c, 2) && T(c, 2).data.empty()) return NotMapped{"bias is not constant"};
  const int32_t wt = ConstTensor(c.args[1], *wdata, {rows, cols}, "_w");
  const int32_t out = TensorOf(outv);
  FullyConnectedAttrs a;
  a.keep_num_dims = in.sizes.size() != 2;
  int32_t bias = IsTensor(c, 2) ? TensorOf(c.args[2]) : kNoTensor;
  if (cortex_m) {
    const auto ioff = Int(c, 4), foff = Int(c, 5), ooff = Int(c, 6);
    const auto mult = IntTensor(c, 7), shift = IntTensor(c, 8);
    const auto hi = Int(c, 9), lo = Int(c, 10);
    if (!ioff || !foff || !ooff || !mult || !shift || !hi || !lo || mult->empty() ||
        mult->size() != shift->size()) {
      return NotMapped{"requantization arguments are missing"};
    }
    if (*foff != 0) return NotMapped{"asymmetric weights (filter offset != 0)"};
    if (!IsByteOffset(*ioff) || !IsByteOffset(*ooff)) return NotMapped{kOffsetRange};
    if (in.dtype != DType::kInt8 || w.dtype != DType::kInt8) return NotMapped{"not int8"};
    if (auto e = ActivationFor(*lo, *hi, out, *ooff, &a.activation)) return e;
    // The operator requantizes with its first multiplier (per tensor).
    std::vector<double> eff = {RealFromMultiplier((*mult)[0], (*shift)[0])};
    ZeroPoint(TensorOf(c.args[0]), -*ioff);
    ZeroPoint(out, *ooff);
    WeightScales(wt, TensorOf(c.args[0]), out, eff);
    if (IsTensor(c, 3)) {
      // The MVE form folds bias and input offset into kernel_sum = bias + offset * row sum;
      // mica's FULLY_CONNECTED takes the bias itself.
      const TensorValue& ks = T(c, 3);
      if (ks.data.empty() || ks.dtype != DType::kInt32 || ks.data.size != 4 * size_t(rows)) {
        return NotMapped{"kernel_sum is not a constant int32 vector of the output channels"};
      }
      if (bias != kNoTensor) return NotMapped{"both bias and kernel_sum"};
      std::vector<uint8_t> bytes(4 * static_cast<size_t>(rows));
      const int8_t* wq = wdata->as<int8_t>();
      for (int32_t r = 0; r < rows; ++r) {
        int64_t sum = 0;
        for (int32_t k = 0; k < cols; ++k) sum += wq[static_cast<size_t>(r) * cols + k];
        const int64_t b = static_cast<int64_t>(ks.data.as<int32_t>()[r]) - *ioff * sum;
        if (b < INT32_MIN || b > INT32_MAX) return NotMapped{"derived bias overflows int32"};
        const int32_t b32 = static_cast<int32_t>(b);
        std::memcpy(bytes.data() + 4 * r, &b32, 4);
      }
      Tensor bt;
      bt.name = absl::StrCat("v", c.args[3], "_bias");
      bt.dtype = DType::kInt32;
      bt.shape = {rows};
      bt.data = g_.AddConstData(std::move(bytes));
      bias = AddTensor(std::move(bt));
    }
  } else if (in.dtype != DType::kFloat32) {
    return NotMapped{"a non-float portable linear"};
  }
  AddOp(OpKind::kFullyConnected, {TensorOf(c.args[0]), wt, bias}, {out}, a);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapPool(const Call& c, bool max, bool cortex_m, bool nhwc) {
  // aten avg: (input, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
  // aten max: (input, kernel, stride, padding, dilation, ceil_mode)
  // cortex_m avg: (input, kernel, stride, padding, ceil_mode, zero_point, multiplier, shift,
  //                scratch); max: (input, kernel, stride, padding, dilation, ceil_mode,
  //                input_zp, output_zp, act_min, act_max)
  if (auto e = NeedArgs(c, 5)) return e;
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const TensorValue& in = T(c, 0);
  // max_pool2d_with_indices writes (out, indices): the pooled values are the first out.
  int32_t outv = OutValue(c, p_);
  if (max && !cortex_m) {
    for (size_t k = 6; k < c.args.size(); ++k) {
      if (IsTensor(c, k)) {
        outv = c.args[k];
        break;
      }
    }
  }
  const TensorValue& o = p_.values[outv].tensor;
  if (in.sizes.size() != 4 || o.sizes.size() != 4) return NotMapped{"not a 2-D pool"};
  const auto kernel = Ints(c, 1), padding = Ints(c, 3);
  auto stride = Ints(c, 2);
  if (!kernel || kernel->size() != 2 || !padding || padding->size() != 2 || !stride) {
    return NotMapped{"kernel or padding is not a pair"};
  }
  if (stride->empty()) stride = kernel;
  if (stride->size() != 2) return NotMapped{"stride is not a pair"};
  if (max) {
    const auto dil = Ints(c, 4);
    if (dil && !dil->empty() && ((*dil)[0] != 1 || (*dil).back() != 1)) {
      return NotMapped{"dilated max pool"};
    }
  }
  if (!max && !cortex_m && c.args.size() > 7 && !IsNone(c, 6)) {
    return NotMapped{"divisor_override"};
  }
  const int hd = nhwc ? 1 : 2, wd = nhwc ? 2 : 3;
  const int64_t kh = (*kernel)[0], kw = (*kernel)[1], sh = (*stride)[0], sw = (*stride)[1];
  const int64_t ph = (*padding)[0], pw = (*padding)[1];
  if (kh < 1 || kw < 1 || sh < 1 || sw < 1 || kh > 65535 || kw > 65535 || sh > 65535 ||
      sw > 65535) {
    return NotMapped{"kernel or stride out of range"};
  }
  Padding pad = Padding::kValid;
  if (ph != 0 || pw != 0) {
    // SAME only when TFLite's rule pads exactly what PyTorch does (max pools ignore the
    // padding; TFLite's average excludes it, PyTorch's count_include_pad decides).
    const int32_t ih = in.sizes[hd], iw = in.sizes[wd], oh = o.sizes[hd], ow = o.sizes[wd];
    const int64_t th = std::max<int64_t>((oh - 1) * sh + kh - ih, 0);
    const int64_t tw = std::max<int64_t>((ow - 1) * sw + kw - iw, 0);
    const bool same = oh == (ih + sh - 1) / sh && ow == (iw + sw - 1) / sw && th / 2 == ph &&
                      tw / 2 == pw;
    if (!same) return NotMapped{"padding that is neither SAME nor VALID"};
    if (!max && !cortex_m) {
      const auto include = Int(c, 5);
      if (!include || *include) return NotMapped{"average pool counting the padding"};
    }
    pad = Padding::kSame;
  }
  Pool2DAttrs a;
  a.padding = pad;
  a.filter_h = static_cast<int32_t>(kh), a.filter_w = static_cast<int32_t>(kw);
  a.stride_h = static_cast<int32_t>(sh), a.stride_w = static_cast<int32_t>(sw);
  if (cortex_m && !max) {
    // (input, kernel, stride, padding, ceil_mode, zero_point, multiplier, shift, scratch)
    const auto zp = Int(c, 5);
    if (!zp) return NotMapped{"missing zero point"};
    ZeroPoint(TensorOf(c.args[0]), *zp);
  }
  if (cortex_m && max) {
    const auto izp = Int(c, 6), ozp = Int(c, 7), lo = Int(c, 8), hi = Int(c, 9);
    if (!izp || !ozp || !lo || !hi) return NotMapped{"missing zero points or clamp"};
    if (*izp != *ozp) return NotMapped{"max pool changing the zero point"};
    ZeroPoint(TensorOf(c.args[0]), *izp);
    if (*lo > -128 || *hi < 127) return NotMapped{"clamped max pool"};
  }
  if (in.dtype != o.dtype) return NotMapped{"pool changing the element type"};
  std::vector<std::pair<int32_t, int32_t>> fixups;
  const int32_t x = AsNhwc(c.args[0], nhwc);
  const int32_t out = OutNhwc(outv, nhwc, &fixups);
  if (IsQuantizedType(o.dtype)) {
    Tie(out, x, 1.0);
    Tie(TensorOf(outv), out, 1.0);
  }
  AddOp(max ? OpKind::kMaxPool2D : OpKind::kAveragePool2D, {x}, {out}, a);
  Finish(fixups, nhwc);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapQuantize(const Call& c, bool quantize) {
  // (input, scale, zero_point, quant_min, quant_max, dtype)
  if (auto e = NeedArgs(c, 7)) return e;
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const auto scale = Double(c, 1);
  const auto zp = Int(c, 2);
  if (!scale || !zp) return NotMapped{"scale or zero point is not a constant"};
  if (!(*scale > 0) || !std::isfinite(*scale)) return NotMapped{"scale is not positive"};
  const int32_t outv = OutValue(c, p_);
  const TensorValue &in = T(c, 0), &o = p_.values[outv].tensor;
  if (in.dim_order != o.dim_order || in.sizes != o.sizes) return NotMapped{"changes the layout"};
  const int32_t q = quantize ? TensorOf(outv) : TensorOf(c.args[0]);
  if (!IsQuantizedType(sg_->tensors[q].dtype)) return NotMapped{"not an int8/int16 tensor"};
  Anchor(q, *scale);
  ZeroPoint(q, *zp);
  AddOp(quantize ? OpKind::kQuantize : OpKind::kDequantize, {TensorOf(c.args[0])},
        {TensorOf(outv)});
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapCortexAdd(const Call& c) {
  // (self, self_zp, self_mult, self_shift, other, other_zp, other_mult, other_shift,
  //  out_zp, out_mult, out_shift, act_min, act_max)
  if (auto e = NeedArgs(c, 14)) return e;
  if (!IsTensor(c, 0) || !IsTensor(c, 4)) return NotMapped{"operands are not tensors"};
  int64_t a[13];
  for (int k = 1; k <= 12; ++k) {
    if (k == 4) continue;
    const auto v = Int(c, k);
    if (!v) return NotMapped{"a quantization argument is not an integer"};
    a[k] = *v;
  }
  const int32_t outv = OutValue(c, p_);
  const TensorValue &x = T(c, 0), &y = T(c, 4), &o = p_.values[outv].tensor;
  if (x.dim_order != o.dim_order || y.dim_order != o.dim_order) {
    return NotMapped{"operands in different memory orders"};
  }
  const int32_t out = TensorOf(outv);
  ElementwiseAttrs attrs;
  if (auto e = ActivationFor(a[11], a[12], out, a[8], &attrs.activation)) return e;
  // TFLite's ADD (which CMSIS-NN implements): with left shift 20, real multipliers
  // s1 / (2 max), s2 / (2 max) and 2 max / (2^20 s_out): s_i / s_out = r_i r_out 2^20.
  const double r1 = RealFromMultiplier(a[2], a[3]), r2 = RealFromMultiplier(a[6], a[7]);
  const double ro = RealFromMultiplier(a[9], a[10]);
  const int32_t t0 = TensorOf(c.args[0]), t1 = TensorOf(c.args[4]);
  // The operator takes the zero points themselves (it subtracts them).
  ZeroPoint(t0, a[1]);
  ZeroPoint(t1, a[5]);
  ZeroPoint(out, a[8]);
  Tie(t0, out, r1 * ro * 1048576.0, false);
  Tie(t1, out, r2 * ro * 1048576.0, false);
  derived_scales_ = true;
  AddOp(OpKind::kAdd, {t0, t1}, {out}, attrs);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapCortexMul(const Call& c) {
  // (self, self_zp, other, other_zp, out_zp, out_mult, out_shift)
  if (auto e = NeedArgs(c, 8)) return e;
  if (!IsTensor(c, 0) || !IsTensor(c, 2)) return NotMapped{"operands are not tensors"};
  const auto z0 = Int(c, 1), z1 = Int(c, 3), zo = Int(c, 4), m = Int(c, 5), s = Int(c, 6);
  if (!z0 || !z1 || !zo || !m || !s) return NotMapped{"a quantization argument is missing"};
  const int32_t outv = OutValue(c, p_);
  const TensorValue &x = T(c, 0), &y = T(c, 2), &o = p_.values[outv].tensor;
  if (x.dim_order != o.dim_order || y.dim_order != o.dim_order) {
    return NotMapped{"operands in different memory orders"};
  }
  const int32_t t0 = TensorOf(c.args[0]), t1 = TensorOf(c.args[2]), out = TensorOf(outv);
  ZeroPoint(t0, *z0);  // subtracted by the operator: zero points
  ZeroPoint(t1, *z1);
  ZeroPoint(out, *zo);
  Product(t0, t1, out, RealFromMultiplier(*m, *s));
  derived_scales_ = true;
  AddOp(OpKind::kMul, {t0, t1}, {out}, ElementwiseAttrs{});
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapSoftmax(const Call& c, bool cortex_m) {
  // aten: (input, dim, half_to_float); cortex_m: (input, dim, input_zp, output_zp,
  // input_multiplier, input_shift, diff_min)
  if (auto e = NeedArgs(c, cortex_m ? 8 : 3)) return e;
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const TensorValue& in = T(c, 0);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  auto dim = Int(c, 1);
  const int64_t rank = static_cast<int64_t>(in.sizes.size());
  if (!dim || rank == 0) return NotMapped{"no dimension"};
  if (*dim < 0) *dim += rank;
  if (*dim < 0 || *dim >= rank) return NotMapped{"dimension out of range"};
  if (in.dim_order != o.dim_order) return NotMapped{"changes the memory order"};
  if (PhysPos(in, static_cast<int32_t>(*dim)) != rank - 1) {
    return NotMapped{"softmax over a dimension that is not innermost in memory"};
  }
  const int32_t x = TensorOf(c.args[0]), out = TensorOf(outv);
  if (cortex_m) {
    const auto izp = Int(c, 2), ozp = Int(c, 3), m = Int(c, 4), s = Int(c, 5);
    if (!izp || !ozp || !m || !s) return NotMapped{"a quantization argument is missing"};
    if (*ozp != -128) return NotMapped{"output zero point other than -128"};
    // TFLite's int8 softmax: input multiplier = beta * s_in * 2^(31 - 5), beta 1; output
    // scale 1/256.
    ZeroPoint(x, *izp);
    ZeroPoint(out, *ozp);
    Anchor(x, RealFromMultiplier(*m, *s) / 67108864.0);
    Anchor(out, 1.0 / 256.0);
  } else if (in.dtype != DType::kFloat32) {
    return NotMapped{"a non-float portable softmax"};
  }
  AddOp(OpKind::kSoftmax, {x}, {out}, SoftmaxAttrs{});
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapPermute(const Call& c) {
  // permute_copy: (input, dims, out); t_copy: (input, out), the transpose of a matrix.
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const bool t_copy = IsTensor(c, 1);
  if (auto e = NeedArgs(c, t_copy ? 2 : 3)) return e;
  auto dims = t_copy ? std::optional<std::vector<int64_t>>{} : Ints(c, 1);
  if (t_copy) {
    if (T(c, 0).sizes.size() == 2) dims = std::vector<int64_t>{1, 0};
    else if (T(c, 0).sizes.size() < 2) dims = std::vector<int64_t>(T(c, 0).sizes.size(), 0);
  }
  const TensorValue& in = T(c, 0);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  const size_t rank = in.sizes.size();
  if (!dims || dims->size() != rank || o.sizes.size() != rank) return NotMapped{"bad dims"};
  std::vector<int32_t> d(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = (*dims)[i];
    if (x < 0) x += static_cast<int64_t>(rank);
    if (x < 0 || x >= static_cast<int64_t>(rank)) return NotMapped{"dimension out of range"};
    d[i] = static_cast<int32_t>(x);
  }
  // Output physical i = output logical o.dim_order[i] = input logical d[o.dim_order[i]].
  std::vector<int32_t> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = PhysPos(in, d[o.dim_order[i]]);
  const int32_t x = TensorOf(c.args[0]), out = TensorOf(outv);
  if (IsQuantizedType(o.dtype)) Tie(out, x, 1.0);
  Permute(x, perm, out);
  if (rank == 2 && d[0] == 1 && d[1] == 0 && !in.data.empty() &&
      sg_->ops.back().kind == OpKind::kTranspose) {
    transposed_[outv] = {c.args[0], static_cast<int32_t>(sg_->ops.size() - 1)};
  }
  return std::nullopt;
}

// A copy into another memory order (or the same one): TRANSPOSE (a no-op one when equal).
std::optional<NotMapped> Importer::MapClone(const Call& c) {
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const TensorValue& in = T(c, 0);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  if (in.dtype != o.dtype) return NotMapped{"changes the element type"};
  if (in.sizes != o.sizes) return NotMapped{"changes the sizes"};
  std::vector<int32_t> perm(o.sizes.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = PhysPos(in, o.dim_order[i]);
  const int32_t x = TensorOf(c.args[0]), out = TensorOf(outv);
  if (IsQuantizedType(o.dtype)) Tie(out, x, 1.0);
  Permute(x, perm, out);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapView(const Call& c) {
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const TensorValue& in = T(c, 0);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  if (in.dtype != o.dtype) return NotMapped{"changes the element type"};
  int32_t x = TensorOf(c.args[0]);
  // A view works on the logical (contiguous) element order: bring a non-contiguous input to it
  // first, and a non-contiguous output from it after.
  if (!in.Contiguous()) x = Transpose(x, [&] {
    std::vector<int32_t> perm(in.sizes.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = PhysPos(in, static_cast<int32_t>(i));
    return perm;
  }(), "_logical");
  const int32_t out = TensorOf(outv);
  ReshapeAttrs a;
  a.new_shape = o.sizes;
  int32_t target = out;
  if (!o.Contiguous()) target = NewLike(out, o.sizes, "_logical");
  const int32_t shape = Int32Const(sg_->tensors[out].name + "_shape", o.sizes);
  if (IsQuantizedType(o.dtype)) Tie(target, x, 1.0);
  AddOp(OpKind::kReshape, {x, shape}, {target}, a);
  if (target != out) {
    std::vector<int32_t> perm(o.sizes.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = o.dim_order[i];
    Tie(out, target, 1.0);
    Permute(target, perm, out);
  }
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapCat(const Call& c) {
  if (auto e = NeedArgs(c, 3)) return e;
  const Value& list = Arg(c, 0);
  if (list.kind != ValueKind::kTensorList || list.refs.empty()) return NotMapped{"no tensor list"};
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  auto dim = Int(c, 1);
  const int64_t rank = static_cast<int64_t>(o.sizes.size());
  if (!dim || rank == 0) return NotMapped{"no dimension"};
  if (*dim < 0) *dim += rank;
  if (*dim < 0 || *dim >= rank) return NotMapped{"dimension out of range"};
  std::vector<int32_t> inputs;
  const int32_t out = TensorOf(outv);
  for (int32_t r : list.refs) {
    if (p_.values[r].kind != ValueKind::kTensor) return NotMapped{"a list item is not a tensor"};
    const TensorValue& t = p_.values[r].tensor;
    if (t.dim_order != o.dim_order) return NotMapped{"operands in different memory orders"};
    inputs.push_back(TensorOf(r));
    if (IsQuantizedType(o.dtype)) Tie(inputs.back(), out, 1.0);
  }
  ConcatenationAttrs a;
  a.axis = PhysPos(o, static_cast<int32_t>(*dim));
  AddOp(OpKind::kConcatenation, inputs, {out}, a);
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapPad(const Call& c, bool cortex_m) {
  // aten: (input, pad (pairs from the last dim back), value); cortex_m: (input, pre_pad,
  // post_pad, pad_value) with one entry per dimension in logical order.
  if (auto e = NeedArgs(c, cortex_m ? 5 : 4)) return e;
  if (!IsTensor(c, 0)) return NotMapped{"input is not a tensor"};
  const TensorValue& in = T(c, 0);
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  const size_t rank = in.sizes.size();
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  double value = 0.0;
  if (cortex_m) {
    const auto pre = Ints(c, 1), post = Ints(c, 2);
    const auto v = Int(c, 3);
    if (!pre || !post || !v || pre->size() > rank || post->size() != pre->size()) {
      return NotMapped{"pads do not match the rank"};
    }
    // Right-aligned with the dimensions when shorter.
    const size_t off = rank - pre->size();
    for (size_t i = 0; i < pre->size(); ++i) before[off + i] = (*pre)[i], after[off + i] = (*post)[i];
    value = static_cast<double>(*v);
  } else {
    const auto pad = Ints(c, 1);
    if (!pad || pad->size() % 2 || pad->size() / 2 > rank) return NotMapped{"bad pads"};
    for (size_t i = 0; i < pad->size() / 2; ++i) {
      before[rank - 1 - i] = (*pad)[2 * i];
      after[rank - 1 - i] = (*pad)[2 * i + 1];
    }
    value = Double(c, 2).value_or(0.0);
  }
  std::vector<int32_t> pads;
  for (size_t i = 0; i < rank; ++i) {
    const int32_t l = in.dim_order[i];
    if (before[l] < 0 || after[l] < 0 || before[l] > 65535 || after[l] > 65535) {
      return NotMapped{"negative or huge padding"};
    }
    pads.push_back(static_cast<int32_t>(before[l]));
    pads.push_back(static_cast<int32_t>(after[l]));
  }
  if (in.dim_order != o.dim_order) return NotMapped{"changes the memory order"};
  const int32_t x = TensorOf(c.args[0]), out = TensorOf(outv);
  if (IsQuantizedType(o.dtype)) {
    // PAD fills with the zero point: the pad value must be it (an integer a quantized type
    // can hold; a hostile program's 1e19 is refused before it is made an integer).
    if (!std::isfinite(value) || value != std::floor(value) || value < -65536.0 ||
        value > 65535.0) {
      return NotMapped{"a quantized pad value that is not a zero point"};
    }
    Tie(out, x, 1.0);
    ZeroPoint(x, static_cast<int64_t>(value));
    ZeroPoint(out, static_cast<int64_t>(value));
  } else if (value != 0.0) {
    return NotMapped{"a float pad with a non-zero value"};
  }
  std::vector<int32_t> pshape = {static_cast<int32_t>(rank), 2};
  const int32_t pt = Int32Const(sg_->tensors[out].name + "_pads", pads);
  sg_->tensors[pt].shape = pshape;
  AddOp(OpKind::kPad, {x, pt}, {out});
  return std::nullopt;
}

std::optional<NotMapped> Importer::MapBmm(const Call& c, bool cortex_m) {
  // aten: (self, mat2); cortex_m: (lhs, lhs_zp, rhs_transposed, rhs_zp, out_zp, out_mult,
  // out_shift, scratch)
  if (auto e = NeedArgs(c, cortex_m ? 9 : 3)) return e;
  const size_t rhs = cortex_m ? 2 : 1;
  if (!IsTensor(c, 0) || !IsTensor(c, rhs)) return NotMapped{"operands are not tensors"};
  const TensorValue &a = T(c, 0), &b = T(c, rhs);
  const int32_t outv = OutValue(c, p_);
  if (!a.Contiguous() || !b.Contiguous()) return NotMapped{"non-contiguous operands"};
  const int32_t t0 = TensorOf(c.args[0]), t1 = TensorOf(c.args[rhs]), out = TensorOf(outv);
  BatchMatMulAttrs attrs;
  if (cortex_m) {
    const auto z0 = Int(c, 1), z1 = Int(c, 3), zo = Int(c, 4), m = Int(c, 5), s = Int(c, 6);
    if (!z0 || !z1 || !zo || !m || !s) return NotMapped{"a quantization argument is missing"};
    attrs.adj_y = true;
    if (!IsByteOffset(*z0) || !IsByteOffset(*z1)) return NotMapped{kOffsetRange};
    ZeroPoint(t0, -*z0);  // added by the operator: offsets
    ZeroPoint(t1, -*z1);
    ZeroPoint(out, *zo);
    Product(t0, t1, out, RealFromMultiplier(*m, *s));
    derived_scales_ = true;
  } else if (a.dtype != DType::kFloat32) {
    return NotMapped{"a non-float portable matrix product"};
  }
  AddOp(OpKind::kBatchMatMul, {t0, t1}, {out}, attrs);
  return std::nullopt;
}

// aten addmm: (bias, input, mat2, beta, alpha, out); mm: (input, mat2, out). ExecuTorch's default
// lowering of nn.Linear: mat2 is the transpose (permute_copy / t_copy) of the constant [out, in]
// weight, which FULLY_CONNECTED reads as it is. mm of anything else is a BATCH_MATMUL.
std::optional<NotMapped> Importer::MapMatmulLinear(const Call& c, bool addmm) {
  if (auto e = NeedArgs(c, addmm ? 6 : 3)) return e;
  const size_t lhs = addmm ? 1 : 0, rhs = addmm ? 2 : 1;
  if (!IsTensor(c, lhs) || !IsTensor(c, rhs)) return NotMapped{"operands are not tensors"};
  const auto it = transposed_.find(c.args[rhs]);
  if (it == transposed_.end()) {
    if (!addmm) return MapBmm(c, false);
    return NotMapped{"its weight operand is not the transpose of a constant matrix (mica maps "
                     "addmm as a linear layer only)"};
  }
  if (addmm) {
    const auto beta = Double(c, 3), alpha = Double(c, 4);
    if (!beta || !alpha || *beta != 1.0 || *alpha != 1.0) {
      return NotMapped{"beta or alpha is not 1"};
    }
  }
  const TensorValue& in = T(c, lhs);
  const TensorValue& w = p_.values[it->second.src].tensor;
  const int32_t outv = OutValue(c, p_);
  const TensorValue& o = p_.values[outv].tensor;
  if (in.dtype != DType::kFloat32 || w.dtype != DType::kFloat32 || o.dtype != DType::kFloat32) {
    return NotMapped{"a non-float portable linear"};
  }
  if (!in.Contiguous()) return NotMapped{"non-contiguous input"};
  if (in.sizes.size() != 2 || w.sizes.size() != 2 || in.sizes[1] != w.sizes[1] ||
      o.sizes.size() != 2 || o.sizes[0] != in.sizes[0] || o.sizes[1] != w.sizes[0]) {
    return NotMapped{"input, weight and output shapes do not match"};
  }
  const int32_t rows = w.sizes[0], cols = w.sizes[1];
  auto wdata = Reorder(it->second.src, {0, 1});
  if (!wdata) return NotMapped{"weight data does not match its shape"};
  int32_t bias = kNoTensor;
  if (addmm) {
    if (!IsTensor(c, 0)) return NotMapped{"bias is not a tensor"};
    const TensorValue& b = T(c, 0);
    int64_t n = 1;
    for (int32_t s : b.sizes) n *= s;
    if (b.data.empty() || b.dtype != DType::kFloat32 || b.sizes.empty() ||
        b.sizes.back() != rows || n != rows) {
      return NotMapped{"bias is not a constant float vector of the output features"};
    }
    std::vector<int32_t> order(b.sizes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    auto bdata = Reorder(c.args[0], order);
    if (!bdata) return NotMapped{"bias data does not match its shape"};
    bias = ConstTensor(c.args[0], *bdata, {rows}, "_bias");
  }
  const int32_t wt = ConstTensor(it->second.src, *wdata, {rows, cols}, "_w");
  FullyConnectedAttrs a;
  AddOp(OpKind::kFullyConnected, {TensorOf(c.args[lhs]), wt, bias}, {TensorOf(outv)}, a);
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Graph> ImportProgram(const Program& program, Graph graph) {
  return Importer(program, std::move(graph)).Import();
}

}  // namespace pte
}  // namespace mica
