#!/usr/bin/env python3
"""Record Vela's answers for a set of .tflite models as committed reference data.

For every model x built-in mica Ethos-U profile x configuration this runs Vela
(`pip install ethos-u-vela`) once and records:
  - one row in <out>/vela/totals.csv (cycles, memory used, weights, CPU fallbacks, ...),
  - Vela's per-layer table, trimmed, in <out>/vela/layers/<source>/<model>/<profile>__<config>.csv
    (layer names are stored once per model in names.txt; the CSV refers to them by line number),
  - every CPU fallback with Vela's reason text in <out>/vela/cpu_fallbacks.csv.
Configurations:
  vela  the system config and memory mode of mica's profile (libestimate/targets/*.textproto),
        Vela's shipped vela.ini, everything else Vela's command-line default;
  mlia  MLIA's meaning of the same profile name (mlia-ethos-u's target profiles and vela.ini,
        and the options MLIA's Vela wrapper passes).
The run is resumable: rows already in totals.csv (same model sha256, profile, config and Vela
version) are skipped. See test/corpus/reference/README.md for the columns and how to re-record.
"""

import argparse
import concurrent.futures
import csv
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

PROFILES = [
    "ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256",
    "ethos-u65-256", "ethos-u65-512",
    "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048",
]

# MLIA's target profiles (mlia-ethos-u 0.1.0 / 0.2.0, resources/target_profiles/*.toml).
# MLIA ships no toml for ethos-u55-32/64 but accepts them; they are given the U55 profile's
# settings (its description: "Shared SRAM, High End Embedded configuration").
MLIA_PROFILES = {
    "ethos-u55-32": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u55-64": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u55-128": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u55-256": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u65-256": ("Ethos_U65_High_End", "Dedicated_Sram"),
    "ethos-u65-512": ("Ethos_U65_High_End", "Dedicated_Sram"),
    "ethos-u85-128": ("Ethos_U85_SYS_DRAM_Low", "Dedicated_Sram"),
    "ethos-u85-256": ("Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram"),
    "ethos-u85-512": ("Ethos_U85_SYS_DRAM_Mid", "Dedicated_Sram"),
    "ethos-u85-1024": ("Ethos_U85_SYS_DRAM_High", "Dedicated_Sram"),
    "ethos-u85-2048": ("Ethos_U85_SYS_DRAM_High", "Dedicated_Sram"),
}
# The options MLIA's VelaCompiler passes besides the profile (mlia/backend/vela/compiler.py);
# --enable-debug-db is left out: it only writes a debug database.
MLIA_OPTIONS = [
    "--tensor-allocator", "HillClimb", "--cpu-tensor-alignment", "16",
    "--max-block-dependency", "3", "--optimise", "Performance",
    "--output-format", "tflite", "--debug-force-regor",
]
CONFIGS = ["vela", "mlia"]

TOTALS_COLUMNS = [
    "source", "model", "model_path", "model_sha256", "profile", "config", "vela_version",
    "vela_ini", "vela_ini_sha256", "system_config", "memory_mode", "status", "error",
    "total_cycles", "npu_cycles", "sram_access_cycles", "dram_access_cycles",
    "on_chip_flash_access_cycles", "off_chip_flash_access_cycles",
    "sram_used_bytes", "dram_used_bytes", "on_chip_flash_used_bytes", "off_chip_flash_used_bytes",
    "weights_original_bytes", "weights_encoded_bytes", "macs",
    "cpu_operators", "npu_operators", "cpu_fallbacks", "sram_target_exceeded",
    "inference_time_s", "core_clock_hz", "arena_cache_size_bytes",
    "weights_storage_area", "feature_map_storage_area",
    "sram_total_bytes", "dram_total_bytes", "on_chip_flash_total_bytes",
    "off_chip_flash_total_bytes", "per_layer_rows", "wall_seconds",
]
LAYER_COLUMNS = [
    "original_op", "nng_op", "target", "staging_bytes", "op_cycles", "npu_cycles",
    "sram_ac", "dram_ac", "onflash_ac", "offflash_ac", "macs", "name_id",
]
# Vela per-layer header -> our column (the percentage columns are derivable and dropped).
VELA_LAYER_FIELDS = {
    "Original Operator": "original_op", "NNG Operator": "nng_op", "Target": "target",
    "Staging Usage": "staging_bytes", "Op Cycles": "op_cycles", "NPU": "npu_cycles",
    "SRAM AC": "sram_ac", "DRAM AC": "dram_ac", "OnFlash AC": "onflash_ac",
    "OffFlash AC": "offflash_ac", "MAC Count": "macs",
}
FALLBACK_COLUMNS = ["source", "model", "profile", "config", "operator", "ofm", "reason"]


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_mica_profile(targets_dir, profile):
    text = (Path(targets_dir) / f"{profile}.textproto").read_text()
    sc = re.search(r'system_config\s*\{\s*name:\s*"([^"]+)"', text)
    mm = re.search(r'memory_mode\s*\{\s*name:\s*"([^"]+)"', text)
    if not sc or not mm:
        raise SystemExit(f"error: {profile}.textproto names no system_config/memory_mode")
    return sc.group(1), mm.group(1)


