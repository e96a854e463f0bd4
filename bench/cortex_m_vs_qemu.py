#!/usr/bin/env python3
"""mica's Cortex-M estimate (--runtime mica) against mica's own runs on QEMU.

Runs the calibration shapes (single-operator int8 models over a grid of shapes, built by
test/estimate/cortex_m_shapes.h), every model of the corpus (test/corpus/models) and the ten
int8/int16 models of the shared folder on the QEMU runner firmware of each build, through

    mica check MODEL -t PROFILE --performance --backend qemu --runtime mica

(m55-mve: cortex-m55 on mps3-an547; m4-dsp: cortex-m4 on mps2-an386; m55-scalar: a scalar
profile, cortex-m3, whose kernels run on the mps3-an547 scalar build), and records the exact
instruction counts per operator and per inference (QEMU -icount) as data:

    test/corpus/reference/qemu/mica_instructions.csv

with the model's sha256 and mica's git revision. The cost table's coefficients are solved from
the calibration shapes; the corpus and shared models validate them. Models the device runtime refuses are recorded
with the reason. Then it prints the estimate against the recording (median, 90th percentile and
worst |error| per build, per operator type, and the worst cases) through the report case of
mica_estimate_test, which the required suite checks without QEMU.

    bench/cortex_m_vs_qemu.py [--build-dir build/fast] [--builds m55-mve,m4-dsp,m55-scalar]
                              [--models NAME,...] [--force] [--report-only] [--timeout S]
                              [--write-table]

The report ends with the coefficient table of mica's kernel families solved again from the
recording (non-negative least squares per family and variant on the measured operators);
--write-table writes it into libestimate/src/cortex_m/cost_table.cc (between the
MICA_COST_TABLE markers): rebuild and re-run the report to see the new figures.

The recording is resumable: a (model, build) pair already recorded for the same model sha256
and kernels (kernels_digest: FNV-1a over libkernels/core, libkernels/device and firmware/) is
not run again unless --force. The required test warns when the kernels in the tree differ from
the recording's: re-run this script (and --write-table) after kernel work. Python 3 standard library only.
"""
import argparse
import csv
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
BUILDS = {  # build -> (profile, board)
    "m55-mve": ("cortex-m55", "mps3-an547"),
    "m4-dsp": ("cortex-m4", "mps2-an386"),
    "m55-scalar": ("cortex-m3", "mps3-an547"),
}
COLUMNS = ["model", "model_sha256", "build", "board", "status", "op_index", "op_kind",
           "instructions", "mica_revision", "kernels_digest"]
# What the measured instructions depend on: the kernels, the device runtime, the firmware.
KERNEL_DIRS = ["libkernels/core", "libkernels/device", "firmware"]
ROW = re.compile(r"^\s+(\d+)\s+(\S+)\s+(\d+)\s+\S+\s+\S+\s*$")
TOTAL = re.compile(r"^\s+total \(one inference\)\s+(\d+)\s")


def shared_dir():
    env = os.environ.get("MICA_SHARED_DIR")
    if env:
        return Path(env)
    for cand in (HERE.parent / "shared", Path("/work/shared")):
        if cand.is_dir():
            return cand
    return None


