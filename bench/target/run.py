#!/usr/bin/env python3
"""On-target kernel benchmark and variant check: builds bench/target for each Cortex-M variant
and runs its two images on QEMU with exact instruction counting. mica_target_bench compares
every anchor case with CMSIS-NN (<shared>/reference/cmsis-nn/kernels.csv: instructions per call,
ratio, output CRC); mica_target_variants checks every compiled body of the ops it covers against
the scalar body (random sweeps) and reports each body's instructions per call.

  bench/target/run.py [--shared DIR] [--build-dir DIR] [--variants mve,dsp,scalar]
                      [--check] [--record]

Fails (exit 1) on any sweep mismatch or variant CRC disagreement. --check also fails when a CRC
differs from CMSIS-NN's (or, for the layer shapes, from the recorded one) or an anchor ratio
exceeds its limit in limits.csv (the CI form, ctest qemu.kernels, label qemu).
--record rewrites limits.csv from this run (ratio + 2 %, rounded up) and the layer CRCs.
Exit 77 (ctest's skip code) when the shared tree, QEMU or the cross compiler is missing.
"""
import argparse
import csv
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
LIMITS = os.path.join(HERE, "limits.csv")
SKIP = 77

# variant -> (QEMU board, -mcpu, the CMSIS-NN row to compare with (board, cpu))
VARIANTS = {
    "mve": ("mps3-an547", "cortex-m55", ("mps3-an547", "cortex-m55")),
    "dsp": ("mps2-an386", "cortex-m4", ("mps2-an386", "cortex-m4")),
    "scalar": ("mps3-an547", "cortex-m55+nomve+nodsp", ("mps3-an547", "cortex-m55+nomve+nodsp")),
}
# Ops of the variant image whose list has no body for that build's ISA (softmax has scalar and
# MVE bodies only): their `variant` rows need not include the build's own body.
NO_OWN_BODY = {"dsp": ("softmax_",)}
# CMSIS-NN rows that are not one call of the kernel (MVE FC's prepare-time kernel sums).
IGNORED_KERNELS = {"arm_vector_sum_s8"}


def load_cmsis(shared):
    rows = {}
    with open(os.path.join(shared, "reference", "cmsis-nn", "kernels.csv"), newline="") as f:
        for r in csv.DictReader(f):
            if r["kernel"] in IGNORED_KERNELS:
                continue
            case = r["shape"].split(" ", 1)[0]
            rows[(case, r["board"], r["cpu"])] = (int(r["instructions"]), r["output_crc32"])
    return rows


def load_limits():
    limits, crcs = {}, {}
    if os.path.exists(LIMITS):
        with open(LIMITS, newline="") as f:
            for r in csv.DictReader(f):
                if r["max_ratio"]:
                    limits[(r["variant"], r["case"])] = float(r["max_ratio"])
                if r["crc32"]:
                    crcs[(r["variant"], r["case"])] = r["crc32"]
    return limits, crcs


def build_and_run(variant, shared, build_dir, jobs):
    board, cpu, _ = VARIANTS[variant]
    bdir = os.path.join(build_dir, variant)
    cfg = ["cmake", "-S", HERE, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "cmake", "toolchains",
                                                    "arm-none-eabi-gcc.cmake"),
           "-DMICA_CPU=" + cpu, "-DBENCH_BOARD=" + board, "-DMICA_SHARED_DIR=" + shared]
    if shutil.which("ccache"):
        cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    subprocess.run(cfg, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", bdir, "-j", str(jobs)], check=True,
                   stdout=subprocess.DEVNULL)
    results = []
    for image, marker in (("mica_target_bench", "bench: done"),
                          ("mica_target_variants", "variants: done")):
        results += run_image(variant, os.path.join(bdir, image + ".elf"), board, marker)
    return results


