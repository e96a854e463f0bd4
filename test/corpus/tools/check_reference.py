#!/usr/bin/env python3
"""Check the recorded reference data (test/corpus/reference) for consistency.

Needs only Python (numpy for the .npy files). Checks: every ok Vela row has its per-layer file
with per_layer_rows rows whose sums equal the totals; every name_id is in names.txt; the CPU
fallback count matches cpu_fallbacks.csv; every TFLite Micro output file exists and has the
recorded dtype, shape and CRC-32; every single-operator arena row adds up; with --corpus-root/--shared-root, every model_sha256 still
matches its file. Exits 1 and lists the problems otherwise.
"""

import argparse
import collections
import csv
import hashlib
import sys
import zlib
from pathlib import Path

SUMS = {"op_cycles": "total_cycles", "npu_cycles": "npu_cycles",
        "sram_ac": "sram_access_cycles", "dram_ac": "dram_access_cycles",
        "onflash_ac": "on_chip_flash_access_cycles", "offflash_ac": "off_chip_flash_access_cycles",
        "macs": "macs"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("reference", help="test/corpus/reference")
    ap.add_argument("--corpus-root", help="test/corpus (to check model sha256)")
    ap.add_argument("--shared-root", help="the shared folder (to check model sha256)")
    args = ap.parse_args()
    ref = Path(args.reference)
    roots = {"corpus": args.corpus_root, "shared": args.shared_root}
    problems = []
    sha_cache = {}

    def check_sha(source, path, sha):
        if not roots.get(source):
            return
        p = Path(roots[source]) / path
        if p not in sha_cache:
            sha_cache[p] = hashlib.sha256(p.read_bytes()).hexdigest() if p.exists() else None
        if sha_cache[p] != sha:
            problems.append(f"{source}:{path}: sha256 differs from the recorded one (stale)")

    fallbacks = collections.Counter()
    fb_path = ref / "vela" / "cpu_fallbacks.csv"
    if fb_path.exists():
        with open(fb_path, newline="") as f:
            for r in csv.DictReader(f):
                fallbacks[(r["source"], r["model"], r["profile"], r["config"])] += 1
    n_ok = n_err = 0
    totals = ref / "vela" / "totals.csv"
    if totals.exists():
        with open(totals, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            where = f"{r['source']}/{r['model']} {r['profile']} {r['config']}"
            check_sha(r["source"], r["model_path"], r["model_sha256"])
            if r["status"] != "ok":
                n_err += 1
                continue
            n_ok += 1
            d = ref / "vela" / "layers" / r["source"] / r["model"]
            p = d / f"{r['profile']}__{r['config']}.csv"
            if not p.exists():
                problems.append(f"{where}: no per-layer file")
                continue
            names = (d / "names.txt").read_text().split("\n")[:-1]
            with open(p, newline="") as f:
                layers = list(csv.DictReader(f))
            if len(layers) != int(r["per_layer_rows"]):
                problems.append(f"{where}: {len(layers)} per-layer rows, totals say "
                                f"{r['per_layer_rows']}")
            for col, tot in SUMS.items():
                s = sum(int(l[col]) for l in layers)
                if s != int(r[tot]):
                    problems.append(f"{where}: sum of {col} {s} != {tot} {r[tot]}")
            if any(int(l["name_id"]) >= len(names) for l in layers):
                problems.append(f"{where}: name_id beyond names.txt")
            key = (r["source"], r["model"], r["profile"], r["config"])
            if fallbacks[key] != int(r["cpu_fallbacks"]):
                problems.append(f"{where}: {fallbacks[key]} fallback rows, totals say "
                                f"{r['cpu_fallbacks']}")
    n_out = 0
    outputs = ref / "tflm" / "outputs.csv"
    if outputs.exists():
        import numpy as np
        with open(outputs, newline="") as f:
            for r in csv.DictReader(f):
                check_sha(r["source"], r["model_path"], r["model_sha256"])
                if r["status"] != "ok":
                    continue
                n_out += 1
                y = np.load(ref / "tflm" / r["file"])
                shape = "x".join(map(str, y.shape))
                if (y.dtype.name != r["dtype"] or shape != r["shape"]
                        or f"{zlib.crc32(y.tobytes()):08x}" != r["crc32"]):
                    problems.append(f"tflm {r['source']}/{r['model']} output {r['output']}: "
                                    "file differs from its row")
    n_single = 0
    single = ref / "tflm" / "single_op.csv"
    if single.exists():
        with open(single, newline="") as f:
            for r in csv.DictReader(f):
                check_sha(r["source"], f"models/{r['model']}.tflite", r["model_sha256"])
                if r["status"] != "ok":
                    continue
                n_single += 1
                if int(r["head_bytes"]) + int(r["tail_bytes"]) != int(r["total_bytes"]):
                    problems.append(f"tflm single_op {r['model']} operator {r['op_index']}: "
                                    "head + tail != total")
    for p in problems:
        print(p)
    print(f"vela rows: {n_ok} ok, {n_err} errors; tflm outputs: {n_out}, single operators: "
          f"{n_single}; "
          f"problems: {len(problems)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
