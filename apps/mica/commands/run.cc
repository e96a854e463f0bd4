// `mica run MODEL --input FILE [--input FILE ...] --output-dir DIR [--variant scalar|dsp|mve]
//            [--frames N] [--dump-all DIR] [--compare DIR] [--top-k K] [--profile]`
//
// Runs the model on the host, bit-exactly as TFLite's reference kernels would, and prints a
// summary of each output: dtype and shape, its first values, dequantized values for a quantized
// output, and for a classifier-shaped output (all elements along the last axis) the top-k
// classes. With
// --target-profile NAME (a Cortex-M profile) it runs instead on QEMU through the mica runner
// firmware of the profile's ISA (--variant overrides it), writes the same output files, prints
// the exact instruction count per inference (per operator with --profile) and, with --compare,
// also has the firmware self-check (Test_result: PASS/FAIL).
//
// Inputs, one --input per graph input in order: a .npy file (dtype and shape must match the
// input; size-1 dimensions may differ) or raw little-endian bytes in the input's dtype, whose
// size must match exactly. Without --input, mica lists the inputs the model expects and how to
// pass them (it never makes up input data). Writes DIR/output_<i>.bin (raw bytes) and
// DIR/output_<i>.npy for every graph output. --dump-all DUMPS writes every tensor the run
// computes (graph inputs and every operator's outputs) as DUMPS/t<k>.bin (raw, the naming of
// ../shared/golden) and DUMPS/t<k>_<name>.npy (dtype and shape; the tensor name reduced to
// [A-Za-z0-9._-]); `--dump-all` followed by another flag still dumps into --output-dir.
//
// Stateful models (SVDF, LSTM: variable tensors) run several frames in a row with their state
// kept: give N sets of inputs (--input per graph input, frame after frame), one set and
// --frames N to repeat it, or .npy inputs with a leading frame axis ([N, ...input shape]).
// Output i of every frame is written as output_<i>_frames.npy ([N, ...output shape]; at most
// 1 GiB in all); output_<i>.bin/.npy, dumps and --compare are those of the last frame.
//
// Every file (outputs, frames, dumps) is written atomically, all or none.
// --compare REF compares each output with
// REF/output_<i>.bin (count of differing elements and max abs difference, in the dtype's raw
// values) and, when REF holds t<k>.bin dumps, names the first operator (in execution order)
// whose output differs. --profile prints each operator's wall time.
//
// Exit codes: 0 ok (and, with --compare, every output identical), 1 failure or a --compare
// mismatch, 2 usage error.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/bundled_run.h"
#include "mica/command.h"
#include "mica/device_run.h"
#include "mica/model/load.h"
#include "mica/model_input.h"
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

// "int8 [1,49,10,1] (490 bytes, real = 0.5 * (q - -128))": what an --input file must hold.
std::string DescribeInput(const Tensor& t) {
  std::string q;
  if (!t.quant.empty() && !t.quant.per_channel()) {
    q = absl::StrCat(", real = ", t.quant.scale[0], " * (q - ",
                     t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0], ")");
  }
  return absl::StrCat(std::string(DTypeName(t.dtype)), " ", ShapeString(t.shape), " (",
                      t.num_bytes(), " bytes", q, ")");
}

// The message for `mica run MODEL` without --input: the inputs, their types and how to pass them.
std::string NoInputMessage(const std::string& model, const Subgraph& sg) {
  std::string m = absl::StrCat("run: ", model, " takes ", sg.inputs.size(),
                               " input(s); give one --input FILE per input, in this order:\n");
  for (size_t i = 0; i < sg.inputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.inputs[i]];
    absl::StrAppend(&m, "  --input FILE   input ", i, " '", t.name, "': ", DescribeInput(t), "\n");
  }
  absl::StrAppend(&m,
                  "FILE is a .npy of that dtype and shape (size-1 dimensions may differ) or exactly "
                  "that many bytes of raw little-endian data; for several frames of a stateful "
                  "model give the inputs frame after frame (or add --frames N). mica does not "
                  "make up inputs: there is no random input mode.");
  return m;
}

