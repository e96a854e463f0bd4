// Lowering of the IR graph to the NPU operations Vela would cost (doc 4.1, 10): activation
// fusion, reshape-like ops as aliases, SOFTMAX/MEAN/... decompositions, memory copies.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

int32_t Bits(DType t) {
  switch (t) {
    case DType::kInt16: return 16;
    case DType::kInt32: case DType::kFloat32: return 32;
    case DType::kInt64: return 64;
    default: return 8;
  }
}

Shape3 ToShape3(const std::vector<int32_t>& s) {
  Shape3 r;
  const size_t n = s.size();
  if (n == 0) return r;
  r.c = std::max(s[n - 1], 1);
  if (n >= 2) r.w = std::max(s[n - 2], 1);
  if (n >= 3) {
    int64_t h = 1;
    for (size_t i = 0; i + 2 < n; ++i) h *= std::max(s[i], 1);
    r.h = static_cast<int32_t>(std::min<int64_t>(h, 1 << 30));
  }
  return r;
}

// The view Vela 5.2 gives a shape-agnostic elementwise operation (its verbose schedules for
// single-operation models, U55/U65): a map of depth below 8 whose operands all have the
// map's shape is refactored from its element count N: the depth takes N's prime factors in
// ascending order until it reaches 16 (N = 2160 -> 16; 200 -> 40; 180 -> 36; 91 -> 91), and
// the rest R is split into W = the largest divisor of R not above its square root and H = R / W
// ([1, 540, 4] -> [15, 9, 16]; [1, 10, 10, 3] -> [5, 1, 60]; [1, 12, 9, 2] -> [3, 3, 24]). Deeper
// maps keep their shape.
Shape3 ElementwiseView(Shape3 s) {
  const int64_t n = s.elements();
  if (s.c >= 8 || n <= 1 || n > (1 << 30)) return s;
  int64_t rest = n, c = 1;
  for (int64_t p = 2; c < 16 && rest > 1;) {
    if (p * p > rest) {  // rest is prime
      c *= rest;
      rest = 1;
      break;
    }
    if (rest % p == 0) {
      c *= p;
      rest /= p;
    } else {
      ++p;
    }
  }
  int64_t w = 1;
  for (int64_t d = 1; d * d <= rest; ++d) {
    if (rest % d == 0) w = d;
  }
  return Shape3{static_cast<int32_t>(rest / w), static_cast<int32_t>(w), static_cast<int32_t>(c)};
}

Act ActOf(Activation a) {
  switch (a) {
    case Activation::kNone: return Act::kNone;
    case Activation::kRelu: case Activation::kRelu6: case Activation::kReluN1To1:
      return Act::kRelu;
    case Activation::kTanh: return Act::kLut;
    default: return Act::kOther;
  }
}

// Vela's decomposition of a transpose the hardware cannot run in one operation (4-D or more,
// or a permutation of three axes the core does not support): a selection sort of the axes,
// each swap of axes a < b done by 3-D transposes of the shape reshaped around them. A swap
// within a 3-D view is one transpose; in more axes, swapping the first two or the last two is
// one transpose of the view (first | second | rest) or (rest | second-last | last); otherwise
// axis a is first moved leftmost and/or axis b rightmost, the outermost axes swapped in the
// view (first | middle | last), and the moved axes moved back. Each step is one transpose of
// a 3-D view, returned as its IFM view and OFM view.
struct TransposeStep {
  Shape3 ifm, ofm;
};

int32_t Product(const std::vector<int64_t>& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to && i < s.size(); ++i) p *= std::max<int64_t>(s[i], 1);
  return static_cast<int32_t>(std::min<int64_t>(p, 1 << 30));
}

// The shape as three axes: the first n0 axes, the next n1, the rest.
Shape3 View3(const std::vector<int64_t>& s, size_t n0, size_t n1) {
  return Shape3{Product(s, 0, n0), Product(s, n0, n0 + n1), Product(s, n0 + n1, s.size())};
}

// One transpose swapping axes x < y of the 3-D view v.
TransposeStep Swap3(Shape3 v, int x, int y) {
  int32_t d[3] = {v.h, v.w, v.c};
  TransposeStep t{v, v};
  std::swap(d[x], d[y]);
  t.ofm = Shape3{d[0], d[1], d[2]};
  return t;
}

void SwapAxes(std::vector<int64_t>* shape, size_t a, size_t b, std::vector<TransposeStep>* out) {
  std::vector<int64_t>& s = *shape;
  const size_t n = s.size();
  if (n < 4) {
    std::vector<int64_t> p(3 - n, 1);  // leading axes of 1
    p.insert(p.end(), s.begin(), s.end());
    const Shape3 v{Product(p, 0, 1), Product(p, 1, 2), Product(p, 2, 3)};
    const int x = static_cast<int>(a + 3 - n), y = static_cast<int>(b + 3 - n);
    out->push_back(Swap3(v, x, y));
    std::swap(s[a], s[b]);
    return;
  }
  if (a == 0 && b == 1) {
    out->push_back(Swap3(View3(s, 1, 1), 0, 1));
    std::swap(s[a], s[b]);
    return;
  }
  if (a == n - 2 && b == n - 1) {
    out->push_back(Swap3(View3(s, n - 2, 1), 1, 2));
    std::swap(s[a], s[b]);
    return;
  }
  auto move = [&s](size_t from, size_t to) {
    const int64_t v = s[from];
    s.erase(s.begin() + static_cast<std::ptrdiff_t>(from));
    s.insert(s.begin() + static_cast<std::ptrdiff_t>(to), v);
  };
  if (a != 0) {
    out->push_back(Swap3(View3(s, a, 1), 0, 1));  // axis a leftmost
    move(a, 0);
    SwapAxes(shape, 0, b, out);
    out->push_back(Swap3(View3(s, 1, a), 0, 1));  // and back
    move(0, a);
    return;
  }
  if (b != n - 1) {
    out->push_back(Swap3(View3(s, b, 1), 1, 2));  // axis b rightmost
    move(b, n - 1);
    SwapAxes(shape, 0, n - 1, out);
    out->push_back(Swap3(View3(s, b, n - b - 1), 1, 2));  // and back
    move(n - 1, b);
    return;
  }
  out->push_back(Swap3(View3(s, 1, n - 2), 0, 2));
  std::swap(s[a], s[b]);
}

// The transposes Vela runs for permutation `perm` of `shape` (output axis i = input axis
// perm[i]).
std::vector<TransposeStep> DecomposeTranspose(std::vector<int64_t> shape,
                                              const std::vector<int32_t>& perm) {
  std::vector<TransposeStep> steps;
  const size_t n = perm.size();
  if (shape.size() != n) return steps;
  std::vector<size_t> order(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (perm[i] < 0 || static_cast<size_t>(perm[i]) >= n) return {};
    order[static_cast<size_t>(perm[i])] = i;
  }
  for (size_t axis = 0; axis < n; ++axis) {
    if (order[axis] == axis) continue;
    size_t i = axis + 1;
    while (i < n && order[i] != axis) ++i;
    if (i >= n) return {};  // not a permutation
    SwapAxes(&shape, axis, i, &steps);
    std::swap(order[axis], order[i]);
  }
  return steps;
}

// The op's attributes, or defaults when the variant holds another type.
template <typename T>
T AttrsOr(const Operator& o) {
  const T* p = std::get_if<T>(&o.attrs);
  return p ? *p : T{};
}

class Lowerer {
 public:
  Lowerer(const Graph& g, const EthosUConfig& cfg, const Arch& arch)
      : sg_(g.main()), cfg_(cfg), arch_(arch) {}

  absl::StatusOr<Lowered> Run();

 private:
  int32_t Fmap(int32_t tensor);
  int32_t Temp(Shape3 s, int32_t bits);
  FmRef Ref(int32_t tensor);
  FmRef TempRef(Shape3 s, int32_t bits);
  NpuOp Base(int32_t src, const std::string& name, HwOp hw);
  void Emit(NpuOp op) { lw_.ops.push_back(std::move(op)); }
  FmRef In(const Operator& o, size_t k) { return Ref(o.inputs[k]); }
  FmRef Out(const Operator& o) { return Ref(o.outputs[0]); }
  void SetWeights(const Operator& o, NpuOp* op, int32_t w_in, int32_t ofm_c) const;
  // Lowering by operator family; LowerOp dispatches on the operator kind.
  void LowerOp(int32_t i);
  void LowerConvolution(int32_t i);
  void LowerDepthMultiplier(int32_t i, const NpuOp& op);
  void LowerTransposeConvU85(int32_t i, const NpuOp& op);
  void LowerFullyConnected(int32_t i);
  void LowerMatMul(int32_t i);
  void LowerBinaryElementwise(int32_t i);
  void LowerSquaredDifference(int32_t i);
  void LowerPrelu(int32_t i);
  void LowerUnaryElementwise(int32_t i);
  void LowerActivation(int32_t i);
  void LowerPooling(int32_t i);
  void LowerReduce(int32_t i);
  bool TryLowerMeanAsDepthwise(int32_t i);
  // U85: whether a clipping activation (ReLU, ReLU6, ReLU_N1_1) cannot fuse into `op`, whose
  // IFM's integer range exceeds its OFM's (Vela 5.2's op groups: a clip after an op that
  // could truncate runs apart; a uint8 graph input read by an int8 convolution, its QUANTIZE
  // folded away).
  bool ClipStaysApart(const NpuOp& op) const;
  void LowerResize(int32_t i);
  // The constant kernel, scales and MACs of a bilinear resize phase for its OFM depth.
  static void SetResizeKernel(NpuOp* dw);
  void LowerArgMax(int32_t i);
  void LowerReshape(int32_t i);
  void LowerDataMovement(int32_t i);
  void LowerLstm(int32_t i);
  void Copy(int32_t src, const std::string& name, FmRef in, FmRef out);
  void Softmax(int32_t i);
  bool TryFuseActivation(int32_t i, Act act);
  bool TryFoldPad(int32_t i);
  bool TryPadInPlace(int32_t i);
  void CopyPadBorders(int32_t i, const std::vector<int64_t>& pad, int32_t ih, int32_t iw);
  // Whether a concatenation input is one an NPU operation produced for it alone (Vela's
  // producer writes it into the output's slice).
  bool TryWriteIntoSlice(int32_t in, int32_t out);
  // A SLICE / STRIDED_SLICE its consumers read in place (no operation).
  bool TrySliceInPlace(int32_t i);
  // Whether `r` is all of its stored map (not a window of a larger one, as a slice read in
  // place is).
  bool Whole(const FmRef& r) const;
  // Gives op `k` Vela's elementwise view of its maps (ElementwiseView) when its operands all
  // have the OFM's shape and are whole maps.
  void ViewElementwise(size_t k);
  // Undoes ViewElementwise for the producer of fmap `f` (its OFM is written into a slice of a
  // concatenation: Vela keeps the map's own shape).
  void UnviewProducer(int32_t f);

  const Subgraph& sg_;
  const EthosUConfig& cfg_;
  const Arch& arch_;
  Lowered lw_;
  std::vector<int32_t> consumers_;
  std::vector<bool> is_output_;
  // Feature maps a decomposed transpose reads or writes: stored NHWC (Vela's transposes work
  // on linear maps).
  std::vector<int32_t> transposed_;
  // Feature maps stored NHWC for a concatenation along depth at offsets that are not
  // multiples of 16 (the output and the maps its producers write into it in place).
  std::vector<int32_t> linear_;
  // Ops given the elementwise view (their index in lw_.ops).
  std::vector<size_t> viewed_;
};

int32_t Lowerer::Fmap(int32_t tensor) {
  int32_t& id = lw_.fmap_of_tensor[tensor];
  if (id >= 0) return id;
  const Tensor& t = sg_.tensors[tensor];
  FeatureMap f;
  f.tensor = tensor;
  f.shape = ToShape3(t.shape);
  f.bits = Bits(t.dtype);
  id = static_cast<int32_t>(lw_.fmaps.size());
  lw_.fmaps.push_back(f);
  return id;
}

int32_t Lowerer::Temp(Shape3 s, int32_t bits) {
  FeatureMap f;
  f.shape = s;
  f.bits = bits;
  lw_.fmaps.push_back(f);
  return static_cast<int32_t>(lw_.fmaps.size()) - 1;
}

FmRef Lowerer::Ref(int32_t tensor) {
  FmRef r;
  const Tensor& t = sg_.tensors[tensor];
  r.shape = ToShape3(t.shape);
  r.bits = Bits(t.dtype);
  if (t.is_constant()) {
    r.scalar = t.num_elements() == 1;
    r.id = -1;  // constant operand: read from the const area
    return r;
  }
  r.id = Fmap(tensor);
  return r;
}

FmRef Lowerer::TempRef(Shape3 s, int32_t bits) {
  FmRef r;
  r.shape = s;
  r.bits = bits;
  r.id = Temp(s, bits);
  return r;
}

NpuOp Lowerer::Base(int32_t src, const std::string& name, HwOp hw) {
  NpuOp op;
  op.src_op = src;
  op.name = name;
  op.hw = hw;
  return op;
}

void Lowerer::Copy(int32_t src, const std::string& name, FmRef in, FmRef out) {
  NpuOp op = Base(src, name, HwOp::kPooling);
  op.pool = PoolKind::kAvg;
  op.mem_copy = name.find("MemoryCopy") != std::string::npos;
  op.ifm = in;
  op.ofm = out;
  op.act = Act::kOther;  // a plain copy/rescale: no activation lookup
  Emit(op);
}

