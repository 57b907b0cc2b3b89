"""The Core ATen opset and which of weft's IR ops reach each of its ops.

Run with the project's PyTorch 2.x (scripts/core-aten/derive, which calls this with .venv's
python); writes scripts/core-aten/coverage.json, which `weft ops --coverage` embeds.

1. The list: every overload of torch.ops.aten tagged torch.Tag.core.
2. The reach: for each IR op (`weft ops`), a few one-node models from `weft gen --ops OP
   --nodes 1` are emitted as Python (`weft export --python`), and their forward, then forward
   and backward (torch.autograd.grad of the outputs' sum), are traced with make_fx under
   PyTorch's core ATen decompositions: the core ops torch.export and Inductor see when weft's
   programs run on them, reached forward or only by a gradient; and again without the
   decompositions, so that a core op that the table decomposes further (reflection_pad3d) but
   whose kernel eager and TorchScript run counts as reached. The forward is also exported
   (torch.export.export, then run_decompositions() with its default, the core table): the
   export and AOTInductor paths see its ops, and export keeps some core ops that make_fx's
   table takes apart (_native_batch_norm_legit_no_training, upsample_nearest2d.vec).

With --ops=a,b only those IR ops are traced (after adding them), and the reach of every other
IR op is kept from the coverage.json that is there; --seeds=N traces N models per IR op (10).
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

import torch
from torch._decomp import core_aten_decompositions
from torch.fx.experimental.proxy_tensor import make_fx

SEEDS = tuple(range(1, 11))


def core_ops():
    ops = {}
    for name in dir(torch.ops.aten):
        try:
            packet = getattr(torch.ops.aten, name)
            overloads = packet.overloads()
        except (AttributeError, RuntimeError, TypeError):
            continue
        for overload in overloads:
            if torch.Tag.core in getattr(packet, overload).tags:
                ops.setdefault(name, []).append(overload)
    return {name: sorted(overloads) for name, overloads in sorted(ops.items())}


def ir_ops(weft):
    lines = subprocess.run([weft, "ops"], check=True, capture_output=True, text=True).stdout
    rows = lines.splitlines()[1:-1]  # header, then "N ops"
    return [row.split()[0] for row in rows]


def core_targets(function, inputs):
    """The ATen ops of `function`, traced twice: under the core decompositions (what
    torch.export and Inductor see) and without them (the kernels eager and TorchScript run).
    Some core ops have a decomposition of their own in that table (reflection_pad3d,
    native_layer_norm_backward, ...): they show only in the second trace."""
    targets = set()
    for table in (core_aten_decompositions(), None):
        graph = make_fx(function, decomposition_table=table)(*inputs)
        for node in graph.graph.nodes:
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
                targets.add((node.target._schema.name.split("::")[-1],
                             node.target._overloadname))
    return targets


def exported_targets(model, inputs):
    """The core ATen ops of torch.export's program of the forward, after its default (core)
    decompositions; None where export refuses the program (make_fx's traces still count)."""
    try:
        program = torch.export.export(model, tuple(inputs)).run_decompositions()
    except Exception:  # export's refusals are its own findings, not a derivation failure
        return None
    targets = set()
    for node in program.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            targets.add((node.target._schema.name.split("::")[-1], node.target._overloadname))
    return targets


EXPORT_REFUSED = []  # (IR op, seed) pairs whose forward torch.export refused


def traced_targets(script):
    """(the core ops of the forward, those of forward and backward together)."""
    spec = importlib.util.spec_from_file_location("weft_case", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.Model(module.build(torch.float32))
    inputs = module.example(torch.float32)

    def forward_and_backward(*args):
        leaves = [a for a in args if a.is_floating_point()] + list(model.parameters())
        for leaf in leaves:
            leaf.requires_grad_(True)
        outputs = [o for o in model(*args) if o.is_floating_point() and o.requires_grad]
        if not outputs or not leaves:
            return model(*args)
        total = sum(o.sum() for o in outputs)
        return torch.autograd.grad(total, leaves, allow_unused=True)

    forward = core_targets(lambda *args: model(*args), inputs)
    try:
        both = core_targets(forward_and_backward, inputs)
    except RuntimeError as e:
        # PyTorch refusing the backward itself (2.x: torch.bernoulli(x, p) of an x that requires
        # grad): the forward's reach stands.
        if "derivative for" not in str(e):
            raise
        both = set(forward)
    exported = exported_targets(model, inputs)
    if exported is None:
        EXPORT_REFUSED.append(script)
    else:
        forward |= exported
        both |= exported
    return forward, both


def previous_reach(path, retraced):
    """coverage.json's reach without the IR ops in `retraced` (which are traced again)."""
    with open(path) as f:
        old = json.load(f)
    reached, in_gradients = {}, {}
    for name, ops in old.get("forward", {}).items():
        reached[name] = set(ops) - retraced
        in_gradients[name] = set(ops) - retraced
    for name, ops in old.get("gradient", {}).items():
        in_gradients.setdefault(name, set()).update(set(ops) - retraced)
    failures = {op: why for op, why in old.get("untraced", {}).items() if op not in retraced}
    return reached, in_gradients, failures


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--ops=")]
    seeds = SEEDS
    for a in sys.argv[1:]:
        if a.startswith("--seeds="):
            seeds = tuple(range(1, int(a.split("=", 1)[1]) + 1))
    weft = args[0] if args else os.path.join(here, "../../build/default/cli/weft")
    core = core_ops()
    reached = {}  # core op name -> IR ops whose forward has it
    in_gradients = {}  # core op name -> IR ops whose gradient alone has it
    failures = {}
    traced = ir_ops(weft)
    if only:
        # --ops=a,b: trace those IR ops (new ones) and keep coverage.json's reach of the others.
        retraced = set(",".join(only).split(","))
        unknown = retraced - set(traced)
        if unknown:
            sys.exit("derive.py: --ops names IR ops that weft does not know: %s" %
                     ", ".join(sorted(unknown)))
        reached, in_gradients, failures = previous_reach(os.path.join(here, "coverage.json"),
                                                         retraced)
        traced = [op for op in traced if op in retraced]
    with tempfile.TemporaryDirectory() as work:
        for op in traced:
            for seed in seeds:
                out = os.path.join(work, "%s-%d" % (op, seed))
                made = subprocess.run([weft, "gen", "--ops", op, "--nodes", "1", "--seed",
                                       str(seed), "-o", out], capture_output=True, text=True)
                cases = [os.path.join(out, d) for d in sorted(os.listdir(out))] \
                    if made.returncode == 0 and os.path.isdir(out) else []
                if not cases:
                    failures[op] = (made.stderr or "no case").strip().splitlines()[-1:]
                    continue
                script = out + ".py"
                subprocess.run([weft, "export", cases[0], "--python", script], check=True,
                               capture_output=True)
                try:
                    forward, both = traced_targets(script)
                except Exception as e:  # an op make_fx cannot trace: say so, go on
                    failures[op] = ["%s: %s" % (type(e).__name__, str(e).splitlines()[0])]
                    continue
                for name, overload in both:
                    if name in core and overload in core[name]:
                        into = reached if (name, overload) in forward else in_gradients
                        into.setdefault(name, set()).add(op)
    document = {
        "pytorch": torch.__version__.split("+")[0],
        "core": core,
        "ir_ops": ir_ops(weft),
        "forward": {name: sorted(ops) for name, ops in sorted(reached.items()) if ops},
        # Reached only by the gradient of these IR ops (an op reached forward is not repeated).
        "gradient": {name: sorted(ops - reached.get(name, set()))
                     for name, ops in sorted(in_gradients.items())
                     if ops - reached.get(name, set())},
        "untraced": failures,
    }
    with open(os.path.join(here, "coverage.json"), "w") as f:
        json.dump(document, f, indent=1, sort_keys=True)
        f.write("\n")
    print("%d core ops (%d overloads); %d reached forward, %d more only by gradients, by weft's "
          "%d IR ops; %d IR ops untraced; torch.export refused %d of the models" % (
              len(core), sum(len(v) for v in core.values()), len(reached),
              len(set(in_gradients) - set(reached)), len(document["ir_ops"]), len(failures),
              len(EXPORT_REFUSED)))


if __name__ == "__main__":
    main()
