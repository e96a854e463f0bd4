#!/usr/bin/env python3
"""Make int8 LSTM variants of a corpus model and record whether TFLite Micro runs them.

From test/corpus/models/rnn_lstm32_20x16.tflite (int8 UNIDIRECTIONAL_SEQUENCE_LSTM, 32 cells)
this writes test/data/lstm_variants/lstm_<variant>.tflite, where <variant> adds peephole
weights (inputs 9-11, int16), a projection (input 16, int8 32x32), layer-norm coefficients
(inputs 20-23, int16) or removes the input gate (CIFG: inputs 1, 5, 12), and records in
test/data/lstm_variants/tflm.csv, per file, its sha256, the tflite-micro version and whether
that interpreter (the oracle of record) prepares and invokes it. The pinned TFLite Micro
refuses every variant in Prepare (lstm_eval.cc: tensors of LSTM variants must be absent),
which is why mica's int8 runtime refuses them as well; `mica inspect` and `check` load them.

Needs the `tflite-micro` package (its Python schema and the flatbuffers module).
"""

import csv
import hashlib
from pathlib import Path

import flatbuffers
import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "test" / "corpus" / "models" / "rnn_lstm32_20x16.tflite"
OUT = ROOT / "test" / "data" / "lstm_variants"
CELLS = 32


def add_tensor(model, shape, ttype, values, scale):
    sg = model.subgraphs[0]
    buf = schema.BufferT()
    buf.data = list(np.asarray(values).tobytes())
    model.buffers.append(buf)
    t = schema.TensorT()
    t.shape = shape
    t.type = ttype
    t.buffer = len(model.buffers) - 1
    t.name = f"variant_{len(sg.tensors)}".encode()
    q = schema.QuantizationParametersT()
    q.scale = [scale]
    q.zeroPoint = [0]
    t.quantization = q
    sg.tensors.append(t)
    return len(sg.tensors) - 1


def make(variant):
    model = schema.ModelT.InitFromPackedBuf(SOURCE.read_bytes(), 0)
    op = next(o for o in model.subgraphs[0].operators
              if max(model.operatorCodes[o.opcodeIndex].builtinCode,
                     model.operatorCodes[o.opcodeIndex].deprecatedBuiltinCode)
              == schema.BuiltinOperator.UNIDIRECTIONAL_SEQUENCE_LSTM)
    ins = list(op.inputs) + [-1] * (24 - len(op.inputs))
    rng = np.random.default_rng(7)
    if variant == "peephole":
        for i in (9, 10, 11):
            ins[i] = add_tensor(model, [CELLS], schema.TensorType.INT16,
                                rng.integers(-300, 300, CELLS).astype(np.int16), 1e-4)
    elif variant == "projection":
        ins[16] = add_tensor(model, [CELLS, CELLS], schema.TensorType.INT8,
                             rng.integers(-127, 127, (CELLS, CELLS)).astype(np.int8), 1e-2)
    elif variant == "layer_norm":
        for i in (20, 21, 22, 23):
            ins[i] = add_tensor(model, [CELLS], schema.TensorType.INT16,
                                rng.integers(1000, 3000, CELLS).astype(np.int16), 1e-3)
    elif variant == "cifg":
        ins[1] = ins[5] = ins[12] = -1
    op.inputs = ins
    b = flatbuffers.Builder(0)
    b.Finish(model.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def main():
    from importlib.metadata import version
    tflm_version = version("tflite-micro")
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "tflm.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["file", "sha256", "tflm_version", "tflm_status"])
        for variant in ("peephole", "projection", "layer_norm", "cifg"):
            data = make(variant)
            path = OUT / f"lstm_{variant}.tflite"
            path.write_bytes(data)
            try:
                interp = runtime.Interpreter.from_file(str(path))
                interp.set_input(np.zeros((1, 20, 16), np.int8), 0)
                interp.invoke()
                status = "runs"
            except Exception:  # TFLite Micro's Prepare fails ("failed to allocate tensors")
                status = "refused"
            w.writerow([path.name, hashlib.sha256(data).hexdigest(), tflm_version, status])
            print(path.name, status)


if __name__ == "__main__":
    main()
