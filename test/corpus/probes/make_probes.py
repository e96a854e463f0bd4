#!/usr/bin/env python3
"""Write the Ethos-U probe graphs: one- or two-operator models that isolate one behaviour of Vela.

The corpus (test/corpus/models) says how far mica is from Vela on whole models; a probe says why.
Each probe is a float ONNX graph written here and quantized by mica itself (`mica quantize`,
int8 or int16x8, random calibration), so every byte is reproducible from this script, a mica
binary and the `onnx` + `numpy` packages (pip; mica never runs this). A few probes are then
patched in one weight byte (the -128 probes: symmetric quantization never writes -128).

Vela's answers for the probes are recorded like the corpus's (test/corpus/tools/record_vela.py
--source probes --root test/corpus/probes --out test/corpus/probes/reference) and
test/estimate/ethos_u_probes_test.cc compares mica with them without Vela installed.
manifest.csv lists each probe, what it isolates, and how close mica claims to be: `tolerance`
is the largest |error| of the total cycles over every profile and configuration the test
accepts (percent; the behaviour the probe isolates is modelled, the residual is named in
`what`), empty for a known gap (what Vela does that mica does not).

usage: make_probes.py --mica build/release/bin/mica [--out test/corpus/probes]
"""

import argparse
import csv
import hashlib
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name, builder, scheme, io, tolerance (percent, None for a known gap), what it isolates
PROBES = []


def probe(name, scheme, io, tolerance, what):
    def register(fn):
        PROBES.append((name, fn, scheme, io, tolerance, what))
        return fn
    return register


def save(name, nodes, inputs, outputs, inits, path):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), str(path))


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def binary(op, shape_a, shape_b):
    def build(name, path):
        out = [max(x, y) for x, y in zip(shape_a, shape_b)]
        save(name, [helper.make_node(op, ["a", "b"], ["y"])],
             [vi("a", shape_a), vi("b", shape_b)], [vi("y", out)], [], path)
    return build


def conv(h, w, cin, cout, k, stride=1, pad=0, relu=False, seed=1):
    def build(name, path):
        rng = np.random.default_rng(seed)
        wt = numpy_helper.from_array(rng.laplace(0, 0.1, (cout, cin, k, k)).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(cout, np.float32), "b")
        oh = (h + 2 * pad - k) // stride + 1
        ow = (w + 2 * pad - k) // stride + 1
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c" if relu else "y"],
                                  strides=[stride, stride], pads=[pad] * 4, kernel_shape=[k, k])]
        if relu:
            nodes.append(helper.make_node("Relu", ["c"], ["y"]))
        save(name, nodes, [vi("x", [1, cin, h, w])], [vi("y", [1, cout, oh, ow])], [wt, b], path)
    return build


# U85 binary elementwise ops with every map in DRAM (graph inputs and output, Dedicated_Sram):
# both operands stream through the IFM-stream channel; a broadcast operand is read once.
for n, op, a, b in [
        ("ew_add_64x64x8", "Add", [1, 8, 64, 64], [1, 8, 64, 64]),
        ("ew_add_32x32x32", "Add", [1, 32, 32, 32], [1, 32, 32, 32]),
        ("ew_add_32x32x64", "Add", [1, 64, 32, 32], [1, 64, 32, 32]),
        ("ew_mul_48x48x16", "Mul", [1, 16, 48, 48], [1, 16, 48, 48]),
        ("ew_add_bcast_32x32x16", "Add", [1, 16, 32, 32], [1, 16, 1, 1])]:
    probe(n, "a8w8", "int8", 1.0, f"{op} of two graph inputs {a[2]}x{a[3]}x{a[1]}"
          + (" and a 1x1 broadcast" if b[2] == 1 else ""))(binary(op, a, b))
for n, op, a, b in [
        ("ew_add_bcast_32x32x32", "Add", [1, 32, 32, 32], [1, 32, 1, 1]),
        ("ew_mul_bcast_24x24x48", "Mul", [1, 48, 24, 24], [1, 48, 1, 1])]:
    probe(n, "a8w8", "int8", None,
          f"{op} with a 1x1 broadcast, depth {a[1]} > 16: on U85 Vela reads the full operand "
          "in 16-byte pieces and its NPU cycles rise on 512+ MACs (a block rule mica lacks)"
          )(binary(op, a, b))

