# The python backends' server (weft/oracle/src/backends/python.cpp embeds this file): reads
# one JSON request per line on stdin and answers one JSON line on stdout.
#   {"op": "prepare", "source", "mode", "device", "values", "inputs", "layouts", "parameters",
#    "package", "shape_sets"}
#       builds the emitted module on `device` ("cpu" or "cuda") and readies it for `mode`
#       (below); answers compile seconds. `shape_sets` (dynamic shapes): per input that changes,
#       its shapes at the later sets; the export modes mark the dims that change Dim.AUTO and
#       answer "runs_shape_sets", per later set whether the program takes its shapes.
#   {"op": "rebind", "values", "layouts"}
#       dynamic shapes: later calls take these inputs (other shapes), without preparing again;
#       the next call with gradients reads its cotangents file again.
#   {"op": "call", "cotangents", "out", "gradients"}
#       runs the prepared module on fresh copies of prepare's values, writes outputs and
#       gradients (of the cotangents file, read once per case) to a safetensors file; answers
#       the seconds this call spent compiling (recompiles).
# Modes: "eager"; torch.compile's "inductor", "inductor-dynamic" (dynamic=True) and
# "aot_eager" (Dynamo + AOTAutograd without Inductor's codegen); "export" (the
# ExportedProgram of torch.export); "aoti-python" (AOTInductor's .pt2 package, compiled and
# loaded here); "aoti-package" (only writes that package to `package`, for the C++ loader of
# the torch2-aoti paths; it takes no calls). Standard library, torch and numpy only (Debian's python3-torch depends on
# python3-numpy); the compile modes need PyTorch 2.
import json
import re
import struct
import sys
import time

import numpy
import torch
import torch.nn.functional as F  # noqa: F401  (the emitted source uses F.*)

DTYPES = {"BOOL": torch.bool, "I32": torch.int32, "I64": torch.int64,
          "F16": torch.float16, "BF16": torch.bfloat16,
          "F32": torch.float32, "F64": torch.float64}
NAMES = {v: k for k, v in DTYPES.items()}

try:  # PyTorch's pt2 fuzzing rules: compiled random ops follow eager's generator
    import torch._inductor.config as inductor_config
    inductor_config.fallback_random = True
except ImportError:  # PyTorch 1.13 has no Inductor
    pass


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        dtype = DTYPES[info["dtype"]]
        # torch.frombuffer, not numpy: numpy has no bfloat16.
        if end > begin:
            flat = torch.frombuffer(bytearray(data[base + begin:base + end]), dtype=dtype)
        else:
            flat = torch.empty(0, dtype=dtype)
        out[name] = flat.reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        # A fresh 1-d copy: a one-element tensor can be "contiguous" with any stride, and
        # view(torch.uint8) needs stride 1 where the element sizes differ (16-bit floats).
        flat = torch.empty(t.numel(), dtype=t.dtype)
        flat.copy_(t.reshape(-1))
        raw = flat.view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def compiled_graphs():
    """How many graphs Dynamo has compiled in this process so far (0 without Dynamo)."""
    try:
        from torch._dynamo.utils import counters
    except ImportError:
        return 0
    return sum(counters["stats"].values()) + sum(counters["aot_autograd"].values())


# laid_out(t, strides, offset): from laid_out.py, which python.cpp runs ahead of this file.


