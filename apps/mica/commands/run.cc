// `mica run MODEL --input FILE [--input FILE ...] --output-dir DIR [--variant scalar|dsp|mve]
//            [--dump-all] [--compare DIR] [--profile]`
//
// Runs the model once on the host, bit-exactly as TFLite's reference kernels would. With
// --target-profile NAME (a Cortex-M profile) it runs instead on QEMU through the mica runner
// firmware of the profile's ISA (--variant overrides it), writes the same output files, prints
// the exact instruction count per inference (per operator with --profile) and, with --compare,
// also has the firmware self-check (Test_result: PASS/FAIL).
//
// Inputs, one --input per graph input in order: a .npy file (dtype and shape must match the
// input; size-1 dimensions may differ) or raw little-endian bytes in the input's dtype, whose
// size must match exactly. Writes DIR/output_<i>.bin (raw bytes) and DIR/output_<i>.npy for
// every graph output, and with --dump-all DIR/t<k>.bin for the output tensor k of every
// operator (the naming of ../shared/golden). --compare REF compares each output with
// REF/output_<i>.bin (count of differing elements and max abs difference, in the dtype's raw
// values) and, when REF holds t<k>.bin dumps, names the first operator (in execution order)
// whose output differs. --profile prints each operator's wall time.
//
// Exit codes: 0 ok (and, with --compare, every output identical), 1 failure or a --compare
// mismatch, 2 usage error.
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/bundled_run.h"
#include "mica/command.h"
#include "mica/device_run.h"
#include "mica/model/load.h"
#include "mica/runtime/executor.h"
#include "mica/runtime/npy.h"

namespace mica {
namespace cli {
namespace {

namespace fs = std::filesystem;
using runtime::HostTensor;

std::string ShapeString(const std::vector<int32_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ","), "]");
}

std::string Describe(const Tensor& t) {
  return absl::StrCat(std::string(DTypeName(t.dtype)), " ", ShapeString(t.shape), " (",
                      t.num_bytes(), " bytes)");
}

std::vector<int32_t> WithoutOnes(const std::vector<int32_t>& s) {
  std::vector<int32_t> out;
  for (int32_t d : s) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

bool IsNpy(const std::vector<uint8_t>& bytes) {
  return bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0;
}

// Reads input `i` from `path` as the model's input tensor `t`.
absl::StatusOr<HostTensor> ReadInput(size_t i, const std::string& path, const Tensor& t) {
  const std::string who = absl::StrCat("input ", i, " '", t.name, "' (", path, ")");
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (IsNpy(**bytes)) {
    auto npy = runtime::ParseNpy(**bytes, path);
    if (!npy.ok()) return npy.status();
    if (npy->dtype != t.dtype || WithoutOnes(npy->shape) != WithoutOnes(t.shape)) {
      return absl::InvalidArgumentError(absl::StrCat(
          who, ": .npy holds ", std::string(DTypeName(npy->dtype)), " ", ShapeString(npy->shape),
          ", expected ", Describe(t)));
    }
    npy->shape = t.shape;
    return *std::move(npy);
  }
  if ((*bytes)->size() != t.num_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", (*bytes)->size(),
                                                   " bytes, expected ", Describe(t)));
  }
  HostTensor h;
  h.dtype = t.dtype;
  h.shape = t.shape;
  h.bytes = **bytes;
  return h;
}

// Reads element `i` of raw little-endian data as a double (for differences).
double Element(const std::vector<uint8_t>& b, DType t, size_t i) {
  switch (t) {
    case DType::kInt8: return static_cast<int8_t>(b[i]);
    case DType::kUInt8: return b[i];
    case DType::kBool: return b[i];
    case DType::kInt16: { int16_t v; std::memcpy(&v, &b[2 * i], 2); return v; }
    case DType::kInt32: { int32_t v; std::memcpy(&v, &b[4 * i], 4); return v; }
    case DType::kUInt32: { uint32_t v; std::memcpy(&v, &b[4 * i], 4); return v; }
    case DType::kInt64: { int64_t v; std::memcpy(&v, &b[8 * i], 8); return static_cast<double>(v); }
    case DType::kFloat32: { float v; std::memcpy(&v, &b[4 * i], 4); return v; }
    default: return b[i];
  }
}

struct Diff {
  bool size_mismatch = false;
  int64_t count = 0, first = -1, elements = 0;
  double max_abs = 0;
};

