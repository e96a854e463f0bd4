// `mica check` output byte for byte against goldens in test/data/cli/check/, written by the
// mica of the commit before the report renderers moved into libestimate. The model path and
// the version are replaced by MODEL and VERSION before comparing. To regenerate the goldens
// after an intended change, run this test with MICA_UPDATE_GOLDENS=1 and review the diff.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_util.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

using testing::CliResult;
using testing::RunMica;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Returns `s` with every `from` replaced by `to`.
std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

// Replaces the value of the JSON "mica_version" field by VERSION.
std::string MaskVersion(std::string s) {
  const std::string key = "\"mica_version\": \"";
  const size_t at = s.find(key);
  if (at == std::string::npos) return s;
  const size_t end = s.find('"', at + key.size());
  return s.replace(at + key.size(), end - at - key.size(), "VERSION");
}

struct GoldenCase {
  const char* golden;  // file under test/data/cli/check/
  const char* model;   // under the shared models directory
  std::vector<std::string> flags;
};

TEST_CASE("mica check output matches the goldens byte for byte", "[check]") {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) {
    WARN("shared models absent: skipped the mica check goldens");
    return;
  }
  const std::vector<GoldenCase> cases = {
      {"kws_u55_m55.txt", "mlperf-tiny/kws_ds_cnn_int8.tflite",
       {"--target-profile", "ethos-u55-256", "--target-profile", "cortex-m55", "--compatibility",
        "--performance"}},
      {"kws_u55_m4.json", "mlperf-tiny/kws_ds_cnn_int8.tflite",
       {"--target-profile", "ethos-u55-256", "--target-profile", "cortex-m4", "--performance",
        "--json"}},
      {"resnet8_u65_dedicated256.txt", "mlperf-tiny/ic_resnet8_int8.tflite",
       {"--target-profile", "ethos-u65-256", "--system-config", "Ethos_U65_Mid_End",
        "--memory-mode", "Dedicated_Sram_256KB", "--performance"}},
      {"vww_u85_512.json", "mlperf-tiny/vww_mobilenet_v1_025_int8.tflite",
       {"--target-profile", "ethos-u85-512", "--compatibility", "--performance", "--json"}},
      {"lstm_u55_128.txt", "more/micro_speech_lstm.tflite", {"--target-profile", "ethos-u55-128"}},
      {"ad_float_u55_m7.txt", "mlperf-tiny/ad_autoencoder_float.tflite",
       {"--target-profile", "ethos-u55-64", "--target-profile", "cortex-m7", "--performance"}},
  };
  for (const GoldenCase& c : cases) {
    CAPTURE(c.golden);
    const std::string model = shared + "/models/" + c.model;
    std::vector<std::string> args = {"check", model};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    CliResult r = RunMica(args);
    CAPTURE(r.err);
    REQUIRE(r.exit_code == 0);
    const std::string got = MaskVersion(ReplaceAll(r.out, model, "MODEL"));
    const std::string path = std::string(MICA_TEST_DATA_DIR) + "/cli/check/" + c.golden;
    if (const char* update = std::getenv("MICA_UPDATE_GOLDENS"); update && *update == '1') {
      std::ofstream(path, std::ios::binary) << got;
      WARN("rewrote " << path);
    }
    const std::string want = ReadFile(path);
    REQUIRE(!want.empty());
    CHECK(got == want);
  }
}

}  // namespace
}  // namespace mica
