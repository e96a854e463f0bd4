#!/usr/bin/env python3
"""Differential check of single-op models against TFLite Micro's reference interpreter.

Builds random single-operator TFLite models with the schema shipped in the `tflite-micro`
package, runs them on TFLite Micro and with `mica run`, and requires bit-identical outputs.
Optional (not part of the required tests); needs
`pip install tflite-micro==0.dev20261023182759 numpy flatbuffers`.

  python3 test/tools/tflm_single_op.py --mica build/fast/bin/mica --op quantize --cases 160
  python3 test/tools/tflm_single_op.py --mica build/fast/bin/mica --op sub16 --cases 200

Ops: `quantize` cycles through TFLite Micro's integer QUANTIZE pairs (uint8->int8, int8->uint8,
int32->int16/int8, int16->int32, int8->int32/int16, int16->int8); `sub16` is int16 SUB with
random broadcasting and scales; `sub8` the same in int8 with zero points; `tconv16` is
TRANSPOSE_CONV 16x8 (per-channel int8 filter, int64 bias, SAME/VALID, strides 1-2).
"""
import argparse
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import flatbuffers
import numpy as np
import tflite_micro
from tflite_micro.python.tflite_micro import runtime

sys.path.insert(0, str(pathlib.Path(tflite_micro.__file__).parent /
                       "tensorflow/lite/micro/python"))
import schema_py_generated as s  # noqa: E402

T = s.TensorType


def tensor(shape, ttype, scale, zp, buf, name):
    t = s.TensorT()
    t.shape, t.type, t.buffer, t.name = list(shape), ttype, buf, name
    q = s.QuantizationParametersT()
    q.scale, q.zeroPoint = [scale], [zp]
    t.quantization = q
    return t


def model(op_code, tensors, inputs, outputs, opt_type=0, opt=None, data=None):
    m = s.ModelT()
    m.version = 3
    oc = s.OperatorCodeT()
    oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = op_code, min(op_code, 127), 1
    m.operatorCodes = [oc]
    sg = s.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs = tensors, inputs, outputs
    op = s.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = 0, inputs, outputs
    if opt is not None:
        op.builtinOptionsType, op.builtinOptions = opt_type, opt
    sg.operators = [op]
    m.subgraphs = [sg]
    m.buffers = [s.BufferT() for _ in range(len(tensors) + 1)]
    for i, arr in (data or {}).items():  # constant tensors: tensor i reads buffer i + 1
        m.buffers[i + 1].data = list(np.ascontiguousarray(arr).view(np.uint8).flatten())
    op.inputs = [i if i >= 0 else -1 for i in inputs]
    sg.inputs = [i for i in inputs if i >= 0 and i not in (data or {})]
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def run_tflm(mbytes, ins):
    it = runtime.Interpreter.from_bytes(mbytes)
    for i, x in enumerate(ins):
        it.set_input(x, i)
    it.invoke()
    return it.get_output(0)


def run_mica(mica, mbytes, ins, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with open(os.path.join(work, "m.tflite"), "wb") as f:
        f.write(mbytes)
    cmd = [mica, "run", os.path.join(work, "m.tflite")]
    for i, x in enumerate(ins):
        np.save(os.path.join(work, f"in{i}.npy"), x)
        cmd += ["--input", os.path.join(work, f"in{i}.npy")]
    cmd += ["--output", os.path.join(work, "out")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    return np.load(glob.glob(os.path.join(work, "out", "*.npy"))[0]), ""


def sub_case(rng, int16=True):
    s1, s2, so = [float(np.float32(10 ** rng.uniform(-5, -2) * (1 if int16 else 256)))
                  for _ in range(3)]
    ttype, ntype = (T.INT16, np.int16) if int16 else (T.INT8, np.int8)
    lo, hi = (-32768, 32768) if int16 else (-128, 128)
    z1, z2, zo = (0, 0, 0) if int16 else [int(rng.integers(-128, 128)) for _ in range(3)]
    shp1 = [1, int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 6))]
    shp2 = [1 if rng.random() < 0.5 else d for d in shp1]
    if rng.random() < 0.5:
        shp1, shp2 = shp2, shp1
    out = list(np.broadcast_shapes(tuple(shp1), tuple(shp2)))
    a = rng.integers(lo, hi, size=shp1).astype(ntype)
    b = rng.integers(lo, hi, size=shp2).astype(ntype)
    ts = [tensor(shp1, ttype, s1, z1, 1, "a"), tensor(shp2, ttype, s2, z2, 2, "b"),
          tensor(out, ttype, so, zo, 3, "y")]
    opt = s.SubOptionsT()
    opt.fusedActivationFunction = 0
    return model(41, ts, [0, 1], [2], s.BuiltinOptions.SubOptions, opt), [a, b], (s1, s2, so)