# U85 2:4 sparse weights: a 7x7 kernel over a 2-channel IFM is half padding in every group of
# four channels, so Vela encodes it sparse (half the MAC cycles) unless a weight is -128.
probe("sparse_k7_c2_i16", "a16w8", "int8", 4.0,
      "int16 7x7 conv of a 2-channel IFM: 2:4 sparse on U85 (U85-2048 -3.5 %)")(conv(8, 166, 2, 8, 7))
probe("sparse_k7_c2_i16_m128", "a16w8", "int8", 7.0,
      "the same with one weight -128: dense on U85, twice the MAC cycles (U85-128 -6.5 %)")(conv(8, 166, 2, 8, 7))
probe("sparse_k7_c2_i8_m128", "a8w8", "int8", 1.5,
      "int8 7x7 conv of a 2-channel IFM with one weight -128: dense on U85")(conv(16, 40, 2, 16, 7))

# Convolutions by IFM depth (U55/U65/U85 MAC cycles, traversal, IFM from DRAM or SRAM).
for cin, tol, note in ((2, 1.0, ""), (8, 1.0, ""), (16, 1.0, ""), (32, 1.0, "")):
    probe(f"conv_k3_c{cin}_i8", "a8w8", "int8", tol,
          f"int8 3x3 conv of a {cin}-channel graph input{note}")(conv(16, 40, cin, 16, 3))
probe("conv_k3_c8_i16", "a16w8", "int8", 6.0,
      "int16 3x3 conv of an 8-channel graph input (U55-32/64 -3/-6 %)")(conv(16, 40, 8, 16, 3))

# Strides above 3: one stride-1 convolution per OFM element.
probe("conv_s4_k4_c3", "a8w8", "int8", 16.0,
      "4x4 stride-4 conv (a patchify stem): Vela runs 64 stride-1 convolutions, one per OFM "
      "element (mica's per-operation overhead is low by ~4 % on U55 and by 15 % on U85-128, "
      "1457 against 1720 cycles per operation; the other U85 profiles within 1.2 %)")(conv(32, 32, 3, 24, 4, stride=4))
probe("conv_s5_k5_c3", "a8w8", "int8", 9.0,
      "5x5 stride-5 conv: one stride-1 convolution per OFM element (low by up to 8.6 %)")(conv(40, 40, 3, 16, 5, stride=5))


def fully_connected(rows, cin, cout, seed=4):
    def build(name, path):
        rng = np.random.default_rng(seed)
        w = numpy_helper.from_array(rng.laplace(0, 0.1, (cin, cout)).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(cout, np.float32), "b")
        nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
                 helper.make_node("Add", ["m", "b"], ["y"])]
        save(name, nodes, [vi("x", [1, rows, cin])], [vi("y", [1, rows, cout])], [w, b], path)
    return build


# A FULLY_CONNECTED over many rows: Vela runs the rows as an H x W map (mica too); what its
# weights cost per block of rows is not modelled yet.
probe("fc_rows_200", "a8w8", "int8", None,
      "FC of 200 rows (a 10x20 map to Vela): mica's weight refetch / buffering across row "
      "blocks differs (U55-256 +45 %; U85 up to +330 % since FCs take the part-kernel "
      "traversal there)")(fully_connected(200, 32, 32))

def pad_then_maxpool(h, c, p):
    def build(name, path):
        pads = numpy_helper.from_array(np.array([0, 0, p, p, 0, 0, p, p], np.int64), "pads")
        oh = (h + 2 * p - 3) // 2 + 1
        nodes = [helper.make_node("Pad", ["x", "pads"], ["padded"]),
                 helper.make_node("MaxPool", ["padded"], ["y"], kernel_shape=[3, 3],
                                  strides=[2, 2])]
        save(name, nodes, [vi("x", [1, c, h, h])], [vi("y", [1, c, oh, oh])], [pads], path)
    return build


# A PAD that is neither folded into its consumer nor written in place by its producer (its
# input is a graph input): a copy of the IFM into the interior and one copy per padded side.
probe("pad_then_maxpool", "a8w8", "int8", None,
      "PAD of a graph input before a 3x3/2 max pool: Vela copies the interior and each border "
      "(five MemoryCopy rows; mica too: U55/U65 within 2 %); the gap is U85's memory copy of "
      "an 8-deep NHWC map from DRAM (U85-256 +18 %, U85-2048 -53 %)")(pad_then_maxpool(31, 8, 1))

