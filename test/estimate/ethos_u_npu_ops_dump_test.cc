// Hidden diagnostic: MICA_CORPUS_CASE=source/model/profile/config prints every NPU operation
// mica lowers the model to (shapes, bits, block, cycles), for comparing with Vela's per-layer
// rows of the same case.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "estimate/corpus_vela.h"
#include "ethos_u/model.h"
#include "ethos_u/stages.h"
#include "testing/catch.h"
#include "testing/shared.h"

namespace mica {
namespace estimate {
namespace ethosu {
namespace {

TEST_CASE("ethos_u corpus case NPU operations", "[.corpus-npu-ops]") {
  const char* spec = std::getenv("MICA_CORPUS_CASE");
  if (spec == nullptr) return;
  std::vector<std::string> part;
  std::string cur;
  for (const char* p = spec;; ++p) {
    if (*p == '/' || *p == 0) {
      part.push_back(cur), cur.clear();
    } else {
      cur += *p;
    }
    if (*p == 0) break;
  }
  REQUIRE(part.size() == 4);
  const corpus::Paths paths = corpus::FindPaths(testing::SourceDir(), testing::SharedDir());
  corpus::Row row;
  // Probes (test/corpus/probes) keep their own records beside their models.
  const std::string probes = testing::SourceDir() + "/test/corpus/probes";
  const std::string totals = part[0] == "probes" ? probes + "/reference/vela/totals.csv"
                                                 : paths.reference + "/vela/totals.csv";
  for (const corpus::Row& r : corpus::ReadCsvFile(totals)) {
    if (corpus::Str(r, "source") == part[0] && corpus::Str(r, "model") == part[1] &&
        corpus::Str(r, "profile") == part[2] && corpus::Str(r, "config") == part[3]) {
      row = r;
    }
  }
  REQUIRE(!row.empty());
  const std::string root = part[0] == "shared"   ? paths.shared
                           : part[0] == "probes" ? probes
                                                 : paths.corpus;
  absl::StatusOr<Graph> g = LoadModel(root + "/" + corpus::Str(row, "model_path"));
  REQUIRE(g.ok());
  absl::StatusOr<TargetProfile> p = corpus::ProfileForRow(row);
  REQUIRE(p.ok());
  const EthosUConfig& cfg = p->ethos_u;
  absl::StatusOr<Arch> arch = MakeArch(cfg.family, cfg.macs);
  REQUIRE(arch.ok());
  absl::StatusOr<Lowered> lw = Lower(*g, cfg, *arch);
  REQUIRE(lw.ok());
  const MemSystem ms = MakeMemSystem(cfg);
  const Subgraph& sg = g->main();
  EncodeWeights(sg, *arch, &*lw);
  // The stages of EstimateEthosU, in its order.
  Schedule schedule = ScheduleSteps(sg, *lw);
  ChainU85(*arch, schedule, &*lw);
  const std::vector<int32_t> stripe_rows = BuildCascades(sg, cfg, ms, &schedule, &*lw);
  const std::vector<BlockConfig> blocks = ChooseBlocks(*arch, *lw, stripe_rows);
  const int64_t limit =
      ms.arena_area != ms.staging_area ? cfg.memory_mode.arena_cache_bytes : int64_t{0};
  std::vector<TensorLifetime> weight_buffers;
  if (limit > 0) {
    Lowered unstaged = *lw;
    PlaceFeatureMaps(sg, cfg, ms, schedule, &unstaged, false);
    weight_buffers =
        WeightBufferRanges(schedule, CostOps(*arch, ms, unstaged, schedule, blocks, limit));
  }
  PlaceFeatureMaps(sg, cfg, ms, schedule, &*lw, true, weight_buffers, blocks);
  const std::vector<OpCost> costs = CostOps(*arch, ms, *lw, schedule, blocks, limit);
  std::vector<size_t> order(lw->ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return schedule.step_of_npu[a] < schedule.step_of_npu[b];
  });
  const int sram = static_cast<int>(MemoryArea::kSram);
  const int off = static_cast<int>(cfg.memory_mode.const_axi == 0 ? cfg.system.axi0.area
                                                                  : cfg.system.axi1.area);
  for (size_t i : order) {
    const NpuOp& o = lw->ops[i];
    const BlockConfig& b = blocks[i];
    const OpCost& c = costs[i];
    std::printf("%4d %3d %-28s ifm %dx%dx%d/%d %s ofm %dx%dx%d/%d k %dx%d s %dx%d blk %dx%dx%d "
                "%s%s op %8.0f npu %8.0f total %8.0f sram %8.0f/%7.0f off %8.0f/%7.0f wb %lld "
                "slack %.0f\n",
                schedule.step_of_npu[i], o.src_op, o.name.c_str(), o.ifm.shape.h, o.ifm.shape.w,
                o.ifm.shape.c, o.ifm.bits, o.has_ifm2 ? (o.ifm2.scalar ? "+s" : "+t") : "  ",
                o.ofm.shape.h, o.ofm.shape.w, o.ofm.shape.c, o.ofm.bits, o.kh, o.kw, o.sh, o.sw,
                b.ofm_block.h, b.ofm_block.w, b.ofm_block.c,
                o.chained_into >= 0 ? "C" : "-", c.weights_buffered ? "B" : "-", c.op_cycles,
                c.npu_cycles, c.total, c.bytes[sram], c.access_cycles[sram], c.bytes[off],
                c.access_cycles[off], static_cast<long long>(o.encoded_weight_bytes), c.slack_next);
  }
}

}  // namespace
}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
