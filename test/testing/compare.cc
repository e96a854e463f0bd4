#include "testing/compare.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "validate.h"

namespace mica {
namespace {

using internal::QuoteForMessage;
using Fields = std::vector<std::pair<std::string_view, std::string>>;

// Floats compare by bit pattern (exact, and NaN equals itself); shown as %g then hex-float.
std::string FloatText(float f) { return absl::StrFormat("%g (%a)", f, f); }

std::string Text(int32_t v) { return absl::StrCat(v); }
std::string Text(bool v) { return v ? "true" : "false"; }
std::string Text(Padding p) {
  return std::string(PaddingName(p)) + absl::StrCat("(", static_cast<int>(p), ")");
}
std::string Text(Activation a) {
  return std::string(ActivationName(a)) + absl::StrCat("(", static_cast<int>(a), ")");
}
std::string Text(DType t) { return absl::StrCat("dtype ", static_cast<int>(t)); }
std::string Text(const std::vector<int32_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ","), "]");
}

Fields AttrFields(const std::monostate&) { return {}; }
Fields AttrFields(const Conv2DAttrs& a) {
  return {{"padding", Text(a.padding)},       {"stride_w", Text(a.stride_w)},
          {"stride_h", Text(a.stride_h)},     {"dilation_w", Text(a.dilation_w)},
          {"dilation_h", Text(a.dilation_h)}, {"activation", Text(a.activation)}};
}
Fields AttrFields(const DepthwiseConv2DAttrs& a) {
  return {{"padding", Text(a.padding)},       {"stride_w", Text(a.stride_w)},
          {"stride_h", Text(a.stride_h)},     {"dilation_w", Text(a.dilation_w)},
          {"dilation_h", Text(a.dilation_h)}, {"depth_multiplier", Text(a.depth_multiplier)},
          {"activation", Text(a.activation)}};
}
Fields AttrFields(const TransposeConvAttrs& a) {
  return {{"padding", Text(a.padding)},
          {"stride_w", Text(a.stride_w)},
          {"stride_h", Text(a.stride_h)},
          {"activation", Text(a.activation)}};
}
Fields AttrFields(const FullyConnectedAttrs& a) {
  return {{"activation", Text(a.activation)}, {"keep_num_dims", Text(a.keep_num_dims)}};
}
Fields AttrFields(const BatchMatMulAttrs& a) {
  return {{"adj_x", Text(a.adj_x)}, {"adj_y", Text(a.adj_y)}};
}
Fields AttrFields(const ElementwiseAttrs& a) { return {{"activation", Text(a.activation)}}; }
Fields AttrFields(const Pool2DAttrs& a) {
  return {{"padding", Text(a.padding)},   {"stride_w", Text(a.stride_w)},
          {"stride_h", Text(a.stride_h)}, {"filter_w", Text(a.filter_w)},
          {"filter_h", Text(a.filter_h)}, {"activation", Text(a.activation)}};
}
Fields AttrFields(const ReduceAttrs& a) { return {{"keep_dims", Text(a.keep_dims)}}; }
Fields AttrFields(const SoftmaxAttrs& a) { return {{"beta", FloatText(a.beta)}}; }
Fields AttrFields(const LeakyReluAttrs& a) { return {{"alpha", FloatText(a.alpha)}}; }
Fields AttrFields(const ReshapeAttrs& a) { return {{"new_shape", Text(a.new_shape)}}; }
Fields AttrFields(const SqueezeAttrs& a) { return {{"squeeze_dims", Text(a.squeeze_dims)}}; }
Fields AttrFields(const ConcatenationAttrs& a) {
  return {{"axis", Text(a.axis)}, {"activation", Text(a.activation)}};
}
Fields AttrFields(const SplitAttrs& a) { return {{"num_splits", Text(a.num_splits)}}; }
Fields AttrFields(const StridedSliceAttrs& a) {
  return {{"begin_mask", Text(a.begin_mask)},
          {"end_mask", Text(a.end_mask)},
          {"ellipsis_mask", Text(a.ellipsis_mask)},
          {"new_axis_mask", Text(a.new_axis_mask)},
          {"shrink_axis_mask", Text(a.shrink_axis_mask)},
          {"offset", Text(a.offset)}};
}
Fields AttrFields(const PackAttrs& a) {
  return {{"values_count", Text(a.values_count)}, {"axis", Text(a.axis)}};
}
Fields AttrFields(const GatherAttrs& a) {
  return {{"axis", Text(a.axis)}, {"batch_dims", Text(a.batch_dims)}};
}
Fields AttrFields(const ResizeAttrs& a) {
  return {{"align_corners", Text(a.align_corners)},
          {"half_pixel_centers", Text(a.half_pixel_centers)}};
}
Fields AttrFields(const SpaceDepthAttrs& a) { return {{"block_size", Text(a.block_size)}}; }
Fields AttrFields(const ArgMinMaxAttrs& a) { return {{"output_type", Text(a.output_type)}}; }
Fields AttrFields(const SvdfAttrs& a) {
  return {{"rank", Text(a.rank)},
          {"activation", Text(a.activation)},
          {"asymmetric_quantize_inputs", Text(a.asymmetric_quantize_inputs)}};
}
Fields AttrFields(const LstmAttrs& a) {
  return {{"activation", Text(a.activation)},
          {"cell_clip", FloatText(a.cell_clip)},
          {"proj_clip", FloatText(a.proj_clip)},
          {"time_major", Text(a.time_major)},
          {"asymmetric_quantize_inputs", Text(a.asymmetric_quantize_inputs)},
          {"diagonal_recurrent_tensors", Text(a.diagonal_recurrent_tensors)}};
}

