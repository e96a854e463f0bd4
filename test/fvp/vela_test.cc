// Vela backend: parsing its summary CSV, and running a fake `vela` script through RunVela.
#include "mica/fvp/vela.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace fvp {
namespace {

using estimate::MemoryArea;

// The 52-column header Vela writes (docs/fvp-output-formats.md section 7.1) with a row of
// hand-picked values.
const char kHeader[] =
    "experiment,network,accelerator_configuration,system_config,memory_mode,core_clock,"
    "arena_cache_size,sram_bandwidth,dram_bandwidth,on_chip_flash_bandwidth,"
    "off_chip_flash_bandwidth,weights_storage_area,feature_map_storage_area,"
    "inferences_per_second,batch_size,inference_time,passes_before_fusing,passes_after_fusing,"
    "sram_memory_used,dram_memory_used,on_chip_flash_memory_used,off_chip_flash_memory_used,"
    "total_original_weights,total_npu_encoded_weights,sram_feature_map_read_bytes,"
    "sram_feature_map_write_bytes,sram_weight_read_bytes,sram_weight_write_bytes,"
    "sram_total_bytes,dram_feature_map_read_bytes,dram_feature_map_write_bytes,"
    "dram_weight_read_bytes,dram_weight_write_bytes,dram_total_bytes,"
    "on_chip_flash_feature_map_read_bytes,on_chip_flash_feature_map_write_bytes,"
    "on_chip_flash_weight_read_bytes,on_chip_flash_weight_write_bytes,on_chip_flash_total_bytes,"
    "off_chip_flash_feature_map_read_bytes,off_chip_flash_feature_map_write_bytes,"
    "off_chip_flash_weight_read_bytes,off_chip_flash_weight_write_bytes,"
    "off_chip_flash_total_bytes,nn_macs,nn_tops,cycles_npu,cycles_sram_access,"
    "cycles_dram_access,cycles_on_chip_flash_access,cycles_off_chip_flash_access,cycles_total";
const char kRow[] =
    "default,net,Ethos_U55_256,Ethos_U55_High_End_Embedded,Shared_Sram,500000000.0,4194304.0,"
    "3.7,3.7,3.7,0.46,Off-chip Flash,SRAM,8570.4,1,0.0001166,39,39,21.5,0.0,0.0,30.25,22016,"
    "24032,104712,73776,62656,28880,284104,0,0,0,0,0,0,0,0,0,0,288,0,29792,0,30208,2664792,"
    "0.045,57329,30623,0,0,19248,58340";

TEST_CASE("ParseVelaSummaryCsv reads Vela's totals", "[vela]") {
  auto e = ParseVelaSummaryCsv(std::string(kHeader) + "\r\n" + kRow + "\r\n", "s.csv");
  REQUIRE(e.ok());
  CHECK(e->backend == "vela");
  CHECK(e->total_cycles == 58340);
  CHECK(e->npu_cycles == 57329);
  CHECK(e->access_cycles[static_cast<int>(MemoryArea::kSram)] == 30623);
  CHECK(e->access_cycles[static_cast<int>(MemoryArea::kOffChipFlash)] == 19248);
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kSram)] == 21.5 * 1024);
  CHECK(e->memory_used_bytes[static_cast<int>(MemoryArea::kOffChipFlash)] == 30.25 * 1024);
  CHECK(e->weights_original_bytes == 22016);
  CHECK(e->weights_encoded_bytes == 24032);
  CHECK(e->macs == 2664792);
  CHECK(e->clock_hz == 500e6);
  CHECK(e->target == "Ethos_U55_256");
}

TEST_CASE("ParseVelaSummaryCsv rejects malformed files, naming them", "[vela]") {
  const std::string header(kHeader), row(kRow);
  struct Case {
    std::string text, expect;
  };
  const Case cases[] = {
      {"", "s.csv: expected a header and a data row"},
      {header + "\n", "s.csv: expected a header and a data row"},
      {header + "\n" + row + ",extra\n", "fields"},
      {"a,b\n1,2\n", "missing column 'cycles_total'"},
      {"cycles_total,cycles_npu\nabc,1\n", "'cycles_total' is not a number"},
      {"cycles_total,cycles_npu\n-5,1\n", "negative"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto e = ParseVelaSummaryCsv(c.text, "s.csv");
    REQUIRE_FALSE(e.ok());
    CHECK(std::string(e.status().message()).find(c.expect) != std::string::npos);
  }
}

// Writes an executable fake `vela` into `dir`: it records its arguments and writes a summary CSV
// into --output-dir (or fails when FAKE_VELA_FAIL is set).
std::string WriteFakeVela(const std::string& dir) {
  std::string path = dir + "/vela";
  std::ofstream f(path);
  f << "#!/bin/sh\n"
       "echo \"$@\" > \"" << dir << "/args.txt\"\n"
       "if [ -n \"$FAKE_VELA_FAIL\" ]; then echo 'Error: unsupported thing' >&2; exit 3; fi\n"
       "out=.\n"
       "while [ $# -gt 0 ]; do\n"
       "  if [ \"$1\" = --output-dir ]; then out=\"$2\"; fi\n"
       "  shift\n"
       "done\n"
       "cat > \"$out/net_summary_Ethos_U55_High_End_Embedded.csv\" <<'EOF'\n"
    << kHeader << "\n" << kRow << "\nEOF\n";
  f.close();
  chmod(path.c_str(), 0755);
  return path;
}

TEST_CASE("RunVela runs the program and parses its CSV", "[vela]") {
  std::string dir = testing::TempDir("vela_test");
  std::string vela = WriteFakeVela(dir);
  auto p = estimate::FindTargetProfile("ethos-u55-256");
  REQUIRE(p.ok());
  VelaOptions opt;
  opt.program = vela;
  auto e = RunVela("model.tflite", *p, opt);
  REQUIRE(e.ok());
  CHECK(e->total_cycles == 58340);
  CHECK(e->target == "ethos-u55-256");
  std::ifstream args(dir + "/args.txt");
  std::string line;
  std::getline(args, line);
  CHECK(line.find("model.tflite --accelerator-config ethos-u55-256 --system-config "
                  "Ethos_U55_High_End_Embedded --memory-mode Shared_Sram --output-dir") == 0);

  // A failing Vela: its last error line is reported.
  setenv("FAKE_VELA_FAIL", "1", 1);
  auto bad = RunVela("model.tflite", *p, opt);
  unsetenv("FAKE_VELA_FAIL");
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("Error: unsupported thing") !=
        std::string::npos);
  CHECK(std::string(bad.status().message()).find("exit 3") != std::string::npos);
}

TEST_CASE("RunVela without Vela or with a Cortex-M profile fails clearly", "[vela]") {
  auto p = estimate::FindTargetProfile("ethos-u55-256");
  REQUIRE(p.ok());
  VelaOptions opt;
  opt.program = "mica-no-such-vela-program";
  auto e = RunVela("m.tflite", *p, opt);
  REQUIRE_FALSE(e.ok());
  CHECK(absl::IsFailedPrecondition(e.status()));
  CHECK(std::string(e.status().message()).find("pip install ethos-u-vela") != std::string::npos);
  auto m = estimate::FindTargetProfile("cortex-m4");
  REQUIRE(m.ok());
  CHECK(absl::IsInvalidArgument(RunVela("m.tflite", *m, {}).status()));
}

}  // namespace
}  // namespace fvp
}  // namespace mica