bool Lowerer::ClipStaysApart(const NpuOp& op) const {
  if (arch_.family != EthosUFamily::kU85 || op.ifm.id < 0 || op.ofm.id < 0) return false;
  auto range = [&](int32_t id, int64_t* lo, int64_t* hi) {
    const int32_t r = lw_.fmaps[id].alias_of >= 0 ? lw_.fmaps[id].alias_of : id;
    const int32_t t = lw_.fmaps[r].tensor;
    const DType d = t >= 0 ? sg_.tensors[t].dtype : DType::kInt8;
    const int32_t bits = t >= 0 ? 0 : lw_.fmaps[r].bits;
    if (d == DType::kUInt8) *lo = 0, *hi = 255;
    else if (d == DType::kInt16 || bits == 16) *lo = -32768, *hi = 32767;
    else if (d == DType::kInt32 || bits == 32) *lo = INT32_MIN, *hi = INT32_MAX;
    else *lo = -128, *hi = 127;
  };
  int64_t ilo = 0, ihi = 0, olo = 0, ohi = 0;
  range(op.ifm.id, &ilo, &ihi);
  range(op.ofm.id, &olo, &ohi);
  return ihi > ohi || ilo < olo;
}

bool Lowerer::TryFuseActivation(int32_t i, Act act) {
  // Fuse into the previous NPU op when it produced this op's input, the input has no other
  // consumer and is not a graph output (doc 4.1: max 2 ops per group).
  const Operator& o = sg_.ops[i];
  if (lw_.ops.empty() || o.inputs.empty() || o.inputs[0] == kNoTensor) return false;
  NpuOp& prev = lw_.ops.back();
  const int32_t in = o.inputs[0];
  if (lw_.fmap_of_tensor[in] < 0 || prev.ofm.id != lw_.fmap_of_tensor[in]) return false;
  if (consumers_[in] != 1 || is_output_[in]) return false;
  if (prev.act != Act::kNone || prev.hw == HwOp::kTranspose || prev.hw == HwOp::kMatMul) {
    return false;
  }
  if (act == Act::kRelu && ClipStaysApart(prev)) return false;
  if (sg_.tensors[in].dtype != sg_.tensors[o.outputs[0]].dtype && act != Act::kLut) return false;
  prev.act = act;
  if (act == Act::kLut) prev.needs_lut = true;
  const Shape3 view = prev.ofm.shape;  // the producer's view of its OFM (e.g. elementwise)
  prev.ofm = Ref(o.outputs[0]);
  if (view.elements() == prev.ofm.shape.elements()) prev.ofm.shape = view;
  lw_.ir_note[i] = absl::StrCat("fused into ", std::string(sg_.ops[prev.src_op].name()), " (op ",
                                prev.src_op, ")");
  return true;
}

// Reads a constant int32/int64 operand (PAD's paddings, MEAN's axes); empty when it is not one.
std::vector<int64_t> ConstInts(const Tensor& t) {
  std::vector<int64_t> out;
  if (!t.is_constant()) return out;
  const int64_t n = t.num_elements();
  const size_t width = t.dtype == DType::kInt64 ? 8 : t.dtype == DType::kInt32 ? 4 : 0;
  if (width == 0 || t.data.size < static_cast<size_t>(n) * width) return out;
  for (int64_t k = 0; k < n; ++k) {
    if (width == 4) {
      int32_t v;
      std::memcpy(&v, t.data.bytes() + k * 4, 4);
      out.push_back(v);
    } else {
      int64_t v;
      std::memcpy(&v, t.data.bytes() + k * 8, 8);
      out.push_back(v);
    }
  }
  return out;
}

// Vela replaces a PAD feeding a VALID convolution, depthwise convolution or average pool by
// the hardware padding of that operation when the padding fits in it (at most half the
// dilated kernel per side, and a leading pad that keeps the kernel's stride phase); the PAD
// then costs nothing and its output is never stored: the consumer reads the PAD's input.
bool Lowerer::TryFoldPad(int32_t i) {
  const Operator& o = sg_.ops[i];
  if (o.kind != OpKind::kPad || o.inputs.size() < 2 || o.outputs.empty()) return false;
  const int32_t in = o.inputs[0], out = o.outputs[0];
  if (in == kNoTensor || o.inputs[1] == kNoTensor || sg_.tensors[in].is_constant()) return false;
  if (consumers_[out] != 1 || is_output_[out]) return false;
  const Tensor& ti = sg_.tensors[in];
  const Tensor& to = sg_.tensors[out];
  // 4-D [N, H, W, C], or a 1-D convolution's 3-D [N, W, C] (padded along W only).
  const bool one_d = ti.shape.size() == 3;
  if (ti.dtype != to.dtype || ti.quant.scale != to.quant.scale ||
      ti.quant.zero_point != to.quant.zero_point || (ti.shape.size() != 4 && !one_d)) {
    return false;
  }
  const std::vector<int64_t> pad = ConstInts(sg_.tensors[o.inputs[1]]);
  int64_t top = 0, bottom = 0, left = 0, right = 0;
  if (one_d) {
    if (pad.size() != 6 || pad[0] != 0 || pad[1] != 0 || pad[4] != 0 || pad[5] != 0) return false;
    left = pad[2], right = pad[3];
  } else {
    if (pad.size() != 8 || pad[0] != 0 || pad[1] != 0 || pad[6] != 0 || pad[7] != 0) return false;
    top = pad[2], bottom = pad[3], left = pad[4], right = pad[5];
  }
  // The consumer: the next operator reading the PAD's output as its input 0, on the NPU; for a
  // 1-D PAD, through the RESHAPE / EXPAND_DIMS that makes the convolution's [N, 1, W, C] IFM.
  auto next_reader = [&](int32_t from, int32_t t) {
    int32_t c = -1;
    for (int32_t j = from + 1; j < static_cast<int32_t>(sg_.ops.size()) && c < 0; ++j) {
      for (size_t k = 0; k < sg_.ops[j].inputs.size(); ++k) {
        if (sg_.ops[j].inputs[k] == t) c = k == 0 ? j : -2;
      }
      if (c == -2) return -2;
    }
    return c;
  };
  int32_t c = next_reader(i, out);
  if (one_d && c >= 0) {
    const Operator& r = sg_.ops[c];
    if ((r.kind != OpKind::kReshape && r.kind != OpKind::kExpandDims) || r.outputs.empty() ||
        !lw_.cpu_reasons[c].empty()) {
      return false;
    }
    const int32_t t = r.outputs[0];
    const std::vector<int32_t>& s4 = sg_.tensors[t].shape;
    if (consumers_[t] != 1 || is_output_[t] || s4.size() != 4 || s4[0] != 1 || s4[1] != 1 ||
        s4[2] != to.shape[1] || s4[3] != to.shape[2]) {
      return false;
    }
    c = next_reader(c, t);
  }
  if (c < 0 || !lw_.cpu_reasons[c].empty()) return false;
  const Operator& co = sg_.ops[c];
  int32_t kh = 1, kw = 1, sh = 1, sw = 1;
  bool avgpool = false;
  if (const auto* a = std::get_if<Conv2DAttrs>(&co.attrs); a && co.kind == OpKind::kConv2D) {
    if (a->padding != Padding::kValid || co.inputs.size() < 2) return false;
    const Tensor& w = sg_.tensors[co.inputs[1]];
    if (w.shape.size() != 4) return false;
    kh = (w.shape[1] - 1) * a->dilation_h + 1, kw = (w.shape[2] - 1) * a->dilation_w + 1;
    sh = a->stride_h, sw = a->stride_w;
  } else if (const auto* d = std::get_if<DepthwiseConv2DAttrs>(&co.attrs);
             d && co.kind == OpKind::kDepthwiseConv2D) {
    if (d->padding != Padding::kValid || co.inputs.size() < 2) return false;
    const Tensor& w = sg_.tensors[co.inputs[1]];
    if (w.shape.size() != 4) return false;
    kh = (w.shape[1] - 1) * d->dilation_h + 1, kw = (w.shape[2] - 1) * d->dilation_w + 1;
    sh = d->stride_h, sw = d->stride_w;
  } else if (const auto* p = std::get_if<Pool2DAttrs>(&co.attrs);
             p && co.kind == OpKind::kAveragePool2D) {
    if (p->padding != Padding::kValid) return false;
    kh = p->filter_h, kw = p->filter_w, sh = p->stride_h, sw = p->stride_w;
    avgpool = true;
  } else {
    return false;
  }
  // A 1-D causal padding (all of the dilated kernel minus one on the leading side, as in a
  // TCN) is folded too: Vela's tables for such models have no PAD rows.
  const int64_t left_max = one_d ? kw - 1 : kw / 2;
  if (top > kh / 2 || bottom > kh / 2 || left > left_max || right > kw / 2) return false;
  auto leading_ok = [](int64_t lead, int32_t stride, int32_t k) {
    return lead == k / 2 || k / 2 <= stride || (stride > 0 && lead % stride == 0);
  };
  if (!leading_ok(top, sh, kh) || !leading_ok(left, sw, kw)) return false;
  if (avgpool) {
    for (auto [v, k] : {std::pair<int64_t, int32_t>{top, kh}, {bottom, kh}, {left, kw},
                        {right, kw}}) {
      if (v != 0 && v != k / 2) return false;
    }
  }
  lw_.fmaps[Fmap(out)].alias_of = Fmap(in);
  lw_.ir_note[i] = absl::StrCat("folded into ", std::string(co.name()), " (op ", c,
                                ") as hardware padding");
  return true;
}

// A PAD that cannot become hardware padding, whose input an NPU operation produces for it
// alone: Vela lets the producer write straight into the interior of the padded tensor and
// writes the borders with one memory copy each (top, bottom, left, right).
bool Lowerer::TryPadInPlace(int32_t i) {
  const Operator& o = sg_.ops[i];
  if ((o.kind != OpKind::kPad && o.kind != OpKind::kPadV2) || o.inputs.size() < 2 ||
      o.outputs.empty()) {
    return false;
  }
  const int32_t in = o.inputs[0], out = o.outputs[0];
  if (in == kNoTensor || o.inputs[1] == kNoTensor || sg_.tensors[in].is_constant()) return false;
  if (consumers_[in] != 1 || is_output_[in] ||
      std::find(sg_.inputs.begin(), sg_.inputs.end(), in) != sg_.inputs.end()) {
    return false;
  }
  const Tensor& ti = sg_.tensors[in];
  const Tensor& to = sg_.tensors[out];
  if (ti.dtype != to.dtype || ti.quant.scale != to.quant.scale ||
      ti.quant.zero_point != to.quant.zero_point || ti.shape.size() != 4) {
    return false;
  }
  const std::vector<int64_t> pad = ConstInts(sg_.tensors[o.inputs[1]]);
  if (pad.size() != 8 || pad[0] != 0 || pad[1] != 0 || pad[6] != 0 || pad[7] != 0) return false;
  // The producer: an NPU operation lowered before this one.
  int32_t producer = -1;
  for (int32_t j = 0; j < i; ++j) {
    for (int32_t t : sg_.ops[j].outputs) {
      if (t == in) producer = j;
    }
  }
  if (producer < 0 || !lw_.cpu_reasons[producer].empty()) return false;
  lw_.fmaps[Fmap(in)].alias_of = Fmap(out);
  CopyPadBorders(i, pad, ti.shape[1], ti.shape[2]);
  lw_.ir_note[i] = absl::StrCat("producer writes into the padded tensor; borders copied");
  return true;
}

// The borders of a spatial PAD's output (`pad` as its paddings tensor, IFM h x w), each copied
// from a constant of the pad value: top, bottom, left, right (Vela's tables: these copies read
// the border's size from the constants' memory).
void Lowerer::CopyPadBorders(int32_t i, const std::vector<int64_t>& pad, int32_t ih,
                             int32_t iw) {
  FmRef y = Out(sg_.ops[i]);
  const int32_t c = y.shape.c;
  const int32_t ow = iw + static_cast<int32_t>(pad[4] + pad[5]);
  auto border = [&](const char* side, int64_t h, int64_t w) {
    if (h <= 0 || w <= 0) return;
    FmRef part = y;
    part.shape = {static_cast<int32_t>(h), static_cast<int32_t>(w), c};
    FmRef fill;  // id -1: a constant operand
    fill.shape = part.shape;
    fill.bits = y.bits;
    Copy(i, absl::StrCat("Pad/MemoryCopy/", side), fill, part);
  };
  border("top", pad[2], ow);
  border("bottom", pad[3], ow);
  border("left", ih, pad[4]);
  border("right", ih, pad[5]);
}

bool Lowerer::TryWriteIntoSlice(int32_t in, int32_t out) {
  const Tensor& t = sg_.tensors[in];
  if (t.is_constant() || consumers_[in] != 1 || is_output_[in] || is_output_[out] ||
      std::find(sg_.inputs.begin(), sg_.inputs.end(), in) != sg_.inputs.end()) {
    return false;
  }
  const Tensor& to = sg_.tensors[out];
  if (t.dtype != to.dtype || t.quant.scale != to.quant.scale ||
      t.quant.zero_point != to.quant.zero_point) {
    return false;  // the slice needs a rescale: a copy
  }
  const int32_t f = lw_.fmap_of_tensor[in];
  if (f < 0 || lw_.fmaps[f].alias_of >= 0 || lw_.ops.empty()) return false;
  bool produced = false;
  for (const NpuOp& op : lw_.ops) produced |= op.ofm.id == f;
  if (!produced) return false;
  return true;
}

bool Lowerer::Whole(const FmRef& r) const {
  if (r.id < 0) return true;
  const FeatureMap& f = lw_.fmaps[r.id];
  const FeatureMap& root = f.alias_of >= 0 ? lw_.fmaps[f.alias_of] : f;
  return root.shape.elements() == r.shape.elements() &&
         f.shape.elements() == r.shape.elements();
}

