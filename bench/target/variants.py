#!/usr/bin/env python3
"""On-target variant check: builds bench/target's variants.cc for the MVE (Cortex-M55) and DSP
(Cortex-M4) boards, runs it on QEMU and reports, per op, whether every compiled body matches the
scalar body byte for byte over the seeded random shapes, and the instructions per call of each
body on the representative shapes (with the ratio to the scalar body on the same build).

  bench/target/variants.py [--build-dir DIR] [--variants mve,dsp]

Exit 1 on any mismatch, a body that did not run, or a firmware that did not finish; 77 (ctest's
skip code) when QEMU, the cross compiler or the shared reference tree (bench/target's project
needs its anchor header to configure) is missing.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIP = 77
VARIANTS = {"mve": ("mps3-an547", "cortex-m55"), "dsp": ("mps2-an386", "cortex-m4")}


def build_and_run(variant, shared, build_dir, jobs):
    board, cpu = VARIANTS[variant]
    bdir = os.path.join(build_dir, variant)
    cfg = ["cmake", "-S", HERE, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "cmake", "toolchains",
                                                    "arm-none-eabi-gcc.cmake"),
           "-DMICA_CPU=" + cpu, "-DBENCH_BOARD=" + board, "-DMICA_SHARED_DIR=" + shared]
    if shutil.which("ccache"):
        cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    subprocess.run(cfg, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", bdir, "-j", str(jobs), "--target", "mica_target_variants"],
                   check=True, stdout=subprocess.DEVNULL)
    elf = os.path.join(bdir, "mica_target_variants.elf")
    out = subprocess.run(
        ["qemu-system-arm", "-M", board, "-display", "none", "-monitor", "none", "-serial", "none",
         "-chardev", "stdio,id=semihosting",
         "-semihosting-config", "enable=on,target=native,chardev=semihosting",
         "-icount", "shift=0,align=off,sleep=off", "-kernel", elf],
        check=False, capture_output=True, text=True, timeout=900)
    if "variants: done" not in out.stdout or out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise RuntimeError(f"{variant}: firmware did not finish (exit {out.returncode})")
    return out.stdout.splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", default=os.environ.get("MICA_SHARED_DIR",
                                                       os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "target"))
    ap.add_argument("--variants", default="mve,dsp")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    shared = os.path.abspath(a.shared)
    # bench/target's project (shared with run.py) needs the anchor header to configure.
    if not os.path.exists(os.path.join(shared, "reference", "cmsis-nn", "nn_anchor_cases.h")):
        print(f"SKIP: no CMSIS-NN reference under {shared}")
        return SKIP
    for tool in ("qemu-system-arm", "arm-none-eabi-g++", "cmake"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} not found")
            return SKIP
    failures = []
    for variant in a.variants.split(","):
        if variant not in VARIANTS:
            ap.error(f"unknown variant {variant}")
        board, cpu = VARIANTS[variant]
        lines = build_and_run(variant, shared, os.path.abspath(a.build_dir), a.jobs)
        print(f"\n## {variant} build: {board}, -mcpu={cpu}\n")
        print("| op | body | random cases | mismatches |")
        print("|---|---|---:|---:|")
        checked = 0
        costs = {}
        for line in lines:
            f = line.split()
            if len(f) == 6 and f[0] == "check":
                _, op, body, cases, bad, first = f
                checked += 1
                print(f"| {op} | {body} | {cases} | {bad} |")
                if int(bad) != 0 or int(cases) == 0:
                    failures.append(f"{variant} {op} {body}: {bad} of {cases} cases differ from "
                                    f"scalar (first: case {first})")
            elif len(f) == 6 and f[0] == "cost":
                _, op, shape, body, insn, status = f
                costs.setdefault((op, shape), {})[body] = int(insn)
                if status != "ok":
                    failures.append(f"{variant} {op} {shape} {body}: status {status}")
        if checked == 0:
            failures.append(f"{variant}: no body checked")
        print("\n| op | shape | body | instructions per call | vs scalar |")
        print("|---|---|---|---:|---:|")
        for (op, shape), bodies in costs.items():
            scalar = bodies.get("scalar")
            for body, insn in bodies.items():
                ratio = f"{insn / scalar:.3f}" if scalar else ""
                print(f"| {op} | {shape} | {body} | {insn} | {ratio} |")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
