// Per-operator ONNX → mica conversions. See onnx_importer.h for the layout rules.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/base/status_macros.h"
#include "onnx/onnx_importer.h"

namespace mica {
namespace onnx_import {
namespace {

constexpr int kToNhwc[4] = {0, 2, 3, 1};
constexpr int kToNchw[4] = {0, 3, 1, 2};
constexpr int64_t kMaxWindow = int64_t{1} << 20;  // strides, dilations, kernel and pad bound

std::string ShapeStr(const std::vector<int64_t>& s) {
  return absl::StrCat("[", absl::StrJoin(s, ","), "]");
}

int64_t Product(const std::vector<int64_t>& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// Normalises an axis in [-rank, rank) to [0, rank).
absl::StatusOr<int64_t> NormAxis(const NodeCtx& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) {
    return n.Invalid(absl::StrCat("axis ", axis, " out of range for rank ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

bool IsIdentityPerm(const std::vector<int>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int>(i)) return false;
  }
  return true;
}

template <typename T>
std::vector<T> Permute(const std::vector<T>& in, const std::vector<int64_t>& shape,
                       const std::vector<int>& perm) {
  const size_t r = shape.size();
  std::vector<int64_t> out_shape(r), strides(r, 1);
  for (size_t i = r; i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  for (size_t i = 0; i < r; ++i) out_shape[i] = shape[static_cast<size_t>(perm[i])];
  std::vector<T> out(in.size());
  std::vector<int64_t> idx(r, 0);
  for (size_t o = 0; o < out.size(); ++o) {
    int64_t src = 0;
    for (size_t i = 0; i < r; ++i) src += idx[i] * strides[static_cast<size_t>(perm[i])];
    out[o] = in[static_cast<size_t>(src)];
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < out_shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// Numpy-style broadcast of two shapes.
bool Broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
               std::vector<int64_t>* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// Index into a (right-aligned, broadcast) operand of shape `s` for output index `idx`.
int64_t BroadcastOffset(const std::vector<int64_t>& s, const std::vector<int64_t>& idx) {
  int64_t off = 0;
  const size_t lead = idx.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) off = off * s[i] + (s[i] == 1 ? 0 : idx[lead + i]);
  return off;
}

template <typename T, typename F>
std::vector<T> BroadcastApply(const std::vector<T>& a, const std::vector<int64_t>& sa,
                              const std::vector<T>& b, const std::vector<int64_t>& sb,
                              const std::vector<int64_t>& so, F f) {
  const int64_t total = Product(so, 0, so.size());
  std::vector<T> out(static_cast<size_t>(total));
  std::vector<int64_t> idx(so.size(), 0);
  for (int64_t o = 0; o < total; ++o) {
    out[static_cast<size_t>(o)] = f(a[static_cast<size_t>(BroadcastOffset(sa, idx))],
                                    b[static_cast<size_t>(BroadcastOffset(sb, idx))]);
    for (size_t i = so.size(); i-- > 0;) {
      if (++idx[i] < so[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

// Sliding-window geometry of one Conv/Pool node over H and W.
struct Window {
  int64_t in[2], k[2], s[2], d[2], pb[2], pe[2], out[2];
  bool same = false;   // pads equal TFLite SAME padding exactly
  bool valid = false;  // no padding
  bool ceil_grew = false;  // ceil_mode made the output larger than floor mode
};

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

void ClassifyWindow(Window& w) {
  w.same = w.valid = true;
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = (w.k[i] - 1) * w.d[i] + 1;
    const int64_t total = std::max<int64_t>((CeilDiv(w.in[i], w.s[i]) - 1) * w.s[i] + eff - w.in[i], 0);
    if (w.pb[i] != total / 2 || w.pe[i] != total - total / 2) w.same = false;
    if (w.pb[i] != 0 || w.pe[i] != 0) w.valid = false;
  }
}

// Reads strides/dilations/pads/auto_pad (and ceil_mode) for a 2-D window.
absl::StatusOr<Window> ReadWindow(const NodeCtx& n, int64_t in_h, int64_t in_w, int64_t kh,
                                  int64_t kw, bool allow_ceil) {
  Window w;
  w.in[0] = in_h;
  w.in[1] = in_w;
  w.k[0] = kh;
  w.k[1] = kw;
  MICA_ASSIGN_OR_RETURN(auto strides, n.Ints("strides", {1, 1}));
  MICA_ASSIGN_OR_RETURN(auto dil, n.Ints("dilations", {1, 1}));
  MICA_ASSIGN_OR_RETURN(auto pads, n.Ints("pads", {0, 0, 0, 0}));
  MICA_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  MICA_ASSIGN_OR_RETURN(int64_t ceil_mode, n.Int("ceil_mode", 0));
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4) {
    return n.Invalid("strides, dilations and pads must have 2, 2 and 4 entries (2-D window)");
  }
  for (int i = 0; i < 2; ++i) {
    w.s[i] = strides[i];
    w.d[i] = dil[i];
    if (w.s[i] < 1 || w.s[i] > kMaxWindow || w.d[i] < 1 || w.d[i] > kMaxWindow ||
        w.k[i] < 1 || w.k[i] > kMaxWindow) {
      return n.Invalid(absl::StrCat("kernel ", w.k[i], ", stride ", w.s[i], " or dilation ",
                                    w.d[i], " out of range"));
    }
  }
  for (int64_t p : pads) {
    if (p < 0 || p > kMaxWindow) return n.Invalid(absl::StrCat("pad ", p, " out of range"));
  }
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = (w.k[i] - 1) * w.d[i] + 1;
    if (auto_pad == "NOTSET" || auto_pad.empty()) {
      w.pb[i] = pads[i];
      w.pe[i] = pads[i + 2];
    } else if (auto_pad == "VALID") {
      w.pb[i] = w.pe[i] = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = std::max<int64_t>((CeilDiv(w.in[i], w.s[i]) - 1) * w.s[i] + eff - w.in[i], 0);
      const int64_t small = total / 2;
      w.pb[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      w.pe[i] = total - w.pb[i];
    } else {
      return n.Invalid(absl::StrCat("unknown auto_pad '", auto_pad, "'"));
    }
    const int64_t span = w.in[i] + w.pb[i] + w.pe[i] - eff;
    if (span < 0) {
      return n.Invalid(absl::StrCat("kernel extent ", eff, " exceeds padded input ",
                                    w.in[i] + w.pb[i] + w.pe[i]));
    }
    w.out[i] = span / w.s[i] + 1;
    if (ceil_mode != 0) {
      int64_t out_c = CeilDiv(span, w.s[i]) + 1;
      // The last window must start inside the input or the leading pad.
      if ((out_c - 1) * w.s[i] >= w.in[i] + w.pb[i]) --out_c;
      if (out_c > w.out[i]) {
        if (!allow_ceil) return n.Unsupported("ceil_mode=1 changes the output size");
        w.pe[i] += (out_c - 1) * w.s[i] + eff - (w.in[i] + w.pb[i] + w.pe[i]);
        w.out[i] = out_c;
        w.ceil_grew = true;
      }
    }
  }
  ClassifyWindow(w);
  return w;
}

// Rearranges ONNX conv weights [M, I, kH, kW] into OHWI.
std::vector<float> OihwToOhwi(const std::vector<float>& w, int64_t m, int64_t i, int64_t kh,
                              int64_t kw) {
  std::vector<float> out(w.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < i; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[static_cast<size_t>(((o * kh + y) * kw + x) * i + c)] =
              w[static_cast<size_t>(((o * i + c) * kh + y) * kw + x)];
  return out;
}

}  // namespace

// --------------------------------------------------------------------------------------------
// Convolutions and matrix products

absl::Status OnnxImporter::ConvertConv(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const std::string& xname = n.node().input(0);
  if (x->rank() != 4 || x->is_int) {
    return n.Unsupported(absl::StrCat("only 2-D convolution of float rank-4 NCHW input is "
                                      "supported; input has shape ", ShapeStr(x->shape)));
  }
  MICA_ASSIGN_OR_RETURN(Value * w, ConstIn(n, 1, "weights"));
  if (w->is_int || w->rank() != 4) {
    return n.Invalid(absl::StrCat("weights must be a float [M, C/group, kH, kW] tensor; got ",
                                  ShapeStr(w->shape)));
  }
  const int64_t c_in = x->shape[1], m = w->shape[0], kh = w->shape[2], kw = w->shape[3];
  MICA_ASSIGN_OR_RETURN(int64_t group, n.Int("group", 1));
  if (group < 1 || c_in % group != 0 || w->shape[1] * group != c_in || m % group != 0) {
    return n.Invalid(absl::StrCat("group ", group, " does not fit input channels ", c_in,
                                  " and weights ", ShapeStr(w->shape)));
  }
  MICA_ASSIGN_OR_RETURN(auto ks, n.Ints("kernel_shape", {kh, kw}));
  if (ks != std::vector<int64_t>{kh, kw}) {
    return n.Invalid(absl::StrCat("kernel_shape ", ShapeStr(ks), " disagrees with weights ",
                                  ShapeStr(w->shape)));
  }
  const bool depthwise = group > 1 && group == c_in;
  std::vector<float> bias(static_cast<size_t>(m), 0.0f);
  if (n.HasInput(2)) {
    MICA_ASSIGN_OR_RETURN(Value * b, ConstIn(n, 2, "bias"));
    if (b->is_int || b->num_elements() != m || b->rank() != 1) {
      return n.Invalid(absl::StrCat("bias must be a float [", m, "] tensor; got ",
                                    ShapeStr(b->shape)));
    }
    bias = b->floats;
  }
  MICA_ASSIGN_OR_RETURN(Window win, ReadWindow(n, x->shape[2], x->shape[3], kh, kw, false));
  MICA_ASSIGN_OR_RETURN(int32_t src, AsNhwc(n, xname, *x));
  const std::vector<int64_t> in_phys = {x->shape[0], x->shape[2], x->shape[3], c_in};
  Padding padding = Padding::kValid;
  if (win.same && !win.valid) {
    padding = Padding::kSame;
  } else if (!win.valid) {
    MICA_ASSIGN_OR_RETURN(src, InsertPad(n, src, in_phys,
                                         {{0, 0}, {win.pb[0], win.pe[0]}, {win.pb[1], win.pe[1]},
                                          {0, 0}},
                                         0.0f, nullptr));
  }
  const std::string& oname = n.node().output(0);
  Foldable f;
  f.channels = m;
  f.channel_innermost = depthwise;
  Value out;
  out.shape = {x->shape[0], m, win.out[0], win.out[1]};
  out.nhwc = true;
  Conv2DAttrs ca;
  ca.padding = padding;
  ca.stride_h = static_cast<int32_t>(win.s[0]);
  ca.stride_w = static_cast<int32_t>(win.s[1]);
  ca.dilation_h = static_cast<int32_t>(win.d[0]);
  ca.dilation_w = static_cast<int32_t>(win.d[1]);
  if (depthwise) {
    // ONNX group g owns output channels [g*M', (g+1)*M'); TFLite's depthwise output channel
    // c*multiplier + j is the same order, so the filter is W[o][0][y][x] at [0][y][x][o].
    std::vector<float> wd(w->floats.size());
    for (int64_t o = 0; o < m; ++o)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xx = 0; xx < kw; ++xx)
          wd[static_cast<size_t>((y * kw + xx) * m + o)] =
              w->floats[static_cast<size_t>((o * kh + y) * kw + xx)];
    MICA_ASSIGN_OR_RETURN(int32_t wt,
                          AddFloatConst(&n, UniqueName(oname + "/weights"), {1, kh, kw, m}, wd));
    MICA_ASSIGN_OR_RETURN(int32_t bt, AddFloatConst(&n, UniqueName(oname + "/bias"), {m}, bias));
    f.weights = {wt};
    f.biases = {bt};
    DepthwiseConv2DAttrs a;
    a.padding = ca.padding;
    a.stride_h = ca.stride_h;
    a.stride_w = ca.stride_w;
    a.dilation_h = ca.dilation_h;
    a.dilation_w = ca.dilation_w;
    a.depth_multiplier = static_cast<int32_t>(m / c_in);
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
    f.op = AddOp(OpKind::kDepthwiseConv2D, {src, wt, bt}, {out.tensor}, a);
    fusable_act_[oname] = {f.op};
  } else if (group == 1) {
    MICA_ASSIGN_OR_RETURN(int32_t wt,
                          AddFloatConst(&n, UniqueName(oname + "/weights"), {m, kh, kw, c_in},
                                        OihwToOhwi(w->floats, m, c_in, kh, kw)));
    MICA_ASSIGN_OR_RETURN(int32_t bt, AddFloatConst(&n, UniqueName(oname + "/bias"), {m}, bias));
    f.weights = {wt};
    f.biases = {bt};
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
    f.op = AddOp(OpKind::kConv2D, {src, wt, bt}, {out.tensor}, ca);
    fusable_act_[oname] = {f.op};
  } else {
    // Other groups: SPLIT the input channels, one CONV_2D per group, CONCATENATION of the
    // outputs (group g's output channels are [g*M/G, (g+1)*M/G) in ONNX and after the concat).
    const int64_t cg = c_in / group, mg = m / group;
    const std::vector<int64_t> padded = {x->shape[0], x->shape[2] + win.pb[0] + win.pe[0],
                                         x->shape[3] + win.pb[1] + win.pe[1], c_in};
    std::vector<int64_t> part_in = padding == Padding::kSame ? in_phys : padded;
    part_in[3] = cg;
    std::vector<int32_t> parts_in, parts_out;
    for (int64_t g = 0; g < group; ++g) {
      MICA_ASSIGN_OR_RETURN(int32_t t,
                            AddTensor(&n, UniqueName(absl::StrCat(oname, "/group", g, "_in")), part_in));
      parts_in.push_back(t);
    }
    AddOp(OpKind::kSplit, {AddInt32Const(oname + "/split_axis", {}, {3}), src}, parts_in,
          SplitAttrs{static_cast<int32_t>(group)});
    std::vector<int64_t> part_out = PhysShape(out);
    part_out[3] = mg;
    for (int64_t g = 0; g < group; ++g) {
      const std::vector<float> wg(w->floats.begin() + g * mg * cg * kh * kw,
                                  w->floats.begin() + (g + 1) * mg * cg * kh * kw);
      MICA_ASSIGN_OR_RETURN(
          int32_t wt, AddFloatConst(&n, UniqueName(absl::StrCat(oname, "/group", g, "_weights")),
                                    {mg, kh, kw, cg}, OihwToOhwi(wg, mg, cg, kh, kw)));
      MICA_ASSIGN_OR_RETURN(
          int32_t bt, AddFloatConst(&n, UniqueName(absl::StrCat(oname, "/group", g, "_bias")), {mg},
                                    std::vector<float>(bias.begin() + g * mg,
                                                       bias.begin() + (g + 1) * mg)));
      MICA_ASSIGN_OR_RETURN(int32_t t,
                            AddTensor(&n, UniqueName(absl::StrCat(oname, "/group", g)), part_out));
      fusable_act_[oname].push_back(AddOp(OpKind::kConv2D, {parts_in[static_cast<size_t>(g)], wt, bt},
                                          {t}, ca));
      f.weights.push_back(wt);
      f.biases.push_back(bt);
      parts_out.push_back(t);
    }
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
    ConcatenationAttrs cat;
    cat.axis = 3;
    f.op = AddOp(OpKind::kConcatenation, parts_out, {out.tensor}, cat);
  }
  foldable_[oname] = f;
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertConvTranspose(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const std::string& xname = n.node().input(0);
  if (x->rank() != 4 || x->is_int) {
    return n.Unsupported(absl::StrCat("only 2-D transposed convolution of float rank-4 input is "
                                      "supported; input has shape ", ShapeStr(x->shape)));
  }
  MICA_ASSIGN_OR_RETURN(Value * w, ConstIn(n, 1, "weights"));
  if (w->is_int || w->rank() != 4 || w->shape[0] != x->shape[1]) {
    return n.Invalid(absl::StrCat("weights must be a float [C_in, C_out, kH, kW] tensor with C_in=",
                                  x->shape[1], "; got ", ShapeStr(w->shape)));
  }
  MICA_ASSIGN_OR_RETURN(int64_t group, n.Int("group", 1));
  if (group != 1) return n.Unsupported(absl::StrCat("group=", group, " (only 1 is supported)"));
  const int64_t c_in = w->shape[0], m = w->shape[1], kh = w->shape[2], kw = w->shape[3];
  MICA_ASSIGN_OR_RETURN(auto strides, n.Ints("strides", {1, 1}));
  MICA_ASSIGN_OR_RETURN(auto dil, n.Ints("dilations", {1, 1}));
  MICA_ASSIGN_OR_RETURN(auto pads, n.Ints("pads", {0, 0, 0, 0}));
  MICA_ASSIGN_OR_RETURN(auto opad, n.Ints("output_padding", {0, 0}));
  MICA_ASSIGN_OR_RETURN(auto oshape, n.Ints("output_shape", {}));
  MICA_ASSIGN_OR_RETURN(std::string auto_pad, n.String("auto_pad", "NOTSET"));
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4 || opad.size() != 2 ||
      (!oshape.empty() && oshape.size() != 2 && oshape.size() != 4)) {
    return n.Invalid("strides/dilations/pads/output_padding/output_shape have the wrong length");
  }
  if (dil[0] != 1 || dil[1] != 1) return n.Unsupported("dilated transposed convolution");
  if (oshape.size() == 4) oshape = {oshape[2], oshape[3]};
  int64_t pb[2], pe[2], out[2];
  const int64_t k[2] = {kh, kw};
  for (int i = 0; i < 2; ++i) {
    const int64_t in = x->shape[2 + i], s = strides[i];
    if (s < 1 || s > kMaxWindow || opad[i] < 0 || opad[i] >= std::max<int64_t>(s, 1) ||
        pads[i] < 0 || pads[i + 2] < 0 || pads[i] > kMaxWindow || pads[i + 2] > kMaxWindow) {
      return n.Invalid("stride, output_padding or pads out of range");
    }
    const int64_t full = s * (in - 1) + opad[i] + k[i];
    int64_t total = -1;
    if (!oshape.empty()) {
      total = full - oshape[i];
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      total = full - in * s;
    }
    if (total >= 0 || !oshape.empty()) {
      if (total < 0) return n.Unsupported("output_shape larger than the full output");
      const bool upper = auto_pad == "SAME_UPPER";
      pb[i] = upper ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    } else if (auto_pad == "VALID") {
      pb[i] = pe[i] = 0;
    } else if (auto_pad == "NOTSET" || auto_pad.empty()) {
      pb[i] = pads[i];
      pe[i] = pads[i + 2];
    } else {
      return n.Invalid(absl::StrCat("unknown auto_pad '", auto_pad, "'"));
    }
    out[i] = full - pb[i] - pe[i];
    if (out[i] < 1) return n.Invalid("pads remove the whole output");
  }
  std::vector<float> bias(static_cast<size_t>(m), 0.0f);
  if (n.HasInput(2)) {
    MICA_ASSIGN_OR_RETURN(Value * b, ConstIn(n, 2, "bias"));
    if (b->is_int || b->num_elements() != m || b->rank() != 1) {
      return n.Invalid(absl::StrCat("bias must be a float [", m, "] tensor"));
    }
    bias = b->floats;
  }
  // TFLite TRANSPOSE_CONV scatters input (y, x) to output y*s - pad + ky, with pad 0 for VALID
  // and, for SAME, half of max((ceil(O/s)-1)*s + k - O, 0); positions outside the output are
  // dropped. So a leading pad matching SAME is SAME; a zero leading pad is VALID (trailing
  // pads just crop); anything else is VALID into a larger output, then a SLICE.
  bool same = true, valid = true;
  for (int i = 0; i < 2; ++i) {
    const int64_t total =
        std::max<int64_t>((CeilDiv(out[i], strides[i]) - 1) * strides[i] + k[i] - out[i], 0);
    if (pb[i] != total / 2) same = false;
    if (pb[i] != 0) valid = false;
  }
  MICA_ASSIGN_OR_RETURN(int32_t src, AsNhwc(n, xname, *x));
  const std::string& oname = n.node().output(0);
  Foldable f;
  f.channels = m;
  std::vector<float> wt(w->floats.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t c = 0; c < c_in; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t xx = 0; xx < kw; ++xx)
          wt[static_cast<size_t>(((o * kh + y) * kw + xx) * c_in + c)] =
              w->floats[static_cast<size_t>(((c * m + o) * kh + y) * kw + xx)];
  MICA_ASSIGN_OR_RETURN(int32_t wtt,
                        AddFloatConst(&n, UniqueName(oname + "/weights"), {m, kh, kw, c_in}, wt));
  MICA_ASSIGN_OR_RETURN(int32_t btt, AddFloatConst(&n, UniqueName(oname + "/bias"), {m}, bias));
  f.weights = {wtt};
  f.biases = {btt};
  Value result;
  result.shape = {x->shape[0], m, out[0], out[1]};
  result.nhwc = true;
  const bool need_slice = !same && !valid;
  const std::vector<int64_t> conv_shape = {x->shape[0], out[0] + (need_slice ? pb[0] : 0),
                                           out[1] + (need_slice ? pb[1] : 0), m};
  MICA_ASSIGN_OR_RETURN(int32_t conv_out,
                        AddTensor(&n, need_slice ? UniqueName(oname + "/full") : oname, conv_shape));
  TransposeConvAttrs a;
  a.padding = same && !valid ? Padding::kSame : Padding::kValid;
  a.stride_h = static_cast<int32_t>(strides[0]);
  a.stride_w = static_cast<int32_t>(strides[1]);
  std::vector<int32_t> os(conv_shape.begin(), conv_shape.end());
  f.op = AddOp(OpKind::kTransposeConv,
               {AddInt32Const(oname + "/output_shape", {4}, os), wtt, src, btt},
               {conv_out}, a);
  if (need_slice) {
    MICA_ASSIGN_OR_RETURN(result.tensor, AddTensor(&n, oname, PhysShape(result)));
    const std::vector<int64_t> rs = PhysShape(result);
    AddOp(OpKind::kSlice,
          {conv_out,
           AddInt32Const(oname + "/begin", {4},
                         {0, static_cast<int32_t>(pb[0]), static_cast<int32_t>(pb[1]), 0}),
           AddInt32Const(oname + "/size", {4}, std::vector<int32_t>(rs.begin(), rs.end()))},
          {result.tensor});
  } else {
    result.tensor = conv_out;
    foldable_[oname] = f;
    fusable_act_[oname] = {f.op};
  }
  return SetOut(n, 0, std::move(result));
}

absl::Status OnnxImporter::ConvertGemm(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * a, In(n, 0));
  MICA_ASSIGN_OR_RETURN(Value * b, In(n, 1));
  const std::string& aname = n.node().input(0);
  const std::string& bname = n.node().input(1);
  MICA_ASSIGN_OR_RETURN(int64_t trans_a, n.Int("transA", 0));
  MICA_ASSIGN_OR_RETURN(int64_t trans_b, n.Int("transB", 0));
  MICA_ASSIGN_OR_RETURN(float alpha, n.Float("alpha", 1.0f));
  MICA_ASSIGN_OR_RETURN(float beta, n.Float("beta", 1.0f));
  if (a->rank() != 2 || b->rank() != 2 || a->is_int || b->is_int) {
    return n.Invalid(absl::StrCat("A and B must be float 2-D; got ", ShapeStr(a->shape), " and ",
                                  ShapeStr(b->shape)));
  }
  const int64_t m = trans_a ? a->shape[1] : a->shape[0];
  const int64_t k = trans_a ? a->shape[0] : a->shape[1];
  const int64_t kb = trans_b ? b->shape[1] : b->shape[0];
  const int64_t nn = trans_b ? b->shape[0] : b->shape[1];
  if (k != kb) {
    return n.Invalid(absl::StrCat("inner dimensions differ: A ", ShapeStr(a->shape), " B ",
                                  ShapeStr(b->shape), " transA=", trans_a, " transB=", trans_b));
  }
  // C: folded into the FC bias when it broadcasts along N only; otherwise a separate ADD.
  std::vector<float> bias(static_cast<size_t>(nn), 0.0f);
  Value* c = nullptr;
  bool c_in_bias = false;
  if (n.HasInput(2)) {
    MICA_ASSIGN_OR_RETURN(c, In(n, 2));
    std::vector<int64_t> bs;
    if (c->is_int || !Broadcast(c->shape, {m, nn}, &bs) || bs != std::vector<int64_t>{m, nn}) {
      return n.Invalid(absl::StrCat("C ", ShapeStr(c->shape), " does not broadcast to [", m, ",",
                                    nn, "]"));
    }
    const int64_t cn = c->num_elements();
    const bool along_n = cn == 1 || (cn == nn && c->shape.back() == nn);
    if (c->is_const && along_n) {
      for (int64_t j = 0; j < nn; ++j) bias[static_cast<size_t>(j)] = beta * c->floats[cn == 1 ? 0 : static_cast<size_t>(j)];
      c_in_bias = true;
    }
  }
  const std::string& oname = n.node().output(0);
  int32_t src;
  MICA_ASSIGN_OR_RETURN(src, AsPlain(n, aname, *a));
  if (trans_a) {
    MICA_ASSIGN_OR_RETURN(int32_t t, AddTensor(&n, UniqueName(aname + "/T"), {m, k}));
    AddOp(OpKind::kTranspose, {src, AddInt32Const(aname + "/T_perm", {2}, {1, 0})}, {t});
    src = t;
  }
  const bool has_add = c != nullptr && !c_in_bias;
  Value out;
  out.shape = {m, nn};
  MICA_ASSIGN_OR_RETURN(int32_t mm_out,
                        AddTensor(&n, has_add ? UniqueName(oname + "/matmul") : oname, {m, nn}));
  Foldable f;
  f.channels = nn;
  if (b->is_const) {
    std::vector<float> wt(static_cast<size_t>(nn * k));
    for (int64_t j = 0; j < nn; ++j)
      for (int64_t i = 0; i < k; ++i)
        wt[static_cast<size_t>(j * k + i)] =
            alpha * b->floats[static_cast<size_t>(trans_b ? j * k + i : i * nn + j)];
    MICA_ASSIGN_OR_RETURN(int32_t wtt, AddFloatConst(&n, UniqueName(oname + "/weights"), {nn, k}, wt));
    MICA_ASSIGN_OR_RETURN(int32_t btt, AddFloatConst(&n, UniqueName(oname + "/bias"), {nn}, bias));
    f.weights = {wtt};
    f.biases = {btt};
    f.op = AddOp(OpKind::kFullyConnected, {src, wtt, btt}, {mm_out}, FullyConnectedAttrs{});
  } else {
    MICA_ASSIGN_OR_RETURN(int32_t bt, AsPlain(n, bname, *b));
    BatchMatMulAttrs bm;
    bm.adj_y = trans_b != 0;
    int32_t prod = mm_out;
    if (alpha != 1.0f || c_in_bias) {
      MICA_ASSIGN_OR_RETURN(prod, AddTensor(&n, UniqueName(oname + "/ab"), {m, nn}));
    }
    AddOp(OpKind::kBatchMatMul, {src, bt}, {prod}, bm);
    if (alpha != 1.0f) {
      MICA_ASSIGN_OR_RETURN(int32_t al, AddFloatConst(&n, UniqueName(oname + "/alpha"), {1}, {alpha}));
      int32_t dst = mm_out;
      if (c_in_bias) {
        MICA_ASSIGN_OR_RETURN(dst, AddTensor(&n, UniqueName(oname + "/alpha_ab"), {m, nn}));
      }
      AddOp(OpKind::kMul, {prod, al}, {dst}, ElementwiseAttrs{});
      prod = dst;
    }
    if (c_in_bias) {
      MICA_ASSIGN_OR_RETURN(int32_t bc, AddFloatConst(&n, UniqueName(oname + "/bias"), {nn}, bias));
      AddOp(OpKind::kAdd, {prod, bc}, {mm_out}, ElementwiseAttrs{});
    }
  }
  if (has_add) {
    int32_t ct;
    if (c->is_const) {
      std::vector<float> scaled = c->floats;
      for (float& v : scaled) v *= beta;
      MICA_ASSIGN_OR_RETURN(ct, AddFloatConst(&n, UniqueName(oname + "/C"), c->shape, scaled));
    } else {
      if (beta != 1.0f) return n.Unsupported("beta != 1 with a non-constant C");
      MICA_ASSIGN_OR_RETURN(ct, AsPlain(n, n.node().input(2), *c));
    }
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, {m, nn}));
    fusable_act_[oname] = {AddOp(OpKind::kAdd, {mm_out, ct}, {out.tensor}, ElementwiseAttrs{})};
  } else {
    out.tensor = mm_out;
    if (f.op >= 0) {
      foldable_[oname] = f;
      fusable_act_[oname] = {f.op};
    } else {
      fusable_act_[oname] = {static_cast<int32_t>(sg_->ops.size() - 1)};
    }
  }
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertMatMul(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * a, In(n, 0));
  MICA_ASSIGN_OR_RETURN(Value * b, In(n, 1));
  const std::string& aname = n.node().input(0);
  const std::string& oname = n.node().output(0);
  if (a->is_int || b->is_int || a->rank() < 1 || b->rank() < 1) {
    return n.Invalid("MatMul needs float inputs of rank >= 1");
  }
  const int64_t k = a->shape.back();
  Value out;
  if (b->is_const && b->rank() == 2) {
    if (b->shape[0] != k) {
      return n.Invalid(absl::StrCat("inner dimensions differ: A ", ShapeStr(a->shape), " B ",
                                    ShapeStr(b->shape)));
    }
    const int64_t nn = b->shape[1];
    MICA_ASSIGN_OR_RETURN(int32_t src, AsPlain(n, aname, *a));
    std::vector<float> wt(static_cast<size_t>(nn * k));
    for (int64_t j = 0; j < nn; ++j)
      for (int64_t i = 0; i < k; ++i)
        wt[static_cast<size_t>(j * k + i)] = b->floats[static_cast<size_t>(i * nn + j)];
    Foldable f;
    f.channels = nn;
    MICA_ASSIGN_OR_RETURN(int32_t wtt, AddFloatConst(&n, UniqueName(oname + "/weights"), {nn, k}, wt));
    MICA_ASSIGN_OR_RETURN(int32_t btt, AddFloatConst(&n, UniqueName(oname + "/bias"), {nn},
                                                std::vector<float>(static_cast<size_t>(nn), 0.0f)));
    f.weights = {wtt};
    f.biases = {btt};
    out.shape = a->shape;
    out.shape.back() = nn;
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, out.shape));
    FullyConnectedAttrs fa;
    fa.keep_num_dims = a->rank() != 2;
    f.op = AddOp(OpKind::kFullyConnected, {src, wtt, btt}, {out.tensor}, fa);
    foldable_[oname] = f;
    fusable_act_[oname] = {f.op};
    return SetOut(n, 0, std::move(out));
  }
  if (a->rank() < 2 || b->rank() < 2) {
    return n.Unsupported("MatMul with a 1-D operand and a non-constant or non-2-D B");
  }
  const size_t ra = a->rank(), rb = b->rank();
  if (b->shape[rb - 2] != k) {
    return n.Invalid(absl::StrCat("inner dimensions differ: A ", ShapeStr(a->shape), " B ",
                                  ShapeStr(b->shape)));
  }
  std::vector<int64_t> batch;
  if (!Broadcast(std::vector<int64_t>(a->shape.begin(), a->shape.end() - 2),
                 std::vector<int64_t>(b->shape.begin(), b->shape.end() - 2), &batch)) {
    return n.Invalid("batch dimensions do not broadcast");
  }
  out.shape = batch;
  out.shape.push_back(a->shape[ra - 2]);
  out.shape.push_back(b->shape[rb - 1]);
  MICA_ASSIGN_OR_RETURN(int32_t ta, AsPlain(n, aname, *a));
  MICA_ASSIGN_OR_RETURN(int32_t tb, AsPlain(n, n.node().input(1), *b));
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, out.shape));
  AddOp(OpKind::kBatchMatMul, {ta, tb}, {out.tensor}, BatchMatMulAttrs{});
  return SetOut(n, 0, std::move(out));
}

// --------------------------------------------------------------------------------------------
// Elementwise

absl::Status OnnxImporter::ConvertBinary(const NodeCtx& n, OpKind kind) {
  MICA_ASSIGN_OR_RETURN(Value * a, In(n, 0));
  MICA_ASSIGN_OR_RETURN(Value * b, In(n, 1));
  std::vector<int64_t> shape;
  if (!Broadcast(a->shape, b->shape, &shape)) {
    return n.Invalid(absl::StrCat("shapes ", ShapeStr(a->shape), " and ", ShapeStr(b->shape),
                                  " do not broadcast"));
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if ((count *= std::max<int64_t>(d, 1)) > kMaxElements) return n.Invalid("result too large");
  }
  if (a->is_const && b->is_const) {
    if (a->is_int != b->is_int) return n.Invalid("mixed integer and float constants");
    if (a->is_int && kind == OpKind::kPrelu) return n.Unsupported("integer PRelu");
    MICA_RETURN_IF_ERROR(ChargeFolded(n, count));
    Value out;
    out.is_const = true;
    out.is_int = a->is_int;
    out.shape = shape;
    if (a->is_int) {
      a->Unpack();
      b->Unpack();
      bool div0 = false;
      out.ints = BroadcastApply<int64_t>(a->ints, a->shape, b->ints, b->shape, shape,
                                         [&](int64_t x, int64_t y) -> int64_t {
        switch (kind) {
          case OpKind::kAdd: return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
          case OpKind::kSub: return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
          case OpKind::kMul: return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
          case OpKind::kDiv:
            if (y == 0 || (y == -1 && x == std::numeric_limits<int64_t>::min())) {
              div0 = true;
              return 0;
            }
            return x / y;
          case OpKind::kMaximum: return std::max(x, y);
          default: return std::min(x, y);
        }
      });
      if (div0) return n.Invalid("integer division by zero in constant arithmetic");
    } else {
      out.floats = BroadcastApply<float>(a->floats, a->shape, b->floats, b->shape, shape,
                                         [&](float x, float y) -> float {
        switch (kind) {
          case OpKind::kAdd: return x + y;
          case OpKind::kSub: return x - y;
          case OpKind::kMul: return x * y;
          case OpKind::kDiv: return x / y;
          case OpKind::kMaximum: return std::max(x, y);
          case OpKind::kPrelu: return x < 0.0f ? x * y : x;
          default: return std::min(x, y);
        }
      });
    }
    return SetOut(n, 0, std::move(out));
  }
  if (a->is_int || b->is_int) return n.Unsupported("integer arithmetic on activations");

  // A per-channel constant added to (or subtracted from) a Conv/Gemm/MatMul output that has
  // no other consumer is that op's bias.
  if (kind == OpKind::kAdd || kind == OpKind::kSub) {
    std::string aname = n.node().input(0);
    if (kind == OpKind::kAdd && a->is_const && foldable_.count(n.node().input(1))) {
      std::swap(a, b);
      aname = n.node().input(1);
    }
    auto it = foldable_.find(aname);
    if (it != foldable_.end() && Uses(aname) == 1 && b->is_const && shape == a->shape) {
      const Foldable& f = it->second;
      // The channel axis: 1 for (nhwc) convolution outputs, the last for matrix products.
      const int64_t ch_axis = a->nhwc ? 1 : static_cast<int64_t>(a->rank()) - 1;
      const int64_t lead = static_cast<int64_t>(a->rank() - b->rank());
      bool per_channel = true;
      int64_t cdim = 1;
      for (size_t i = 0; i < b->rank(); ++i) {
        const int64_t axis = lead + static_cast<int64_t>(i);
        if (axis == ch_axis) {
          cdim = b->shape[i];
        } else if (b->shape[i] != 1) {
          per_channel = false;
        }
      }
      if (per_channel && (cdim == f.channels || cdim == 1)) {
        const float sign = kind == OpKind::kAdd ? 1.0f : -1.0f;
        const int64_t per = f.channels / static_cast<int64_t>(f.biases.size());
        for (int64_t c = 0; c < f.channels; ++c) {
          std::vector<float>& bias = pending_floats_[f.biases[static_cast<size_t>(c / per)]];
          bias[static_cast<size_t>(c % per)] +=
              sign * b->floats[cdim == 1 ? 0 : static_cast<size_t>(c)];
        }
        Value out = *a;
        foldable_[n.node().output(0)] = f;
        auto fa = fusable_act_.find(aname);
        if (fa != fusable_act_.end()) fusable_act_[n.node().output(0)] = fa->second;
        return SetOut(n, 0, std::move(out));
      }
    }
  }

  const bool nhwc = shape.size() == 4 && ((a->nhwc && !a->is_const) || (b->nhwc && !b->is_const));
  auto operand = [&](Value* v, const std::string& name) -> absl::StatusOr<int32_t> {
    if (!nhwc) return AsPlain(n, name, *v);
    if (v->rank() == 4) return AsNhwc(n, name, *v);
    if (v->num_elements() == 1) return AsPlain(n, name, *v);
    // Lower-rank operands broadcast against the trailing logical (C, H, W) dims: lift to rank
    // 4 first, then to NHWC.
    Value lifted;
    lifted.shape = std::vector<int64_t>(4 - v->rank(), 1);
    lifted.shape.insert(lifted.shape.end(), v->shape.begin(), v->shape.end());
    const std::string lname = name + "/rank4";
    if (v->is_const) {
      lifted.is_const = true;
      lifted.floats = v->floats;
    } else {
      MICA_ASSIGN_OR_RETURN(int32_t src, AsPlain(n, name, *v));
      MICA_ASSIGN_OR_RETURN(lifted.tensor, InsertReshape(n, src, lifted.shape, lname));
    }
    auto [it, inserted] = values_.try_emplace(UniqueName(lname + "#"), std::move(lifted));
    return AsNhwc(n, it->first, it->second);
  };
  MICA_ASSIGN_OR_RETURN(int32_t ta, operand(a, n.node().input(0)));
  MICA_ASSIGN_OR_RETURN(int32_t tb, operand(b, n.node().input(1)));
  Value out;
  out.shape = shape;
  out.nhwc = nhwc;
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, n.node().output(0), PhysShape(out)));
  OpAttrs attrs;
  if (kind == OpKind::kAdd || kind == OpKind::kSub || kind == OpKind::kMul ||
      kind == OpKind::kDiv) {
    attrs = ElementwiseAttrs{};
  }
  const int32_t op = AddOp(kind, {ta, tb}, {out.tensor}, attrs);
  if (std::holds_alternative<ElementwiseAttrs>(attrs)) fusable_act_[n.node().output(0)] = {op};
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertRelu(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(bool fused, TryFuseActivation(n, Activation::kRelu));
  if (fused) return absl::OkStatus();
  return Unary(n, OpKind::kRelu);
}

absl::Status OnnxImporter::ConvertClip(const NodeCtx& n) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lo = -kInf, hi = kInf;
  if (opset_ < 11) {
    MICA_ASSIGN_OR_RETURN(lo, n.Float("min", -kInf));
    MICA_ASSIGN_OR_RETURN(hi, n.Float("max", kInf));
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!n.HasInput(i)) continue;
      MICA_ASSIGN_OR_RETURN(Value * v, ConstIn(n, i, i == 1 ? "min" : "max"));
      if (v->num_elements() != 1) return n.Invalid("min/max must be scalars");
      v->Unpack();
      const float f = v->is_int ? static_cast<float>(v->ints[0]) : v->floats[0];
      (i == 1 ? lo : hi) = f;
    }
  }
  if (std::isnan(lo) || std::isnan(hi) || lo > hi) {
    return n.Invalid(absl::StrCat("bounds [", lo, ", ", hi, "] are invalid"));
  }
  if (lo <= std::numeric_limits<float>::lowest()) lo = -kInf;
  if (hi >= std::numeric_limits<float>::max()) hi = kInf;
  Activation act = Activation::kNone;
  OpKind kind = OpKind::kOpaque;
  if (lo == 0.0f && hi == 6.0f) {
    act = Activation::kRelu6;
    kind = OpKind::kRelu6;
  } else if (lo == -1.0f && hi == 1.0f) {
    act = Activation::kReluN1To1;
    kind = OpKind::kReluN1To1;
  } else if (lo == 0.0f && hi == kInf) {
    act = Activation::kRelu;
    kind = OpKind::kRelu;
  }
  if (act != Activation::kNone) {
    MICA_ASSIGN_OR_RETURN(bool fused, TryFuseActivation(n, act));
    if (fused) return absl::OkStatus();
    return Unary(n, kind);
  }
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  if (x->is_int) return n.Unsupported("integer input");
  const std::string& xname = n.node().input(0);
  const std::string& oname = n.node().output(0);
  Value out = *x;
  if (lo == -kInf && hi == kInf) return SetOut(n, 0, std::move(out));
  out.is_const = false;
  out.floats.clear();
  int32_t cur;
  if (x->is_const) {
    MICA_ASSIGN_OR_RETURN(cur, AsPlain(n, xname, *x));
    out.nhwc = false;
  } else {
    cur = x->tensor;
  }
  const std::vector<int64_t> phys = PhysShape(out);
  if (lo != -kInf) {
    MICA_ASSIGN_OR_RETURN(int32_t c, AddFloatConst(&n, UniqueName(oname + "/min"), {}, {lo}));
    MICA_ASSIGN_OR_RETURN(int32_t t,
                          AddTensor(&n, hi == kInf ? oname : UniqueName(oname + "/lower"), phys));
    AddOp(OpKind::kMaximum, {cur, c}, {t});
    cur = t;
  }
  if (hi != kInf) {
    MICA_ASSIGN_OR_RETURN(int32_t c, AddFloatConst(&n, UniqueName(oname + "/max"), {}, {hi}));
    MICA_ASSIGN_OR_RETURN(int32_t t, AddTensor(&n, oname, phys));
    AddOp(OpKind::kMinimum, {cur, c}, {t});
    cur = t;
  }
  out.tensor = cur;
  return SetOut(n, 0, std::move(out));
}

