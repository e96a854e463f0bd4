// CMSIS-NN anchors: every case of ../shared/reference/cmsis-nn/nn_anchor_cases.h regenerated
// with its own deterministic generators, inputs checked against inputs.csv, and the output of
// every compiled variant of mica's kernel checked against the CRC-32 CMSIS-NN produced
// (kernels.csv). The case header is compiled in from the shared tree when CMake found it at
// configure time (MICA_CMSIS_ANCHOR_CASES); the CSVs are read at run time.
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mica/kernels/conv.h"
#include "mica/kernels/depthwise_conv.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/fully_connected.h"
#include "mica/kernels/pooling.h"
#include "mica/kernels/softmax.h"
#include "testing/catch.h"
#include "testing/shared.h"

#ifdef MICA_CMSIS_ANCHOR_CASES
#include MICA_CMSIS_ANCHOR_CASES
#endif

namespace mica {
namespace kernels {
namespace {

#ifdef MICA_CMSIS_ANCHOR_CASES

// zlib's CRC-32 (IEEE 802.3, reflected, init and final xor 0xFFFFFFFF).
uint32_t Crc32(const void* data, size_t n) {
  static uint32_t table[256];
  static bool init = false;
  if (!init) {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    init = true;
  }
  uint32_t crc = 0xFFFFFFFFu;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}
template <typename T>
uint32_t Crc(const std::vector<T>& v) {
  return Crc32(v.data(), v.size() * sizeof(T));  // little-endian host, as the anchors
}

std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!cells.empty()) rows.push_back(cells);
  }
  return rows;
}

struct Anchors {
  std::map<std::string, uint32_t> output_crc;                 // case -> CMSIS-NN output CRC
  std::map<std::pair<std::string, std::string>, uint32_t> input_crc;  // (case, tensor) -> CRC
};

bool LoadAnchors(Anchors* a) {
  const std::string shared = testing::SharedDir();
  if (shared.empty()) return false;
  const std::string dir = shared + "/reference/cmsis-nn/";
  for (const auto& row : ReadCsv(dir + "kernels.csv")) {
    if (row.size() < 9 || row[0] == "arm_vector_sum_s8") continue;
    const std::string name = row[1].substr(0, row[1].find(' '));
    const uint32_t crc = static_cast<uint32_t>(std::stoul(row[8], nullptr, 16));
    // Every build produced the same CRC; keep the first and require agreement.
    const auto it = a->output_crc.find(name);
    if (it != a->output_crc.end() && it->second != crc) return false;
    a->output_crc[name] = crc;
  }
  for (const auto& row : ReadCsv(dir + "inputs.csv")) {
    if (row.size() < 5) continue;
    a->input_crc[{row[0], row[1]}] = static_cast<uint32_t>(std::stoul(row[4], nullptr, 16));
  }
  return !a->output_crc.empty() && !a->input_crc.empty();
}

std::vector<int8_t> FillS8(size_t n, uint32_t seed, int32_t lo, int32_t hi) {
  std::vector<int8_t> v(n);
  nna_fill_s8(v.data(), n, seed, lo, hi);
  return v;
}

// Runs every variant `run(fn, out)` of a case and checks each output CRC.
template <typename List, typename Run>
int CheckVariants(const List& variants, size_t out_len, uint32_t want, Run run) {
  int checked = 0;
  for (const auto& v : variants) {
    CAPTURE(v.name);
    std::vector<int8_t> out(out_len, 0x55);
    REQUIRE(run(v.fn, v.isa, out.data()) == KernelStatus::kOk);
    const uint32_t got = Crc(out);
    CAPTURE(got, want);
    CHECK(got == want);
    ++checked;
  }
  return checked;
}

