#!/usr/bin/env python3
"""Exports small programs through ExecuTorch's Cortex-M flow, for mica's reader tests.

Optional tool (mica itself never runs Python): needs `pip install executorch torch torchvision`.
For each model it writes, under OUT_DIR:
  <name>.pte   the program (CortexMQuantizer with calibration, CortexMPassManager, to_executorch)
  <name>.bpte  the same program bundled with one test case: the input and the expected output
               recorded from ExecuTorch (see "reference" in the manifest)
  <name>.input.bin / <name>.expected.bin   the same tensors as raw bytes (memory order)
and a manifest (manifest.json) with sha256, sizes, the exporter's versions and, per model,
where the expected output came from:
  - "executorch runtime": the program run by the wheel's own runtime (portable kernels), or
  - "cortex_m python reference": the lowered program's graph run in Python, where the Cortex-M
    operators are ExecuTorch's Python implementations (they call CMSIS-NN through the wheel's
    `cmsis_nn` binding), because the PyPI wheel's runtime has no Cortex-M kernels.
The weights are seeded random (the architectures are what matters to the reader), and inputs
are seeded too, so re-running gives the same files for the same versions.

Usage: export_executorch.py OUT_DIR [MODEL ...]   (models: ds_cnn resnet8 mobilenet_v1_025
       deep_autoencoder tiny_conv tiny_float; extras: tiny_pt2 tiny_xnnpack tiny_methods
       tiny_linear)

Extras (no Cortex-M flow):
  tiny_pt2      tiny_pt2.pt2, a float ExportedProgram saved by torch.export.save (the .pt2 input
                mica converts through ExecuTorch's exporter), with an input and the output of
                the program ExecuTorch makes from it (to_edge_transform_and_lower, no
                partitioner, run by the wheel's runtime)
  tiny_xnnpack  tiny_xnnpack.pte, a float program whose graph is delegated to XNNPACK
                (XnnpackPartitioner): one opaque delegate call
  tiny_methods  tiny_methods.pte / .bpte, a program with two methods ("forward" and "scale"),
                bundled with one test case per method (outputs from ExecuTorch's runtime)
  tiny_linear   tiny_linear.pte / .bpte, nn.Linear (+ relu, + a bias-free nn.Linear) exported
                portable with the default edge config: addmm / mm on a permuted weight, bundled
                with an input and ExecuTorch's runtime output
"""
import hashlib
import json
import os
import sys

import torch


def _stub_tosa_serializer():
    """The PyPI wheel's Cortex-M quantizer imports the Arm backend, whose debug helpers import
    `tosa_serializer` (built from source by ExecuTorch's Arm setup, not on PyPI). The Cortex-M
    flow never serialises TOSA, so an empty stand-in module lets the import succeed."""
    import importlib.util
    import types
    if importlib.util.find_spec("tosa_serializer") is None:
        stub = types.ModuleType("tosa_serializer")
        class Anything:  # every attribute and call gives another distinct placeholder
            def __init__(self, name):
                self._name = name

            def __getattr__(self, name):
                if name.startswith("__"):
                    raise AttributeError(name)
                return Anything(f"{self._name}.{name}")

            def __call__(self, *args, **kwargs):
                return Anything(f"{self._name}()")

            def __repr__(self):
                return f"<tosa_serializer stand-in {self._name}>"

        def module_attr(name):
            if name.startswith("__"):
                raise AttributeError(name)
            return Anything(name)
        stub.__getattr__ = module_attr
        sys.modules["tosa_serializer"] = stub
        return True
    return False


def _models():
    from executorch.examples.models.mlperf_tiny.deep_autoencoder import DeepAutoEncoder
    from executorch.examples.models.mlperf_tiny.ds_cnn import DSCNNKWS
    from executorch.examples.models.mlperf_tiny.mobilenet_v1_025 import MobileNetV1025
    from executorch.examples.models.mlperf_tiny.resnet8 import ResNet8

    class TinyConv(torch.nn.Module):
        """conv + relu + residual add + avg pool + linear + softmax: every mapped family."""

        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.pool = torch.nn.AvgPool2d(2)
            self.mpool = torch.nn.MaxPool2d(2)
            self.fc = torch.nn.Linear(8 * 2 * 2, 5)

        def forward(self, x):
            y = torch.relu(self.conv1(x))
            y = y + torch.relu(self.dw(y))
            y = self.mpool(self.pool(y))
            y = self.fc(y.flatten(1))
            return torch.softmax(y, dim=-1)

    class TinyFloat(TinyConv):
        pass

    cl = torch.channels_last
    return {
        "ds_cnn": (DSCNNKWS, lambda: (torch.rand(1, 1, 49, 10) * 2 - 1).to(memory_format=cl), True),
        "resnet8": (ResNet8, lambda: (torch.rand(1, 3, 32, 32) * 2 - 1).to(memory_format=cl), True),
        "mobilenet_v1_025": (MobileNetV1025,
                             lambda: (torch.rand(1, 3, 96, 96) * 2 - 1).to(memory_format=cl), True),
        "deep_autoencoder": (DeepAutoEncoder, lambda: torch.rand(1, 640) * 2 - 1, True),
        "tiny_conv": (TinyConv, lambda: (torch.rand(1, 3, 8, 8) * 2 - 1).to(memory_format=cl), True),
        "tiny_float": (TinyFloat, lambda: torch.rand(1, 3, 8, 8) * 2 - 1, False),
    }


