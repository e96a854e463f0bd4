// libFuzzer target: the ONNX reader on arbitrary bytes. Any outcome but a crash, hang, leak or
// sanitizer report is fine; errors must come back as absl::Status.
//
// Structure-aware: LLVMFuzzerCustomMutator parses the input as a ModelProto and changes one
// field somewhere in it (dims, attribute values, op types, initializer data, names, opsets, ...:
// proto_mutator.h) before serialising it again, so most mutants are valid protobuf that reach
// the importer's conversions; inputs that do not parse get libFuzzer's byte mutations.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "fuzz/proto_mutator.h"
#include "mica/model/load.h"

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  // Large models would cost a parse and a rewrite per mutation: byte mutations only.
  if (rng() % 4 != 0 && size > 0 && size <= 64 * 1024) {
    onnx::ModelProto model;
    google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(size));
    google::protobuf::io::CodedInputStream in(&raw);
    in.SetRecursionLimit(64);
    if (model.ParseFromCodedStream(&in) && in.ConsumedEntireMessage()) {
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int i = 0; i < edits; ++i) mica::fuzz::MutateProto(&model, rng);
      std::string out;
      if (model.SerializeToString(&out) && !out.empty() && out.size() <= max_size) {
        std::memcpy(data, out.data(), out.size());
        return out.size();
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto graph = mica::LoadOnnx(std::move(bytes), "fuzz.onnx");
  if (graph.ok()) {
    // Touch what consumers read so sanitizers see any bad view.
    size_t sum = 0;
    for (const auto& t : graph->main().tensors) {
      if (t.is_constant() && t.data.size > 0) sum += t.data.ptr[t.data.size - 1];
    }
    (void)sum;
  }
  return 0;
}