// --------------------------------------------------------------------------------------------
// Pooling and normalisation

absl::Status OnnxImporter::ConvertPool(const NodeCtx& n, bool is_max) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const std::string& xname = n.node().input(0);
  if (x->rank() != 4 || x->is_int) {
    return n.Unsupported(absl::StrCat("only 2-D pooling of float rank-4 input is supported; "
                                      "input has shape ", ShapeStr(x->shape)));
  }
  if (n.node().output_size() > 1 && !n.node().output(1).empty() && Uses(n.node().output(1)) > 0) {
    return n.Unsupported("the Indices output");
  }
  MICA_ASSIGN_OR_RETURN(auto ks, n.Ints("kernel_shape", {}));
  if (ks.size() != 2) return n.Invalid("kernel_shape must have 2 entries");
  MICA_ASSIGN_OR_RETURN(int64_t count_include_pad, n.Int("count_include_pad", 0));
  MICA_ASSIGN_OR_RETURN(Window win, ReadWindow(n, x->shape[2], x->shape[3], ks[0], ks[1],
                                               is_max || count_include_pad == 0));
  if (win.d[0] != 1 || win.d[1] != 1) return n.Unsupported("dilated pooling");
  if (!is_max && count_include_pad != 0 && win.ceil_grew) {
    return n.Unsupported("ceil_mode=1 with count_include_pad=1 changes the output size");
  }
  // Average pooling that excludes padding, with pads TFLite cannot express: average over the
  // zero-padded input (which divides by kH*kW), then rescale each output position by
  // kH*kW / (number of real input cells in its window), a constant known at import time.
  std::vector<float> rescale;
  MICA_ASSIGN_OR_RETURN(int32_t src, AsNhwc(n, xname, *x));
  const std::vector<int64_t> in_phys = {x->shape[0], x->shape[2], x->shape[3], x->shape[1]};
  // TFLite's SAME pooling ignores padded cells, like ONNX MaxPool and AveragePool with
  // count_include_pad=0. Other pads become an explicit PAD (-inf for max, 0 for an average
  // that counts padding).
  Padding padding = Padding::kValid;
  if (win.valid) {
  } else if (win.same && (is_max || count_include_pad == 0)) {
    padding = Padding::kSame;
  } else if (is_max || count_include_pad != 0) {
    const float value = is_max ? std::numeric_limits<float>::lowest() : 0.0f;
    MICA_ASSIGN_OR_RETURN(src, InsertPad(n, src, in_phys,
                                         {{0, 0}, {win.pb[0], win.pe[0]}, {win.pb[1], win.pe[1]},
                                          {0, 0}},
                                         value, nullptr));
  } else {
    auto counts = [&](int i) {
      std::vector<int64_t> c(static_cast<size_t>(win.out[i]));
      for (int64_t o = 0; o < win.out[i]; ++o) {
        const int64_t begin = o * win.s[i] - win.pb[i];
        const int64_t lo = std::max<int64_t>(begin, 0);
        const int64_t hi = std::min<int64_t>(begin + win.k[i], win.in[i]);
        c[static_cast<size_t>(o)] = std::max<int64_t>(hi - lo, 0);
      }
      return c;
    };
    const auto ch = counts(0), cw = counts(1);
    const int64_t total = win.out[0] * win.out[1];
    if (total > kMaxElements / 4) return n.Invalid("output too large");
    MICA_RETURN_IF_ERROR(ChargeFolded(n, total));
    rescale.reserve(static_cast<size_t>(total));
    for (int64_t oy : ch) {
      for (int64_t ox : cw) {
        if (oy * ox == 0) return n.Unsupported("a pooling window lies entirely in the padding");
        rescale.push_back(static_cast<float>(win.k[0] * win.k[1]) / static_cast<float>(oy * ox));
      }
    }
    MICA_ASSIGN_OR_RETURN(src, InsertPad(n, src, in_phys,
                                         {{0, 0}, {win.pb[0], win.pe[0]}, {win.pb[1], win.pe[1]},
                                          {0, 0}},
                                         0.0f, nullptr));
  }
  Pool2DAttrs a;
  a.padding = padding;
  a.stride_h = static_cast<int32_t>(win.s[0]);
  a.stride_w = static_cast<int32_t>(win.s[1]);
  a.filter_h = static_cast<int32_t>(win.k[0]);
  a.filter_w = static_cast<int32_t>(win.k[1]);
  Value out;
  out.shape = {x->shape[0], x->shape[1], win.out[0], win.out[1]};
  out.nhwc = true;
  const std::string& oname = n.node().output(0);
  if (rescale.empty()) {
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
    AddOp(is_max ? OpKind::kMaxPool2D : OpKind::kAveragePool2D, {src}, {out.tensor}, a);
    return SetOut(n, 0, std::move(out));
  }
  MICA_ASSIGN_OR_RETURN(int32_t pooled, AddTensor(&n, UniqueName(oname + "/sum_avg"), PhysShape(out)));
  AddOp(OpKind::kAveragePool2D, {src}, {pooled}, a);
  MICA_ASSIGN_OR_RETURN(int32_t scale, AddFloatConst(&n, UniqueName(oname + "/count_rescale"),
                                                     {1, win.out[0], win.out[1], 1}, rescale));
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
  AddOp(OpKind::kMul, {pooled, scale}, {out.tensor}, ElementwiseAttrs{});
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertGlobalPool(const NodeCtx& n, bool is_max) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  if (x->rank() != 4 || x->is_int) {
    return n.Unsupported(absl::StrCat("only rank-4 float input is supported; input has shape ",
                                      ShapeStr(x->shape)));
  }
  MICA_ASSIGN_OR_RETURN(int32_t src, AsNhwc(n, n.node().input(0), *x));
  Value out;
  out.shape = {x->shape[0], x->shape[1], 1, 1};
  out.nhwc = true;
  const std::string& oname = n.node().output(0);
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
  AddOp(is_max ? OpKind::kReduceMax : OpKind::kMean,
        {src, AddInt32Const(oname + "/axes", {2}, {1, 2})}, {out.tensor}, ReduceAttrs{true});
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertBatchNorm(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const std::string xname = n.node().input(0);
  const std::string& oname = n.node().output(0);
  if (x->rank() < 2 || x->is_int) return n.Invalid("input must be float of rank >= 2");
  MICA_ASSIGN_OR_RETURN(int64_t training, n.Int("training_mode", 0));
  MICA_ASSIGN_OR_RETURN(int64_t spatial, n.Int("spatial", 1));
  if (training != 0) return n.Unsupported("training_mode=1");
  if (spatial != 1) return n.Unsupported("spatial=0");
  for (int i = 1; i < n.node().output_size(); ++i) {
    if (!n.node().output(i).empty() && Uses(n.node().output(i)) > 0) {
      return n.Unsupported("training outputs (running mean/var) are consumed");
    }
  }
  const int64_t c = x->shape[1];
  std::vector<const std::vector<float>*> p;
  const char* names[] = {"scale", "B", "mean", "var"};
  for (int i = 1; i <= 4; ++i) {
    MICA_ASSIGN_OR_RETURN(Value * v, ConstIn(n, i, names[i - 1]));
    if (v->is_int || v->num_elements() != c || v->rank() != 1) {
      return n.Invalid(absl::StrCat(names[i - 1], " must be a float [", c, "] tensor; got ",
                                    ShapeStr(v->shape)));
    }
    p.push_back(&v->floats);
  }
  MICA_ASSIGN_OR_RETURN(float eps, n.Float("epsilon", 1e-5f));
  std::vector<float> mul(static_cast<size_t>(c)), add(static_cast<size_t>(c));
  for (size_t i = 0; i < mul.size(); ++i) {
    const float var = (*p[3])[i] + eps;
    if (!(var > 0.0f)) {
      return n.Invalid(absl::StrCat("var + epsilon is ", var, " for channel ", i));
    }
    mul[i] = (*p[0])[i] / std::sqrt(var);
    add[i] = (*p[1])[i] - (*p[2])[i] * mul[i];
  }
  auto it = foldable_.find(xname);
  if (it != foldable_.end() && Uses(xname) == 1 && it->second.channels == c) {
    const Foldable f = it->second;
    const size_t parts = f.weights.size();
    const size_t cpart = static_cast<size_t>(c) / parts;  // output channels per part
    for (size_t part = 0; part < parts; ++part) {
      std::vector<float>& w = pending_floats_[f.weights[part]];
      std::vector<float>& b = pending_floats_[f.biases[part]];
      const size_t per = w.size() / cpart;
      const size_t base = part * cpart;
      for (size_t i = 0; i < w.size(); ++i) {
        w[i] *= mul[base + (f.channel_innermost ? i % cpart : i / per)];
      }
      for (size_t i = 0; i < b.size(); ++i) b[i] = b[i] * mul[base + i] + add[base + i];
    }
    Value out = *x;
    foldable_.erase(it);
    foldable_[oname] = f;
    auto fa = fusable_act_.find(xname);
    if (fa != fusable_act_.end()) {
      fusable_act_[oname] = fa->second;
      fusable_act_.erase(fa);
    }
    return SetOut(n, 0, std::move(out));
  }
  Value out;
  out.shape = x->shape;
  int32_t src;
  std::vector<int64_t> cshape = {c};
  if (x->rank() == 4) {
    MICA_ASSIGN_OR_RETURN(src, AsNhwc(n, xname, *x));
    out.nhwc = true;
  } else {
    MICA_ASSIGN_OR_RETURN(src, AsPlain(n, xname, *x));
    cshape.resize(x->rank() - 1, 1);  // [C, 1, ...] broadcasts over trailing dims
  }
  MICA_ASSIGN_OR_RETURN(int32_t mc, AddFloatConst(&n, UniqueName(oname + "/scale"), cshape, mul));
  MICA_ASSIGN_OR_RETURN(int32_t ac, AddFloatConst(&n, UniqueName(oname + "/shift"), cshape, add));
  MICA_ASSIGN_OR_RETURN(int32_t mid, AddTensor(&n, UniqueName(oname + "/scaled"), PhysShape(out)));
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
  AddOp(OpKind::kMul, {src, mc}, {mid}, ElementwiseAttrs{});
  fusable_act_[oname] = {AddOp(OpKind::kAdd, {mid, ac}, {out.tensor}, ElementwiseAttrs{})};
  return SetOut(n, 0, std::move(out));
}

