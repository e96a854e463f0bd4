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

#include "fuzz/tflite_mutator.h"
#include "mica/model/analysis.h"
#include "mica/model/load.h"
#include "mica/runtime/executor.h"

namespace {

constexpr size_t kMaxRunBytes = size_t{1} << 20;  // activations and constants, in total
constexpr size_t kMaxRunOps = 64;
// Multiply-accumulates per inference: small tensors can still ask for billions of them (a
// transpose conv with a large filter and output depth), which under ASan is a timeout, not a
// finding.
constexpr int64_t kMaxRunMacs = int64_t{1} << 24;

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

size_t RunBytes(const mica::Subgraph& sg) {
  size_t total = 0;
  for (const mica::Tensor& t : sg.tensors) {
    const int64_t n = t.num_elements();
    if (n < 0 || n > static_cast<int64_t>(kMaxRunBytes)) return kMaxRunBytes + 1;
    total += t.num_bytes();
  }
  return total;
}

int64_t RunMacs(const mica::Subgraph& sg) {
  int64_t total = 0;
  for (const mica::Operator& op : sg.ops) {
    const int64_t m = mica::AnalyzeOp(sg, op).macs;
    if (m < 0 || m > kMaxRunMacs) return kMaxRunMacs + 1;
    total += m;
  }
  return total;
}

}  // namespace

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 4 != 0) {
    const size_t n = mica::fuzz::MutateTflite(data, size, max_size, seed);
    if (n > 0) return n;
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
  if (sg.ops.size() > kMaxRunOps || RunBytes(sg) > kMaxRunBytes || RunMacs(sg) > kMaxRunMacs) {
    return 0;
  }
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
