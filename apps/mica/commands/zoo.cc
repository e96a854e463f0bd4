// `mica zoo --output-dir DIR [--seed N] [--calibration-samples N] [--model NAME ...]`: writes the four
// MLPerf Tiny reference architectures with seeded weights as float and int8 TFLite files.
//
// For each model: build the float graph (mica::zoo), run it on seeded random inputs through the
// fp32 executor while a RangeCollector observes every float tensor, quantize with those ranges
// (int8 in, int8 out), write <name>_float.tflite and <name>_int8.tflite, reload both, and run
// the int8 graph on one more seeded input to report its SQNR against the float graph.
// Inputs are uniform in [0, 1) for the image models and [-1, 1) for the others.
// Progress (model, calibration sample, step) goes to stderr only when it is a terminal.
//
// Exit codes: 0 ok, 1 a model failed (one-line error naming it), 2 usage error.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "mica/args.h"
#include "mica/base/status_macros.h"
#include "mica/command.h"
#include "mica/estimate/text_table.h"
#include "mica/model/analysis.h"
#include "mica/model/builder.h"
#include "mica/model/load.h"
#include "mica/model/zoo.h"
#include "mica/quant/metrics.h"
#include "mica/quant/observer.h"
#include "mica/quant/quant_params.h"
#include "mica/quant/quantize.h"
#include "mica/runtime/executor.h"

namespace mica {
namespace cli {
namespace {

struct ZooResult {
  std::string name;
  int64_t ops = 0, macs = 0;
  size_t float_bytes = 0, int8_bytes = 0;
  double sqnr_db = 0;
};

bool IsImageModel(const std::string& name) {
  return name.rfind("vww", 0) == 0 || name.rfind("ic_", 0) == 0;
}

runtime::HostTensor RandomFloatInput(const Tensor& t, SeededRng& rng, bool image) {
  runtime::HostTensor h;
  h.dtype = DType::kFloat32;
  h.shape = t.shape;
  std::vector<float> v(static_cast<size_t>(t.num_elements()));
  for (float& x : v) x = image ? rng.Uniform01() : rng.Symmetric(1.0f);
  h.bytes.resize(v.size() * sizeof(float));
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

quant::QuantParams ParamsOf(const Tensor& t) {
  return quant::QuantParams{t.quant.scale.at(0), static_cast<int32_t>(t.quant.zero_point.at(0))};
}

// Progress of one model on stderr ("\rmica zoo: [2/4] vww...: calibrating 3/8"), or nothing.
using ProgressFn = std::function<void(const std::string& step)>;

absl::StatusOr<ZooResult> MakeOne(const zoo::ZooModel& m, const std::string& dir, uint64_t seed,
                                  int samples, const ProgressFn& progress) {
  ZooResult r;
  r.name = m.name;
  MICA_ASSIGN_OR_RETURN(Graph fg, m.build(seed));
  const GraphCost cost = AnalyzeCost(fg.main());
  r.ops = static_cast<int64_t>(fg.main().ops.size());
  r.macs = cost.total_macs;

  // Calibration: min/max of every float tensor over seeded random inputs.
  MICA_ASSIGN_OR_RETURN(auto exec, runtime::Executor::Create(fg));
  quant::RangeCollector ranges;
  exec->SetTensorObserver([&](int32_t index, const runtime::TensorView& v) {
    if (v.dtype == DType::kFloat32) {
      ranges.Observe(index, v.as<float>(), static_cast<size_t>(v.num_elements()));
    }
  });
  const bool image = IsImageModel(m.name);
  // FNV-1a of the name keeps each model's input stream distinct and platform independent.
  uint64_t h = 1469598103934665603ull;
  for (const char c : std::string(m.name)) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  SeededRng rng(seed ^ h);
  const Tensor& input = fg.main().tensors[static_cast<size_t>(fg.main().inputs.at(0))];
  for (int s = 0; s < samples; ++s) {
    progress(absl::StrCat("calibrating ", s + 1, "/", samples));
    MICA_RETURN_IF_ERROR(exec->Run({RandomFloatInput(input, rng, image)}).status());
  }
  progress("quantizing and writing");
  exec->SetTensorObserver(nullptr);
  MICA_ASSIGN_OR_RETURN(Graph qg, quant::QuantizeGraph(fg, ranges.ranges(), {}));

  MICA_ASSIGN_OR_RETURN(std::vector<uint8_t> fbytes, WriteTflite(fg));
  MICA_ASSIGN_OR_RETURN(std::vector<uint8_t> qbytes, WriteTflite(qg));
  const std::string fpath = dir + "/" + m.name + "_float.tflite";
  const std::string qpath = dir + "/" + m.name + "_int8.tflite";
  // Reload what will be written so a writer bug cannot leave an unreadable file behind.
  auto shared = [](const std::vector<uint8_t>& b) {
    return std::make_shared<const std::vector<uint8_t>>(b);
  };
  MICA_ASSIGN_OR_RETURN(Graph fg2, LoadTflite(shared(fbytes), fpath));
  MICA_ASSIGN_OR_RETURN(Graph qg2, LoadTflite(shared(qbytes), qpath));
  MICA_RETURN_IF_ERROR(WriteFileBytes(fpath, fbytes));
  MICA_RETURN_IF_ERROR(WriteFileBytes(qpath, qbytes));
  r.float_bytes = fbytes.size();
  r.int8_bytes = qbytes.size();

  // Self-check on a held-out input: the reloaded int8 model against the reloaded float one.
  const runtime::HostTensor probe = RandomFloatInput(input, rng, image);
  MICA_ASSIGN_OR_RETURN(auto fexec, runtime::Executor::Create(fg2));
  MICA_ASSIGN_OR_RETURN(std::vector<runtime::HostTensor> fout, fexec->Run({probe}));
  MICA_ASSIGN_OR_RETURN(auto qexec, runtime::Executor::Create(qg2));
  const Subgraph& qsg = qg2.main();
  progress("checking int8 against float");
  const Tensor& qin = qsg.tensors[static_cast<size_t>(qsg.inputs.at(0))];
  const Tensor& qout = qsg.tensors[static_cast<size_t>(qsg.outputs.at(0))];
  runtime::HostTensor qprobe;
  qprobe.dtype = DType::kInt8;
  qprobe.shape = qin.shape;
  const float* pf = reinterpret_cast<const float*>(probe.bytes.data());
  for (size_t i = 0; i < probe.bytes.size() / sizeof(float); ++i) {
    qprobe.bytes.push_back(static_cast<uint8_t>(quant::QuantizeValue(pf[i], ParamsOf(qin))));
  }
  MICA_ASSIGN_OR_RETURN(std::vector<runtime::HostTensor> qo, qexec->Run({qprobe}));
  const std::vector<float> deq = quant::DequantizeInt8(
      reinterpret_cast<const int8_t*>(qo.at(0).bytes.data()), qo.at(0).bytes.size(),
      ParamsOf(qout));
  const quant::ErrorMetrics em = quant::CompareToReference(
      reinterpret_cast<const float*>(fout.at(0).bytes.data()), deq.data(), deq.size());
  r.sqnr_db = em.sqnr_db;
  return r;
}

int RunZoo(const std::vector<std::string>& args) {
  ArgParser p("zoo");
  std::string out, seed_text = "1", samples_text = "8";
  std::vector<std::string> only;
  p.Option("--output-dir", &out, "DIR",
           "directory to write the .tflite files to (created if missing)");
  p.Deprecated("--out", "--output-dir");
  p.Option("--seed", &seed_text, "N", "weight and calibration seed (default 1)");
  p.Option("--calibration-samples", &samples_text, "N",
           "random inputs used to calibrate activation ranges (default 8)");
  p.Repeated("--model", &only, "NAME",
             "build only this model (kws_ds_cnn, vww_mobilenet_v1_025, ic_resnet8, "
             "ad_autoencoder)");
  if (int rc = p.Parse(args); rc >= 0) return rc;
  if (out.empty()) return UsageError("zoo: --output-dir DIR is required");
  uint64_t seed = 0;
  if (!absl::SimpleAtoi(seed_text, &seed)) {
    return UsageError("zoo: --seed needs a non-negative integer, got '" + seed_text + "'");
  }
  int samples = 0;
  if (!absl::SimpleAtoi(samples_text, &samples) || samples < 1 || samples > 100000) {
    return UsageError("zoo: --calibration-samples needs an integer in [1, 100000], got '" +
                      samples_text + "'");
  }
  std::vector<zoo::ZooModel> models;
  for (const std::string& name : only) {
    bool found = false;
    for (const zoo::ZooModel& m : zoo::Models()) {
      if (name == m.name) {
        models.push_back(m);
        found = true;
      }
    }
    if (!found) return UsageError("zoo: unknown model '" + name + "'");
  }
  if (models.empty()) models = zoo::Models();

  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out)) {
    return Failure("zoo: cannot create directory '" + out + "'" +
                   (ec ? ": " + ec.message() : std::string()));
  }