void Lowerer::ViewElementwise(size_t k) {
  NpuOp& op = lw_.ops[k];
  if (op.ofm.shape != op.ifm.shape || !Whole(op.ifm) || !Whole(op.ofm)) return;
  if (op.has_ifm2 && !op.ifm2.scalar && (op.ifm2.shape != op.ifm.shape || !Whole(op.ifm2))) {
    return;
  }
  const Shape3 v = ElementwiseView(op.ofm.shape);
  if (v == op.ofm.shape) return;
  op.ifm.shape = op.ofm.shape = v;
  if (op.has_ifm2 && !op.ifm2.scalar) op.ifm2.shape = v;
  viewed_.push_back(k);
}

void Lowerer::UnviewProducer(int32_t f) {
  for (size_t k : viewed_) {
    NpuOp& op = lw_.ops[k];
    if (op.ofm.id != f) continue;
    op.ofm.shape = lw_.fmaps[f].shape;
    op.ifm.shape = op.ofm.shape;
    if (op.has_ifm2 && !op.ifm2.scalar) op.ifm2.shape = op.ofm.shape;
  }
}

// Vela 5.2 runs no operation for a SLICE or a unit-stride STRIDED_SLICE of a feature map read
// by NPU operations only: each consumer reads its window of the input (its command streams
// show the consumer's IFM area at the slice's offset, e.g. a FULLY_CONNECTED reading the last
// row of a [1, 64, 32] map; its tables have no row for the slice).
bool Lowerer::TrySliceInPlace(int32_t i) {
  const Operator& o = sg_.ops[i];
  if (o.inputs.empty() || o.outputs.size() != 1 || o.inputs[0] == kNoTensor) return false;
  const int32_t in = o.inputs[0], out = o.outputs[0];
  if (sg_.tensors[in].is_constant() || is_output_[out] || consumers_[out] < 1) return false;
  const Tensor& ti = sg_.tensors[in];
  const Tensor& to = sg_.tensors[out];
  if (ti.dtype != to.dtype || ti.quant.scale != to.quant.scale ||
      ti.quant.zero_point != to.quant.zero_point) {
    return false;
  }
  if (o.kind == OpKind::kStridedSlice) {
    const StridedSliceAttrs a = AttrsOr<StridedSliceAttrs>(o);
    if (a.ellipsis_mask != 0 || a.new_axis_mask != 0 || o.inputs.size() < 4 ||
        o.inputs[3] == kNoTensor) {
      return false;
    }
    const std::vector<int64_t> strides = ConstInts(sg_.tensors[o.inputs[3]]);
    if (strides.empty()) return false;
    for (int64_t v : strides) {
      if (v != 1) return false;
    }
  }
  for (int32_t j = 0; j < static_cast<int32_t>(sg_.ops.size()); ++j) {
    if (j == i) continue;
    for (int32_t t : sg_.ops[j].inputs) {
      if (t == out && !lw_.cpu_reasons[j].empty()) return false;
    }
  }
  lw_.fmaps[Fmap(out)].alias_of = Fmap(in);
  lw_.ir_note[i] = "no-op (slice: consumers read their window in place)";
  return true;
}

void Lowerer::Softmax(int32_t i) {
  // SOFTMAX as Vela 5.2 lowers it (its high-level command streams and per-layer tables). The
  // map is viewed as S = [N x H, W, C]; R = [N x H, W, 1] is the reduced map. 8-bit:
  //   max over depth (a depthwise max pool; U85: a transpose putting C in height when the
  //   transposed depth, W (or N x H when W is 1), is at least 16, then a max pool over it),
  //   x - max with the exp LUT (32-bit result), >> 12, the sum over depth, CLZ of the sum,
  //   right_shift = 35 - clz (the final shift) and headroom = clz - 1, the sum << headroom,
  //   the reciprocal by Newton-Raphson (a MUL and an ADD of constants, then three rounds of
  //   MUL, SUB from a constant, MUL, MUL by 4, ADD), exp x reciprocal and the final >> shift;
  //   U55/U65 add a full-shape zero constant (read from the constants' memory) to the
  //   product before that shift.
  // 16-bit: depthwise max pool, x - max, MUL by beta, ADD of 32767 with the exp LUT (16-bit),
  //   the sum, CLZ, 31 - clz, 1 << that, sum - it, << clz, >> 15, - 32768 with the 1/(1+x)
  //   LUT, exp x reciprocal (32-bit), on U55/U65 the zero constant added, and the final
  //   >> (31 - clz).
  // Operations whose operands are full maps and scalars work on Vela's elementwise views
  // (ElementwiseView); those broadcasting the reduced map over depth work on S. A map written
  // in one view and read in another is stored NHWC (Vela's schedules: the exps, their sum and
  // the reciprocal and shift read back over S are format NHWC).
  const Operator& o = sg_.ops[i];
  FmRef in = Ref(o.inputs[0]);
  FmRef out = Ref(o.outputs[0]);
  const Shape3 s = in.shape;
  const Shape3 r{s.h, s.w, 1};
  const Shape3 sf = ElementwiseView(s);
  const Shape3 rf = ElementwiseView(r);
  const auto linear_if = [&](const FmRef& f, Shape3 a, Shape3 b) {
    if (f.id >= 0 && (a.w != b.w || a.c != b.c)) transposed_.push_back(f.id);
  };
  const std::string base = "Softmax/";
  const bool u85 = arch_.family == EthosUFamily::kU85;
  const bool i16 = in.bits == 16;
  // The transposed depth (Vela's 3-D view [N x H, W, C] transposed to [C, N x H, W], or to
  // [C, 1, N x H] when W is 1).
  const int32_t tdepth = s.w > 1 ? s.w : s.h;
  if (u85 && !i16 && s.c != s.elements() && tdepth >= 16) {
    NpuOp t = Base(i, base + "Transpose", HwOp::kTranspose);
    t.ifm = in;
    if (in.id >= 0) transposed_.push_back(in.id);  // read by a transpose: a linear map
    const Shape3 tin = s.w > 1 ? s : Shape3{s.h, 1, s.c};
    const Shape3 tout = s.w > 1 ? Shape3{s.c, s.h, s.w} : Shape3{s.c, 1, s.h};
    t.ifm.shape = tin;
    t.ofm = TempRef(tout, in.bits);
    Emit(t);
    NpuOp mp = Base(i, base + "MaxPool", HwOp::kPooling);
    mp.pool = PoolKind::kMax;
    mp.ifm = lw_.ops.back().ofm;
    mp.kh = s.c, mp.kw = 1;
    mp.ofm = TempRef({1, tout.w, tout.c}, in.bits);
    mp.macs = s.elements();
    Emit(mp);
  } else {
    NpuOp mp = Base(i, base + "MaxPool", HwOp::kPooling);
    mp.pool = PoolKind::kMax;
    mp.ifm = in;
    mp.ifm.shape = {static_cast<int32_t>(std::min<int64_t>(int64_t{s.h} * s.w, 1 << 30)), s.c,
                    1};
    mp.kh = 1, mp.kw = s.c;
    linear_if(in, s, mp.ifm.shape);  // depth read as width
    mp.ofm = TempRef({mp.ifm.shape.h, 1, 1}, in.bits);
    mp.macs = s.elements();
    Emit(mp);
  }
  FmRef mx = lw_.ops.back().ofm;
  linear_if(mx, mx.shape, r);
  mx.shape = r;
  auto ew = [&](const std::string& n, EwKind k, FmRef a, FmRef b, bool has_b, Shape3 os,
                int32_t bits) {
    NpuOp e = Base(i, base + n, HwOp::kElementwise);
    e.ew = k;
    e.ifm = a;
    e.ifm2 = b;
    e.has_ifm2 = has_b;
    e.unary = !has_b;
    // Computed on the view, stored in the map's own shape (Vela allocates the tensor as it
    // is: in NHCWB16 a reduced map's 32-bit temporaries take 16 bytes of depth per element,
    // 16 x their size, which a limited cache cannot hold; --verbose-allocation of a 64x64x4
    // softmax probe).
    e.ofm = TempRef(os == rf ? r : os == sf ? s : os, bits);
    e.ofm.shape = os;
    // U85: the previous op's output read in another view than it was written cannot stream
    // through a chaining buffer (Vela 5.2 runs the 16-bit softmax's x - max and its MUL by
    // beta, read as the elementwise view, as separate operations); an operand read from
    // memory may be in any view (its sum - (1 << shift) chains into the SHL before it).
    if (!lw_.ops.empty()) {
      const FmRef& prev = lw_.ops.back().ofm;
      for (const FmRef* f : {&a, &b}) {
        if (f->id < 0 || f->id != prev.id || (f == &b && !has_b)) continue;
        e.no_chain |= prev.shape != f->shape;
      }
    }
    Emit(e);
    return lw_.ops.back().ofm;
  };
  // `f` (written as `written`) read as `view`.
  const auto as = [&](FmRef f, Shape3 written, Shape3 view) {
    linear_if(f, written, view);
    f.shape = view;
    return f;
  };
  FmRef scalar;
  scalar.scalar = true;
  scalar.bits = 32;
  const auto reduce_sum = [&](FmRef x, Shape3 written) {
    NpuOp rs = Base(i, base + "ReduceSum", HwOp::kReduceSum);
    rs.ifm = as(x, written, s);  // ReduceSum sums over depth with a 1x1 kernel
    rs.ofm = TempRef(r, 32);
    rs.macs = s.elements();
    Emit(rs);
    return lw_.ops.back().ofm;
  };
  // U55/U65: the product gets the zero constant added before the final shift.
  const auto add_zero = [&](FmRef p) {
    if (u85) return p;
    FmRef zero;  // id -1: a constant, the IFM
    zero.shape = sf;
    zero.bits = 32;
    p = ew("Add", EwKind::kAdd, zero, as(p, s, sf), true, sf, 32);
    return as(p, sf, s);
  };
  // The final shift of the scaled exponentials by the reciprocal's shift, into the output.
  const auto shift_out = [&](FmRef p, FmRef shift) {
    NpuOp fin = Base(i, base + "Asr", HwOp::kElementwise);
    fin.ew = EwKind::kShift;
    fin.ifm = p;
    fin.ifm2 = shift;
    fin.has_ifm2 = true;
    fin.ofm = out;
    Emit(fin);
  };
  if (i16) {
    FmRef d = ew("Sub", EwKind::kSub, in, mx, true, s, 32);
    d = ew("Mul", EwKind::kMul, as(d, s, sf), scalar, true, sf, 32);
    const FmRef exps = ew("Add", EwKind::kAdd, d, scalar, true, sf, 16);
    lw_.ops.back().act = Act::kLut;
    lw_.ops.back().needs_lut = true;
    const FmRef sum = reduce_sum(exps, sf);
    const FmRef clz = ew("CLZ", EwKind::kClz, as(sum, r, rf), scalar, false, rf, 32);
    const FmRef rshift = ew("Sub", EwKind::kSub, scalar, clz, true, rf, 32);
    const FmRef one = ew("SHL", EwKind::kShift, scalar, rshift, true, rf, 32);
    FmRef v = ew("Sub", EwKind::kSub, as(sum, r, rf), one, true, rf, 32);
    v = ew("SHL", EwKind::kShift, v, clz, true, rf, 32);
    v = ew("Asr", EwKind::kShift, v, scalar, true, rf, 32);
    v = ew("Sub", EwKind::kSub, v, scalar, true, rf, 16);
    lw_.ops.back().act = Act::kLut;
    lw_.ops.back().needs_lut = true;
    const FmRef p =
        add_zero(ew("Mul", EwKind::kMul, as(exps, sf, s), as(v, rf, r), true, s, 32));
    shift_out(p, as(rshift, rf, r));
    return;
  }
  const FmRef exps = ew("Sub", EwKind::kSub, in, mx, true, s, 32);
  lw_.ops.back().act = Act::kLut;
  lw_.ops.back().needs_lut = true;
  const FmRef rexp = ew("Asr", EwKind::kShift, as(exps, s, sf), scalar, true, sf, 32);
  const FmRef sum = reduce_sum(rexp, sf);
  const FmRef clz = ew("CLZ", EwKind::kClz, as(sum, r, rf), scalar, false, rf, 32);
  const FmRef rshift = ew("Sub", EwKind::kSub, scalar, clz, true, rf, 32);
  const FmRef headroom = ew("Sub", EwKind::kSub, clz, scalar, true, rf, 32);
  const FmRef half = ew("SHL", EwKind::kShift, as(sum, r, rf), headroom, true, rf, 32);
  FmRef v = ew("Mul", EwKind::kMul, half, scalar, true, rf, 32);
  v = ew("Add", EwKind::kAdd, v, scalar, true, rf, 32);
  for (int it = 0; it < 3; ++it) {
    FmRef t = ew("Mul", EwKind::kMul, v, half, true, rf, 32);
    t = ew("Sub", EwKind::kSub, scalar, t, true, rf, 32);
    t = ew("Mul", EwKind::kMul, v, t, true, rf, 32);
    t = ew("Mul", EwKind::kMul, t, scalar, true, rf, 32);
    v = ew("Add", EwKind::kAdd, v, t, true, rf, 32);
  }
  const FmRef p = add_zero(ew("Mul", EwKind::kMul, exps, as(v, rf, r), true, s, 32));
  shift_out(p, as(rshift, rf, r));
}

void Lowerer::SetWeights(const Operator& o, NpuOp* op, int32_t w_in, int32_t ofm_c) const {
  if (w_in < static_cast<int32_t>(o.inputs.size()) && o.inputs[w_in] != kNoTensor) {
    op->weight_tensor = o.inputs[w_in];
    op->weight_bytes = static_cast<int64_t>(sg_.tensors[o.inputs[w_in]].num_bytes());
  }
  op->scale_bytes = 10 * int64_t{ofm_c};
}

// CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV: one kernel pass over the IFM (upscaled by the
// stride for a transpose convolution), weights [O, H, W, I] or [1, H, W, C].
void Lowerer::LowerConvolution(int32_t i) {
  const Operator& o = sg_.ops[i];
  const Tensor& w = sg_.tensors[o.inputs[1]];
  NpuOp op;
  Activation act = Activation::kNone;
  if (o.kind == OpKind::kTransposeConv) {
    const TransposeConvAttrs a = AttrsOr<TransposeConvAttrs>(o);
    op = Base(i, "TransposeConv2D", HwOp::kConvolution);
    op.ifm = In(o, 2);
    op.upscale = std::max(a.stride_h, 1);
    act = a.activation;
  } else if (o.kind == OpKind::kDepthwiseConv2D) {
    const DepthwiseConv2DAttrs a = AttrsOr<DepthwiseConv2DAttrs>(o);
    op = Base(i, "DepthwiseConv2D", HwOp::kDepthwise);
    op.ifm = In(o, 0);
    op.sh = a.stride_h, op.sw = a.stride_w, op.dh = a.dilation_h, op.dw = a.dilation_w;
    act = a.activation;
  } else {
    const Conv2DAttrs a = AttrsOr<Conv2DAttrs>(o);
    op = Base(i, "Conv2D", HwOp::kConvolution);
    op.ifm = In(o, 0);
    op.sh = a.stride_h, op.sw = a.stride_w, op.dh = a.dilation_h, op.dw = a.dilation_w;
    act = a.activation;
  }
  op.ofm = Out(o);
  op.kh = w.shape.size() == 4 ? w.shape[1] : 1;
  op.kw = w.shape.size() == 4 ? w.shape[2] : 1;
  op.act = ActOf(act);
  // A CONV_2D with one IFM channel per group and one output channel per group (Keras
  // Conv2D(groups=C), ConvNeXt's 7x7) is a depthwise convolution to Vela 5.2: its tables name
  // the operation DepthwiseConv2D. Its kernels stay [C, H, W, 1] (the encoder reads them so).
  if (o.kind == OpKind::kConv2D && w.shape.size() == 4 && w.shape[3] == 1 &&
      op.ifm.shape.c > 1 && op.ofm.shape.c == op.ifm.shape.c && w.shape[0] == op.ofm.shape.c) {
    op.hw = HwOp::kDepthwise;
    op.name = "DepthwiseConv2D";
  }
  // A dilation above 2 (the hardware's limit) is done by Vela with a bigger kernel holding
  // zeros between the taps (FixupDilationGT2): an even dilation d keeps hardware dilation 2
  // and spreads the taps d / 2 apart, an odd one spreads them d apart with no hardware
  // dilation. The kernel's extent is unchanged; its MACs grow (Vela's tables: a 3-tap 1-D
  // convolution with dilation 4 counts 5/3 the MACs of dilation 1 or 2, dilation 8 three
  // times).
  // Only kernels within Vela's limits are spread (dilated extent: height <= 64, area <= 4096);
  // a bigger one never reaches its NPU.
  const int64_t ext_h = int64_t{std::max(op.kh, 1) - 1} * std::max(op.dh, 1) + 1;
  const int64_t ext_w = int64_t{std::max(op.kw, 1) - 1} * std::max(op.dw, 1) + 1;
  if (o.kind != OpKind::kTransposeConv && (op.dh > 2 || op.dw > 2) && ext_h <= 64 &&
      ext_h * ext_w <= 4096) {
    auto spread = [](int32_t* k, int32_t* d) {
      const int32_t hw = *d % 2 == 0 ? 2 : 1;
      const int32_t manual = std::max(*d / hw, 1);
      *k = (std::max(*k, 1) - 1) * manual + 1;
      *d = hw;
    };
    spread(&op.kh, &op.dh);
    spread(&op.kw, &op.dw);
  }
  // A CONV_2D with a stride above 3 (the hardware's limit): Vela 5.2 runs one stride-1
  // convolution per OFM element, each over its own kernel-sized window of the IFM and streaming
  // the whole kernel set again (probes: stride 4 or 5, kernel 3…8, U55 and U85: OFM H x W
  // operations with 1x1 OFMs; ConvNeXt's 4x4 stride-4 stem is 256 of them).
  // (Past kMaxStrideSplitOps elements, a huge or hostile OFM, the last operation is costed
  // for the remaining elements: every one costs the same.)
  constexpr int64_t kMaxStrideSplitOps = 16384;
  const int64_t split_ops = int64_t{std::max(op.ofm.shape.h, 1)} * std::max(op.ofm.shape.w, 1);
  if (o.kind == OpKind::kConv2D && op.hw == HwOp::kConvolution && (op.sh > 3 || op.sw > 3)) {
    if (split_ops > kMaxStrideSplitOps) {
      lw_.ir_caveat[i] =
          absl::StrCat("stride above 3 over ", split_ops, " output elements: the last of ",
                       kMaxStrideSplitOps, " per-element convolutions is costed ",
                       split_ops - kMaxStrideSplitOps + 1, " times");
    }
    const int32_t win_h = std::min((std::max(op.kh, 1) - 1) * std::max(op.dh, 1) + 1,
                                   std::max(op.ifm.shape.h, 1));
    const int32_t win_w = std::min((std::max(op.kw, 1) - 1) * std::max(op.dw, 1) + 1,
                                   std::max(op.ifm.shape.w, 1));
    const int32_t cin = op.ifm.shape.c;
    const int64_t emitted = std::min(split_ops, kMaxStrideSplitOps);
    for (int64_t px = 0; px < emitted; ++px) {
      NpuOp part = op;
      part.name = "Conv2D/StrideSplit";
      part.sh = part.sw = 1;
      part.ifm.shape = {win_h, win_w, cin};
      part.ofm.shape = {1, 1, op.ofm.shape.c};
      SetWeights(o, &part, 1, op.ofm.shape.c);
      part.macs = int64_t{op.kh} * op.kw * cin * op.ofm.shape.c;
      if (px + 1 == emitted) part.repeat = split_ops - emitted + 1;
      Emit(part);
    }
    return;
  }
  // DEPTHWISE_CONV_2D with depth multiplier M > 1 (Vela 5.2's tables and its high-level
  // command stream): M depthwise convolutions, the m-th applying multiplier m's kernels to the
  // whole IFM and writing batch m of an [M, H, W, C] map, then a TRANSPOSE to the OFM's
  // [H, W, C, M] order, decomposed as Vela decomposes it (DecomposeTranspose) into 3-D
  // transposes of NHWC maps; a fused activation runs in the last transpose.
  if (o.kind == OpKind::kDepthwiseConv2D && op.ifm.shape.c > 1 &&
      op.ofm.shape.c > op.ifm.shape.c && op.ofm.shape.c % op.ifm.shape.c == 0) {
    LowerDepthMultiplier(i, op);
    return;
  }
  // Grouped CONV_2D (IFM depth a multiple > 1 of the kernel's): Vela runs one convolution per
  // group, each reading its slice of the IFM and writing its slice of the OFM, and applies a
  // fused activation afterwards in one pass over the whole OFM. The channel slices are read
  // from and written to NHWC maps (Vela 5.2's command streams, U65 and U85: the IFM and the
  // groups' output are format NHWC, the activation pass writes NHCWB16).
  const int32_t kin = w.shape.size() == 4 ? w.shape[3] : 0;
  if (o.kind == OpKind::kConv2D && op.hw == HwOp::kConvolution && kin > 0 && op.ifm.shape.c > kin &&
      op.ifm.shape.c % kin == 0 && op.ofm.shape.c % (op.ifm.shape.c / kin) == 0) {
    const int32_t groups = op.ifm.shape.c / kin;
    const int32_t cout = op.ofm.shape.c / groups;
    FmRef dst = op.ofm;
    if (op.act != Act::kNone) dst = TempRef(op.ofm.shape, op.ofm.bits);
    transposed_.push_back(op.ifm.id);
    transposed_.push_back(dst.id);
    for (int32_t g = 0; g < groups; ++g) {
      NpuOp part = op;
      part.name = "Conv2D/Group";
      part.act = Act::kNone;
      part.ofm = dst;
      part.ifm.shape.c = kin;
      part.ofm.shape.c = cout;
      // Each group applies (and streams in) its own slice of the kernels.
      SetWeights(o, &part, 1, cout);
      part.weight_view = true;
      part.w_oc0 = g * cout;
      part.macs = int64_t{op.kh} * op.kw * kin * part.ofm.shape.elements();
      Emit(part);
    }
    if (op.act != Act::kNone) {
      Copy(i, "Conv2D/Activation", dst, op.ofm);
      lw_.ops.back().act = op.act;
    }
    return;
  }
  SetWeights(o, &op, 1, op.ofm.shape.c);
  const int64_t taps = int64_t{op.kh} * op.kw;
  if (op.hw == HwOp::kDepthwise) {
    op.macs = taps * op.ofm.shape.elements();
  } else if (o.kind == OpKind::kTransposeConv) {
    const TransposeConvAttrs a = AttrsOr<TransposeConvAttrs>(o);
    op.macs = taps * op.ifm.shape.c * op.ofm.shape.elements() /
              std::max<int64_t>(1, int64_t{a.stride_h} * a.stride_w);
  } else {
    op.macs = taps * op.ifm.shape.c * op.ofm.shape.elements();
  }
  if (o.kind == OpKind::kTransposeConv && arch_.family == EthosUFamily::kU85) {
    const TransposeConvAttrs a = AttrsOr<TransposeConvAttrs>(o);
    if ((a.stride_h == 2 || a.stride_w == 2) && a.stride_h >= 1 && a.stride_h <= 2 &&
        a.stride_w >= 1 && a.stride_w <= 2) {
      LowerTransposeConvU85(i, op);
      return;
    }
    // Other strides (not in the recorded Vela tables): one convolution over the upscaled IFM,
    // the fused activation in a pass of its own.
    if (op.act != Act::kNone) {
      const Act fused = op.act;
      op.act = Act::kNone;
      Emit(op);
      Copy(i, "TransposeConv2D/Activation", op.ofm, op.ofm);
      lw_.ops.back().act = fused;
      return;
    }
  }
  // A CONV_2D of fewer than 8 output channels does not apply its fused activation: Vela 5.2
  // runs the convolution into a temporary and the activation as an operation of its own (its
  // tables: a 16 x 16 x 4 or x 2 convolution with ReLU has a Relu row after the Conv2D row,
  // one of 8 or more channels none).
  // On U85 a clipping activation of a convolution whose IFM's range exceeds its OFM's runs
  // apart too (ClipStaysApart).
  if ((o.kind == OpKind::kConv2D && op.act != Act::kNone && op.ofm.shape.c < 8) ||
      ((o.kind == OpKind::kConv2D || o.kind == OpKind::kDepthwiseConv2D) &&
       op.act == Act::kRelu && ClipStaysApart(op))) {
    const Act fused = op.act;
    const FmRef dst = op.ofm;
    op.act = Act::kNone;
    op.ofm = TempRef(dst.shape, dst.bits);
    Emit(op);
    Copy(i, "Conv2D/Activation", op.ofm, dst);
    lw_.ops.back().act = fused;
    ViewElementwise(lw_.ops.size() - 1);
    // Read back in the activation's view, the convolution's result is stored NHWC.
    const Shape3 v = lw_.ops.back().ifm.shape;
    if (v.w != dst.shape.w || v.c != dst.shape.c) transposed_.push_back(op.ofm.id);
    return;
  }
  Emit(op);
}

// U85 (Vela 5.2's schedule and command stream): a TRANSPOSE_CONV with stride S_h x S_w of 2x2,
// 2x1 or 1x2 runs as S_h x S_w stride-1 convolutions over the whole IFM, one per output phase
// (py, px): the kernel taps of that phase only (the tensor's taps py + pad_top (mod S_h),
// stepping by S_h; likewise in width), writing every S-th OFM element from (py, px) on. Vela
// sizes and costs each of them as producing the OFM area from (py, px) to the end,
// (H - py) x (W - px), not the 1 / (S_h x S_w) it writes: its MAC counts and cycles are those
// of that area. A fused activation runs afterwards in a pass of its own over the
// OFM, reading the phases' map (its tables: a Relu row after the Conv2D rows).
void Lowerer::LowerTransposeConvU85(int32_t i, const NpuOp& op) {
  const Operator& o = sg_.ops[i];
  const TransposeConvAttrs a = AttrsOr<TransposeConvAttrs>(o);
  const int32_t sh = std::max(a.stride_h, 1), sw = std::max(a.stride_w, 1);
  const int32_t kh = std::max(op.kh, 1), kw = std::max(op.kw, 1);
  // TFLite's SAME padding of the upscaled IFM: the leading pad decides which taps meet which
  // output phase.
  auto pad_before = [&](int32_t in, int32_t out, int32_t s, int32_t k) -> int32_t {
    if (a.padding != Padding::kSame) return 0;
    const int64_t total = std::max<int64_t>(int64_t{in - 1} * s + k - out, 0);
    return static_cast<int32_t>(std::min<int64_t>(total / 2, k));
  };
  const int32_t pt = pad_before(op.ifm.shape.h, op.ofm.shape.h, sh, kh);
  const int32_t pl = pad_before(op.ifm.shape.w, op.ofm.shape.w, sw, kw);
  FmRef dst = op.ofm;
  if (op.act != Act::kNone) dst = TempRef(op.ofm.shape, op.ofm.bits);
  // Strided in width, the phases' writes need a linear map: NHWC. Strided in height only,
  // they write whole rows and the map stays NHCWB16 (Vela 5.2's command streams: 2x2 and
  // 2x1 transpose convolutions on U85-2048).
  if (sw > 1) transposed_.push_back(dst.id);
  for (int32_t py = 0; py < std::min(sh, op.ofm.shape.h); ++py) {
    const int32_t ry = (py + pt) % sh;
    const int32_t th = ry < kh ? static_cast<int32_t>((int64_t{kh} - ry + sh - 1) / sh) : 0;
    for (int32_t px = 0; px < std::min(sw, op.ofm.shape.w); ++px) {
      const int32_t rx = (px + pl) % sw;
      const int32_t tw = rx < kw ? static_cast<int32_t>((int64_t{kw} - rx + sw - 1) / sw) : 0;
      if (th == 0 || tw == 0) continue;  // no tap reaches this phase
      NpuOp part = op;
      part.name = "TransposeConv2D/Phase";
      part.upscale = 1;
      part.sh = part.sw = 1;
      part.kh = th, part.kw = tw;
      part.act = Act::kNone;
      part.ofm = dst;
      part.ofm.shape = {op.ofm.shape.h - py, op.ofm.shape.w - px, op.ofm.shape.c};
      SetWeights(o, &part, 1, op.ofm.shape.c);
      part.weight_view = true;
      part.w_ty0 = ry, part.w_tx0 = rx, part.w_tsy = sh, part.w_tsx = sw;
      part.macs = int64_t{th} * tw * op.ifm.shape.c * part.ofm.shape.elements();
      Emit(part);
    }
  }
  if (op.act != Act::kNone) {
    Copy(i, "TransposeConv2D/Activation", dst, op.ofm);
    lw_.ops.back().act = op.act;
  }
}