class Prepared:
    def __init__(self, request):
        scope = {"torch": torch, "F": F}
        exec(compile(request["source"], "weft_model.py", "exec"), scope)
        self.device = torch.device(request.get("device", "cpu"))
        self.values = {n: t.to(self.device) for n, t in read_safetensors(request["values"]).items()}
        self.cotangents = None  # read at the first call with gradients
        self.inputs = request["inputs"]
        self.layouts = request.get("layouts", {})
        mode = request["mode"]
        model = scope["Model"]({n: self.values["value/" + n] for n in request["parameters"]})
        self.identifiers = model.weft_parameters  # parameter name -> module attribute
        self.run = model
        self.owner = model  # the module whose parameters the run reads
        example = tuple(self.fresh_input(n) for n in self.inputs)
        self.shape_sets = request.get("shape_sets", {})
        self.runs_shape_sets = []
        if mode in ("inductor", "inductor-dynamic", "aot_eager"):
            # Each case compiles as in a fresh process: Dynamo's state from earlier cases of this
            # worker (automatic-dynamic shapes, caches) made a case compile otherwise here than
            # in its repro script, and a reduction keep a bug that showed only after them.
            torch._dynamo.reset()
            self.run = torch.compile(model, backend="aot_eager" if mode == "aot_eager" else
                                     "inductor", dynamic=True if mode == "inductor-dynamic" else None)
        elif mode == "export":
            self.run = self.owner = self.export(model, example).module()
        elif mode in ("aoti-python", "aoti-package"):
            # The package holds the parameters as constants: each call's values are the same.
            path = torch._inductor.aoti_compile_and_package(self.export(model, example),
                                                            package_path=request["package"])
            self.run = torch._inductor.aoti_load_package(path) if mode == "aoti-python" else None
        elif mode != "eager":
            raise ValueError("unknown mode '%s'" % mode)

    def export(self, model, example):
        """torch.export of the model; with later shape sets, the dims that change are Dim.AUTO
        (export_at_shape_sets: from dynamic_export.py, which python.cpp runs ahead of this)."""
        program, self.runs_shape_sets = export_at_shape_sets(model, example, self.inputs,
                                                             self.shape_sets)
        return program

    def rebind(self, request):
        for n, t in read_safetensors(request["values"]).items():
            self.values[n] = t.to(self.device)
        self.layouts = request.get("layouts", {})
        self.cotangents = None

    def fresh_input(self, name):
        """A copy of the input's value, in the input's layout."""
        value = self.values["value/" + name]
        layout = self.layouts.get(name)
        if layout is None:
            return value.clone()
        return laid_out(value, layout["strides"], layout["storage_offset"])

    def call(self, request):
        if self.run is None:
            raise RuntimeError("this mode only writes a package; it takes no calls")
        gradients = request["gradients"]
        # Random ops draw the same numbers on every call (weft's kTorchSeed).
        torch.manual_seed(0)
        leaves = {n: self.fresh_input(n) for n in self.inputs}
        for t in leaves.values():
            if t.is_floating_point():
                t.requires_grad_(gradients)
        for name, ident in self.identifiers.items():
            parameter = self.owner.get_parameter(ident)
            with torch.no_grad():
                parameter.copy_(self.values["value/" + name])
            leaves[name] = parameter
        outputs = self.run(*[leaves[n] for n in self.inputs])
        result = {"output/%d" % i: out for i, out in enumerate(outputs)}
        if gradients:
            if self.cotangents is None:
                self.cotangents = {n: t.to(self.device)
                                   for n, t in read_safetensors(request["cotangents"]).items()}
            objective = None
            for i, out in enumerate(outputs):
                if not out.is_floating_point() or not out.requires_grad:
                    continue
                term = (out * self.cotangents["cotangent/%d" % i].to(out.dtype)).sum()
                objective = term if objective is None else objective + term
            floating = [n for n, t in leaves.items() if t.is_floating_point()]
            grads = [None] * len(floating)
            if objective is not None and floating:
                grads = torch.autograd.grad(objective, [leaves[n] for n in floating],
                                            allow_unused=True)
            for name, grad in zip(floating, grads):
                result["grad/" + name] = torch.zeros_like(leaves[name]) if grad is None else grad
        write_safetensors(request["out"], result)


def main():
    torch.set_num_threads(1)
    print(json.dumps({"ready": torch.__version__}), flush=True)
    prepared = None
    for line in sys.stdin:
        graphs, start = compiled_graphs(), time.monotonic()
        compiling = False
        try:
            request = json.loads(line)
            if request["op"] == "prepare":
                prepared = None
                compiling = request["mode"] in ("export", "aoti-python", "aoti-package")
                prepared = Prepared(request)
            elif prepared is None:
                raise RuntimeError("call before a successful prepare")
            elif request["op"] == "rebind":
                prepared.rebind(request)
            else:
                prepared.call(request)
            answer = {"ok": True}
            if request["op"] == "prepare":
                answer["runs_shape_sets"] = prepared.runs_shape_sets
        except Exception as e:  # the path's failure is the answer
            message = str(e).strip().split("\n")[0]
            # Inductor's C++ compile errors all start "CppCompileError: C++ compile error":
            # the compiler's first error tells their root causes apart (and their buckets).
            first_error = re.search(r"error: (.+)", str(e)) if "CppCompileError" in message else None
            if first_error:
                message += " (first error: %s)" % first_error.group(1).strip()[:300]
            answer = {"ok": False, "error": "%s: %s" % (type(e).__name__, message)}
        # A request that compiled spent its time compiling: running a small graph is
        # negligible beside Dynamo's tracing and Inductor's g++ (Dynamo's own timers nest).
        compiling = compiling or compiled_graphs() != graphs
        answer["compile_seconds"] = time.monotonic() - start if compiling else 0.0
        print(json.dumps(answer), flush=True)


main()