def kib_to_bytes(value):
    return str(int(round(float(value) * 1024)))


def num(value):
    """Vela writes some integers as floats ('1234.0'); keep integers integral."""
    f = float(value)
    return str(int(f)) if f.is_integer() else repr(f)


def parse_fallbacks(log):
    """The 'Warning (supported operators)' blocks of Vela's output: (operator, ofm, reason)."""
    out = []
    lines = log.splitlines()
    i = 0
    head = re.compile(r"^Warning \(supported operators\) operator: (\S+), ofm: '(.*)'$")
    while i < len(lines):
        m = head.match(lines[i])
        if not m:
            i += 1
            continue
        i += 1
        reason = []
        while i < len(lines) and lines[i].strip() and not head.match(lines[i]):
            text = lines[i].strip()
            if text.startswith("Reason: "):
                text = text[len("Reason: "):]
            reason.append(text)
            i += 1
        out.append((m.group(1), m.group(2), " | ".join(reason)))
    return out


def run_one(job):
    """Run Vela once; returns (job, totals row, per-layer rows with raw names, fallbacks)."""
    model_path, acc, sc, mm, ini, extra, timeout = (
        job["abs_path"], job["profile"], job["system_config"], job["memory_mode"],
        job["ini"], job["extra"], job["timeout"])
    row = {"status": "ok", "error": ""}
    layers, fallbacks = [], []
    tmp = tempfile.mkdtemp(prefix="record_vela_")
    try:
        cmd = [job["vela"], str(model_path), "--config", str(ini), "--accelerator-config", acc,
               "--system-config", sc, "--memory-mode", mm, "--verbose-performance",
               "--verbose-weights", "--show-cpu-operations", "--output-dir", tmp] + extra
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  timeout=timeout, text=True, errors="replace")
            log, rc = proc.stdout, proc.returncode
        except subprocess.TimeoutExpired:
            log, rc = "", None
        row["wall_seconds"] = f"{time.monotonic() - t0:.2f}"
        summaries = list(Path(tmp).glob("*_summary_*.csv"))
        if rc is None:
            row.update(status="error", error=f"timeout after {timeout} s")
        elif rc != 0 or not summaries:
            lines = [l.strip() for l in log.splitlines() if l.strip()]
            err = [l for l in lines if re.search(r"error|exception|unsupported|fail", l, re.I)]
            msg = (err[-1] if err else (lines[-1] if lines else "no output"))
            row.update(status="error", error=f"exit {rc}: {msg}"[:400])
        else:
            with open(summaries[0], newline="") as f:
                s = next(csv.DictReader(f))
            row.update({
                "system_config": s["system_config"], "memory_mode": s["memory_mode"],
                "total_cycles": num(s["cycles_total"]), "npu_cycles": num(s["cycles_npu"]),
                "sram_access_cycles": num(s["cycles_sram_access"]),
                "dram_access_cycles": num(s["cycles_dram_access"]),
                "on_chip_flash_access_cycles": num(s["cycles_on_chip_flash_access"]),
                "off_chip_flash_access_cycles": num(s["cycles_off_chip_flash_access"]),
                "sram_used_bytes": kib_to_bytes(s["sram_memory_used"]),
                "dram_used_bytes": kib_to_bytes(s["dram_memory_used"]),
                "on_chip_flash_used_bytes": kib_to_bytes(s["on_chip_flash_memory_used"]),
                "off_chip_flash_used_bytes": kib_to_bytes(s["off_chip_flash_memory_used"]),
                "weights_original_bytes": num(s["total_original_weights"]),
                "weights_encoded_bytes": num(s["total_npu_encoded_weights"]),
                "macs": num(s["nn_macs"]),
                "inference_time_s": s["inference_time"],
                "core_clock_hz": num(s["core_clock"]),
                "arena_cache_size_bytes": num(s["arena_cache_size"]),
                "weights_storage_area": s["weights_storage_area"],
                "feature_map_storage_area": s["feature_map_storage_area"],
                "sram_total_bytes": num(s["sram_total_bytes"]),
                "dram_total_bytes": num(s["dram_total_bytes"]),
                "on_chip_flash_total_bytes": num(s["on_chip_flash_total_bytes"]),
                "off_chip_flash_total_bytes": num(s["off_chip_flash_total_bytes"]),
            })
            m = re.search(r"^CPU operators = (\d+)", log, re.M)
            row["cpu_operators"] = m.group(1) if m else ""
            m = re.search(r"^NPU operators = (\d+)", log, re.M)
            row["npu_operators"] = m.group(1) if m else ""
            row["sram_target_exceeded"] = (
                "1" if "SRAM target for arena memory area exceeded" in log else "0")
            for p in Path(tmp).glob("*_per-layer.csv"):
                with open(p, newline="") as f:
                    reader = csv.reader(f)
                    header = None
                    for rec in reader:
                        if not rec:
                            continue
                        if rec[0] == "Original Operator":
                            header = rec
                            continue
                        if header is None or len(rec) != len(header):
                            continue
                        d = dict(zip(header, rec))
                        out = {VELA_LAYER_FIELDS[k]: d[k] for k in VELA_LAYER_FIELDS}
                        for k in ("staging_bytes", "op_cycles", "npu_cycles", "sram_ac",
                                  "dram_ac", "onflash_ac", "offflash_ac", "macs"):
                            out[k] = num(out[k])
                        out["name"] = d["Name"].replace("\n", " ").strip()
                        layers.append(out)
            row["per_layer_rows"] = str(len(layers))
            fallbacks = parse_fallbacks(log)
            row["cpu_fallbacks"] = str(len(fallbacks))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return job, row, layers, fallbacks


