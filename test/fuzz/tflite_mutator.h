// Field-level mutation of TFLite models for the structure-aware fuzz targets (fuzz_tflite,
// fuzz_run): the model is parsed with mica's reader, one to three fields of the graph change (a
// tensor dimension, rank, dtype, scale or zero point, an operand index, a window attribute, a
// constant byte, an operator dropped or repeated), and mica's writer serialises it again, so
// the mutants are well-formed flatbuffers that reach the reader's validation, the lowering and
// the kernels instead of stopping at the flatbuffers verifier.
#ifndef MICA_TEST_FUZZ_TFLITE_MUTATOR_H_
#define MICA_TEST_FUZZ_TFLITE_MUTATOR_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "mica/model/graph.h"
#include "mica/model/load.h"

namespace mica {
namespace fuzz {

// Inputs above this size are left to byte mutations (see MutateTflite).
inline constexpr size_t kMaxStructuredBytes = 64 * 1024;

// Values a mutated integer field takes: small, boundary and huge.
inline int32_t PickInt(std::mt19937& rng, int32_t current) {
  static const int32_t kSpecial[] = {0, 1, 2, 3, -1, 7, 8, 16, 255, 256, 32767, -32768,
                                     65536, int32_t{1} << 30, 2147483647, -2147483647 - 1};
  switch (rng() % 4) {
    case 0: return kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 1: return static_cast<int32_t>(static_cast<uint32_t>(current) + rng() % 5 - 2);
    case 2: return static_cast<int32_t>(static_cast<uint32_t>(current) * 2u);
    default: return static_cast<int32_t>(rng());
  }
}

// Mutates one field of `g` in place; returns false when there was nothing to mutate.
inline bool MutateTfliteGraph(mica::Graph* g, std::mt19937& rng) {
  if (g->subgraphs.empty()) return false;
  mica::Subgraph& sg = g->subgraphs[rng() % g->subgraphs.size()];
  if (sg.tensors.empty()) return false;
  mica::Tensor& t = sg.tensors[rng() % sg.tensors.size()];
  switch (rng() % 9) {
    case 0:
      if (!t.shape.empty()) {
        int32_t& d = t.shape[rng() % t.shape.size()];
        d = PickInt(rng, d);
        // A constant's data no longer fits: the reader must say so, and we keep it so.
      }
      return true;
    case 1:
      if (t.shape.size() < 6) {
        t.shape.push_back(1 + static_cast<int32_t>(rng() % 3));
      } else {
        t.shape.pop_back();
      }
      return true;
    case 2: {
      static const mica::DType kTypes[] = {mica::DType::kInt8, mica::DType::kInt16,
                                           mica::DType::kInt32, mica::DType::kFloat32,
                                           mica::DType::kUInt8, mica::DType::kInt64};
      t.dtype = kTypes[rng() % (sizeof(kTypes) / sizeof(kTypes[0]))];
      return true;
    }
    case 3:
      if (!t.quant.scale.empty()) {
        static const float kScales[] = {0.0f, -1.0f, 1e-30f, 1e30f, 1.0f / 256, 0.5f, 3e38f};
        t.quant.scale[rng() % t.quant.scale.size()] = kScales[rng() % 7];
      }
      return true;
    case 4:
      if (!t.quant.zero_point.empty()) {
        int64_t& z = t.quant.zero_point[rng() % t.quant.zero_point.size()];
        z = PickInt(rng, static_cast<int32_t>(z));
      }
      return true;
    case 5:
      if (!sg.ops.empty()) {
        mica::Operator& op = sg.ops[rng() % sg.ops.size()];
        std::vector<int32_t>& operands = rng() % 2 ? op.inputs : op.outputs;
        if (!operands.empty()) {
          operands[rng() % operands.size()] =
              static_cast<int32_t>(rng() % (sg.tensors.size() + 1)) - 1;
        }
      }
      return true;
    case 6:
      if (!sg.ops.empty()) {
        // Window attributes: strides, dilations, filter sizes, depth multiplier.
        mica::Operator& op = sg.ops[rng() % sg.ops.size()];
        if (auto* c = std::get_if<mica::Conv2DAttrs>(&op.attrs)) {
          int32_t* f[] = {&c->stride_w, &c->stride_h, &c->dilation_w, &c->dilation_h};
          int32_t& v = *f[rng() % 4];
          v = PickInt(rng, v);
        } else if (auto* d = std::get_if<mica::DepthwiseConv2DAttrs>(&op.attrs)) {
          int32_t* f[] = {&d->stride_w, &d->stride_h, &d->dilation_w, &d->dilation_h,
                          &d->depth_multiplier};
          int32_t& v = *f[rng() % 5];
          v = PickInt(rng, v);
        } else if (auto* p = std::get_if<mica::Pool2DAttrs>(&op.attrs)) {
          int32_t* f[] = {&p->stride_w, &p->stride_h, &p->filter_w, &p->filter_h};
          int32_t& v = *f[rng() % 4];
          v = PickInt(rng, v);
        }
      }
      return true;
    case 7:
      if (t.is_constant() && t.data.size > 0) {
        std::vector<uint8_t> bytes(t.data.ptr, t.data.ptr + t.data.size);
        bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
        t.data = g->AddConstData(std::move(bytes));
      }
      return true;
    default:
      if (!sg.ops.empty() && rng() % 2) {
        sg.ops.erase(sg.ops.begin() + static_cast<std::ptrdiff_t>(rng() % sg.ops.size()));
      } else if (!sg.ops.empty()) {
        sg.ops.push_back(sg.ops[rng() % sg.ops.size()]);
      }
      return true;
  }
}

// Mutates the TFLite model in data[0, size) in place (at most max_size bytes); returns the new
// size, or 0 when the input does not parse or the mutant does not fit (the caller then falls
// back to byte mutations).
inline size_t MutateTflite(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  // Large models (the shared MLPerf ones) would cost a parse and a rewrite per mutation: they
  // get byte mutations, the small seeds field mutations.
  if (size > kMaxStructuredBytes) return 0;
  std::mt19937 rng(seed);
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  absl::StatusOr<mica::Graph> g = mica::LoadTflite(bytes, "mutant.tflite");
  if (!g.ok()) return 0;
  const int edits = 1 + static_cast<int>(rng() % 3);
  bool changed = false;
  for (int i = 0; i < edits; ++i) changed |= MutateTfliteGraph(&*g, rng);
  if (!changed) return 0;
  absl::StatusOr<std::vector<uint8_t>> out = mica::WriteTflite(*g);
  if (!out.ok() || out->empty() || out->size() > max_size) return 0;
  std::memcpy(data, out->data(), out->size());
  return out->size();
}

}  // namespace fuzz
}  // namespace mica

#endif  // MICA_TEST_FUZZ_TFLITE_MUTATOR_H_
