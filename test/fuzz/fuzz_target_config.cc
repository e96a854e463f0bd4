// libFuzzer target: --target-config files (protobuf text format) and the estimators driven by
// whatever profile they describe. Every input is refused with a one-line error naming the file,
// or gives a profile under which both estimators cost a small model without crashing (a
// hostile clock, bandwidth, latency or memory size must not divide by zero or overflow).
//
// Structure-aware: LLVMFuzzerCustomMutator edits the text a field at a time (replaces a value
// with a boundary number or a known name, duplicates or drops a line, or inserts a field of the
// schema), so mutants stay parseable and reach the profile's validation and the estimators.
// Seeds: the built-in profiles (libestimate/targets/*.textproto).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "mica/estimate/estimate.h"
#include "mica/estimate/target.h"
#include "mica/model/builder.h"

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_target_config: %s\n", what.c_str());
  std::abort();
}

// A small quantized-looking model both estimators can cost: conv, pool, fully connected.
const mica::Graph& SmallModel() {
  static const mica::Graph g = [] {
    mica::GraphBuilder b("small", 3);
    const int32_t x = b.Input("x", {1, 16, 16, 3});
    const int32_t c = b.Conv2D(x, b.HeWeights("w", {8, 3, 3, 3}), b.RandomBias("b", 8),
                               {mica::Padding::kSame, 2, 2});
    mica::Pool2DAttrs p;
    p.filter_h = p.filter_w = 2;
    p.stride_h = p.stride_w = 2;
    const int32_t m = b.MaxPool2D(c, p);
    const int32_t r = b.Reshape(m, {1, 128});
    b.Output(b.FullyConnected(r, b.HeWeights("fc", {4, 128}), b.RandomBias("fb", 4)));
    absl::StatusOr<mica::Graph> built = b.Build();
    if (!built.ok()) Fail("seed model: " + std::string(built.status().message()));
    return *std::move(built);
  }();
  return g;
}

}  // namespace

#ifndef MICA_FUZZ_NO_LIBFUZZER_MUTATE  // the replay build has no libFuzzer
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::mt19937_64 rng(seed);
  if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::vector<std::string> lines =
      absl::StrSplit(std::string(reinterpret_cast<const char*>(data), size), '\n');
  static const char* const kValues[] = {
      "0", "1", "-1", "1e-300", "1e300", "nan", "inf", "-inf", "2147483647", "-2147483648",
      "9223372036854775807", "1e3", "1e10", "4096", "0.5", "\"\"", "\"u55\"", "\"u65\"",
      "\"u85\"", "\"cortex-m0\"", "\"cortex-m55\"", "\"sram\"", "\"dram\"", "\"Shared_Sram\"",
      "\"Dedicated_Sram\"", "\"Ethos_U65_High_End\"", "true", "false", "\"ethos-u55-256\""};
  static const char* const kFields[] = {
      "clock_hz: ", "core_clock_hz: ", "macs: ", "sram_bytes: ", "flash_bytes: ",
      "flash_wait_states: ", "axi_width_bytes: ", "clock_scale: ", "burst_length: ",
      "read_latency: ", "write_latency: ", "ports_used: ", "max_reads: ", "max_writes: ",
      "arena_cache_bytes: ", "const_axi: ", "arena_axi: ", "cache_axi: ", "base: ",
      "host_cpu: ", "family: ", "cpu: ", "area: ", "name: "};
  auto value = [&] { return std::string(kValues[rng() % (sizeof(kValues) / sizeof(*kValues))]); };
  if (lines.empty()) lines.emplace_back();
  const size_t k = rng() % lines.size();
  switch (rng() % 4) {
    case 0: {
      const size_t colon = lines[k].find(':');
      if (colon != std::string::npos) {
        lines[k] = lines[k].substr(0, colon + 1) + " " + value();
      } else {
        lines[k] = std::string(kFields[rng() % (sizeof(kFields) / sizeof(*kFields))]) + value();
      }
      break;
    }
    case 1: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k), lines[k]); break;
    case 2: lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(k)); break;
    default:
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(k),
                   std::string(kFields[rng() % (sizeof(kFields) / sizeof(*kFields))]) + value());
      break;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  if (out.empty() || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // the CLI refuses larger profile files before parsing
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<mica::estimate::TargetProfile> p =
      mica::estimate::ParseTargetProfile(text, "fuzz.textproto");
  if (!p.ok()) {
    const std::string msg(p.status().message());
    if (msg.rfind("fuzz.textproto", 0) != 0 || msg.find('\n') != std::string::npos) {
      Fail("error message is not one line naming the file: " + msg);
    }
    return 0;
  }
  absl::StatusOr<mica::estimate::Estimate> e = mica::estimate::EstimateModel(SmallModel(), *p);
  if (e.ok()) {
    if (!(e->total_cycles >= 0) || !(e->seconds() >= 0)) {
      Fail("estimate with negative or NaN cycles or time");
    }
  } else if (std::string(e.status().message()).find('\n') != std::string::npos) {
    Fail("estimate error is not one line");
  }
  return 0;
}