// A tensor name reduced to a safe file-name part: [A-Za-z0-9._-], at most 64 characters, never
// starting with '.'.
std::string SafeName(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    out += ok ? c : '_';
    if (out.size() == 64) break;
  }
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
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

// Reads input `i` from `path` as the model's input tensor `t`: one frame, or several from a
// .npy whose extra leading axis counts frames ([N, ...the input's shape]).
absl::StatusOr<std::vector<HostTensor>> ReadInput(size_t i, const std::string& path,
                                                  const Tensor& t) {
  const std::string who = absl::StrCat("input ", i, " '", t.name, "' (", path, ")");
  auto bytes = ReadFileBytes(path);
  if (!bytes.ok()) return bytes.status();
  if (IsNpy(**bytes)) {
    auto npy = runtime::ParseNpy(**bytes, path);
    if (!npy.ok()) return npy.status();
    const std::vector<int32_t> frame_shape =
        npy->shape.empty() ? npy->shape : std::vector<int32_t>(npy->shape.begin() + 1, npy->shape.end());
    if (npy->dtype == t.dtype && WithoutOnes(npy->shape) == WithoutOnes(t.shape)) {
      npy->shape = t.shape;
      return std::vector<HostTensor>{*std::move(npy)};
    }
    if (npy->dtype == t.dtype && !npy->shape.empty() && npy->shape[0] > 1 &&
        WithoutOnes(frame_shape) == WithoutOnes(t.shape)) {
      std::vector<HostTensor> frames(static_cast<size_t>(npy->shape[0]));
      const size_t each = t.num_bytes();
      for (size_t f = 0; f < frames.size(); ++f) {
        frames[f].dtype = t.dtype;
        frames[f].shape = t.shape;
        frames[f].bytes.assign(npy->bytes.begin() + static_cast<long>(f * each),
                               npy->bytes.begin() + static_cast<long>((f + 1) * each));
      }
      return frames;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        who, ": .npy holds ", std::string(DTypeName(npy->dtype)), " ", ShapeString(npy->shape),
        ", expected ", Describe(t), " (or [N,...] for N frames)"));
  }
  if ((*bytes)->size() != t.num_bytes()) {
    return absl::InvalidArgumentError(absl::StrCat(who, ": ", (*bytes)->size(),
                                                   " bytes, expected ", Describe(t)));
  }
  HostTensor h;
  h.dtype = t.dtype;
  h.shape = t.shape;
  h.bytes = **bytes;
  return std::vector<HostTensor>{std::move(h)};
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

std::string Number(double v) { return absl::StrFormat("%.6g", v); }

