#!/usr/bin/env python3
"""Record TFLite Micro's arena report for every distinct operator of the corpus, alone.

Each operator of subgraph 0 of each model is cut into a one-operator model and run through
TensorFlow Lite Micro's Python interpreter (`pip install --pre tflite-micro`: the 64-bit host
build with reference kernels); its RecordingMicroAllocator report (`print_allocations()`) gives
the arena's head and tail and the persistent categories. One CSV row per operator goes to
<out>/tflm/single_op.csv. Operators equal to one already recorded (same operator code, version,
options and operand types, shapes, quantization counts, constness) are skipped, so each row is a
distinct case. test/estimate/tflm_arena_test.cc cuts the same operator from the same model and
compares mica's host arena estimate with each row.

The cut (the test's OneOperator does the same): the operator's tensors in first-use order (its
inputs, absent ones skipped, then its outputs, then its intermediates), the non-constant,
non-variable inputs as graph inputs (each once), its outputs as graph outputs; every buffer of
the model is kept. Models with more than one subgraph are skipped.

The operators of one model run in one child process; when the interpreter crashes the parent
starts a new child that marks the operator it was running as an error and goes on.

Usage (from the repository root):
    python test/corpus/tools/record_tflm_single_op.py --out test/corpus/reference \\
        --root test/corpus --models 'models/*.tflite'
"""

import argparse
import copy
import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

COLUMNS = [
    "source", "model", "model_sha256", "op_index", "op", "tflm_version", "status", "error",
    "head_bytes", "tail_bytes", "total_bytes", "eval_tensor_bytes", "node_bytes",
    "persistent_buffer_requested_bytes", "persistent_buffer_count",
    "persistent_tensor_bytes", "persistent_quantization_bytes", "variable_buffer_bytes",
]

CATEGORIES = {
    "TfLiteEvalTensor data": "eval_tensor_bytes",
    "NodeAndRegistration struct": "node_bytes",
    "Persistent TfLiteTensor data": "persistent_tensor_bytes",
    "Persistent TfLiteTensor quantization data": "persistent_quantization_bytes",
    "TfLiteTensor variable buffer data": "variable_buffer_bytes",
}


def schema():
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as s
    return s


def op_names():
    s = schema()
    return {v: k for k, v in s.BuiltinOperator.__dict__.items() if not k.startswith("_")}


def is_constant(model, t):
    b = model.buffers[model.subgraphs[0].tensors[t].buffer]
    return b is not None and ((b.data is not None and len(b.data) > 0) or (b.offset or 0) > 1)


def signature(model, op, kind):
    """What makes two operators the same case for the allocator."""
    sg = model.subgraphs[0]

    def tensor(t):
        if t < 0:
            return None
        x = sg.tensors[t]
        q = x.quantization
        nq = len(q.scale) if q is not None and q.scale is not None else 0
        shape = [int(d) for d in x.shape] if x.shape is not None else None
        return [shape, int(x.type), nq, is_constant(model, t), bool(x.isVariable)]

    code = model.operatorCodes[op.opcodeIndex]
    options = op.builtinOptions.__dict__ if op.builtinOptions is not None else None
    return json.dumps([kind, int(code.version), [tensor(t) for t in op.inputs],
                       [tensor(t) for t in op.outputs],
                       [tensor(t) for t in (op.intermediates if op.intermediates is not None
                                            else [])],
                       str(options)], default=str)