// --------------------------------------------------------------------------------------------
// Shape and data movement

namespace {
// A constant whose data is unchanged but whose shape is `shape`.
Value Reshaped(const Value& v, std::vector<int64_t> shape) {
  Value out = v;
  out.shape = std::move(shape);
  out.tensor = kNoTensor;
  out.nhwc = false;
  return out;
}
}  // namespace

absl::Status OnnxImporter::ConvertFlatten(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  MICA_ASSIGN_OR_RETURN(int64_t axis, n.Int("axis", 1));
  const int64_t r = static_cast<int64_t>(x->rank());
  if (axis < -r || axis > r) return n.Invalid(absl::StrCat("axis ", axis, " out of range"));
  if (axis < 0) axis += r;
  const std::vector<int64_t> shape = {Product(x->shape, 0, static_cast<size_t>(axis)),
                                      Product(x->shape, static_cast<size_t>(axis), x->rank())};
  if (x->is_const) return SetOut(n, 0, Reshaped(*x, shape));
  // NHWC activations go back to NCHW order first (unless that moves nothing), so the
  // flattened vector - and the weights of a following Gemm - keep ONNX's element order.
  MICA_ASSIGN_OR_RETURN(int32_t src, AsMemoryOrder(n, n.node().input(0), *x));
  Value out;
  out.shape = shape;
  MICA_ASSIGN_OR_RETURN(out.tensor, InsertReshape(n, src, shape, n.node().output(0)));
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertReshape(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  std::vector<int64_t> target;
  if (opset_ < 5) {
    MICA_ASSIGN_OR_RETURN(target, n.Ints("shape", {}));
  } else {
    MICA_ASSIGN_OR_RETURN(target, ConstInts(n, 1, "shape"));
  }
  MICA_ASSIGN_OR_RETURN(int64_t allowzero, n.Int("allowzero", 0));
  if (target.size() > 8) return n.Unsupported("rank above 8");
  int infer = -1;
  int64_t known = 1;
  std::vector<int64_t> shape(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == 0 && allowzero == 0) {
      if (i >= x->rank()) return n.Invalid("shape copies a dimension the input lacks");
      d = x->shape[i];
    }
    if (d == -1) {
      if (infer >= 0) return n.Invalid("shape has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (d < 0 || d > kMaxElements) return n.Invalid(absl::StrCat("shape entry ", d, " invalid"));
    shape[i] = d;
    known *= d;
    if (known > kMaxElements) return n.Invalid("shape too large");
  }
  const int64_t total = x->num_elements();
  if (infer >= 0) {
    if (known == 0 || total % known != 0) {
      return n.Invalid(absl::StrCat("cannot infer -1 reshaping ", ShapeStr(x->shape), " to ",
                                    ShapeStr(target)));
    }
    shape[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return n.Invalid(absl::StrCat("cannot reshape ", ShapeStr(x->shape), " (", total,
                                  " elements) to ", ShapeStr(shape)));
  }
  if (x->is_const) return SetOut(n, 0, Reshaped(*x, shape));
  MICA_ASSIGN_OR_RETURN(int32_t src, AsMemoryOrder(n, n.node().input(0), *x));
  Value out;
  out.shape = shape;
  MICA_ASSIGN_OR_RETURN(out.tensor, InsertReshape(n, src, shape, n.node().output(0)));
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertTranspose(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const size_t r = x->rank();
  std::vector<int64_t> def(r);
  for (size_t i = 0; i < r; ++i) def[i] = static_cast<int64_t>(r - 1 - i);
  MICA_ASSIGN_OR_RETURN(auto perm64, n.Ints("perm", def));
  if (perm64.size() != r) return n.Invalid("perm length differs from the input rank");
  std::vector<int> perm(r);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < r; ++i) {
    if (perm64[i] < 0 || perm64[i] >= static_cast<int64_t>(r) || seen[static_cast<size_t>(perm64[i])]) {
      return n.Invalid("perm is not a permutation");
    }
    seen[static_cast<size_t>(perm64[i])] = true;
    perm[i] = static_cast<int>(perm64[i]);
  }
  Value out;
  for (int p : perm) out.shape.push_back(x->shape[static_cast<size_t>(p)]);
  if (x->is_const) {
    out.is_const = true;
    out.is_int = x->is_int;
    if (x->is_int) {
      x->Unpack();
      out.ints = Permute(x->ints, x->shape, perm);
    } else {
      out.floats = Permute(x->floats, x->shape, perm);
    }
    return SetOut(n, 0, std::move(out));
  }
  // Physical permutation for a plain output, and (rank 4) for an NHWC output. Logical axis a
  // of an NHWC tensor sits at physical position kToNchw[a].
  std::vector<int> plain(r), nhwc(r);
  for (size_t j = 0; j < r; ++j) {
    plain[j] = x->nhwc ? kToNchw[perm[j]] : perm[j];
  }
  if (r == 4) {
    for (size_t i = 0; i < 4; ++i) nhwc[i] = plain[static_cast<size_t>(kToNhwc[i])];
  }
  const std::vector<int64_t> in_phys = PhysShape(*x);
  if (r == 4 && IsIdentityPerm(nhwc)) {
    out.nhwc = true;
    out.tensor = x->tensor;
    return SetOut(n, 0, std::move(out));
  }
  if (IsIdentityPerm(plain)) {
    out.tensor = x->tensor;
    return SetOut(n, 0, std::move(out));
  }
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, n.node().output(0), out.shape));
  AddOp(OpKind::kTranspose,
        {x->tensor, AddInt32Const(n.node().output(0) + "/perm", {static_cast<int64_t>(r)},
                                  std::vector<int32_t>(plain.begin(), plain.end()))},
        {out.tensor});
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertConcat(const NodeCtx& n) {
  const int count = n.num_inputs();
  if (count < 1) return n.Invalid("no inputs");
  std::vector<Value*> in;
  bool all_const = true, any_nhwc = false;
  for (int i = 0; i < count; ++i) {
    MICA_ASSIGN_OR_RETURN(Value * v, In(n, i));
    in.push_back(v);
    all_const = all_const && v->is_const;
    any_nhwc = any_nhwc || (v->nhwc && !v->is_const);
  }
  const int64_t r = static_cast<int64_t>(in[0]->rank());
  MICA_ASSIGN_OR_RETURN(int64_t axis64, n.Int("axis", opset_ < 4 ? 1 : INT64_MIN));
  if (axis64 == INT64_MIN) return n.Invalid("missing attribute 'axis'");
  MICA_ASSIGN_OR_RETURN(int64_t axis, NormAxis(n, axis64, r));
  Value out;
  out.shape = in[0]->shape;
  out.shape[static_cast<size_t>(axis)] = 0;
  for (Value* v : in) {
    if (static_cast<int64_t>(v->rank()) != r || v->is_int != in[0]->is_int) {
      return n.Invalid("inputs differ in rank or element type");
    }
    for (int64_t i = 0; i < r; ++i) {
      if (i != axis && v->shape[static_cast<size_t>(i)] != in[0]->shape[static_cast<size_t>(i)]) {
        return n.Invalid(absl::StrCat("input shapes ", ShapeStr(in[0]->shape), " and ",
                                      ShapeStr(v->shape), " differ off the concat axis"));
      }
    }
    out.shape[static_cast<size_t>(axis)] += v->shape[static_cast<size_t>(axis)];
  }
  if (out.shape[static_cast<size_t>(axis)] > kMaxElements) return n.Invalid("result too large");
  if (all_const) {
    int64_t total = 1;
    for (int64_t d : out.shape) total *= d;
    MICA_RETURN_IF_ERROR(ChargeFolded(n, total));
    out.is_const = true;
    out.is_int = in[0]->is_int;
    const int64_t outer = Product(out.shape, 0, static_cast<size_t>(axis));
    for (int64_t o = 0; o < outer; ++o) {
      for (Value* v : in) {
        const int64_t chunk = Product(v->shape, static_cast<size_t>(axis), v->rank());
        if (v->is_int) {
          v->Unpack();
          out.ints.insert(out.ints.end(), v->ints.begin() + o * chunk,
                          v->ints.begin() + (o + 1) * chunk);
        } else {
          out.floats.insert(out.floats.end(), v->floats.begin() + o * chunk,
                            v->floats.begin() + (o + 1) * chunk);
        }
      }
    }
    return SetOut(n, 0, std::move(out));
  }
  if (in[0]->is_int) return n.Unsupported("integer activations");
  const bool nhwc = r == 4 && any_nhwc;
  std::vector<int32_t> tensors;
  for (int i = 0; i < count; ++i) {
    int32_t t;
    if (nhwc) {
      MICA_ASSIGN_OR_RETURN(t, AsNhwc(n, n.node().input(i), *in[static_cast<size_t>(i)]));
    } else {
      MICA_ASSIGN_OR_RETURN(t, AsPlain(n, n.node().input(i), *in[static_cast<size_t>(i)]));
    }
    tensors.push_back(t);
  }
  out.nhwc = nhwc;
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, n.node().output(0), PhysShape(out)));
  ConcatenationAttrs a;
  a.axis = static_cast<int32_t>(nhwc ? kToNchw[axis] : axis);
  AddOp(OpKind::kConcatenation, tensors, {out.tensor}, a);
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertPad(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  MICA_ASSIGN_OR_RETURN(std::string mode, n.String("mode", "constant"));
  if (mode != "constant") {
    return n.Unsupported(absl::StrCat("mode '", mode, "' (only constant padding is supported)"));
  }
  if (x->is_int) return n.Unsupported("integer input");
  const size_t r = x->rank();
  std::vector<int64_t> pads;
  float value = 0.0f;
  std::vector<int64_t> axes;
  if (opset_ < 11) {
    MICA_ASSIGN_OR_RETURN(pads, n.Ints(opset_ < 2 ? "paddings" : "pads", {}));
    MICA_ASSIGN_OR_RETURN(value, n.Float("value", 0.0f));
  } else {
    MICA_ASSIGN_OR_RETURN(pads, ConstInts(n, 1, "pads"));
    if (n.HasInput(2)) {
      MICA_ASSIGN_OR_RETURN(Value * v, ConstIn(n, 2, "constant_value"));
      if (v->num_elements() != 1 || v->is_int) return n.Invalid("constant_value must be a float scalar");
      value = v->floats[0];
    }
    if (n.HasInput(3)) {
      MICA_ASSIGN_OR_RETURN(axes, ConstInts(n, 3, "axes"));
    }
  }
  if (axes.empty()) {
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (pads.size() != 2 * axes.size()) {
    return n.Invalid(absl::StrCat("pads has ", pads.size(), " entries; expected ", 2 * axes.size()));
  }
  std::vector<std::pair<int64_t, int64_t>> logical(r, {0, 0});
  bool any = false;
  for (size_t i = 0; i < axes.size(); ++i) {
    MICA_ASSIGN_OR_RETURN(int64_t a, NormAxis(n, axes[i], static_cast<int64_t>(r)));
    logical[static_cast<size_t>(a)] = {pads[i], pads[i + axes.size()]};
    if (pads[i] < 0 || pads[i + axes.size()] < 0) {
      return n.Unsupported("negative pads (cropping)");
    }
    any = any || pads[i] != 0 || pads[i + axes.size()] != 0;
  }
  Value out = *x;
  if (!any) return SetOut(n, 0, std::move(out));
  out.is_const = false;
  out.floats.clear();
  int32_t src;
  std::vector<std::pair<int64_t, int64_t>> phys = logical;
  if (x->nhwc && !x->is_const) {
    src = x->tensor;
    for (int i = 0; i < 4; ++i) phys[static_cast<size_t>(i)] = logical[static_cast<size_t>(kToNhwc[i])];
  } else {
    MICA_ASSIGN_OR_RETURN(src, AsPlain(n, n.node().input(0), *x));
    out.nhwc = false;
  }
  std::vector<int64_t> phys_shape;
  MICA_ASSIGN_OR_RETURN(out.tensor, InsertPad(n, src, PhysShape(out), phys, value, &phys_shape));
  for (size_t i = 0; i < r; ++i) {
    out.shape[i] += logical[i].first + logical[i].second;
  }
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertSoftmax(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  if (x->is_int) return n.Unsupported("integer input");
  const int64_t r = static_cast<int64_t>(x->rank());
  if (r == 0) return n.Invalid("scalar input");
  MICA_ASSIGN_OR_RETURN(int64_t axis64, n.Int("axis", opset_ < 13 ? 1 : -1));
  MICA_ASSIGN_OR_RETURN(int64_t axis, NormAxis(n, axis64, r));
  const std::string& xname = n.node().input(0);
  const std::string& oname = n.node().output(0);
  // Softmax normalises over a set of elements, so it only needs those elements to form the
  // innermost physical dims (in any order). `first` is the first physical axis of that set.
  Value out;
  out.shape = x->shape;
  int32_t src;
  int64_t first;
  const bool nhwc = x->nhwc && !x->is_const;
  if (opset_ < 13) {
    // Coerced to 2-D: dims [axis, r) together.
    if (nhwc && axis <= 1) {
      src = x->tensor;
      out.nhwc = true;
      first = axis;
    } else {
      MICA_ASSIGN_OR_RETURN(src, AsPlain(n, xname, *x));
      first = axis;
    }
  } else {
    if (nhwc && kToNchw[axis] == 3) {
      src = x->tensor;
      out.nhwc = true;
      first = 3;
    } else if (axis == r - 1) {
      MICA_ASSIGN_OR_RETURN(src, AsPlain(n, xname, *x));
      first = axis;
    } else {
      return n.Unsupported(absl::StrCat("softmax over axis ", axis,
                                        ", which is not the innermost axis"));
    }
  }
  const std::vector<int64_t> phys = PhysShape(out);
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, phys));
  if (first == r - 1) {
    AddOp(OpKind::kSoftmax, {src}, {out.tensor}, SoftmaxAttrs{1.0f});
  } else {
    const std::vector<int64_t> flat = {Product(phys, 0, static_cast<size_t>(first)),
                                       Product(phys, static_cast<size_t>(first), phys.size())};
    MICA_ASSIGN_OR_RETURN(int32_t f, InsertReshape(n, src, flat, oname + "/2d"));
    MICA_ASSIGN_OR_RETURN(int32_t s, AddTensor(&n, UniqueName(oname + "/softmax"), flat));
    AddOp(OpKind::kSoftmax, {f}, {s}, SoftmaxAttrs{1.0f});
    std::vector<int32_t> ps(phys.begin(), phys.end());
    AddOp(OpKind::kReshape,
          {s, AddInt32Const(oname + "/shape", {static_cast<int64_t>(ps.size())}, ps)},
          {out.tensor}, ReshapeAttrs{ps});
  }
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertSqueeze(const NodeCtx& n, bool unsqueeze) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  std::vector<int64_t> axes;
  if (opset_ < 13) {
    MICA_ASSIGN_OR_RETURN(axes, n.Ints("axes", {}));
  } else if (n.HasInput(1)) {
    MICA_ASSIGN_OR_RETURN(axes, ConstInts(n, 1, "axes"));
  }
  const int64_t r = static_cast<int64_t>(x->rank());
  Value out;
  std::vector<int32_t> squeezed;
  if (unsqueeze) {
    if (axes.empty()) return n.Invalid("axes are required");
    const int64_t ro = r + static_cast<int64_t>(axes.size());
    if (ro > 8) return n.Unsupported("rank above 8");
    std::vector<bool> is_new(static_cast<size_t>(ro), false);
    for (int64_t a : axes) {
      MICA_ASSIGN_OR_RETURN(int64_t na, NormAxis(n, a, ro));
      if (is_new[static_cast<size_t>(na)]) return n.Invalid("repeated axis");
      is_new[static_cast<size_t>(na)] = true;
    }
    size_t j = 0;
    for (int64_t i = 0; i < ro; ++i) out.shape.push_back(is_new[static_cast<size_t>(i)] ? 1 : x->shape[j++]);
  } else {
    std::vector<bool> drop(static_cast<size_t>(r), false);
    for (int64_t a : axes) {
      MICA_ASSIGN_OR_RETURN(int64_t na, NormAxis(n, a, r));
      if (x->shape[static_cast<size_t>(na)] != 1) {
        return n.Invalid(absl::StrCat("cannot squeeze axis ", na, " of size ",
                                      x->shape[static_cast<size_t>(na)]));
      }
      drop[static_cast<size_t>(na)] = true;
    }
    for (int64_t i = 0; i < r; ++i) {
      if (axes.empty() ? x->shape[static_cast<size_t>(i)] == 1 : drop[static_cast<size_t>(i)]) {
        squeezed.push_back(static_cast<int32_t>(i));
      } else {
        out.shape.push_back(x->shape[static_cast<size_t>(i)]);
      }
    }
  }
  if (x->is_const) return SetOut(n, 0, Reshaped(*x, out.shape));
  const std::string& oname = n.node().output(0);
  if (!unsqueeze && !x->nhwc) {
    MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, out.shape));
    AddOp(OpKind::kSqueeze, {x->tensor}, {out.tensor}, SqueezeAttrs{squeezed});
    return SetOut(n, 0, std::move(out));
  }
  MICA_ASSIGN_OR_RETURN(int32_t src, AsMemoryOrder(n, n.node().input(0), *x));
  MICA_ASSIGN_OR_RETURN(out.tensor, InsertReshape(n, src, out.shape, oname));
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertIdentity(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  if (n.node().op_type() == "Dropout") {
    if (n.node().output_size() > 1 && !n.node().output(1).empty() && Uses(n.node().output(1)) > 0) {
      return n.Unsupported("the mask output");
    }
  }
  Value out = *x;
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertConstant(const NodeCtx& n) {
  if (n.node().attribute_size() != 1) return n.Invalid("needs exactly one value attribute");
  const auto& a = n.node().attribute(0);
  Value v;
  v.is_const = true;
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    MICA_ASSIGN_OR_RETURN(v, TensorToValue(a.t(), n.label()));
  } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    v.floats = {a.f()};
  } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    v.floats.assign(a.floats().begin(), a.floats().end());
    v.shape = {static_cast<int64_t>(v.floats.size())};
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    v.is_int = true;
    v.ints = {a.i()};
  } else if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    v.is_int = true;
    v.ints.assign(a.ints().begin(), a.ints().end());
    v.shape = {static_cast<int64_t>(v.ints.size())};
  } else {
    return n.Unsupported(absl::StrCat("constant attribute '", a.name(), "'"));
  }
  return SetOut(n, 0, std::move(v));
}