// The lines printed under each output: first values, dequantized values, top-k classes.
std::string OutputSummary(const std::vector<uint8_t>& bytes, const Tensor& t, int top_k) {
  const int64_t n = t.num_elements();
  const size_t es = DTypeBytes(t.dtype, 1);
  if (n <= 0 || es == 0 || bytes.size() != static_cast<size_t>(n) * es) return "";
  constexpr int64_t kShown = 8;
  const int64_t shown = std::min(n, kShown);
  const bool quantized = !t.quant.empty() && !t.quant.per_channel() && t.dtype != DType::kFloat32;
  const double scale = quantized ? t.quant.scale[0] : 1.0;
  const double zp = quantized && !t.quant.zero_point.empty() ? t.quant.zero_point[0] : 0.0;
  auto real = [&](int64_t i) {
    const double q = Element(bytes, t.dtype, static_cast<size_t>(i));
    return quantized ? scale * (q - zp) : q;
  };
  std::string out = absl::StrCat("  values", n > shown ? absl::StrCat(" (first ", shown, " of ", n, ")") : "", ":");
  for (int64_t i = 0; i < shown; ++i) {
    absl::StrAppend(&out, " ", Number(Element(bytes, t.dtype, static_cast<size_t>(i))));
  }
  out += "\n";
  if (quantized) {
    absl::StrAppend(&out, "  dequantized (", Number(scale), " * (q - ", Number(zp), ")):");
    for (int64_t i = 0; i < shown; ++i) absl::StrAppend(&out, " ", Number(real(i)));
    out += "\n";
  }
  // Classifier-shaped: every element along the last axis (e.g. [1, 12] or [12]).
  const bool classes = !t.shape.empty() && t.shape.back() == n && n >= 2 && top_k > 0;
  if (classes) {
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    const int64_t k = std::min<int64_t>(top_k, n);
    std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
      const double ra = real(a), rb = real(b);
      return ra != rb ? ra > rb : a < b;  // ties: lower class first
    });
    absl::StrAppend(&out, "  top-", k, " (class: value", quantized ? ", dequantized" : "", "):");
    for (int64_t j = 0; j < k; ++j) {
      absl::StrAppend(&out, j ? "," : "", " ", order[static_cast<size_t>(j)], ": ",
                      Number(real(order[static_cast<size_t>(j)])));
    }
    out += "\n";
  }
  return out;
}

// One short line per frame: the top class of a classifier output, else its first values.
std::string FrameSummary(const std::vector<uint8_t>& bytes, const Tensor& t) {
  const int64_t n = t.num_elements();
  const size_t es = DTypeBytes(t.dtype, 1);
  if (n <= 0 || es == 0 || bytes.size() != static_cast<size_t>(n) * es) return "";
  const bool quantized = !t.quant.empty() && !t.quant.per_channel() && t.dtype != DType::kFloat32;
  const double scale = quantized ? t.quant.scale[0] : 1.0;
  const double zp = quantized && !t.quant.zero_point.empty() ? t.quant.zero_point[0] : 0.0;
  auto real = [&](int64_t i) {
    const double q = Element(bytes, t.dtype, static_cast<size_t>(i));
    return quantized ? scale * (q - zp) : q;
  };
  if (!t.shape.empty() && t.shape.back() == n && n >= 2) {
    int64_t best = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (real(i) > real(best)) best = i;
    }
    return absl::StrCat("top-1 ", best, ": ", Number(real(best)));
  }
  std::string out = "values";
  for (int64_t i = 0; i < std::min<int64_t>(n, 4); ++i) absl::StrAppend(&out, " ", Number(real(i)));
  return out + (n > 4 ? " ..." : "");
}

