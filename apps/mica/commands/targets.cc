// `mica targets [--json]`: the built-in target profiles (Ethos-U ones configured as MLIA's
// profiles of the same name), and the Vela system configurations and memory modes an Ethos-U
// profile can switch to (`--target-profile NAME:system-config=...,memory-mode=...`).
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mica/args.h"
#include "mica/command.h"
#include "mica/estimate/ethos_u.h"
#include "mica/estimate/json_writer.h"
#include "mica/estimate/target.h"
#include "mica/estimate/text_table.h"

namespace mica {
namespace cli {
namespace {

using estimate::TargetKind;
using estimate::TargetProfile;

std::string Summary(const TargetProfile& p) {
  if (p.kind == TargetKind::kEthosU) {
    const auto& e = p.ethos_u;
    return absl::StrCat(e.macs, " MACs/cycle, ", e.system.name, ", ", e.memory_mode.name,
                        e.memory_mode.arena_cache_bytes > 0
                            ? absl::StrCat(" (", e.memory_mode.arena_cache_bytes / 1024,
                                           " KiB arena cache)")
                            : std::string(),
                        ", host ", p.cortex_m.cpu);
  }
  const auto& c = p.cortex_m;
  return absl::StrCat(c.has_mve ? "MVE" : c.has_dsp ? "DSP" : "scalar", " kernels",
                      c.has_fpu ? ", FPU" : ", no FPU", ", ", c.sram_bytes / 1024, " KiB SRAM, ",
                      c.flash_bytes / 1024, " KiB flash");
}

int RunTargets(const std::vector<std::string>& args) {
  ArgParser p("targets");
  bool json = false;
  p.Flag("--json", &json, "print the profiles as JSON");
  if (int rc = p.Parse(args); rc >= 0) return rc;

  std::vector<TargetProfile> profiles = estimate::BuiltinTargets();
  if (json) {
    JsonWriter w;
    w.BeginObject();
    w.Key("schema").String("mica.targets/1");
    w.Key("profiles").BeginArray();
    for (const TargetProfile& t : profiles) {
      w.BeginObject();
      w.Key("name").String(t.name);
      w.Key("kind").String(t.kind == TargetKind::kEthosU ? "ethos-u" : "cortex-m");
      w.Key("description").String(t.description);
      w.Key("clock_hz").Double(t.clock_hz(), 12);
      if (t.kind == TargetKind::kEthosU) {
        w.Key("family").String(estimate::EthosUFamilyName(t.ethos_u.family));
        w.Key("macs_per_cycle").Int(t.ethos_u.macs);
        w.Key("system_config").String(t.ethos_u.system.name);
        w.Key("memory_mode").String(t.ethos_u.memory_mode.name);
        w.Key("arena_cache_bytes").Int(t.ethos_u.memory_mode.arena_cache_bytes);
        w.Key("platform").String(t.ethos_u.platform);
        w.Key("host_cpu").String(t.cortex_m.cpu);
        w.Key("host_clock_hz").Double(t.cortex_m.clock_hz, 12);
      } else {
        const auto& c = t.cortex_m;
        w.Key("cpu").String(c.cpu);
        w.Key("kernels").String(c.has_mve ? "mve" : c.has_dsp ? "dsp" : "scalar");
        w.Key("fpu").Bool(c.has_fpu);
        w.Key("sram_bytes").Int(c.sram_bytes);
        w.Key("flash_bytes").Int(c.flash_bytes);
        w.Key("flash_wait_states").Int(c.flash_wait_states);
      }
      w.EndObject();
    }
    w.EndArray();
    w.Key("ethos_u_system_configs").BeginArray(true);
    for (const std::string& s : estimate::VelaSystemConfigNames()) w.String(s);
    w.EndArray();
    w.Key("ethos_u_memory_modes").BeginArray(true);
    for (const std::string& s : estimate::VelaMemoryModeNames()) w.String(s);
    w.EndArray();
    w.EndObject();
    std::cout << w.str() << "\n";
    return kExitOk;
  }

  Table t;
  t.AddColumn("profile");
  t.AddColumn("kind");
  t.AddColumn("clock", Align::kRight);
  t.AddColumn("configuration");
  for (const TargetProfile& prof : profiles) {
    t.AddRow({prof.name, prof.kind == TargetKind::kEthosU ? "Ethos-U" : "Cortex-M",
              absl::StrCat(FormatFixed(prof.clock_hz() / 1e6, 0), " MHz"), Summary(prof)});
  }
  std::cout << t.Render();
  std::cout << "\nEthos-U profiles mean what MLIA's profiles of the same name mean (its "
               "target-profile files and vela.ini).\n"
            << "Ethos-U system configs (system-config=): "
            << absl::StrJoin(estimate::VelaSystemConfigNames(), ", ")
            << "\nEthos-U memory modes (memory-mode=): "
            << absl::StrJoin(estimate::VelaMemoryModeNames(), ", ")
            << "\nPer profile: --target-profile NAME:system-config=S,memory-mode=M"
               "[,arena-cache-size=BYTES]; Vela's command-line defaults are e.g. "
               "ethos-u65-512:system-config=Ethos_U65_Client_Server,memory-mode="
               "Dedicated_Sram_384KB and ethos-u85-256:system-config=Ethos_U85_SYS_DRAM_Mid,"
               "memory-mode=Dedicated_Sram_384KB.\n"
            << "Own profiles: --target-config FILE (protobuf text, schema "
               "libestimate/src/target.proto; e.g. `base: \"ethos-u55-128\"` plus overrides).\n";
  return kExitOk;
}

const Registration kTargets{
    {"targets", "[--json]", "List the built-in target profiles (Ethos-U NPUs, Cortex-M CPUs)",
     RunTargets, 21}};

}  // namespace
}  // namespace cli
}  // namespace mica