absl::Status OnnxImporter::ConvertShape(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  MICA_ASSIGN_OR_RETURN(int64_t start, n.Int("start", 0));
  MICA_ASSIGN_OR_RETURN(int64_t end, n.Int("end", r));
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  Value v;
  v.is_const = v.is_int = true;
  for (int64_t i = start; i < end; ++i) v.ints.push_back(x->shape[static_cast<size_t>(i)]);
  v.shape = {static_cast<int64_t>(v.ints.size())};
  return SetOut(n, 0, std::move(v));
}

absl::Status OnnxImporter::ConvertGather(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * data, In(n, 0));
  if (!data->is_const) return n.Unsupported("Gather on non-constant data");
  MICA_ASSIGN_OR_RETURN(Value * idx, ConstIn(n, 1, "indices"));
  if (!idx->is_int) return n.Invalid("indices must be integers");
  idx->Unpack();
  data->Unpack();
  MICA_ASSIGN_OR_RETURN(int64_t axis64, n.Int("axis", 0));
  const int64_t r = static_cast<int64_t>(data->rank());
  MICA_ASSIGN_OR_RETURN(int64_t axis, NormAxis(n, axis64, r));
  const int64_t dim = data->shape[static_cast<size_t>(axis)];
  Value out;
  out.is_const = true;
  out.is_int = data->is_int;
  out.shape.assign(data->shape.begin(), data->shape.begin() + axis);
  out.shape.insert(out.shape.end(), idx->shape.begin(), idx->shape.end());
  out.shape.insert(out.shape.end(), data->shape.begin() + axis + 1, data->shape.end());
  if (out.rank() > 8) return n.Unsupported("rank above 8");
  const int64_t outer = Product(data->shape, 0, static_cast<size_t>(axis));
  const int64_t inner = Product(data->shape, static_cast<size_t>(axis) + 1, data->rank());
  const double total = static_cast<double>(outer) * static_cast<double>(idx->num_elements()) *
                       static_cast<double>(inner);
  if (total > static_cast<double>(kMaxElements)) return n.Invalid("result too large");
  MICA_RETURN_IF_ERROR(ChargeFolded(n, static_cast<int64_t>(total)));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i : idx->ints) {
      if (i < -dim || i >= dim) return n.Invalid(absl::StrCat("index ", i, " out of range"));
      if (i < 0) i += dim;
      const int64_t base = (o * dim + i) * inner;
      if (data->is_int) {
        out.ints.insert(out.ints.end(), data->ints.begin() + base, data->ints.begin() + base + inner);
      } else {
        out.floats.insert(out.floats.end(), data->floats.begin() + base,
                          data->floats.begin() + base + inner);
      }
    }
  }
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ConvertCast(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  MICA_ASSIGN_OR_RETURN(int64_t to, n.Int("to", 0));
  const bool to_float = to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE ||
                        to == onnx::TensorProto::FLOAT16;
  const bool to_int = to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32 ||
                      to == onnx::TensorProto::INT16 || to == onnx::TensorProto::INT8 ||
                      to == onnx::TensorProto::UINT8;
  if (!to_float && !to_int) return n.Unsupported(absl::StrCat("cast to type ", to));
  x->Unpack();
  Value out = *x;
  if (!x->is_const) {
    if (to != onnx::TensorProto::FLOAT || x->is_int) {
      return n.Unsupported("casting activations to a non-float32 type");
    }
    return SetOut(n, 0, std::move(out));
  }
  if (to_float && x->is_int) {
    out.is_int = false;
    out.floats.assign(x->ints.begin(), x->ints.end());
    out.ints.clear();
  } else if (to_int && !x->is_int) {
    out.is_int = true;
    for (float f : x->floats) {
      if (!(std::fabs(f) < 9.2e18f)) return n.Invalid("value out of integer range");
      out.ints.push_back(static_cast<int64_t>(f));
    }
    out.floats.clear();
  }
  return SetOut(n, 0, std::move(out));
}