// `mica run -t PROFILE`: the same outputs, computed by the device runtime on QEMU.
int RunOnTarget(const std::string& model, const Graph& graph, const std::string& target,
                const std::string& variant, const std::string& firmware,
                const std::vector<HostTensor>& host_inputs, const std::string& output_dir,
                const std::string& compare_dir, bool profile, int top_k) {
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
  // A simulated run takes seconds to minutes: elapsed time on stderr when it is a terminal.
  std::atomic<bool> finished{false};
  std::thread ticker;
  if (::isatty(STDERR_FILENO) != 0) {
    ticker = std::thread([&finished, &target] {
      const auto start = std::chrono::steady_clock::now();
      bool printed = false;
      // The first second is left to the runner's own "running on ..." line.
      for (int i = 0; i < 10 && !finished; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      while (!finished) {
        const auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::steady_clock::now() - start).count();
        std::cerr << "\r\033[Kmica run: on QEMU (" << target << "), " << secs << " s elapsed"
                  << std::flush;
        printed = true;
        for (int i = 0; i < 10 && !finished; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      }
      if (printed) std::cerr << "\r\033[K" << std::flush;
    });
  }
  auto run = RunOnQemu(graph, *isa, inputs, expected, firmware, profile, cpu);
  finished = true;
  if (ticker.joinable()) ticker.join();
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
              << (fs::path(output_dir) / absl::StrCat("output_", i, ".bin")).string() << "\n"
              << OutputSummary(r.outputs[i], t, top_k);
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

int RunRun(const std::vector<std::string>& raw_args) {
  // `--dump-all` used to be a flag dumping into --output-dir: followed by another flag (or by
  // nothing) it still does, with a warning.
  std::vector<std::string> args = raw_args;
  bool dump_legacy = false;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--dump-all" && (i + 1 == args.size() || args[i + 1].rfind("-", 0) == 0)) {
      args[i] = "--dump-all=";
      dump_legacy = true;
    }
  }
  ArgParser p("run");
  std::vector<std::string> models, inputs;
  std::string output_dir, variant, compare_dir, target, backend, firmware, dump_dir, method;
  std::string frames_text, top_k_text = "5";
  bool profile = false;
  p.Positional("MODEL", &models, 1, 1);
  p.Repeated("--input", &inputs, "FILE",
             "graph input i (.npy or raw bytes), in input order; frame after frame for several "
             "frames, or a .npy with a leading frame axis");
  p.Option("--output-dir", &output_dir, "DIR", "write output_<i>.bin/.npy here");
  p.Deprecated("--output", "--output-dir");
  p.Option("--target-profile", &target, "NAME",
           "run on a simulated Cortex-M of this profile (QEMU) instead of the host");
  p.Option("--backend", &backend, "qemu", "simulator for --target-profile (default qemu)");
  p.Option("--firmware", &firmware, "ELF", "runner firmware (default: the one built with mica)");
  p.Option("--variant", &variant, "ISA", "kernel variant: scalar, dsp or mve (default: best)");
  p.Option("--frames", &frames_text, "N",
           "run N frames in a row keeping the state (LSTM/SVDF variable tensors); with one set "
           "of inputs, it is repeated");
  p.Option("--dump-all", &dump_dir, "DIR",
           "write every computed tensor k as DIR/t<k>.bin and DIR/t<k>_<name>.npy");
  p.Option("--compare", &compare_dir, "DIR", "compare with DIR/output_<i>.bin and t<k>.bin");
  p.Option("--top-k", &top_k_text, "K", "classes listed for a classifier output (default 5)");
  p.Flag("--profile", &profile, "print each operator's wall time");
  p.Option("--method", &method, "NAME",
           "ExecuTorch programs: the method to run (default: the first; a .bpte: the first "
           "method with test cases)");
  if (int rc = p.Parse(args); rc >= 0) return rc;
  // An ExecuTorch bundled program (.bpte) carries its inputs and expected outputs: checked on
  // the host, or on a simulated Cortex-M with --target-profile.
  if (inputs.empty() && IsBundledProgramFile(models[0])) {
    if (!target.empty()) {
      if (!backend.empty() && backend != "qemu") {
        return Failure(absl::StrCat("run: backend '", backend, "' is not available (only qemu: "
                                    "Arm's Corstone FVPs are not driven by this mica yet)"));
      }
      if (!compare_dir.empty() || !dump_dir.empty() || profile) {
        return UsageError("run: a bundled program on --target-profile takes no --compare, "
                          "--dump-all or --profile (it checks its own expected outputs)");
      }
    }
    return RunBundledProgram(models[0], variant, output_dir, method, target, firmware);
  }
  if (output_dir.empty()) return UsageError("run: --output-dir DIR is required");
  if (dump_legacy && dump_dir.empty()) {
    std::cerr << "mica run: warning: --dump-all now takes a folder; dumping into --output-dir\n";
    dump_dir = output_dir;
  }
  const bool dump_all = !dump_dir.empty();
  int top_k = 0;
  if (!absl::SimpleAtoi(top_k_text, &top_k) || top_k < 0 || top_k > 1000) {
    return UsageError("run: --top-k needs an integer in [0, 1000], got '" + top_k_text + "'");
  }
  int frames = 0;
  if (!frames_text.empty() &&
      (!absl::SimpleAtoi(frames_text, &frames) || frames < 1 || frames > 1000000)) {
    return UsageError("run: --frames needs an integer in [1, 1000000], got '" + frames_text + "'");
  }

  auto isa = runtime::ParseIsa(variant);
  if (!isa.ok()) return UsageError(absl::StrCat("run: ", isa.status().message()));

  auto graph = LoadModelInput(models[0], method);
  if (!graph.ok()) return Failure(std::string(graph.status().message()));
  const Subgraph& sg = graph->main();
  const size_t n_in = sg.inputs.size();
  if (inputs.empty() && n_in > 0) return UsageError(NoInputMessage(models[0], sg));
  // Frames: one set of inputs (repeated), or one set per frame.
  size_t sets = n_in == 0 ? 1 : inputs.size() / n_in;
  const bool whole_sets = n_in == 0 ? inputs.empty() : inputs.size() % n_in == 0;
  if (!whole_sets || (frames > 0 && sets != 1 && sets != static_cast<size_t>(frames))) {
    std::string expected;
    for (size_t i = 0; i < n_in; ++i) {
      const Tensor& t = sg.tensors[sg.inputs[i]];
      absl::StrAppend(&expected, i ? "; " : "", i, ": '", t.name, "' ", Describe(t));
    }
    return Failure(absl::StrCat(models[0], " takes ", n_in, " input(s), got ", inputs.size(),
                                " --input", frames > 0 ? absl::StrCat(" for ", frames, " frames") : "",
                                " (expected ", expected,
                                n_in > 0 ? "; several frames take the inputs frame after frame" : "",
                                ")"));
  }
  // Each --input holds one tensor, or N frames (a .npy with a leading frame axis; only with
  // one set of inputs, every such input agreeing on N; plain inputs are then repeated).
  std::vector<std::vector<HostTensor>> read(inputs.size());
  size_t npy_frames = 1;
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto h = ReadInput(i % n_in, inputs[i], sg.tensors[sg.inputs[i % n_in]]);
    if (!h.ok()) return Failure(std::string(h.status().message()));
    if (h->size() > 1) {
      if (sets > 1 || (npy_frames > 1 && npy_frames != h->size())) {
        return Failure(absl::StrCat(inputs[i], ": holds ", h->size(),
                                    " frames; frame axes need one set of inputs that agree on "
                                    "the number of frames"));
      }
      npy_frames = h->size();
    }
    read[i] = *std::move(h);
  }
  if (npy_frames > 1) {
    if (frames > 0 && static_cast<size_t>(frames) != npy_frames) {
      return Failure(absl::StrCat("--frames ", frames, " but the inputs hold ", npy_frames,
                                  " frames"));
    }
    sets = npy_frames;
  }
  std::vector<std::vector<HostTensor>> frame_inputs(sets);
  for (size_t f = 0; f < sets; ++f) {
    for (size_t i = 0; i < n_in; ++i) {
      const std::vector<HostTensor>& r = npy_frames > 1 ? read[i] : read[f * n_in + i];
      frame_inputs[f].push_back(r.size() > 1 ? r[f] : r[0]);
    }
  }
  if (frames == 0) frames = static_cast<int>(sets);
  if (!target.empty()) {
    if (!backend.empty() && backend != "qemu") {
      return Failure(absl::StrCat("run: backend '", backend, "' is not available (only qemu: "
                                  "Arm's Corstone FVPs are not driven by this mica yet)"));
    }
    if (dump_all) return UsageError("run: --dump-all is not available with --target-profile");
    if (frames > 1) return UsageError("run: several frames are not available with --target-profile");
    return RunOnTarget(models[0], *graph, target, variant, firmware, frame_inputs[0], output_dir,
                       compare_dir, profile, top_k);
  }

  // Every frame's outputs are kept until all files are written at once: bound them.
  if (frames > 1) {
    uint64_t per_frame = 0;
    for (int32_t o : sg.outputs) per_frame += sg.tensors[static_cast<size_t>(o)].num_bytes();
    constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;
    if (per_frame * static_cast<uint64_t>(frames) > kMaxFrameBytes) {
      return Failure(absl::StrCat("run: ", frames, " frames of ", per_frame,
                                  " output bytes each exceed the 1 GiB mica keeps for frame "
                                  "outputs; run fewer frames"));
    }
  }
  runtime::ExecutorOptions options;
  options.isa = *isa;
  auto exec = runtime::Executor::Create(*graph, options);
  if (!exec.ok()) return Failure(std::string(exec.status().message()));

  std::map<int32_t, HostTensor> dumps;
  const bool want_dumps = dump_all || !compare_dir.empty();
  if (want_dumps) {
    (*exec)->SetTensorObserver([&dumps](int32_t k, const runtime::TensorView& v) {
      dumps[k] = v.ToHost();
    });
  }
  (*exec)->SetProfiling(true);
  (*exec)->SetKeepState(true);
  // Every output, frame and dump is written, or none is: a failure leaves no partial set behind.
  std::vector<std::pair<std::string, std::vector<uint8_t>>> files;
  std::vector<std::string> frame_lines;
  std::vector<HostTensor> outputs;
  std::vector<HostTensor> stacked(sg.outputs.size());  // every frame's outputs: [N, ...]
  for (size_t i = 0; i < stacked.size(); ++i) {
    const Tensor& t = sg.tensors[static_cast<size_t>(sg.outputs[i])];
    stacked[i].dtype = t.dtype;
    stacked[i].shape = t.shape;
    stacked[i].shape.insert(stacked[i].shape.begin(), frames);
  }
  // Frame lines printed: all of a short run, else the first and last kShownFrames.
  constexpr int kShownFrames = 16;
  double ms = 0;
  for (int f = 0; f < frames; ++f) {
    const auto start = std::chrono::steady_clock::now();
    auto out = (*exec)->Run(frame_inputs[sets == 1 ? 0 : static_cast<size_t>(f)]);
    ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) {
      return Failure(frames > 1 ? absl::StrCat("frame ", f, ": ", out.status().message())
                                : std::string(out.status().message()));
    }
    if (frames > 1) {
      for (size_t i = 0; i < out->size() && i < stacked.size(); ++i) {
        stacked[i].bytes.insert(stacked[i].bytes.end(), (*out)[i].bytes.begin(),
                                (*out)[i].bytes.end());
      }
      if (frames <= 2 * kShownFrames || f < kShownFrames || f >= frames - kShownFrames) {
        std::string line = absl::StrCat("frame ", f, ":");
        for (size_t i = 0; i < out->size(); ++i) {
          absl::StrAppend(&line, i ? ";" : "", " output ", i, " ",
                          FrameSummary((*out)[i].bytes, sg.tensors[sg.outputs[i]]));
        }
        frame_lines.push_back(line);
      } else if (f == kShownFrames) {
        frame_lines.push_back(absl::StrCat("... ", frames - 2 * kShownFrames, " frames not shown"));
      }
    }
    outputs = *std::move(out);
  }

  std::error_code ec;
  for (const std::string& dir : {output_dir, dump_dir}) {
    if (dir.empty()) continue;
    fs::create_directories(dir, ec);
    if (!fs::is_directory(dir)) {
      return Failure(absl::StrCat("cannot create output directory '", dir, "'"));
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string base = (fs::path(output_dir) / absl::StrCat("output_", i)).string();
    files.emplace_back(base + ".bin", outputs[i].bytes);
    files.emplace_back(base + ".npy", runtime::EncodeNpy(outputs[i]));
    if (frames > 1 && i < stacked.size()) {
      files.emplace_back(base + "_frames.npy", runtime::EncodeNpy(stacked[i]));
      std::vector<uint8_t>().swap(stacked[i].bytes);
    }
  }
  if (dump_all) {
    for (const auto& [k, h] : dumps) {
      const fs::path base = fs::path(dump_dir) / absl::StrCat("t", k);
      files.emplace_back(base.string() + ".bin", h.bytes);
      const std::string name = SafeName(sg.tensors[static_cast<size_t>(k)].name);
      files.emplace_back(base.string() + (name.empty() ? "" : "_" + name) + ".npy",
                         runtime::EncodeNpy(h));
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

  std::cout << "model: " << models[0] << "\n"
            << "variant: " << kernels::IsaName((*exec)->isa()) << "\n"
            << "operators: " << sg.ops.size() << ", arena: " << (*exec)->arena_bytes()
            << " bytes, scratch: " << (*exec)->scratch_bytes()
            << " bytes, state: " << (*exec)->state_bytes() << " bytes\n";
  if (frames > 1) {
    std::cout << "frames: " << frames << " in a row, "
              << ((*exec)->state_bytes() > 0 ? "state kept between frames"
                                             : "the model has no state (each frame independent)")
              << "; time " << absl::StrFormat("%.3f", ms) << " ms in all\n";
    for (const std::string& line : frame_lines) std::cout << "  " << line << "\n";
  } else {
    std::cout << "time: " << absl::StrFormat("%.3f", ms) << " ms\n";
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    std::cout << "output " << i << " '" << t.name << "' " << DTypeName(t.dtype) << " "
              << ShapeString(t.shape) << (frames > 1 ? " (last frame)" : "") << " -> "
              << (fs::path(output_dir) / absl::StrCat("output_", i, ".bin")).string() << "\n"
              << OutputSummary(outputs[i].bytes, t, top_k);
  }
  if (dump_all) {
    std::cout << "dumps: " << dumps.size() << " tensors written to " << dump_dir
              << " as t<k>.bin and t<k>_<name>.npy" << (frames > 1 ? " (last frame)" : "")
              << "\n";
  }
  if (profile) {
    for (const runtime::OpProfile& op : (*exec)->profile()) {
      std::cout << "  op " << op.op_index << " " << op.name << ": "
                << absl::StrFormat("%.3f", op.nanoseconds / 1e6) << " ms\n";
    }
  }

  if (compare_dir.empty()) return kExitOk;
  bool all_same = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = sg.tensors[sg.outputs[i]];
    const std::string ref = (fs::path(compare_dir) / absl::StrCat("output_", i, ".bin")).string();
    auto want = ReadFileBytes(ref);
    if (!want.ok()) return Failure(std::string(want.status().message()));
    const Diff d = Compare(outputs[i].bytes, **want, t);
    all_same &= !d.size_mismatch && d.count == 0;
    std::cout << "compare output " << i << ": " << FormatDiff(d, outputs[i].bytes, **want, t)
              << "\n";
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
      const std::vector<uint8_t>& got = dumps[k].bytes;
      const Diff d = Compare(got, **want, sg.tensors[k]);
      if (d.size_mismatch || d.count > 0) {
        std::cout << "first diverging operator: #" << op << " " << sg.ops[op].name()
                  << ", tensor " << k << " '" << sg.tensors[k].name
                  << "': " << FormatDiff(d, got, **want, sg.tensors[k]) << "\n";
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
                         "[--variant scalar|dsp|mve] [--frames N] [--dump-all DIR] "
                         "[--compare DIR] [--top-k K] [--profile] "
                         "[--target-profile NAME [--backend qemu]]",
                         "Run a model on the host (or a simulated Cortex-M), bit-exact with "
                         "TFLite's reference kernels",
                         RunRun, 40}};

}  // namespace
}  // namespace cli
}  // namespace mica
