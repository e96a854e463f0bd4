#!/usr/bin/env python3
"""Cross-checks TFLite files written by mica against the originals with an independent reader.

For every rewritten model (written by the round-trip test into
<build>/test-tmp/tflite_rewritten/), loads the original from the shared models and the
rewritten file in the LiteRT interpreter, compares operators, tensor shapes, dtypes and
quantization, runs both on the same seeded random inputs and requires bit-identical outputs.

Optional (not part of the required tests); needs `pip install ai-edge-litert numpy`.

  python3 test/tools/tflite_crosscheck.py --shared ../shared/models \
      --rewritten build-<name>/test-tmp/tflite_rewritten
"""
import argparse
import pathlib
import sys

import numpy as np

try:
    from ai_edge_litert.interpreter import Interpreter
except ImportError:  # pragma: no cover
    sys.exit("needs ai-edge-litert: pip install ai-edge-litert")


def describe(interp):
    ops = [op["op_name"] for op in interp._get_ops_details()]
    tensors = []
    for t in interp.get_tensor_details():
        q = t["quantization_parameters"]
        tensors.append((t["name"], t["shape"].tolist(), t["shape_signature"].tolist(),
                        np.dtype(t["dtype"]).name, q["scales"].tolist(),
                        q["zero_points"].tolist(), int(q["quantized_dimension"])))
    return ops, tensors


def random_input(detail, rng):
    dtype = np.dtype(detail["dtype"])
    shape = detail["shape"]
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    return rng.standard_normal(size=shape).astype(dtype)


def run(path, inputs):
    interp = Interpreter(model_path=str(path))
    interp.allocate_tensors()
    for detail, value in zip(interp.get_input_details(), inputs):
        interp.set_tensor(detail["index"], value)
    interp.invoke()
    return [interp.get_tensor(d["index"]) for d in interp.get_output_details()]


def check(original, rewritten, seed):
    a = Interpreter(model_path=str(original))
    b = Interpreter(model_path=str(rewritten))
    ops_a, tensors_a = describe(a)
    ops_b, tensors_b = describe(b)
    if ops_a != ops_b:
        return f"operators differ: {ops_a} vs {ops_b}"
    for ta, tb in zip(tensors_a, tensors_b):
        if ta != tb:
            return f"tensor differs: {ta} vs {tb}"
    if len(tensors_a) != len(tensors_b):
        return f"{len(tensors_a)} tensors vs {len(tensors_b)}"
    rng = np.random.default_rng(seed)
    a.allocate_tensors()
    inputs = [random_input(d, rng) for d in a.get_input_details()]
    out_a = run(original, inputs)
    out_b = run(rewritten, inputs)
    for i, (x, y) in enumerate(zip(out_a, out_b)):
        if x.dtype != y.dtype or x.shape != y.shape or not np.array_equal(x, y, equal_nan=True):
            return f"output {i} differs"
    return f"ok: {len(ops_a)} operators, {len(tensors_a)} tensors, outputs bit-identical"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", required=True, help="shared models directory")
    parser.add_argument("--rewritten", required=True, help="directory of mica-written models")
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()
    originals = {p.name: p for p in pathlib.Path(args.shared).rglob("*.tflite")}
    rewritten = sorted(pathlib.Path(args.rewritten).glob("*.tflite"))
    if not rewritten:
        sys.exit(f"no rewritten models in {args.rewritten}; run the round-trip test first")
    failures = 0
    for path in rewritten:
        if path.name not in originals:
            print(f"{path.name}: no original found, skipped")
            continue
        try:
            result = check(originals[path.name], path, args.seed)
        except Exception as e:  # an interpreter refusing the file is a failure, not a crash
            result = f"error: {e}"
        ok = result.startswith("ok")
        failures += 0 if ok else 1
        print(f"{path.name}: {result}")
    print(f"{len(rewritten) - failures}/{len(rewritten)} rewritten models match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
