# tflite-micro (host) arena report of one-operator models cut from the MLPerf Tiny models.
import sys, os, re, glob, hashlib, importlib.metadata as md
from tflite_micro.python.tflite_micro import runtime
def report(path):
    it = runtime.Interpreter.from_file(path, arena_size=4 << 20)
    r, w = os.pipe(); saved = os.dup(2); os.dup2(w, 2)
    it.print_allocations(); sys.stderr.flush()
    os.dup2(saved, 2); os.close(w); text = os.read(r, 1 << 16).decode(); os.close(r)
    g = lambda pat: int(re.search(pat, text).group(1))
    return g(r"head (\d+)"), g(r"tail (\d+)"), g(r"total (\d+)")
print("source_model,op_index,op,sha256,tool_version,head_bytes,tail_bytes,total_bytes")
for model in sys.argv[1:]:
    for p in sorted(glob.glob(model + "/*.tflite"), key=lambda x: int(re.search(r"op(\d+)_", x).group(1))):
        m = re.search(r"op(\d+)_(.*)\.tflite", os.path.basename(p))
        data = open(p, 'rb').read()
        h, t, tot = report(p)
        print(f"{os.path.basename(model)}_int8,{m.group(1)},{m.group(2)},{hashlib.sha256(data).hexdigest()},{md.version('tflite-micro')},{h},{t},{tot}")
