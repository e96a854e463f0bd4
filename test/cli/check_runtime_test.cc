// `mica check --runtime`: the memory a deployment reserves (TFLite Micro's arena by default,
// mica's device runtime plan with --runtime mica), the fit verdicts and their JSON keys, and the refusals.
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::RunMica;

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string Model(const char* name) {
  std::string shared = testing::SharedDir();
  return shared.empty() ? std::string()
                        : shared + "/models/mlperf-tiny/" + name + "_int8.tflite";
}

TEST_CASE("mica check --runtime tflm prints the arena to reserve and the fit", "[check]") {
  const std::string model = Model("kws_ds_cnn");
  if (model.empty()) {
    WARN("shared models absent: skipped mica check --runtime");
    return;
  }
  // The default is tflm; the same figures with the flag given.
  CliResult d = RunMica({"check", model, "--target-profile", "cortex-m55"});
  CliResult r = RunMica({"check", model, "--target-profile", "cortex-m55", "--runtime", "tflm"});
  REQUIRE(r.exit_code == 0);
  CHECK(d.out == r.out);
  // TFLite Micro + CMSIS-NN (MVE) measured 27,348 bytes on the M55 for this model.
  CHECK(Has(r.out, "Memory for cortex-m55 (runtime tflm: TFLite Micro arena, 32-bit, CMSIS-NN mve"));
  CHECK(Has(r.out, "arena to reserve  27,372 bytes = head 20,464"));
  CHECK(Has(r.out, "peak              operator #1 DEPTHWISE_CONV_2D"));
  CHECK(Has(r.out, "fits in SRAM"));

  CliResult j = RunMica({"check", model, "--target-profile", "cortex-m4", "--json"});
  REQUIRE(j.exit_code == 0);
  for (const char* key :
       {"\"memory\": {", "\"runtime\": \"tflm\"", "\"arena_bytes\": 22844",
        "\"arena_head_bytes\": 16000", "\"arena_tail_bytes\": 6844", "\"fits_sram\": true",
        "\"sram_margin_bytes\": 239300", "\"fits_flash\": true", "\"flash_margin_bytes\"",
        "\"peak_operator\": \"DEPTHWISE_CONV_2D\"", "\"peak_tensors\": [",
        "\"per-channel quantization\": 4608"}) {
    CAPTURE(key);
    CHECK(Has(j.out, key));
  }
}

TEST_CASE("mica check: a model too large for the part does not fit, by how much", "[check]") {
  const std::string model = Model("vww_mobilenet_v1_025");
  if (model.empty()) {
    WARN("shared models absent: skipped the does-not-fit verdict");
    return;
  }
  CliResult r = RunMica({"check", model, "--target-profile", "cortex-m0"});
  REQUIRE(r.exit_code == 0);
  CHECK(Has(r.out, "does not fit in SRAM (32,768 bytes) by 67,964 bytes"));
  CHECK(Has(r.out, "[error, memory]"));
  CHECK(Has(r.out, "does not fit in SRAM by 67964 bytes (tflm); the peak is at #0 CONV_2D"));
  CliResult j = RunMica({"check", model, "--target-profile", "cortex-m0", "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(Has(j.out, "\"fits_sram\": false"));
  CHECK(Has(j.out, "\"sram_margin_bytes\": -67964"));
}

TEST_CASE("mica check --runtime mica and the refusals", "[check]") {
  const std::string model = Model("kws_ds_cnn");
  if (model.empty()) {
    WARN("shared models absent: skipped mica check --runtime mica");
    return;
  }
  CliResult m = RunMica({"check", model, "--target-profile", "cortex-m4", "--runtime", "mica"});
  REQUIRE(m.exit_code == 0);
  // The device runtime's figure: the DSP plan's arena (16,000 activations + 512 scratch: four
  // int16 im2col columns of the 1x1 convolutions), the bytes the firmware reports on QEMU
  // (asserted in test/device/qemu_test.cc).
  CHECK(Has(m.out, "runtime mica: mica device runtime, plan for dsp kernels"));
  CHECK(Has(m.out, "arena to reserve  16,512 bytes"));

  CliResult e = RunMica({"check", model, "--target-profile", "cortex-m4", "--runtime",
                         "executorch"});
  CHECK(e.exit_code == 1);
  CHECK(Has(e.err, "comes from an ExecuTorch program (.pte/.bpte)"));
  CHECK(e.out.empty());

  CliResult u = RunMica({"check", model, "--target-profile", "cortex-m4", "--runtime", "tvm"});
  CHECK(u.exit_code == 2);
  CHECK(Has(u.err, "unknown runtime 'tvm'"));
}

TEST_CASE("mica check over several models uses the runtime asked for", "[check]") {
  const std::string kws = Model("kws_ds_cnn");
  if (kws.empty()) {
    WARN("shared models absent: skipped the several-model --runtime check");
    return;
  }
  const std::string ad = Model("ad_autoencoder");
  CliResult t = RunMica({"check", kws, ad, "--target-profile", "cortex-m4", "--json"});
  CliResult m = RunMica({"check", kws, ad, "--target-profile", "cortex-m4", "--runtime", "mica",
                         "--json"});
  REQUIRE(t.exit_code == 0);
  REQUIRE(m.exit_code == 0);
  // One JSON Lines row per model; the rows estimate mica's kernels (other instruction counts
  // than CMSIS-NN's), and the device plan's arena is the SRAM used.
  CHECK(Has(m.out, "\"sram\":16512,"));
  CHECK(t.out != m.out);
}

}  // namespace
}  // namespace mica
