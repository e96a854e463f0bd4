// Lowering of the IR graph to the NPU operations Vela would cost (doc 4.1, 10): activation
// fusion, reshape-like ops as aliases, SOFTMAX/MEAN/... decompositions, memory copies.
#include <algorithm>
#include <cstdint>
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

Act ActOf(Activation a) {
  switch (a) {
    case Activation::kNone: return Act::kNone;
    case Activation::kRelu: case Activation::kRelu6: case Activation::kReluN1To1:
      return Act::kRelu;
    case Activation::kTanh: return Act::kLut;
    default: return Act::kOther;
  }
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
  void LowerFullyConnected(int32_t i);
  void LowerMatMul(int32_t i);
  void LowerBinaryElementwise(int32_t i);
  void LowerSquaredDifference(int32_t i);
  void LowerPrelu(int32_t i);
  void LowerUnaryElementwise(int32_t i);
  void LowerActivation(int32_t i);
  void LowerPooling(int32_t i);
  void LowerReduce(int32_t i);
  void LowerResize(int32_t i);
  void LowerArgMax(int32_t i);
  void LowerReshape(int32_t i);
  void LowerDataMovement(int32_t i);
  void LowerLstm(int32_t i);
  void Copy(int32_t src, const std::string& name, FmRef in, FmRef out);
  void Softmax(int32_t i);
  bool TryFuseActivation(int32_t i, Act act);

  const Subgraph& sg_;
  const EthosUConfig& cfg_;
  const Arch& arch_;
  Lowered lw_;
  std::vector<int32_t> consumers_;
  std::vector<bool> is_output_;
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
  op.ifm = in;
  op.ofm = out;
  op.act = Act::kOther;  // a plain copy/rescale: no activation lookup
  Emit(op);
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
  if (sg_.tensors[in].dtype != sg_.tensors[o.outputs[0]].dtype && act != Act::kLut) return false;
  prev.act = act;
  if (act == Act::kLut) prev.needs_lut = true;
  prev.ofm = Ref(o.outputs[0]);
  lw_.ir_note[i] = absl::StrCat("fused into ", std::string(sg_.ops[prev.src_op].name()), " (op ",
                                prev.src_op, ")");
  return true;
}

