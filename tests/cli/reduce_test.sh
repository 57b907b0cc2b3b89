#!/usr/bin/env bash
# `weft reduce` and `weft fuzz --reduce` end to end, against planted faults: reduced cases are
# whole directories that still show the bug (replay, repro.py), a finding that does not show
# is reported flaky and nothing is written, an existing output is never overwritten, and a
# resumed campaign reduces the buckets it had not reduced yet.
set -u
weft_binary="$1"
run_weft() { timeout 300 "$weft_binary" "$@"; }
weft=run_weft
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

faults="fault:perturb-large@relu,fault:throw@sigmoid"
$weft fuzz --backends "$faults" --ops relu,sigmoid,linear,add,mul,tanh --nodes 8-12 \
  --cases 16 --seed 5 --jobs 2 --time-limit 10 --reduce --out "$work/c" > "$work/fuzz.out" 2>&1 ||
  { cat "$work/fuzz.out"; fail "fuzz --reduce"; }
grep -q " [0-9]* → [12] nodes " "$work/fuzz.out" || { cat "$work/fuzz.out"; fail "no reduced bucket in the summary"; }

# Every bucket's first case has a whole reduced/ directory with at most 2 nodes.
/usr/bin/python3 - "$work/c" <<'PY' || fail "reduced directories"
import json, os, sys
root = sys.argv[1]
buckets = sorted(os.listdir(os.path.join(root, "bugs")))
assert len(buckets) == 2, buckets
for bucket in buckets:
    b = json.load(open(os.path.join(root, "bugs", bucket, "bucket.json")))
    # The case that opened the bucket was reduced; it is not always the lowest index stored.
    reduced = [os.path.join(root, "bugs", bucket, c, "reduced") for c in b["cases"]
               if os.path.isdir(os.path.join(root, "bugs", bucket, c, "reduced"))]
    assert len(reduced) == 1, (bucket, reduced)
    reduced = reduced[0]
    for name in ("graph.json", "values.safetensors", "verdict.json", "repro.py", "reduce.log",
                 "reduce.json"):
        assert os.path.exists(os.path.join(reduced, name)), (reduced, name)
    log = json.load(open(os.path.join(reduced, "reduce.json")))
    graph = json.load(open(os.path.join(reduced, "graph.json")))
    assert log["status"] == "reduced" and len(graph["nodes"]) <= 2, (bucket, log["nodes"])
    assert log["signature"] == b["signature"], (log["signature"], b["signature"])
    assert not any(n.startswith(".") for n in os.listdir(os.path.dirname(reduced))), "temp dir left"
PY

# The report shows the reduction (Markdown: its size; HTML: its steps).
$weft report "$work/c" --format md > /dev/null || fail "report md"
grep -q "| [0-9]* → [12] nodes |" "$work/c/report.md" || { cat "$work/c/report.md"; fail "md reduced"; }
$weft report "$work/c" > /dev/null || fail "report html"
grep -q "reduction steps" "$work/c/report.html" || fail "html without the reduction's steps"

case_dir="$(ls -d "$work"/c/bugs/wrong-output-*/case-* | head -1)"
[ -d "$case_dir" ] || fail "no wrong-output case"

# weft reduce: exit 0, a reduced case that still shows the bug on replay and in repro.py.
$weft reduce "$case_dir" -o "$work/r" --jobs 2 > "$work/reduce.out" 2>&1 ||
  { cat "$work/reduce.out"; fail "reduce exit status"; }
grep -q "^reduced: " "$work/reduce.out" || { cat "$work/reduce.out"; fail "no summary"; }
grep -q "removed" "$work/r/reduce.log" || { cat "$work/r/reduce.log"; fail "log without steps"; }
$weft replay "$work/r" --backends fault:perturb-large@relu > "$work/replay.out" 2>&1
[ $? -eq 1 ] || { cat "$work/replay.out"; fail "the reduced case does not replay as a bug"; }
grep -q "wrong-output in fault:perturb-large@relu at node .* (relu)" "$work/replay.out" ||
  { cat "$work/replay.out"; fail "replayed finding"; }
/usr/bin/python3 "$work/r/repro.py" > "$work/repro.out" 2>&1
[ $? -eq 1 ] || { cat "$work/repro.out"; fail "repro.py does not show the bug"; }

# An existing output directory is refused, not overwritten.
$weft reduce "$case_dir" -o "$work/r" > "$work/again.out" 2>&1
[ $? -eq 2 ] || fail "reduce into an existing directory"
grep -q "already exists" "$work/again.out" || { cat "$work/again.out"; fail "message"; }

# A finding that does not show: flaky, exit 1, nothing written.
cp -r "$case_dir" "$work/ghost"
/usr/bin/python3 - "$work/ghost/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
v["findings"][0]["backend"] = "fault:perturb-large@erf"
v["findings"][0]["op"] = "erf"
json.dump(v, open(sys.argv[1], "w"))
PY
$weft reduce "$work/ghost" -o "$work/ghost-out" > "$work/ghost.out" 2>&1
[ $? -eq 1 ] || { cat "$work/ghost.out"; fail "flaky exit status"; }
grep -q "^flaky" "$work/ghost.out" || { cat "$work/ghost.out"; fail "flaky message"; }
[ ! -e "$work/ghost-out" ] || fail "a flaky reduction wrote its output"

# A resumed campaign reduces the buckets whose reduction is missing (their lowest case).
bucket_dir="$(dirname "$case_dir")"
rm -rf "$bucket_dir"/case-*/reduced
$weft fuzz --out "$work/c" --resume --reduce > "$work/resume.out" 2>&1 ||
  { cat "$work/resume.out"; fail "resume --reduce"; }
first="$(ls -d "$bucket_dir"/case-* | head -1)"
[ -f "$first/reduced/graph.json" ] || { cat "$work/resume.out"; fail "not reduced on resume"; }

echo "reduce behaves"
