#!/usr/bin/env bash
# `weft fuzz` end to end, against planted faults: every planted kind found and filed in
# exactly one bucket; SIGKILL at random moments then --resume loses and duplicates nothing;
# SIGINT stops gracefully with a summary; two shards cover what one campaign covers.
set -u
weft_binary="$1"
# Foreground runs are bounded, so that a hang fails this test with a message instead of a
# CTest timeout; background runs use the binary itself, so that signals reach it.
run_weft() { timeout 180 "$weft_binary" "$@"; }
weft=run_weft
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
faults="fault:perturb-large@relu,fault:nan@tanh,fault:throw@sigmoid"
common=(--backends "$faults" --ops relu,tanh,sigmoid,linear,add,mul --nodes 4-6 --jobs 2
        --time-limit 10)

# Every file of a campaign parses; no bucket stores a case twice; print "bucket count".
inspect() {
  /usr/bin/python3 - "$1" <<'PY' || exit 1
import json, os, sys
root = sys.argv[1]
json.load(open(os.path.join(root, "campaign.json")))
json.load(open(os.path.join(root, "progress.json")))
if os.path.exists(os.path.join(root, "stats.jsonl")):
    for line in open(os.path.join(root, "stats.jsonl")):
        json.loads(line)
for bucket in sorted(os.listdir(os.path.join(root, "bugs"))):
    path = os.path.join(root, "bugs", bucket, "bucket.json")
    if not os.path.exists(path):
        continue
    b = json.load(open(path))
    assert len(b["cases"]) == len(set(b["cases"])), "duplicate case in " + bucket
    for case in b["cases"]:
        for name in ("graph.json", "verdict.json"):
            json.load(open(os.path.join(root, "bugs", bucket, case, name)))
    print(bucket, b["count"])
PY
}

# 1. Planted faults: three kinds, three buckets, each localized to its op.
"$weft" fuzz "${common[@]}" --cases 40 --seed 5 --out "$work/a" > "$work/a.txt" 2>&1 ||
  { cat "$work/a.txt"; fail "fault campaign exited non-zero"; }
inspect "$work/a" > "$work/a.buckets" || fail "campaign a does not parse"
[ "$(wc -l < "$work/a.buckets")" -eq 3 ] || { cat "$work/a.buckets"; fail "expected 3 buckets"; }
grep -q "^wrong-output-fault_perturb-large_relu-relu-" "$work/a.buckets" || fail "perturb bucket"
grep -q "^nan-inf-mismatch-fault_nan_tanh-tanh-" "$work/a.buckets" || fail "nan bucket"
# An exception's message is its root cause: its bucket names no op and lists the ops it met.
grep -q "^exception-mismatch-fault_throw_sigmoid-any-op-" "$work/a.buckets" || fail "throw bucket"
/usr/bin/python3 - "$work/a" <<'PY' || fail "the throw bucket does not list sigmoid in its ops"
import json, os, sys
bugs = os.path.join(sys.argv[1], "bugs")
names = [b for b in os.listdir(bugs) if b.startswith("exception-mismatch-fault_throw_sigmoid")]
assert json.load(open(os.path.join(bugs, names[0], "bucket.json")))["ops"] == ["sigmoid"]
PY
grep -q "symptom .*path .*op .*count" "$work/a.txt" || fail "no summary table"

# 2. SIGKILL at random moments, then --resume: the same buckets and stored cases.
"$weft_binary" fuzz "${common[@]}" --cases 40 --seed 5 --out "$work/k" > /dev/null 2>&1 &
pid=$!
sleep "$(/usr/bin/python3 -c 'import random; print(random.uniform(1.0, 4.0))')"
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
inspect "$work/k" > /dev/null || fail "files do not parse after SIGKILL"
for round in 1 2; do
  "$weft_binary" fuzz --resume --out "$work/k" > "$work/k$round.txt" 2>&1 &
  pid=$!
  sleep "$(/usr/bin/python3 -c 'import random; print(random.uniform(1.0, 3.0))')"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  inspect "$work/k" > /dev/null || fail "files do not parse after SIGKILL (round $round)"
