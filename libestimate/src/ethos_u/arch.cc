// Ethos-U accelerator constants (doc section 2: Vela's ethos_u55.cpp / ethos_u65.cpp /
// ethos_u85.cpp tables, restated as facts).
#include "absl/strings/str_cat.h"
#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {

absl::StatusOr<Arch> MakeArch(EthosUFamily family, int32_t macs) {
  Arch a;
  a.family = family;
  a.macs = macs;
  if (family != EthosUFamily::kU85) {
    a.max_block = {32, 64, 128};
    const bool u65 = family == EthosUFamily::kU65;
    if (!u65 && macs == 32) {
      a.ofm_ublocks = {{1, 1, 4}};
      a.ifm_ublock = {1, 1, 8};
      a.shram_banks = 16;
      a.granules = {2, 2, 2, 2, 4, 4, 4, 4};
      a.ao_out = {2.0, 3.0, 3.0, 3.0, 4.0, 6.0, 1.0, 2.0};
      a.ao_act = {1.0, 1.0, 0.0};
    } else if (!u65 && macs == 64) {
      a.ofm_ublocks = {{1, 1, 8}};
      a.ifm_ublock = {1, 1, 8};
      a.shram_banks = 16;
      a.granules = {2, 2, 2, 2, 4, 4, 4, 8};
      a.ao_out = {1.0, 1.5, 1.5, 1.5, 2.0, 3.0, 0.5, 1.0};
      a.ao_act = {1.0, 1.0, 0.0};
    } else if (!u65 && macs == 128) {
      a.ofm_ublocks = {{1, 2, 8}};
      a.ifm_ublock = {1, 2, 8};
      a.shram_banks = 24;
      a.granules = {4, 4, 4, 4, 8, 4, 8, 12};
      a.ao_out = {0.75, 1.25, 0.75, 0.75, 1.0, 1.5, 0.25, 0.5};
      a.ao_act = {1.0, 0.5, 0.0};
    } else if (macs == 256) {
      a.ofm_ublocks = {{2, 2, 8}};
      a.ifm_ublock = {2, 2, 8};
      a.shram_banks = 48;
      a.granules = {8, 8, 8, 8, 16, 8, 16, 20};
      a.ao_out = {0.625, 1.125, 0.5, 0.375, 0.5, 0.75, 0.125, 0.25};
      a.ao_act = {1.0, 0.25, 0.0};
    } else if (u65 && macs == 512) {
      a.cores = 2;
      a.ofm_ublocks = {{2, 2, 8}};
      a.ifm_ublock = {2, 2, 8};
      a.shram_banks = 48;
      a.granules = {8, 8, 8, 8, 16, 8, 16, 20};
      a.ao_out = {0.3125, 0.5625, 0.25, 0.1875, 0.25, 0.375, 0.0625, 0.125};
      a.ao_act = {0.5, 0.125, 0.0};
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("Ethos-U", u65 ? "65" : "55", " has no ", macs, "-MAC configuration"));
    }
    if (u65 && macs == 256) a.shram_banks = 48;
    return a;
  }
  a.max_block = {128, 128, 1024};
  switch (macs) {
    case 128:
      a.ofm_ublocks = {{1, 2, 8}, {1, 1, 16}};
      a.ifm_ublock = {1, 2, 8};
      a.ifm_ram = 8192, a.acc_ram = 8192, a.ob_ram = 2048, a.cb_ram = 768;
      a.rb_slots = {64, 64, 128, 128, 104, 16};
      a.ao_out = {0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 0, 0};
      a.ao_act = {0.5, 1.0, 0};
      break;
    case 256:
      a.ofm_ublocks = {{1, 2, 16}, {1, 4, 8}, {2, 2, 8}};
      a.ifm_ublock = {2, 2, 8};
      a.ifm_ram = 16384, a.acc_ram = 16384, a.ob_ram = 2048, a.cb_ram = 1536;
      a.rb_slots = {104, 104, 128, 128, 128, 16};
      a.ao_out = {0.25, 0.25, 0.25, 0.5, 0.5, 0.5, 0, 0};
      a.ao_act = {0.25, 0.5, 0};
      break;
    case 512:
      a.cores = 2;
      a.ofm_ublocks = {{2, 2, 16}, {1, 4, 16}};
      a.ifm_ublock = {2, 2, 16};
      a.ifm_ram = 16384, a.acc_ram = 32768, a.ob_ram = 4096, a.cb_ram = 3072;
      a.rb_slots = {128, 128, 256, 256, 128, 16};
      a.ao_out = {0.125, 0.125, 0.25, 0.5, 0.25, 0.25, 0, 0};
      a.ao_act = {0.125, 0.25, 0};
      break;
    case 1024:
      a.cores = 4;
      a.ofm_ublocks = {{2, 2, 32}, {1, 4, 32}, {2, 4, 16}};
      a.ifm_ublock = {4, 2, 16};
      a.ifm_ram = 16384, a.acc_ram = 65536, a.ob_ram = 4096, a.cb_ram = 6144;
      a.rb_slots = {256, 256, 416, 208, 256, 16};
      a.ao_out = {0.0625, 0.125, 0.25, 0.5, 0.125, 0.25, 0, 0};
      a.ao_act = {0.0625, 0.125, 0};
      break;
    case 2048:
      a.cores = 4;
      a.ofm_ublocks = {{2, 2, 64}, {1, 4, 64}, {4, 4, 16}};
      a.ifm_ublock = {4, 4, 16};
      a.ifm_ram = 32768, a.acc_ram = 131072, a.ob_ram = 8192, a.cb_ram = 12288;
      a.rb_slots = {256, 256, 512, 256, 256, 16};
      a.ao_out = {0.03125, 0.0625, 0.125, 0.25, 0.0625, 0.125, 0, 0};
      a.ao_act = {0.03125, 0.0625, 0};
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("Ethos-U85 has no ", macs, "-MAC configuration"));
  }
  return a;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
