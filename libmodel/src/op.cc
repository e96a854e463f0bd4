#include "mica/model/op.h"

#include "mica/model/op_info.h"

namespace mica {

std::string_view OpKindName(OpKind k) {
  return IsKnownOpKind(k) ? GetOpInfo(k).name : std::string_view("UNKNOWN");
}

std::string_view PaddingName(Padding p) { return p == Padding::kSame ? "SAME" : "VALID"; }

std::string_view ActivationName(Activation a) {
  switch (a) {
    case Activation::kNone: return "NONE";
    case Activation::kRelu: return "RELU";
    case Activation::kReluN1To1: return "RELU_N1_TO_1";
    case Activation::kRelu6: return "RELU6";
    case Activation::kTanh: return "TANH";
    case Activation::kSignBit: return "SIGN_BIT";
  }
  return "UNKNOWN";
}

std::string_view Operator::name() const {
  return kind == OpKind::kOpaque ? std::string_view(opaque_name) : OpKindName(kind);
}

}  // namespace mica
