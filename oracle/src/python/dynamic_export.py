# How the export paths and their repro scripts export a dynamic-shape case: the dims of the
# inputs that change across shape sets are Dim.AUTO, and the program is called at a later set
# only where it kept those dims dynamic. Embedded (runner.h.in): python.cpp puts it ahead of
# runner.py, export.cpp into the repro scripts of export paths.
import torch


def export_at_shape_sets(model, example, inputs, shape_sets):
    """(torch.export of `model` at `example`, per later shape set whether the program takes its
    input shapes). `shape_sets`: input name -> its shapes at the later sets. A dynamic export
    that fails falls back to the static one, which takes the first shapes only."""
    if not shape_sets:
        return torch.export.export(model, example), []
    count = max(len(s) for s in shape_sets.values())
    auto = getattr(getattr(torch.export, "Dim", None), "AUTO", None)
    if auto is not None:
        specs = []
        for name, value in zip(inputs, example):
            later = shape_sets.get(name, [])
            changing = {d: auto for d in range(value.dim())
                        if any(s[d] != value.shape[d] for s in later)}
            specs.append(changing or None)
        try:
            program = torch.export.export(model, example, dynamic_shapes=tuple(specs))
            return program, [takes_shapes(program, example, inputs, shape_sets, k) and
                             passes_guards(program, example, inputs, shape_sets, k)
                             for k in range(count)]
        except Exception:  # the static export below decides whether the path runs at all
            pass
    return torch.export.export(model, example), [False] * count


def takes_shapes(program, example, inputs, shape_sets, k):
    """Whether `program` takes the input shapes of later set k + 1: every dim of a user input
    is the same integer, or a free symbol (one size per symbol) whose range holds the new
    size. Anything else (a dim that is an expression of others) is not tried."""
    kinds = torch.export.graph_signature.InputKind
    users = [spec.arg.name for spec in program.graph_signature.input_specs
             if spec.kind == kinds.USER_INPUT]
    vals = {node.name: node.meta.get("val") for node in program.graph.nodes
            if node.op == "placeholder"}
    bound = {}
    for name, placeholder, value in zip(inputs, users, example):
        val = vals.get(placeholder)
        shape = shape_sets[name][k] if name in shape_sets else list(value.shape)
        if val is None or len(shape) != val.dim():
            return False
        for size, new in zip(val.shape, shape):
            if isinstance(size, int):
                if size != new:
                    return False
                continue
            expr = size.node.expr
            if not expr.is_Symbol or bound.setdefault(expr, new) != new:
                return False
    for symbol, new in bound.items():
        limits = program.range_constraints.get(symbol)
        if limits is not None and not (limits.lower <= new and new <= limits.upper):
            return False
    return True


# How the exported program's own checks word a refusal of its input shapes: its input
# constraints and the runtime asserts it keeps on sizes.
GUARD_WORDS = ("Guard failed", "Expected input", "not in range", "Runtime assertion",
               "inline constraint")


def passes_guards(program, example, inputs, shape_sets, k):
    """Whether the program's own checks accept the input shapes of later set k + 1 (a symbol
    can stay free and still be asserted on, e.g. an output size of a pooling): a call on
    stand-in values of those shapes (ones; zeros for integers and bools). A failure in other
    words counts as accepted: the real call decides."""
    args = []
    for name, value in zip(inputs, example):
        shape = shape_sets[name][k] if name in shape_sets else list(value.shape)
        fill = 1 if value.is_floating_point() else 0
        args.append(torch.full(shape, fill, dtype=value.dtype, device=value.device))
    try:
        with torch.no_grad():
            program.module()(*args)
    except Exception as e:  # noqa: BLE001 (every refusal is sorted by its words)
        return not any(word in str(e) for word in GUARD_WORDS)
    return True
