#include "mica/quant/observer.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mica {
namespace quant {

void MinMaxObserver::Observe(const float* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float v = data[i];
    if (!std::isfinite(v)) {
      ++non_finite_;
      continue;
    }
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
    ++count_;
  }
}

absl::StatusOr<ObserverConfig> ParseObserver(const std::string& text) {
  ObserverConfig c;
  if (text == "minmax") return c;
  if (text == "ema") {
    c.kind = ObserverKind::kEma;
    return c;
  }
  if (text == "mse") {
    c.kind = ObserverKind::kMse;
    return c;
  }
  if (text == "percentile" || text.rfind("percentile=", 0) == 0) {
    c.kind = ObserverKind::kPercentile;
    if (text.size() > 11) {
      double p = 0;
      if (!absl::SimpleAtod(text.substr(11), &p) || !(p > 50.0 && p <= 100.0)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "observer '", text, "': the percentile must be a number in (50, 100]"));
      }
      c.percentile = p;
    }
    return c;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown observer '", text, "' (minmax, ema, percentile[=P] or mse)"));
}

std::string ObserverName(const ObserverConfig& c) {
  switch (c.kind) {
    case ObserverKind::kMinMax: return "minmax";
    case ObserverKind::kEma: return "ema";
    case ObserverKind::kPercentile: return absl::StrCat("percentile=", c.percentile);
    case ObserverKind::kMse: return "mse";
  }
  return "minmax";
}

void Histogram::Grow(double magnitude) {
  if (limit_ == 0.0) {
    limit_ = magnitude;
    return;
  }
  while (limit_ < magnitude) {
    // Bin j of [-L, L] lies in bin kBins/4 + j/2 of [-2L, 2L].
    std::vector<double> merged(kBins, 0.0);
    for (int j = 0; j < kBins; ++j) merged[kBins / 4 + j / 2] += counts_[static_cast<size_t>(j)];
    counts_ = std::move(merged);
    limit_ *= 2.0;
  }
}

void Histogram::Add(const float* data, size_t n) {
  double mag = 0.0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isfinite(data[i])) mag = std::max(mag, std::fabs(static_cast<double>(data[i])));
  }
  if (mag > limit_) Grow(mag);
  if (limit_ == 0.0) limit_ = 1e-30;  // all zeros so far: any positive limit holds them
  const double per_bin = kBins / (2.0 * limit_);
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i])) continue;
    int b = static_cast<int>((static_cast<double>(data[i]) + limit_) * per_bin);
    b = std::clamp(b, 0, kBins - 1);
    counts_[static_cast<size_t>(b)] += 1.0;
    total_ += 1.0;
  }
}

double Histogram::Quantile(double fraction) const {
  const double width = 2.0 * limit_ / kBins;
  const double target = std::clamp(fraction, 0.0, 1.0) * total_;
  double seen = 0.0;
  for (int b = 0; b < kBins; ++b) {
    const double c = counts_[static_cast<size_t>(b)];
    if (c > 0 && seen + c >= target) {
      return -limit_ + width * (b + (target - seen) / c);
    }
    seen += c;
  }
  return limit_;
}

double Histogram::MseShrink(float lo, float hi, int32_t levels) const {
  const double width = 2.0 * limit_ / kBins;
  double best_a = 1.0, best_err = -1.0;
  for (int step = 0; step <= 80; ++step) {
    const double a = 1.0 - 0.01 * step;
    const double l = a * std::min(0.0f, lo), h = a * std::max(0.0f, hi);
    const double scale = (h - l) / std::max(1, levels - 1);
    double err = 0.0;
    for (int b = 0; b < kBins; ++b) {
      const double c = counts_[static_cast<size_t>(b)];
      if (c == 0) continue;
      const double x = -limit_ + width * (b + 0.5);
      const double e = x > h ? (x - h) * (x - h) : x < l ? (x - l) * (x - l) : scale * scale / 12;
      err += c * e;
    }
    if (best_err < 0 || err < best_err) {
      best_err = err;
      best_a = a;
    }
  }
  return best_a;
}

void RangeCollector::Observe(int32_t tensor, const float* data, size_t n) {
  observers_[tensor].Observe(data, n);
  if (config_.kind == ObserverKind::kMinMax) return;
  Extra& x = extra_[tensor];
  if (config_.kind == ObserverKind::kEma) {
    MinMaxObserver sample;
    sample.Observe(data, n);
    if (sample.empty()) return;
    if (!x.ema_started) {
      x.ema = sample.range();
      x.ema_started = true;
    } else {
      const float c = static_cast<float>(config_.ema_constant);
      x.ema.min += c * (sample.min() - x.ema.min);
      x.ema.max += c * (sample.max() - x.ema.max);
    }
    return;
  }
  x.histogram.Add(data, n);
}

TensorRanges RangeCollector::ranges() const {
  TensorRanges out;
  for (const auto& [t, obs] : observers_) {
    if (obs.empty()) continue;
    TensorRange r = obs.range();
    auto it = extra_.find(t);
    if (it != extra_.end()) {
      const Extra& x = it->second;
      switch (config_.kind) {
        case ObserverKind::kEma:
          if (x.ema_started) r = x.ema;
          break;
        case ObserverKind::kPercentile:
          if (!x.histogram.empty()) {
            const double p = config_.percentile / 100.0;
            r.min = std::max(r.min, static_cast<float>(x.histogram.Quantile(1.0 - p)));
            r.max = std::min(r.max, static_cast<float>(x.histogram.Quantile(p)));
            if (r.min > r.max) r.min = r.max = 0.5f * (r.min + r.max);
          }
          break;
        case ObserverKind::kMse:
          if (!x.histogram.empty()) {
            const double a = x.histogram.MseShrink(r.min, r.max, config_.levels);
            r.min = static_cast<float>(a * r.min);
            r.max = static_cast<float>(a * r.max);
          }
          break;
        case ObserverKind::kMinMax: break;
      }
    }
    out[t] = r;
  }
  return out;
}

}  // namespace quant
}  // namespace mica