absl::Status OnnxImporter::ChargeFolded(const NodeCtx& n, int64_t count) {
  folded_elements_ += count;
  if (count > kMaxFoldedElements || folded_elements_ > kMaxFoldedElements) {
    return n.Invalid(absl::StrCat("constant folding would create more than ", kMaxFoldedElements,
                                  " elements"));
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ConvertConstantOfShape(const NodeCtx& n) {
  MICA_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ConstInts(n, 0, "shape"));
  if (shape.size() > 8) return n.Unsupported("rank above 8");
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxElements || (count *= d) > kMaxElements) {
      return n.Invalid(absl::StrCat("shape ", ShapeStr(shape), " is negative or too large"));
    }
  }
  MICA_RETURN_IF_ERROR(ChargeFolded(n, count));
  Value v;
  v.is_const = true;
  v.shape = shape;
  if (const auto* a = n.Find("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR) return n.Invalid("value must be a TENSOR");
    MICA_ASSIGN_OR_RETURN(Value fill, TensorToValue(a->t(), n.label() + " value"));
    if (fill.num_elements() != 1) return n.Invalid("value must hold one element");
    fill.Unpack();
    v.is_int = fill.is_int;
    if (fill.is_int) {
      v.ints.assign(static_cast<size_t>(count), fill.ints[0]);
    } else {
      v.floats.assign(static_cast<size_t>(count), fill.floats[0]);
    }
  } else {
    v.floats.assign(static_cast<size_t>(count), 0.0f);
  }
  return SetOut(n, 0, std::move(v));
}

