// LoadModel picks the reader by content and names what it found when it is no model mica
// reads (an ExecuTorch format version it does not read, a README, an archive), listing the
// formats it does read.
#include <fstream>
#include <string>
#include <vector>

#include "mica/model/load.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace {

std::string ErrorFor(const std::string& name, const std::string& bytes) {
  const std::string path = testing::TempDir("load_format") + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  absl::StatusOr<Graph> g = LoadModel(path);
  REQUIRE_FALSE(g.ok());
  const std::string msg(g.status().message());
  CHECK(msg.rfind(path + ": ", 0) == 0);
  CHECK(msg.find('\n') == std::string::npos);
  return msg;
}

TEST_CASE("LoadModel names the format it recognised", "[load]") {
  // ET12 and BP08 go to the ExecuTorch reader (a broken one is refused by it); other versions
  // are named.
  std::string pte("\x1c\x00\x00\x00" "ET12" "eh00", 12);
  pte += std::string(64, '\0');
  CHECK_THAT(ErrorFor("model.pte", pte), Catch::Contains("extended header length 0"));
  std::string old_pte("\x1c\x00\x00\x00" "ET09", 8);
  old_pte += std::string(64, '\0');
  CHECK_THAT(ErrorFor("old.pte", old_pte),
             Catch::Contains("is an ExecuTorch program of format ET09 (mica reads ET12)"));
  std::string bpte("\x1c\x00\x00\x00" "BP08", 8);
  bpte += std::string(64, '\0');
  CHECK_THAT(ErrorFor("model.bpte", bpte), Catch::Contains("ExecuTorch bundled program"));
  std::string old_bpte("\x1c\x00\x00\x00" "BP07", 8);
  old_bpte += std::string(64, '\0');
  CHECK_THAT(ErrorFor("old.bpte", old_bpte),
             Catch::Contains("is an ExecuTorch bundled program of format BP07 (mica reads BP08)"));
  CHECK_THAT(ErrorFor("README.md", "# My model\n\nTrained on ...\n"),
             Catch::Contains("is a text file, not a model mica reads"));
  CHECK_THAT(ErrorFor("model.pt2", std::string("PK\x03\x04", 4) + std::string(40, 'x')),
             Catch::Contains("zip archive"));
  CHECK_THAT(ErrorFor("model.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(40, '\0')),
             Catch::Contains("HDF5"));
  const std::string garbage("\x01\x02\x03\x04\xff\xfe\x00\x11", 8);
  const std::string msg = ErrorFor("model.bin", garbage);
  CHECK_THAT(msg, Catch::Contains("not a TFLite model"));
  CHECK_THAT(msg, Catch::Contains("not a valid ONNX model"));
  CHECK_THAT(msg, Catch::Contains(
                      "mica reads TFLite flatbuffers (.tflite), ExecuTorch programs (.pte, .bpte) "
                      "and ONNX"));
}

}  // namespace
}  // namespace mica
