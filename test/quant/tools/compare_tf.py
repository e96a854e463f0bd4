#!/usr/bin/env python3
"""Compare `mica quantize` with TensorFlow's own post-training quantization (optional oracle).

For each float model, both quantizers get the same calibration samples (int8 inputs/outputs,
a8w8); both results are then run with LiteRT's interpreter (tf.lite.Interpreter of the
TensorFlow install) on held-out samples next to the float model, and reported:
  - output SQNR vs float (dB), mica's and TensorFlow's, and their difference;
  - top-1 agreement with the float model (classifiers only);
  - TFLite Micro: mica's file runs in TFLite Micro's interpreter (tflite-micro on PyPI) and its
    outputs equal `mica run`'s byte for byte on the held-out inputs;
  - Vela: `vela` compiles mica's file (and TensorFlow's, for reference).

Models:
  - the float MLPerf Tiny models in ../shared/models/mlperf-tiny (*_float.tflite; these are
    trained models). TensorFlow's side uses the converter's calibrator on the float .tflite
    (tensorflow.lite.python.optimize.calibrator, the step TFLiteConverter runs after
    conversion), since no Keras source is shipped;
  - a few corpus architectures (test/corpus/make_corpus.py; seeded random weights): the Keras
    model is built, written as a float .tflite, and quantized by TFLiteConverter itself.
No real data set is available offline, so samples are synthetic: smooth random fields (coarse
Gaussian noise, upsampled, squashed into the range the published int8 model's input
quantization covers, or the corpus model's input range). Calibration and held-out samples use
different seeds.

Needs: the TensorFlow venv (tensorflow-cpu, tf_keras) to run this script, and a venv holding
tflite-micro and ethos-u-vela (--refs-python, --vela). Writes JSON (--out) with tool versions
and model sha256, and prints a Markdown table.

  /work/venv-corpus/bin/python test/quant/tools/compare_tf.py --mica build/fast/bin/mica \
      --refs-python /work/venvs/refs/bin/python --vela /work/venvs/refs/bin/vela \
      --out test/quant/data/compare_tf.json
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

# Float input range of each MLPerf Tiny model: what its published int8 model's input
# quantization covers (scale * ([-128, 127] - zero_point)).
MLPERF = {
    "kws_ds_cnn": (-123.4, 25.7),
    "vww_mobilenet_v1_025": (0.0, 1.0),
    "ic_resnet8": (0.0, 255.0),
    "ad_autoencoder": (-84.9, 15.0),
}
CORPUS = ["mobilenet_v1_a025_96", "mlp_784_256_128_10", "audio_dscnn_49x10_p50",
          "resnet_v1_f16_b1_64"]

TFLM_WORKER = r'''
import sys, numpy as np
from tflite_micro import runtime
model, n = sys.argv[1], int(sys.argv[2])
interp = runtime.Interpreter.from_file(model)
for i in range(n):
    x = np.load(sys.argv[3] + "/in_%d.npy" % i)
    interp.set_input(x, 0)
    interp.invoke()
    np.save(sys.argv[3] + "/tflm_%d.npy" % i, interp.get_output(0))
'''


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def smooth_samples(rng, shape, n, lo, hi):
    """n smooth random fields of `shape` (without batch) squashed into [lo, hi]."""
    import numpy as np
    out = np.empty((n,) + tuple(shape), np.float32)
    for k in range(n):
        coarse_shape = [max(1, d // 4) if i < len(shape) - 1 or len(shape) == 1 else d
                        for i, d in enumerate(shape)]
        z = rng.normal(size=coarse_shape)
        for axis, d in enumerate(shape):
            rep = -(-d // z.shape[axis])
            z = np.repeat(z, rep, axis=axis)
            z = np.take(z, range(d), axis=axis)
        z = z + 0.3 * rng.normal(size=shape)
        out[k] = lo + (hi - lo) / (1.0 + np.exp(-1.5 * z))
    return out


def run_tflite(path, xs, quantize_io=True):
    """Float outputs of `path` on float inputs xs (quantizing/dequantizing at the edges)."""
    import numpy as np
    import tensorflow as tf
    it = tf.lite.Interpreter(model_path=str(path))
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    outs = []
    for x in xs:
        x = x[None]
        if i["dtype"] != np.float32:
            s, z = i["quantization"]
            info = np.iinfo(i["dtype"])
            x = np.clip(np.round(x / s) + z, info.min, info.max).astype(i["dtype"])
        it.set_tensor(i["index"], x.reshape(i["shape"]))
        it.invoke()
        y = it.get_tensor(o["index"])
        if o["dtype"] != np.float32:
            s, z = o["quantization"]
            y = (y.astype(np.float32) - z) * s
        outs.append(y.reshape(-1).astype(np.float64))
    return np.stack(outs)


def sqnr(ref, got):
    import numpy as np
    noise = np.sum((ref - got) ** 2)
    return float("inf") if noise == 0 else float(10 * np.log10(np.sum(ref ** 2) / noise))


def dequantize_hybrid(float_path, out_path):
    """Writes `float_path` with its int8 constant weights (a dynamic-range "hybrid" model, as
    the float KWS model is) turned into float32, which TensorFlow's calibrator requires."""
    import numpy as np
    from tensorflow.lite.tools import flatbuffer_utils as fu
    from tensorflow.lite.python import schema_py_generated as schema
    m = fu.read_model_from_bytearray(bytearray(Path(float_path).read_bytes()))
    changed = False
    for sg in m.subgraphs:
        for t in sg.tensors:
            buf = m.buffers[t.buffer]
            if t.type != schema.TensorType.INT8 or buf.data is None or len(buf.data) == 0 or t.quantization is None:
                continue
            q = np.frombuffer(bytes(bytearray(buf.data)), np.int8).astype(np.float32).reshape(t.shape)
            scale = np.array(t.quantization.scale, np.float32)
            zp = np.array(t.quantization.zeroPoint, np.float32)
            if scale.size > 1:
                shape = [1] * q.ndim
                shape[t.quantization.quantizedDimension] = scale.size
                scale, zp = scale.reshape(shape), zp.reshape(shape)
            buf.data = np.frombuffer(((q - zp) * scale).astype(np.float32).tobytes(), np.uint8)
            t.type = schema.TensorType.FLOAT32
            t.quantization = None
            changed = True
    if not changed:
        return Path(float_path)
    fu.write_model(m, str(out_path))
    return Path(out_path)