void Lowerer::Softmax(int32_t i) {
  // Vela lowers SOFTMAX to ~27 NPU ops (doc 10): a max over depth, exp via LUT, a sum, a
  // reciprocal by CLZ + Newton-Raphson, and the final scaling. S = full shape, R = reduced.
  const Operator& o = sg_.ops[i];
  FmRef in = Ref(o.inputs[0]);
  FmRef out = Ref(o.outputs[0]);
  const Shape3 s = in.shape;
  const Shape3 r{s.h, s.w, 1};
  const std::string base = "Softmax/";
  {
    NpuOp mp = Base(i, base + "MaxPool", HwOp::kPooling);
    mp.pool = PoolKind::kMax;
    mp.ifm = in;
    mp.ifm.shape = {s.h * s.w, s.c, 1};
    mp.kh = 1, mp.kw = s.c;
    mp.ofm = TempRef({s.h * s.w, 1, 1}, in.bits);
    mp.macs = int64_t{s.c} * s.h * s.w;
    Emit(mp);
  }
  FmRef mx = lw_.ops.back().ofm;
  mx.shape = r;
  auto ew = [&](const std::string& n, EwKind k, FmRef a, FmRef b, bool has_b, Shape3 os,
                int32_t bits) {
    NpuOp e = Base(i, base + n, HwOp::kElementwise);
    e.ew = k;
    e.ifm = a;
    e.ifm2 = b;
    e.has_ifm2 = has_b;
    e.unary = !has_b;
    e.ofm = TempRef(os, bits);
    Emit(e);
    return lw_.ops.back().ofm;
  };
  FmRef scalar;
  scalar.scalar = true;
  scalar.bits = 32;
  FmRef exps = ew("Sub", EwKind::kSub, in, mx, true, s, 32);
  lw_.ops.back().act = Act::kLut;
  lw_.ops.back().needs_lut = true;
  FmRef sh = ew("Asr", EwKind::kShift, exps, scalar, true, s, 32);
  NpuOp rs = Base(i, base + "ReduceSum", HwOp::kReduceSum);
  rs.ifm = sh;  // ReduceSum sums over depth with a 1x1 kernel
  rs.ofm = TempRef(r, 32);
  rs.macs = int64_t{s.c} * s.h * s.w;
  Emit(rs);
  FmRef sum = lw_.ops.back().ofm;
  FmRef v = ew("CLZ", EwKind::kClz, sum, scalar, false, r, 32);
  v = ew("Sub", EwKind::kSub, v, scalar, true, r, 32);
  v = ew("Sub", EwKind::kSub, v, scalar, true, r, 32);
  v = ew("SHL", EwKind::kShift, sum, v, true, r, 32);
  v = ew("Mul", EwKind::kMul, v, scalar, true, r, 32);
  v = ew("Add", EwKind::kAdd, v, scalar, true, r, 32);
  for (int it = 0; it < 3; ++it) {
    FmRef t = ew("Mul", EwKind::kMul, v, v, true, r, 32);
    t = ew("Sub", EwKind::kSub, scalar, t, true, r, 32);
    t = ew("Mul", EwKind::kMul, v, t, true, r, 32);
    t = ew("Mul", EwKind::kMul, t, scalar, true, r, 32);
    v = ew("Add", EwKind::kAdd, v, t, true, r, 32);
  }
  FmRef p = ew("Mul", EwKind::kMul, exps, v, true, s, 32);
  NpuOp fin = Base(i, base + "Asr", HwOp::kElementwise);
  fin.ew = EwKind::kShift;
  fin.ifm = p;
  fin.ifm2 = scalar;
  fin.has_ifm2 = true;
  fin.ofm = out;
  Emit(fin);
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
  SetWeights(o, &op, 1, op.ofm.shape.c);
  const int64_t taps = int64_t{op.kh} * op.kw;
  if (o.kind == OpKind::kDepthwiseConv2D) {
    op.macs = taps * op.ofm.shape.elements();
  } else if (o.kind == OpKind::kTransposeConv) {
    const TransposeConvAttrs a = AttrsOr<TransposeConvAttrs>(o);
    op.macs = taps * op.ifm.shape.c * op.ofm.shape.elements() /
              std::max<int64_t>(1, int64_t{a.stride_h} * a.stride_w);
  } else {
    op.macs = taps * op.ifm.shape.c * op.ofm.shape.elements();
  }
  Emit(op);
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
  op.ifm.shape = {1, static_cast<int32_t>(batch), cin};
  op.ofm.shape = {1, static_cast<int32_t>(batch), cout};
  op.act = ActOf(a.activation);
  SetWeights(o, &op, 1, cout);
  op.macs = int64_t{cin} * cout * batch;
  Emit(op);
}

void Lowerer::LowerMatMul(int32_t i) {
  const Operator& o = sg_.ops[i];
  NpuOp op = Base(i, "MatMul", HwOp::kMatMul);
  op.ifm = In(o, 0);
  op.ifm2 = In(o, 1);
  op.has_ifm2 = true;
  op.ofm = Out(o);
  op.macs = op.ofm.shape.elements() * op.ifm.shape.c;
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
  Emit(op);
}

// (a - b)^2 as a SUB into a 32-bit temporary and a MUL of it with itself.
void Lowerer::LowerSquaredDifference(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef a = In(o, 0), b = In(o, 1), o0 = Out(o);
  NpuOp s = Base(i, "SquaredDifference/Sub", HwOp::kElementwise);
  s.ew = EwKind::kSub;
  s.ifm = a, s.ifm2 = b, s.has_ifm2 = true;
  s.ofm = TempRef(o0.shape, 32);
  Emit(s);
  NpuOp m = Base(i, "SquaredDifference/Mul", HwOp::kElementwise);
  m.ew = EwKind::kMul;
  m.ifm = lw_.ops.back().ofm, m.ifm2 = lw_.ops.back().ofm, m.has_ifm2 = true;
  m.ofm = o0;
  Emit(m);
}