void Lowerer::LowerDepthMultiplier(int32_t i, const NpuOp& op) {
  const Operator& o = sg_.ops[i];
  const Shape3 in = op.ifm.shape, out = op.ofm.shape;
  const int32_t c = in.c, m = out.c / in.c;
  const Shape3 part{out.h, out.w, c};
  // The M depthwise convolutions write the batches of one [M, H, W, C] map.
  const FmRef stacked = TempRef({m * out.h, out.w, c}, op.ofm.bits);
  for (int32_t k = 0; k < m; ++k) {
    NpuOp dw = op;
    dw.name = "DepthwiseConv2D/Multiplier";
    dw.act = Act::kNone;
    dw.ofm = stacked;
    dw.ofm.shape = part;
    // Every part applies the tensor's channels k, k + M, ... On U85 each part's weights and
    // scales are encoded on their own (Vela 5.2); on U55/U65 every part carries the whole
    // tensor (encoded once, with the scales of all M x C channels: the first part's scale
    // bytes are those stored).
    if (arch_.family == EthosUFamily::kU85) {
      SetWeights(o, &dw, 1, c);
      dw.weight_view = true;
      dw.w_oc0 = k;
      dw.w_ocs = m;
    } else {
      SetWeights(o, &dw, 1, k == 0 ? out.c : c);
    }
    dw.macs = int64_t{op.kh} * op.kw * part.elements();
    Emit(dw);
  }
  const std::vector<TransposeStep> steps =
      DecomposeTranspose({m, out.h, out.w, c}, {1, 2, 3, 0});
  FmRef src = stacked;
  for (size_t k = 0; k < steps.size(); ++k) {
    NpuOp t = Base(i, "DepthwiseConv2D/Transpose", HwOp::kTranspose);
    t.ifm = src;
    t.ifm.shape = steps[k].ifm;
    if (k + 1 == steps.size()) {
      t.ofm = op.ofm;
      t.act = op.act;
    } else {
      t.ofm = TempRef(steps[k].ofm, op.ofm.bits);
    }
    t.ofm.shape = steps[k].ofm;
    Emit(t);
    src = t.ofm;
  }
  for (const NpuOp& t : lw_.ops) {
    if (t.src_op == i && t.hw == HwOp::kTranspose) {
      transposed_.push_back(t.ifm.id);
      transposed_.push_back(t.ofm.id);
    }
  }
}

void Lowerer::LowerFullyConnected(int32_t i) {
  const Operator& o = sg_.ops[i];
  const FullyConnectedAttrs a = AttrsOr<FullyConnectedAttrs>(o);
  const Tensor& w = sg_.tensors[o.inputs[1]];
  NpuOp op = Base(i, "FullyConnected", HwOp::kVectorProduct);
  op.ifm = In(o, 0);
  op.ofm = Out(o);
  const int32_t cin = w.shape.empty() ? 1 : w.shape.back();
  const int32_t cout = w.shape.empty() ? 1 : w.shape.front();
  const int64_t batch = std::max<int64_t>(1, sg_.tensors[o.inputs[0]].num_elements() /
                                                 std::max(cin, 1));
  // Vela 5.2 runs the rows of a batched FC as an H x W map: H the largest divisor of the row
  // count not above its square root nor 16 (probes: 12 rows -> 3x4, 200 -> 10x20, 576 -> 16x36,
  // 900 -> 15x60, 17 -> 1x17; the same on U55 and U85).
  int64_t rows_h = 1;
  for (int64_t h = std::min<int64_t>(16, static_cast<int64_t>(std::sqrt(double(batch)))); h > 1;
       --h) {
    if (batch % h == 0) {
      rows_h = h;
      break;
    }
  }
  op.ifm.shape = {static_cast<int32_t>(rows_h), static_cast<int32_t>(batch / rows_h), cin};
  op.ofm.shape = {static_cast<int32_t>(rows_h), static_cast<int32_t>(batch / rows_h), cout};
  op.act = ActOf(a.activation);
  SetWeights(o, &op, 1, cout);
  op.macs = int64_t{cin} * cout * batch;
  Emit(op);
}

// BATCH_MATMUL as Vela lowers it. The second operand is used transposed ([batch, N, K]); when
// the model gives it as [batch, K, N] (adj_y false) a TRANSPOSE comes first (Vela's tables: one
// TRANSPOSE row more per such BATCH_MATMUL). U85: one MatMul per batch (one row each). U55/U65
// have no matmul hardware: one compound op (per output column a MUL into an int32 scratch and
// a ReduceSum, costed together; doc 4.7).
void Lowerer::LowerMatMul(int32_t i) {
  const Operator& o = sg_.ops[i];
  const BatchMatMulAttrs at = AttrsOr<BatchMatMulAttrs>(o);
  FmRef a = In(o, 0), b = In(o, 1), y = Out(o);
  const int32_t batch = std::max(1, y.shape.h), m = std::max(1, y.shape.w),
                n = std::max(1, y.shape.c);
  const int32_t k = std::max(1, at.adj_x ? a.shape.w : a.shape.c);
  a.shape = {batch, m, k};
  if (!at.adj_y) {
    NpuOp t = Base(i, "MatMul/Transpose", HwOp::kTranspose);
    t.ifm = b;
    t.ifm.shape = {batch, k, n};
    t.ofm = TempRef({batch, n, k}, b.bits);
    Emit(t);
    b = lw_.ops.back().ofm;
  }
  b.shape = {batch, n, k};
  if (arch_.family == EthosUFamily::kU85) {
    for (int32_t g = 0; g < batch; ++g) {
      NpuOp op = Base(i, "MatMul", HwOp::kMatMul);
      op.ifm = a, op.ifm.shape = {1, m, k};
      op.ifm2 = b, op.ifm2.shape = {1, n, k};
      op.has_ifm2 = true;
      op.ofm = y, op.ofm.shape = {1, m, n};
      op.macs = int64_t{m} * n * k;
      Emit(op);
    }
    return;
  }
  NpuOp op = Base(i, "MatMul", HwOp::kMatMul);
  op.ifm = a;
  op.ifm2 = b;
  op.has_ifm2 = true;
  op.ofm = y;
  op.macs = int64_t{batch} * m * n * k;
  Emit(op);
}

// ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM.
void Lowerer::LowerBinaryElementwise(int32_t i) {
  const Operator& o = sg_.ops[i];
  NpuOp op = Base(i, std::string(o.name()), HwOp::kElementwise);
  op.ew = o.kind == OpKind::kAdd ? EwKind::kAdd
          : o.kind == OpKind::kSub ? EwKind::kSub
          : o.kind == OpKind::kMul ? EwKind::kMul
          : o.kind == OpKind::kDiv ? EwKind::kDiv : EwKind::kMinMax;
  op.ifm = In(o, 0);
  op.ifm2 = o.inputs.size() > 1 ? In(o, 1) : FmRef{};
  op.has_ifm2 = o.inputs.size() > 1;
  op.ofm = Out(o);
  if (const auto* a = std::get_if<ElementwiseAttrs>(&o.attrs)) op.act = ActOf(a->activation);
  // Broadcast: the bigger operand is the IFM.
  if (op.has_ifm2 && op.ifm2.shape.elements() > op.ifm.shape.elements()) {
    std::swap(op.ifm, op.ifm2);
  }
  // U55/U65 broadcast one operand only: when neither has the OFM's shape (a layer norm's
  // [1, 16, 1] x [64]), Vela first broadcasts the feature map by an ADD of a full-shape
  // constant read from the constants' memory ("..._broadcasted" in its tables: on U55-256
  // 0.75 cycles per element and the constant's bytes from flash).
  if (arch_.family != EthosUFamily::kU85 && op.has_ifm2 && !op.ifm2.scalar &&
      op.ifm.shape != op.ofm.shape && op.ifm2.shape != op.ofm.shape) {
    if (op.ifm.id < 0 && op.ifm2.id >= 0) std::swap(op.ifm, op.ifm2);
    NpuOp b = Base(i, absl::StrCat(std::string(o.name()), "/Add"), HwOp::kElementwise);
    b.ew = EwKind::kAdd;
    b.ifm = op.ifm;
    FmRef full;  // id -1: a constant
    full.shape = op.ofm.shape;
    full.bits = op.ofm.bits;
    b.ifm2 = full;
    b.has_ifm2 = true;
    b.ofm = TempRef(op.ofm.shape, op.ifm.bits);
    std::swap(b.ifm, b.ifm2);  // the full-shape operand is the IFM
    Emit(b);
    op.ifm = lw_.ops.back().ofm;
  }
  // Without broadcast, a shallow map is processed in Vela's elementwise view.
  Emit(op);
  ViewElementwise(lw_.ops.size() - 1);
}

// SQUARED_DIFFERENCE as Vela lowers it (its per-layer tables): each input copied into 32 bits
// and rescaled by a MUL (the smaller, broadcast input first), the SUB, the squaring MUL, for
// tensors of rank < 4 an ADD of a full-shape int32 constant read from the constants, and the
// output MUL.
void Lowerer::LowerSquaredDifference(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef a = In(o, 0), b = In(o, 1), o0 = Out(o);
  if (b.shape.elements() > a.shape.elements()) std::swap(a, b);  // b: the broadcast one
  FmRef scalar;
  scalar.scalar = true;
  scalar.bits = 32;
  auto rescale = [&](FmRef x) {
    if (x.shape.c == 1 && x.shape.elements() > 1) {
      // A depth-1 map is processed with H x W in depth (as in LowerBinaryElementwise).
      x.shape = {1, 1, static_cast<int32_t>(std::min<int64_t>(x.shape.elements(), 1 << 30))};
    }
    if (x.id >= 0) {
      Copy(i, "SquaredDifference/MemoryCopy", x, TempRef(x.shape, 32));  // widened to int32
      x = lw_.ops.back().ofm;
    }
    NpuOp m = Base(i, "SquaredDifference/Mul", HwOp::kElementwise);
    m.ew = EwKind::kMul, m.ifm = x, m.ifm2 = scalar, m.has_ifm2 = true;
    m.ofm = TempRef(x.shape, 32);
    Emit(m);
    return lw_.ops.back().ofm;
  };
  auto ew = [&](const char* n, EwKind k, FmRef p, FmRef q) {
    NpuOp e = Base(i, absl::StrCat("SquaredDifference/", n), HwOp::kElementwise);
    e.ew = k, e.ifm = p, e.ifm2 = q, e.has_ifm2 = true;
    e.ofm = TempRef(o0.shape, 32);
    Emit(e);
    return lw_.ops.back().ofm;
  };
  const FmRef rb = rescale(b);
  const FmRef ra = rescale(a);
  const FmRef d = ew("Sub", EwKind::kSub, ra, rb);
  const FmRef sq = ew("Mul", EwKind::kMul, d, d);
  // Tensors of rank < 4 (a transformer's [1, 16, 64], a [1, C] after global pooling) get one
  // more ADD of a full-shape int32 constant ("..._broadcasted" in Vela's tables); 4-D ones not.
  FmRef r = sq;
  if (sg_.tensors[o.outputs[0]].shape.size() < 4) {
    FmRef rounding;
    rounding.shape = o0.shape;
    rounding.bits = 32;
    r = ew("Add", EwKind::kAdd, sq, rounding);
  }
  NpuOp m = Base(i, "SquaredDifference/Mul", HwOp::kElementwise);
  m.ew = EwKind::kMul, m.ifm = r, m.ifm2 = scalar, m.has_ifm2 = true;
  m.ofm = o0;
  Emit(m);
}

// PRELU as Vela lowers it (its per-layer tables, U55/U65 and U85): a MUL of x by a scalar
// (x rescaled to the output's scale), a MUL of x by alpha (read from the constants) and the
// MAXIMUM of the two.
void Lowerer::LowerPrelu(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef x = In(o, 0), al = In(o, 1), y = Out(o);
  FmRef one;
  one.scalar = true;
  one.bits = x.bits;
  NpuOp r = Base(i, "Prelu/Mul", HwOp::kElementwise);
  r.ew = EwKind::kMul, r.ifm = x, r.ifm2 = one, r.has_ifm2 = true;
  r.ofm = TempRef(y.shape, y.bits);
  Emit(r);
  NpuOp m = Base(i, "Prelu/Mul", HwOp::kElementwise);
  m.ew = EwKind::kMul, m.ifm = x, m.ifm2 = al, m.has_ifm2 = true;
  m.ofm = TempRef(y.shape, y.bits);
  Emit(m);
  NpuOp mx = Base(i, "Prelu/Max", HwOp::kElementwise);
  mx.ew = EwKind::kMinMax, mx.ifm = lw_.ops[lw_.ops.size() - 2].ofm;
  mx.ifm2 = lw_.ops.back().ofm, mx.has_ifm2 = true, mx.ofm = y;
  Emit(mx);
}

