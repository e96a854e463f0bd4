// libFuzzer target: the ExecuTorch reader (LoadExecuTorch, and the bundled-program parser) on
// arbitrary bytes.
//
// Beyond "never crash" (ASan/UBSan abort on any memory or undefined-behaviour error), every
// input must either be refused with a one-line error naming the file, or load into a graph
// that validates. Bundled programs ("BP08") also have their test cases parsed, whose tensors
// must hold exactly the bytes their shapes and types need.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "pte/pte_program.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_pte: %s\n", what.c_str());
  std::abort();
}

void CheckError(const absl::Status& s) {
  const std::string msg(s.message());
  if (msg.rfind("fuzz.pte: ", 0) != 0 || msg.find('\n') != std::string::npos) {
    Fail("error message is not one line naming the file: " + msg);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  absl::StatusOr<mica::Graph> g = mica::LoadExecuTorch(bytes, "fuzz.pte");
  if (!g.ok()) {
    CheckError(g.status());
  } else {
    const absl::Status valid = mica::ValidateGraph(*g);
    if (!valid.ok()) Fail("loaded graph does not validate: " + std::string(valid.message()));
    size_t total = 0;
    for (const mica::Tensor& t : g->main().tensors) {
      total += t.num_bytes();
      if (t.is_constant() && t.data.size < t.num_bytes()) {
        Fail("constant " + t.name + " holds fewer bytes than its shape needs");
      }
    }
    (void)total;
  }
  if (mica::IsBundledProgram(*bytes)) {
    absl::StatusOr<mica::pte::Bundle> b = mica::pte::ParseBundle(*bytes, "fuzz.pte");
    if (!b.ok()) {
      CheckError(b.status());
      return 0;
    }
    for (const mica::BundledTestCase& tc : b->test_cases) {
      for (const auto* list : {&tc.inputs, &tc.expected_outputs}) {
        for (const mica::BundledTensor& t : *list) {
          int64_t n = 1;
          for (int32_t d : t.shape) n *= d;
          if (t.bytes.size() != mica::DTypeBytes(t.dtype, n)) {
            Fail("bundled tensor bytes do not match its shape");
          }
        }
      }
    }
  }
  return 0;
}