// PRELU as max(x * alpha, relu(x)).
void Lowerer::LowerPrelu(int32_t i) {
  const Operator& o = sg_.ops[i];
  FmRef x = In(o, 0), al = In(o, 1), y = Out(o);
  NpuOp m = Base(i, "Prelu/Mul", HwOp::kElementwise);
  m.ew = EwKind::kMul, m.ifm = x, m.ifm2 = al, m.has_ifm2 = true;
  m.ofm = TempRef(y.shape, y.bits);
  Emit(m);
  NpuOp r = Base(i, "Prelu/Relu", HwOp::kPooling);
  r.ifm = x, r.ofm = TempRef(y.shape, y.bits), r.act = Act::kRelu;
  Emit(r);
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
  if ((o.kind == OpKind::kLogistic || o.kind == OpKind::kTanh) &&
      TryFuseActivation(i, Act::kLut)) {
    return;
  }
  Copy(i, name, In(o, 0), Out(o));
  lw_.ops.back().act = Act::kLut;
  lw_.ops.back().needs_lut = true;
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
void Lowerer::LowerReduce(int32_t i) {
  const Operator& o = sg_.ops[i];
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
  lw_.ir_note[i] = "no-op (reshape: shares its input's memory)";
}

// Transpose, concatenation, splits, padding, slices, gathers and rescales: copies between
// feature maps (a transpose is its own hardware operation).
void Lowerer::LowerDataMovement(int32_t i) {
  const Operator& o = sg_.ops[i];
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
      FmRef y = Out(o);
      for (size_t k = 0; k < o.inputs.size(); ++k) {
        if (o.inputs[k] == kNoTensor) continue;
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
      FmRef x = In(o, 0), y = Out(o);
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

// UNIDIRECTIONAL_SEQUENCE_LSTM: per time step, one FC per gate for the input and the
// recurrent weights, then the gate arithmetic (LUT sigmoids/tanh, multiplies, adds) on
// [batch, units].
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
  for (int32_t s = 0; s < std::max(steps, 1); ++s) {
    for (int g = 1; g <= 8; ++g) {
      if (g >= static_cast<int>(o.inputs.size()) || o.inputs[g] == kNoTensor) continue;
      NpuOp fc = Base(i, "Lstm/FullyConnected", HwOp::kVectorProduct);
      const int32_t cin = g <= 4 ? nin : units;
      fc.ifm = TempRef({1, batch, cin}, x.bits);
      fc.ofm = TempRef({1, batch, units}, 16);
      fc.weight_tensor = s == 0 ? o.inputs[g] : -1;
      fc.weight_bytes = static_cast<int64_t>(sg_.tensors[o.inputs[g]].num_bytes());
      fc.scale_bytes = 10 * int64_t{units};
      fc.macs = int64_t{cin} * units * batch;
      Emit(fc);
    }
    for (int e = 0; e < 10; ++e) {
      NpuOp ew = Base(i, "Lstm/Elementwise", HwOp::kElementwise);
      ew.ew = e % 2 ? EwKind::kMul : EwKind::kAdd;
      ew.ifm = TempRef({1, batch, units}, 16);
      ew.ifm2 = ew.ifm;
      ew.has_ifm2 = true;
      ew.ofm = TempRef({1, batch, units}, 16);
      if (e < 4) ew.act = Act::kLut, ew.needs_lut = true;
      Emit(ew);
    }
  }
  lw_.ops.back().ofm = y;
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
  for (FeatureMap& f : lw_.fmaps) {
    const FeatureMap& root = f.alias_of >= 0 ? lw_.fmaps[f.alias_of] : f;
    const bool linear = root.graph_io || root.cpu_touched;
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
