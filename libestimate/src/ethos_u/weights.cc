// Encoded weight size (doc section 9): Vela 5.2's weight traversals (U55/U65, and the U85's
// own) and MLW stream format (palette, zero runs, Golomb-Rice slices) reproduced for size, one
// stream per core. Weights without usable constant data get a typical dense rate.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

// Encoded bytes of `n` weights whose stream is not built (no usable data, or a stream past
// the size bound): dense int8 at the typical coded rate, about 7.9 bits per weight.
constexpr double kCodingLossBits = 0.4;  // Golomb-Rice vs entropy, per coded value
int64_t DenseRateBytes(int64_t n) {
  return static_cast<int64_t>(std::ceil(double(n) * (7.5 + kCodingLossBits) / 8));
}

int32_t RoundUp(int32_t v, int32_t m) { return m <= 0 ? v : (v + m - 1) / m * m; }
int32_t CeilDivBy(int32_t v, int32_t m) { return m <= 0 ? v : (v + m - 1) / m; }

// ---- The MLW stream (doc 9), bit for bit in size ----
//
// A stream is one section with a new palette, then slices; each slice has a header (ZDIV 3,
// SLICELEN 15, WDIV 3, WTRUNC 1, NEWPAL 1 bits; with a new palette DIROFS 5, PALSIZE 5,
// PALBITS 3 and the palette entries) and interleaved chunks: a weight chunk holds 12 unary
// positions (a 12-bit WUNARY0 word, WUNARY1 bits for quotients above 1, the remainders), a
// zero-run chunk 12 positions (8 when ZDIV >= 3). The stream ends with a 3-bit end marker and
// is padded to 16 bytes. What is coded: zero-corrected weights mapped through a palette of
// the (up to 32) most frequent values when it covers at least half of them, else directly
// (sign-folded, offset); with zero-run mode the non-zero values and the zero-run lengths. The
// Golomb-Rice parameters per slice come from a greedy forward search over 13 weight and 4
// zero-run configurations that changes configuration when that saves more than 40 bits.

struct GrcSlice {
  int cfg = 0;
  int64_t end = 0;
};

// (trunc << 4) | div; 0x20 = uncompressed.
constexpr int kWGrc[13] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x10,
                           0x11, 0x12, 0x13, 0x14, 0x15, 0x20};
constexpr int kZGrc[4] = {0x00, 0x01, 0x02, 0x03};

// The search keeps, per configuration ("lane"), the bits of coding everything so far with
// the best history that ends in that configuration; a lane that cannot code a value pays a
// command and restarts from the active configuration's bits. Per value the lanes are updated
// side by side (GCC/Clang vector extensions: SSE2 on x86-64, NEON on AArch64) and only the
// rare values where the active configuration might change (it cannot code the value, or a
// lane is more than a command cheaper) run the scalar decision. Exact: the decision reads the
// same bit counts and reset positions as a lane-by-lane evaluation; a lane that could not code
// two values in a row is never read before it restarts, so its count is left unspecified.
//
// NV vectors of four lanes (configurations 0..n_cfg-1, the rest free and ignored); PV: four
// lanes' stream positions (int32_t unless the stream is longer than that).
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef int64_t I64x4 __attribute__((vector_size(32)));

// `table` holds the rows of the values below table.size() / L; `fill_row(value, row)` writes
// the row of a larger one (a long zero run).
template <int NV, typename PV, typename FillRow>
std::vector<GrcSlice> SearchGrcLanes(const std::vector<int32_t>& v, int n_cfg,
                                     const std::vector<int32_t>& table, FillRow&& fill_row) {
  constexpr int L = NV * 4;
  const size_t table_values = table.size() / L;
  int32_t large_row[L];
  using P = std::remove_cv_t<std::remove_reference_t<decltype(PV{}[0])>>;
  constexpr int32_t kCmdCost = 40;
  constexpr int32_t kRebaseAt = 1 << 29;
  I32x4 valid[NV], bit_count[NV] = {}, coded[NV] = {};
  PV reset_pos[NV] = {};
  for (int j = 0; j < L; ++j) valid[j / 4][j % 4] = j < n_cfg ? -1 : 0;
  int32_t active_bits = 0;
  int active = -1;
  std::vector<GrcSlice> out;
  const int64_t n = static_cast<int64_t>(v.size());
  for (int64_t i = 0; i < n; ++i) {
    const size_t value = static_cast<size_t>(v[static_cast<size_t>(i)]);
    const int32_t* row_p = large_row;
    if (value < table_values) {
      row_p = &table[value * L];
    } else {
      fill_row(value, large_row);
    }
    const I32x4 prev = I32x4{} + active_bits;
    const PV pos = PV{} + static_cast<P>(i + 1);
    I32x4 better{};
    for (int k = 0; k < NV; ++k) {
      I32x4 row;
      std::memcpy(&row, row_p + 4 * k, sizeof(row));
      const I32x4 can = row > -1;  // uncodable entries are -1
      // Coded lanes continue, restarting ones start from the active bits; an uncodable value
      // costs a command (-1 + 41).
      bit_count[k] = ((coded[k] & bit_count[k]) | (~coded[k] & prev)) + row +
                     (~can & (kCmdCost + 1));
      coded[k] = can;
      const PV can_p = __builtin_convertvector(can, PV);
      reset_pos[k] = (can_p & reset_pos[k]) | (~can_p & pos);
      better |= can & valid[k] & (bit_count[k] + kCmdCost < prev);
    }
    uint64_t halves[2];
    std::memcpy(halves, &better, sizeof(halves));
    const int32_t row_active = active >= 0 ? row_p[active] : -1;
    if (row_active >= 0 && (halves[0] | halves[1]) == 0) {
      active_bits += row_active;  // the active lane's new count
    } else {
      int32_t bits[L], is_coded[L];
      P reset[L];
      std::memcpy(bits, bit_count, sizeof(bits));
      std::memcpy(is_coded, coded, sizeof(is_coded));
      std::memcpy(reset, reset_pos, sizeof(reset));
      int best = -1;
      int32_t best_bits = std::numeric_limits<int32_t>::max();
      for (int j = 0; j < n_cfg; ++j) {
        if (is_coded[j] && bits[j] < best_bits) best_bits = bits[j], best = j;
      }
      // Never taken in practice: the uncompressed weight configuration and every zero-run
      // configuration code any value.
      if (best < 0) best = 0;
      const bool must = active < 0 || !is_coded[active];
      if (must || (best != active && best_bits + kCmdCost < active_bits)) {
        if (active >= 0) {
          if (bits[best] < bits[active] && reset[best] <= reset[active]) {
            active = best;
          } else {
            out.push_back({active, i});
          }
        }
        active = best;
      }
      active_bits = bits[active];
    }
    if (active_bits > kRebaseAt) {
      // Rebase: only differences between counts matter.
      const I32x4 floor = I32x4{} - kRebaseAt;
      for (int k = 0; k < NV; ++k) {
        const I32x4 d = bit_count[k] - active_bits;
        const I32x4 low = d < floor;
        bit_count[k] = (low & floor) | (~low & d);
      }
      active_bits = 0;
    }
  }
  if (out.empty() || out.back().cfg != active) out.push_back({std::max(active, 0), 0});
  out.back().end = n;
  return out;
}