def model_list(only, shapes_dir):
    # The calibration shapes first (the table is solved from them), then the validation models.
    models = sorted(shapes_dir.glob("shape_*.tflite")) if shapes_dir else []
    models += sorted((HERE / "test/corpus/models").glob("*.tflite"))
    shared = shared_dir()
    if shared is not None:
        models += sorted((shared / "models/mlperf-tiny").glob("*_int8.tflite"))
        models += sorted((shared / "models/more").glob("*.tflite"))
    if only:
        wanted = set(only.split(","))
        models = [m for m in models if m.stem in wanted or m.name in wanted]
    return models


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def revision():
    try:
        rev = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE), "status", "--porcelain", "--",
                                "libkernels", "firmware"],
                               capture_output=True, text=True).stdout.strip()
        return rev + ("+dirty-kernels" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def kernels_digest():
    """FNV-1a 64 over the sorted relative paths and contents of KERNEL_DIRS, documentation
    (*.md) left out (the required test computes the same digest to tell a recording made with
    other kernels)."""
    h = 0xcbf29ce484222325
    files = []
    for d in KERNEL_DIRS:
        files += [p for p in (HERE / d).rglob("*") if p.is_file() and p.suffix != ".md"]
    for rel in sorted(p.relative_to(HERE).as_posix() for p in files):
        for byte in rel.encode() + b"\0" + (HERE / rel).read_bytes() + b"\0":
            h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def measure(mica, model, build, timeout):
    """Returns (status, [(op_index, op_kind, instructions)], total)."""
    profile, _ = BUILDS[build]
    cmd = [mica, "check", str(model), "-t", profile, "--performance", "--backend", "qemu",
           "--runtime", "mica"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"timeout after {timeout} s", [], None
    ops, total = [], None
    in_table = False
    for line in p.stdout.splitlines():
        if line.startswith("Measured on QEMU"):
            in_table = True
            continue
        if not in_table:
            continue
        m = TOTAL.match(line)
        if m:
            total = int(m.group(1))
            continue
        m = ROW.match(line)
        if m:
            ops.append((int(m.group(1)), m.group(2), int(m.group(3))))
    if p.returncode != 0 or total is None:
        err = [l for l in p.stderr.splitlines() if l.startswith("mica:") and "running on" not in l]
        reason = err[-1] if err else f"exit code {p.returncode}, no measurement"
        reason = reason.replace("mica: check: qemu: ", "").replace(str(model) + ": ", "")
        reason = reason.replace(",", ";")
        return "refused: " + reason[:200], [], None
    return "ok", ops, total


def read_rows(path):
    if not path.exists():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        key = lambda r: (r["model"], r["build"],
                         -1 if r["op_index"] == "total" else int(r["op_index"] or -2))
        for r in sorted(rows, key=key):
            w.writerow(r)
    tmp.replace(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-dir", default=str(HERE / "build/fast"))
    ap.add_argument("--builds", default=",".join(BUILDS))
    ap.add_argument("--models", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--record", default=str(HERE / "test/corpus/reference/qemu/mica_instructions.csv"))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per QEMU run")
    ap.add_argument("--force", action="store_true", help="re-run pairs already recorded")
    ap.add_argument("--report-only", action="store_true", help="print the report, run nothing")
    ap.add_argument("--write-table", action="store_true",
                    help="write the re-solved coefficients into cost_table.cc")
    args = ap.parse_args()

    build_dir = Path(args.build_dir)
    record = Path(args.record)
    if not args.report_only:
        mica = build_dir / "bin/mica"
        if not mica.exists():
            sys.exit(f"cortex_m_vs_qemu: {mica} not built (cmake --build {build_dir} --target mica)")
        os.environ.setdefault("MICA_FIRMWARE_DIR", str(build_dir / "firmware"))
        rev = revision()
        digest_k = kernels_digest()
        rows = read_rows(record)
        test_bin = build_dir / "test/mica_estimate_test"
        if not test_bin.exists():
            sys.exit(f"cortex_m_vs_qemu: {test_bin} not built (--target mica_estimate_test)")
        shapes_dir = build_dir / "cortex_m_shapes"
        # The calibration shapes: single-operator int8 models built by the test binary.
        subprocess.run([str(test_bin), "[.cortex-m-shapes-write]"], check=True,
                       capture_output=True, env=dict(os.environ, MICA_SHAPES_DIR=str(shapes_dir)))
        for build in args.builds.split(","):
            if build not in BUILDS:
                sys.exit(f"cortex_m_vs_qemu: unknown build '{build}' (valid: {', '.join(BUILDS)})")
            fw = Path(os.environ["MICA_FIRMWARE_DIR"]) / build / "firmware/mica_runner.elf"
            if not fw.exists():
                sys.exit(f"cortex_m_vs_qemu: {fw} missing (cmake --build {build_dir} "
                         f"--target mica_firmware)")
            for model in model_list(args.models, shapes_dir):
                digest = sha256(model)
                done = [r for r in rows if r["model"] == model.stem and r["build"] == build]
                if done and not args.force and all(
                        r["model_sha256"] == digest and r.get("kernels_digest") == digest_k
                        for r in done):
                    continue
                rows = [r for r in rows if not (r["model"] == model.stem and r["build"] == build)]
                status, ops, total = measure(str(mica), model, build, args.timeout)
                print(f"{build:10s} {model.stem:40s} {status:10.60s} "
                      f"{total if total is not None else '-'}", flush=True)
                base = {"model": model.stem, "model_sha256": digest, "build": build,
                        "board": BUILDS[build][1], "status": status, "mica_revision": rev,
                        "kernels_digest": digest_k}
                if status != "ok":
                    rows.append(dict(base, op_index="", op_kind="", instructions=""))
                else:
                    for idx, kind, n in ops:
                        rows.append(dict(base, op_index=str(idx), op_kind=kind, instructions=str(n)))
                    rows.append(dict(base, op_index="total", op_kind="", instructions=str(total)))
                write_rows(record, rows)

    test_bin = build_dir / "test/mica_estimate_test"
    if not test_bin.exists():
        sys.exit(f"cortex_m_vs_qemu: {test_bin} not built (--target mica_estimate_test)")
    env = dict(os.environ, MICA_QEMU_RECORD=str(record))
    env.setdefault("MICA_SOURCE_DIR", str(HERE))
    if shared_dir() is not None:
        env.setdefault("MICA_SHARED_DIR", str(shared_dir()))
    p = subprocess.run([str(test_bin), "[.cortex-m-qemu-report]"],
                       env=env, capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if args.write_table and p.returncode == 0:
        begin, end = "// MICA_COST_TABLE_BEGIN", "// MICA_COST_TABLE_END"
        out = p.stdout
        table = out[out.index(begin):out.index(end)]
        table = table[table.index("\n") + 1:table.rindex("\n") + 1]
        src = HERE / "libestimate/src/cortex_m/cost_table.cc"
        text = src.read_text()
        a = text.index(begin)
        a = text.index("\n", a) + 1
        b = text.index(end)
        b = text.rindex("\n", 0, b) + 1
        src.write_text(text[:a] + table + text[b:])
        print(f"cortex_m_vs_qemu: wrote the table into {src}; rebuild to use it")
    return p.returncode


if __name__ == "__main__":
    sys.exit(main())