Diff Compare(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const Tensor& t) {
  Diff d;
  if (got.size() != want.size()) {
    d.size_mismatch = true;
    return d;
  }
  d.elements = t.num_elements();
  const size_t es = d.elements > 0 ? got.size() / static_cast<size_t>(d.elements) : 1;
  for (int64_t i = 0; i < d.elements; ++i) {
    if (std::memcmp(&got[i * es], &want[i * es], es) == 0) continue;
    ++d.count;
    if (d.first < 0) d.first = i;
    d.max_abs = std::max(d.max_abs, std::abs(Element(got, t.dtype, i) - Element(want, t.dtype, i)));
  }
  return d;
}

std::string FormatDiff(const Diff& d, const std::vector<uint8_t>& got,
                       const std::vector<uint8_t>& want, const Tensor& t) {
  if (d.size_mismatch) {
    return absl::StrCat("size differs: ", got.size(), " vs ", want.size(), " bytes in reference");
  }
  if (d.count == 0) return "identical";
  return absl::StrCat(d.count, " of ", d.elements, " elements differ, max abs diff ", d.max_abs,
                      "; first at index ", d.first, " (got ", Element(got, t.dtype, d.first),
                      ", reference ", Element(want, t.dtype, d.first), ")");
}

// `mica run -t PROFILE`: the same outputs, computed by the device runtime on QEMU.
int RunOnTarget(const std::string& model, const Graph& graph, const std::string& target,
                const std::string& variant, const std::string& firmware,
                const std::vector<HostTensor>& host_inputs, const std::string& output_dir,
                const std::string& compare_dir, bool profile) {
  const Subgraph& sg = graph.main();
  std::string cpu;
  auto isa = TargetIsa(target, variant, &cpu);
  if (!isa.ok()) return Failure(std::string(isa.status().message()));
  std::vector<std::vector<uint8_t>> inputs, expected;
  for (const HostTensor& h : host_inputs) inputs.push_back(h.bytes);
  if (!compare_dir.empty()) {
    for (size_t i = 0; i < sg.outputs.size(); ++i) {
      auto want = ReadFileBytes((fs::path(compare_dir) / absl::StrCat("output_", i, ".bin")).string());
      if (!want.ok()) return Failure(std::string(want.status().message()));
      expected.push_back(**want);
    }
  }
  auto run = RunOnQemu(graph, *isa, inputs, expected, firmware, profile, cpu);
  if (!run.ok()) return Failure(std::string(run.status().message()));
  const fvp::SimulationResult& r = run->result;
  if (r.outputs.size() != sg.outputs.size()) {
    return Failure(absl::StrCat("the runner returned ", r.outputs.size(), " outputs, the model has ",
                                sg.outputs.size()));
  }
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (!fs::is_directory(output_dir)) {
    return Failure(absl::StrCat("cannot create output directory '", output_dir, "'"));
  }
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    if (r.outputs[i].size() != t.num_bytes()) {
      return Failure(absl::StrCat("the runner's output ", i, " has ", r.outputs[i].size(),
                                  " bytes, expected ", t.num_bytes()));
    }
    HostTensor h;
    h.dtype = t.dtype;
    h.shape = t.shape;
    h.bytes = r.outputs[i];
    const std::string base = (fs::path(output_dir) / absl::StrCat("output_", i)).string();
    files.emplace_back(base + ".bin", h.bytes);
    files.emplace_back(base + ".npy", runtime::EncodeNpy(h));
  }
  for (const auto& file : files) {
    if (IsSameFile(file.first, model)) {
      return Failure(absl::StrCat(file.first, ": is the model itself; choose another folder"));
    }
  }
  if (absl::Status s = WriteFilesAllOrNone(files); !s.ok()) return Failure(std::string(s.message()));
  std::cout << "model: " << model << "\n"
            << "target: " << target << " on QEMU " << r.board << " (build " << run->build
            << ", variant " << kernels::IsaName(run->isa) << ")\n"
            << "operators: " << sg.ops.size() << ", arena: " << r.arena_bytes
            << " bytes, plan: " << r.plan_bytes << " bytes\n"
            << "instructions: " << r.total_instructions << " per inference (exact, QEMU -icount)\n";
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    std::cout << "output " << i << " '" << t.name << "' " << DTypeName(t.dtype) << " "
              << ShapeString(t.shape) << " -> "
              << (fs::path(output_dir) / absl::StrCat("output_", i, ".bin")).string() << "\n";
  }
  if (profile) {
    for (const fvp::OpCount& op : r.op_counts) {
      std::cout << "  op " << op.index << " " << op.name << ": " << op.instructions
                << " instructions\n";
    }
  }
  if (compare_dir.empty()) return kExitOk;
  bool all_same = true;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    const Diff d = Compare(r.outputs[i], expected[i], t);
    all_same &= !d.size_mismatch && d.count == 0;
    std::cout << "compare output " << i << ": " << FormatDiff(d, r.outputs[i], expected[i], t)
              << "\n";
  }
  if (r.passed.has_value()) {
    std::cout << "Test_result: " << (*r.passed ? "PASS" : "FAIL") << " (self-check on the device)\n";
  }
  return all_same ? kExitOk : kExitFailure;
}

