#!/usr/bin/env python3
"""Record TFLite Micro's outputs for several frames in a row of the corpus's stateful models.

TFLite Micro keeps variable tensors (LSTM hidden and cell state, SVDF activation state) between
invocations of one interpreter. For each model below this script runs the frame sequence
A, B, A through one interpreter (`pip install --pre tflite-micro`, the oracle of record) and
writes one CSV row per frame and output to test/corpus/reference/tflm/frames.csv with the tool
version and the model's sha256. `mica run MODEL --input a --input b --input a` must reproduce
every row (test/cli/run_test.cc).

Inputs (int8 only; easy to re-implement in C++), element i of the input in row-major order:
    A[i] = (int8_t)((i * 37) % 251)        B[i] = (int8_t)((i * 11 + 5) % 253)
"""

import csv
import hashlib
import sys
from pathlib import Path

import numpy as np
from tflite_micro.python.tflite_micro import runtime

ROOT = Path(__file__).resolve().parents[1]
# rnn_bilstm24_16x8 is left out: mica does not run its REVERSE_V2 yet.
MODELS = ["rnn_lstm32_20x16", "rnn_lstm64x32_25x10", "audio_crnn_lstm_49x10"]
SEQUENCE = "ABA"


def pattern(name, n):
    i = np.arange(n, dtype=np.int64)
    v = (i * 37) % 251 if name == "A" else (i * 11 + 5) % 253
    return v.astype(np.uint8).view(np.int8)


def main():
    try:
        from importlib.metadata import version
        tflm_version = version("tflite-micro")
    except Exception:  # pragma: no cover
        tflm_version = "unknown"
    out = ROOT / "reference" / "tflm" / "frames.csv"
    with open(out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["model", "model_sha256", "tflm_version", "frame", "input", "output", "values"])
        for name in MODELS:
            path = ROOT / "models" / f"{name}.tflite"
            sha = hashlib.sha256(path.read_bytes()).hexdigest()
            interp = runtime.Interpreter.from_file(str(path))
            details = interp.get_input_details(0)
            shape, dtype = details["shape"], details["dtype"]
            if dtype != np.int8:
                sys.exit(f"{name}: input is {dtype}, the frame patterns are int8")
            for frame, which in enumerate(SEQUENCE):
                x = pattern(which, int(np.prod(shape))).reshape(shape)
                interp.set_input(x, 0)
                interp.invoke()
                # The corpus's stateful models have one output.
                y = interp.get_output(0)
                values = " ".join(str(int(v)) for v in np.asarray(y).reshape(-1))
                w.writerow([name, sha, tflm_version, frame, which, 0, values])
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
