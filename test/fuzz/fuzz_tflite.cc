// libFuzzer target: LoadTflite on arbitrary bytes.
//
// Beyond "never crash" (ASan/UBSan abort on any memory or undefined-behaviour error), every
// input must either be refused with a one-line error naming the file, or load into a graph
// that validates, writes back, and re-reads to an equal graph.
//
// Structure-aware: LLVMFuzzerCustomMutator changes fields of parsed models (tflite_mutator.h)
// for three mutations in four; the rest are libFuzzer's byte mutations.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "fuzz/tflite_mutator.h"
#include "testing/compare.h"
#include "mica/model/load.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_tflite: %s\n", what.c_str());
  std::abort();
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
    const std::string msg(g.status().message());
    if (msg.rfind("fuzz.tflite: ", 0) != 0 || msg.find('\n') != std::string::npos) {
      Fail("error message is not one line naming the file: " + msg);
    }
    return 0;
  }
  const absl::Status valid = mica::ValidateGraph(*g);
  if (!valid.ok()) Fail("loaded graph does not validate: " + std::string(valid.message()));
  size_t total = 0;
  for (const mica::Subgraph& sg : g->subgraphs) {
    for (const mica::Tensor& t : sg.tensors) total += t.num_bytes();
  }
  (void)total;
  absl::StatusOr<std::vector<uint8_t>> written = mica::WriteTflite(*g);
  if (!written.ok())
    Fail("cannot write a loaded graph: " + std::string(written.status().message()));
  absl::StatusOr<mica::Graph> again = mica::LoadTflite(
      std::make_shared<const std::vector<uint8_t>>(*std::move(written)), "again.tflite");
  if (!again.ok()) Fail("cannot re-read a written graph: " + std::string(again.status().message()));
  const std::string diff = mica::GraphDifference(*g, *again);
  if (!diff.empty()) Fail("round trip changed the graph: " + diff);
  return 0;
}