std::string AttrsDifference(const OpAttrs& a, const OpAttrs& b) {
  if (a.index() != b.index()) {
    return absl::StrCat("attribute types differ (variant index ", a.index(), " vs ", b.index(),
                        ")");
  }
  const Fields fa = std::visit([](const auto& x) { return AttrFields(x); }, a);
  const Fields fb = std::visit([](const auto& x) { return AttrFields(x); }, b);
  for (size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
    if (fa[i].second != fb[i].second) {
      return absl::StrCat("attribute ", std::string(fa[i].first), " ", fa[i].second, " vs ",
                          fb[i].second);
    }
  }
  return "";
}

bool SameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

template <typename T>
std::string ListText(const std::vector<T>& v) {
  constexpr size_t kMaxShown = 16;
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < kMaxShown; ++i) {
    absl::StrAppend(&s, i ? "," : "", v[i]);
  }
  if (v.size() > kMaxShown) absl::StrAppend(&s, ",... (", v.size(), " values)");
  return s + "]";
}

std::string TensorDifference(const Tensor& a, const Tensor& b) {
  if (a.name != b.name) {
    return absl::StrCat("name ", QuoteForMessage(a.name), " vs ", QuoteForMessage(b.name));
  }
  if (a.dtype != b.dtype) {
    return absl::StrCat("dtype ", std::string(DTypeName(a.dtype)), " vs ",
                        std::string(DTypeName(b.dtype)));
  }
  if (a.shape != b.shape) return absl::StrCat("shape ", Text(a.shape), " vs ", Text(b.shape));
  if (a.shape_signature != b.shape_signature) {
    return absl::StrCat("shape signature ", Text(a.shape_signature), " vs ",
                        Text(b.shape_signature));
  }
  if (!SameFloats(a.quant.scale, b.quant.scale)) {
    return absl::StrCat("quantization scales ", ListText(a.quant.scale), " vs ",
                        ListText(b.quant.scale));
  }
  if (a.quant.zero_point != b.quant.zero_point) {
    return absl::StrCat("quantization zero points ", ListText(a.quant.zero_point), " vs ",
                        ListText(b.quant.zero_point));
  }
  if (a.quant.axis != b.quant.axis) {
    return absl::StrCat("quantized axis ", a.quant.axis, " vs ", b.quant.axis);
  }
  if (a.is_variable != b.is_variable) {
    return absl::StrCat("is_variable ", Text(a.is_variable), " vs ", Text(b.is_variable));
  }
  if (a.is_constant() != b.is_constant()) {
    return absl::StrCat(a.is_constant() ? "constant" : "not constant", " vs ",
                        b.is_constant() ? "constant" : "not constant");
  }
  if (a.is_constant()) {
    if (a.data.size != b.data.size) {
      return absl::StrCat("constant data size ", a.data.size, " vs ", b.data.size);
    }
    if (a.data.size > 0 && std::memcmp(a.data.ptr, b.data.ptr, a.data.size) != 0) {
      size_t i = 0;
      while (a.data.ptr[i] == b.data.ptr[i]) ++i;
      return absl::StrCat("constant data differs at byte ", i, " (",
                          static_cast<int>(a.data.ptr[i]), " vs ", static_cast<int>(b.data.ptr[i]),
                          ")");
    }
  }
  return "";
}

