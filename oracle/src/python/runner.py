# The python backend's server (weft/oracle/src/backends/python.cpp embeds this file): reads
# one JSON request per line on stdin, runs the emitted PyTorch module, writes outputs and
# gradients to a safetensors file and answers one JSON line on stdout. Standard library,
# torch and numpy only (Debian's python3-torch depends on python3-numpy).
import json
import struct
import sys

import numpy
import torch
import torch.nn.functional as F  # noqa: F401  (the emitted source uses F.*)

DTYPES = {"BOOL": torch.bool, "I32": torch.int32, "I64": torch.int64,
          "F32": torch.float32, "F64": torch.float64}
NAMES = {v: k for k, v in DTYPES.items()}


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
        array = numpy.frombuffer(data[base + begin:base + end],
                                 dtype=torch.empty(0, dtype=DTYPES[info["dtype"]]).numpy().dtype)
        out[name] = torch.from_numpy(array.copy()).reshape(info["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(request):
    scope = {"torch": torch, "F": F}
    exec(compile(request["source"], "weft_model.py", "exec"), scope)
    values = read_safetensors(request["values"])
    model = scope["Model"]({name: values["value/" + name] for name in request["parameters"]})
    leaves = {name: values["value/" + name] for name in request["inputs"]}
    for name, t in leaves.items():
        if t.is_floating_point():
            t.requires_grad_(True)
    for name, ident in model.weft_parameters.items():
        leaves[name] = getattr(model, ident)
    outputs = model(*[leaves[name] for name in request["inputs"]])
    result = {}
    for i, out in enumerate(outputs):
        result["output/%d" % i] = out
    if request["gradients"]:
        objective = None
        for i, out in enumerate(outputs):
            if not out.is_floating_point() or not out.requires_grad:
                continue
            term = (out * values["cotangent/%d" % i].to(out.dtype)).sum()
            objective = term if objective is None else objective + term
        floating = [name for name, t in leaves.items() if t.is_floating_point()]
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
    for line in sys.stdin:
        try:
            run(json.loads(line))
            answer = {"ok": True}
        except Exception as e:  # the path's failure is the answer
            message = str(e).split("\n")[0]
            answer = {"ok": False, "error": "%s: %s" % (type(e).__name__, message)}
        print(json.dumps(answer), flush=True)


main()
