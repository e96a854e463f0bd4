#!/usr/bin/env python3
"""Record TFLite Micro's outputs for .tflite models as committed reference data.

For every model: one deterministic input per graph input (the LCG rule below), one invoke of
TensorFlow Lite Micro's Python interpreter (`pip install --pre tflite-micro`: its host build with
reference kernels, the bit-exact oracle of record), and records
  - <out>/tflm/outputs.csv: one row per graph output (dtype, shape, CRC-32 of the raw bytes,
    first values, the .npy holding all of it) and per model the arena the interpreter used,
  - <out>/tflm/<source>/<model>/output_<i>.npy (and input_<i>.npy when the input is small),
  - <out>/tflm/tensors.csv: CRC-32 of every non-constant tensor of subgraph 0 after the invoke
    (a second run with kPreserveAllTensors, so no arena reuse overwrites them).
Each model runs in a child process, so a crash in the interpreter becomes an error row.

Input rule (easy to re-implement in C++): one 32-bit LCG stream per model,
    state = 0x6D696361 ("mica"); before each value: state = state * 1664525 + 1013904223 (mod 2^32)
consumed over the graph inputs in order, each input's elements in row-major order; the value is
    int8:   (int8_t)(state >> 24)        uint8:  (uint8_t)(state >> 24)
    int16:  (int16_t)(state >> 16)       int32:  (int32_t)state
    float32: (float)(state >> 8) * 2^-23 - 1.0f   (exact in float; uniform in [-1, 1))
(`(intN_t)` is two's-complement truncation). Other input types get an error row.
"""

import argparse
import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

SEED = 0x6D696361
LCG_A, LCG_C = 1664525, 1013904223
MAX_SAVED_INPUT_BYTES = 4 * 1024
FIRST_VALUES = 8

COLUMNS = [
    "source", "model", "model_path", "model_sha256", "tflm_version", "status", "error",
    "arena_total_bytes", "arena_head_bytes", "arena_tail_bytes", "inputs", "input_crc32",
    "output", "dtype", "shape", "crc32", "first_values", "file",
]

TENSOR_COLUMNS = ["source", "model", "tensor", "dtype", "shape", "crc32"]


