#!/usr/bin/env bash
# weft beside NNSmith (0.1.0, from PyPI, installed into .venv on first use), in one run on this
# machine, each on one thread / one job:
#  - Generation, models/s at 5, 10 and 20 nodes (MODELS models each, seeds 0..MODELS-1): weft's
#    generator_bench (graph generation, value search for finite float32 and float64 outputs and
#    gradients, one run on weft's engine) beside the steps of NNSmith's nnsmith.cli.model_gen
#    for the torch model type, in-process without imports and saving (graph generation with
#    Z3, materialization with its gradient-guided input search, one eager run for the oracle;
#    bench/nnsmith_side.py, after 20 untimed models). "finite": the share of models whose
#    values/outputs are finite. Nodes are operators on both sides; both cap tensors at 65,536
#    elements.
#  - Fuzzing, cases/s of 10-node cases for SECONDS each: `weft fuzz --jobs 1` with backends
#    torch2-eager, then torch2-eager,torch2-inductor; per case it generates a model, runs its
#    float64 reference and float32 engine and each backend (.venv's PyTorch in weft's Python
#    runner, torch.compile once per case) 3 times with outputs and gradients, judges them
#    against the reference with a rounding model, localizes and stores what it finds. Beside it
#    NNSmith's own FuzzingLoop (nnsmith.cli.fuzz) with a backend that runs the model eagerly
#    again, then one with torch.compile + Inductor (NNSmith 0.1.0 has none; bench/nnsmith_side.py
#    defines it like NNSmith's later pt2 backend): per case it generates a model as above (its
#    eager run is the oracle), compiles and runs it once, forward only, and compares outputs
#    with assert_allclose; no float64 reference, no gradients. cases/s: cases / the run's wall
#    time, which for weft includes starting its worker and Python runner and for NNSmith
#    excludes its imports; both include Inductor's first compile, from an empty cache.
#    NNSmith's process is capped at 4 GiB above its size after imports (its ops' weights are
#    unbounded: an 8.9 GB Conv2d weight got it OOM-killed); a model past it is not counted.
#   bench/vs_nnsmith.sh [SECONDS (60)] [MODELS (300)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds="${1:-60}"
models="${2:-300}"
python="$root/.venv/bin/python"
weft="$root/build/default/cli/weft"
generator_bench="$root/build/default/bench/generator_bench"
die() { echo "vs_nnsmith: $*" >&2; exit 1; }
[ -x "$weft" ] && [ -x "$generator_bench" ] ||
  die "weft is not built (no $weft or $generator_bench): run scripts/build"
[ -x "$python" ] || die "no .venv: run scripts/setup-torch2"
[ ! -e "$root/.venv/torch2-unavailable" ] || die "$(cat "$root/.venv/torch2-unavailable")"
torch=$(grep -v '^#' "$root/scripts/pytorch-version" | head -n 1)
version() {  # of an installed package, from its metadata; empty if not installed
  "$python" -c "import importlib.metadata as m; print(m.version('$1').split('+')[0])" 2>/dev/null ||
    true
}
[ "$(version torch)" = "${torch#torch==}" ] ||
  die ".venv's torch is not ${torch#torch==}: run scripts/setup-torch2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$(version nnsmith)" != 0.1.0 ] || [ -z "$(version hydra-core)" ]; then
  echo "vs_nnsmith: installing nnsmith 0.1.0 and hydra-core into .venv, with $torch kept"
  echo "$torch" >"$work/constraints.txt"
  "$python" -m pip install -q --disable-pip-version-check -c "$work/constraints.txt" \
    nnsmith==0.1.0 hydra-core || die "pip could not install nnsmith==0.1.0 hydra-core"
  imported=$("$python" -c 'import torch; print(torch.__version__)')
  [ "${imported%%+*}" = "${torch#torch==}" ] || die "after pip, .venv's torch is $imported"
fi
# NNSmith's half: bench/nnsmith_side.py ARGS, its stdout into the file OUT.
side() {
  local out=$1; shift
  TMPDIR="$work" TORCHINDUCTOR_CACHE_DIR="$work/inductor" \
    "$python" "$root/bench/nnsmith_side.py" "$@" >"$out" 2>"$work/nnsmith.log" ||
    { cat "$work/nnsmith.log" >&2; die "nnsmith_side.py $* failed"; }
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf("%.2fx", a / b); else printf("-") }'; }

echo "generation: models/s, one thread, $models models per size"
"$generator_bench" --models "$models" >"$work/weft-gen.txt"
side "$work/nnsmith-gen.txt" gen 5,10,20 "$models"
printf '%-6s %9s %7s %9s %7s %13s\n' nodes weft finite NNSmith finite weft/NNSmith
for nodes in 5 10 20; do
  # weft's row for NODES, and the "(K of N models without finite values)" line under it
  read -r rate finite < <(awk -v n="$nodes" '
    NF >= 7 && $1 ~ /^[0-9]+$/ { s = $1 == n; if (s) { r = $2; f = 100 } }
    s && /without finite values/ { sub(/\(/, ""); f = 100 * ($3 - $1) / $3; s = 0 }
    END { print r, f }' "$work/weft-gen.txt")
  read -r _ _ nrate _ failed nfinite _ < <(grep "^gen $nodes " "$work/nnsmith-gen.txt")
  printf '%-6s %9.1f %6.0f%% %9.1f %6.0f%% %13s\n' "$nodes" "$rate" "$finite" "$nrate" "$nfinite" \
    "$(ratio "$rate" "$nrate")"
  [ "$failed" = 0 ] || echo "       (NNSmith: $failed of $models models not produced, not counted)"
done

echo
echo "fuzzing: cases/s of 10-node cases, one job, ${seconds} s each"
printf '%-9s %9s %6s %9s %6s %13s\n' path weft cases NNSmith cases weft/NNSmith
for mode in eager inductor; do
  backends=torch2-eager
  [ "$mode" = eager ] || backends=torch2-eager,torch2-$mode
  "$weft" fuzz --time "$seconds" --nodes 10 --jobs 1 --seed 1 --backends "$backends" \
    --out "$work/weft-$mode" >"$work/weft.txt" 2>"$work/weft.log" ||
    { cat "$work/weft.txt" "$work/weft.log" >&2; die "weft fuzz --backends $backends failed"; }
  cases=$(sed -nE 's/.*: ([0-9]+) cases in this run.*/\1/p' "$work/weft.txt")
  # cases / the run's wall time, from the last line weft fuzz wrote to stats.jsonl
  rate=$(tail -n 1 "$work/weft-$mode/stats.jsonl" |
    sed -nE 's/.*"cases_per_second":([0-9.eE+-]+).*/\1/p' | awk '{ printf("%.2f", $1) }')
  side "$work/nnsmith-fuzz.txt" fuzz "$mode" "$seconds" 10
  read -r _ _ nrate ncases _ failed _ <"$work/nnsmith-fuzz.txt"
  printf '%-9s %9s %6s %9s %6s %13s\n' "$mode" "$rate" "$cases" "$nrate" "$ncases" \
    "$(ratio "$rate" "$nrate")"
  [ "$failed" = 0 ] || echo "          (NNSmith: $failed more models failed to materialize)"
done
