#!/usr/bin/env python3
"""Writes a few real-shaped float ONNX models (built with onnx.helper) for manual checks of
mica's ONNX importer:

    pip install onnx numpy
    python3 test/tools/onnx_models.py OUT_DIR
    build/release/bin/mica inspect OUT_DIR/mobilenet_block.onnx

Models (seeded weights, NCHW as PyTorch exports them):
  mobilenet_block.onnx  conv3x3/s2 + BN + ReLU6(Clip), depthwise 3x3 + BN + ReLU6, pointwise
                        conv + BN, global average pool, flatten, Gemm, Softmax (opset 13)
  ds_cnn_kws.onnx       DS-CNN keyword spotting shape (1x1x49x10): conv 10x4/s2 with explicit
                        asymmetric pads, 2 depthwise-separable blocks, AveragePool, Flatten, Gemm
                        (opset 11, Clip min/max as inputs)
  mlp_autoencoder.onnx  640-128-128-8-128-128-640 MatMul+Add+Relu stack (opset 9, BN1d in
                        the middle)
  resnet_block.onnx     conv/BN/ReLU x2 with a residual Add and a 1x1 strided shortcut,
                        MaxPool with pads, Concat, opset 7 Clip attributes
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(1234)


def init(name, *shape, scale=0.1):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def bn(prefix, c, x, y, nodes, inits):
    inits += [numpy_helper.from_array(RNG.uniform(0.5, 1.5, c).astype(np.float32), prefix + "_s"),
              init(prefix + "_b", c), init(prefix + "_m", c),
              numpy_helper.from_array(RNG.uniform(0.5, 2.0, c).astype(np.float32), prefix + "_v")]
    nodes.append(helper.make_node("BatchNormalization",
                                  [x, prefix + "_s", prefix + "_b", prefix + "_m", prefix + "_v"],
                                  [y], name=prefix))


def relu6(x, y, nodes, inits, opset):
    if opset < 11:
        nodes.append(helper.make_node("Clip", [x], [y], min=0.0, max=6.0, name=y))
    else:
        if not any(i.name == "zero" for i in inits):
            inits += [numpy_helper.from_array(np.array(0, np.float32), "zero"),
                      numpy_helper.from_array(np.array(6, np.float32), "six")]
        nodes.append(helper.make_node("Clip", [x, "zero", "six"], [y], name=y))


def save(path, nodes, inits, inputs, outputs, opset):
    graph = helper.make_graph(nodes, os.path.basename(path), inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="mica-onnx_models.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, path)
    print("wrote", path)


def mobilenet_block(out):
    n, i = [], []
    i += [init("w1", 8, 3, 3, 3), init("dw", 8, 1, 3, 3), init("pw", 16, 8, 1, 1),
          init("fc_w", 10, 16), init("fc_b", 10)]
    n.append(helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]))
    bn("bn1", 8, "c1", "b1", n, i)
    relu6("b1", "r1", n, i, 13)
    n.append(helper.make_node("Conv", ["r1", "dw"], ["c2"], pads=[1, 1, 1, 1], group=8))
    bn("bn2", 8, "c2", "b2", n, i)
    relu6("b2", "r2", n, i, 13)
    n.append(helper.make_node("Conv", ["r2", "pw"], ["c3"]))
    bn("bn3", 16, "c3", "b3", n, i)
    n.append(helper.make_node("GlobalAveragePool", ["b3"], ["gap"]))
    n.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    n.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    n.append(helper.make_node("Softmax", ["logits"], ["prob"]))
    save(os.path.join(out, "mobilenet_block.onnx"), n, i,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 96, 96])],
         [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 10])], 13)


def ds_cnn(out):
    n, i = [], []
    i += [init("w0", 64, 1, 10, 4), init("b0", 64)]
    n.append(helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[4, 1, 5, 2],
                              strides=[2, 2]))
    relu6("c0", "r0", n, i, 11)
    prev = "r0"
    for k in range(2):
        i += [init(f"dw{k}", 64, 1, 3, 3), init(f"pw{k}", 64, 64, 1, 1)]
        n.append(helper.make_node("Conv", [prev, f"dw{k}"], [f"d{k}"], pads=[1, 1, 1, 1],
                                  group=64))
        bn(f"bnd{k}", 64, f"d{k}", f"bd{k}", n, i)
        n.append(helper.make_node("Relu", [f"bd{k}"], [f"rd{k}"]))
        n.append(helper.make_node("Conv", [f"rd{k}", f"pw{k}"], [f"p{k}"]))
        bn(f"bnp{k}", 64, f"p{k}", f"bp{k}", n, i)
        n.append(helper.make_node("Relu", [f"bp{k}"], [f"rp{k}"]))
        prev = f"rp{k}"
    n.append(helper.make_node("AveragePool", [prev], ["pool"], kernel_shape=[25, 5]))
    n.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    i += [init("fc", 64, 12), init("fcb", 12)]
    n.append(helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"]))
    save(os.path.join(out, "ds_cnn_kws.onnx"), n, i,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 49, 10])],
         [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 12])], 11)


def autoencoder(out):
    n, i = [], []
    dims = [640, 128, 128, 8, 128, 128, 640]
    prev = "x"
    for k in range(len(dims) - 1):
        i += [init(f"w{k}", dims[k], dims[k + 1]), init(f"b{k}", dims[k + 1])]
        n.append(helper.make_node("MatMul", [prev, f"w{k}"], [f"m{k}"]))
        n.append(helper.make_node("Add", [f"m{k}", f"b{k}"], [f"a{k}"]))
        if k == 2:
            bn("bn_mid", dims[k + 1], f"a{k}", f"n{k}", n, i)
            prev = f"n{k}"
        elif k < len(dims) - 2:
            n.append(helper.make_node("Relu", [f"a{k}"], [f"r{k}"]))
            prev = f"r{k}"
        else:
            prev = f"a{k}"
    n.append(helper.make_node("Identity", [prev], ["y"]))
    save(os.path.join(out, "mlp_autoencoder.onnx"), n, i,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 640])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 640])], 9)


def resnet_block(out):
    n, i = [], []
    i += [init("w1", 16, 16, 3, 3), init("w2", 16, 16, 3, 3), init("ws", 16, 16, 1, 1)]
    n.append(helper.make_node("MaxPool", ["x"], ["mp"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]))
    n.append(helper.make_node("Conv", ["mp", "w1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]))
    bn("bn1", 16, "c1", "b1", n, i)
    n.append(helper.make_node("Relu", ["b1"], ["r1"]))
    n.append(helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]))
    bn("bn2", 16, "c2", "b2", n, i)
    n.append(helper.make_node("Conv", ["mp", "ws"], ["sc"], strides=[2, 2]))
    n.append(helper.make_node("Add", ["b2", "sc"], ["sum"]))
    relu6("sum", "r2", n, i, 7)
    n.append(helper.make_node("Concat", ["r2", "sc"], ["cat"], axis=1))
    save(os.path.join(out, "resnet_block.onnx"), n, i,
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
         [helper.make_tensor_value_info("cat", TensorProto.FLOAT, [1, 32, 8, 8])], 7)


if __name__ == "__main__":
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    mobilenet_block(out)
    ds_cnn(out)
    autoencoder(out)
    resnet_block(out)
