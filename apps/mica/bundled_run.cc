#include "mica/bundled_run.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/base/file.h"
#include "mica/base/text.h"
#include "mica/command.h"
#include "mica/device_run.h"
#include "mica/kernels/types.h"
#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "mica/runtime/npy.h"

namespace mica {
namespace cli {
namespace {

constexpr double kAtol = 1e-5, kRtol = 1e-5;

std::string ShapeString(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

// Element `i` of raw bytes of `dtype` as a double (integers exactly).
double Element(DType dtype, const uint8_t* p, size_t i) {
  switch (dtype) {
    case DType::kFloat32: { float v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kInt8: return static_cast<int8_t>(p[i]);
    case DType::kUInt8: return p[i];
    case DType::kBool: return p[i] != 0;
    case DType::kInt16: { int16_t v; std::memcpy(&v, p + 2 * i, 2); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kUInt32: { uint32_t v; std::memcpy(&v, p + 4 * i, 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); return static_cast<double>(v); }
    default: return 0.0;
  }
}

bool Comparable(DType d) {
  return d == DType::kFloat32 || d == DType::kInt8 || d == DType::kUInt8 || d == DType::kBool ||
         d == DType::kInt16 || d == DType::kInt32 || d == DType::kUInt32 || d == DType::kInt64;
}

// Compares one output with its expected value; prints one line and returns true on a match.
bool CompareOutput(size_t i, const runtime::HostTensor& got, const BundledTensor& want) {
  const std::string head = absl::StrCat("  output ", i, ": ");
  if (got.dtype != want.dtype || got.bytes.size() != want.bytes.size()) {
    std::cout << head << "got " << DTypeName(got.dtype) << " " << ShapeString(got.shape)
              << ", expected " << DTypeName(want.dtype) << " " << ShapeString(want.shape)
              << ": MISMATCH\n";
    return false;
  }
  const size_t n = DTypeBytes(want.dtype, 1) == 0 ? 0 : want.bytes.size() / DTypeBytes(want.dtype, 1);
  const bool identical = got.bytes == want.bytes;
  std::cout << head << DTypeName(want.dtype) << " " << ShapeString(want.shape) << ", " << n
            << " elements: ";
  if (identical) {
    std::cout << "identical bytes\n";
    return true;
  }
  if (!Comparable(want.dtype)) {
    std::cout << "bytes differ\n";
    return false;
  }
  const bool is_float = want.dtype == DType::kFloat32;
  size_t differ = 0, first = 0, outside = 0;
  double largest = 0.0;
  for (size_t k = 0; k < n; ++k) {
    const double a = Element(got.dtype, got.bytes.data(), k);
    const double b = Element(want.dtype, want.bytes.data(), k);
    if (a == b || (std::isnan(a) && std::isnan(b))) continue;
    if (differ++ == 0) first = k;
    const double d = std::isnan(a) || std::isnan(b) ? INFINITY : std::fabs(a - b);
    largest = std::max(largest, d);
    if (!is_float || !(d <= kAtol + kRtol * std::fabs(b))) ++outside;
  }
  std::cout << differ << " differ";
  if (differ > 0) {
    std::cout << " (first at index " << first << ", largest difference "
              << absl::StrFormat("%.9g", largest) << ")";
  }
  if (is_float && differ > 0) std::cout << ", " << outside << " beyond tolerance";
  std::cout << "\n";
  return outside == 0;
}

}  // namespace

bool IsBundledProgramFile(const std::string& path) {
  auto bytes = ReadFileBytes(path, kMaxModelBytes);
  return bytes.ok() && IsBundledProgram(**bytes);
}

int RunBundledProgram(const std::string& path, const std::string& variant,
                      const std::string& output_dir, const std::string& method,
                      const std::string& target, const std::string& firmware) {
  const bool on_device = !target.empty();
  std::string cpu;
  absl::StatusOr<std::optional<kernels::Isa>> isa = std::optional<kernels::Isa>();
  if (on_device) {
    absl::StatusOr<kernels::Isa> device_isa = TargetIsa(target, variant, &cpu);
    if (!device_isa.ok()) return Failure(std::string(device_isa.status().message()));
    isa = std::optional<kernels::Isa>(*device_isa);
  } else {
    isa = runtime::ParseIsa(variant);
    if (!isa.ok()) return UsageError(absl::StrCat("run: ", isa.status().message()));
  }
  auto bundle = LoadBundledProgram(path, method);
  if (!bundle.ok()) return Failure(std::string(bundle.status().message()));
  const Subgraph& sg = bundle->graph.main();
  if (bundle->test_cases.empty()) {
    return Failure(absl::StrCat(path, ": the bundled program has no test cases",
                                method.empty() ? "" : " for method ",
                                method.empty() ? "" : "'" + PrintableText(method) + "'"));
  }
  std::unique_ptr<runtime::Executor> exec;
  if (!on_device) {
    runtime::ExecutorOptions options;
    options.isa = *isa;
    auto created = runtime::Executor::Create(bundle->graph, options);
    if (!created.ok()) return Failure(std::string(created.status().message()));
    exec = *std::move(created);
  }
  bool pass = true;
  for (size_t c = 0; c < bundle->test_cases.size(); ++c) {
    const BundledTestCase& tc = bundle->test_cases[c];
    std::cout << "bundled test case " << c << " of method " << "'" << PrintableText(bundle->method) << "'" << ":\n";
    if (tc.inputs.size() != sg.inputs.size() || tc.expected_outputs.size() != sg.outputs.size()) {
      return Failure(absl::StrCat(path, ": test case ", c, " has ", tc.inputs.size(),
                                  " inputs and ", tc.expected_outputs.size(),
                                  " expected outputs; the method takes ", sg.inputs.size(),
                                  " and returns ", sg.outputs.size()));
    }
    std::vector<runtime::HostTensor> inputs;
    for (size_t i = 0; i < tc.inputs.size(); ++i) {
      const Tensor& t = sg.tensors[sg.inputs[i]];
      const BundledTensor& b = tc.inputs[i];
      if (b.dtype != t.dtype || b.bytes.size() != t.num_bytes()) {
        return Failure(absl::StrCat(path, ": test case ", c, " input ", i, " is ",
                                    std::string(DTypeName(b.dtype)), " ", ShapeString(b.shape),
                                    "; the method takes ", std::string(DTypeName(t.dtype)), " ",
                                    ShapeString(t.shape)));
      }
      inputs.push_back({b.dtype, t.shape, b.bytes});
    }
    std::vector<runtime::HostTensor> outputs;
    if (on_device) {
      // The device runtime on QEMU computes the outputs; they are checked here, with the
      // bundled-program tolerance for float outputs (the runner's own check is exact).
      std::vector<std::vector<uint8_t>> raw_inputs;
      for (const runtime::HostTensor& h : inputs) raw_inputs.push_back(h.bytes);
      auto run = RunOnQemu(bundle->graph, **isa, raw_inputs, {}, firmware, false, cpu);
      if (!run.ok()) return Failure(std::string(run.status().message()));
      const fvp::SimulationResult& r = run->result;
      if (r.outputs.size() != sg.outputs.size()) {
        return Failure(absl::StrCat("the runner returned ", r.outputs.size(),
                                    " outputs, the method has ", sg.outputs.size()));
      }
      if (c == 0) {
        std::cout << "  on " << target << ": QEMU " << r.board << " (build " << run->build
                  << ", variant " << kernels::IsaName(run->isa) << "), "
                  << r.total_instructions << " instructions per inference, arena "
                  << r.arena_bytes << " bytes\n";
      }
      for (size_t i = 0; i < r.outputs.size(); ++i) {
        const Tensor& t = sg.tensors[sg.outputs[i]];
        outputs.push_back({t.dtype, t.shape, r.outputs[i]});
      }
    } else {
      auto host = exec->Run(inputs);
      if (!host.ok()) return Failure(std::string(host.status().message()));
      outputs = *std::move(host);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      pass = CompareOutput(i, outputs[i], tc.expected_outputs[i]) && pass;
    }
    if (c == 0 && !output_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(output_dir, ec);
      for (size_t i = 0; i < outputs.size(); ++i) {
        const std::string base = absl::StrCat(output_dir, "/output_", i);
        absl::Status s = WriteFileBytes(base + ".bin", outputs[i].bytes);
        if (s.ok()) s = runtime::WriteNpy(base + ".npy", outputs[i]);
        if (!s.ok()) return Failure(std::string(s.message()));
      }
    }
  }
  std::cout << "Test_result: " << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kExitOk : kExitFailure;
}

}  // namespace cli
}  // namespace mica