def sha256_of(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def lcg_states(count, state):
    """The next `count` LCG states (as uint32 numpy array) and the final state."""
    import numpy as np
    out = np.empty(count, dtype=np.uint32)
    s = state
    for i in range(count):
        s = (s * LCG_A + LCG_C) & 0xFFFFFFFF
        out[i] = s
    return out, s


def make_input(dtype, shape, state):
    import numpy as np
    n = int(np.prod(shape)) if len(shape) else 1
    st, state = lcg_states(n, state)
    dt = np.dtype(dtype)
    if dt == np.int8:
        v = (st >> 24).astype(np.uint8).view(np.int8)
    elif dt == np.uint8:
        v = (st >> 24).astype(np.uint8)
    elif dt == np.int16:
        v = (st >> 16).astype(np.uint16).view(np.int16)
    elif dt == np.int32:
        v = st.view(np.int32)
    elif dt == np.float32:
        v = ((st >> 8).astype(np.float32) * np.float32(2.0 ** -23) - np.float32(1.0))
    else:
        raise ValueError(f"unsupported input type {dt.name}")
    return v.reshape(shape).astype(dt), state


def interp_arena(size):
    return max(10 * size, 4 << 20)


def activation_tensors(model_path):
    """Indices of subgraph 0's tensors that hold no constant data (activations, variables)."""
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema
    buf = Path(model_path).read_bytes()
    model = schema.Model.GetRootAsModel(buf, 0)
    sg = model.Subgraphs(0)
    out = []
    for t in range(sg.TensorsLength()):
        b = model.Buffers(sg.Tensors(t).Buffer())
        if b is None or (b.DataLength() == 0 and b.Offset() <= 1):
            out.append(t)
    return out


def tensor_crcs(model_path, arena, res):
    """Second run with every tensor preserved: CRC-32 of each activation tensor of subgraph 0."""
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime
    interp = runtime.Interpreter.from_file(
        str(model_path), arena_size=arena,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    state = SEED
    for i, x in enumerate(res["inputs"]):
        v, state = make_input(x["dtype"], x["shape"], state)
        interp.set_input(v, i)
    interp.invoke()
    for i, o in enumerate(res["outputs"]):
        if zlib.crc32(np.ascontiguousarray(interp.get_output(i)).tobytes()) != o["crc32"]:
            raise RuntimeError(f"output {i} differs between the two interpreter runs")
    out = []
    for t in activation_tensors(model_path):
        d = interp.GetTensor(t, 0)
        a = d["tensor_data"]
        if a is None:
            continue
        a = np.ascontiguousarray(a)
        out.append([t, np.dtype(d["dtype"]).name, "x".join(str(int(s)) for s in d["shape"]),
                    f"{zlib.crc32(a.tobytes()):08x}"])
    return out


def child(model_path, out_dir):
    """Runs in a child process: writes result.json (and .npy files) into out_dir."""
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime
    size = os.path.getsize(model_path)
    res = {"inputs": [], "outputs": []}
    interp = None
    for arena in (interp_arena(size), max(40 * size, 64 << 20)):
        try:
            interp = runtime.Interpreter.from_file(str(model_path), arena_size=arena)
            break
        except Exception as e:  # noqa: BLE001 - the interpreter raises RuntimeError/ValueError
            err = e
    if interp is None:
        raise RuntimeError(f"interpreter: {str(err).strip().splitlines()[-1]}")
    state = SEED
    i = 0
    while True:
        try:
            d = interp.get_input_details(i)
        except IndexError:
            break
        x, state = make_input(d["dtype"], [int(s) for s in d["shape"]], state)
        interp.set_input(x, i)
        res["inputs"].append({"dtype": np.dtype(d["dtype"]).name, "crc32": zlib.crc32(x.tobytes()),
                              "shape": list(x.shape)})
        if x.nbytes <= MAX_SAVED_INPUT_BYTES:
            np.save(Path(out_dir) / f"input_{i}.npy", x)
        i += 1
    interp.invoke()
    i = 0
    while True:
        try:
            interp.get_output_details(i)
        except IndexError:
            break
        y = np.ascontiguousarray(interp.get_output(i))
        np.save(Path(out_dir) / f"output_{i}.npy", y)
        res["outputs"].append({"dtype": y.dtype.name, "shape": list(y.shape),
                               "crc32": zlib.crc32(y.tobytes()),
                               "first": [v.item() for v in y.reshape(-1)[:FIRST_VALUES]]})
        i += 1
    res["tensors"] = tensor_crcs(model_path, interp_arena(size), res)
    # The recording allocator prints its report on the C++ stderr: capture file descriptor 2.
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as f:
        os.dup2(f.fileno(), 2)
        try:
            interp.print_allocations()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        report = f.read().decode(errors="replace")
    for key, name in (("total", "arena_total_bytes"), ("head", "arena_head_bytes"),
                      ("tail", "arena_tail_bytes")):
        for line in report.splitlines():
            if f"Arena allocation {key} " in line:
                res[name] = int(line.split()[-2])
    (Path(out_dir) / "result.json").write_text(json.dumps(res))


def write_tables(table, rows, tensor_table, tensors):
    rows.sort(key=lambda r: (r["source"], r["model"], int(r.get("output") or 0)))
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    with open(tensor_table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=TENSOR_COLUMNS, lineterminator="\n")
        w.writeheader()
        for key in sorted(tensors):
            for r in sorted(tensors[key], key=lambda r: int(r["tensor"])):
                w.writerow({c: r.get(c, "") for c in TENSOR_COLUMNS})


def child_error(output, returncode):
    """One line: the interpreter's own first complaint (printed before the Python traceback),
    then the exception."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    if not lines:
        return f"exit {returncode}"
    before = lines[:lines.index("Traceback (most recent call last):")] \
        if "Traceback (most recent call last):" in lines else []
    before = [l for l in before if "out of range (length is" not in l]
    first = [l for i, l in enumerate(before) if l not in before[:i]][:2]
    return "; ".join(first + [lines[-1]])


def tflm_version():
    from importlib.metadata import version
    return version("tflite-micro")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "DIR"), help=argparse.SUPPRESS)
    ap.add_argument("--out", help="reference folder (test/corpus/reference)")
    ap.add_argument("--source", choices=["corpus", "shared"])
    ap.add_argument("--root", help="folder the model paths are relative to")
    ap.add_argument("--models", nargs="+", help="glob patterns relative to --root")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--prune", action="store_true",
                    help="first delete the records of this source's models that are not in the "
                         "model list (a changed model is recorded anew anyway)")
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if not (args.out and args.source and args.root and args.models):
        ap.error("--out, --source, --root and --models are required")

    version = tflm_version()
    root = Path(args.root)
    models = sorted({p for pat in args.models for p in root.glob(pat) if p.is_file()})
    if not models:
        raise SystemExit("error: no models match")
    base = Path(args.out) / "tflm"
    base.mkdir(parents=True, exist_ok=True)
    table = base / "outputs.csv"
    rows = []
    if table.exists():
        with open(table, newline="") as f:
            rows = list(csv.DictReader(f))
    done = {(r["source"], r["model"], r["model_sha256"], r["tflm_version"]) for r in rows}
    tensor_table = base / "tensors.csv"
    tensors = {}
    if tensor_table.exists():
        with open(tensor_table, newline="") as f:
            for r in csv.DictReader(f):
                tensors.setdefault((r["source"], r["model"]), []).append(r)
    if args.prune:
        listed = {m.stem for m in models}
        stale = {r["model"] for r in rows
                 if r["source"] == args.source and r["model"] not in listed}
        rows = [r for r in rows if not (r["source"] == args.source and r["model"] in stale)]
        for key in [k for k in tensors if k[0] == args.source and k[1] in stale]:
            del tensors[key]
        for d in (base / args.source).glob("*") if (base / args.source).exists() else []:
            if d.name in stale or d.name not in {m.stem for m in models}:
                for f in d.glob("*"):
                    f.unlink()
                d.rmdir()
        done = {(r["source"], r["model"], r["model_sha256"], r["tflm_version"]) for r in rows}
        write_tables(table, rows, tensor_table, tensors)
    for m in models:
        sha = sha256_of(m)
        key = (args.source, m.stem, sha, version)
        if key in done:
            continue
        d = base / args.source / m.stem
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob("*.npy"):
            old.unlink()
        common = {"source": args.source, "model": m.stem,
                  "model_path": m.relative_to(root).as_posix(), "model_sha256": sha,
                  "tflm_version": version}
        rows = [r for r in rows if (r["source"], r["model"]) != (args.source, m.stem)]
        tensors.pop((args.source, m.stem), None)
        try:
            p = subprocess.run([sys.executable, __file__, "--child", str(m), str(d)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=args.timeout)
            failed = p.returncode != 0 or not (d / "result.json").exists()
            msg = child_error(p.stdout, p.returncode)
            if not failed:
                res = json.loads((d / "result.json").read_text())
        except subprocess.TimeoutExpired:
            failed, msg = True, f"timeout after {args.timeout} s"
        if failed:
            for old in d.glob("*"):
                old.unlink()
            d.rmdir()
            rows.append({**common, "status": "error", "error": msg[:400]})
            print(f"{m.stem}: error: {msg}", flush=True)
            continue
        (d / "result.json").unlink()
        tensors[(args.source, m.stem)] = [
            {**common, "tensor": t, "dtype": dt, "shape": sh, "crc32": crc}
            for t, dt, sh, crc in res["tensors"]]
        inputs = ";".join(f"{x['dtype']}[{'x'.join(map(str, x['shape']))}]"
                          for x in res["inputs"])
        in_crc = ";".join(f"{x['crc32']:08x}" for x in res["inputs"])
        for i, o in enumerate(res["outputs"]):
            rows.append({**common, "status": "ok", "error": "",
                         "arena_total_bytes": res.get("arena_total_bytes", ""),
                         "arena_head_bytes": res.get("arena_head_bytes", ""),
                         "arena_tail_bytes": res.get("arena_tail_bytes", ""),
                         "inputs": inputs, "input_crc32": in_crc, "output": i,
                         "dtype": o["dtype"], "shape": "x".join(map(str, o["shape"])),
                         "crc32": f"{o['crc32']:08x}",
                         "first_values": " ".join(str(v) for v in o["first"]),
                         "file": f"{args.source}/{m.stem}/output_{i}.npy"})
        print(f"{m.stem}: {len(res['outputs'])} outputs, arena "
              f"{res.get('arena_total_bytes')} B", flush=True)
        # rewrite after every model (resumable)
        write_tables(table, rows, tensor_table, tensors)
    write_tables(table, rows, tensor_table, tensors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