// ABS, NEG.
void Lowerer::LowerUnaryElementwise(int32_t i) {
  const Operator& o = sg_.ops[i];
  NpuOp op = Base(i, std::string(o.name()), HwOp::kElementwise);
  op.ew = EwKind::kOther;
  op.unary = true;
  op.ifm = In(o, 0);
  op.ofm = Out(o);
  Emit(op);
}

// Activations: fused into the producer when possible, else a copy with the activation (ReLU
// family: clamping; the rest: a lookup table).
void Lowerer::LowerActivation(int32_t i) {
  const Operator& o = sg_.ops[i];
  const std::string name(o.name());
  const bool relu = o.kind == OpKind::kRelu || o.kind == OpKind::kRelu6 ||
                    o.kind == OpKind::kReluN1To1;
  if (relu) {
    if (TryFuseActivation(i, Act::kRelu)) return;
    Copy(i, name, In(o, 0), Out(o));
    lw_.ops.back().act = Act::kRelu;
    return;
  }
  // LUT activations fuse into the producer: sigmoid and tanh, and (8-bit, which Vela turns
  // into a LUT) LEAKY_RELU and HARD_SWISH.
  const bool eight_bit = !o.inputs.empty() && o.inputs[0] != kNoTensor &&
                         (sg_.tensors[o.inputs[0]].dtype == DType::kInt8 ||
                          sg_.tensors[o.inputs[0]].dtype == DType::kUInt8);
  // EXP, LOG, RSQRT and GELU are table lookups too, fused like sigmoid: Vela's tables put
  // a transformer's RSQRT (8- and 16-bit) into the ADD before it and its GELU into the
  // FULLY_CONNECTED before it.
  const bool lut = o.kind == OpKind::kLogistic || o.kind == OpKind::kTanh ||
                   o.kind == OpKind::kExp || o.kind == OpKind::kLog ||
                   o.kind == OpKind::kRsqrt ||
                   (o.kind == OpKind::kOpaque && o.opaque_name == "GELU") ||
                   (eight_bit && (o.kind == OpKind::kLeakyRelu || o.kind == OpKind::kHardSwish));
  // A 16-bit sigmoid or tanh keeps its IFM's scale (on U85 Vela 5.2's interpolating LUT16,
  // on U55/U65 the native function), and only a unit-scale activation fuses into its
  // producer: it runs as an operation of its own. On U85 so do the other 16-bit tables.
  const bool i16 = !o.inputs.empty() && o.inputs[0] != kNoTensor &&
                   sg_.tensors[o.inputs[0]].dtype == DType::kInt16;
  const bool lut16_apart =
      i16 && (o.kind == OpKind::kLogistic || o.kind == OpKind::kTanh ||
              arch_.family == EthosUFamily::kU85);
  if (lut && !lut16_apart && TryFuseActivation(i, Act::kLut)) return;
  Copy(i, name, In(o, 0), Out(o));
  NpuOp& op = lw_.ops.back();
  op.act = Act::kLut;
  op.needs_lut = true;
  op.lut_op = true;
  ViewElementwise(lw_.ops.size() - 1);
}

void Lowerer::LowerPooling(int32_t i) {
  const Operator& o = sg_.ops[i];
  const Pool2DAttrs a = AttrsOr<Pool2DAttrs>(o);
  NpuOp op = Base(i, o.kind == OpKind::kMaxPool2D ? "MaxPool" : "AvgPool", HwOp::kPooling);
  op.pool = o.kind == OpKind::kMaxPool2D ? PoolKind::kMax : PoolKind::kAvg;
  op.ifm = In(o, 0);
  op.ofm = Out(o);
  op.kh = a.filter_h, op.kw = a.filter_w, op.sh = a.stride_h, op.sw = a.stride_w;
  op.act = ActOf(a.activation);
  op.macs = int64_t{op.kh} * op.kw * op.ofm.shape.elements();
  Emit(op);
}

// MEAN, SUM, REDUCE_MAX: reduce over H and/or W (or depth) as one pooling / ReduceSum pass
// over the input.
// MEAN over height and/or width as Vela lowers it: a depthwise convolution with a kernel of
// ones over the reduced axes into a 32-bit sum (at most 64 kernel rows and 4096 kernel
// elements per convolution: a taller reduction over H and W is read as one row of H*W, a
// bigger one is split into several convolutions whose sums ADDs accumulate), then a MUL by
// 1/(elements) with the output's rescale.
bool Lowerer::TryLowerMeanAsDepthwise(int32_t i) {
  const Operator& o = sg_.ops[i];
  if (o.kind != OpKind::kMean || o.inputs.size() < 2 || o.inputs[1] == kNoTensor) return false;
  const Tensor& t = sg_.tensors[o.inputs[0]];
  const int32_t rank = static_cast<int32_t>(t.shape.size());
  if (rank < 1 || rank > 4) return false;
  const std::vector<int64_t> axes = ConstInts(sg_.tensors[o.inputs[1]]);
  if (axes.empty()) return false;
  // The IFM as N x H x W x C (leading 1s) and the reduced axes.
  std::vector<int64_t> s4(4, 1);
  std::vector<bool> r4(4, false);
  for (int32_t k = 0; k < rank; ++k) s4[4 - rank + k] = t.shape[k];
  for (int64_t a : axes) {
    const int64_t ax = a < 0 ? a + rank : a;
    if (ax < 0 || ax >= rank) return false;
    r4[4 - rank + ax] = true;
  }
  if (s4[0] != 1) return false;
  // A reduction over depth: the H or W axis of size 1 is dropped and C becomes W (depth 1).
  bool depth_view = false;
  if (r4[3] && s4[3] > 1) {
    if (s4[1] != 1 && s4[2] != 1) return false;
    const int del = s4[2] == 1 ? 2 : 1;
    s4.erase(s4.begin() + del), r4.erase(r4.begin() + del);
    s4.push_back(1), r4.push_back(false);
    depth_view = true;
  }
  const bool rh = r4[1] && s4[1] > 1, rw = r4[2] && s4[2] > 1;
  if (!rh && !rw) return false;  // a copy; the generic path handles it
  FmRef x = In(o, 0), y = Out(o);
  // Read with its depth as width, the input is stored NHWC (Vela's schedules: a transformer's
  // [1, 16, 64] residual sum read as [16, 64, 1] by its layer norm's MEAN is format NHWC).
  if (depth_view && x.id >= 0) linear_.push_back(x.id);
  const int32_t c = static_cast<int32_t>(s4[3]);
  int32_t rows = static_cast<int32_t>(s4[1]), cols = static_cast<int32_t>(s4[2]);
  int32_t h = rh ? rows : 1, w = rw ? cols : 1;
  constexpr int32_t kMaxKernelElements = 4096, kMaxKernelHeight = 64;
  if (h > kMaxKernelHeight && int64_t{h} * w <= kMaxKernelElements && rh && rw) {
    cols = rows * cols, rows = 1;
    w = h * w, h = 1;
  }
  const int32_t per_conv =
      std::max(1, std::min({kMaxKernelElements / std::max(w, 1), h, kMaxKernelHeight}));
  const int32_t convs = (h + per_conv - 1) / per_conv;
  const Shape3 sum_shape = {rh ? 1 : rows, rw ? 1 : cols, c};
  std::vector<FmRef> sums;
  for (int32_t k = 0; k < convs; ++k) {
    const int32_t kh = k == convs - 1 && h % per_conv != 0 ? h % per_conv : per_conv;
    NpuOp dw = Base(i, "Mean/DepthwiseConv2D", HwOp::kDepthwise);
    dw.ifm = x;
    dw.ifm.shape = {rh ? kh : rows, rw ? w : cols, c};
    dw.kh = rh ? kh : 1;
    dw.kw = rw ? w : 1;
    dw.ofm = TempRef(sum_shape, 32);
    dw.weight_bytes = int64_t{dw.kh} * dw.kw * c;
    dw.encoded_weight_bytes = ConstantWeightStreamBytes(dw.weight_bytes);
    dw.scale_bytes = 10 * int64_t{c};
    dw.macs = dw.weight_bytes * sum_shape.h * sum_shape.w;
    Emit(dw);
    sums.push_back(lw_.ops.back().ofm);
  }
  FmRef acc = sums.back();
  for (size_t k = 0; k + 1 < sums.size(); ++k) {
    NpuOp add = Base(i, "Mean/Add", HwOp::kElementwise);
    add.ew = EwKind::kAdd;
    add.ifm = acc, add.ifm2 = sums[sums.size() - 2 - k], add.has_ifm2 = true;
    add.ofm = TempRef(sum_shape, 32);
    Emit(add);
    acc = lw_.ops.back().ofm;
  }
  FmRef scale;
  scale.scalar = true;
  scale.bits = 32;
  NpuOp mul = Base(i, "Mean/Mul", HwOp::kElementwise);
  mul.ew = EwKind::kMul;
  mul.ifm = acc, mul.ifm2 = scale, mul.has_ifm2 = true;
  mul.ofm = y;
  Emit(mul);
  return true;
}

void Lowerer::LowerReduce(int32_t i) {
  const Operator& o = sg_.ops[i];
  if (TryLowerMeanAsDepthwise(i)) return;
  FmRef x = In(o, 0), y = Out(o);
  const Tensor& t = sg_.tensors[o.inputs[0]];
  const Tensor& ofm_t = sg_.tensors[o.outputs[0]];
  const int64_t in_el = std::max<int64_t>(1, t.num_elements());
  const int64_t out_el = std::max<int64_t>(1, ofm_t.num_elements());
  const int64_t red = std::max<int64_t>(1, in_el / out_el);
  NpuOp op = Base(i, o.kind == OpKind::kSum ? "ReduceSum"
                       : o.kind == OpKind::kMean ? "Mean" : "ReduceMax",
                  o.kind == OpKind::kSum ? HwOp::kReduceSum : HwOp::kPooling);
  op.pool = o.kind == OpKind::kReduceMax ? PoolKind::kMax : PoolKind::kAvg;
  // View: IFM (rows = out/C, red, C'), kernel 1 x red.
  const int32_t c = y.shape.c;
  const bool depth_reduced = x.shape.c != c || (out_el == in_el / x.shape.c && c == 1);
  if (!depth_reduced) {
    const int32_t kh = static_cast<int32_t>(std::min<int64_t>(red, x.shape.h));
    const int32_t kw = static_cast<int32_t>(std::max<int64_t>(1, red / std::max(kh, 1)));
    op.ifm = x;
    op.kh = kh;
    op.kw = kw;
    op.ofm = y;
    op.ofm.shape = {std::max(1, x.shape.h / kh), std::max(1, x.shape.w / kw), c};
  } else if (o.kind == OpKind::kSum) {
    // ReduceSum reduces over depth with a 1x1 kernel.
    op.ifm = x;
    op.ifm.shape = {static_cast<int32_t>(out_el), 1, static_cast<int32_t>(red)};
    op.ofm = y;
    op.ofm.shape = {static_cast<int32_t>(out_el), 1, 1};
  } else {
    op.ifm = x;
    op.ifm.shape = {static_cast<int32_t>(out_el), static_cast<int32_t>(red), 1};
    op.kh = 1;
    op.kw = static_cast<int32_t>(red);
    op.ofm = y;
    op.ofm.shape = {static_cast<int32_t>(out_el), 1, 1};
  }
  op.sh = std::max(op.kh, 1), op.sw = std::max(op.kw, 1);
  op.macs = red * out_el;
  Emit(op);
}