def _trace(graph_module, x):
    """Prints every operator's output (NHWC for rank 4, first values): for debugging readers."""
    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            if isinstance(r, torch.Tensor) and n.op == "call_function":
                t = r.permute(0, 2, 3, 1) if r.dim() == 4 else r
                vals = t.flatten()[:10].tolist()
                print(f"TRACE {n.name} {list(t.shape)} {t.dtype} {vals}")
            return r
    with torch.no_grad():
        Recorder(graph_module).run(x)


def export(name, ctor, make_input, quantize, out_dir):
    from executorch.backends.cortex_m.edge_compile_config import cortex_m_edge_compile_config
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    from executorch.exir import to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(0)
    model = ctor().eval()
    example = (make_input(),)
    calibration = [(make_input(),) for _ in range(8)]
    if quantize:
        captured = torch.export.export(model, example, strict=True).module()
        prepared = prepare_pt2e(captured, CortexMQuantizer())
        for sample in calibration:
            prepared(*sample)
        model = convert_pt2e(prepared)
    ep = torch.export.export(model, example, strict=True)
    edge = to_edge(ep, compile_config=cortex_m_edge_compile_config())
    if quantize:
        edge._edge_programs["forward"] = CortexMPassManager(edge.exported_program()).transform()
    lowered_graph = edge.exported_program().module()
    et = edge.to_executorch()
    pte = et.buffer

    x = make_input()
    reference = None
    try:
        from executorch.runtime import Runtime
        method = Runtime.get().load_program(pte).load_method("forward")
        y = method.execute([x])[0]
        reference = "executorch runtime"
    except Exception as e:  # the wheel's runtime lacks the Cortex-M kernels
        print(f"{name}: the ExecuTorch runtime cannot run it ({type(e).__name__}: "
              f"{str(e).splitlines()[0] if str(e) else ''}); using the Python reference", file=sys.stderr)
        with torch.no_grad():
            y = lowered_graph(x)
        if isinstance(y, (tuple, list)):
            y = y[0]
        reference = "cortex_m python reference" if quantize else "python reference"
    if os.environ.get("MICA_ET_TRACE"):
        _trace(lowered_graph, x)
    suite = MethodTestSuite(method_name="forward",
                            test_cases=[MethodTestCase(inputs=[x], expected_outputs=[y])])
    bundled = BundledProgram(et, [suite])
    bpte = serialize_from_bundled_program_to_flatbuffer(bundled)

    def raw(t):
        # Memory order: channels-last tensors are written as NHWC bytes.
        if t.dim() == 4 and t.is_contiguous(memory_format=torch.channels_last) and not t.is_contiguous():
            return t.permute(0, 2, 3, 1).contiguous().numpy().tobytes()
        return t.contiguous().numpy().tobytes()

    files = {f"{name}.pte": pte, f"{name}.bpte": bpte,
             f"{name}.input.bin": raw(x), f"{name}.expected.bin": raw(y)}
    entry = {"reference": reference, "quantized": quantize, "files": {}}
    for fname, data in files.items():
        with open(os.path.join(out_dir, fname), "wb") as f:
            f.write(data)
        entry["files"][fname] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    entry["output_dtype"] = str(y.dtype)
    return entry


def _write(out_dir, files):
    entry = {"files": {}}
    for fname, data in files.items():
        with open(os.path.join(out_dir, fname), "wb") as f:
            f.write(data)
        entry["files"][fname] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return entry


