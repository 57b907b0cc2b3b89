#!/usr/bin/env python3
"""Writes the hand-made cases of the regression corpus (corpus/cases/<name>/): graph.json,
values.safetensors and expect.json, the verdict each case must replay to. Standard library
only, so the cases can be rebuilt anywhere: python3 corpus/cases/make_cases.py. Every case is
small enough to read. The corpus's other cases are reduced cases of campaigns, copied with an
expect.json written by hand ("found" says where); this script leaves them alone. The
optimize_for_inference findings on one-element conv lists are not here: weft's emitter writes
those lists as ints, so no weft path reaches them; TorchScriptFindings tests keep them."""
import json
import math
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {"float32": ("F32", "f"), "float64": ("F64", "d"), "int64": ("I64", "q")}


def safetensors(values):
    header, blobs, offset = {}, [], 0
    for name in sorted(values):
        dtype, shape, data = values[name]
        code, fmt = DTYPES[dtype]
        blob = struct.pack("<%d%s" % (len(data), fmt), *data)
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


class Case:
    def __init__(self):
        self.inputs, self.parameters, self.nodes, self.outputs, self.values = [], [], [], [], {}
        self.next_id = 0

    def leaf(self, kind, name, dtype, shape, data):
        entry = {"name": name, "id": self.next_id, "dtype": dtype, "shape": shape}
        (self.inputs if kind == "input" else self.parameters).append(entry)
        self.values[name] = (dtype, shape, data)
        self.next_id += 1
        return entry["id"]

    def node(self, op, inputs, outputs, **attrs):
        ids = []
        out = []
        for dtype, shape in outputs:
            out.append({"id": self.next_id, "dtype": dtype, "shape": shape})
            ids.append(self.next_id)
            self.next_id += 1
        self.nodes.append({"op": op, "inputs": inputs, "outputs": out, "attrs": attrs})
        return ids[0] if len(ids) == 1 else ids

    def write(self, name, expect, why):
        path = os.path.join(HERE, name)
        os.makedirs(path, exist_ok=True)
        graph = {"weft": 1, "inputs": self.inputs, "parameters": self.parameters,
                 "nodes": self.nodes, "outputs": self.outputs}
        with open(os.path.join(path, "graph.json"), "w") as f:
            json.dump(graph, f, indent=1)
            f.write("\n")
        with open(os.path.join(path, "values.safetensors"), "wb") as f:
            f.write(safetensors(self.values))
        expect = dict(expect)
        expect["why"] = why
        with open(os.path.join(path, "expect.json"), "w") as f:
            json.dump(expect, f, indent=1)
            f.write("\n")


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def uniform(rng, n, lo=-1.0, hi=1.0):
    return [f32(rng.uniform(lo, hi)) for _ in range(n)]


NO_BUG = {"bug": False}


