// LoadTflite: a TFLite flatbuffer in memory becomes a mica Graph.
//
// The flatbuffer is verified first (every offset, vector and string inside the file), then
// read into the IR: constants become views into the file bytes (which the Graph keeps alive),
// builtins mica knows get typed attributes, everything else stays as a named opaque operator.
// ValidateGraph then checks the semantics (indices, sizes, order, attributes).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "flatbuffers/flatbuffers.h"
#include "mica/base/status_macros.h"
#include "mica/model/load.h"
#include "tflite/tflite_ops.h"
#include "tflite/tflite_options.h"
#include "tflite_schema_generated.h"
#include "flatbuffer_util.h"
#include "validate.h"

namespace mica {
namespace {

namespace fb = ::mica::tflite_fb;
using internal::QuoteForMessage;

// Metadata entries mica keeps as text (larger or binary entries are dropped).
constexpr size_t kMaxMetadataBytes = 64 * 1024;
// TFLite's schema version 3 is the only one with the "TFL3" identifier.
constexpr uint32_t kSchemaVersion = 3;
// A non-null pointer for zero-length constants (ConstData treats null as "not constant").
const uint8_t kEmptyConstant = 0;
// Constant data is handed out as typed pointers (ConstData::as<T>), so a tensor's data must
// start at a multiple of its element size. The schema asks writers for 16 (force_align), but
// real files are not always so aligned; a tensor whose data is misaligned for its type is read
// through a graph-owned aligned copy of its buffer (ElementAlignment, flatbuffer_util.h).
using internal::ElementAlignment;
using internal::ToString;
using internal::ToVector;

// Element types and builtin options are converted in tflite_options.cc.

// Returns true when `bytes` is text worth keeping as metadata (after trailing NULs go).
bool IsText(std::string_view bytes) {
  for (unsigned char c : bytes) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
    if (c == 0x7f) return false;
  }
  return true;
}

class TfliteReader {
 public:
  TfliteReader(std::shared_ptr<const std::vector<uint8_t>> bytes, std::string origin)
      : bytes_(std::move(bytes)), origin_(std::move(origin)) {}

  absl::StatusOr<Graph> Read() {
    if (bytes_ == nullptr) return Error("no data");
    const size_t size = bytes_->size();
    const uint8_t* data = bytes_->data();
    if (size < 8) return Error(absl::StrCat("file is ", size, " bytes, too small for TFLite"));
    if (size > kMaxModelBytes) {
      return Error(
          absl::StrCat("file is ", size, " bytes, above mica's limit of ", kMaxModelBytes));
    }
    if (!fb::ModelBufferHasIdentifier(data)) {
      return Error("not a TFLite model (no \"TFL3\" file identifier)");
    }
    // The flatbuffer proper is below 2 GiB; data past it (large-model buffers) is checked
    // separately against the file size.
    const size_t verify_len = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    flatbuffers::Verifier::Options options;
    options.max_depth = 64;
    options.max_tables = 1'000'000;
    flatbuffers::Verifier verifier(data, verify_len, options);
    if (!fb::VerifyModelBuffer(verifier)) {
      return Error("corrupt or truncated TFLite flatbuffer (verification failed)");
    }
    const fb::Model& model = *fb::GetModel(data);
    if (model.version() != kSchemaVersion) {
      return Error(absl::StrCat("schema version ", model.version(), " is not supported (need ",
                                kSchemaVersion, ")"));
    }

    Graph graph;
    graph.source_format = ModelFormat::kTflite;
    graph.source_path = origin_;
    graph.storage.push_back(bytes_);
    graph.description = ToString(model.description());

    graph_ = &graph;
    MICA_RETURN_IF_ERROR(ReadBuffers(model));
    MICA_RETURN_IF_ERROR(ReadOpcodes(model));
    MICA_RETURN_IF_ERROR(ReadMetadata(model, &graph));

    const auto* subgraphs = model.subgraphs();
    if (subgraphs == nullptr || subgraphs->size() == 0) return Error("model has no subgraphs");
    graph.subgraphs.resize(subgraphs->size());
    for (flatbuffers::uoffset_t s = 0; s < subgraphs->size(); ++s) {
      MICA_RETURN_IF_ERROR(ReadSubgraph(s, *subgraphs->Get(s), &graph.subgraphs[s]));
    }
    MICA_RETURN_IF_ERROR(ValidateGraph(graph));
    return graph;
  }