std::string OpDifference(const Operator& a, const Operator& b) {
  if (a.kind != b.kind) {
    return absl::StrCat("kind ", std::string(OpKindName(a.kind)), " vs ",
                        std::string(OpKindName(b.kind)));
  }
  if (a.opaque_name != b.opaque_name) {
    return absl::StrCat("opaque name ", QuoteForMessage(a.opaque_name), " vs ",
                        QuoteForMessage(b.opaque_name));
  }
  if (a.opaque_custom != b.opaque_custom) {
    return absl::StrCat("opaque operator named by ", a.opaque_custom ? "a custom code" : "a builtin",
                        " vs ", b.opaque_custom ? "a custom code" : "a builtin");
  }
  if (a.opaque_options != b.opaque_options) {
    return absl::StrCat("opaque options differ (", a.opaque_options.size(), " vs ",
                        b.opaque_options.size(), " bytes)");
  }
  if (a.version != b.version) return absl::StrCat("version ", a.version, " vs ", b.version);
  if (a.inputs != b.inputs) return absl::StrCat("inputs ", Text(a.inputs), " vs ", Text(b.inputs));
  if (a.outputs != b.outputs) {
    return absl::StrCat("outputs ", Text(a.outputs), " vs ", Text(b.outputs));
  }
  if (a.intermediates != b.intermediates) {
    return absl::StrCat("intermediates ", Text(a.intermediates), " vs ", Text(b.intermediates));
  }
  return AttrsDifference(a.attrs, b.attrs);
}

std::string SubgraphDifference(size_t s, const Subgraph& a, const Subgraph& b) {
  const std::string where = absl::StrCat("subgraph ", s);
  if (a.name != b.name) {
    return absl::StrCat(where, ": name ", QuoteForMessage(a.name), " vs ", QuoteForMessage(b.name));
  }
  if (a.tensors.size() != b.tensors.size()) {
    return absl::StrCat(where, ": ", a.tensors.size(), " tensors vs ", b.tensors.size());
  }
  for (size_t t = 0; t < a.tensors.size(); ++t) {
    const std::string d = TensorDifference(a.tensors[t], b.tensors[t]);
    if (!d.empty()) {
      return absl::StrCat(where, ", tensor ", t, " (", QuoteForMessage(a.tensors[t].name),
                          "): ", d);
    }
  }
  if (a.ops.size() != b.ops.size()) {
    return absl::StrCat(where, ": ", a.ops.size(), " operators vs ", b.ops.size());
  }
  for (size_t o = 0; o < a.ops.size(); ++o) {
    const std::string d = OpDifference(a.ops[o], b.ops[o]);
    if (!d.empty()) {
      return absl::StrCat(where, ", operator ", o, " (", internal::OpLabel(a.ops[o]), "): ", d);
    }
  }
  if (a.inputs != b.inputs) {
    return absl::StrCat(where, ": inputs ", Text(a.inputs), " vs ", Text(b.inputs));
  }
  if (a.outputs != b.outputs) {
    return absl::StrCat(where, ": outputs ", Text(a.outputs), " vs ", Text(b.outputs));
  }
  return "";
}

}  // namespace

std::string GraphDifference(const Graph& a, const Graph& b) {
  if (a.subgraphs.size() != b.subgraphs.size()) {
    return absl::StrCat(a.subgraphs.size(), " subgraphs vs ", b.subgraphs.size());
  }
  for (size_t s = 0; s < a.subgraphs.size(); ++s) {
    std::string d = SubgraphDifference(s, a.subgraphs[s], b.subgraphs[s]);
    if (!d.empty()) return d;
  }
  if (a.description != b.description) {
    return absl::StrCat("description ", QuoteForMessage(a.description), " vs ",
                        QuoteForMessage(b.description));
  }
  if (a.metadata != b.metadata) {
    auto ia = a.metadata.begin();
    auto ib = b.metadata.begin();
    while (ia != a.metadata.end() && ib != b.metadata.end() && *ia == *ib) ++ia, ++ib;
    if (ia == a.metadata.end()) {
      return absl::StrCat("metadata ", QuoteForMessage(ib->first), " only in the second graph");
    }
    if (ib == b.metadata.end() || ia->first < ib->first) {
      return absl::StrCat("metadata ", QuoteForMessage(ia->first), " only in the first graph");
    }
    if (ia->first != ib->first) {
      return absl::StrCat("metadata ", QuoteForMessage(ib->first), " only in the second graph");
    }
    return absl::StrCat("metadata ", QuoteForMessage(ia->first), ": ", QuoteForMessage(ia->second),
                        " vs ", QuoteForMessage(ib->second));
  }
  return "";
}

}  // namespace mica