def main():
    rng = random.Random(20261201)

    # Noise: the std of a constant (hardtanh clips everything to max_val) is float32 rounding
    # of equal terms that cancel; every LibTorch path gave ~1e-7 where float64 gives ~1e-15.
    c = Case()
    x = c.leaf("input", "x", "float32", [4, 6], uniform(rng, 24, 0.0, 1.0))
    h = c.node("hardtanh", [x], [("float32", [4, 6])], min_val=-2.0, max_val=-0.7)
    c.outputs = [c.node("std", [h], [("float32", [4])], dim=[1], correction=1, keepdim=False)]
    c.write("noise-std-of-constant", {"bug": False, "gradients": False},
            "std of a constant: float32 cancellation of equal terms, not a bug (forward only: "
            "its gradient shows a real TorchScript bug, the case "
            "bug-torchscript-std-autodiff-zero-deviation)")

    # Noise: logsumexp(log_softmax(x)) is exactly 0; float32 leaves ~1e-7.
    c = Case()
    x = c.leaf("input", "x", "float32", [3, 5], uniform(rng, 15, -3.0, 3.0))
    ls = c.node("log_softmax", [x], [("float32", [3, 5])], dim=1)
    c.outputs = [c.node("logsumexp", [ls], [("float32", [3])], dim=[1], keepdim=False)]
    c.write("noise-logsumexp-of-log-softmax", NO_BUG,
            "logsumexp of log_softmax is 0 up to float32 rounding of terms of size 1")

    # Noise: eq of two averages of the same atans summed in another order; one float32
    # rounding flips the comparison.
    c = Case()
    data = uniform(rng, 16, -2.0, 2.0)
    swapped = list(data)
    for r in range(0, 4, 2):
        for col in range(0, 4, 2):
            a, b, d, e = r * 4 + col, r * 4 + col + 1, (r + 1) * 4 + col, (r + 1) * 4 + col + 1
            swapped[a], swapped[b], swapped[d], swapped[e] = data[e], data[d], data[b], data[a]
    x = c.leaf("input", "x", "float32", [1, 1, 4, 4], data)
    y = c.leaf("input", "y", "float32", [1, 1, 4, 4], swapped)
    ax = c.node("atan", [x], [("float32", [1, 1, 4, 4])])
    ay = c.node("atan", [y], [("float32", [1, 1, 4, 4])])
    px = c.node("avg_pool2d", [ax], [("float32", [1, 1, 2, 2])], kernel_size=[2, 2])
    py = c.node("avg_pool2d", [ay], [("float32", [1, 1, 2, 2])], kernel_size=[2, 2])
    c.outputs = [c.node("eq", [px, py], [("bool", [1, 1, 2, 2])])]
    c.write("noise-eq-of-reordered-averages", NO_BUG,
            "a comparison of values equal up to rounding: the decision is undecided in float32")

    # Capability gap: reflection padding has no int64 kernel in LibTorch 1.13.
    c = Case()
    x = c.leaf("input", "x", "int64", [1, 2, 5], [rng.randrange(-5, 5) for _ in range(10)])
    c.outputs = [c.node("pad", [x], [("int64", [1, 2, 7])], pad=[1, 1], mode="reflect")]
    c.write("gap-reflection-pad-int64", {"bug": False, "unsupported": "pad"},
            "eager refuses int64 reflection padding: a capability gap, not a bug")

    # Capability gap: eager batch_norm cannot index the statistics of zero channels.
    c = Case()
    x = c.leaf("input", "x", "float32", [2, 0, 3], [])
    params = [c.leaf("parameter", name, "float32", [0], []) for name in ("w", "b", "rm", "rv")]
    c.outputs = [c.node("batch_norm", [x] + params, [("float32", [2, 0, 3])], training=False)]
    c.write("gap-batch-norm-zero-channels", {"bug": False, "unsupported": "batch_norm"},
            "eager batch_norm refuses zero channels (select() out of range): a capability gap")

    # Real: float32 gelu backward never writes its result when the incoming gradient is not
    # contiguous (oneDNN); the permute after it makes it so.
    c = Case()
    x = c.leaf("input", "x", "float32", [3, 4], uniform(rng, 12, -2.0, 2.0))
    g = c.node("gelu", [x], [("float32", [3, 4])], approximate="none")
    c.outputs = [c.node("permute", [g], [("float32", [4, 3])], dims=[1, 0])]
    c.write("bug-gelu-backward-through-permute",
            {"bug": True, "symptom": "nan-inf-mismatch", "backend": "torch", "op": "permute"},
            "LibTorch 1.13: float32 gelu backward leaves its result unwritten for a "
            "non-contiguous incoming gradient")

    # Real: optimize_for_inference rewrites conv2d to oneDNN, which refuses unbatched input.
    c = Case()
    x = c.leaf("input", "x", "float32", [2, 5, 5], uniform(rng, 50))
    w = c.leaf("parameter", "w", "float32", [3, 2, 3, 3], uniform(rng, 54, -0.5, 0.5))
    c.outputs = [c.node("conv2d", [x, w], [("float32", [3, 3, 3])])]
    c.write("bug-ofi-conv2d-unbatched",
            {"bug": True, "symptom": "exception-mismatch", "backend": "torchscript-ofi",
             "op": "conv2d"},
            "LibTorch 1.13: optimize_for_inference's oneDNN conv2d refuses 3-D input")

    # Real: TorchScript's autodiff of std gives NaN gradients at zero deviation (from call 1,
    # the optimized graph), where eager and the reference give 0 through hardtanh's cut.
    c = Case()
    x = c.leaf("input", "x", "float32", [4, 6], uniform(rng, 24, 0.0, 1.0))
    h = c.node("hardtanh", [x], [("float32", [4, 6])], min_val=-2.0, max_val=-0.7)
    c.outputs = [c.node("std", [h], [("float32", [4])], dim=[1], correction=1, keepdim=False)]
    c.write("bug-torchscript-std-autodiff-zero-deviation",
            {"bug": True, "symptom": "nan-inf-mismatch", "backend": "torchscript", "op": "std"},
            "LibTorch 1.13: TorchScript's std backward is NaN at zero deviation, eager is 0")

    # Noise: a derivative on a kink is each PyTorch's convention. clamp's gradient at a bound is
    # 1 in LibTorch 1.13 (and the engine), 0 in 2.x (the minimum-norm subgradient), so the
    # judge leaves derivatives on a kink undecided.
    c = Case()
    x = c.leaf("input", "x", "float32", [2, 3], [-0.5, 0.5, 0.0, 1.0, -1.0, 0.5])
    c.outputs = [c.node("clamp", [x], [("float32", [2, 3])], min=-0.5, max=0.5)]
    c.write("noise-clamp-gradient-at-bounds",
            dict(NO_BUG, backends="torch,torch2-eager,torch2-libtorch,torch2-inductor"),
            "clamp's gradient on its bounds: 1 in LibTorch 1.13, 0 in PyTorch 2.x "
            "(pytorch/pytorch#184572, minimum-norm subgradient), both valid subgradients; "
            "judged a wrong gradient of 2.15 before kinks moved at least one float32 ulp")

    # Noise: topk of int64 values with exact ties (the indices of a sort): which of the tied
    # elements comes first is the path's choice, for integers as for floats.
    c = Case()
    tied = [1, 0, 2, 1, 2, 0, 2, 0, 1, 0, 2, 1, 0, 2, 1, 0, 2, 1]
    x = c.leaf("input", "x", "int64", [6, 3], tied)
    c.outputs = c.node("topk", [x], [("int64", [5, 3]), ("int64", [5, 3])], k=5, dim=0,
                       largest=True)
    c.write("noise-topk-of-tied-ints", NO_BUG,
            "topk of int64 values with ties: eager returned row 3 of four tied rows first where "
            "the engine's stable order says row 1, and the judge took no decision for integer "
            "inputs (OracleAgreement.RandomModelsOnEveryDefaultBackend, seed 14, 12 nodes)")

    # Real: pdist's backward divides by the number of rows to size its parallel grain, so an
    # input with no rows (the forward returns an empty result) kills the process.
    c = Case()
    x = c.leaf("input", "x", "float32", [0, 3], [])
    c.outputs = [c.node("pdist", [x], [("float32", [0])], p=2.0)]
    c.write("bug-eager-pdist-backward-zero-rows",
            {"bug": True, "symptom": "crash", "backend": "torch", "op": "pdist"},
            "LibTorch 1.13 and PyTorch 2.x: the backward of pdist on a [0, 3] input kills the "
            "process (GRAIN_SIZE / (8 * n * n) with n = 0; SIGFPE or SIGSEGV), the forward "
            "returns an empty result; known upstream as pytorch/pytorch#197099 (open), found "
            "independently by the op sweep's pdist/no_rows case")

    # Noise: cdist with p = 2 and more than 25 rows takes PyTorch's matrix-product path,
    # sqrt(|x|^2 + |y|^2 - 2 x.y): a distance of 0 (a row against itself) comes out at
    # sqrt(eps) |x|, about 2e-3 here, which maintainers call expected (pytorch/pytorch#57690).
    c = Case()
    rows = [f32(rng.uniform(2.0, 3.0)) for _ in range(30 * 4)]
    x = c.leaf("input", "x", "float32", [30, 4], rows)
    y = c.leaf("input", "y", "float32", [30, 4], list(rows))
    c.outputs = [c.node("cdist", [x, y], [("float32", [30, 30])], p=2.0)]
    c.write("noise-cdist-matrix-product-zero-distance", NO_BUG,
            "cdist's p = 2 matrix-product path (more than 25 rows) leaves sqrt(eps) |x| where "
            "the distance is 0: eager's own algorithm, not a bug; judged a wrong output of "
            "eager before the rounding model computed it that way")

    # Real: dilation lets a max-pool window lie wholly in the padding (depth 1, kernel 2,
    # dilation 2, padding 1: taps at -1 and 1). Eager gives -inf there with an index past the
    # plane, and its backward writes the gradient there: into the next plane (the gradient of
    # an output that reads no input is not 0), and for the last plane past the buffer.
    c = Case()
    x = c.leaf("input", "x", "float32", [4, 1, 1, 2, 2], uniform(rng, 16))
    c.outputs = [c.node("max_pool3d", [x], [("float32", [4, 1, 1, 2, 2])], kernel_size=[2, 1, 1],
                        stride=[1], padding=[1, 0, 0], dilation=[2, 1, 1], ceil_mode=False)]
    c.write("bug-eager-max-pool-window-in-padding-backward",
            {"bug": True, "symptom": "wrong-gradient|crash", "backend": "torch",
             "op": "max_pool3d", "backends": "torch,torchscript"},
            "LibTorch 1.13 and PyTorch 2.15: max_pool3d (and max_pool2d) with a window wholly in the "
            "padding gives -inf and an index past its plane; the backward adds the gradient at that "
            "index, in another plane or past the buffer (heap corruption: 'double free or "
            "corruption' in both versions with 64 planes). Found when the engine's own copy of "
            "that kernel corrupted weft fuzz's heap (campaign seed 1209); not found reported")


if __name__ == "__main__":
    sys.exit(main())
