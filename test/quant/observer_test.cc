// Calibration observers: min/max, moving average, percentile and MSE ranges; parsing.
#include "mica/quant/observer.h"

#include <cmath>
#include <vector>

#include "testing/catch.h"

namespace mica {
namespace quant {
namespace {

TEST_CASE("ParseObserver accepts the four observers and refuses the rest") {
  CHECK(ParseObserver("minmax")->kind == ObserverKind::kMinMax);
  CHECK(ParseObserver("ema")->kind == ObserverKind::kEma);
  CHECK(ParseObserver("mse")->kind == ObserverKind::kMse);
  auto p = ParseObserver("percentile=99.9");
  REQUIRE(p.ok());
  CHECK(p->kind == ObserverKind::kPercentile);
  CHECK(p->percentile == 99.9);
  CHECK(ObserverName(*p) == "percentile=99.9");
  CHECK(ParseObserver("percentile")->percentile == 99.99);
  CHECK_FALSE(ParseObserver("percentile=40").ok());
  CHECK_FALSE(ParseObserver("percentile=abc").ok());
  CHECK_FALSE(ParseObserver("histogram").ok());
}

TEST_CASE("RangeCollector: minmax and ema per calibration sample") {
  RangeCollector mm;
  ObserverConfig ema_cfg;
  ema_cfg.kind = ObserverKind::kEma;
  ema_cfg.ema_constant = 0.5;
  RangeCollector ema(ema_cfg);
  const std::vector<float> a = {-1.0f, 2.0f}, b = {-3.0f, 4.0f};
  for (RangeCollector* c : {&mm, &ema}) {
    c->Observe(7, a.data(), a.size());
    c->Observe(7, b.data(), b.size());
  }
  CHECK(mm.ranges().at(7).min == -3.0f);
  CHECK(mm.ranges().at(7).max == 4.0f);
  // First sample sets the range, the second moves it half way.
  CHECK(ema.ranges().at(7).min == -2.0f);
  CHECK(ema.ranges().at(7).max == 3.0f);
}

TEST_CASE("RangeCollector: percentile drops outliers, mse clips a long tail") {
  std::vector<float> v;
  for (int i = 0; i < 10000; ++i) v.push_back(static_cast<float>(i % 100) / 100.0f);  // [0, 1)
  v.push_back(50.0f);  // one outlier
  ObserverConfig pc;
  pc.kind = ObserverKind::kPercentile;
  pc.percentile = 99.9;
  RangeCollector p(pc);
  p.Observe(1, v.data(), v.size());
  const TensorRange r = p.ranges().at(1);
  CHECK(r.max < 1.1f);
  CHECK(r.max > 0.9f);
  CHECK(r.min >= 0.0f);
  ObserverConfig mc;
  mc.kind = ObserverKind::kMse;
  RangeCollector m(mc);
  m.Observe(1, v.data(), v.size());
  CHECK(m.ranges().at(1).max < 50.0f);
  CHECK(m.ranges().at(1).max >= 0.2f * 50.0f);
  // Without a tail MSE keeps the whole range.
  std::vector<float> flat;
  for (int i = 0; i <= 1000; ++i) flat.push_back(static_cast<float>(i) / 1000.0f);
  RangeCollector m2(mc);
  m2.Observe(2, flat.data(), flat.size());
  CHECK(m2.ranges().at(2).max > 0.97f);
}

TEST_CASE("Histogram grows by merging bins and keeps every count") {
  Histogram h;
  const std::vector<float> small = {0.5f, -0.5f, 0.25f};
  const std::vector<float> big = {100.0f, -7.0f, NAN};
  h.Add(small.data(), small.size());
  h.Add(big.data(), big.size());
  CHECK(h.Quantile(1.0) >= 99.0);
  CHECK(h.Quantile(0.0) <= -6.0);
  CHECK(std::fabs(h.Quantile(0.5) - 0.25) < 0.5);
}

}  // namespace
}  // namespace quant
}  // namespace mica