TEST_CASE("CMSIS-NN anchors: every case reproduces CMSIS-NN's output CRC", "[kernels][anchor]") {
  Anchors anchors;
  if (!LoadAnchors(&anchors)) {
    WARN("CMSIS-NN anchors skipped: " << testing::SharedDir()
                                      << "/reference/cmsis-nn/{kernels,inputs}.csv not readable");
    return;
  }
  int cases = 0, runs = 0;
  for (int i = 0; i < NNA_NUM_CASES; ++i) {
    const nna_case& c = nna_cases[i];
    const std::string name = c.name;
    CAPTURE(name);
    REQUIRE(anchors.output_crc.count(name) == 1);
    const uint32_t want = anchors.output_crc[name];
    const auto input_crc = [&](const char* tensor) {
      const auto it = anchors.input_crc.find({name, tensor});
      REQUIRE(it != anchors.input_crc.end());
      return it->second;
    };
    const size_t out_len = nna_output_len(&c);
    ++cases;
    if (c.op == NNA_CONV || c.op == NNA_DWCONV || c.op == NNA_FC) {
      const auto input = FillS8(nna_input_len(&c), c.seed_base + 1, -128, 127);
      const auto weights = FillS8(nna_weight_len(&c), c.seed_base + 2, -127, 127);
      std::vector<int32_t> bias(c.out_c);
      nna_fill_s32(bias.data(), bias.size(), c.seed_base + 3, -c.bias_range, c.bias_range);
      const size_t channels = c.op == NNA_FC ? 1 : c.out_c;
      std::vector<int32_t> mult(channels), shift(channels);
      nna_fill_requant(mult.data(), shift.data(), channels, c.seed_base + 4, c.shift_base);
      REQUIRE(Crc(input) == input_crc("input"));
      REQUIRE(Crc(weights) == input_crc("weights"));
      REQUIRE(Crc(bias) == input_crc("bias"));
      REQUIRE(Crc(mult) == input_crc("multiplier"));
      REQUIRE(Crc(shift) == input_crc("shift"));
      const PerChannelRequant q{mult.data(), shift.data()};
      if (c.op == NNA_CONV) {
        ConvParams p;
        p.input = {1, c.in_h, c.in_w, c.in_c};
        p.filter = {c.out_c, c.k_h, c.k_w, c.in_c};
        p.output = {1, c.out_h, c.out_w, c.out_c};
        p.stride = {c.stride_h, c.stride_w};
        p.padding = {c.pad_h, c.pad_w};
        p.input_offset = c.input_offset;
        p.output_offset = c.output_offset;
        p.activation = {c.act_min, c.act_max};
        runs += CheckVariants(ConvVariants(), out_len, want, [&](ConvFn fn, Isa isa, int8_t* o) {
          std::vector<uint32_t> scratch(ConvScratchBytes(p, isa) / 4 + 1);
          return fn(p, q, input.data(), weights.data(), bias.data(), o,
                    {scratch.data(), ConvScratchBytes(p, isa)});
        });
      } else if (c.op == NNA_DWCONV) {
        DepthwiseConvParams p;
        p.input = {1, c.in_h, c.in_w, c.in_c};
        p.filter = {1, c.k_h, c.k_w, c.out_c};
        p.output = {1, c.out_h, c.out_w, c.out_c};
        p.stride = {c.stride_h, c.stride_w};
        p.padding = {c.pad_h, c.pad_w};
        p.input_offset = c.input_offset;
        p.output_offset = c.output_offset;
        p.activation = {c.act_min, c.act_max};
        runs += CheckVariants(DepthwiseConvVariants(), out_len, want,
                              [&](DepthwiseConvFn fn, Isa isa, int8_t* o) {
                                std::vector<uint32_t> s(DepthwiseConvScratchBytes(p, isa) / 4 + 1);
                                return fn(p, q, input.data(), weights.data(), bias.data(), o,
                                          {s.data(), DepthwiseConvScratchBytes(p, isa)});
                              });
      } else {
        FullyConnectedParams p;
        p.input_depth = c.in_h * c.in_w * c.in_c;
        p.output_depth = c.out_c;
        p.input_offset = c.input_offset;
        p.output_offset = c.output_offset;
        p.activation = {c.act_min, c.act_max};
        runs += CheckVariants(FullyConnectedVariants(), out_len, want,
                              [&](FullyConnectedFn fn, Isa isa, int8_t* o) {
                                std::vector<uint32_t> s(FullyConnectedScratchBytes(p, isa) / 4 + 1);
                                return fn(p, q, input.data(), weights.data(), bias.data(), o,
                                          {s.data(), FullyConnectedScratchBytes(p, isa)});
                              });
      }
    } else if (c.op == NNA_ADD) {
      const auto in1 = FillS8(nna_input_len(&c), c.seed_base + 1, -128, 127);
      const auto in2 = FillS8(nna_input_len(&c), c.seed_base + 2, -128, 127);
      REQUIRE(Crc(in1) == input_crc("input1"));
      REQUIRE(Crc(in2) == input_crc("input2"));
      AddParams p;
      p.input1_offset = c.input_offset;
      p.input2_offset = c.input_offset;
      p.output_offset = c.output_offset;
      p.left_shift = c.add_left_shift;
      p.input1 = {c.add_in1_mult, c.add_in1_shift};
      p.input2 = {c.add_in2_mult, c.add_in2_shift};
      p.output = {c.add_out_mult, c.add_out_shift};
      p.activation = {c.act_min, c.act_max};
      const Shape shape{4, {1, c.in_h, c.in_w, c.in_c}};
      runs += CheckVariants(AddVariants(), out_len, want, [&](AddFn fn, Isa, int8_t* o) {
        return fn(p, shape, in1.data(), shape, in2.data(), shape, o);
      });
    } else if (c.op == NNA_SOFTMAX) {
      const auto in = FillS8(nna_input_len(&c), c.seed_base + 1, -128, 127);
      REQUIRE(Crc(in) == input_crc("input"));
      const SoftmaxParams p{c.sm_mult, c.sm_shift, c.sm_diff_min};
      runs += CheckVariants(SoftmaxVariants(), out_len, want, [&](SoftmaxFn fn, Isa, int8_t* o) {
        return fn(p, c.in_h, c.in_c, in.data(), o);
      });
    } else if (c.op == NNA_AVGPOOL || c.op == NNA_MAXPOOL) {
      const auto in = FillS8(nna_input_len(&c), c.seed_base + 1, -128, 127);
      REQUIRE(Crc(in) == input_crc("input"));
      PoolParams p;
      p.input = {1, c.in_h, c.in_w, c.in_c};
      p.output = {1, c.out_h, c.out_w, c.out_c};
      p.filter_h = c.k_h;
      p.filter_w = c.k_w;
      p.stride = {c.stride_h, c.stride_w};
      p.padding = {c.pad_h, c.pad_w};
      p.activation = {c.act_min, c.act_max};
      runs += CheckVariants(c.op == NNA_AVGPOOL ? AvgPoolVariants() : MaxPoolVariants(), out_len,
                            want, [&](PoolFn fn, Isa, int8_t* o) { return fn(p, in.data(), o); });
    } else {
      FAIL("unknown anchor op " << static_cast<int>(c.op));
    }
  }
  WARN("CMSIS-NN anchors: " << cases << " cases, " << runs << " variant runs checked");
  REQUIRE(cases == static_cast<int>(anchors.output_crc.size()));
}

#else  // !MICA_CMSIS_ANCHOR_CASES

TEST_CASE("CMSIS-NN anchors: every case reproduces CMSIS-NN's output CRC", "[kernels][anchor]") {
  WARN("CMSIS-NN anchors skipped: nn_anchor_cases.h was not found under MICA_SHARED_DIR at "
       "configure time");
}

#endif

}  // namespace
}  // namespace kernels
}  // namespace mica
