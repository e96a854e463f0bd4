// Encoded weight size estimate (doc section 9). Vela reorders weights for the hardware
// traversal (padding kernel elements / channels with zeros) and compresses them losslessly
// (palette + zero runs + Golomb-Rice codes). We rebuild the padded stream's value statistics
// and estimate the coded size as the cheaper of a dense code (zeroth-order entropy of all
// values) and a zero-run code (entropy of the non-zero values plus Golomb-Rice coded run
// lengths), each plus a constant per-symbol coding loss of Golomb-Rice against entropy.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ethos_u/model.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

constexpr double kCodingLossBits = 0.4;  // Golomb-Rice vs entropy, per coded value
constexpr double kStreamHeaderBytes = 16;

int32_t RoundUp(int32_t v, int32_t m) { return m <= 0 ? v : (v + m - 1) / m * m; }

double Entropy(const std::array<int64_t, 512>& hist, int64_t n) {
  if (n <= 0) return 0;
  double h = 0;
  for (int64_t c : hist) {
    if (c > 0) h -= double(c) * std::log2(double(c) / double(n));
  }
  return h;  // total bits
}

// Cheapest Golomb-Rice coding (parameter k = 0..11) of the zero-run lengths, from a histogram
// of short runs plus the list of long ones.
double GolombRiceBits(const std::vector<int64_t>& short_hist, const std::vector<int64_t>& long_runs) {
  double best = -1;
  for (int k = 0; k < 12; ++k) {
    double bits = 0;
    for (size_t r = 0; r < short_hist.size(); ++r) {
      if (short_hist[r] != 0) bits += double(short_hist[r]) * (double(r >> k) + 1 + k);
    }
    for (int64_t r : long_runs) bits += double(r >> k) + 1 + k;
    if (best < 0 || bits < best) best = bits;
  }
  return std::max(best, 0.0);
}

}  // namespace

int64_t ConstantWeightStreamBytes(int64_t n) {
  // One value repeated: no entropy, only the coding loss per value.
  return static_cast<int64_t>(std::ceil(double(n) * kCodingLossBits / 8.0 / 16.0) * 16.0);
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
  if (dw && w.shape.size() == 4) {
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
    r.encoded_bytes = static_cast<int64_t>(std::ceil(double(n) * (7.5 + kCodingLossBits) / 8));
    return r;
  }
  const BlockConfig bc = FindBlockConfig(arch, op);
  const bool b16 = op.ifm.bits == 16;
  int32_t k_pad = kh * kw;
  int32_t ci_pad = ci;
  if (dw) {
    k_pad = RoundUp(kh * kw, 4);
  } else if (bc.part_kernel) {
    k_pad = RoundUp(kh * kw, b16 ? 2 : 4);
    ci_pad = RoundUp(ci, 8);
  }
  const int32_t o_pad = RoundUp(o, bc.ublock.c);
  auto value = [&](int32_t oc, int32_t k, int32_t c) -> int32_t {
    if (oc >= o || k >= kh * kw || c >= ci) return 0;
    int64_t idx;
    if (dw) idx = int64_t{k} * o + oc;
    else idx = (int64_t{oc} * kh * kw + k) * ci + c;
    const int64_t zp_i = w.quant.zero_point.size() > 1 ? (dw ? oc : oc) : 0;
    const int64_t zp = w.quant.zero_point.empty()
                           ? 0
                           : w.quant.zero_point[std::min<size_t>(static_cast<size_t>(zp_i),
                                                                 w.quant.zero_point.size() - 1)];
    const int32_t v = w.dtype == DType::kInt8 ? int32_t{w.data.as<int8_t>()[idx]}
                                              : int32_t{w.data.bytes()[idx]};
    return static_cast<int32_t>(std::clamp<int64_t>(v - zp, -255, 255));
  };
  std::array<int64_t, 512> hist{}, hist_nz{};
  constexpr int64_t kShortRuns = 1024;
  std::vector<int64_t> run_hist(kShortRuns, 0), long_runs;
  auto add_run = [&](int64_t len) {
    if (len < kShortRuns) ++run_hist[static_cast<size_t>(len)];
    else long_runs.push_back(len);
  };
  int64_t total = 0, nnz = 0, run = 0;
  bool sparse_ok = !dw && arch.family == EthosUFamily::kU85;
  // Stream order: OFM channel groups, kernel elements, IFM channels.
  const int32_t cgroup = dw ? 1 : ci_pad;
  for (int32_t oc = 0; oc < o_pad; ++oc) {
    for (int32_t k = 0; k < k_pad; ++k) {
      int zeros_in_group = 0;
      for (int32_t c = 0; c < cgroup; ++c) {
        const int32_t v = value(oc, k, c);
        ++total;
        ++hist[v + 256];
        if (v == 0) {
          ++run;
          ++zeros_in_group;
        } else {
          ++nnz;
          ++hist_nz[v + 256];
          add_run(run);
          run = 0;
        }
        if (sparse_ok && (c % 4 == 3 || c == cgroup - 1)) {
          const int group_len = c % 4 + 1;
          const int need = group_len == 4 ? 2 : (group_len >= 2 ? group_len - 2 : 0);
          if (zeros_in_group < need) sparse_ok = false;
          zeros_in_group = 0;
        }
      }
    }
  }
  if (run > 0) add_run(run);
  const double dense_bits = Entropy(hist, total) + kCodingLossBits * double(total);
  const double sparse_bits =
      Entropy(hist_nz, nnz) + kCodingLossBits * double(nnz) + GolombRiceBits(run_hist, long_runs);
  const double bits = std::min(dense_bits, sparse_bits);
  const int32_t streams = std::max(arch.cores, 1);
  r.encoded_bytes = static_cast<int64_t>(
      (std::ceil(bits / 8.0 / 16.0) * 16.0) + kStreamHeaderBytes * (streams - 1));
  r.sparse24 = sparse_ok && op.hw != HwOp::kDepthwise && op.hw != HwOp::kPooling;
  return r;
}

}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
