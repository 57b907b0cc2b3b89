// PyTorch programs from test cases (weft/oracle/export.h): the Model class of the python
// backend and the standalone repro script of `weft export --python`. No torch headers.
#include "weft/oracle/export.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "weft/error.h"
#include "weft/oracle/fault.h"
#include "weft/oracle/random_judging.h"
#include "weft/oracle/source.h"
#include "weft_python_runner.h"

namespace weft::oracle {

namespace {

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string python_list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (std::size_t i = 0; i < items.size(); ++i) text += (i > 0 ? ", " : "") + quoted(items[i]);
  return text + "]";
}

// The definitions an older PyTorch needs (F.rms_norm for 1.13), then the class.
std::string with_compat_definitions(const ir::Graph& graph, const std::string& model) {
  const std::string compat = python_compat_definitions(graph);
  return compat.empty() ? model : compat + "\n\n" + model;
}

std::string model_class(const ir::Graph& graph, const EmittedForward& forward,
                        const std::string& class_name) {
  std::string text = "class " + class_name + "(torch.nn.Module):\n";
  text += "    def __init__(self, params):\n        super().__init__()\n";
  text += "        self.weft_parameters = {}\n";
  // A forward-only case: no parameter requires a gradient either.
  const std::string requires_grad = graph.requires_grad() ? "" : ", requires_grad=False";
  for (std::size_t i = 0; i < graph.parameters().size(); ++i) {
    const ir::Value& leaf = graph.value(graph.parameters()[i]);
    const std::string& ident = forward.parameters[i];
    if (const auto owner = forward.submodule_parameters.find(leaf.name);
        owner != forward.submodule_parameters.end()) {
      text += "        self.weft_parameters[" + quoted(leaf.name) + "] = " + quoted(owner->second) +
              "\n";
    } else if (is_floating(leaf.type.dtype)) {
      text += "        self." + ident + " = torch.nn.Parameter(params[" + quoted(leaf.name) + "]" +
              requires_grad + ")\n";
      text += "        self.weft_parameters[" + quoted(leaf.name) + "] = " + quoted(ident) + "\n";
    } else {
      text += "        self.register_buffer(" + quoted(ident) + ", params[" + quoted(leaf.name) +
              "])\n";
    }
  }
  for (const std::string& line : forward.init_lines) text += "        " + line + "\n";
  text += "\n" + forward.method(4);
  return text;
}

// The faulty path of a fault backend, in Python: the same forward with `weft_fault` applied to
// every result of the faulty op (the engine's after-node hook, written as statements).
EmittedForward with_fault_lines(const ir::Graph& graph, EmittedForward forward, ir::OpKind op) {
  for (std::size_t n = graph.nodes().size(); n-- > 0;) {
    const ir::Node& node = graph.nodes()[n];
    if (node.op != op) continue;
    for (ir::ValueId id : node.outputs) {
      const std::string name = "v" + std::to_string(id);
      for (std::size_t line = forward.lines.size(); line-- > 0;) {
        const std::string& text = forward.lines[line];
        if (text.rfind(name + " ", 0) == 0 || text.rfind(name + ",", 0) == 0) {
          forward.lines.insert(forward.lines.begin() + static_cast<std::ptrdiff_t>(line) + 1,
                               name + " = weft_fault(" + name + ")  # the injected fault");
          break;
        }
      }
    }
  }
  return forward;
}

std::string fault_function(FaultKind kind) {
  std::string body;
  switch (kind) {
    case FaultKind::Crash:
      body = "    os.kill(os.getpid(), signal.SIGSEGV)\n";
      break;
    case FaultKind::Abort:
      body = "    os.abort()\n";
      break;
    case FaultKind::Hang:
      body = "    while True:\n        time.sleep(1)\n";
      break;
    case FaultKind::Throw:
      body = "    raise RuntimeError('injected fault')\n";
      break;
    case FaultKind::Nan:
      body =
          "    if not t.is_floating_point() or t.numel() == 0:\n        return t\n"
          "    t = t.clone()\n    t.view(-1)[0] = float('nan')\n";
      break;
    case FaultKind::PerturbSmall:
      body = "    if t.is_floating_point():\n        t = t * (1.0 + 1e-3) + 1e-3\n";
      break;
    case FaultKind::PerturbLarge:
      body = "    if t.is_floating_point():\n        t = t * 1.5 + 1.0\n";
      break;
    case FaultKind::WrongGradient:
      body =
          "    if t.is_floating_point():\n        half = t * 0.5\n"
          "        t = t + (half - half.detach())\n";
      break;
    case FaultKind::Recompile:
      body =
          "    if t.is_floating_point() and CURRENT_SHAPE_SET[0] > 0:\n        t = t * 1.5 + 1.0\n";
      break;
  }
  return "def weft_fault(t):\n" + body + "    return t\n";
}

bool is_cuda_path(const std::string& backend) {
  return backend.size() > 5 && backend.compare(backend.size() - 5, 5, "-cuda") == 0;
}

// The eager paths: their baseline is float32 rounding, not eager float32 (themselves).
bool is_eager_path(const std::string& backend) {
  return backend == "torch" || backend == "torch-cuda" || backend == "torch2-eager" ||
         backend == "torch2-libtorch" || backend == "torch2-cuda" ||
         backend == "torch2-eager-cuda" || backend.rfind("fault:", 0) == 0;
}

// How the script builds the path under test from the float32 eager model `m` (on DEVICE);
// `example()` gives the inputs (in their own dtypes) that torch.export traces with.
std::string compile_expression(const std::string& backend) {
  if (is_eager_path(backend)) return "m";
  if (backend == "torch2-inductor" || backend == "torch2-inductor-cuda") return "torch.compile(m)";
  if (backend == "torch2-dynamic") return "torch.compile(m, dynamic=True)";
  if (backend == "torch2-aot-eager") return "torch.compile(m, backend=\"aot_eager\")";
  if (backend == "torch2-export") return "exported(m).module()";
  if (backend == "torch2-aoti-python" || backend == "torch2-aoti" ||
      backend == "torch2-aoti-cuda") {
    // weft's torch2-aoti paths load the package from C++; Python's loader runs the same code.
    return "torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package("
           "exported(m)))";
  }
  if (backend == "torchscript" || backend == "torchscript-nnc" || backend == "torchscript-legacy") {
    return "torch.jit.script(m)";
  }
  if (backend == "torchscript-frozen") return "torch.jit.freeze(torch.jit.script(m.eval()))";
  if (backend == "torchscript-ofi") {
    return "torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(m.eval())))";
  }
  throw Error("weft export: no PyTorch program for backend '" + backend +
              "' (expected torch, torchscript, torchscript-frozen, torchscript-ofi, "
              "torchscript-nnc, torchscript-legacy, a torch2-* path or fault:<kind>@<op>)");
}

std::string fuser_setup(const std::string& backend) {
  if (backend.rfind("torch2-", 0) == 0 && !is_eager_path(backend)) {
    // PyTorch's pt2 fuzzing rules: compiled random ops follow eager's generator.
    return "import torch._inductor.config\n"
           "torch._inductor.config.fallback_random = True\n";
  }
  if (backend == "torchscript-nnc") {
    return "torch._C._jit_set_texpr_fuser_enabled(True)\n"
           "torch._C._jit_override_can_fuse_on_cpu(True)\n"
           "torch._C._jit_set_te_must_use_llvm_cpu(False)\n";
  }
  if (backend == "torchscript-legacy") {
    return "torch._C._jit_set_profiling_executor(False)\n"
           "torch._C._jit_set_profiling_mode(False)\n"
           "torch._C._jit_set_texpr_fuser_enabled(False)\n"
           "torch._C._jit_override_can_fuse_on_cpu_legacy(True)\n";
  }
  return "";
}

// The paths built from torch.export (export_at_shape_sets in dynamic_export.py).
bool is_export_path(const std::string& backend) {
  return backend == "torch2-export" || backend.find("-aoti") != std::string::npos;
}

bool path_has_gradients(const std::string& backend) {
  return backend != "torchscript-frozen" && backend != "torchscript-ofi" &&
         backend.find("-aoti") == std::string::npos;
}

// Outputs that are indices of max/min/argmax/argmin (and cummax/cummin's running ones): PyTorch's
// pt2 fuzzing rules do not compare them (ties pick any index).
std::vector<std::size_t> index_outputs(const ir::Graph& graph) {
  std::vector<std::size_t> result;
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) {
    const std::optional<std::size_t> producer = graph.producer(graph.outputs()[i]);
    if (!producer) continue;
    const ir::Node& node = graph.nodes()[*producer];
    const bool argument = node.op == ir::OpKind::Argmax || node.op == ir::OpKind::Argmin;
    const bool pair = node.op == ir::OpKind::Max || node.op == ir::OpKind::Min ||
                      node.op == ir::OpKind::Cummax || node.op == ir::OpKind::Cummin;
    const bool second = pair && node.outputs.size() == 2 && node.outputs[1] == graph.outputs()[i];
    if (argument || second) result.push_back(i);
  }
  return result;
}