def tconv16_case(rng):
    n, h, w, c = 1, int(rng.integers(1, 5)), int(rng.integers(1, 5)), int(rng.integers(1, 6))
    oc, kh, kw = int(rng.integers(1, 5)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
    sh, sw = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    same = rng.random() < 0.5
    oh = h * sh if same else (h - 1) * sh + kh
    ow = w * sw if same else (w - 1) * sw + kw
    si = float(np.float32(10 ** rng.uniform(-4, -2)))
    sf = [float(np.float32(10 ** rng.uniform(-3, -1))) for _ in range(oc)]
    so = float(np.float32(10 ** rng.uniform(-3, -1)))
    x = rng.integers(-32768, 32768, size=[n, h, w, c]).astype(np.int16)
    f = rng.integers(-127, 128, size=[oc, kh, kw, c]).astype(np.int8)
    bias = rng.integers(-(1 << 20), 1 << 20, size=[oc]).astype(np.int64)
    shape = np.array([n, oh, ow, oc], np.int32)
    ft = tensor([oc, kh, kw, c], T.INT8, 0.0, 0, 2, "filter")
    ft.quantization.scale, ft.quantization.zeroPoint = sf, [0] * oc
    ft.quantization.quantizedDimension = 0
    bt = tensor([oc], T.INT64, 0.0, 0, 4, "bias")
    bt.quantization.scale, bt.quantization.zeroPoint = [si * v for v in sf], [0] * oc
    ts = [tensor([4], T.INT32, 0.0, 0, 1, "shape"), ft, tensor([n, h, w, c], T.INT16, si, 0, 3, "x"),
          bt, tensor([n, oh, ow, oc], T.INT16, so, 0, 5, "y")]
    ts[0].quantization = None
    opt = s.TransposeConvOptionsT()
    opt.padding = 0 if same else 1
    opt.strideH, opt.strideW = sh, sw
    mb = model(67, ts, [0, 1, 2, 3], [4], s.BuiltinOptions.TransposeConvOptions, opt,
               data={0: shape, 1: f, 3: bias})
    return mb, [x], (h, w, c, oc, kh, kw, sh, sw, same)


PAIRS = [(T.UINT8, np.uint8, T.INT8), (T.INT8, np.int8, T.UINT8), (T.INT32, np.int32, T.INT16),
         (T.INT32, np.int32, T.INT8), (T.INT16, np.int16, T.INT32), (T.INT8, np.int8, T.INT32),
         (T.INT8, np.int8, T.INT16), (T.INT16, np.int16, T.INT8)]


def quantize_case(rng, c):
    ti, ni, to = PAIRS[c % len(PAIRS)]
    si = float(np.float32(10 ** rng.uniform(-4, 0)))
    so = si if rng.random() < 0.3 else float(np.float32(10 ** rng.uniform(-4, 0)))

    def zp(t):
        if t == T.UINT8:
            return int(rng.integers(0, 256))
        if t == T.INT8:
            return int(rng.integers(-128, 128))
        return 0
    zi, zo = zp(ti), zp(to)
    if ti == T.UINT8 and to == T.INT8 and rng.random() < 0.5:
        so, zi, zo = si, 128, 0  # the common model-input case
    info = np.iinfo(ni)
    x = rng.integers(max(info.min, -300000), min(info.max, 300000) + 1, size=[1, 37]).astype(ni)
    ts = [tensor([1, 37], ti, si, zi, 1, "x"), tensor([1, 37], to, so, zo, 2, "y")]
    return model(114, ts, [0], [1]), [x], (ti, to, si, zi, so, zo)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mica", required=True)
    p.add_argument("--op", choices=["quantize", "sub16", "sub8", "tconv16"], required=True)
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    work = tempfile.mkdtemp()
    bad = 0
    for c in range(a.cases):
        if a.op == "quantize":
            mb, ins, what = quantize_case(rng, c)
        elif a.op == "tconv16":
            mb, ins, what = tconv16_case(rng)
        else:
            mb, ins, what = sub_case(rng, int16=a.op == "sub16")
        ref = run_tflm(mb, ins)
        got, err = run_mica(a.mica, mb, ins, work)
        if got is None or not np.array_equal(got.reshape(ref.shape), ref):
            bad += 1
            print("MISMATCH", c, what, err)
    shutil.rmtree(work, ignore_errors=True)
    print(f"{a.op}: {a.cases - bad} of {a.cases} bit-exact (seed {a.seed}, tflite-micro "
          f"{getattr(tflite_micro, '__version__', '?')})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