int RunRun(const std::vector<std::string>& args) {
  ArgParser p("run");
  std::vector<std::string> models, inputs;
  std::string output_dir, variant, compare_dir, target, backend, firmware;
  bool dump_all = false, profile = false;
  p.Positional("MODEL", &models, 1, 1);
  p.Repeated("--input", &inputs, "FILE", "graph input i (.npy or raw bytes), in input order");
  p.Option("--output-dir", &output_dir, "DIR", "write output_<i>.bin/.npy (and dumps) here");
  p.Deprecated("--output", "--output-dir");
  p.Option("--target-profile", &target, "NAME",
           "run on a simulated Cortex-M of this profile (QEMU) instead of the host");
  p.Option("--backend", &backend, "qemu", "simulator for --target-profile (default qemu)");
  p.Option("--firmware", &firmware, "ELF", "runner firmware (default: the one built with mica)");
  p.Option("--variant", &variant, "ISA", "kernel variant: scalar, dsp or mve (default: best)");
  p.Flag("--dump-all", &dump_all, "also write t<k>.bin for every operator output tensor k");
  p.Option("--compare", &compare_dir, "DIR", "compare with DIR/output_<i>.bin and t<k>.bin");
  p.Flag("--profile", &profile, "print each operator's wall time");
  if (int rc = p.Parse(args); rc >= 0) return rc;
  // An ExecuTorch bundled program (.bpte) carries its inputs and expected outputs.
  if (inputs.empty() && target.empty() && IsBundledProgramFile(models[0])) {
    return RunBundledProgram(models[0], variant, output_dir);
  }
  if (output_dir.empty()) return UsageError("run: --output-dir DIR is required");

  auto isa = runtime::ParseIsa(variant);
  if (!isa.ok()) return UsageError(absl::StrCat("run: ", isa.status().message()));

  auto graph = LoadModel(models[0]);
  if (!graph.ok()) return Failure(std::string(graph.status().message()));
  const Subgraph& sg = graph->main();
  if (inputs.size() != sg.inputs.size()) {
    std::string expected;
    for (size_t i = 0; i < sg.inputs.size(); ++i) {
      const Tensor& t = sg.tensors[sg.inputs[i]];
      absl::StrAppend(&expected, i ? "; " : "", i, ": '", t.name, "' ", Describe(t));
    }
    return Failure(absl::StrCat(models[0], " takes ", sg.inputs.size(), " input(s), got ",
                                inputs.size(), " --input (expected ", expected, ")"));
  }
  std::vector<HostTensor> host_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto h = ReadInput(i, inputs[i], sg.tensors[sg.inputs[i]]);
    if (!h.ok()) return Failure(std::string(h.status().message()));
    host_inputs.push_back(*std::move(h));
  }
  if (!target.empty()) {
    if (!backend.empty() && backend != "qemu") {
      return Failure(absl::StrCat("run: backend '", backend, "' is not available (only qemu: "
                                  "Arm's Corstone FVPs are not driven by this mica yet)"));
    }
    if (dump_all) return UsageError("run: --dump-all is not available with --target-profile");
    return RunOnTarget(models[0], *graph, target, variant, firmware, host_inputs, output_dir,
                       compare_dir, profile);
  }

  runtime::ExecutorOptions options;
  options.isa = *isa;
  auto exec = runtime::Executor::Create(*graph, options);
  if (!exec.ok()) return Failure(std::string(exec.status().message()));

  std::map<int32_t, std::vector<uint8_t>> dumps;
  const bool want_dumps = dump_all || !compare_dir.empty();
  if (want_dumps) {
    (*exec)->SetTensorObserver([&dumps](int32_t k, const runtime::TensorView& v) {
      dumps[k].assign(v.data, v.data + v.bytes);
    });
  }
  (*exec)->SetProfiling(true);
  const auto start = std::chrono::steady_clock::now();
  auto outputs = (*exec)->Run(host_inputs);
  const auto end = std::chrono::steady_clock::now();
  if (!outputs.ok()) return Failure(std::string(outputs.status().message()));

  std::error_code ec;
  fs::create_directories(output_dir, ec);
  if (!fs::is_directory(output_dir)) {
    return Failure(absl::StrCat("cannot create output directory '", output_dir, "'"));
  }
  // Every output (and dump) is written, or none is: a failure leaves no partial set behind.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string base = (fs::path(output_dir) / absl::StrCat("output_", i)).string();
    files.emplace_back(base + ".bin", (*outputs)[i].bytes);
    files.emplace_back(base + ".npy", runtime::EncodeNpy((*outputs)[i]));
  }
  if (dump_all) {
    for (const Operator& op : sg.ops) {
      for (int32_t k : op.outputs) {
        if (k < 0) continue;
        files.emplace_back((fs::path(output_dir) / absl::StrCat("t", k, ".bin")).string(),
                           dumps[k]);
      }
    }
  }
  for (const auto& file : files) {
    if (IsSameFile(file.first, models[0])) {
      return Failure(absl::StrCat(file.first, ": is the model itself; choose another folder"));
    }
  }
  if (absl::Status s = WriteFilesAllOrNone(files); !s.ok()) {
    return Failure(std::string(s.message()));
  }

  const double ms = std::chrono::duration<double, std::milli>(end - start).count();
  std::cout << "model: " << models[0] << "\n"
            << "variant: " << kernels::IsaName((*exec)->isa()) << "\n"
            << "operators: " << sg.ops.size() << ", arena: " << (*exec)->arena_bytes()
            << " bytes, scratch: " << (*exec)->scratch_bytes()
            << " bytes, state: " << (*exec)->state_bytes() << " bytes\n"
            << "time: " << absl::StrFormat("%.3f", ms) << " ms\n";
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    std::cout << "output " << i << " '" << t.name << "' " << DTypeName(t.dtype) << " "
              << ShapeString(t.shape) << " -> "
              << (fs::path(output_dir) / absl::StrCat("output_", i, ".bin")).string() << "\n";
  }
  if (dump_all) std::cout << "dumps: " << dumps.size() << " tensors written as t<k>.bin\n";
  if (profile) {
    for (const runtime::OpProfile& op : (*exec)->profile()) {
      std::cout << "  op " << op.op_index << " " << op.name << ": "
                << absl::StrFormat("%.3f", op.nanoseconds / 1e6) << " ms\n";
    }
  }

  if (compare_dir.empty()) return kExitOk;
  bool all_same = true;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    const std::string ref = (fs::path(compare_dir) / absl::StrCat("output_", i, ".bin")).string();
    auto want = ReadFileBytes(ref);
    if (!want.ok()) return Failure(std::string(want.status().message()));
    const Diff d = Compare((*outputs)[i].bytes, **want, t);
    all_same &= !d.size_mismatch && d.count == 0;
    std::cout << "compare output " << i << ": "
              << FormatDiff(d, (*outputs)[i].bytes, **want, t) << "\n";
  }
  bool any_dump = false;
  bool diverged = false;
  for (size_t op = 0; op < sg.ops.size() && !diverged; ++op) {
    for (int32_t k : sg.ops[op].outputs) {
      if (k < 0) continue;
      const fs::path ref = fs::path(compare_dir) / absl::StrCat("t", k, ".bin");
      if (!fs::exists(ref)) continue;
      any_dump = true;
      auto want = ReadFileBytes(ref.string());
      if (!want.ok()) return Failure(std::string(want.status().message()));
      const Diff d = Compare(dumps[k], **want, sg.tensors[k]);
      if (d.size_mismatch || d.count > 0) {
        std::cout << "first diverging operator: #" << op << " " << sg.ops[op].name()
                  << ", tensor " << k << " '" << sg.tensors[k].name
                  << "': " << FormatDiff(d, dumps[k], **want, sg.tensors[k]) << "\n";
        diverged = true;
        all_same = false;
        break;
      }
    }
  }
  if (any_dump && !diverged) std::cout << "per-operator dumps: all identical\n";
  return all_same ? kExitOk : kExitFailure;
}

const Registration kRun{{"run",
                         "MODEL --input FILE [--input FILE ...] --output-dir DIR "
                         "[--variant scalar|dsp|mve] [--dump-all] [--compare DIR] [--profile] "
                         "[--target-profile NAME [--backend qemu]]",
                         "Run a model on the host (or a simulated Cortex-M), bit-exact with "
                         "TFLite's reference kernels",
                         RunRun, 40}};

}  // namespace
}  // namespace cli
}  // namespace mica