// The positions, among a run's results (outputs, then gradients of the floating inputs and of
// the parameters), of those computed from a random draw (random_judging.h).
std::string drawn_results_list(const ir::Graph& graph) {
  const random_judging::DrawnResults drawn = random_judging::drawn_results(graph);
  std::vector<std::string> leaves;
  for (ir::ValueId id : graph.inputs()) {
    if (is_floating(graph.type(id).dtype)) leaves.push_back(graph.value(id).name);
  }
  for (ir::ValueId id : graph.parameters()) leaves.push_back(graph.value(id).name);
  std::string list;
  const auto add = [&](std::size_t i) { list += (list.empty() ? "" : ", ") + std::to_string(i); };
  for (std::size_t i = 0; i < drawn.outputs.size(); ++i) {
    if (drawn.outputs[i]) add(i);
  }
  for (std::size_t k = 0; k < leaves.size(); ++k) {
    if (drawn.gradients.count(leaves[k]) > 0) add(drawn.outputs.size() + k);
  }
  return list;
}

constexpr const char* kSafetensorsReader = R"py(
def load_safetensors(path):
    """A safetensors reader in a few lines of standard library + torch."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    dtypes = {"BOOL": torch.bool, "I32": torch.int32, "I64": torch.int64,
              "F16": torch.float16, "BF16": torch.bfloat16,
              "F32": torch.float32, "F64": torch.float64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = bytearray(data[8 + n + begin:8 + n + end])
        dtype = dtypes[info["dtype"]]
        flat = torch.frombuffer(raw, dtype=dtype) if raw else torch.empty(0, dtype=dtype)
        out[name] = flat.reshape(info["shape"]).clone()
    return out
)py";

constexpr const char* kCheck = R"py(
CURRENT_SHAPE_SET = [0]


def example(dtype=None, shape_set=0):
    """The inputs of a shape set: "x@1" holds input x at shape set 1 (dynamic shapes). Floating
    inputs in `dtype`, or in their own (float16, float32, ...) when it is None."""
    keys = [n if shape_set == 0 or "%s@%d" % (n, shape_set) not in VALUES
            else "%s@%d" % (n, shape_set) for n in INPUTS]
    values = [VALUES[k].to(DEVICE, dtype) if VALUES[k].is_floating_point() and dtype
              else VALUES[k].to(DEVICE, copy=True) for k in keys]
    layouts = LAYOUTS if shape_set == 0 else SHAPE_SET_LAYOUTS[shape_set - 1]
    return tuple(laid_out(t, *layouts[n]) if n in layouts else t
                 for n, t in zip(INPUTS, values))


def run(model, dtype, cotangents, shape_set=0):
    """Outputs and, when the path has them, gradients of sum(out * cotangent)."""
    torch.manual_seed(0)  # every run draws the same random numbers
    CURRENT_SHAPE_SET[0] = shape_set
    inputs = list(example(dtype, shape_set))
    leaves = []
    if REQUIRES_GRAD and GRADIENTS:  # forward-only case, or a path without gradients (AOTI)
        leaves = [t.requires_grad_(True) for t in inputs if t.is_floating_point()]
        leaves += [p for p in model.parameters()]
    outputs = model(*inputs)
    grads = []
    if GRADIENTS and leaves:
        objective = sum((o * c.to(o.device, o.dtype)).sum() for o, c in zip(outputs, cotangents)
                        if o.is_floating_point() and o.requires_grad)
        if torch.is_tensor(objective):
            grads = [g if g is not None else torch.zeros_like(l) for g, l in
                     zip(torch.autograd.grad(objective, leaves, allow_unused=True), leaves)]
    return [o.detach() for o in outputs] + [g.detach() for g in grads]


def build(dtype):
    params = {n: VALUES[n].to(DEVICE, dtype) if VALUES[n].is_floating_point() and dtype
              else VALUES[n].to(DEVICE, copy=True) for n in PARAMETERS}
    return params


def refused(e):
    """Eager ran: the path refusing the model is the bug."""
    lines = [line for line in str(e).splitlines() if line.strip()]
    print("BUG: %s raised %s: %s" % (PATH, type(e).__name__, lines[0] if lines else ""))
    sys.exit(1)


def main():
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    reference_model = Model(build(torch.float64)).double()
    # Eager and the path run in the case's own dtypes (float32, float16, bfloat16, ...).
    eager_model = Model(build(None))
    try:
        path = make_path(CANDIDATE_CLASS(build(None)))
    except Exception as e:
        refused(e)
    bug = False
    # Dynamic shapes: the path built once is called at every shape set in turn.
    for shape_set in range(SHAPE_SETS):
        where = "shape set %d, " % shape_set if SHAPE_SETS > 1 else ""
        shapes = [o.shape for o in reference_model(*example(torch.float64, shape_set))]
        cotangents = [torch.rand(s, generator=generator, dtype=torch.float64) * 2 - 1
                      for s in shapes]
        if shape_set > 0 and not RUNS_SHAPE_SETS[shape_set - 1]:
            print("shape set %d: not called (the export specialized a dim that changes)"
                  % shape_set)
            continue
        reference = run(reference_model, torch.float64, cotangents, shape_set)
        eager = run(eager_model, None, cotangents, shape_set)
        try:
            calls = [run(path, None, cotangents, shape_set)
                     for _ in range(CALLS if shape_set == 0 else 1)]
        except Exception as e:
            refused(e)
        bug = compare(calls, reference, eager, shapes, where) or bug
    print("BUG: %s differs from the float64 reference beyond float32 rounding" % PATH
          if bug else "no difference beyond float32 rounding")
    sys.exit(1 if bug else 0)


def compare(calls, reference, eager, shapes, where):
    bug = False
    for call, got in enumerate(calls):
        for i, (g, r, e) in enumerate(zip(got, reference, eager)):
            what = ("output %d" % i) if i < len(shapes) else ("gradient %d" % (i - len(shapes)))
            if i in INDEX_OUTPUTS:
                continue  # indices of max/min: ties may pick any one
            if i in DRAWN_RESULTS and g.shape == r.shape:
                # Computed from a random draw: PyTorch's numbers, not the reference's, but the
                # same ones on every call under the same seed (up to the rounding of a later,
                # fused graph: another draw differs by the values' own size).
                first = calls[0][i]
                a, b = first.double().nan_to_num(0.0), g.double().nan_to_num(0.0)
                slack = 16 * max(CASE_EPS, 2.0 ** -23) * (a.abs() + a.abs().max() + 1.0) \
                    if a.numel() and g.is_floating_point() else torch.zeros_like(a)
                if not torch.equal(g.isnan(), first.isnan()) or bool(((a - b).abs() > slack).any()):
                    print("%scall %d, %s (drawn): differs from call 0 under the same seed"
                          % (where, call, what))
                    bug = True
                continue
            if g.shape != r.shape:
                print("%scall %d, %s: shape %s, expected %s" % (where, call, what, list(g.shape),
                                                                list(r.shape)))
                bug = True
                continue
            if not g.is_floating_point():
                if not torch.equal(g, r) and (EAGER or not torch.equal(g, e)):
                    print("%scall %d, %s: integer values differ" % (where, call, what))
                    bug = True
                continue
            g64, r64, e64 = g.double(), r.double(), e.double()
            finite = torch.isfinite(r64) & torch.isfinite(e64)
            if bool((finite & ~torch.isfinite(g64)).any()):
                print("%scall %d, %s: NaN/Inf where the reference is finite" % (where, call, what))
                bug = True
                continue
            if not bool(finite.any()):
                continue
            error = (g64 - r64).abs()[finite]
            if EAGER:
                # Eager float32 is the path itself: the baseline is float32 rounding instead.
                baseline = "4x rounding to %s" % str(g.dtype).replace("torch.", "")
                honest = 4 * (r64.to(g.dtype).double() - r64).abs()[finite]
            else:
                baseline = "eager - float64"
                honest = (e64 - r64).abs()[finite]
            scale = r64.abs()[finite].max().item() + 1.0
            # As weft's judge: the element's honest error, the tensor's typical one (upper
            # quartile: where eager happens to round exactly, another honest order need not),
            # and a floor of the widest epsilon the case computes in (float16's 2^-10 when it
            # has float16 values: a compiled path that keeps float32 between ops is no bug).
            typical = torch.quantile(honest, 0.75).item() if honest.numel() else 0.0
            floor = max(1e-5, 16 * CASE_EPS) * (r64.abs()[finite] + scale)
            tolerance = 16 * (honest + typical) + floor
            print("%scall %d, %s: max |path - float64| = %.3g, max |%s| = %.3g"
                  % (where, call, what, error.max().item(), baseline, honest.max().item()))
            if bool((error > tolerance).any()):
                bug = True
    return bug


if __name__ == "__main__":
    main()
)py";

}  // namespace

std::string python_model_source(const ir::Graph& graph) {
  return with_compat_definitions(
      graph, model_class(graph, emit_forward(graph, SourceDialect::Python), "Model"));
}

std::string export_python_script(const ir::Graph& graph, const ir::TensorMap& values,
                                 const ExportOptions& options) {
  const std::string& backend = options.backend;
  const EmittedForward forward = emit_forward(graph, SourceDialect::Python);
  std::vector<std::string> inputs;
  std::vector<std::string> parameters;
  for (ir::ValueId id : graph.inputs()) inputs.push_back(graph.value(id).name);
  for (ir::ValueId id : graph.parameters()) parameters.push_back(graph.value(id).name);
  const std::string compile = compile_expression(backend);

  std::string ops;
  std::set<std::string> seen;
  for (const ir::Node& node : graph.nodes()) {
    const std::string name(ir::op_name(node.op));
    if (seen.insert(name).second) ops += (ops.empty() ? "" : ", ") + name;
  }
  std::string text = "#!/usr/bin/env python3\n";
  text += fmt::format("# weft repro: the {} path against PyTorch eager in float64.\n", backend);
  text += fmt::format("# {} nodes ({}). Runs with stock PyTorch; exits 1 when the bug shows.\n",
                      graph.nodes().size(), ops);
  if (backend.rfind("torch2-", 0) == 0) {
    text +=
        "# PyTorch's pt2 fuzzing rules: the reference is eager float64; the path is wrong only "
        "where\n# it is farther from it than eager float32 is; fallback_random; the seed reset "
        "before\n# every run; indices of max/min are not compared.\n";
  }
  text += "import json\nimport os\nimport signal\nimport struct\nimport sys\nimport time\n\n";
  text += "import torch\nimport torch.nn.functional as F\n\n";
  text += "torch.set_num_threads(1)\n";
  text += fuser_setup(backend) + "\n\n";
  text += with_compat_definitions(graph, model_class(graph, forward, "Model")) + "\n\n";
  std::string candidate = "Model";
  if (backend.rfind("fault:", 0) == 0) {
    const FaultSpec spec = parse_fault_backend_name(backend);
    text += fault_function(spec.kind) + "\n\n";
    text += model_class(graph, with_fault_lines(graph, forward, spec.op), "FaultyModel") + "\n\n";
    candidate = "FaultyModel";
  }
  if (!options.values_path.empty()) {
    text += kSafetensorsReader;
    text +=
        "\n\nVALUES = load_safetensors(os.path.join(os.path.dirname(os.path.abspath(__file__)), " +
        quoted(options.values_path) + "))\n";
  } else {
    text += "VALUES = {\n";
    for (const auto& [name, value] : values) {
      text += "    " + quoted(name) + ": " + python_tensor_literal(value) + ",\n";
    }
    text += "}\n";
  }
  text += "INPUTS = " + python_list(inputs) + "\n";
  double case_epsilon = dtype_epsilon(Dtype::Float32);
  for (const ir::Value& value : graph.values()) {
    case_epsilon = std::max(case_epsilon, dtype_epsilon(value.type.dtype));
  }
  text +=
      "CASE_EPS = " + float_literal(case_epsilon) + "  # the widest epsilon of the case's dtypes\n";
  std::string layouts;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& leaf = graph.value(id);
    if (!leaf.has_layout()) continue;
    std::string strides;
    for (std::int64_t s : leaf.strides)
      strides += (strides.empty() ? "" : ", ") + std::to_string(s);
    layouts += fmt::format("{}{}: ([{}], {})", layouts.empty() ? "" : ", ", quoted(leaf.name),
                           strides, leaf.storage_offset);
  }
  text += "LAYOUTS = {" + layouts + "}  # input: (strides, storage offset)\n";
  // Dynamic shapes: the later shape sets the path is called with (not rebuilt), and their layouts.
  const std::size_t shape_sets = graph.shape_set_count();
  std::string input_shape_sets;
  for (ir::ValueId id : graph.inputs()) {
    const ir::Value& leaf = graph.value(id);
    if (leaf.shape_sets.empty()) continue;
    input_shape_sets += fmt::format("{}{}: {}", input_shape_sets.empty() ? "" : ", ",
                                    quoted(leaf.name), nlohmann::json(leaf.shape_sets).dump());
  }
  std::string later_layouts;
  for (std::size_t set = 1; set < shape_sets; ++set) {
    std::string entries;
    for (ir::ValueId id : graph.inputs()) {
      const ir::Value& leaf = graph.value(id);
      if (!leaf.has_layout()) continue;
      const ir::Shape& shape = leaf.shape_sets.empty() ? leaf.type.shape : leaf.shape_sets[set - 1];
      std::string strides;
      for (std::int64_t s : ir::relayout(leaf.type.shape, leaf.strides, shape))
        strides += (strides.empty() ? "" : ", ") + std::to_string(s);
      entries += fmt::format("{}{}: ([{}], {})", entries.empty() ? "" : ", ", quoted(leaf.name),
                             strides, leaf.storage_offset);
    }
    later_layouts += (later_layouts.empty() ? "{" : ", {") + entries + "}";
  }
  text += fmt::format("SHAPE_SETS = {}\n", shape_sets);
  text += "INPUT_SHAPE_SETS = {" + input_shape_sets + "}  # input: its shapes at the later sets\n";
  text += "RUNS_SHAPE_SETS = [True] * (SHAPE_SETS - 1)  # an export may specialize a dim\n";
  text += "SHAPE_SET_LAYOUTS = [" + later_layouts + "]  # per later shape set\n";
  text += std::string("REQUIRES_GRAD = ") + (graph.requires_grad() ? "True" : "False") + "\n";
  text += "PARAMETERS = " + python_list(parameters) + "\n";
  text += "PATH = " + quoted(backend) + "\n";
  text += std::string("EAGER = ") + (is_eager_path(backend) ? "True" : "False") + "\n";
  text += std::string("DEVICE = ") + (is_cuda_path(backend) ? "'cuda'" : "'cpu'") + "\n";
  std::string indices;
  for (std::size_t i : index_outputs(graph))
    indices += (indices.empty() ? "" : ", ") + std::to_string(i);
  text += "INDEX_OUTPUTS = [" + indices + "]\n";
  text += "DRAWN_RESULTS = [" + drawn_results_list(graph) +
          "]  # computed from random draws: shape and repeatability only\n";
  text += fmt::format("CALLS = {}\n", options.calls);
  text += std::string("GRADIENTS = ") +
          (path_has_gradients(backend) && graph.requires_grad() ? "True" : "False") + "\n";
  text += "CANDIDATE_CLASS = " + candidate + "\n\n\n";
  if (is_export_path(backend)) {
    text +=
        "def exported(m):\n"
        "    \"\"\"torch.export with the dims that change across shape sets dynamic.\"\"\"\n"
        "    program, RUNS_SHAPE_SETS[:] = export_at_shape_sets(m, example(), INPUTS, "
        "INPUT_SHAPE_SETS)\n"
        "    return program\n\n\n";
  }
  text += "def make_path(m):\n    return " + compile + "\n\n";
  text += "\n\n" + std::string(kLaidOutPython);
  if (is_export_path(backend)) text += "\n\n" + std::string(kDynamicExportPython);
  text += kCheck;
  return text;
}

}  // namespace weft::oracle
