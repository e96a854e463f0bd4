#!/usr/bin/env bash
# Times `mica check` against Arm's Vela on the same models and Ethos-U profiles in one run, and
# prints both tools' total cycles, Vela given the configuration of mica's profile (MLIA's for the
# built-in names). Vela is optional for mica; this script needs it
# (pip install ethos-u-vela).
#
#   bench/check_vs_vela.sh [--mica PATH] [--vela PATH] [--runs N] [--profiles "P1 P2"]
#                          [--validation-half] [MODEL...]
#
# Whole processes are timed in pairs (mica, then Vela, N times per case); each case's speedup
# is the median of its paired ratios Vela/mica, and the last line is the median over cases.
# Both write their results unsynced: mica its JSON report to stdout (redirected to a file;
# `--output FILE` would also fsync it before renaming it into place, which costs about 1 ms on
# an idle disk and tens of ms while other processes write), Vela its output folder. Times come
# from bash's $EPOCHREALTIME (no process started around the timed one).
# Defaults: mica at build/release/bin/mica, vela from PATH, 3 pairs per case, the four
# MLPerf Tiny int8 models from ../shared, profiles ethos-u55-256 ethos-u65-256 ethos-u85-256.
# --validation-half takes the models of the corpus's validation half (test/corpus/split.json
# and the shared models Vela's records name), one profile per model in turn over the eleven
# built-in profiles.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mica="$here/build/release/bin/mica"
vela="$(command -v vela || true)"
runs=3
profiles="ethos-u55-256 ethos-u65-256 ethos-u85-256"
validation=0
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mica) mica="$2"; shift 2 ;;
    --vela) vela="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --profiles) profiles="$2"; shift 2 ;;
    --validation-half) validation=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done
shared="${MICA_SHARED_DIR:-$here/../shared}"
[ -x "$mica" ] || { echo "check_vs_vela: mica binary not found at $mica (use --mica PATH)" >&2; exit 2; }
[ -n "$vela" ] && [ -x "$vela" ] || { echo "check_vs_vela: vela not installed (pip install ethos-u-vela, or --vela PATH)" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# Cases: "model profile" lines.
if [ "$validation" = 1 ]; then
  python3 - "$here/test/corpus" "$shared" > "$tmp/cases" <<'PY'
import csv, json, sys
corpus, shared = sys.argv[1], sys.argv[2]
val = set(json.load(open(corpus + "/split.json"))["validate"]["models"])
profiles = ["ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256",
            "ethos-u65-512", "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024",
            "ethos-u85-2048"]
paths = {}
for r in csv.DictReader(open(corpus + "/reference/vela/totals.csv")):
    if r["source"] == "corpus" and r["model"] not in val:
        continue
    root = corpus if r["source"] == "corpus" else shared
    paths.setdefault(r["model"], root + "/" + r["model_path"])
for i, (m, p) in enumerate(sorted(paths.items())):
    print(p, profiles[i % len(profiles)])
PY
else
  if [ ${#models[@]} -eq 0 ]; then
    for m in kws_ds_cnn_int8 ic_resnet8_int8 vww_mobilenet_v1_025_int8 ad_autoencoder_int8; do
      models+=("$shared/models/mlperf-tiny/$m.tflite")
    done
  fi
  for model in "${models[@]}"; do
    for prof in $profiles; do echo "$model $prof"; done
  done > "$tmp/cases"
fi

export LC_ALL=C  # $EPOCHREALTIME with a '.' decimal point
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# mica's NPU total (its total less the CPU-placed operators' cycles, which Vela does not count).
cycles_of() { python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['profiles'][0]['performance']; print(int(p['total_cycles'] - p.get('cpu_cycles', 0)))" "$1"; }

printf '%-28s %-15s %10s %10s %8s %12s %12s %7s\n' model profile mica_ms vela_ms speedup mica_cycles vela_cycles diff%
speedups=()
while read -r model prof; do
  [ -f "$model" ] || { echo "check_vs_vela: $model: no such file" >&2; continue; }
  name="$(basename "$model" .tflite)"
  mica_t=() vela_t=() ratios=()
  for _ in $(seq "$runs"); do
    t0=$EPOCHREALTIME
    "$mica" check "$model" --target-profile "$prof" --compatibility --performance --json >"$tmp/m.json"
    t1=$EPOCHREALTIME
    # Vela gets the configuration mica's profile means (system config, memory mode, arena cache).
    read -r -a vela_cfg < <(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['profiles'][0]['target']['ethos_u']; c=e['memory_mode']['arena_cache_bytes']; print(' '.join(['--system-config', e['system_config']['name'], '--memory-mode', e['memory_mode']['name']] + (['--arena-cache-size', str(c)] if c > 0 else [])))" "$tmp/m.json")
    rm -rf "$tmp/vela"; mkdir -p "$tmp/vela"
    t2=$EPOCHREALTIME
    "$vela" "$model" --accelerator-config "$prof" "${vela_cfg[@]}" --output-dir "$tmp/vela" >"$tmp/vela.log" 2>&1
    t3=$EPOCHREALTIME
    m=$(python3 -c "print(($t1 - $t0) * 1e3)") v=$(python3 -c "print(($t3 - $t2) * 1e3)")
    mica_t+=("$m") vela_t+=("$v") ratios+=("$(python3 -c "print($v / $m)")")
  done
  mica_ms=$(echo "${mica_t[*]}" | median) vela_ms=$(echo "${vela_t[*]}" | median)
  speedup=$(echo "${ratios[*]}" | median)
  speedups+=("$speedup")
  vela_cycles=$(python3 -c "import csv,glob,sys; r=list(csv.DictReader(open(glob.glob(sys.argv[1]+'/*_summary_*.csv')[0])))[0]; print(int(float(r['cycles_total'])))" "$tmp/vela")
  mica_cycles=$(cycles_of "$tmp/m.json")
  python3 - "$name" "$prof" "$mica_ms" "$vela_ms" "$speedup" "$mica_cycles" "$vela_cycles" <<'PY'
import sys
name, prof = sys.argv[1], sys.argv[2]
m, v, s, mc, vc = (float(x) for x in sys.argv[3:8])
print(f"{name:<28} {prof:<15} {m:10.1f} {v:10.1f} {s:7.0f}x {int(mc):12d} {int(vc):12d} {100*(mc-vc)/vc:+6.1f}%")
PY
done < "$tmp/cases"
echo "median of paired speedups (Vela / mica, whole process) over ${#speedups[@]} cases: $(echo "${speedups[*]}" | median | python3 -c 'import sys; print(f"{float(sys.stdin.read()):.0f}x")')"
