// Hidden diagnostic: MICA_CORPUS_CASE=source/model/profile/config prints every NPU operation
// mica lowers the model to (shapes, bits, block, cycles), for comparing with Vela's per-layer
// rows of the same case.
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
  for (const corpus::Row& r : corpus::ReadCsvFile(paths.reference + "/vela/totals.csv")) {
    if (corpus::Str(r, "source") == part[0] && corpus::Str(r, "model") == part[1] &&
        corpus::Str(r, "profile") == part[2] && corpus::Str(r, "config") == part[3]) {
      row = r;
    }
  }
  REQUIRE(!row.empty());
  absl::StatusOr<Graph> g = LoadModel((part[0] == "shared" ? paths.shared : paths.corpus) + "/" +
                                      corpus::Str(row, "model_path"));
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
  const Schedule schedule = ScheduleSteps(sg, *lw);
  ChainU85(*arch, schedule, &*lw);
  PlaceFeatureMaps(sg, cfg, ms, schedule, &*lw);
  const std::vector<BlockConfig> blocks = ChooseBlocks(*arch, *lw);
  const std::vector<OpCost> costs = CostOps(*arch, ms, *lw, schedule, blocks);
  for (size_t i = 0; i < lw->ops.size(); ++i) {
    const NpuOp& o = lw->ops[i];
    const BlockConfig& b = blocks[i];
    std::printf("%3d %-28s ifm %dx%dx%d/%d %s ofm %dx%dx%d/%d k %dx%d s %dx%d blk %dx%dx%d  op %8.0f "
                "total %8.0f\n",
                o.src_op, o.name.c_str(), o.ifm.shape.h, o.ifm.shape.w, o.ifm.shape.c, o.ifm.bits,
                o.has_ifm2 ? (o.ifm2.scalar ? "+s" : "+t") : "  ", o.ofm.shape.h, o.ofm.shape.w,
                o.ofm.shape.c, o.ofm.bits, o.kh, o.kw, o.sh, o.sw, b.ofm_block.h, b.ofm_block.w,
                b.ofm_block.c, costs[i].op_cycles, costs[i].total);
  }
}

}  // namespace
}  // namespace ethosu
}  // namespace estimate
}  // namespace mica