void Lowerer::LowerResize(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef x = In(o, 0), y = Out(o);
  const ResizeAttrs ra = AttrsOr<ResizeAttrs>(o);
  // U85 (Vela 5.2's command streams: one "Resize" operation per RESIZE_BILINEAR or
  // RESIZE_NEAREST_NEIGHBOR): the resampler is part of the output unit, so the operation runs
  // at the output unit's rate per OFM element for its OFM width (a 6x6x64 -> 12x12x64 int8
  // bilinear costs 9216 x 0.5 cycles on U85-128, x 0.0625 on U85-1024), reading the IFM once
  // on its IFM-stream channel: an elementwise-class operation of the IFM upscaled.
  if (arch_.family == EthosUFamily::kU85) {
    NpuOp op = Base(i, "Resize", HwOp::kElementwise);
    op.ew = EwKind::kOther;
    op.unary = true;
    op.ifm = x;
    op.ofm = y;
    op.upscale = std::max(1, y.shape.h / std::max(1, x.shape.h));
    op.upscale = std::max(op.upscale, y.shape.w / std::max(1, x.shape.w));
    op.upscale = std::max(op.upscale, 2);  // the IFM is smaller than the OFM
    Emit(op);
    return;
  }
  // U55/U65, bilinear x2 with half-pixel centers (Vela 5.2's schedules and command streams):
  // the input is copied into the interior of a map one element larger on every side, stored
  // NHWC, and its borders filled by four copies: the top and bottom rows (1 x W, from the
  // input's first and last rows), then the right and left columns ((H + 2) x 1, from the
  // padded map's own columns W and 1). Then four 2 x 2 depthwise convolutions, one per output
  // phase, each reading (H + 1) x (W + 1) of the padded map and writing its phase of the
  // output in place: Vela sizes each as producing a (2H - 1) x (2W - 1) OFM (4 MACs per
  // element). The phases write every second element: the output is stored NHWC.
  if (o.kind == OpKind::kResizeBilinear && !ra.align_corners && ra.half_pixel_centers &&
      y.shape.h == 2 * x.shape.h && y.shape.w == 2 * x.shape.w && y.shape.c == x.shape.c) {
    const Shape3 s = x.shape;
    FmRef padded = TempRef({s.h + 2, s.w + 2, s.c}, x.bits);
    transposed_.push_back(padded.id);
    if (y.id >= 0) transposed_.push_back(y.id);
    FmRef part = padded;
    part.shape = s;
    Copy(i, "ResizeBilinear/MemoryCopy", x, part);
    for (int k = 0; k < 2; ++k) {  // top, bottom rows from the input
      FmRef src = x, dst = padded;
      src.shape = dst.shape = {1, s.w, s.c};
      Copy(i, "ResizeBilinear/MemoryCopy", src, dst);
    }
    for (int k = 0; k < 2; ++k) {  // right, left columns from the padded map
      FmRef src = padded, dst = padded;
      src.shape = dst.shape = {s.h + 2, 1, s.c};
      Copy(i, "ResizeBilinear/MemoryCopy", src, dst);
    }
    for (int phase = 0; phase < 4; ++phase) {
      NpuOp dw = Base(i, "ResizeBilinear/DepthwiseConv2D", HwOp::kDepthwise);
      dw.ifm = padded;
      dw.ifm.shape = {s.h + 1, s.w + 1, s.c};
      dw.kh = dw.kw = 2;
      dw.acc32 = true;
      dw.ofm = y;
      dw.ofm.shape = {2 * s.h - 1, 2 * s.w - 1, s.c};
      SetResizeKernel(&dw);
      Emit(dw);
    }
    return;
  }
  NpuOp op = Base(i, std::string(o.name()), HwOp::kPooling);
  op.pool = PoolKind::kAvg;
  op.ifm = x;
  op.ofm = y;
  op.upscale = std::max(1, y.shape.h / std::max(1, x.shape.h));
  if (o.kind == OpKind::kResizeBilinear) op.kh = op.kw = 2;
  op.act = Act::kOther;
  op.macs = int64_t{op.kh} * op.kw * y.shape.elements();
  Emit(op);
}

void Lowerer::SetResizeKernel(NpuOp* dw) {
  const int32_t c = dw->ofm.shape.c;
  dw->weight_bytes = int64_t{dw->kh} * dw->kw * c;
  dw->encoded_weight_bytes = ConstantWeightStreamBytes(dw->weight_bytes);
  dw->scale_bytes = 10 * int64_t{c};
  dw->macs = int64_t{dw->kh} * dw->kw * dw->ofm.shape.elements();
}

void Lowerer::LowerArgMax(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef x = In(o, 0), y = Out(o);
  NpuOp op = Base(i, "ArgMax", HwOp::kPooling);
  op.pool = PoolKind::kMax;
  op.ifm = x;
  op.ifm.shape = {x.shape.h * x.shape.w, x.shape.c, 1};
  op.kh = 1, op.kw = x.shape.c;
  op.ofm = y;
  op.ofm.shape = {x.shape.h * x.shape.w, 1, 1};
  op.macs = x.shape.elements();
  Emit(op);
}

// RESHAPE, SQUEEZE, EXPAND_DIMS: no NPU work, the output shares the input's storage (unless
// both are graph tensors).
void Lowerer::LowerReshape(int32_t i) {
  const Operator& o = sg_.ops[i];
  const int32_t src = o.inputs[0];
  const int32_t dst = o.outputs[0];
  if (sg_.tensors[src].is_constant()) {
    lw_.ir_note[i] = "no-op (constant reshape)";
    return;
  }
  const bool both_io = (is_output_[dst] || is_output_[src]) &&
                       std::find(sg_.inputs.begin(), sg_.inputs.end(), src) != sg_.inputs.end();
  if (both_io) {
    Copy(i, "MemoryCopy", In(o, 0), Out(o));
    return;
  }
  const int32_t a = Fmap(src);
  const int32_t b = Fmap(dst);
  lw_.fmaps[b].alias_of = a;
  // Bricks keep their layout only while the width and depth stay: a reshape that changes
  // either is a no-op only on linear storage, and Vela stores the map NHWC (a YOLO head's
  // [1, 6, 6, 24] convolution output reshaped to [1, 108, 8]; a 1-D convolution's [1, 128, 16]
  // output read by a pooling as [128, 1, 16]).
  const Shape3 sa = lw_.fmaps[a].shape, sb = lw_.fmaps[b].shape;
  if (sa.c != sb.c || sa.w != sb.w) linear_.push_back(a);
  lw_.ir_note[i] = "no-op (reshape: shares its input's memory)";
}

// Transpose, concatenation, splits, padding, slices, gathers and rescales: copies between
// feature maps (a transpose is its own hardware operation).
void Lowerer::LowerDataMovement(int32_t i) {
  const Operator& o = sg_.ops[i];
  if (TryFoldPad(i)) return;
  if (TryPadInPlace(i)) return;
  // A QUANTIZE of a uint8 graph input with zero point 128 into int8 with zero point 0 and the
  // same scale (the usual uint8-input converter output) is no operation in Vela 5.2: the
  // consumer reads the input itself (its per-layer tables have no row for it; a 127 -> -1
  // QUANTIZE is still executed).
  if (o.kind == OpKind::kQuantize && o.inputs.size() == 1 && o.outputs.size() == 1 &&
      o.inputs[0] != kNoTensor &&
      std::find(sg_.inputs.begin(), sg_.inputs.end(), o.inputs[0]) != sg_.inputs.end() &&
      !is_output_[o.outputs[0]]) {
    const Tensor& ti = sg_.tensors[o.inputs[0]];
    const Tensor& to = sg_.tensors[o.outputs[0]];
    if (ti.dtype == DType::kUInt8 && to.dtype == DType::kInt8 && ti.quant.scale.size() == 1 &&
        to.quant.scale == ti.quant.scale && ti.quant.zero_point.size() == 1 &&
        to.quant.zero_point.size() == 1 && ti.quant.zero_point[0] == 128 &&
        to.quant.zero_point[0] == 0) {
      lw_.fmaps[Fmap(o.outputs[0])].alias_of = Fmap(o.inputs[0]);
      lw_.ir_note[i] = "no-op (uint8 input read as int8 by its consumer)";
      return;
    }
  }
  const std::string name(o.name());
  switch (o.kind) {
    case OpKind::kTranspose: {
      NpuOp op = Base(i, "Transpose", HwOp::kTranspose);
      op.ifm = In(o, 0);
      op.ofm = Out(o);
      Emit(op);
      return;
    }
    case OpKind::kConcatenation: case OpKind::kPack: {
      // Vela writes the output's slices: an input that an NPU operation produced for this
      // concatenation alone is written by that operation straight into its slice (no
      // operation of its own in Vela's per-layer tables); every other input is copied in by
      // a memory copy. The in-place write is an elided op that keeps the producer's map live
      // until the concatenation: Vela's SRAM figures (DenseNet, ShuffleNet) are those of the
      // separate maps, not of the output allocated from the producer on.
      // Along depth at an offset that is not a multiple of 16, the output cannot be stored in
      // 16-deep bricks: Vela stores it NHWC, and the producers writing into it write NHWC (its
      // schedules for a YOLO head concatenating 2 + 2 + 4 channels).
      FmRef y = Out(o);
      bool linear = false, depth_axis = false;
      if (o.kind == OpKind::kConcatenation) {
        const int32_t rank = static_cast<int32_t>(sg_.tensors[o.outputs[0]].shape.size());
        int32_t axis = AttrsOr<ConcatenationAttrs>(o).axis;
        if (axis < 0) axis += rank;
        depth_axis = rank > 0 && axis == rank - 1;
        if (depth_axis) {
          int64_t offset = 0;
          for (size_t k = 0; k + 1 < o.inputs.size(); ++k) {
            if (o.inputs[k] == kNoTensor) continue;
            const std::vector<int32_t>& sh = sg_.tensors[o.inputs[k]].shape;
            offset += sh.empty() ? 1 : sh.back();
            linear |= offset % 16 != 0;
          }
        }
      }
      if (linear && y.id >= 0) linear_.push_back(y.id);
      for (size_t k = 0; k < o.inputs.size(); ++k) {
        if (o.inputs[k] == kNoTensor) continue;
        if (TryWriteIntoSlice(o.inputs[k], o.outputs[0])) {
          const int32_t f = lw_.fmap_of_tensor[o.inputs[k]];
          UnviewProducer(f);
          if (linear) linear_.push_back(f);
          // A producer whose map is stored NHWC writes the output NHWC: one storage format.
          const auto nhwc = [f](const std::vector<int32_t>& v) {
            return std::find(v.begin(), v.end(), f) != v.end();
          };
          if (y.id >= 0 && (nhwc(transposed_) || nhwc(linear_))) linear_.push_back(y.id);
          // Vela 5.2 sizes the phases of a bilinear resize written into a concatenation along
          // depth with the whole output's depth (their OFM stripes and MACs: a 64-deep resize
          // into a 112-deep concatenation costs 112 channels per phase).
          if (depth_axis) {
            for (NpuOp& p : lw_.ops) {
              if (p.ofm.id == f && p.name == "ResizeBilinear/DepthwiseConv2D") {
                p.ofm.shape.c = y.shape.c;
                SetResizeKernel(&p);
              }
            }
          }
          FmRef none;
          none.shape = In(o, k).shape;  // id -1: writes no stored map
          Copy(i, absl::StrCat(name, "/InPlace"), In(o, k), none);
          lw_.ops.back().elided = true;
          continue;
        }
        FmRef x = In(o, k);
        FmRef part = y;
        part.shape = x.shape;
        Copy(i, absl::StrCat(name, "/MemoryCopy"), x, part);
      }
      return;
    }
    case OpKind::kSplit: case OpKind::kSplitV: case OpKind::kUnpack: {
      const int32_t data_in = o.kind == OpKind::kSplit ? 1 : 0;
      if (data_in >= static_cast<int32_t>(o.inputs.size())) return;
      FmRef x = In(o, data_in);
      // Vela 5.2 runs no operation for a split of a feature map (no SPLIT, SPLIT_V or UNPACK
      // row in any of its tables for the corpus, channel splits included): each consumer reads
      // its slice of the input in place. The outputs share the input's storage, which stays
      // live until their last consumer; an output that is a graph output is still copied.
      if (x.id >= 0) {
        bool any_copy = false;
        for (int32_t t : o.outputs) {
          if (is_output_[t]) {
            FmRef y = Ref(t);
            FmRef src = x;
            src.shape = y.shape;
            Copy(i, absl::StrCat(name, "/MemoryCopy"), src, y);
            any_copy = true;
          } else {
            lw_.fmaps[Fmap(t)].alias_of = x.id;
          }
        }
        if (!any_copy) lw_.ir_note[i] = "no-op (split: consumers read their slice in place)";
        return;
      }
      for (int32_t t : o.outputs) {
        FmRef y = Ref(t);
        FmRef src = x;
        src.shape = y.shape;
        Copy(i, absl::StrCat(name, "/MemoryCopy"), src, y);
      }
      return;
    }
    case OpKind::kPad: case OpKind::kPadV2: case OpKind::kSlice: case OpKind::kStridedSlice:
    case OpKind::kQuantize: case OpKind::kGather: {
      if ((o.kind == OpKind::kSlice || o.kind == OpKind::kStridedSlice) && TrySliceInPlace(i)) {
        return;
      }
      FmRef x = In(o, 0), y = Out(o);
      // The rescale of a graph input (stored NHWC, often 3 channels) is a per-element
      // operation on contiguous rows: Vela's tables cost a uint8 64 x 64 x 3 input's QUANTIZE
      // at the pooling rate of full micro-blocks (0.5 cycles per element on U55-256, 2 on
      // U55-64), not at the 8-deep micro-block's rate for 3 channels. Viewed as rows of
      // 16-deep bricks (W x C regrouped), no micro-block is partly empty.
      if (o.kind == OpKind::kQuantize && x.id >= 0 &&
          std::find(sg_.inputs.begin(), sg_.inputs.end(), o.inputs[0]) != sg_.inputs.end() &&
          x.shape == y.shape &&
          int64_t{x.shape.w} * x.shape.c <= (1 << 20)) {
        const int32_t row = x.shape.w * x.shape.c;
        x.shape = y.shape =
            row % 32 == 0 ? Shape3{x.shape.h, row / 16, 16} : Shape3{1, x.shape.h, row};
      }
      // A spatial PAD (4-D, batch and depth unpadded, same quantization): Vela copies the
      // IFM into the interior of the output and each border from a constant (its tables: a
      // MemoryCopy of the IFM's size, then one per padded side).
      if ((o.kind == OpKind::kPad || o.kind == OpKind::kPadV2) && o.inputs.size() >= 2 &&
          o.inputs[1] != kNoTensor && x.id >= 0 && sg_.tensors[o.inputs[0]].shape.size() == 4) {
        const std::vector<int64_t> pad = ConstInts(sg_.tensors[o.inputs[1]]);
        const Tensor& ti = sg_.tensors[o.inputs[0]];
        const Tensor& to = sg_.tensors[o.outputs[0]];
        if (pad.size() == 8 && pad[0] == 0 && pad[1] == 0 && pad[6] == 0 && pad[7] == 0 &&
            ti.quant.scale == to.quant.scale && ti.quant.zero_point == to.quant.zero_point) {
          FmRef interior = y;
          interior.shape = x.shape;
          Copy(i, "Pad/MemoryCopy", x, interior);
          CopyPadBorders(i, pad, ti.shape[1], ti.shape[2]);
          return;
        }
      }
      Copy(i, o.kind == OpKind::kQuantize ? "Rescale" : absl::StrCat(name, "/MemoryCopy"), x,
           y);
      return;
    }
    default:
      // Supported by the compatibility check but not modelled: cost as a copy of the output.
      if (!o.inputs.empty() && o.inputs[0] != kNoTensor && !o.outputs.empty()) {
        Copy(i, absl::StrCat(name, "/MemoryCopy"), In(o, 0), Out(o));
      }
      return;
  }
}