def run_image(variant, elf, board, marker):
    out = subprocess.run(
        ["qemu-system-arm", "-M", board, "-display", "none", "-monitor", "none", "-serial", "none",
         "-chardev", "stdio,id=semihosting",
         "-semihosting-config", "enable=on,target=native,chardev=semihosting",
         "-icount", "shift=0,align=off,sleep=off", "-kernel", elf],
        check=False, capture_output=True, text=True, timeout=900)
    results = []
    done = False
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 7 and f[0] in ("anchor", "layer", "variant"):
            results.append({"table": f[0], "case": f[1], "isa": f[2], "insn": int(f[3]),
                            "macs": int(f[4]), "crc": f[5], "status": f[6]})
        elif len(f) == 7 and f[0] == "sweep":
            results.append({"table": "sweep", "case": f[1], "isa": f[2], "cases": int(f[3]),
                            "mismatches": int(f[4]), "first": int(f[5]), "status": f[6]})
        elif line.strip() == marker:
            done = True
    if not done or out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise RuntimeError(f"{variant}: {os.path.basename(elf)} did not finish "
                           f"(exit {out.returncode})")
    return results


def report_coverage(variant, results, seen):
    """The variant image (variants.cc, coverage.cc): sweeps of every body against the scalar
    one, and each body's instructions per call on a fixed shape, its ratio to the scalar body of
    the same build; every body's CRC of a case (when it has one) must agree within and across
    builds."""
    failures = []
    sweeps = [r for r in results if r["table"] == "sweep"]
    if sweeps:
        print(f"\n| sweep ({variant} build) | body | cases | mismatches vs scalar |")
        print("|---|---|---:|---:|")
        for r in sweeps:
            print(f"| {r['case']} | {r['isa']} | {r['cases']} | {r['mismatches']} |")
            if r["mismatches"] != 0 or r["status"] != "ok" or r["cases"] == 0:
                failures.append(f"{variant} sweep {r['case']} {r['isa']}: {r['mismatches']} "
                                f"of {r['cases']} cases differ from the scalar body "
                                f"(first: case {r['first']})")
    rows = [r for r in results if r["table"] == "variant"]
    if rows:
        print(f"\n| case ({variant} build) | body | instructions | work | per unit | "
              f"vs scalar body | CRC |")
        print("|---|---|---:|---:|---:|---:|---|")
        scalar = {r["case"]: r["insn"] for r in rows if r["isa"] == "scalar"}
        for r in rows:
            base = scalar.get(r["case"])
            ratio = f"{r['insn'] / base:.3f}" if base else ""
            per = f"{r['insn'] / r['macs']:.3f}" if r["macs"] else ""
            if r["crc"] == "-":  # inputs differ per body: no CRC to compare
                other = (None, "-")
            else:
                other = seen.setdefault(r["case"], (f"{variant}/{r['isa']}", r["crc"]))
            ok = r["status"] == "ok" and other[1] == r["crc"]
            shown = "" if r["crc"] == "-" and ok else ("match" if ok else "MISMATCH " + r["crc"])
            print(f"| {r['case']} | {r['isa']} | {r['insn']} | {r['macs']} | {per} | {ratio} | "
                  f"{shown} |")
            if not ok:
                failures.append(f"{variant} {r['case']} {r['isa']}: CRC {r['crc']} "
                                f"({r['status']}), {other[1]} on {other[0]}")
        for case in dict.fromkeys(r["case"] for r in rows):
            if case.startswith(NO_OWN_BODY.get(variant, ())):
                continue
            if not any(r["case"] == case and r["isa"] == variant for r in rows):
                failures.append(f"{variant} {case}: no {variant} body in the build")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.environ.get("MICA_SHARED_DIR",
                                                       os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "target"))
    ap.add_argument("--variants", default="mve,dsp,scalar")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--record", action="store_true")
    a = ap.parse_args()

    shared = os.path.abspath(a.shared)
    if not os.path.exists(os.path.join(shared, "reference", "cmsis-nn", "kernels.csv")):
        print(f"SKIP: no CMSIS-NN reference under {shared}")
        return SKIP
    for tool in ("qemu-system-arm", "arm-none-eabi-g++", "cmake"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found")
            return SKIP

    cmsis = load_cmsis(shared)
    limits, layer_crcs = load_limits()
    failures = []
    recorded = []
    layer_seen = {}
    variant_seen = {}
    for variant in a.variants.split(","):
        if variant not in VARIANTS:
            ap.error(f"unknown variant {variant}")
        board, cpu, ref = VARIANTS[variant]
        results = build_and_run(variant, shared, a.build_dir, a.jobs)
        print(f"\n## {variant}: {board}, -mcpu={cpu} (instructions per call, QEMU -icount)\n")
        print(f"| case | mica | CMSIS-NN | ratio | CRC | limit |")
        print(f"|---|---:|---:|---:|---|---:|")
        logs = []
        for r in results:
            if r["table"] != "anchor":
                continue
            key = (r["case"],) + ref
            if r["isa"] != variant:
                failures.append(f"{variant}: the build selected the {r['isa']} variant")
            if key not in cmsis:
                failures.append(f"{variant} {r['case']}: no CMSIS-NN row")
                continue
            c_insn, c_crc = cmsis[key]
            ratio = r["insn"] / c_insn
            logs.append(math.log(ratio))
            crc_ok = r["crc"] == c_crc and r["status"] == "ok"
            limit = limits.get((variant, r["case"]))
            print(f"| {r['case']} | {r['insn']} | {c_insn} | {ratio:.3f} | "
                  f"{'match' if crc_ok else 'MISMATCH ' + r['crc']} | "
                  f"{'' if limit is None else f'{limit:.3f}'} |")
            if not crc_ok:
                failures.append(f"{variant} {r['case']}: CRC {r['crc']} ({r['status']}), "
                                f"CMSIS-NN {c_crc}")
            if a.check and limit is not None and ratio > limit:
                failures.append(f"{variant} {r['case']}: ratio {ratio:.3f} above its limit "
                                f"{limit:.3f}")
            if a.check and limit is None:
                failures.append(f"{variant} {r['case']}: no limit recorded in limits.csv")
            recorded.append((variant, r["case"], math.ceil(ratio * 1.02 * 1000) / 1000, ""))
        if logs:
            print(f"\ngeometric mean of the ratios: {math.exp(sum(logs) / len(logs)):.3f}")
        print(f"\n| layer | mica | MACs | instructions/MAC | CRC |")
        print(f"|---|---:|---:|---:|---|")
        for r in results:
            if r["table"] != "layer":
                continue
            want = layer_crcs.get((variant, r["case"]))
            ok = r["status"] == "ok" and (want is None or want == r["crc"])
            ipm = f"{r['insn'] / r['macs']:.3f}" if r["macs"] else ""
            print(f"| {r['case']} | {r['insn']} | {r['macs']} | {ipm} | "
                  f"{'match' if ok and want else ('new ' + r['crc'] if ok else 'MISMATCH ' + r['crc'])} |")
            if not ok:
                failures.append(f"{variant} {r['case']}: CRC {r['crc']}, recorded {want}")
            other = layer_seen.setdefault(r["case"], (variant, r["crc"]))
            if other[1] != r["crc"]:
                failures.append(f"{r['case']}: CRC {r['crc']} on {variant}, {other[1]} on {other[0]}")
            if a.check and want is None:
                failures.append(f"{variant} {r['case']}: no CRC recorded in limits.csv")
            recorded.append((variant, r["case"], "", r["crc"]))

        failures += report_coverage(variant, results, variant_seen)

    if a.record:
        with open(LIMITS, "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["variant", "case", "max_ratio", "crc32"])
            for v, c, m, crc in recorded:
                w.writerow([v, c, f"{m:.3f}" if m != "" else "", crc])
        print(f"\nrecorded {LIMITS}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
