# NNSmith's half of bench/vs_nnsmith.sh, in .venv's Python with NNSmith 0.1.0 from PyPI: in one
# process on one thread, timed after the imports and NNSmith's cached op/dtype table ("topset"),
# with the defaults of NNSmith's config/main.yaml.
#   gen NODES,... MODELS  nnsmith.cli.model_gen's steps for the torch model type, seeds
#     0..MODELS-1, without saving: model_gen (symbolic-cinit, Z3), make_concrete,
#     TorchModel.from_gir, refine_weights (its gradient-guided input search), make_oracle (one
#     eager forward run), after 20 untimed models (the first use of some ops costs up to a second
#     of lazy initialization). A model counts when none of that raised. Prints
#     "gen NODES MODELS/S PRODUCED FAILED FINITE% OPS/MODEL", FINITE% the share of produced
#     models whose oracle outputs are all finite.
#   fuzz MODE SECONDS NODES  nnsmith.cli.fuzz's FuzzingLoop as is, for SECONDS: per case
#     make_testcase (the steps above), then verify_testcase: the backend compiles the model and
#     runs it once on the oracle's inputs, forward only under no_grad, and assert_allclose
#     (rtol 1e-2, atol 1e-3, NaN equal) compares its outputs with the eager oracle's. NNSmith
#     0.1.0 has no torch.compile backend (only torchjit): MODE is one defined below on its
#     BackendFactory after its later pt2 backend, "eager" (the model run eagerly again) or
#     "inductor" (torch.compile(fullgraph=True) after torch._dynamo.reset(): SymbolNets share
#     one forward, and Dynamo would run them eagerly past its recompile limit). Both switch off
#     SymbolNet's run-time NaN checks, as that backend's FxTracing does: Dynamo would split the
#     model at each op or fall back to eager. Its opset is model_gen's (a per-backend dtype test
#     would first compile every op x dtype with Inductor). Prints
#     "fuzz MODE CASES/S CASES BUGS FAILED_MAKE SECONDS".
import logging
import os
import resource
import sys
import tempfile
import time
import warnings

import numpy as np
import torch
import torch._inductor.config
from multipledispatch import dispatch
from omegaconf import OmegaConf

import nnsmith
import nnsmith.cli.fuzz as nnsmith_fuzz
from nnsmith.abstract.extension import activate_ext
from nnsmith.backends.factory import BackendFactory
from nnsmith.graph_gen import model_gen
from nnsmith.materialize import Model
from nnsmith.materialize.torch import TorchModel
from nnsmith.narrow_spec import auto_opset

torch.set_num_threads(1)
torch._dynamo.config.ignore_logging_functions.add(logging.Logger.isEnabledFor)  # SymbolNet's
torch._inductor.config.fallback_random = True  # as weft's runner
warnings.filterwarnings("ignore")
for name in ("fuzz", "mgen", "smt", "exec", "dtest", "core", "gen|torch", "viz"):
    logging.getLogger(name).setLevel(logging.CRITICAL)  # bug reports and tracebacks per case

CONFIG = OmegaConf.load(os.path.join(os.path.dirname(nnsmith.__file__), "config", "main.yaml"))
CONFIG.model.type = "torch"


class TorchCompileFactory(BackendFactory):
    def __init__(self, target="cpu", optmax=True, mode="inductor"):
        super().__init__(target, optmax)
        self.mode = mode

    @property
    def system_name(self) -> str:
        return "pt2-" + self.mode

    @property
    def version(self) -> str:
        return torch.__version__

    @dispatch(TorchModel)
    def make_backend(self, model):
        net = model.torch_model.eval()
        # As NNSmith's later pt2 backend (FxTracing): without the materialization's run-time
        # checks, which Dynamo would split the graph at or fall back to eager on.
        net.check_intermediate_numeric = False
        net.debug_numeric = lambda tensor_map: None
        run = net
        if self.mode == "inductor":
            torch._dynamo.reset()
            run = torch.compile(net, fullgraph=True, backend="inductor")

        def closure(inputs):
            with torch.no_grad():
                outputs = run(*[torch.from_numpy(v) for v in inputs.values()])
            return {k: v.detach().resolve_conj().numpy() for k, v in zip(net.output_like, outputs)}

        return closure


def generation(nodes_list, models, warm_up=20):
    mgen = CONFIG.mgen
    ModelType = Model.init("torch", backend_target="cpu")
    ModelType.add_seed_setter()
    opset = auto_opset(ModelType, None, vulops=mgen.vulops)
    activate_ext(opset=opset, factory=None)

    def make(seed, nodes):
        gen = model_gen(opset=opset, method=mgen.method, seed=seed,
                        max_elem_per_tensor=mgen.max_elem_per_tensor, max_nodes=nodes,
                        timeout_ms=mgen.timeout_ms, rank_choices=mgen.rank_choices,
                        dtype_choices=mgen.dtype_choices)
        ir = gen.make_concrete()
        model = ModelType.from_gir(ir)
        model.refine_weights()
        return ir, model.make_oracle()

    for seed in range(warm_up):  # untimed: the first models pay for lazy imports and inits
        make(1000 + seed, max(nodes_list))
    for nodes in nodes_list:
        produced = failed = finite = ops = 0
        start = time.perf_counter()
        for seed in range(models):
            try:
                ir, oracle = make(seed, nodes)
            except Exception:
                failed += 1
                continue
            produced += 1
            ops += ir.n_compute_inst()
            finite += all(np.isfinite(v).all() for v in oracle.output.values()
                          if np.issubdtype(v.dtype, np.inexact))
        rate = produced / (time.perf_counter() - start)
        print("gen %d %.2f %d %d %.0f %.1f" % (nodes, rate, produced, failed,
              100.0 * finite / max(produced, 1), ops / max(produced, 1)), flush=True)


def fuzz(mode, seconds, nodes):
    cfg = CONFIG.copy()
    cfg.backend.type = "pt2-" + mode
    cfg.fuzz.time, cfg.fuzz.seed, cfg.mgen.max_nodes = seconds, 1, nodes
    cfg.fuzz.root = os.path.join(tempfile.mkdtemp(), "nnsmith")  # it asks before reusing one
    # The two substitutions into NNSmith's own FuzzingLoop: our backend, model_gen's opset.
    BackendFactory.init = staticmethod(lambda name, target="cpu", optmax=True, **kw:
                                       TorchCompileFactory(target, optmax, name[len("pt2-"):]))
    nnsmith_fuzz.auto_opset = lambda model_cls, factory, vulops: auto_opset(model_cls, None, vulops)
    loop = nnsmith_fuzz.FuzzingLoop(cfg)
    start = time.perf_counter()
    loop.run()
    elapsed = time.perf_counter() - start
    s = loop.status
    print("fuzz %s %.2f %d %d %d %.1f" % (mode, s.n_testcases / elapsed, s.n_testcases, s.n_bugs,
                                          s.n_fail_make_test, elapsed), flush=True)


if __name__ == "__main__":
    # NNSmith bounds its tensors but not the weights its ops create: a 10-node model with an
    # 8.9 GB Conv2d weight came up, and the OOM killer ended the run. Capped at 4 GiB above its
    # size now, such a model fails to materialize: NNSmith's loop counts it in FAILED_MAKE and
    # goes on, and gen counts it as FAILED.
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (size + (4 << 30), resource.RLIM_INFINITY))
    if sys.argv[1] == "gen":
        generation([int(n) for n in sys.argv[2].split(",")], int(sys.argv[3]))
    else:
        fuzz(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