std::vector<GrcSlice> SearchGrc(const std::vector<int32_t>& v, bool zrun, int uncompressed_bits) {
  const int n_cfg = zrun ? 4 : 13;
  const int* params = zrun ? kZGrc : kWGrc;
  // Bits per value and configuration (-1 where it cannot code the value), one row of lanes per
  // value (lanes past the configurations cost 0), tabulated over the values that occur up to
  // 4095 (zero runs can be as long as the stream).
  constexpr int32_t kUncodable = -1;
  const int lanes = zrun ? 4 : 16;
  const int32_t add_uncompressed = uncompressed_bits > 0 ? uncompressed_bits : 100;
  auto fill_row = [&](size_t value, int32_t* row) {
    for (int j = 0; j < lanes; ++j) row[j] = 0;
    for (int j = 0; j < n_cfg; ++j) {
      const int div = params[j] & 15, trunc = params[j] >> 4;
      const int64_t q = static_cast<int64_t>(value) >> div;
      int64_t bits = trunc ? std::min<int64_t>(q + 1, 2) + div : q + 1 + div;
      bool can = !(!zrun && ((trunc && q > 2) || q > 31));
      if (trunc == 2) bits = add_uncompressed, can = true;
      row[j] = can ? static_cast<int32_t>(bits) : kUncodable;
    }
  };
  int32_t max_v = 0;
  for (int32_t x : v) max_v = std::max(max_v, x);
  const size_t nv = std::min<size_t>(static_cast<size_t>(max_v) + 1, 4096);
  std::vector<int32_t> table(nv * static_cast<size_t>(lanes));
  for (size_t value = 0; value < nv; ++value) {
    fill_row(value, &table[value * static_cast<size_t>(lanes)]);
  }
  const bool long_stream = v.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max());
  if (zrun) {
    return long_stream ? SearchGrcLanes<1, I64x4>(v, n_cfg, table, fill_row)
                       : SearchGrcLanes<1, I32x4>(v, n_cfg, table, fill_row);
  }
  return long_stream ? SearchGrcLanes<4, I64x4>(v, n_cfg, table, fill_row)
                     : SearchGrcLanes<4, I32x4>(v, n_cfg, table, fill_row);
}

// Bits of `count` GRC-coded values starting at `v` with configuration `param` (a weight or a
// zero-run chunk of `chunk` positions).
int64_t GrcBits(const int32_t* v, int64_t count, int param, bool zrun, int uncompressed_bits) {
  if (count <= 0) return 0;
  const int div = param & 15, trunc = param >> 4;
  if (!zrun && trunc == 2) return count * uncompressed_bits;
  int64_t positions = 0, unary1 = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int q = v[i] >> div;
    if (zrun) {
      positions += q + 1;
    } else if (trunc) {
      positions += 1;
      unary1 += q > 0;
    } else {
      positions += q / 2 + 1;
      unary1 += (q + 1) / 2;
    }
  }
  const int64_t chunk = zrun && div >= 3 ? 8 : 12;
  return (positions + chunk - 1) / chunk * chunk + unary1 + count * div;
}

