// libFuzzer target: `run` in the fuzz loop, with a structure-aware TFLite mutator.
//
// Each input is a TFLite file. LLVMFuzzerCustomMutator parses it with mica's reader, changes
// one field of the graph (a tensor dimension, dtype, scale or zero point, an operator's
// attribute, an operand index, a constant byte) and writes it back with mica's writer, so the
// mutants stay well-formed flatbuffers that reach the lowering and the kernels instead of
// stopping at the verifier; inputs that do not parse fall back to libFuzzer's byte mutations.
// LLVMFuzzerTestOneInput loads the model and, if it validates and is small, prepares it with
// the executor and runs it on deterministic inputs. Any outcome but a crash, a sanitizer report
// or an error that is not one line is fine.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "mica/model/load.h"
#include "mica/runtime/executor.h"

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
#endif

namespace {

constexpr size_t kMaxRunBytes = size_t{1} << 20;  // activations and constants, in total
constexpr size_t kMaxRunOps = 64;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_run: %s\n", what.c_str());
  std::abort();
}

void CheckOneLine(const absl::Status& s) {
  const std::string msg(s.message());
  if (msg.empty() || msg.find('\n') != std::string::npos) {
    Fail("error message is empty or not one line: " + msg);
  }
}

// Values a mutated integer field takes: small, boundary and huge.
[[maybe_unused]] int32_t PickInt(std::mt19937& rng, int32_t current) {
  static const int32_t kSpecial[] = {0, 1, 2, 3, -1, 7, 8, 16, 255, 256, 32767, -32768,
                                     65536, int32_t{1} << 30, 2147483647, -2147483647 - 1};
  switch (rng() % 4) {
    case 0: return kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 1: return current + static_cast<int32_t>(rng() % 5) - 2;
    case 2: return current * 2;
    default: return static_cast<int32_t>(rng());
  }
}

// Mutates one field of `g` in place; returns false when there was nothing to mutate.
[[maybe_unused]] bool MutateGraph(mica::Graph* g, std::mt19937& rng) {
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

size_t RunBytes(const mica::Subgraph& sg) {
  size_t total = 0;
  for (const mica::Tensor& t : sg.tensors) {
    const int64_t n = t.num_elements();
    if (n < 0 || n > static_cast<int64_t>(kMaxRunBytes)) return kMaxRunBytes + 1;
    total += t.num_bytes();
  }
  return total;
}

}  // namespace

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937 rng(seed);
  if (rng() % 4 != 0) {
    auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
    absl::StatusOr<mica::Graph> g = mica::LoadTflite(bytes, "mutant.tflite");
    if (g.ok()) {
      const int edits = 1 + static_cast<int>(rng() % 3);
      bool changed = false;
      for (int i = 0; i < edits; ++i) changed |= MutateGraph(&*g, rng);
      if (changed) {
        absl::StatusOr<std::vector<uint8_t>> out = mica::WriteTflite(*g);
        if (out.ok() && !out->empty() && out->size() <= max_size) {
          std::memcpy(data, out->data(), out->size());
          return out->size();
        }
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  absl::StatusOr<mica::Graph> g = mica::LoadTflite(bytes, "fuzz.tflite");
  if (!g.ok()) {
    CheckOneLine(g.status());
    return 0;
  }
  if (g->subgraphs.empty() || !mica::ValidateGraph(*g).ok()) return 0;
  const mica::Subgraph& sg = g->main();
  if (sg.ops.size() > kMaxRunOps || RunBytes(sg) > kMaxRunBytes) return 0;
  auto exec = mica::runtime::Executor::Create(*g, {});
  if (!exec.ok()) {
    CheckOneLine(exec.status());
    return 0;
  }
  // Deterministic inputs: a ramp over each input's bytes.
  std::vector<mica::runtime::HostTensor> inputs;
  for (int32_t t : sg.inputs) {
    const mica::Tensor& x = sg.tensors[t];
    mica::runtime::HostTensor h;
    h.dtype = x.dtype;
    h.shape = x.shape;
    h.bytes.resize(x.num_bytes());
    for (size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    if (x.dtype == mica::DType::kFloat32) {
      for (size_t i = 0; i + 4 <= h.bytes.size(); i += 4) {
        const float f = static_cast<float>(static_cast<int>(i % 64) - 32) / 8.0f;
        std::memcpy(&h.bytes[i], &f, 4);
      }
    }
    inputs.push_back(std::move(h));
  }
  auto out = (*exec)->Run(inputs);
  if (!out.ok()) CheckOneLine(out.status());
  return 0;
}