 private:
  struct BufferView {
    const uint8_t* ptr = nullptr;
    size_t size = 0;
    bool present = false;  // a data vector (possibly empty) or an external range was given
  };
  struct OpCode {
    int32_t code = 0;
    std::string custom_name;
    int32_t version = 1;
  };

  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", what));
  }
  absl::Status Unsupported(const std::string& what) const {
    return absl::UnimplementedError(absl::StrCat(origin_, ": ", what));
  }

  // Returns the bytes [offset, offset + length) of the file when they lie inside it.
  bool ExternalRange(uint64_t offset, uint64_t length, BufferView* view) const {
    const uint64_t size = bytes_->size();
    if (offset > size || length > size - offset) return false;
    view->ptr = bytes_->data() + offset;
    view->size = static_cast<size_t>(length);
    view->present = true;
    return true;
  }

  absl::Status ReadBuffers(const fb::Model& model) {
    const auto* buffers = model.buffers();
    if (buffers == nullptr) return absl::OkStatus();
    buffers_.resize(buffers->size());
    for (flatbuffers::uoffset_t i = 0; i < buffers->size(); ++i) {
      const fb::Buffer* b = buffers->Get(i);
      BufferView& view = buffers_[i];
      if (b == nullptr) continue;
      if (b->data() != nullptr && b->data()->size() > 0) {
        view = {b->data()->data(), b->data()->size(), true};
      } else if (b->offset() > 1) {
        // Large-model extension: the bytes live after the flatbuffer, at an absolute offset.
        if (!ExternalRange(b->offset(), b->size(), &view)) {
          return Error(absl::StrCat("buffer ", i, " points at bytes [", b->offset(), ", +",
                                    b->size(), ") outside the ", bytes_->size(), "-byte file"));
        }
      } else if (b->data() != nullptr) {
        view = {&kEmptyConstant, 0, true};
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadOpcodes(const fb::Model& model) {
    const auto* codes = model.operator_codes();
    if (codes == nullptr) return absl::OkStatus();
    opcodes_.resize(codes->size());
    for (flatbuffers::uoffset_t i = 0; i < codes->size(); ++i) {
      const fb::OperatorCode* c = codes->Get(i);
      OpCode& oc = opcodes_[i];
      // Files from before the int32 field carry only the int8 one; newer files put a
      // placeholder in the int8 field. The larger of the two is the code, as TFLite does.
      oc.code = std::max<int32_t>(c->builtin_code(), c->deprecated_builtin_code());
      if (oc.code < 0) {
        return Error(absl::StrCat("operator code ", i, " has invalid builtin code ", oc.code));
      }
      oc.custom_name = ToString(c->custom_code());
      MICA_RETURN_IF_ERROR(Charge(oc.custom_name.size(), "operator codes: "));
      oc.version = c->version();
    }
    return absl::OkStatus();
  }

  absl::Status ReadMetadata(const fb::Model& model, Graph* graph) const {
    const auto* entries = model.metadata();
    if (entries == nullptr) return absl::OkStatus();
    for (flatbuffers::uoffset_t i = 0; i < entries->size(); ++i) {
      const fb::Metadata* m = entries->Get(i);
      if (m->name() == nullptr) continue;
      const std::string name = ToString(m->name());
      if (m->buffer() >= buffers_.size()) {
        return Error(absl::StrCat("metadata ", QuoteForMessage(name), " refers to buffer ",
                                  m->buffer(), "; the model has ", buffers_.size()));
      }
      const BufferView& view = buffers_[m->buffer()];
      if (view.size > kMaxMetadataBytes) continue;
      std::string_view text(reinterpret_cast<const char*>(view.ptr), view.size);
      while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
      if (!IsText(text)) continue;  // binary metadata (e.g. conversion records) is not kept
      MICA_RETURN_IF_ERROR(Charge(name.size() + text.size(), "metadata: "));
      graph->metadata.emplace(name, std::string(text));
    }
    return absl::OkStatus();
  }

  absl::Status ReadSubgraph(uint32_t s, const fb::SubGraph& fsg, Subgraph* sg) const {
    sg->name = ToString(fsg.name());
    sg->inputs = ToVector(fsg.inputs());
    sg->outputs = ToVector(fsg.outputs());
    MICA_RETURN_IF_ERROR(Charge(sg->name.size() + 4 * (sg->inputs.size() + sg->outputs.size()),
                                absl::StrCat("subgraph ", s, ": ")));
    if (const auto* tensors = fsg.tensors()) {
      sg->tensors.resize(tensors->size());
      for (flatbuffers::uoffset_t t = 0; t < tensors->size(); ++t) {
        MICA_RETURN_IF_ERROR(ReadTensor(s, t, *tensors->Get(t), &sg->tensors[t]));
      }
    }
    if (const auto* ops = fsg.operators()) {
      sg->ops.resize(ops->size());
      for (flatbuffers::uoffset_t o = 0; o < ops->size(); ++o) {
        MICA_RETURN_IF_ERROR(ReadOperator(s, o, *ops->Get(o), &sg->ops[o]));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadTensor(uint32_t s, uint32_t t, const fb::Tensor& ft, Tensor* tensor) const {
    tensor->name = ToString(ft.name());
    const std::string where =
        absl::StrCat("subgraph ", s, ", tensor ", t, " (", QuoteForMessage(tensor->name), "): ");
    absl::StatusOr<DType> dtype = tflite::DTypeFromTflite(ft.type());
    if (!dtype.ok()) return Unsupported(where + std::string(dtype.status().message()));
    tensor->dtype = *dtype;
    if (ft.shape() != nullptr && ft.shape()->size() > internal::kMaxRank) {
      return Error(absl::StrCat(where, "rank ", ft.shape()->size(), " exceeds mica's limit of ",
                                internal::kMaxRank));
    }
    if (ft.shape_signature() != nullptr && ft.shape_signature()->size() > internal::kMaxRank) {
      return Error(absl::StrCat(where, "shape signature rank ", ft.shape_signature()->size(),
                                " exceeds mica's limit of ", internal::kMaxRank));
    }
    // Dynamic dimensions (-1) run as 1; the file's form is kept as the shape signature.
    const std::vector<int32_t> file_shape = ToVector(ft.shape());
    tensor->shape = file_shape;
    bool dynamic = false;
    for (int32_t& d : tensor->shape) {
      if (d == -1) d = 1, dynamic = true;
    }
    if (ft.shape_signature() != nullptr) {
      tensor->shape_signature = ToVector(ft.shape_signature());
    } else if (dynamic) {
      tensor->shape_signature = file_shape;
    }
    if (tensor->shape_signature == tensor->shape) tensor->shape_signature.clear();
    tensor->is_variable = ft.is_variable();
    if (ft.sparsity() != nullptr) return Unsupported(where + "sparse tensors are not supported");

    if (const fb::QuantizationParameters* q = ft.quantization()) {
      if (q->details_type() != fb::QuantizationDetails_NONE) {
        return Unsupported(where + "custom quantization is not supported");
      }
      // As TFLite: no (or empty) scales means not quantized; scales need matching zero points.
      if (q->scale() != nullptr && q->scale()->size() > 0) {
        if (q->zero_point() == nullptr || q->zero_point()->size() != q->scale()->size()) {
          return Error(absl::StrCat(where, "quantization has ", q->scale()->size(), " scales but ",
                                    q->zero_point() ? q->zero_point()->size() : 0, " zero points"));
        }
        tensor->quant.scale = ToVector(q->scale());
        tensor->quant.zero_point = ToVector(q->zero_point());
        tensor->quant.axis = q->quantized_dimension();
      }
    }

    MICA_RETURN_IF_ERROR(Charge(tensor->name.size() +
                                    4 * (tensor->shape.size() + tensor->shape_signature.size()) +
                                    12 * tensor->quant.scale.size(),
                                where));
    const uint32_t b = ft.buffer();
    if (b != 0) {
      if (b >= buffers_.size()) {
        return Error(
            absl::StrCat(where, "refers to buffer ", b, "; the model has ", buffers_.size()));
      }
      const BufferView& view = buffers_[b];
      // An empty data vector is a constant only for a tensor with nothing in it (e.g. a
      // reshape to a scalar); other tensors with empty buffers are activations.
      const bool no_elements =
          std::find(tensor->shape.begin(), tensor->shape.end(), 0) != tensor->shape.end();
      if (view.size > 0 || (view.present && no_elements)) {
        tensor->data = ConstData{AlignedFor(b, tensor->dtype), view.size};
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadOperator(uint32_t s, uint32_t o, const fb::Operator& fop, Operator* op) const {
    const uint32_t index = fop.opcode_index();
    if (index >= opcodes_.size()) {
      return Error(absl::StrCat("subgraph ", s, ", operator ", o, ": operator code index ", index,
                                " is out of range (", opcodes_.size(), " codes)"));
    }
    const OpCode& code = opcodes_[index];
    op->kind = tflite::KindFromBuiltin(code.code);
    op->version = code.version;
    if (op->kind == OpKind::kOpaque) {
      op->opaque_name = code.code == tflite::kCustomCode && !code.custom_name.empty()
                            ? code.custom_name
                            : tflite::OpaqueBuiltinName(code.code);
      op->opaque_custom = code.code == tflite::kCustomCode;
      op->opaque_reason =
          code.code == tflite::kCustomCode
              ? absl::StrCat("custom operator '", op->opaque_name,
                             "': its semantics are defined by the application that registers it")
              : absl::StrCat("TFLite builtin ", op->opaque_name, " (code ", code.code,
                             ") is not modelled by mica");
    }
    const std::string where =
        absl::StrCat("subgraph ", s, ", operator ", o, " (", internal::OpLabel(*op), "): ");
    op->inputs = ToVector(fop.inputs());
    op->outputs = ToVector(fop.outputs());
    op->intermediates = ToVector(fop.intermediates());
    MICA_RETURN_IF_ERROR(
        Charge(4 * (op->inputs.size() + op->outputs.size() + op->intermediates.size()), where));
    if (op->kind == OpKind::kOpaque) {
      if (fop.custom_options() != nullptr) {
        op->opaque_options = ToVector(fop.custom_options());
      } else if (fop.large_custom_options_offset() > 1) {
        BufferView view;
        if (!ExternalRange(fop.large_custom_options_offset(), fop.large_custom_options_size(),
                           &view)) {
          return Error(absl::StrCat(where, "custom options at [", fop.large_custom_options_offset(),
                                    ", +", fop.large_custom_options_size(), ") lie outside the ",
                                    bytes_->size(), "-byte file"));
        }
        op->opaque_options.assign(view.ptr, view.ptr + view.size);
      }
      return Charge(op->opaque_options.size(), where);
    }
    return tflite::ReadBuiltinOptions(fop, {origin_, where, &ToVector<int32_t>}, op);
  }

  // Flatbuffers may point many objects at one vector or string; a file whose copied-out
  // contents (names, shapes, index lists, options) exceed twice its own size is refused
  // rather than allowed to amplify into unbounded memory.
  // Returns buffer `b`'s bytes at an address aligned for `dtype`: the file's own bytes when
  // they are, else an aligned copy owned by the graph (made once per buffer, so the copies
  // never exceed the file's size).
  const uint8_t* AlignedFor(uint32_t b, DType dtype) const {
    const BufferView& view = buffers_[b];
    if (reinterpret_cast<uintptr_t>(view.ptr) % ElementAlignment(dtype) == 0) return view.ptr;
    if (aligned_copies_.size() < buffers_.size()) aligned_copies_.resize(buffers_.size());
    if (aligned_copies_[b] == nullptr) {
      aligned_copies_[b] =
          graph_->AddConstData(std::vector<uint8_t>(view.ptr, view.ptr + view.size)).ptr;
    }
    return aligned_copies_[b];
  }

  absl::Status Charge(uint64_t bytes, const std::string& where) const {
    copied_ += bytes;
    if (copied_ > 2 * static_cast<uint64_t>(bytes_->size()) + (uint64_t{1} << 20)) {
      return Error(absl::StrCat(where, "objects share data far beyond the file's size (", copied_,
                                " bytes copied from a ", bytes_->size(), "-byte file)"));
    }
    return absl::OkStatus();
  }

  std::shared_ptr<const std::vector<uint8_t>> bytes_;
  std::string origin_;
  mutable uint64_t copied_ = 0;
  std::vector<BufferView> buffers_;
  Graph* graph_ = nullptr;  // the graph being read (owns aligned copies of buffers)
  mutable std::vector<const uint8_t*> aligned_copies_;
  std::vector<OpCode> opcodes_;
};

}  // namespace

absl::StatusOr<Graph> LoadTflite(std::shared_ptr<const std::vector<uint8_t>> bytes,
                                 const std::string& origin) {
  return TfliteReader(std::move(bytes), origin).Read();
}

}  // namespace mica