def unpack_int4(path, out_path):
    """Writes `path` with its INT4 constants stored as INT8 (same values and scales)."""
    import numpy as np
    from tensorflow.lite.tools import flatbuffer_utils as fu
    from tensorflow.lite.python import schema_py_generated as schema
    m = fu.read_model_from_bytearray(bytearray(Path(path).read_bytes()))
    for sg in m.subgraphs:
        for t in sg.tensors:
            if t.type != schema.TensorType.INT4:
                continue
            b = np.array(m.buffers[t.buffer].data, np.uint8)
            v = np.empty(b.size * 2, np.int16)
            v[0::2], v[1::2] = b & 0x0F, b >> 4
            v = np.where(v >= 8, v - 16, v).astype(np.int8)[:int(np.prod(t.shape))]
            m.buffers[t.buffer].data = np.frombuffer(v.tobytes(), np.uint8)
            t.type = schema.TensorType.INT8
    fu.write_model(m, str(out_path))
    return Path(out_path)


def tf_ptq_from_tflite(float_path, calib, out_path, int16=False):
    import numpy as np
    import tensorflow as tf
    from tensorflow.lite.python.optimize import calibrator
    c = calibrator.Calibrator(Path(float_path).read_bytes())

    def gen():
        for x in calib:
            yield [x[None].astype(np.float32)]
    t = tf.int16 if int16 else tf.int8
    q = c.calibrate_and_quantize(gen, t, t, False, t)
    Path(out_path).write_bytes(q)


