#!/usr/bin/env bash
# `weft replay` and `weft export` as a user runs them: exit status 0 (no bug), 1 (bug), 2 (error),
# and an exported script that shows an injected fault under /usr/bin/python3.
set -u
weft="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# No in-place writes: TorchScript 1.13 refuses this case's relu_ after linear (corpus
# bug-torchscript-linear-3d-relu-inplace-leaf-view), and this case must be healthy.
"$weft" gen --seed 11 --nodes 6 --ops relu,linear,tanh,add,mul --rate in-place=0 -o "$work/cases" >/dev/null ||
  fail "weft gen"
case_dir="$work/cases/seed-000011"

"$weft" replay "$case_dir" --backends torch,torchscript > "$work/ok.txt"
[ $? -eq 0 ] || { cat "$work/ok.txt"; fail "replay of a healthy case should exit 0"; }
grep -q "verdict: no bug" "$work/ok.txt" || fail "no 'verdict: no bug' line"

"$weft" replay "$case_dir" --backends fault:perturb-large@tanh > "$work/bug.txt"
[ $? -eq 1 ] || { cat "$work/bug.txt"; fail "replay of an injected fault should exit 1"; }
grep -q "verdict: wrong-output in fault:perturb-large@tanh at node [0-9]* (tanh)" "$work/bug.txt" ||
  { cat "$work/bug.txt"; fail "the verdict does not name the fault"; }

cp -r "$case_dir" "$work/damaged"
printf '{"weft": 1, "inputs": [' > "$work/damaged/graph.json"
"$weft" replay "$work/damaged" > "$work/damaged.txt" 2>&1
[ $? -eq 2 ] || { cat "$work/damaged.txt"; fail "a damaged case should exit 2"; }
grep -q "graph.json" "$work/damaged.txt" || { cat "$work/damaged.txt"; fail "error does not name the file"; }

"$weft" replay "$case_dir" --backends no-such-backend > "$work/unknown.txt" 2>&1
[ $? -eq 2 ] || fail "an unknown backend should exit 2"
grep -q "unknown backend 'no-such-backend'" "$work/unknown.txt" || fail "unknown backend message"

if /usr/bin/python3 -c "import torch" 2>/dev/null; then
  "$weft" export "$case_dir" --python "$work/repro.py" --backend fault:perturb-large@tanh >/dev/null ||
    fail "export"
  /usr/bin/python3 "$work/repro.py" > "$work/repro.txt" 2>&1
  [ $? -eq 1 ] || { cat "$work/repro.txt"; fail "the exported script should exit 1 on the fault"; }
  grep -q "^BUG: fault:perturb-large@tanh" "$work/repro.txt" || fail "no BUG line"
  "$weft" export "$case_dir" --python "$work/throws.py" --backend fault:throw@tanh >/dev/null ||
    fail "export of a throwing path"
  /usr/bin/python3 "$work/throws.py" > "$work/throws.txt" 2>&1
  [ $? -eq 1 ] || { cat "$work/throws.txt"; fail "a path that raises should exit 1"; }
  grep -q "^BUG: fault:throw@tanh raised RuntimeError: injected fault" "$work/throws.txt" ||
    { cat "$work/throws.txt"; fail "no BUG line for the raising path"; }
  "$weft" export "$case_dir" --python "$work/clean.py" --backend torchscript-ofi --values file \
    >/dev/null || fail "export with values from the file"
  /usr/bin/python3 "$work/clean.py" > "$work/clean.txt" 2>&1
  [ $? -eq 0 ] || { cat "$work/clean.txt"; fail "a healthy path's script should exit 0"; }
else
  echo "skipping the exported-script checks: /usr/bin/python3 cannot import torch"
fi
echo "replay and export behave"