// UNIDIRECTIONAL_SEQUENCE_LSTM as Vela lowers it (its per-layer tables and high-level command
// streams list these operations, in this order):
//   once, first: a memory copy of the output state h onto itself;
//   per time step, per gate in the order output, input, cell, forget: a FULLY_CONNECTED of h
//   with the recurrent weights, one of the step's input row with the input weights (read in
//   place from the input sequence: no copy), both with 16-bit results, their ADD with the
//   gate's activation as a LUT (sigmoid; tanh for the cell gate), then for the sigmoid gates a
//   separate 16-bit clamp in place and for the cell gate the MUL input x cell;
//   the cell update: (first step only) a copy of the cell state c onto itself, MUL forget x c,
//   ADD into c, a clamp of c in place, a tanh LUT of c and the output MUL (output gate x tanh)
//   into h; last, a memory copy of h into the step's row of the output sequence.
// The states h and c are feature maps of the arena memory (also when the file gives them as
// constants: Vela keeps them out of the staging SRAM), stored linearly (NHWC). The state
// updates read or write them there and never run in a U85 chain.
void Lowerer::LowerLstm(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef x = In(o, 0);
  const Tensor& xt = sg_.tensors[o.inputs[0]];
  const auto* a = std::get_if<LstmAttrs>(&o.attrs);
  int32_t steps = 1, batch = 1;
  if (xt.shape.size() == 3) {
    const bool tm = a && a->time_major;
    steps = tm ? xt.shape[0] : xt.shape[1];
    batch = tm ? xt.shape[1] : xt.shape[0];
  }
  FmRef y = Out(o);
  const int32_t units = y.shape.c;
  const int32_t nin = x.shape.c;
  const Shape3 gate{1, batch, units};
  auto has = [&](int k) {
    return k < static_cast<int>(o.inputs.size()) && o.inputs[k] != kNoTensor;
  };
  auto fc = [&](int k, FmRef in) {
    const int32_t cin = in.shape.c;
    NpuOp f = Base(i, "Lstm/FullyConnected", HwOp::kVectorProduct);
    f.ifm = in;
    f.ofm = TempRef(gate, 16);
    f.weight_tensor = o.inputs[k];  // encoded once, read again every step
    f.weight_bytes = static_cast<int64_t>(sg_.tensors[o.inputs[k]].num_bytes());
    f.scale_bytes = 10 * int64_t{units};
    f.macs = int64_t{cin} * units * batch;
    Emit(f);
    return lw_.ops.back().ofm;
  };
  auto ew = [&](const char* n, EwKind k, FmRef p, FmRef q, FmRef out, Act act) {
    NpuOp e = Base(i, absl::StrCat("Lstm/", n), HwOp::kElementwise);
    e.ew = k;
    e.ifm = p, e.ifm2 = q, e.has_ifm2 = true;
    e.ofm = out;
    e.act = act;
    e.needs_lut = act == Act::kLut;
    Emit(e);
    return lw_.ops.back().ofm;
  };
  auto unary = [&](const char* n, FmRef p, FmRef out, Act act) {
    Copy(i, absl::StrCat("Lstm/", n), p, out);
    lw_.ops.back().act = act;
    lw_.ops.back().needs_lut = act == Act::kLut;
    lw_.ops.back().macs = p.shape.elements();
    return lw_.ops.back().ofm;
  };
  auto unchained = [&]() { lw_.ops.back().no_chain = true; };
  // The output and cell states (inputs 18 and 19).
  auto state = [&](int k, int32_t bits) {
    FmRef r = has(k) && !sg_.tensors[o.inputs[k]].is_constant() ? Ref(o.inputs[k])
                                                                 : TempRef(gate, bits);
    lw_.fmaps[r.id].graph_io = true;
    r.shape = gate;
    r.bits = bits;
    return r;
  };
  const FmRef h = state(18, y.bits);
  const FmRef c = state(19, 16);
  unary("MemoryCopy", h, h, Act::kOther);
  FmRef row = y;
  row.shape = gate;
  // A sequence longer than kMaxLstmSteps is lowered for that many steps, the last one's
  // operations repeated for the rest (every step costs the same; a hostile 65,535-step
  // sequence would otherwise be 1.4 million operations).
  constexpr int32_t kMaxLstmSteps = 128;
  const int32_t lowered_steps = std::min(std::max(steps, 1), kMaxLstmSteps);
  if (steps > lowered_steps) {
    lw_.ir_caveat[i] = absl::StrCat(steps, " time steps: the last of ", lowered_steps,
                                    " lowered steps is costed ", steps - lowered_steps + 1,
                                    " times");
  }
  for (int32_t s = 0; s < lowered_steps; ++s) {
    const size_t step_first_op = lw_.ops.size();
    FmRef xs = x;
    xs.shape = {1, batch, nin};
    FmRef g[4];
    bool present[4] = {};
    for (int k : {3, 0, 2, 1}) {
      FmRef acc;
      bool any = false;
      if (has(5 + k)) acc = fc(5 + k, h), any = true;
      if (has(1 + k)) {
        FmRef v = fc(1 + k, xs);
        acc = any ? ew("Add", EwKind::kAdd, acc, v, TempRef(gate, 16), Act::kLut) : v;
        any = true;
      }
      if (!any) continue;  // CIFG: no input gate
      present[k] = true;
      g[k] = k == 2 ? acc : unary("Clamp", acc, acc, Act::kRelu);
      if (k == 2 && present[0]) {
        g[2] = ew("Mul", EwKind::kMul, g[0], g[2], TempRef(gate, 16), Act::kNone);
      }
    }
    if (s == 0) unary("MemoryCopy", c, c, Act::kOther);
    FmRef kept = c;
    if (present[1]) {
      kept = ew("Mul", EwKind::kMul, c, g[1], TempRef(gate, 16), Act::kNone);
      unchained();
    }
    if (present[2]) {
      ew("Add", EwKind::kAdd, kept, g[2], c, Act::kNone);
      unchained();
    }
    unary("Clamp", c, c, Act::kRelu);
    FmRef t = unary("Tanh", c, TempRef(gate, 16), Act::kLut);
    if (present[3]) {
      ew("Mul", EwKind::kMul, g[3], t, h, Act::kNone);
    } else {
      unary("MemoryCopy", t, h, Act::kOther);
    }
    unchained();
    unary("MemoryCopy", h, row, Act::kOther);
    if (s + 1 == lowered_steps && steps > lowered_steps) {
      for (size_t k = step_first_op; k < lw_.ops.size(); ++k) {
        lw_.ops[k].repeat = int64_t{steps} - lowered_steps + 1;
      }
    }
  }
}

void Lowerer::LowerOp(int32_t i) {
  switch (sg_.ops[i].kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kTransposeConv:
      return LowerConvolution(i);
    case OpKind::kFullyConnected: return LowerFullyConnected(i);
    case OpKind::kBatchMatMul: return LowerMatMul(i);
    case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kDiv:
    case OpKind::kMaximum: case OpKind::kMinimum:
      return LowerBinaryElementwise(i);
    case OpKind::kSquaredDifference: return LowerSquaredDifference(i);
    case OpKind::kPrelu: return LowerPrelu(i);
    case OpKind::kAbs: case OpKind::kNeg: return LowerUnaryElementwise(i);
    case OpKind::kSoftmax: return Softmax(i);
    case OpKind::kRelu: case OpKind::kRelu6: case OpKind::kReluN1To1:
    case OpKind::kLogistic: case OpKind::kTanh:
    case OpKind::kExp: case OpKind::kLog: case OpKind::kRsqrt: case OpKind::kHardSwish:
    case OpKind::kLeakyRelu:
      return LowerActivation(i);
    case OpKind::kOpaque:
      if (sg_.ops[i].opaque_name == "GELU") return LowerActivation(i);  // a LUT, as Vela does
      return LowerDataMovement(i);
    case OpKind::kMaxPool2D: case OpKind::kAveragePool2D: return LowerPooling(i);
    case OpKind::kMean: case OpKind::kSum: case OpKind::kReduceMax: return LowerReduce(i);
    case OpKind::kResizeNearestNeighbor: case OpKind::kResizeBilinear: return LowerResize(i);
    case OpKind::kArgMax: return LowerArgMax(i);
    case OpKind::kReshape: case OpKind::kSqueeze: case OpKind::kExpandDims:
      return LowerReshape(i);
    case OpKind::kUnidirectionalSequenceLstm: return LowerLstm(i);
    default: return LowerDataMovement(i);
  }
}

absl::StatusOr<Lowered> Lowerer::Run() {
  const int32_t nt = static_cast<int32_t>(sg_.tensors.size());
  const int32_t no = static_cast<int32_t>(sg_.ops.size());
  lw_.fmap_of_tensor.assign(nt, -1);
  lw_.cpu_reasons.resize(no);
  lw_.ir_note.resize(no);
  lw_.ir_caveat.resize(no);
  consumers_.assign(nt, 0);
  is_output_.assign(nt, false);
  for (int32_t t : sg_.outputs) {
    if (t < 0 || t >= nt) {
      return absl::InvalidArgumentError(absl::StrCat("graph output tensor ", t, " out of range"));
    }
    is_output_[t] = true;
  }
  for (int32_t t : sg_.inputs) {
    if (t < 0 || t >= nt) {
      return absl::InvalidArgumentError(absl::StrCat("graph input tensor ", t, " out of range"));
    }
  }
  for (const Operator& o : sg_.ops) {
    for (int32_t t : o.inputs) {
      if (t == kNoTensor) continue;
      if (t < 0 || t >= nt) {
        return absl::InvalidArgumentError(
            absl::StrCat("operator ", std::string(o.name()), ": input tensor ", t, " out of range"));
      }
      ++consumers_[t];
    }
    for (int32_t t : o.outputs) {
      if (t < 0 || t >= nt) {
        return absl::InvalidArgumentError(
            absl::StrCat("operator ", std::string(o.name()), ": output tensor ", t, " out of range"));
      }
    }
  }
  for (int32_t i = 0; i < no; ++i) {
    lw_.cpu_reasons[i] = OpCompatibility(sg_, i, cfg_);
  }
  for (int32_t i = 0; i < no; ++i) {
    const Operator& o = sg_.ops[i];
    if (!lw_.cpu_reasons[i].empty()) {
      for (int32_t t : o.inputs) {
        if (t != kNoTensor && !sg_.tensors[t].is_constant()) lw_.fmaps[Fmap(t)].cpu_touched = true;
      }
      for (int32_t t : o.outputs) lw_.fmaps[Fmap(t)].cpu_touched = true;
      continue;
    }
    LowerOp(i);
  }
  for (int32_t t : sg_.inputs) {
    if (!sg_.tensors[t].is_constant()) lw_.fmaps[Fmap(t)].graph_io = true;
  }
  for (int32_t t : sg_.outputs) {
    if (!sg_.tensors[t].is_constant()) lw_.fmaps[Fmap(t)].graph_io = true;
  }
  // Resolve alias chains to their root and propagate IO/CPU flags to the root.
  for (size_t f = 0; f < lw_.fmaps.size(); ++f) {
    int32_t r = static_cast<int32_t>(f);
    int guard = 0;
    while (lw_.fmaps[r].alias_of >= 0 && guard++ < 1000) r = lw_.fmaps[r].alias_of;
    if (r != static_cast<int32_t>(f)) {
      lw_.fmaps[f].alias_of = r;
      lw_.fmaps[r].graph_io |= lw_.fmaps[f].graph_io;
      lw_.fmaps[r].cpu_touched |= lw_.fmaps[f].cpu_touched;
    }
  }
  // Storage format and size (doc 8.2): NHCWB16 for NPU-only tensors, NHWC otherwise.
  std::vector<bool> nhwc(lw_.fmaps.size(), false);
  for (int32_t id : linear_) transposed_.push_back(id);
  for (int32_t id : transposed_) {
    if (id < 0) continue;
    const int32_t r = lw_.fmaps[id].alias_of >= 0 ? lw_.fmaps[id].alias_of : id;
    nhwc[r] = true;
  }
  for (size_t k = 0; k < lw_.fmaps.size(); ++k) {
    FeatureMap& f = lw_.fmaps[k];
    const int32_t r = f.alias_of >= 0 ? f.alias_of : static_cast<int32_t>(k);
    const FeatureMap& root = lw_.fmaps[r];
    const bool linear = root.graph_io || root.cpu_touched || nhwc[r];
    f.format = linear ? Format::kNhwc : Format::kNhcwb16;
    const int64_t c = f.format == Format::kNhcwb16 ? (f.shape.c + 15) / 16 * 16 : f.shape.c;
    f.bytes = int64_t{f.shape.h} * f.shape.w * c * (f.bits / 8);
  }
  return std::move(lw_);
}

}  // namespace

absl::StatusOr<Lowered> Lower(const Graph& graph, const EthosUConfig& config, const Arch& arch) {
  if (graph.subgraphs.empty()) return absl::InvalidArgumentError("graph has no subgraph");
  Lowerer l(graph, config, arch);
  return l.Run();
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