def corpus_models(names, tmp, calib_n, held_n, int16=False):
    """Builds each corpus architecture; yields (name, float path, TF int8 path, calib, held)."""
    import numpy as np
    import tensorflow as tf
    sys.path.insert(0, str(REPO / "test" / "corpus"))
    import make_corpus as mc
    import tf_keras as keras
    by_name = {m["name"]: m for m in mc.MODELS}
    for name in names:
        spec = by_name.get(name)
        if spec is None:
            print("skip %s: not in make_corpus.py" % name, file=sys.stderr)
            continue
        keras.utils.set_random_seed(spec["seed"] % (2 ** 31))
        model = spec["build"](spec["shape"])
        mc.apply_weights(model, spec["weights"], spec["seed"])
        rng = np.random.default_rng(spec["seed"] + 1)
        lo, hi = spec["input_range"]
        mc.calibrate_batchnorm(model, rng.uniform(lo, hi, size=(16,) + spec["shape"]).astype("float32"))
        calib = smooth_samples(np.random.default_rng(11), spec["shape"], calib_n, lo, hi)
        held = smooth_samples(np.random.default_rng(12), spec["shape"], held_n, lo, hi)
        fn = tf.function(lambda x: model(x, training=False),
                         input_signature=[tf.TensorSpec((1,) + spec["shape"], tf.float32)])
        conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], model)
        fpath = tmp / (name + "_float.tflite")
        fpath.write_bytes(conv.convert())
        conv = tf.lite.TFLiteConverter.from_concrete_functions([fn.get_concrete_function()], model)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([x[None]] for x in calib)
        if int16:
            conv.target_spec.supported_ops = [
                tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
            conv.inference_input_type = conv.inference_output_type = tf.int16
        else:
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = conv.inference_output_type = tf.int8
        qpath = tmp / (name + "_tf_int8.tflite")
        qpath.write_bytes(conv.convert())
        yield name, "corpus (random weights)", fpath, qpath, calib, held


def tf_path_absent(row):
    return row.get("tf_error", "").startswith("no TensorFlow counterpart")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mica", default=str(REPO / "build" / "fast" / "bin" / "mica"))
    ap.add_argument("--shared", default=str(REPO.parent / "shared"))
    ap.add_argument("--refs-python", default="/work/venvs/refs/bin/python")
    ap.add_argument("--vela", default="/work/venvs/refs/bin/vela")
    ap.add_argument("--calibration", type=int, default=64)
    ap.add_argument("--held-out", type=int, default=64)
    ap.add_argument("--tflm-samples", type=int, default=8)
    ap.add_argument("--corpus", nargs="*", default=CORPUS)
    ap.add_argument("--mlperf", nargs="*", default=list(MLPERF))
    ap.add_argument("--scheme", choices=["a8w8", "a16w8", "a8w4"], default="a8w8",
                    help="a16w8: TensorFlow's 16x8 mode against mica's --scheme a16w8; a8w4: "
                         "mica only (TensorFlow's converter has no int4 PTQ), measured on an int8 "
                         "unpacking of the int4 weights, TFLite Micro running the int4 file")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    import numpy as np
    import tensorflow as tf
    tmp = Path(tempfile.mkdtemp(prefix="mica_compare_tf_"))
    shared = Path(args.shared)
    if not (shared / "models").exists():
        shared = Path("/work/shared")

    jobs = []
    orig_sha = {}  # the shipped file, when the quantizers got a dequantized copy
    for name in args.mlperf:
        fpath = shared / "models" / "mlperf-tiny" / (name + "_float.tflite")
        if not fpath.exists():
            continue
        orig_sha[name] = sha256(fpath)
        fpath = dequantize_hybrid(fpath, tmp / (name + "_float32.tflite"))
        it = tf.lite.Interpreter(model_path=str(fpath))
        shape = tuple(it.get_input_details()[0]["shape"][1:])
        lo, hi = MLPERF[name]
        calib = smooth_samples(np.random.default_rng(1), shape, args.calibration, lo, hi)
        held = smooth_samples(np.random.default_rng(2), shape, args.held_out, lo, hi)
        qpath = tmp / (name + "_tf_int8.tflite")
        if args.scheme == "a8w4":
            qpath = None
        else:
            tf_ptq_from_tflite(fpath, calib, qpath, args.scheme == "a16w8")
        jobs.append((name, "MLPerf Tiny (trained)", fpath, qpath, calib, held))
    jobs_iter = list(jobs) + list(corpus_models(args.corpus, tmp, args.calibration, args.held_out,
                                                  args.scheme == "a16w8"))

    vela_version = subprocess.run([args.vela, "--version"], capture_output=True, text=True).stdout.strip()
    tflm_version = subprocess.run(
        [args.refs_python, "-c", "import importlib.metadata as m; print(m.version('tflite-micro'))"],
        capture_output=True, text=True).stdout.strip()
    rows = []
    for name, source, fpath, tf_path, calib, held in jobs_iter:
        if args.scheme == "a8w4":
            tf_path = None
        d = tmp / name
        d.mkdir(exist_ok=True)
        np.save(d / "calibration.npy", calib)
        mica_path = d / "mica_int8.tflite"
        r = subprocess.run([args.mica, "quantize", str(fpath), "--calibration", str(d / "calibration.npy"),
                            "-o", str(mica_path), "--scheme", args.scheme, "--json"],
                           capture_output=True, text=True)
        row = {"model": name, "source": source, "model_sha256": orig_sha.get(name, sha256(fpath)),
               "quantized_from_sha256": sha256(fpath),
               "calibration_samples": len(calib), "held_out_samples": len(held)}
        if r.returncode != 0:
            row["mica_error"] = r.stderr.strip()
            rows.append(row)
            print("%s: mica failed: %s" % (name, r.stderr.strip()), file=sys.stderr)
            continue
        rep = json.loads(r.stdout)
        row["mica_fallbacks"] = [f["kind"] for f in rep["fallbacks"]]
        ref = run_tflite(fpath, held)
        # int4: LiteRT and `mica run` take the int8 unpacking (same values); TFLite Micro the file.
        eval_path = unpack_int4(mica_path, d / "mica_int4_as_int8.tflite") if args.scheme == "a8w4" else mica_path
        got_m = run_tflite(eval_path, held)
        got_t = None
        if tf_path is None:
            row["tf_error"] = "no TensorFlow counterpart for this scheme"
        else:
            try:
                got_t = run_tflite(tf_path, held)
            except RuntimeError as e:  # TensorFlow's own file may not run (16x8 calibrator)
                row["tf_error"] = str(e).strip().splitlines()[0][:300]
        row["mica_sqnr_db"] = round(sqnr(ref, got_m), 2)
        if got_t is not None:
            row["tf_sqnr_db"] = round(sqnr(ref, got_t), 2)
            row["delta_db"] = round(row["mica_sqnr_db"] - row["tf_sqnr_db"], 2)
        if ref.shape[1] > 1 and "autoencoder" not in name:
            row["mica_top1"] = float(np.mean(ref.argmax(1) == got_m.argmax(1)))
            if got_t is not None:
                row["tf_top1"] = float(np.mean(ref.argmax(1) == got_t.argmax(1)))
        # TFLite Micro vs `mica run` on held-out inputs (integers, as the file takes them).
        import tensorflow as tf2  # noqa: F401
        it = tf.lite.Interpreter(model_path=str(mica_path))
        idet = it.get_input_details()[0]
        s, z = idet["quantization"]
        n = min(args.tflm_samples, len(held))
        equal = True
        for k in range(n):
            info = np.iinfo(idet["dtype"])
            x = np.clip(np.round(held[k] / s) + z, info.min, info.max).astype(idet["dtype"]).reshape(idet["shape"])
            np.save(d / ("in_%d.npy" % k), x)
            rr = subprocess.run([args.mica, "run", str(eval_path), "--input", str(d / ("in_%d.npy" % k)),
                                 "--output-dir", str(d / ("run_%d" % k))], capture_output=True, text=True)
            if rr.returncode != 0:
                equal = False
                row["mica_run_error"] = rr.stderr.strip()
                break
        tw = subprocess.run([args.refs_python, "-c", TFLM_WORKER, str(mica_path), str(n), str(d)],
                            capture_output=True, text=True)
        if tw.returncode != 0:
            row["tflm_error"] = tw.stderr.strip()[-300:]
            equal = False
        elif equal:
            for k in range(n):
                a = np.load(d / ("tflm_%d.npy" % k)).tobytes()
                b = np.load(d / ("run_%d" % k) / "output_0.npy").tobytes()
                equal &= a == b
        row["tflm_equal_mica_run"] = equal
        row["tflm_samples"] = n
        for who, path in (("mica", mica_path), ("tf", tf_path)):
            if path is None:
                continue
            v = subprocess.run([args.vela, str(path), "--output-dir", str(d / ("vela_" + who)),
                                "--accelerator-config", "ethos-u55-128"], capture_output=True, text=True)
            row[who + "_vela_ok"] = v.returncode == 0
            if v.returncode != 0:
                row[who + "_vela_error"] = (v.stderr or v.stdout).strip()[-300:]
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)

    doc = {"tool": "test/quant/tools/compare_tf.py", "tensorflow": tf.__version__,
           "tflite_micro": tflm_version, "vela": vela_version,
           "data": "synthetic smooth random fields (no real data set offline); calibration seed 1/11, "
                   "held-out seed 2/12", "scheme": args.scheme + ", integer I/O, mica defaults (minmax observer)",
           "rows": rows}
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print("| model | source | mica SQNR dB | TF SQNR dB | mica - TF | top-1 mica / TF | TFLM == mica run | Vela mica / TF |")
    print("|---|---|---:|---:|---:|---|---|---|")
    for r in rows:
        if "mica_sqnr_db" not in r:
            print("| %s | %s | error: %s | | | | | |" % (r["model"], r["source"], r.get("mica_error", "")[:60]))
            continue
        tf_top = ("%.3f" % r["tf_top1"]) if "tf_top1" in r else "-"
        top = ("%.3f / %s" % (r["mica_top1"], tf_top)) if "mica_top1" in r else "n/a"
        tf_sqnr = ("%.1f" % r["tf_sqnr_db"]) if "tf_sqnr_db" in r else (
            "-" if tf_path_absent(r) else "TF file fails in LiteRT")
        delta = ("%+.1f" % r["delta_db"]) if "delta_db" in r else "-"
        print("| %s | %s | %.1f | %s | %s | %s | %s | %s / %s |" % (
            r["model"], r["source"], r["mica_sqnr_db"], tf_sqnr, delta, top,
            "yes (%d inputs)" % r["tflm_samples"] if r["tflm_equal_mica_run"] else "NO",
            "ok" if r["mica_vela_ok"] else "FAIL",
            "-" if "tf_vela_ok" not in r else "ok" if r["tf_vela_ok"] else "FAIL"))


if __name__ == "__main__":
    main()