class _TinyPt2(torch.nn.Module):
    """conv + relu + residual add + max pool, float: operators mica maps from the portable set."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 2, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)

    def forward(self, x):
        return self.pool(x + torch.relu(self.conv(x)))


def export_pt2(out_dir):
    import io
    from executorch.exir import to_edge_transform_and_lower
    from executorch.runtime import Runtime
    torch.manual_seed(0)
    model = _TinyPt2().eval()
    x = torch.rand(1, 2, 6, 6) * 2 - 1
    ep = torch.export.export(model, (x,), strict=True)
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    pt2 = buf.getvalue()
    # What mica's conversion does (apps/mica/model_input.cc), then ExecuTorch's runtime.
    pte = to_edge_transform_and_lower(torch.export.load(io.BytesIO(pt2))).to_executorch().buffer
    y = Runtime.get().load_program(pte).load_method("forward").execute([x])[0]
    entry = _write(out_dir, {"tiny_pt2.pt2": pt2, "tiny_pt2.input.bin": x.numpy().tobytes(),
                             "tiny_pt2.expected.bin": y.contiguous().numpy().tobytes()})
    entry.update({"reference": "executorch runtime (the program converted from the .pt2)",
                  "quantized": False, "output_dtype": str(y.dtype),
                  "saved_by": f"torch.export.save, torch {torch.__version__}"})
    return entry


def export_xnnpack(out_dir):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    torch.manual_seed(0)
    model = _TinyPt2().eval()
    x = torch.rand(1, 2, 6, 6) * 2 - 1
    ep = torch.export.export(model, (x,), strict=True)
    pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    entry = _write(out_dir, {"tiny_xnnpack.pte": pte})
    entry.update({"reference": "none (a delegated program: mica reports the delegate)",
                  "quantized": False, "delegate": "XnnpackBackend (XnnpackPartitioner)"})
    return entry


def export_methods(out_dir):
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    from executorch.exir import to_edge
    from executorch.runtime import Runtime

    class Forward(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1.0

    class Scale(torch.nn.Module):
        def forward(self, x, y):
            return torch.relu(x * y)

    torch.manual_seed(0)
    inputs = {"forward": (torch.rand(2, 3) * 2 - 1,),
              "scale": (torch.rand(4) * 2 - 1, torch.rand(4) * 2 - 1)}
    eps = {"forward": torch.export.export(Forward(), inputs["forward"], strict=True),
           "scale": torch.export.export(Scale(), inputs["scale"], strict=True)}
    et = to_edge(eps).to_executorch()
    program = Runtime.get().load_program(et.buffer)
    suites = []
    for name, args in inputs.items():
        y = program.load_method(name).execute(list(args))[0]
        suites.append(MethodTestSuite(method_name=name, test_cases=[
            MethodTestCase(inputs=list(args), expected_outputs=[y])]))
    bpte = serialize_from_bundled_program_to_flatbuffer(BundledProgram(et, suites))
    entry = _write(out_dir, {"tiny_methods.pte": et.buffer, "tiny_methods.bpte": bpte})
    entry.update({"reference": "executorch runtime", "quantized": False,
                  "methods": list(inputs)})
    return entry


class _TinyLinear(torch.nn.Module):
    """nn.Linear with bias, relu, nn.Linear without bias: addmm and mm on transposed weights."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 8)
        self.fc2 = torch.nn.Linear(8, 4, bias=False)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def export_linear(out_dir):
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    from executorch.exir import to_edge
    from executorch.runtime import Runtime
    torch.manual_seed(0)
    model = _TinyLinear().eval()
    x = torch.rand(2, 16) * 2 - 1
    # The default edge config (no Cortex-M passes) decomposes linear into a transposed copy of
    # the weight and addmm (mm without bias).
    et = to_edge(torch.export.export(model, (x,), strict=True)).to_executorch()
    y = Runtime.get().load_program(et.buffer).load_method("forward").execute([x])[0]
    suite = MethodTestSuite(method_name="forward",
                            test_cases=[MethodTestCase(inputs=[x], expected_outputs=[y])])
    bpte = serialize_from_bundled_program_to_flatbuffer(BundledProgram(et, [suite]))
    entry = _write(out_dir, {"tiny_linear.pte": et.buffer, "tiny_linear.bpte": bpte,
                             "tiny_linear.input.bin": x.numpy().tobytes(),
                             "tiny_linear.expected.bin": y.contiguous().numpy().tobytes()})
    entry.update({"reference": "executorch runtime", "quantized": False,
                  "output_dtype": str(y.dtype)})
    return entry


_EXTRAS = {"tiny_pt2": export_pt2, "tiny_xnnpack": export_xnnpack, "tiny_methods": export_methods,
           "tiny_linear": export_linear}


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    stubbed = _stub_tosa_serializer()
    models = _models()
    names = sys.argv[2:] or list(models) + list(_EXTRAS)
    import executorch
    from importlib.metadata import version
    manifest_path = os.path.join(out_dir, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest["exporter"] = {"executorch": version("executorch"), "torch": torch.__version__,
                            "torchao": version("torchao"),
                            "script": "test/executorch/export_executorch.py",
                            "tosa_serializer": "stubbed (not on PyPI)" if stubbed else "installed"}
    manifest.setdefault("models", {})
    for name in names:
        if name in _EXTRAS:
            manifest["models"][name] = _EXTRAS[name](out_dir)
            print(name, manifest["models"][name]["reference"])
            continue
        ctor, make_input, quantize = models[name]
        manifest["models"][name] = export(name, ctor, make_input, quantize, out_dir)
        print(name, manifest["models"][name]["reference"])
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