done
"$weft" fuzz --resume --out "$work/k" > "$work/k.txt" 2>&1 || { cat "$work/k.txt"; fail "resume"; }
inspect "$work/k" | cut -d' ' -f1 > "$work/k.names"
cut -d' ' -f1 "$work/a.buckets" > "$work/a.names"
diff "$work/a.names" "$work/k.names" || fail "resumed campaign has other buckets"
for b in $(cat "$work/a.names"); do
  a_cases=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/a/bugs/$b/bucket.json'))['cases'])")
  k_cases=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/k/bugs/$b/bucket.json'))['cases'])")
  [ "$a_cases" = "$k_cases" ] || fail "bucket $b stores $k_cases after resume, $a_cases without"
done
/usr/bin/python3 -c "import json,sys; p=json.load(open('$work/k/progress.json')); sys.exit(0 if p['done_below'] >= 40 else 1)" ||
  fail "the resumed campaign did not finish its 40 cases"

# 3. SIGINT: a graceful stop with a summary and exit status 0. The signal is sent once the
# campaign exists (its handler is installed before that) and has judged a case.
"$weft_binary" fuzz "${common[@]}" --time 60 --out "$work/i" > "$work/i.txt" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  grep -q '"cases": [1-9]' "$work/i/progress.json" 2>/dev/null && break
  grep -q "new bug" "$work/i.txt" 2>/dev/null && break
  sleep 0.1
done
kill -INT "$pid"
( sleep 90 && kill -9 "$pid" ) > /dev/null 2>&1 &
watchdog=$!
wait "$pid"
status=$?
pkill -P "$watchdog" 2>/dev/null
kill "$watchdog" 2>/dev/null
[ $status -eq 0 ] || { cat "$work/i.txt"; fail "SIGINT should exit 0"; }
grep -q "^campaign .*cases in this run" "$work/i.txt" || fail "no summary after SIGINT"
inspect "$work/i" > /dev/null || fail "files do not parse after SIGINT"

# 3b. SIGTERM to weft and every worker at once, as Slurm stops a job (preemption, scancel): a
# graceful stop whose progress says "stopped", and no worker's death filed as a crash.
"$weft_binary" fuzz "${common[@]}" --time 60 --out "$work/t" > "$work/t.txt" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  grep -q '"cases": [1-9]' "$work/t/progress.json" 2>/dev/null && break
  sleep 0.1
done
# A second writer of a running campaign (an array submitted twice) is refused, naming the first.
"$weft" fuzz --resume --out "$work/t" > "$work/t2.txt" 2>&1 && fail "resumed a campaign that another weft writes"
grep -q "(pid $pid) on this machine is still writing" "$work/t2.txt" ||
  { cat "$work/t2.txt"; fail "no message naming the live writer"; }
pkill -TERM -P "$pid"
kill -TERM "$pid"
wait "$pid" || { cat "$work/t.txt"; fail "SIGTERM should exit 0"; }
inspect "$work/t" > "$work/t.buckets" || fail "files do not parse after SIGTERM"
grep -q "^crash" "$work/t.buckets" && { cat "$work/t.buckets"; fail "a worker stopped by SIGTERM was filed as a crash"; }
grep -q '"state": "stopped"' "$work/t/progress.json" || fail "progress.json does not say stopped"
# Written "running" by another machine 57 s ago: resumed once it has been quiet for 60 s.
/usr/bin/python3 - "$work/t/progress.json" <<'PY'
import json, sys, time
p = json.load(open(sys.argv[1]))
p.update(state="running", owner="elsewhere:1", updated=time.time() - 57)
json.dump(p, open(sys.argv[1], "w"))
PY
"$weft" fuzz --resume --time 1 --out "$work/t" > "$work/t3.txt" 2>&1 || { cat "$work/t3.txt"; fail "resume after a quiet writer"; }
grep -q "last written by elsewhere:1 .* waiting" "$work/t3.txt" || { cat "$work/t3.txt"; fail "no wait for the other machine's writer"; }