// Bits of one MLW section (a new palette, then its slices) of `size` zero-corrected weights
// (-255..255) at `w`, without the end-of-stream marker and padding.
int64_t MlwSectionBits(const int16_t* w, int64_t size) {
  const int16_t* const w_end = w + size;
  std::array<int64_t, 512> freq{};
  // Zeros, and zeros in runs of two or more (branch-free: sparse kernels mix them at random).
  int64_t zeroes_in_runs = 0, run = 0;
  for (const int16_t* p = w; p != w_end; ++p) {
    const int16_t x = *p;
    ++freq[static_cast<size_t>(x + 256)];
    const int64_t non_zero = x != 0;
    zeroes_in_runs += (run >= 2 ? run : 0) * non_zero;
    run = (run + 1) * (1 - non_zero);
  }
  if (run >= 2) zeroes_in_runs += run;
  const int64_t total_zeroes = freq[256];
  int64_t common = 0;
  for (int i = 0; i < 512; ++i) {
    if (i != 256) common = std::max(common, freq[static_cast<size_t>(i)]);
  }
  const bool zero_runs = zeroes_in_runs >= total_zeroes / 2 && total_zeroes > 5 * common;
  // Palette over sign-folded values (2|v| + sign), most frequent first (ties: larger first).
  std::array<std::pair<int64_t, int>, 512> order{};
  int64_t all_cnt = 0;
  int all_max = 0;
  std::array<int64_t, 512> by_palval{};
  for (int v = -255; v < 256; ++v) {
    if (v == 0 && zero_runs) continue;
    const int palval = (std::abs(v) << 1) | (v < 0 ? 1 : 0);
    const int64_t c = freq[static_cast<size_t>(v + 256)];
    by_palval[static_cast<size_t>(palval)] = c;
    all_cnt += c;
    if (c > 0) all_max = std::max(all_max, palval);
  }
  // The values that occur first (those never occurring only count as zero after them).
  size_t occurring = 0;
  for (int i = 0; i < 512; ++i) {
    const int64_t c = by_palval[static_cast<size_t>(i)];
    if (c > 0) order[occurring++] = {c, i};
  }
  int direct_offset = 0;
  if (all_cnt != 0) {
    while (direct_offset < 31 && by_palval[static_cast<size_t>(direct_offset)] == 0) ++direct_offset;
  }
  // Only the 33 most frequent matter (the palette and whether a 33rd value occurs).
  const auto occurring_end = order.begin() + static_cast<std::ptrdiff_t>(occurring);
  std::partial_sort(order.begin(), std::min(order.begin() + 33, occurring_end), occurring_end,
                    [](const auto& a, const auto& b) { return a > b; });
  const bool only_palette = order[0].first > 0 && order[32].first == 0;
  int max_pal = only_palette ? 32 : std::min(32, 511 - all_max);
  if (max_pal == 1) max_pal = 0;
  int entries = 0, max_lut = 0;
  int64_t lut_cnt = 0;
  std::array<int, 512> pal_index{};
  pal_index.fill(-1);
  for (; entries < max_pal; ++entries) {
    if (order[static_cast<size_t>(entries)].first == 0) break;
    max_lut = std::max(max_lut, order[static_cast<size_t>(entries)].second);
    lut_cnt += order[static_cast<size_t>(entries)].first;
  }
  const int found = entries;
  if (entries == 1) entries = 2;
  int palsize = 0, palbits_val = all_max;
  if (lut_cnt >= all_cnt / 2) palsize = entries, palbits_val = max_lut;
  if (palsize > 0) {
    for (int k = 0; k < found; ++k) pal_index[static_cast<size_t>(order[static_cast<size_t>(k)].second)] = k;
  }
  int palbits = 2;
  while ((1 << palbits) <= palbits_val) ++palbits;
  int uncompressed_bits = 0;
  if (only_palette) {
    while ((1 << uncompressed_bits) < palsize) ++uncompressed_bits;
  } else if (palsize == 0) {
    uncompressed_bits = palbits;
  }
  std::array<int32_t, 511> index_of_value{};  // by weight + 255
  for (int v = -255; v < 256; ++v) {
    const int palval = (std::abs(v) << 1) | (v < 0 ? 1 : 0);
    const int k = pal_index[static_cast<size_t>(palval)];
    index_of_value[static_cast<size_t>(v + 255)] = k >= 0 ? k : palsize - direct_offset + palval;
  }
  auto index_of = [&](int v) { return index_of_value[static_cast<size_t>(v + 255)]; };
  // Coded values (and zero runs).
  std::vector<int32_t> values, zruns;
  values.reserve(static_cast<size_t>(size));
  const bool skip_first_run = all_cnt == 0;  // all zero: the first zero is coded as a value
  if (zero_runs && !skip_first_run) {
    // Each non-zero value after the zeros before it, and the zeros after the last one (one
    // pass, branch-free: every element writes both slots, a non-zero one advances them).
    values.resize(static_cast<size_t>(size));
    zruns.resize(static_cast<size_t>(size) + 1);
    size_t k = 0;
    int32_t z = 0;
    for (const int16_t* p = w; p != w_end; ++p) {
      const int16_t x = *p;
      const int32_t non_zero = x != 0;
      zruns[k] = z;
      values[k] = index_of(x);
      k += static_cast<size_t>(non_zero);
      z = (z + 1) * (1 - non_zero);
    }
    zruns[k] = z;
    values.resize(k);
    zruns.resize(k + 1);
  } else {
    for (int64_t i = 0;;) {
      if (zero_runs) {
        int32_t z = 0;
        if (!skip_first_run || i > 0) {
          while (i < size && w[i] == 0) ++z, ++i;
        }
        zruns.push_back(z);
      }
      if (i == size) break;
      values.push_back(index_of(w[i]));
      ++i;
    }
  }
  const int64_t nw = static_cast<int64_t>(values.size());
  std::vector<GrcSlice> ws, zs;
  if (nw > 0) ws = SearchGrc(values, false, uncompressed_bits);
  if (zero_runs) {
    std::vector<int32_t> zr(zruns.begin(), zruns.begin() + std::min<int64_t>(nw + 1,
                                                                              int64_t(zruns.size())));
    zs = SearchGrc(zr, true, 0);
  }
  constexpr int64_t kMaxSlice = (1 << 15) - 1;
  int64_t bits = 0, pos = 0;
  size_t iw = 0, iz = 0;
  bool new_palette = true, zero_pass = !zruns.empty();
  while (pos < nw || new_palette || zero_pass) {
    const int64_t w_len = iw < ws.size() ? std::min(ws[iw].end - pos, kMaxSlice) : 0;
    const int64_t z_len = iz < zs.size() ? std::min(zs[iz].end - pos, kMaxSlice) : 0;
    bits += 3 + 15 + 3 + 1 + 1;
    if (new_palette) bits += 5 + 5 + 3 + int64_t{palsize} * palbits;
    if (w_len > 0) {
      bits += GrcBits(values.data() + pos, w_len, kWGrc[ws[iw].cfg], false, uncompressed_bits);
    }
    if (zero_runs && z_len != 0) {
      const int64_t z0 = pos + (new_palette ? 0 : 1);
      const int64_t zc = std::min<int64_t>(std::max<int64_t>(w_len, 0) + (new_palette ? 1 : 0),
                                           static_cast<int64_t>(zruns.size()) - z0);
      if (zc > 0) bits += GrcBits(zruns.data() + z0, zc, kZGrc[zs[iz].cfg], true, 0);
    }
    new_palette = false;
    if (z_len <= 0 && w_len > 0) pos += w_len;
    else if (w_len <= 0 && z_len > 0) pos += z_len;
    else pos += std::min(z_len, w_len);
    if (iw < ws.size() && ws[iw].end <= pos) ++iw;
    if (iz < zs.size() && zs[iz].end <= pos) ++iz;
    zero_pass = false;
    if (w_len <= 0 && z_len <= 0 && pos < nw) break;  // nothing left to code (defensive)
  }
  return bits;
}

