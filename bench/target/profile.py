#!/usr/bin/env python3
"""Instruction profile of one on-target benchmark case: builds bench/target for one variant with
only that case (-DBENCH_ONLY), runs it on QEMU one instruction per translation block with the
execution trace (-singlestep -d exec,nochain) and counts executed instructions per function and
per instruction address, then prints the functions and the annotated disassembly of the hottest
ones (objdump). Counts include every call the harness makes of the kernel (the first call and
the repetitions) and the harness itself (input generation, CRC), which are listed separately.

  bench/target/profile.py CASE [--variant mve|dsp|scalar] [--image bench|variants]
                               [--shared DIR] [--functions N] [--min-count N]
"""
import argparse
import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import run  # noqa: E402  (VARIANTS: board and -mcpu of each variant)


def build(variant, case, shared, build_dir, image):
    board, cpu, _ = run.VARIANTS[variant]
    bdir = os.path.join(build_dir, f"profile-{variant}")
    cfg = ["cmake", "-S", HERE, "-B", bdir, "-DCMAKE_BUILD_TYPE=Release",
           "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(ROOT, "cmake", "toolchains",
                                                    "arm-none-eabi-gcc.cmake"),
           "-DMICA_CPU=" + cpu, "-DBENCH_BOARD=" + board, "-DMICA_SHARED_DIR=" + shared,
           "-DBENCH_ONLY=" + case]
    if shutil.which("ccache"):
        cfg += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    subprocess.run(cfg, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", bdir, "-j", "2"], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(bdir, f"mica_target_{image}.elf"), board


def trace(elf, board):
    """Executed instruction addresses -> count."""
    counts = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "trace.log")
        out = subprocess.run(
            ["qemu-system-arm", "-M", board, "-display", "none", "-monitor", "none",
             "-serial", "none", "-chardev", "stdio,id=semihosting",
             "-semihosting-config", "enable=on,target=native,chardev=semihosting",
             "-icount", "shift=0,align=off,sleep=off", "-singlestep",
             "-d", "exec,nochain", "-D", log, "-kernel", elf],
            check=False, capture_output=True, text=True, timeout=3600)
        sys.stdout.write(out.stdout)
        pat = re.compile(r"Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")
        last = None
        with open(log, errors="replace") as f:
            for line in f:
                m = pat.match(line)
                if not m:
                    continue
                pc = int(m.group(1), 16)
                # A block logged twice in a row was entered without executing (icount budget
                # or a device read's re-translation): count it once (qemu-cortex-m.md, 2).
                if pc != last:
                    counts[pc] += 1
                last = pc
    return counts


def disassemble(elf):
    """address -> (function, instruction text), and the sorted function start addresses."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", "-C", "-m", "armv8.1-m.main",
                          "--no-show-raw-insn", elf], check=True, capture_output=True,
                         text=True).stdout
    insns, starts = {}, []
    func = "?"
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            func = m.group(2)
            starts.append((int(m.group(1), 16), func))
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            insns[int(m.group(1), 16)] = (func, m.group(2).strip())
    starts.sort()
    return insns, starts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case")
    ap.add_argument("--variant", default="mve", choices=sorted(run.VARIANTS))
    ap.add_argument("--image", default="bench", choices=("bench", "variants"),
                    help="bench: anchor and layer cases; variants: coverage.cc cases and "
                         "variants.cc ops")
    ap.add_argument("--shared", default=os.environ.get("MICA_SHARED_DIR",
                                                       os.path.join(ROOT, "..", "shared")))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "target"))
    ap.add_argument("--functions", type=int, default=3,
                    help="annotate the N hottest kernel functions")
    ap.add_argument("--min-count", type=int, default=1,
                    help="annotated listing: hide instructions run fewer times")
    a = ap.parse_args()

    elf, board = build(a.variant, a.case, os.path.abspath(a.shared), a.build_dir, a.image)
    counts = trace(elf, board)
    insns, starts = disassemble(elf)
    addrs = [s[0] for s in starts]
    per_func = collections.Counter()
    for pc, n in counts.items():
        if pc in insns:
            per_func[insns[pc][0]] += n
        else:
            i = bisect.bisect_right(addrs, pc) - 1
            per_func[starts[i][1] if i >= 0 else "?"] += n
    total = sum(counts.values())
    print(f"\n{a.case} ({a.variant}): {total} instructions traced in all\n")
    for f, n in per_func.most_common(25):
        print(f"{n:>10}  {f}")
    harness = ("Crc32", "Generate", "nna_", "Run(", "Put", "bench_", "main", "Reset_Handler",
               "memset", "memcpy")
    hot = [f for f, _ in per_func.most_common() if not any(h in f for h in harness)]
    for f in hot[:a.functions]:
        print(f"\n== {f}: {per_func[f]} ==")
        for pc in sorted(k for k, v in insns.items() if v[0] == f):
            n = counts.get(pc, 0)
            if n >= a.min_count:
                print(f"{n:>9}  {pc:8x}:  {insns[pc][1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