# 4. Refusals: an existing campaign without --resume, a newer schema.
"$weft" fuzz "${common[@]}" --cases 1 --out "$work/a" > "$work/x.txt" 2>&1 && fail "overwrote a campaign"
grep -q "already holds a campaign" "$work/x.txt" || fail "no message for an existing campaign"
sed -i 's/"weft-campaign": 1/"weft-campaign": 99/' "$work/i/campaign.json"
"$weft" fuzz --resume --out "$work/i" > "$work/y.txt" 2>&1 && fail "resumed a newer schema"
grep -q "newer weft" "$work/y.txt" || { cat "$work/y.txt"; fail "no message for a newer schema"; }

# 5. Shards 0/2 and 1/2 judge the same case indices as one campaign.
# --cases counts the whole campaign's cases: each shard judges its share of the 40.
"$weft" fuzz "${common[@]}" --cases 40 --seed 5 --shard 0/2 --out "$work/s0" > /dev/null 2>&1 || fail "shard 0"
"$weft" fuzz "${common[@]}" --cases 40 --seed 5 --shard 1/2 --out "$work/s1" > /dev/null 2>&1 || fail "shard 1"
/usr/bin/python3 - "$work" <<'PY' || fail "shards do not cover the unsharded campaign"
import json, os, sys
w = sys.argv[1]
def cases(root):
    found = {}
    for b in os.listdir(os.path.join(root, "bugs")):
        data = json.load(open(os.path.join(root, "bugs", b, "bucket.json")))
        found.setdefault(b, 0)
        found[b] += data["count"]
    return found
one, s0, s1 = cases(os.path.join(w, "a")), cases(os.path.join(w, "s0")), cases(os.path.join(w, "s1"))
both = {b: s0.get(b, 0) + s1.get(b, 0) for b in set(s0) | set(s1)}
assert both == one, (both, one)
PY
if "$weft" merge --help > /dev/null 2>&1; then
  "$weft" merge "$work/s0" "$work/s1" -o "$work/m" > /dev/null 2>&1 || fail "merge"
  inspect "$work/m" > "$work/m.buckets" || fail "merged campaign does not parse"
  diff <(sort "$work/a.buckets") <(sort "$work/m.buckets") || fail "merge differs from the unsharded campaign"
fi
# 5b. Shards from a Slurm array's environment land under one root; `weft merge --watch` of the
# root equals the unsharded campaign and ends at once when every shard has finished; `weft
# report ROOT` reports the merge; a shard that died shows as stale and keeps the watch going.
for i in 0 1; do
  SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_JOB_ID=77 \
    "$weft" fuzz "${common[@]}" --cases 40 --seed 5 --out "$work/root" > "$work/r$i.txt" 2>&1 ||
    { cat "$work/r$i.txt"; fail "array task $i"; }
done
[ -f "$work/root/shard-1-of-2/campaign.json" ] || fail "no shard-1-of-2 under the root"
"$weft" merge --watch --interval 0.2 "$work/root" -o "$work/w" > "$work/w.txt" 2>&1 ||
  { cat "$work/w.txt"; fail "merge --watch"; }
grep -q "every shard finished" "$work/w.txt" || { cat "$work/w.txt"; fail "watch summary"; }
inspect "$work/w" > "$work/w.buckets" || fail "watched merge does not parse"
diff <(sort "$work/a.buckets") <(sort "$work/w.buckets") || fail "watched merge differs from the unsharded campaign"
"$weft" report "$work/root" > /dev/null 2>&1 || fail "report of a shard root"
grep -q "<h2>Shards</h2>" "$work/root/report.html" || fail "the root's report has no shard table"
# A requeued array task resumes its shard instead of refusing it.
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 "$weft" fuzz --out "$work/root" > "$work/r1b.txt" 2>&1 ||
  { cat "$work/r1b.txt"; fail "requeued array task"; }
