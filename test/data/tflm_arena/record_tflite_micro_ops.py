# Writes int8 one-operator models of operators the model corpus does not have (ops/<OP>.tflite:
# activations 1x8x8x16, scale 0.05, zero point -3; constant operands where the operator takes
# them) and records tflite-micro's (host, 64-bit) arena report for each: one CSV row per model on
# stdout. RELU and RSQRT, which the corpus has, are in as a check of the construction.
#   python record_tflite_micro_ops.py > tflite_micro_host_ops.csv
import hashlib, importlib.metadata as md, os, re, sys
import flatbuffers
import numpy as np
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S

HERE = os.path.dirname(os.path.abspath(__file__))
B, O, T = S.BuiltinOperator, S.BuiltinOptions, S.TensorType
I8, I32 = T.INT8, T.INT32
X = [1, 8, 8, 16]


def opt(cls, **fields):
    o = cls()
    for k, v in fields.items():
        setattr(o, k, v)
    return o


def unary(op):
    return (op, [(X, I8, None)], [(X, I8)], 0, None)


# name: (operator, inputs [(shape, type, constant data or None)], outputs [(shape, type)],
#        options type, options)
SPECS = {
    "ABS": unary(B.ABS), "NEG": unary(B.NEG), "SQRT": unary(B.SQRT), "LOG": unary(B.LOG),
    "RELU6": unary(B.RELU6), "RELU": unary(B.RELU), "RSQRT": unary(B.RSQRT),
    "SQUEEZE": (B.SQUEEZE, [(X, I8, None)], [([8, 8, 16], I8)], O.SqueezeOptions,
                opt(S.SqueezeOptionsT, squeezeDims=[0])),
    "EXPAND_DIMS": (B.EXPAND_DIMS, [([8, 8, 16], I8, None), ([1], I32, np.array([0], np.int32))],
                    [(X, I8)], O.ExpandDimsOptions, opt(S.ExpandDimsOptionsT)),
    "DIV": (B.DIV, [(X, I8, None), (X, I8, None)], [(X, I8)], O.DivOptions,
            opt(S.DivOptionsT, fusedActivationFunction=0)),
    "SUM": (B.SUM, [(X, I8, None), ([2], I32, np.array([1, 2], np.int32))], [([1, 1, 1, 16], I8)],
            O.ReducerOptions, opt(S.ReducerOptionsT, keepDims=True)),
    "PADV2": (B.PADV2, [(X, I8, None),
                        ([4, 2], I32, np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32)),
                        ([1], I8, np.array([-3], np.int8))],
              [([1, 10, 10, 16], I8)], O.PadV2Options, opt(S.PadV2OptionsT)),
    "SLICE": (B.SLICE, [(X, I8, None), ([4], I32, np.array([0, 2, 2, 0], np.int32)),
                        ([4], I32, np.array([1, 4, 4, 16], np.int32))],
              [([1, 4, 4, 16], I8)], O.SliceOptions, opt(S.SliceOptionsT)),
    "GATHER": (B.GATHER, [([10, 16], I8, None), ([4], I32, np.array([0, 3, 5, 9], np.int32))],
               [([4, 16], I8)], O.GatherOptions, opt(S.GatherOptionsT, axis=0, batchDims=0)),
    "PACK": (B.PACK, [([8, 16], I8, None), ([8, 16], I8, None)], [([2, 8, 16], I8)],
             O.PackOptions, opt(S.PackOptionsT, valuesCount=2, axis=0)),
    "SPACE_TO_DEPTH": (B.SPACE_TO_DEPTH, [(X, I8, None)], [([1, 4, 4, 64], I8)],
                       O.SpaceToDepthOptions, opt(S.SpaceToDepthOptionsT, blockSize=2)),
    "DEPTH_TO_SPACE": (B.DEPTH_TO_SPACE, [(X, I8, None)], [([1, 16, 16, 4], I8)],
                       O.DepthToSpaceOptions, opt(S.DepthToSpaceOptionsT, blockSize=2)),
    "ARG_MAX": (B.ARG_MAX, [(X, I8, None), ([1], I32, np.array([3], np.int32))],
                [([1, 8, 8], I32)], O.ArgMaxOptions, opt(S.ArgMaxOptionsT, outputType=I32)),
    "ARG_MIN": (B.ARG_MIN, [(X, I8, None), ([1], I32, np.array([3], np.int32))],
                [([1, 8, 8], I32)], O.ArgMinOptions, opt(S.ArgMinOptionsT, outputType=I32)),
    "MINIMUM": (B.MINIMUM, [(X, I8, None), (X, I8, None)], [(X, I8)],
                O.MaximumMinimumOptions, opt(S.MaximumMinimumOptionsT)),
}


def tensor(shape, ttype, buf, name):
    t = S.TensorT()
    t.shape, t.type, t.buffer, t.name = list(shape), ttype, buf, name
    if ttype == I8:
        t.quantization = S.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [0.05], [-3]
    return t


def model(op, ins, outs, options_type, options):
    code = S.OperatorCodeT()
    code.builtinCode, code.deprecatedBuiltinCode, code.version = op, min(op, 127), 1
    buffers, tensors, inputs, graph_inputs, outputs = [S.BufferT()], [], [], [], []
    for i, (shape, ttype, data) in enumerate(ins):
        buf = 0
        if data is not None:
            b = S.BufferT()
            b.data = list(np.asarray(data).tobytes())
            buffers.append(b)
            buf = len(buffers) - 1
        tensors.append(tensor(shape, ttype, buf, f"in{i}"))
        inputs.append(len(tensors) - 1)
        if data is None:
            graph_inputs.append(len(tensors) - 1)
    for i, (shape, ttype) in enumerate(outs):
        tensors.append(tensor(shape, ttype, 0, f"out{i}"))
        outputs.append(len(tensors) - 1)
    o = S.OperatorT()
    o.opcodeIndex, o.inputs, o.outputs = 0, inputs, outputs
    if options is not None:
        o.builtinOptionsType, o.builtinOptions = options_type, options
    sg = S.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs, sg.operators = tensors, graph_inputs, outputs, [o]
    m = S.ModelT()
    m.version, m.operatorCodes, m.subgraphs, m.buffers = 3, [code], [sg], buffers
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def report(data):
    it = runtime.Interpreter.from_bytes(data)
    r, w = os.pipe()
    saved = os.dup(2); sys.stderr.flush(); os.dup2(w, 2)
    it.print_allocations(); sys.stdout.flush()
    os.dup2(saved, 2); os.close(w)
    text = os.read(r, 1 << 16).decode(); os.close(r)
    g = lambda key: re.search(rf"Arena allocation {key} (\d+)", text).group(1)
    return g("head"), g("tail"), g("total")


print("model,sha256,tool,tool_version,head_bytes,tail_bytes,total_bytes")
os.makedirs(os.path.join(HERE, "ops"), exist_ok=True)
for name, spec in SPECS.items():
    data = model(*spec)
    with open(os.path.join(HERE, "ops", name + ".tflite"), "wb") as f:
        f.write(data)
    head, tail, total = report(data)
    print(f"{name},{hashlib.sha256(data).hexdigest()},tflite-micro,{md.version('tflite-micro')},"
          f"{head},{tail},{total}")