def cut(model, index):
    """A copy of `model` whose subgraph 0 is operator `index` alone (see the module doc)."""
    import flatbuffers
    sg = model.subgraphs[0]
    op = copy.deepcopy(sg.operators[index])
    remap, tensors = {}, []

    def take(t):
        if t < 0:
            return t
        if t not in remap:
            remap[t] = len(tensors)
            tensors.append(copy.deepcopy(sg.tensors[t]))
        return remap[t]

    inputs = []
    for t in sg.operators[index].inputs:
        if t >= 0 and not is_constant(model, t) and not sg.tensors[t].isVariable:
            inputs.append(t)
    op.inputs = [take(t) for t in op.inputs]
    op.outputs = [take(t) for t in op.outputs]
    if op.intermediates is not None and len(op.intermediates):
        op.intermediates = [take(t) for t in op.intermediates]
    out = copy.copy(model)
    out.subgraphs = [copy.copy(sg)]
    s = out.subgraphs[0]
    s.tensors, s.operators = tensors, [op]
    s.inputs = list(dict.fromkeys(remap[t] for t in inputs))
    s.outputs = list(op.outputs)
    b = flatbuffers.Builder(1024)
    b.Finish(out.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def report(path):
    """The interpreter's allocation report for the model at `path` (a dict)."""
    from tflite_micro.python.tflite_micro import runtime
    interp = runtime.Interpreter.from_file(str(path), arena_size=64 << 20)
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
        text = f.read().decode(errors="replace")
    row = {}
    for line in text.splitlines():
        m = re.search(r"Arena allocation (head|tail|total) (\d+)", line)
        if m:
            row[f"{m.group(1)}_bytes"] = int(m.group(2))
            continue
        m = re.search(r"'(.*)' used (\d+) bytes with alignment overhead \(requested (\d+) bytes "
                      r"for (\d+)", line)
        if not m:
            continue
        if m.group(1) == "Persistent buffer data":
            row["persistent_buffer_requested_bytes"] = int(m.group(3))
            row["persistent_buffer_count"] = int(m.group(4))
        elif m.group(1) in CATEGORIES:
            row[CATEGORIES[m.group(1)]] = int(m.group(3))
    return row


def child(model_path, ops_json, out_path):
    """Runs the listed operators of one model; one JSON line per operator ("pending" first)."""
    s = schema()
    model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(Path(model_path).read_bytes(), 0))
    with open(out_path, "a") as out, tempfile.TemporaryDirectory() as tmp:
        for index in json.loads(ops_json):
            out.write(json.dumps({"op_index": index, "pending": True}) + "\n")
            out.flush()
            path = Path(tmp) / "op.tflite"
            path.write_bytes(cut(model, index))
            try:
                row = {"status": "ok", **report(path)}
            except Exception as e:  # noqa: BLE001 - the interpreter raises RuntimeError/ValueError
                row = {"status": "error", "error": str(e).strip().splitlines()[-1][:300]}
            out.write(json.dumps({"op_index": index, **row}) + "\n")
            out.flush()


def run_model(model_path, todo):
    """Runs `todo` (operator indices) of one model in children; returns {index: row}."""
    done = {}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.jsonl"
        while True:
            left = [i for i in todo if i not in done]
            if not left:
                return done
            subprocess.run([sys.executable, __file__, "--child", str(model_path), json.dumps(left),
                            str(log)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            pending = None
            for line in log.read_text().splitlines():
                r = json.loads(line)
                if r.get("pending"):
                    pending = r["op_index"]
                else:
                    done[r["op_index"]] = r
                    pending = None
            if pending is not None and pending not in done:
                done[pending] = {"status": "error", "error": "the interpreter crashed"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--out", help="reference folder (test/corpus/reference)")
    ap.add_argument("--source", default="corpus")
    ap.add_argument("--root", help="folder the model paths are relative to")
    ap.add_argument("--models", nargs="+", help="glob patterns relative to --root")
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return 0
    if not (args.out and args.root and args.models):
        ap.error("--out, --root and --models are required")
    from importlib.metadata import version
    tflm_version = version("tflite-micro")
    s = schema()
    names = op_names()
    root = Path(args.root)
    models = sorted({p for pat in args.models for p in root.glob(pat) if p.is_file()})
    seen, rows = set(), []
    for m in models:
        data = m.read_bytes()
        model = s.ModelT.InitFromObj(s.Model.GetRootAsModel(data, 0))
        if len(model.subgraphs) != 1:
            continue
        todo, kinds = [], {}
        for i, op in enumerate(model.subgraphs[0].operators):
            code = model.operatorCodes[op.opcodeIndex]
            kind = names.get(max(code.builtinCode, code.deprecatedBuiltinCode), "CUSTOM")
            key = signature(model, op, kind)
            if key in seen:
                continue
            seen.add(key)
            todo.append(i)
            kinds[i] = kind
        results = run_model(m, todo)
        sha = hashlib.sha256(data).hexdigest()
        for i in todo:
            rows.append({"source": args.source, "model": m.stem, "model_sha256": sha,
                         "op_index": i, "op": kinds[i], "tflm_version": tflm_version,
                         **{k: v for k, v in results[i].items() if k in COLUMNS}})
        print(f"{m.stem}: {len(todo)} operators", flush=True)
    table = Path(args.out) / "tflm" / "single_op.csv"
    table.parent.mkdir(parents=True, exist_ok=True)
    with open(table, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in COLUMNS})
    return 0


if __name__ == "__main__":
    sys.exit(main())
