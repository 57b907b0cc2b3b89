# How every Python path and repro script builds a non-contiguous input (graph.json "strides",
# "storage_offset"); the C++ paths do the same in torch_eager.cpp's leaf_to_torch. Embedded
# (runner.h.in): python.cpp puts it ahead of runner.py, export.cpp into each repro script.
import torch


def laid_out(t, strides, offset):
    """t copied into a buffer of its own and seen through `strides` from `offset` (a
    non-contiguous input); a stride of 0 repeats the values at index 0 of its dim."""
    extent = offset
    if t.numel() > 0:
        extent += 1 + sum((size - 1) * stride for size, stride in zip(t.shape, strides))
    buffer = torch.empty(extent, dtype=t.dtype, device=t.device)
    core = t
    for dim, (size, stride) in enumerate(zip(t.shape, strides)):
        if stride == 0 and size > 1:
            core = core.narrow(dim, 0, 1)
    buffer.as_strided(core.shape, strides, offset).copy_(core)
    return buffer.as_strided(t.shape, strides, offset)