class Recorder:
    def __init__(self, out_dir):
        self.dir = Path(out_dir) / "vela"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.totals = self.dir / "totals.csv"
        self.fallbacks = self.dir / "cpu_fallbacks.csv"
        self.lock = threading.Lock()
        self.done = set()
        for path, cols in ((self.totals, TOTALS_COLUMNS), (self.fallbacks, FALLBACK_COLUMNS)):
            if not path.exists():
                with open(path, "w", newline="") as f:
                    csv.writer(f, lineterminator="\n").writerow(cols)
        with open(self.totals, newline="") as f:
            for r in csv.DictReader(f):
                self.done.add(self.key(r))

    @staticmethod
    def key(r):
        return (r["source"], r["model"], r["model_sha256"], r["profile"], r["config"],
                r["vela_version"])

    def names(self, source, model, new_names):
        """Stable ids for layer names: line numbers (from 0) of layers/<source>/<model>/names.txt."""
        d = self.dir / "layers" / source / model
        d.mkdir(parents=True, exist_ok=True)
        p = d / "names.txt"
        names = p.read_text().split("\n")[:-1] if p.exists() else []
        index = {n: i for i, n in enumerate(names)}
        added = False
        for n in new_names:
            if n not in index:
                index[n] = len(names)
                names.append(n)
                added = True
        if added:
            p.write_text("".join(n + "\n" for n in names))
        return index, d

    def forget_other_versions(self, source, model, sha):
        """A model recorded with another sha256 (regenerated): drop its old records first."""
        with open(self.totals, newline="") as f:
            old = any(r["source"] == source and r["model"] == model and r["model_sha256"] != sha
                      for r in csv.DictReader(f))
        if not old:
            return
        self._drop(lambda r: r["source"] == source and r["model"] == model,
                   {(source, model)})
        shutil.rmtree(self.dir / "layers" / source / model, ignore_errors=True)
        print(f"{model}: changed since recorded; its old records are dropped", flush=True)

    def _drop(self, totals_pred, fallback_models):
        """Delete totals rows matching totals_pred and fallback rows of fallback_models."""
        with open(self.totals, newline="") as f:
            rows = list(csv.DictReader(f))
        rows = [r for r in rows if not totals_pred(r)]
        with open(self.totals, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=TOTALS_COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        if fallback_models:
            with open(self.fallbacks, newline="") as f:
                fb = [r for r in csv.DictReader(f)
                      if (r["source"], r["model"]) not in fallback_models]
            with open(self.fallbacks, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=FALLBACK_COLUMNS, lineterminator="\n")
                w.writeheader()
                w.writerows(fb)
        self.done = {self.key(r) for r in rows}

    def store(self, job, row, layers, fallbacks):
        with self.lock:
            self.forget_other_versions(job["source"], job["model"], job["model_sha256"])
            full = {c: "" for c in TOTALS_COLUMNS}
            full.update({k: job[k] for k in ("source", "model", "model_path", "model_sha256",
                                             "profile", "config", "vela_version", "vela_ini",
                                             "vela_ini_sha256", "system_config",
                                             "memory_mode")})
            full.update(row)
            if layers:
                index, d = self.names(job["source"], job["model"], [l["name"] for l in layers])
                tmp = d / f".{job['profile']}__{job['config']}.csv.tmp"
                with open(tmp, "w", newline="") as f:
                    w = csv.writer(f, lineterminator="\n")
                    w.writerow(LAYER_COLUMNS)
                    for l in layers:
                        l["name_id"] = index[l["name"]]
                        w.writerow([l[c] for c in LAYER_COLUMNS])
                os.replace(tmp, d / f"{job['profile']}__{job['config']}.csv")
            with open(self.fallbacks, "a", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                for op, ofm, reason in fallbacks:
                    w.writerow([job["source"], job["model"], job["profile"], job["config"],
                                op, ofm, reason])
            with open(self.totals, "a", newline="") as f:
                csv.writer(f, lineterminator="\n").writerow([full[c] for c in TOTALS_COLUMNS])
            self.done.add(self.key(full))

    def prune(self, source, models):
        """Delete the records of `source` models whose name is not in `models`."""
        with open(self.totals, newline="") as f:
            stale = {r["model"] for r in csv.DictReader(f)
                     if r["source"] == source and r["model"] not in models}
        layers = self.dir / "layers" / source
        if layers.exists():
            stale |= {d.name for d in layers.iterdir() if d.name not in models}
        self._drop(lambda r: r["source"] == source and r["model"] in stale,
                   {(source, m) for m in stale})
        for m in stale:
            shutil.rmtree(layers / m, ignore_errors=True)
        if stale:
            print(f"pruned the records of {len(stale)} models: {', '.join(sorted(stale))}")

    def sort_files(self):
        """Sort the row files so that re-recording gives stable diffs."""
        order = {p: i for i, p in enumerate(PROFILES)}
        corder = {c: i for i, c in enumerate(CONFIGS)}
        for path in (self.totals, self.fallbacks):
            with open(path, newline="") as f:
                rows = list(csv.reader(f))
            head, body = rows[0], rows[1:]
            src, mod, pro, con = (head.index(c) for c in ("source", "model", "profile", "config"))
            body.sort(key=lambda r: (r[src], r[mod], corder.get(r[con], 9),
                                     order.get(r[pro], 99)))
            if path == self.totals:
                # keep the newest row per key (a re-recorded run replaces the old one)
                seen, uniq = set(), []
                for r in reversed(body):
                    k = tuple(r[head.index(c)] for c in ("source", "model", "model_sha256",
                                                         "profile", "config", "vela_version"))
                    if k not in seen:
                        seen.add(k)
                        uniq.append(r)
                body = sorted(uniq, key=lambda r: (r[src], r[mod], corder.get(r[con], 9),
                                                   order.get(r[pro], 99)))
            with open(path, "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(head)
                w.writerows(body)


def find_models(root, pattern):
    root = Path(root)
    return sorted(p for p in root.glob(pattern) if p.is_file())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="reference folder (test/corpus/reference)")
    ap.add_argument("--source", required=True, choices=["corpus", "shared", "probes"],
                    help="which model set: corpus (test/corpus), shared (../shared) or "
                         "probes (test/corpus/probes)")
    ap.add_argument("--root", required=True,
                    help="folder the model paths are relative to (test/corpus or the shared dir)")
    ap.add_argument("--models", nargs="+", required=True,
                    help="glob patterns relative to --root, e.g. 'models/*.tflite'")
    ap.add_argument("--targets", required=True, help="mica's libestimate/targets folder")
    ap.add_argument("--vela", default=shutil.which("vela") or "vela")
    ap.add_argument("--mlia-vela-ini", help="MLIA's vela.ini (default: from mlia-ethos-u)")
    ap.add_argument("--configs", nargs="+", default=CONFIGS, choices=CONFIGS)
    ap.add_argument("--profiles", nargs="+", default=PROFILES, choices=PROFILES)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900, help="seconds per Vela run")
    ap.add_argument("--prune", action="store_true",
                    help="first delete the records of this source's models that are not in the "
                         "model list (a changed model's old records go when it is recorded anew)")
    args = ap.parse_args()

    version = subprocess.run([args.vela, "--version"], stdout=subprocess.PIPE, text=True,
                             check=True).stdout.strip()
    import ethosu  # noqa: E402  (the package vela belongs to; ships vela.ini)
    vela_ini = Path(list(ethosu.__path__)[0]) / "config_files" / "Arm" / "vela.ini"
    mlia_ini = Path(args.mlia_vela_ini) if args.mlia_vela_ini else None
    if mlia_ini is None and "mlia" in args.configs:
        import importlib.util
        spec = importlib.util.find_spec("mlia")
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit("error: config mlia needs mlia-ethos-u or --mlia-vela-ini")
        mlia_ini = Path(list(spec.submodule_search_locations)[0]) / "resources/vela/vela.ini"
    inis = {"vela": vela_ini, "mlia": mlia_ini}
    ini_sha = {k: sha256_of(v) for k, v in inis.items() if v is not None}

    models = []
    for pat in args.models:
        models += find_models(args.root, pat)
    if not models:
        raise SystemExit("error: no models match")
    rec = Recorder(args.out)
    jobs = []
    for config in args.configs:  # all of config 'vela' first, then 'mlia'
        for m in models:
            sha = sha256_of(m)
            for prof in args.profiles:
                if config == "vela":
                    sc, mm = read_mica_profile(args.targets, prof)
                    extra = []
                else:
                    sc, mm = MLIA_PROFILES[prof]
                    extra = MLIA_OPTIONS
                job = {"source": args.source, "model": m.stem,
                       "model_path": m.relative_to(args.root).as_posix(), "model_sha256": sha,
                       "profile": prof, "config": config, "vela_version": version,
                       "vela_ini": config, "vela_ini_sha256": ini_sha[config],
                       "system_config": sc, "memory_mode": mm, "abs_path": m, "ini": inis[config],
                       "extra": extra, "timeout": args.timeout, "vela": args.vela}
                if Recorder.key(job) not in rec.done:
                    jobs.append(job)
    print(f"{len(jobs)} Vela runs to do ({len(rec.done)} already recorded)", flush=True)
    n = 0
    if args.prune:
        rec.prune(args.source, {m.stem for m in models})
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    try:
        futures = [pool.submit(run_one, j) for j in jobs]
        for fut in concurrent.futures.as_completed(futures):
            job, row, layers, fallbacks = fut.result()
            rec.store(job, row, layers, fallbacks)
            n += 1
            print(f"[{n}/{len(jobs)}] {job['model']} {job['profile']} {job['config']}: "
                  f"{row['status']} {row.get('total_cycles', '')} "
                  f"{row.get('error', '')} ({row['wall_seconds']} s)", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the runs recorded so far are kept", flush=True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        rec.sort_files()


if __name__ == "__main__":
    sys.exit(main())