// Bytes of a stream of `section_bits` bits: an end marker, byte aligned, padded to 128 bits.
int64_t MlwPaddedBytes(int64_t section_bits) {
  const int64_t bytes = (section_bits + 3 + 7) / 8;
  return (bytes + 15) / 16 * 16;
}

// Encoded bytes of one MLW stream of zero-corrected weights (-255..255), one section.
int64_t MlwStreamBytes(const std::vector<int16_t>& w) {
  return MlwPaddedBytes(MlwSectionBits(w.data(), static_cast<int64_t>(w.size())));
}

// Vela's U55/U65 weight traversal (ethos_u55_weight_encoder): per stream (OFM channels
// s, s + cores, ...), OFM blocks of the block depth, IFM blocks of 32 channels (16 for
// part-kernel-first or 16-bit IFMs), sub-kernels of at most 8x8 (over dilation), kernel
// elements padded to 4 (depthwise, 8-bit part-kernel) or 2 (16-bit part-kernel), OFM
// micro-blocks, IFM micro-blocks; zero where channels run out.
struct Traversal {
  int32_t o, kh, kw, ci;  // weight geometry (depthwise: ci = 1)
  bool dw, part_kernel, ifm16;
  int32_t ofm_block, ofm_ublock, ifm_ublock, dil_h, dil_w;
};