def conv1x1_pair(h, c0, c, seed=7):
    def build(name, path):
        rng = np.random.default_rng(seed)
        w1 = numpy_helper.from_array(rng.laplace(0, 0.2, (c, c0, 1, 1)).astype(np.float32), "w1")
        b1 = numpy_helper.from_array(np.zeros(c, np.float32), "b1")
        w2 = numpy_helper.from_array(rng.laplace(0, 0.2, (16, c, 1, 1)).astype(np.float32), "w2")
        b2 = numpy_helper.from_array(np.zeros(16, np.float32), "b2")
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["a"], kernel_shape=[1, 1]),
                 helper.make_node("Relu", ["a"], ["r"]),
                 helper.make_node("Conv", ["r", "w2", "b2"], ["y"], kernel_shape=[1, 1])]
        save(name, nodes, [vi("x", [1, c0, h, h])], [vi("y", [1, 16, h, h])],
             [w1, b1, w2, b2], path)
    return build


# A convolution to fewer than 8 channels with a fused ReLU: Vela runs the ReLU as an operation
# of its own (a Relu row in its tables for 1…7 channels, none from 8 on).
probe("conv_to_2ch_relu", "a8w8", "int8", None,
      "1x1 conv 16 -> 2 channels with a fused ReLU, then 2 -> 16: Vela splits the ReLU into a "
      "pass of its own (U55-256: 512 cycles for 16x16x2), and so does mica; left: U65 "
      "(Dedicated_Sram) -29 %, U85-2048 -10 %, U55 and U85-256 within 5 %"
      )(conv1x1_pair(16, 16, 2))
probe("conv_to_8ch_relu", "a8w8", "int8", 17.0,
      "the same to 8 channels: the ReLU stays fused (U55/U65 within 1 %; U85-128/256 low by "
      "up to 16 %: its first convolution's DRAM traffic)")(conv1x1_pair(16, 16, 8))

# A uint8 graph input: QUANTIZE (uint8 -> int8) then a 3x3 convolution of its 3-channel output.
probe("u8_quantize_conv_c3", "a8w8", "uint8", None,
      "uint8 input, QUANTIZE, 3x3 conv of the 3-channel intermediate: on U65 (Dedicated_Sram) "
      "Vela's conv costs 1.4-2.5x mica's, not by MAC cycles nor by the IFM's latency "
      "(probed: same block, same traffic; Shared_Sram agrees)")(conv(32, 32, 3, 16, 3, pad=1, relu=True))

# 16-bit sigmoid and tanh keep their IFM's scale, and only a unit-scale activation fuses
# into its producer: each runs as an operation of its own (on U85 as Vela 5.2's interpolating
# 2 KiB LUT16).
def then_activation(producer, act, h, w, c, seed=5):
    def build(name, path):
        shape = [1, c, h, w]
        if producer == "Add":
            nodes = [helper.make_node("Add", ["a", "b"], ["t"]), helper.make_node(act, ["t"], ["y"])]
            save(name, nodes, [vi("a", shape), vi("b", shape)], [vi("y", shape)], [], path)
            return
        rng = np.random.default_rng(seed)
        wt = numpy_helper.from_array(rng.laplace(0, 0.1, (c, c, 1, 1)).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(c, np.float32), "b")
        nodes = [helper.make_node("Conv", ["a", "w", "b"], ["t"], kernel_shape=[1, 1]),
                 helper.make_node(act, ["t"], ["y"])]
        save(name, nodes, [vi("a", shape)], [vi("y", shape)], [wt, b], path)
    return build


probe("add_sigmoid_i16", "a16w8", "int8", 2.0,
      "int16 Add then Sigmoid of 32 elements: the sigmoid is an operation of its own "
      "(U85: a LUT16, ~2,400 of its ~2,600 cycles)")(then_activation("Add", "Sigmoid", 1, 1, 32))
probe("conv_tanh_i16", "a16w8", "int8", 2.0,
      "int16 1x1 conv then Tanh over 8x8x16: the tanh is not fused into the conv")(
          then_activation("Conv", "Tanh", 8, 8, 16))
probe("conv_sigmoid_i8", "a8w8", "int8", 2.0,
      "the int8 counterpart: the sigmoid (a LUT) fuses into the conv")(
          then_activation("Conv", "Sigmoid", 8, 8, 16))