absl::Status OnnxImporter::ConvertSum(const NodeCtx& n) {
  const int count = n.num_inputs();
  if (count < 1) return n.Invalid("no inputs");
  if (count == 1) return ConvertIdentity(n);
  if (count == 2) return ConvertBinary(n, OpKind::kAdd);
  // Variadic: a chain of ADDs through node-local intermediate values.
  std::string acc = n.node().input(0);
  for (int i = 1; i < count; ++i) {
    onnx::NodeProto step;
    step.set_name(absl::StrCat(n.node().name(), "/add", i));
    step.set_op_type("Add");
    step.add_input(acc);
    step.add_input(n.node().input(i));
    const std::string out = i + 1 == count ? n.node().output(0)
                                           : UniqueName(absl::StrCat(n.node().output(0), "/sum", i));
    step.add_output(out);
    if (i + 1 < count) uses_[out] = 1;
    NodeCtx sub(step, -1, origin_);
    MICA_RETURN_IF_ERROR(ConvertBinary(sub, OpKind::kAdd));
    acc = out;
  }
  return absl::OkStatus();
}

absl::Status OnnxImporter::ConvertReduce(const NodeCtx& n, OpKind kind) {
  MICA_ASSIGN_OR_RETURN(Value * x, In(n, 0));
  if (x->is_int || x->is_const) return n.Unsupported("reduction of constants or integers");
  const int64_t r = static_cast<int64_t>(x->rank());
  MICA_ASSIGN_OR_RETURN(int64_t keepdims, n.Int("keepdims", 1));
  MICA_ASSIGN_OR_RETURN(int64_t noop_empty, n.Int("noop_with_empty_axes", 0));
  std::vector<int64_t> axes;
  // Axes moved from attribute to input: ReduceSum at opset 13, the others at opset 18.
  const bool axes_input = opset_ >= (kind == OpKind::kSum ? 13 : 18);
  if (axes_input) {
    if (n.HasInput(1)) {
      MICA_ASSIGN_OR_RETURN(axes, ConstInts(n, 1, "axes"));
    }
  } else {
    MICA_ASSIGN_OR_RETURN(axes, n.Ints("axes", {}));
  }
  if (axes.empty()) {
    if (noop_empty) return ConvertIdentity(n);
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    MICA_ASSIGN_OR_RETURN(int64_t na, NormAxis(n, a, r));
    reduced[static_cast<size_t>(na)] = true;
  }
  Value out;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[static_cast<size_t>(i)]) {
      out.shape.push_back(x->shape[static_cast<size_t>(i)]);
    } else if (keepdims) {
      out.shape.push_back(1);
    }
  }
  // On an NHWC tensor reduce the physical axes. With keepdims the result stays NHWC; without,
  // the kept axes must already be in logical order physically (e.g. N, C after reducing H, W).
  bool phys = x->nhwc;
  if (phys && !keepdims) {
    int last = -1;
    for (int64_t i = 0; i < r; ++i) {
      if (reduced[static_cast<size_t>(i)]) continue;
      if (kToNchw[i] < last) phys = false;
      last = kToNchw[i];
    }
  }
  int32_t src;
  std::vector<int32_t> paxes;
  if (phys) {
    src = x->tensor;
    for (int64_t i = 0; i < r; ++i) {
      if (reduced[static_cast<size_t>(i)]) paxes.push_back(kToNchw[i]);
    }
    std::sort(paxes.begin(), paxes.end());
    out.nhwc = keepdims != 0;
  } else {
    MICA_ASSIGN_OR_RETURN(src, AsPlain(n, n.node().input(0), *x));
    for (int64_t i = 0; i < r; ++i) {
      if (reduced[static_cast<size_t>(i)]) paxes.push_back(static_cast<int32_t>(i));
    }
  }
  const std::string& oname = n.node().output(0);
  MICA_ASSIGN_OR_RETURN(out.tensor, AddTensor(&n, oname, PhysShape(out)));
  AddOp(kind, {src, AddInt32Const(oname + "/axes", {static_cast<int64_t>(paxes.size())}, paxes)},
        {out.tensor}, ReduceAttrs{keepdims != 0});
  return SetOut(n, 0, std::move(out));
}

}  // namespace onnx_import
}  // namespace mica