  Table t;
  t.AddColumn("model");
  t.AddColumn("ops", Align::kRight);
  t.AddColumn("MACs", Align::kRight);
  t.AddColumn("float bytes", Align::kRight);
  t.AddColumn("int8 bytes", Align::kRight);
  t.AddColumn("int8 vs float SQNR", Align::kRight);
  const auto start = std::chrono::steady_clock::now();
  // Progress on stderr, one rewritten line, only when stderr is a terminal.
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  for (size_t k = 0; k < models.size(); ++k) {
    const zoo::ZooModel& m = models[k];
    const ProgressFn progress = [&](const std::string& step) {
      if (!tty) return;
      std::cerr << "\r\033[Kmica zoo: [" << k + 1 << "/" << models.size() << "] " << m.name
                << ": " << step << std::flush;
    };
    progress("building");
    absl::StatusOr<ZooResult> r = MakeOne(m, out, seed, samples, progress);
    if (tty) std::cerr << "\r\033[K" << std::flush;
    if (!r.ok()) return Failure(absl::StrCat("zoo: ", m.name, ": ", r.status().message()));
    t.AddRow({r->name, FormatInt(r->ops), FormatInt(r->macs, true),
              FormatInt(static_cast<int64_t>(r->float_bytes), true),
              FormatInt(static_cast<int64_t>(r->int8_bytes), true),
              FormatFixed(r->sqnr_db, 1) + " dB"});
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << t.Render() << "\nwrote " << 2 * models.size() << " files to " << out << " (seed "
            << seed << ", " << FormatFixed(secs, 1) << " s)\n";
  return kExitOk;
}

const Registration kZoo{{"zoo", "--output-dir DIR [--seed N] [--calibration-samples N] [--model NAME]",
                         "Write the MLPerf Tiny reference architectures (seeded) as float and "
                         "int8 TFLite",
                         RunZoo, 5}};

}  // namespace
}  // namespace cli
}  // namespace mica