# U85 native matmul of two activations (a transformer's attention scores): Vela costs it as
# a MAC operation, block by block like a 1x1 convolution.
def matmul(m, k, n):
    def build(name, path):
        nodes = [helper.make_node("Relu", ["a"], ["ra"]), helper.make_node("Relu", ["b"], ["rb"]),
                 helper.make_node("MatMul", ["ra", "rb"], ["y"])]
        save(name, nodes, [vi("a", [1, m, k]), vi("b", [1, k, n])], [vi("y", [1, m, n])], [],
             path)
    return build


probe("matmul_16x16x16", "a8w8", "int8", None,
      "MatMul of two 16x16 graph-input activations: U85 costs it as a MAC operation (exact "
      "inside the corpus transformers); with its operands and result in DRAM mica is low by "
      "4-24 % on U85 and up to 54 % on U65, whose decomposed matmul's DRAM scratch traffic "
      "it underestimates")(matmul(16, 16, 16))


# A softmax over the depth of a 64x64x4 map: Vela computes its temporaries on elementwise
# views but allocates them in their own shape, so in NHCWB16 the reduced map's 32-bit
# temporaries take 16 bytes of depth per element (256 KiB each here): under MLIA's 384 KiB
# cache most go to DRAM (--verbose-allocation).
def conv_softmax(h, w, cin, c, seed=11):
    def build(name, path):
        rng = np.random.default_rng(seed)
        wt = numpy_helper.from_array(rng.laplace(0, 0.1, (c, cin, 1, 1)).astype(np.float32), "w")
        b = numpy_helper.from_array(np.zeros(c, np.float32), "b")
        nodes = [helper.make_node("Conv", ["x", "w", "b"], ["t"], kernel_shape=[1, 1]),
                 helper.make_node("Softmax", ["t"], ["y"], axis=1)]
        save(name, nodes, [vi("x", [1, cin, h, w])], [vi("y", [1, c, h, w])], [wt, b], path)
    return build


probe("softmax_64x64x4_i8", "a8w8", "int8", 14.0,
      "int8 softmax over the depth of a 64x64x4 map (a segmentation head): its reduced-map "
      "temporaries stored 16-deep, most in DRAM under MLIA's cache (U55 exact, U65 +6..+7 %, "
      "U85 up to 13 %)")(conv_softmax(64, 64, 8, 4))
probe("softmax_64x64x4_i16", "a16w8", "int8", 9.0,
      "the int16 softmax of the same map (its sum - (1 << shift) chained into the SHL on U85; "
      "up to 8.6 %)")(conv_softmax(64, 64, 8, 4))


PATCH_MINUS_128 = {"sparse_k7_c2_i16_m128", "sparse_k7_c2_i8_m128"}


def set_one_weight_to_minus_128(path):
    """Sets the sixth byte of the (only) int8 conv filter to -128, in place."""
    from ethosu.vela.tflite.Model import Model  # a flatbuffer reader that is pip-installable
    buf = bytearray(path.read_bytes())
    m = Model.GetRootAsModel(bytes(buf), 0)
    sg = m.Subgraphs(0)
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if op.InputsLength() < 2:
            continue
        t = sg.Tensors(op.Inputs(1))
        if t.ShapeLength() != 4:
            continue
        data = m.Buffers(t.Buffer()).DataAsNumpy().tobytes()
        at = bytes(buf).find(data)
        if at < 0 or bytes(buf).find(data, at + 1) >= 0:
            raise SystemExit(f"error: {path}: filter bytes not unique in the file")
        buf[at + 5] = 0x80
        path.write_bytes(bytes(buf))
        return
    raise SystemExit(f"error: {path}: no 4-D filter")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mica", required=True, help="a mica binary (its quantize command)")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent))
    args = ap.parse_args()
    out = Path(args.out)
    (out / "models").mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, build, scheme, io, tolerance, what in PROBES:
            src = Path(tmp) / f"{name}.onnx"
            build(name, src)
            dst = out / "models" / f"{name}.tflite"
            subprocess.run([args.mica, "quantize", str(src), "--calibration", "random=4",
                            "--scheme", scheme, "--io", io, "-o", str(dst)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if name in PATCH_MINUS_128:
                set_one_weight_to_minus_128(dst)
            sha = hashlib.sha256(dst.read_bytes()).hexdigest()
            rows.append([name, f"models/{name}.tflite", sha,
                         "" if tolerance is None else f"{tolerance:g}", what])
            print(f"{name}: {dst.stat().st_size} bytes")
    with open(out / "manifest.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["name", "file", "sha256", "tolerance", "what"])
        w.writerows(rows)


if __name__ == "__main__":
    main()
