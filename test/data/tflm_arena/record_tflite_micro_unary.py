# Writes one-operator int8 models of the unary operators the model corpus does not have
# (unary/<OP>.tflite: input and output 1x8x8x16 int8, scale 0.05, zero point -3) and records
# tflite-micro's (host, 64-bit) arena report for each: one CSV row per model on stdout.
#   python record_tflite_micro_unary.py > tflite_micro_host_unary.csv
import hashlib, importlib.metadata as md, os, re, sys
import flatbuffers
from tflite_micro.python.tflite_micro import runtime
from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as S

OPS = ["ABS", "NEG", "SQRT", "LOG", "RELU6", "RELU", "RSQRT"]
HERE = os.path.dirname(os.path.abspath(__file__))


def model(op):
    code = S.OperatorCodeT()
    code.builtinCode = getattr(S.BuiltinOperator, op)
    code.deprecatedBuiltinCode = min(code.builtinCode, 127)
    code.version = 1
    tensors = []
    for name in ("x", "y"):
        t = S.TensorT()
        t.shape, t.type, t.buffer, t.name = [1, 8, 8, 16], S.TensorType.INT8, 0, name
        t.quantization = S.QuantizationParametersT()
        t.quantization.scale, t.quantization.zeroPoint = [0.05], [-3]
        tensors.append(t)
    o = S.OperatorT()
    o.opcodeIndex, o.inputs, o.outputs = 0, [0], [1]
    sg = S.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs, sg.operators = tensors, [0], [1], [o]
    m = S.ModelT()
    m.version, m.operatorCodes, m.subgraphs, m.buffers = 3, [code], [sg], [S.BufferT()]
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
os.makedirs(os.path.join(HERE, "unary"), exist_ok=True)
for op in OPS:
    data = model(op)
    with open(os.path.join(HERE, "unary", op + ".tflite"), "wb") as f:
        f.write(data)
    head, tail, total = report(data)
    print(f"{op},{hashlib.sha256(data).hexdigest()},tflite-micro,{md.version('tflite-micro')},"
          f"{head},{tail},{total}")