grep -q "resuming" "$work/r1b.txt" || fail "the requeued task did not resume"
/usr/bin/python3 - "$work/root/shard-1-of-2/progress.json" <<'PY' || fail "shard 1 does not look dead"
import json, sys
p = json.load(open(sys.argv[1])); p["state"] = "running"; p["updated"] -= 3600
json.dump(p, open(sys.argv[1], "w"))
PY
timeout -s INT 5 "$weft_binary" merge --watch --interval 0.5 --stale 60 "$work/root" -o "$work/w2" > "$work/w2.txt" 2>&1
grep -q "shard 1/2  stale" "$work/w2.txt" || { cat "$work/w2.txt"; fail "a dead shard is not shown stale"; }
grep -q "every shard finished" "$work/w2.txt" && fail "a stale shard counted as finished"

# 6. On LibTorch's paths a campaign learns its capability gaps once (cached) and stores them
# for the generator to avoid: LibTorch 1.13 has no int64 reflection padding.
XDG_CACHE_HOME="$work/cache" "$weft" fuzz --backends torch --cases 2 --jobs 1 --out "$work/g" \
  > "$work/g.txt" 2>&1 || { cat "$work/g.txt"; fail "torch campaign"; }
grep -q "learned .* capability gaps" "$work/g.txt" || { cat "$work/g.txt"; fail "no capability probe"; }
ls "$work/cache/weft/"capabilities-libtorch-*.json > /dev/null 2>&1 || fail "capabilities not cached"
/usr/bin/python3 - "$work/g" <<'PY' || fail "campaign.json does not list pad/int64 to avoid"
import json, os, sys
avoid = json.load(open(os.path.join(sys.argv[1], "campaign.json")))["options"]["avoid"]
assert ["pad", "int64"] in avoid, avoid
PY
XDG_CACHE_HOME="$work/cache" "$weft" fuzz --backends torch --cases 2 --jobs 1 --out "$work/g2" \
  > "$work/g2.txt" 2>&1 || fail "second torch campaign"
grep -q "learned" "$work/g2.txt" && fail "the capability gaps were probed again instead of read"

# 7. --rate sets a program form's share for the campaign, kept in campaign.json; bad rates and
# unknown forms are refused, naming the option, before anything is written.
"$weft" fuzz --backends torch --cases 4 --jobs 1 --no-learn-gaps --rate half-precision=1 \
  --rate layouts=0 --out "$work/h" > "$work/h.txt" 2>&1 || { cat "$work/h.txt"; fail "half campaign"; }
/usr/bin/python3 - "$work/h" <<'PY' || fail "--rate not kept or not applied"
import json, os, sys
options = json.load(open(os.path.join(sys.argv[1], "campaign.json")))["options"]
assert options["rates"] == {"half-precision": 1.0, "layouts": 0.0}, options["rates"]
forms = {}
for line in open(os.path.join(sys.argv[1], "stats.jsonl")):
    forms = json.loads(line).get("forms", forms)
assert forms.get("half-precision") == 4, forms
assert "non-contiguous-input" not in forms, forms
PY
"$weft" fuzz --cases 1 --rate half=1 --out "$work/h2" > "$work/h2.txt" 2>&1 && fail "an unknown form was accepted"
grep -q -- "--rate: expected FORM=R with FORM one of forward-only" "$work/h2.txt" || { cat "$work/h2.txt"; fail "unknown form message"; }
"$weft" fuzz --cases 1 --rate layouts=1.5 --out "$work/h3" > "$work/h3.txt" 2>&1 && fail "a rate above 1 was accepted"
grep -q -- "--rate: layouts: expected a rate between 0 and 1, got '1.5'" "$work/h3.txt" || { cat "$work/h3.txt"; fail "bad rate message"; }
[ -e "$work/h2" ] || [ -e "$work/h3" ] && fail "a refused campaign left a directory"
echo "fuzz campaigns behave"
