#!/usr/bin/env bash
# An open-ended fuzz campaign outside CI: builds the libFuzzer targets (clang, ASan+UBSan) and
# runs each for a number of executions with several jobs, keeping what it finds. The figures it
# prints (executions per target, findings) go in the closing notes; each finding's reproducer
# belongs in test/fuzz/corpus/<target>/ once fixed.
#
#   test/fuzz/campaign.sh [RUNS_PER_TARGET (default 2000000)] [JOBS (default 2)] [TARGET ...]
#
# With TARGET names (e.g. fuzz_onnx) only those fuzzers run. FUZZ_TIMEOUT (seconds, default 30)
# is libFuzzer's per-input wall-clock limit: raise it on a loaded machine (at nice 19 a 0.3 s
# input has taken 371 s of wall time there).
#
# Uses build/fuzz-campaign; the corpus it grows stays in build/fuzz-campaign/corpus.
set -euo pipefail
cd "$(dirname "$0")/../.."
runs=${1:-2000000}
jobs=${2:-2}
timeout=${FUZZ_TIMEOUT:-30}
only=("${@:3}")
build=build/fuzz-campaign
shared=${MICA_SHARED_DIR:-../shared}
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG" \
  -DMICA_SANITIZE=address,undefined -DMICA_BUILD_FUZZERS=ON -DMICA_BUILD_TESTS=OFF \
  -DMICA_BUILD_BENCHMARKS=OFF -DMICA_SHARED_DIR="$shared" >/dev/null
cmake --build "$build" --target mica_fuzzers -j"$jobs" >/dev/null
mkdir -p "$build/seeds/fuzz_tflite"
"$build/fuzzers/mica_fuzz_seeds" "$build/seeds/fuzz_tflite" >/dev/null
for fuzzer in "$build"/fuzzers/fuzz_*; do
  name=$(basename "$fuzzer")
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  format=${name#fuzz_}
  seed_name=$name
  if [ "$name" = fuzz_run ]; then format=tflite; seed_name=fuzz_tflite; fi  # run takes TFLite
  corpus="$build/corpus/$name"
  artifacts="$build/artifacts/$name"
  mkdir -p "$corpus" "$artifacts" "$build/seeds/$name"
  dirs=("$build/seeds/$seed_name" "test/fuzz/corpus/$seed_name")
  if [ "$name" = fuzz_target_config ]; then dirs+=("libestimate/targets"); fi
  if [ -d "$shared/models" ]; then
    while IFS= read -r d; do dirs+=("$d"); done < <(find "$shared/models" -name "*.$format" -printf '%h\n' | sort -u)
  fi
  per_job=$(( runs / jobs ))
  start=$(date +%s)
  total=0
  pids=()
  for ((j = 0; j < jobs; ++j)); do
    "$fuzzer" -seed=$((1000 + j)) -runs="$per_job" -timeout="$timeout" -rss_limit_mb=2560 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "${dirs[@]}" \
      >"$build/$name.$j.log" 2>&1 &
    pids+=($!)
  done
  failed=0
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  for ((j = 0; j < jobs; ++j)); do
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$name.$j.log")
    total=$(( total + ${n:-0} ))
  done
  findings=$(find "$artifacts" -type f | wc -l)
  echo "$name: $total executions in $(( $(date +%s) - start )) s, $findings findings$([ $failed = 1 ] && echo ' (FAILED: see '"$build/$name"'.*.log)')"
done
