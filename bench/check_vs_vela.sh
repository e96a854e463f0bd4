#!/usr/bin/env bash
# Times `mica check` against Arm's Vela on the same models and Ethos-U profiles in one run, and
# prints both tools' total cycles, Vela given the configuration of mica's profile (MLIA's for the
# built-in names). Vela is optional for mica; this script needs it
# (pip install ethos-u-vela).
#
#   bench/check_vs_vela.sh [--mica PATH] [--runs N] [--profiles "ethos-u55-256 ethos-u85-512"] [MODEL...]
#
# Defaults: mica at build/release/bin/mica, 5 runs of mica (median), 1 run of vela per case,
# the four MLPerf Tiny int8 models from ../shared, profiles ethos-u55-256 ethos-u65-256
# ethos-u85-256.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mica="$here/build/release/bin/mica"
runs=5
profiles="ethos-u55-256 ethos-u65-256 ethos-u85-256"
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mica) mica="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --profiles) profiles="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) models+=("$1"); shift ;;
  esac
done
shared="${MICA_SHARED_DIR:-$here/../shared}"
if [ ${#models[@]} -eq 0 ]; then
  for m in kws_ds_cnn_int8 ic_resnet8_int8 vww_mobilenet_v1_025_int8 ad_autoencoder_int8; do
    models+=("$shared/models/mlperf-tiny/$m.tflite")
  done
fi
[ -x "$mica" ] || { echo "check_vs_vela: mica binary not found at $mica (use --mica PATH)" >&2; exit 2; }
command -v vela >/dev/null || { echo "check_vs_vela: vela not installed (pip install ethos-u-vela)" >&2; exit 2; }

now() { date +%s.%N; }
elapsed_ms() { python3 -c "print(f'{($2 - $1) * 1e3:.1f}')"; }
median() { tr ' ' '\n' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
cycles_of() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(int(d['profiles'][0]['performance']['total_cycles']))" "$1"; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-28s %-15s %10s %10s %8s %12s %12s %7s\n' model profile mica_ms vela_ms speedup mica_cycles vela_cycles diff%
for model in "${models[@]}"; do
  name="$(basename "$model" .tflite)"
  for prof in $profiles; do
    times=()
    for _ in $(seq "$runs"); do
      t0=$(now); "$mica" check "$model" --target-profile "$prof" --performance --json --output "$tmp/m.json"; t1=$(now)
      times+=("$(elapsed_ms "$t0" "$t1")")
    done
    mica_ms=$(echo "${times[*]}" | median)
    rm -rf "$tmp/vela"; mkdir -p "$tmp/vela"
    # Vela gets the configuration mica's profile means (system config, memory mode, arena cache).
    read -r -a vela_cfg < <(python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['profiles'][0]['target']['ethos_u']; c=e['memory_mode']['arena_cache_bytes']; print(' '.join(['--system-config', e['system_config']['name'], '--memory-mode', e['memory_mode']['name']] + (['--arena-cache-size', str(c)] if c > 0 else [])))" "$tmp/m.json")
    t0=$(now); vela "$model" --accelerator-config "$prof" "${vela_cfg[@]}" --output-dir "$tmp/vela" >"$tmp/vela.log" 2>&1; t1=$(now)
    vela_ms=$(elapsed_ms "$t0" "$t1")
    vela_cycles=$(python3 -c "import csv,glob,sys; r=list(csv.DictReader(open(glob.glob(sys.argv[1]+'/*_summary_*.csv')[0])))[0]; print(int(float(r['cycles_total'])))" "$tmp/vela")
    mica_cycles=$(cycles_of "$tmp/m.json")
    python3 - "$name" "$prof" "$mica_ms" "$vela_ms" "$mica_cycles" "$vela_cycles" <<'PY'
import sys
name, prof, m, v, mc, vc = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
print(f"{name:<28} {prof:<15} {m:10.1f} {v:10.1f} {v/m:7.0f}x {mc:12d} {vc:12d} {100*(mc-vc)/vc:+6.1f}%")
PY
  done
done
