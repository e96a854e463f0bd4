# Records tflite-micro's (host, 64-bit) arena report for models: one CSV row per model.
import sys, hashlib, io, re, contextlib, os, importlib.metadata as md
from tflite_micro.python.tflite_micro import runtime
print("model,sha256,tool,tool_version,head_bytes,tail_bytes,total_bytes,eval_tensor_bytes,node_bytes,persistent_buffer_bytes,persistent_buffer_count")
for p in sys.argv[1:]:
    data = open(p, 'rb').read()
    it = runtime.Interpreter.from_bytes(data)
    r, w = os.pipe()
    saved = os.dup(2); sys.stderr.flush(); os.dup2(w, 2)
    it.print_allocations(); sys.stdout.flush()
    os.dup2(saved, 2); os.close(w)
    text = os.read(r, 1 << 16).decode(); os.close(r)
    g = lambda pat: re.search(pat, text)
    tot = g(r"total (\d+)").group(1); head = g(r"head (\d+)").group(1); tail = g(r"tail (\d+)").group(1)
    ev = g(r"'TfLiteEvalTensor data' used (\d+)").group(1)
    nd = g(r"'NodeAndRegistration struct' used (\d+)").group(1)
    pb = g(r"'Persistent buffer data' used (\d+) .* for (\d+) allocations")
    print(f"{os.path.basename(p)[:-7]},{hashlib.sha256(data).hexdigest()},tflite-micro,{md.version('tflite-micro')},{head},{tail},{tot},{ev},{nd},{pb.group(1)},{pb.group(2)}")
