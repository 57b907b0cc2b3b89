#!/usr/bin/env python3
"""Checkpoint interop between weft and PyTorch, run by checkpoint_interop_test.cpp.

  check MODEL_DIR   load weft's checkpoint (MODEL_DIR/weft.safetensors) into the torch.nn
                    model, run MODEL_DIR/input.safetensors, compare with weft's output
                    (MODEL_DIR/weft_output.safetensors); exit 1 with the difference if any.
  make MODEL_DIR    build the torch.nn model (one training step for non-trivial batch-norm
                    statistics), write its state_dict to MODEL_DIR/torch.safetensors, an input
                    and the eval-mode output to MODEL_DIR/torch_io.safetensors.

safetensors is read and written with the standard library and torch only (no safetensors
package), following the format's definition.
"""
import json
import struct
import sys

import torch
from torch import nn

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64,
          "I32": torch.int32, "BOOL": torch.bool}
NAMES = {v: k for k, v in DTYPES.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        raw = bytearray(body[begin:end])
        t = torch.frombuffer(raw, dtype=DTYPES[info["dtype"]]) if raw else \
            torch.empty(0, dtype=DTYPES[info["dtype"]])
        tensors[name] = t.reshape(info["shape"]).clone()
    return tensors, meta


def write_safetensors(path, tensors, meta=None):
    header, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    if meta:
        header["__metadata__"] = meta
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


class Net(nn.Module):
    """The same architecture as the weft model of checkpoint_interop_test.cpp."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4),
                                      nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def check(model_dir):
    state, meta = read_safetensors(f"{model_dir}/weft.safetensors")
    model = Net()
    model.load_state_dict(state, strict=True)
    model.eval()
    x = read_safetensors(f"{model_dir}/input.safetensors")[0]["input"]
    expected = read_safetensors(f"{model_dir}/weft_output.safetensors")[0]["output"]
    with torch.no_grad():
        got = model(x)
    diff = (got - expected).abs().max().item()
    if meta.get("labels") != "a,b,c":
        print(f"metadata lost: {meta}")
        return 1
    if diff > 1e-5:
        print(f"outputs differ by {diff}")
        return 1
    print(f"ok: max difference {diff}")
    return 0


def make(model_dir):
    torch.manual_seed(11)
    model = Net()
    x = torch.randn(2, 1, 8, 8)
    model.train()
    model(torch.randn(4, 1, 8, 8))  # moves the batch-norm running statistics
    model.eval()
    with torch.no_grad():
        out = model(x)
    write_safetensors(f"{model_dir}/torch.safetensors", model.state_dict(), {"epoch": "1"})
    write_safetensors(f"{model_dir}/torch_io.safetensors", {"input": x, "output": out})
    return 0


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    sys.exit(check(directory) if command == "check" else make(directory))
