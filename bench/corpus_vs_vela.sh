#!/bin/sh
# Prints mica's Ethos-U estimate against Vela's recorded answers for the model corpus
# (test/corpus/reference/vela): per profile family, configuration and half (fit / validate) the
# median, 90th percentile and worst |error| of total cycles, SRAM and off-chip memory used and
# CPU/NPU placement agreement; per operator type the mica/Vela cycle ratio; the worst cases and
# per-layer outliers; every placement difference with Vela's reason text.
# The required suite checks the validation half (test/estimate/ethos_u_corpus_test.cc).
#
#   bench/corpus_vs_vela.sh [BUILD_DIR] [MODEL]     (default build/fast; MODEL: one model only)
#
# MICA_CORPUS_ALL=1 lists every case instead of the 25 worst per half.
# Environment: MICA_SHARED_DIR (the shared MLPerf Tiny models, validation half), and to use a
# corpus outside the tree MICA_CORPUS_DIR (models/, split.json), MICA_CORPUS_REFERENCE.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/fast}
test_bin=$build/test/mica_estimate_test
if [ ! -x "$test_bin" ]; then
  echo "corpus_vs_vela: $test_bin not built (cmake --build $build --target mica_estimate_test)" >&2
  exit 1
fi
if [ $# -ge 2 ]; then MICA_CORPUS_MODEL=$2; export MICA_CORPUS_MODEL; fi
MICA_SOURCE_DIR=${MICA_SOURCE_DIR:-$here}
export MICA_SOURCE_DIR
exec "$test_bin" "[.corpus-report]" --success=false