template <typename F>
void Traverse(const Traversal& t, int32_t cores, int32_t stream, F&& emit) {
  const int32_t ofm_depth = (t.o - stream + cores - 1) / cores;
  const int32_t ifm_block = (t.part_kernel || t.ifm16) ? 16 : 32;
  const int32_t decomp_x = std::max(8 / std::max(t.dil_w, 1), 1);
  const int32_t decomp_y = std::max(8 / std::max(t.dil_h, 1), 1);
  const int32_t round = t.dw ? 4 : t.part_kernel ? (t.ifm16 ? 2 : 4) : 1;
  const int32_t block = std::max((t.ofm_block + cores - 1 - stream) / cores, 1);
  const int32_t ifm_depth = t.dw ? 1 : t.ci;
  for (int32_t ob = 0; ob < ofm_depth; ob += block) {
    const int32_t ob_depth = std::min(block, ofm_depth - ob);
    for (int32_t ib = 0; ib < (t.dw ? 1 : ifm_depth); ib += ifm_block) {
      const int32_t ib_depth =
          t.dw ? t.ifm_ublock : t.part_kernel ? std::min(ifm_block, ifm_depth - ib) : ifm_block;
      for (int32_t sy = 0; sy < t.kh; sy += decomp_y) {
        const int32_t sub_h = std::min(t.kh - sy, decomp_y);
        for (int32_t sx = 0; sx < t.kw; sx += decomp_x) {
          const int32_t sub_w = std::min(t.kw - sx, decomp_x);
          const int32_t elems = (sub_w * sub_h + round - 1) / round * round;
          const int32_t outer_n = t.part_kernel ? ib_depth : 1;
          const int32_t inner_n = t.part_kernel ? 1 : ib_depth;
          for (int32_t outer = 0; outer < outer_n; outer += t.ifm_ublock) {
            for (int32_t ou = 0; ou < ob_depth; ou += t.ofm_ublock) {
              for (int32_t e = 0; e < elems; ++e) {
                const int32_t kx = e % sub_w, ky = e / sub_w;
                for (int32_t inner = 0; inner < inner_n; inner += t.ifm_ublock) {
                  for (int32_t oz = 0; oz < t.ofm_ublock; ++oz) {
                    for (int32_t iz = 0; iz < (t.dw ? 1 : t.ifm_ublock); ++iz) {
                      const int32_t ifm_z = ib + inner + outer + iz;
                      const int32_t ofm_z = ob + ou + oz;
                      if (ifm_z < ifm_depth && ofm_z < ofm_depth && ky < sub_h) {
                        emit(stream + ofm_z * cores, sy + ky, sx + kx, ifm_z);
                      } else {
                        emit(-1, 0, 0, 0);
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}


// Vela 5.2's U85 weight traversal (EthosU85WeightOrdering), per stream s of `streams` (one per
// core): OFM blocks of the block depth; per OFM block the IFM blocks, in alternating direction
// (up, then down, ...); sub-kernels of at most 8x8 over dilation (columns outer); IFM
// micro-blocks (part-kernel: 8 channels for 16-bit IFMs, else the IFM block) and OFM
// micro-blocks; the kernel's stride phases (depth-first: one) and positions, each row
// alternating in x; per position 8 IFM channels (16 for 2:4 sparse; depthwise 1) of four OFM
// channels at a time, stream s taking OFM channels 4s..4s+3 of every 4 x streams. A sub-kernel's
// positions are padded with zeros to a multiple of 5 (part-kernel; 10 for 16-bit IFMs or 2:4
// sparse, and depthwise), depthwise ops with larger MAC arrays pad further. `emit(valid, oc, y,
// x, c)` gets every value's source (valid false: a zero for a missing channel) and returns
// whether to go on; the padding of whole positions is `zeros(count)`.
enum class U85Walk : uint8_t { kDepthFirst, kPartKernel, kDepthwise };
struct TraversalU85 {
  int32_t o, kh, kw, ci;  // weight geometry (depthwise: ci = 1)
  U85Walk walk;
  bool ifm16, sparse;
  int32_t ofm_block, ifm_block, ofm_ublock, stride_x, stride_y, dil_x, dil_y, macs, streams;
};

template <typename F, typename Z>
void TraverseU85(const TraversalU85& t, int32_t stream, F&& emit, Z&& zeros) {
  constexpr int32_t kInterleave = 4;
  const bool dw = t.walk == U85Walk::kDepthwise;
  int32_t round = 1, ifm_ublock = t.ifm_block, stride_x = t.stride_x, stride_y = t.stride_y;
  if (t.walk == U85Walk::kPartKernel) {
    round = (t.ifm16 || t.sparse) ? 10 : 5;
    ifm_ublock = t.ifm16 && !t.sparse ? 8 : t.ifm_block;
  } else if (t.walk == U85Walk::kDepthFirst) {
    stride_x = stride_y = 1;
  } else {
    round = 10;
    ifm_ublock = 1;
  }
  stride_x = std::max(stride_x, 1);
  stride_y = std::max(stride_y, 1);
  const int32_t decomp_x = std::max(8 / std::max(t.dil_x, 1), 1);
  const int32_t decomp_y = std::max(8 / std::max(t.dil_y, 1), 1);
  const int32_t dw_pad = (!t.ifm16 && t.macs <= 256) ? 0 : t.macs <= 512 ? 2 : 6;
  const int32_t step = dw ? 1 : t.sparse ? 16 : 8;
  const int32_t ifm_depth = dw ? 1 : t.ci;
  const int32_t streams = std::max(t.streams, 1);
  int32_t inc = -t.ifm_block, ifm_start = 0;
  for (int32_t ob = 0; ob < t.o; ob += t.ofm_block) {
    inc = -inc;
    const int32_t ob_depth = std::min(t.ofm_block, t.o - ob);
    for (int32_t ib = ifm_start; ib < ifm_depth && ib >= 0; ib += inc) {
      ifm_start = ib;
      const int32_t ib_depth = std::min(t.ifm_block, ifm_depth - ib);
      for (int32_t sx = 0; sx < t.kw; sx += decomp_x) {
        const int32_t sub_w = std::min(t.kw - sx, decomp_x);
        for (int32_t sy = 0; sy < t.kh; sy += decomp_y) {
          const int32_t sub_h = std::min(t.kh - sy, decomp_y);
          for (int32_t iuo = 0; iuo < (dw ? 1 : ib_depth); iuo += ifm_ublock) {
            for (int32_t ouo = 0; ouo < ob_depth; ouo += t.ofm_ublock) {
              int32_t left = RoundUp(sub_w * sub_h, round);
              // (Phases past the sub-kernel's size hold no positions.)
              for (int32_t phy = 0; phy < std::min(stride_y, sub_h); ++phy) {
                const int32_t skh =
                    static_cast<int32_t>((int64_t{sub_h} + stride_y - 1 - phy) / stride_y);
                for (int32_t phx = 0; phx < std::min(stride_x, sub_w); ++phx) {
                  const int32_t skw =
                      static_cast<int32_t>((int64_t{sub_w} + stride_x - 1 - phx) / stride_x);
                  for (int32_t ky = 0; ky < skh; ++ky) {
                    for (int32_t kx = 0; kx < skw; ++kx) {
                      const int32_t x = ky % 2 == 0 ? kx : skw - 1 - kx;
                      const int32_t wx = sx + phx + x * stride_x, wy = sy + phy + ky * stride_y;
                      --left;
                      for (int32_t iui = 0; iui < ifm_ublock; iui += step) {
                        for (int32_t ouz = stream * kInterleave; ouz < t.ofm_ublock;
                             ouz += kInterleave * streams) {
                          for (int32_t oui = 0; oui < kInterleave; ++oui) {
                            const int32_t ofm_z = ob + ouo + oui + ouz;
                            for (int32_t iz = 0; iz < step; ++iz) {
                              const int32_t ifm_z = ib + iuo + iui + iz;
                              if (!emit(ifm_z < ifm_depth && ofm_z < t.o, ofm_z, wy, wx, ifm_z)) {
                                return;
                              }
                            }
                          }
                        }
                      }
                      if (dw && left % round == 0) zeros(int64_t{dw_pad} * t.ofm_ublock / streams);
                    }
                  }
                }
              }
              if (left > 0) {
                zeros(int64_t{left + (dw ? dw_pad : 0)} * ifm_ublock * t.ofm_ublock / streams);
              }
            }
          }
        }
      }
    }
  }
}
// Bytes of a U85 weight stream: sections of 128 Ki values with a palette of their own (the
// encoder's input buffering; a stream of whole sections ends with an empty one), the sections'
// bits concatenated, an end marker, padded to 16 bytes.
int64_t U85StreamBytes(const std::vector<int16_t>& v) {
  constexpr int64_t kSection = 128 * 1024;
  const int64_t n_values = static_cast<int64_t>(v.size());
  int64_t bits = 0;
  for (int64_t b = 0;; b += kSection) {
    bits += MlwSectionBits(v.data() + b, std::min(kSection, n_values - b));
    if (n_values - b < kSection) break;
  }
  return MlwPaddedBytes(bits);
}

}  // namespace

int64_t ConstantWeightStreamBytes(int64_t n) {
  // One value repeated: a two-entry palette and one bit per value.
  if (n <= 0) return 0;
  return MlwStreamBytes(std::vector<int16_t>(static_cast<size_t>(std::min<int64_t>(n, 1 << 26)), 1));
}

int64_t LoweredKernelStreamBytes(const NpuOp& op, const Arch& arch) {
  if (arch.family != EthosUFamily::kU85 || op.hw != HwOp::kDepthwise || op.kh <= 0 ||
      op.kw <= 0 || op.ofm.shape.c <= 0) {
    return ConstantWeightStreamBytes(op.weight_bytes);
  }
  // U85: the kernel of ones in the depthwise traversal (sub-kernels of at most 8x8, each
  // padded with zeros to whole groups of positions).
  const BlockConfig bc = FindBlockConfig(arch, op);
  const TraversalU85 t{op.ofm.shape.c, op.kh, op.kw, 1, U85Walk::kDepthwise, op.ifm.bits == 16,
                       false, std::max(bc.ofm_block.c, 1), std::max(bc.ifm_block.c, 1),
                       std::max(bc.ublock.c, 1), std::max(op.sw, 1), std::max(op.sh, 1),
                       std::max(op.dw, 1), std::max(op.dh, 1), arch.macs,
                       std::max(arch.cores, 1)};
  const int64_t bound = int64_t{RoundUp(t.o, std::max(t.ofm_ublock, 4 * t.streams))} *
                        (2 * int64_t{t.kh} * t.kw + 16 * int64_t{t.kh} * t.kw);
  if (bound > (int64_t{1} << 26)) return ConstantWeightStreamBytes(op.weight_bytes);
  int64_t bytes = 0;
  std::vector<int16_t> stream;
  for (int32_t s = 0; s < t.streams; ++s) {
    stream.clear();
    TraverseU85(
        t, s,
        [&](bool valid, int32_t, int32_t, int32_t, int32_t) {
          stream.push_back(valid ? int16_t{1} : int16_t{0});
          return true;
        },
        [&](int64_t count) { stream.insert(stream.end(), static_cast<size_t>(count), 0); });
    bytes += U85StreamBytes(stream);
  }
  return bytes;
}

WeightEncoding EncodeWeightsEstimate(const Subgraph& sg, const NpuOp& op, const Arch& arch) {
  WeightEncoding r;
  if (op.weight_tensor < 0) return r;
  const Tensor& w = sg.tensors[op.weight_tensor];
  const int64_t n = w.num_elements();
  const bool have_data = w.is_constant() && w.data.size == w.num_bytes() &&
                         (w.dtype == DType::kInt8 || w.dtype == DType::kUInt8);
  // Geometry: O x K x I (depthwise: C x K x 1).
  int32_t o = 1, kh = 1, kw = 1, ci = 1;
  const bool dw = op.hw == HwOp::kDepthwise;
  // A depthwise op from a CONV_2D with one channel per group keeps its [C, H, W, 1] kernels.
  const bool dw_oc_major = dw && w.shape.size() == 4 && w.shape[3] == 1 && w.shape[0] > 1;
  if (dw_oc_major) {
    kh = w.shape[1], kw = w.shape[2], o = w.shape[0];
  } else if (dw && w.shape.size() == 4) {
    kh = w.shape[1], kw = w.shape[2], o = w.shape[3];
  } else if (w.shape.size() == 4) {
    o = w.shape[0], kh = w.shape[1], kw = w.shape[2], ci = w.shape[3];
  } else if (w.shape.size() >= 2) {
    o = w.shape[0];
    ci = static_cast<int32_t>(n / std::max(o, 1));
  } else {
    o = static_cast<int32_t>(std::max<int64_t>(n, 1));
  }
  if (!have_data || int64_t{o} * kh * kw * ci != n) {
    // No usable data: assume dense int8 at the typical coded rate.
    r.encoded_bytes = DenseRateBytes(n);
    return r;
  }
  // A kernel the lowering spread for a dilation above 2 (op.kh/kw > the tensor's, with zeros
  // between the taps, as Vela's FixupDilationGT2 writes it): the encoder sees the spread one.
  const int32_t th = kh, tw = kw, to = o;  // the tensor's kernel and OFM channels
  auto spread_of = [](int32_t k, int32_t ek) {
    return (k > 1 && ek > k && (ek - 1) % (k - 1) == 0) ? (ek - 1) / (k - 1) : 1;
  };
  const int32_t mh = spread_of(th, op.kh), mw = spread_of(tw, op.kw);
  kh = (th - 1) * mh + 1;
  kw = (tw - 1) * mw + 1;
  // An op applying part of the tensor (NpuOp::weight_view): its channels and taps only.
  // (A depthwise part of a depth multiplier: the tensor's channels w_oc0, w_oc0 + w_ocs, ...)
  const bool dw_part = op.weight_view && dw && op.w_ocs > 1;
  const int32_t oc0 = op.weight_view && (!dw || dw_part) ? std::clamp(op.w_oc0, 0, to - 1) : 0;
  const int32_t ocs = dw_part ? op.w_ocs : 1;
  if (op.weight_view) {
    if (!dw) o = std::clamp(op.ofm.shape.c, 1, to - oc0);
    if (dw_part) o = std::clamp(op.ofm.shape.c, 1, (to - oc0 + ocs - 1) / ocs);
    kh = std::max(op.kh, 1);
    kw = std::max(op.kw, 1);
  }
  // The tensor's tap (y, x) of kernel position (ys, xs), or false for an inserted zero.
  auto tap = [&](int32_t ys, int32_t xs, int32_t* y, int32_t* x) {
    if (op.weight_view) {
      *y = op.w_ty0 + ys * std::max(op.w_tsy, 1);
      *x = op.w_tx0 + xs * std::max(op.w_tsx, 1);
      return *y >= 0 && *y < th && *x >= 0 && *x < tw;
    }
    if (ys % mh != 0 || xs % mw != 0) return false;
    *y = ys / mh;
    *x = xs / mw;
    return true;
  };
  const BlockConfig bc = FindBlockConfig(arch, op);
  const bool b16 = op.ifm.bits == 16;
  auto zp_of = [&](int32_t oc) -> int64_t {
    if (w.quant.zero_point.empty()) return 0;
    return w.quant.zero_point[std::min<size_t>(
        w.quant.zero_point.size() > 1 ? static_cast<size_t>(oc0 + oc * ocs) : 0,
        w.quant.zero_point.size() - 1)];
  };
  // Per kernel position: the tensor tap's offset (-1: an inserted zero); per OFM channel: the
  // zero point (clamped to +-1024, which leaves every clamped difference unchanged) and the
  // channel's offset. A value is clamp(weight - zero point, -255, 255).
  std::vector<int64_t> tap_off(static_cast<size_t>(kh) * static_cast<size_t>(kw), -1);
  for (int32_t y = 0; y < kh; ++y) {
    for (int32_t x = 0; x < kw; ++x) {
      int32_t ty = 0, tx = 0;
      if (tap(y, x, &ty, &tx)) {
        tap_off[static_cast<size_t>(y) * kw + x] = dw_oc_major ? int64_t{ty} * tw + tx
                                                   : dw ? (int64_t{ty} * tw + tx) * to
                                                        : (int64_t{ty} * tw + tx) * ci;
      }
    }
  }
  std::vector<int32_t> zp(static_cast<size_t>(o));
  std::vector<int64_t> oc_off(static_cast<size_t>(o));
  for (int32_t oc = 0; oc < o; ++oc) {
    zp[static_cast<size_t>(oc)] = static_cast<int32_t>(std::clamp<int64_t>(zp_of(oc), -1024, 1024));
    const int64_t tc = oc0 + int64_t{oc} * ocs;  // the tensor's channel
    oc_off[static_cast<size_t>(oc)] = dw_oc_major ? tc * th * tw
                                      : dw          ? tc
                                                    : tc * th * tw * ci;
  }
  const bool s8 = w.dtype == DType::kInt8;
  const int8_t* data_s8 = w.data.as<int8_t>();
  const uint8_t* data_u8 = w.data.bytes();
  auto clamp255 = [](int32_t v) { return static_cast<int16_t>(std::clamp(v, -255, 255)); };
  auto value = [&](int32_t oc, int32_t y, int32_t x, int32_t c) -> int16_t {
    const int32_t z = zp[static_cast<size_t>(oc)];
    const int64_t off = tap_off[static_cast<size_t>(y) * kw + x];
    if (off < 0) return clamp255(-z);  // an inserted zero
    const int64_t idx = oc_off[static_cast<size_t>(oc)] + off + (dw ? 0 : c);
    const int32_t v = s8 ? int32_t{data_s8[idx]} : int32_t{data_u8[idx]};
    return clamp255(v - z);
  };
  std::vector<int16_t> stream;
  if (arch.family != EthosUFamily::kU85) {
    // U55/U65: Vela's traversal and MLW streams, one per core.
    const Traversal t{o, kh, kw, dw ? 1 : ci, dw, !dw && bc.part_kernel, b16,
                      std::max(bc.ofm_block.c, 1), std::max(arch.ofm_ublocks[0].c, 1),
                      std::max(arch.ifm_ublock.c, 1), std::max(op.dh, 1), std::max(op.dw, 1)};
    const int32_t cores = std::max(std::min(arch.cores, o), 1);
    for (int32_t s = 0; s < cores; ++s) {
      stream.clear();
      Traverse(t, cores, s, [&](int32_t oc, int32_t y, int32_t x, int32_t c) {
        stream.push_back(oc < 0 ? int16_t{0} : value(oc, y, x, c));
      });
      r.encoded_bytes += MlwStreamBytes(stream);
    }
    return r;
  }
  // U85: Vela's U85 traversal, one stream per core (of every core, whether it has OFM channels
  // or not; U85StreamBytes). 2:4 sparse weights (a convolution whose every group of four IFM
  // channels at a kernel position, in the sparse order, holds two zeros and no -128) are
  // ordered for the sparse block configuration and 16 IFM channels per step.
  auto encode = [&](const BlockConfig& cfg, bool sparse, bool* sparse_ok) {
    const TraversalU85 t{o, kh, kw, dw ? 1 : ci,
                         dw ? U85Walk::kDepthwise : cfg.part_kernel ? U85Walk::kPartKernel
                                                                    : U85Walk::kDepthFirst,
                         b16, sparse, std::max(cfg.ofm_block.c, 1), std::max(cfg.ifm_block.c, 1),
                         std::max(cfg.ublock.c, 1), std::max(op.sw, 1), std::max(op.sh, 1),
                         std::max(op.dw, 1), std::max(op.dh, 1), arch.macs,
                         std::max(arch.cores, 1)};
    int64_t bytes = 0;
    for (int32_t s = 0; s < t.streams; ++s) {
      stream.clear();
      // 2:4 check (Vela's SparsityTracker): per kernel position, groups of four values.
      uint32_t pos = 0xFFFFFFFFu;
      int zeros_in_group = 0, index = 0;
      bool ok = true;
      TraverseU85(
          t, s,
          [&](bool valid, int32_t oc, int32_t y, int32_t x, int32_t c) {
            const int16_t v = valid ? value(oc, y, x, c) : int16_t{0};
            stream.push_back(v);
            if (!sparse) return true;
            const uint32_t p = (static_cast<uint32_t>(y) << 16) | static_cast<uint32_t>(x);
            if (p != pos) {
              pos = p;
              zeros_in_group = index = 0;
              if (c & 3) ok = false;
            }
            if (v == 0) ++zeros_in_group;
            else if (v > 127 || v < -127) ok = false;
            if ((index & 3) == 3) {
              if (zeros_in_group < 2) ok = false;
              zeros_in_group = 0;
            }
            ++index;
            return ok;  // not sparse: the rest is not needed
          },
          [&](int64_t count) { stream.insert(stream.end(), static_cast<size_t>(count), 0); });
      if (sparse && !ok) {
        *sparse_ok = false;
        return int64_t{0};
      }
      bytes += U85StreamBytes(stream);
    }
    return bytes;
  };
  // A bound on the padded streams' length: beyond it (no real network comes near) the
  // streams are not built and the weights get the dense rate.
  {
    const int64_t streams = std::max(arch.cores, 1);
    const int64_t sub = int64_t{CeilDivBy(kh, 8 / std::max(std::min(op.dh, 8), 1))} *
                        CeilDivBy(kw, 8 / std::max(std::min(op.dw, 8), 1));
    const int64_t bound =
        int64_t{RoundUp(o, std::max<int32_t>(bc.ublock.c, 4 * static_cast<int32_t>(streams)))} *
        (dw ? 1 : RoundUp(ci, std::max(bc.ifm_block.c, 128))) * (2 * int64_t{kh} * kw + 16 * sub);
    if (bound > (int64_t{1} << 26)) {
      r.encoded_bytes = DenseRateBytes(n);
      return r;
    }
  }
  if (!dw && op.hw != HwOp::kPooling && op.hw != HwOp::kDepthwise) {
    NpuOp sparse_op = op;
    sparse_op.sparse24 = true;
    bool sparse_ok = true;
    const int64_t bytes = encode(FindBlockConfig(arch, sparse_op), true, &sparse_ok);
    if (sparse_ok) {
      r.encoded_bytes = bytes;
      r.sparse24 = true;
      return r;
    }
  }
  r.encoded_bytes = encode(bc, false, nullptr);
  return r;
}

std::vector<WeightEncoding> EncodeWeightsEstimates(const Subgraph& sg,
                                                   const std::vector<NpuOp>& ops,
                                                   const Arch& arch, int threads) {
  std::vector<WeightEncoding> out(ops.size());
  // The ops EncodeWeights asks for: every weight view, and the first other op of each weight
  // tensor. Largest first, so that two threads finish together.
  std::vector<size_t> todo;
  std::vector<bool> seen(sg.tensors.size(), false);
  int64_t work = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const int32_t t = ops[i].weight_tensor;
    if (t < 0 || static_cast<size_t>(t) >= sg.tensors.size()) continue;
    if (!ops[i].weight_view) {
      if (seen[static_cast<size_t>(t)]) continue;
      seen[static_cast<size_t>(t)] = true;
    }
    todo.push_back(i);
    work += sg.tensors[static_cast<size_t>(t)].num_elements();
  }
  auto size_of = [&](size_t i) {
    return sg.tensors[static_cast<size_t>(ops[i].weight_tensor)].num_elements();
  };
  std::stable_sort(todo.begin(), todo.end(),
                   [&](size_t a, size_t b) { return size_of(a) > size_of(b); });
  std::atomic<size_t> next{0};
  auto encode = [&] {
    for (size_t k = next++; k < todo.size(); k = next++) {
      out[todo[k]] = EncodeWeightsEstimate(sg, ops[todo[k]], arch);
    }
  };
  // A second thread pays off from about a millisecond of encoding (some 10^5 weights).
  constexpr int64_t kParallelWork = 1 << 17;
  std::thread helper;
  std::exception_ptr helper_error;
  if (threads > 1 && work >= kParallelWork && todo.size() > 1 &&
      std::thread::hardware_concurrency() > 1) {
    try {
      helper = std::thread([&] {
        try {
          encode();
        } catch (...) {
          helper_error = std::current_exception();
          next = todo.size();
        }
      });
    } catch (const std::system_error&) {
      // No thread to be had: the calling thread encodes everything.
    }
  }
  try {
    encode();
  } catch (...) {
    next = todo.size();
    if (helper.joinable()) helper.join();
    throw;
  }
  if (helper.joinable()) helper.join();
  if (helper_error) std::rethrow_exception(helper_error);
  return out;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
