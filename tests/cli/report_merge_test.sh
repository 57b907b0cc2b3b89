#!/usr/bin/env bash
# `weft report` and `weft merge` on campaign directories written by hand in the format of
# corpus/include/weft/corpus/campaign.h: a self-contained HTML page and a Markdown table, merged
# counts and cases, and clear errors for damaged or occupied directories.
set -u
weft="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$weft" gen --seed 5 --nodes 4 -o "$work/gen" >/dev/null || fail "weft gen"
generated="$(find "$work/gen" -mindepth 1 -maxdepth 1 -type d | head -n 1)"
[ -f "$generated/graph.json" ] || fail "weft gen wrote no case directory"

# new_campaign DIR SEED CASES ELAPSED
new_campaign() {
  mkdir -p "$1/bugs"
  cat > "$1/campaign.json" <<EOF
{"weft-campaign": 1, "created": "2026-11-29T23:40:00Z",
 "versions": {"weft": "0.1.0", "libtorch": "1.13.0", "z3": "4.8.12"},
 "options": {"seed": $2, "nodes": [5, 10], "backends": ["torch", "torchscript-ofi"],
             "ops": [], "exclude": [], "shard": [0, 1], "cases": 0, "time": 60, "jobs": 2,
             "reduce": false}}
EOF
  printf '{"done_below": %s, "done_above": [], "cases": %s, "elapsed": %s}\n' "$3" "$3" "$4" \
    > "$1/progress.json"
  : > "$1/stats.jsonl"
  for step in 1 2 3; do
    printf '{"elapsed": %s, "cases": %s, "cases_per_second": %s, "buckets": %s, "bugs": %s, "by_symptom": {"wrong-output": %s}, "worker_restarts": 0, "ops": {"conv2d": %s, "relu": %s, "tanh": 3}, "phases": {"generate": 1.0, "execute": 2.0, "judge": 0.1, "io": 0.1}}\n' \
      $((step * 10)) $((step * $3 / 3)) $((40 + step)) "$step" $((step * 2)) "$step" \
      $((step * 7)) $((step * 4)) >> "$1/stats.jsonl"
  done
}

# add_case BUCKET_DIR CASE SYMPTOM BACKEND OP
add_case() {
  local dir="$1/$2"
  mkdir -p "$dir"
  cp "$generated/graph.json" "$generated/values.safetensors" "$dir/"
  cat > "$dir/verdict.json" <<EOF
{"findings": [{"symptom": "$3", "backend": "$4", "message": "max error 3.2e-01 is 1e4 x the float32 error <b>bold</b>", "node": 2, "op": "$5", "signature": "$3|$4|$5|"}],
 "backends": [{"backend": "torch", "outcome": "ok", "message": "", "seconds": 0.0012, "max_abs_error": 1e-07, "max_rel_error": 2e-07, "max_error_ratio": 1.0, "agrees": true},
              {"backend": "$4", "outcome": "ok", "message": "disagrees at node 2", "seconds": 0.0034, "max_abs_error": 0.32, "max_rel_error": 0.5, "max_error_ratio": 10000.0, "agrees": false}],
 "reference_finite": true, "note": ""}
EOF
  printf 'import torch\n# shows the bug: x < y && y > z\nprint("BUG: %s")\n' "$4" > "$dir/repro.py"
}

# add_bucket CAMPAIGN NAME SYMPTOM BACKEND OP COUNT FIRST_FOUND MESSAGE CASE...
add_bucket() {
  local campaign="$1" name="$2" symptom="$3" backend="$4" op="$5" count="$6" found="$7"
  local message="$8"
  shift 8
  local cases="" case_name
  for case_name in "$@"; do
    add_case "$campaign/bugs/$name" "$case_name" "$symptom" "$backend" "$op"
    cases="$cases${cases:+, }\"$case_name\""
  done
  cat > "$campaign/bugs/$name/bucket.json" <<EOF
{"signature": "$symptom|$backend|$op|", "symptom": "$symptom", "backend": "$backend",
 "op": "$op", "message": "$message", "count": $count, "first_case": "$1",
 "cases": [$cases], "first_found": $found}
EOF
}

shared_bucket="wrong-output-torchscript-ofi-conv2d-1a2b3c4d"
a="$work/a"
b="$work/b"
new_campaign "$a" 1 120 61.5
add_bucket "$a" "$shared_bucket" wrong-output torchscript-ofi conv2d 4 12.5 \
  "conv2d <script>alert(1)</script> differs" case-000000000017 case-000000000020
add_bucket "$a" crash-torch-relu-0badf00d crash torch relu 1 3.0 "signal 11" case-000000000003
mkdir -p "$a/bugs/crash-torch-relu-0badf00d/case-000000000003/reduced"
cp "$a/bugs/crash-torch-relu-0badf00d/case-000000000003/"{graph.json,values.safetensors,verdict.json,repro.py} \
  "$a/bugs/crash-torch-relu-0badf00d/case-000000000003/reduced/"
new_campaign "$b" 2 80 40.0
add_bucket "$b" "$shared_bucket" wrong-output torchscript-ofi conv2d 3 7.25 "conv2d differs" \
  case-000000000020 case-000000000031
add_bucket "$b" nan-inf-mismatch-torch-tanh-deadbeef nan-inf-mismatch torch tanh 2 20.0 "NaN" \
  case-000000000005

# The HTML page: every bucket, inline SVG charts, nothing fetched, text escaped.
"$weft" report "$a" > "$work/report.txt" 2>&1 || { cat "$work/report.txt"; fail "weft report"; }
html="$a/report.html"
[ -s "$html" ] || fail "no report.html"
for name in "$shared_bucket" crash-torch-relu-0badf00d; do
  grep -q "$name" "$html" || fail "report.html lacks bucket $name"
done
grep -q "<svg" "$html" || fail "report.html has no <svg"
grep -q "<details" "$html" || fail "report.html has no <details"
grep -q "reduced case" "$html" || fail "report.html does not show the reduced case"
grep -q "BUG: torchscript-ofi" "$html" || fail "report.html does not show repro.py"
urls="$(grep -o 'https\?://[^" ]*' "$html" |
  grep -v -x -e 'http://www.w3.org/2000/svg' -e 'http://www.w3.org/1999/xlink' || true)"
[ -z "$urls" ] || fail "report.html links outside itself: $urls"
grep -q "<script>alert" "$html" && fail "report.html does not escape text from bucket.json"
grep -q "&lt;script&gt;alert" "$html" || fail "the escaped bucket message is missing"
grep -q "x &lt; y &amp;&amp; y &gt; z" "$html" || fail "repro.py is not escaped"

# The Markdown summary.
"$weft" report "$a" --format md > /dev/null 2>&1 || fail "weft report --format md"
md="$a/report.md"
grep -q "^| bucket | symptom | backend | op | count | first case | first found | reduced |" "$md" ||
  { cat "$md"; fail "report.md has no bucket table"; }
grep -q "^| \`$shared_bucket\` | wrong-output | torchscript-ofi | conv2d | 4 |" "$md" ||
  { cat "$md"; fail "report.md lacks the bucket row"; }
# The op-frequency table: nodes per op, most frequent first, then the ops never generated.
grep -q "^| op | nodes | share |" "$md" || { cat "$md"; fail "report.md has no op table"; }
grep -q "^| tanh | " "$md" || { cat "$md"; fail "report.md's op table lacks tanh"; }
grep -q "^3 of the [0-9]* ops the campaign draws from generated; never: .*cumsum" "$md" ||
  { cat "$md"; fail "report.md does not name the ops never generated"; }
"$weft" report "$a" --format md -o "$work/custom.md" > /dev/null 2>&1 || fail "report -o"
[ -s "$work/custom.md" ] || fail "report -o wrote nothing"

# An empty campaign (no buckets, no stats) still renders.
mkdir -p "$work/empty"
printf '{"weft-campaign": 1, "created": "2026-11-29T23:40:00Z", "versions": {}, "options": {"seed": 9}}\n' \
  > "$work/empty/campaign.json"
"$weft" report "$work/empty" > "$work/empty.txt" 2>&1 || { cat "$work/empty.txt"; fail "empty report"; }
grep -q "No bugs found" "$work/empty/report.html" || fail "empty report lacks 'No bugs found'"
"$weft" report "$work/empty" --format md > /dev/null 2>&1 || fail "empty report --format md"

# Merge: three buckets, the shared one with summed count and no duplicate case.
"$weft" merge "$a" "$b" -o "$work/c" > "$work/merge.txt" 2>&1 ||
  { cat "$work/merge.txt"; fail "weft merge"; }
[ "$(grep -c "count" "$work/merge.txt")" -ge 3 ] || { cat "$work/merge.txt"; fail "merge summary"; }
python3 - "$work/c" "$shared_bucket" "$a" "$b" <<'EOF' || fail "merged campaign is wrong"
import json, os, sys
c, shared, a, b = sys.argv[1:]
buckets = sorted(os.listdir(os.path.join(c, "bugs")))
assert len(buckets) == 3, buckets
counts = {n: json.load(open(os.path.join(c, "bugs", n, "bucket.json")))["count"] for n in buckets}
assert counts == {shared: 7, "crash-torch-relu-0badf00d": 1,
                  "nan-inf-mismatch-torch-tanh-deadbeef": 2}, counts
bucket = json.load(open(os.path.join(c, "bugs", shared, "bucket.json")))
assert bucket["cases"] == ["case-000000000017", "case-000000000020", "case-000000000031"], bucket
assert bucket["first_found"] == 7.25, bucket
assert bucket["signature"] == "wrong-output|torchscript-ofi|conv2d|", bucket
for case in bucket["cases"]:
    assert os.path.isfile(os.path.join(c, "bugs", shared, case, "graph.json")), case
assert os.path.isdir(os.path.join(c, "bugs", "crash-torch-relu-0badf00d", "case-000000000003",
                                  "reduced"))
campaign = json.load(open(os.path.join(c, "campaign.json")))
assert campaign["weft-campaign"] == 1
assert campaign["merged_from"] == [os.path.realpath(a), os.path.realpath(b)], campaign
assert campaign["options"]["seed"] == 1
progress = json.load(open(os.path.join(c, "progress.json")))
assert progress["cases"] == 200 and progress["elapsed"] == 61.5, progress
# Both inputs judged the indices below 80, one of them those below 120 too.
assert progress["done_below"] == 120 and progress["done_above"] == [], progress
assert [p["done_below"] for p in progress["inputs"]] == [120, 80], progress
assert len([l for l in open(os.path.join(c, "stats.jsonl")) if l.strip()]) == 6
EOF
# A long campaign's stats are thinned in the merge: evenly spaced lines for the charts, and the
# last line of each run (a resumed run starts its counts again), whose counts the report sums.
cp -r "$a" "$work/long"
/usr/bin/python3 - "$work/long/stats.jsonl" <<'EOF' || fail "writing long stats"
import json, sys
with open(sys.argv[1], "w") as out:
    for i in range(1000):
        run = i - 600 if i >= 600 else i
        out.write(json.dumps({"elapsed": float(i), "run_elapsed": float(run), "cases": i,
                              "ops": {"relu": run + 1}}) + "\n")
EOF
"$weft" merge "$work/long" -o "$work/long-merged" > /dev/null 2>&1 || fail "merge of a long campaign"
/usr/bin/python3 - "$work/long-merged/stats.jsonl" <<'EOF' || fail "the long stats are not thinned right"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) <= 102, len(lines)
elapsed = [l["elapsed"] for l in lines]
assert 599.0 in elapsed and 999.0 in elapsed, elapsed  # each run's last line
assert all(l["input"] == 0 for l in lines)
EOF
# The report sums the last line of each run: relu 600 + 400.
"$weft" report "$work/long-merged" > /dev/null 2>&1 || fail "report of the long merge"
grep -q 'relu</title></text><rect[^>]*/><text[^>]*>1000<' "$work/long-merged/report.html" ||
  fail "the op count does not add up the runs (600 + 400)"

"$weft" report "$work/c" > /dev/null 2>&1 || fail "report of the merged campaign"
grep -q "nan-inf-mismatch-torch-tanh-deadbeef" "$work/c/report.html" || fail "merged report"

# Merging into a directory that is not empty fails and leaves it alone.
mkdir -p "$work/occupied"
echo keep > "$work/occupied/file.txt"
"$weft" merge "$a" "$b" -o "$work/occupied" > "$work/occupied.txt" 2>&1 &&
  fail "merging into a non-empty directory should fail"
grep -q "not empty" "$work/occupied.txt" || { cat "$work/occupied.txt"; fail "occupied message"; }
[ "$(ls "$work/occupied")" = "file.txt" ] || fail "merge wrote into a non-empty directory"

# A newer schema is refused, not misread.
cp -r "$b" "$work/newer"
sed -i 's/"weft-campaign": 1/"weft-campaign": 2/' "$work/newer/campaign.json"
"$weft" merge "$a" "$work/newer" -o "$work/d" > "$work/newer.txt" 2>&1 &&
  fail "merging a newer schema should fail"
grep -q "newer weft" "$work/newer.txt" || { cat "$work/newer.txt"; fail "newer-schema message"; }

# A damaged campaign.json or bucket.json: non-zero exit, the file (and field) named.
cp -r "$a" "$work/damaged"
printf '{"weft-campaign": 1, "options": {' > "$work/damaged/campaign.json"
"$weft" report "$work/damaged" > "$work/damaged.txt" 2>&1 &&
  fail "report of a damaged campaign.json should fail"
grep -q "campaign.json" "$work/damaged.txt" || { cat "$work/damaged.txt"; fail "file not named"; }
cp -r "$a" "$work/damaged2"
sed -i 's/"count": 4/"count": "four"/' "$work/damaged2/bugs/$shared_bucket/bucket.json"
"$weft" report "$work/damaged2" > "$work/damaged2.txt" 2>&1 &&
  fail "report of a damaged bucket.json should fail"
grep -q "bucket.json: /count" "$work/damaged2.txt" ||
  { cat "$work/damaged2.txt"; fail "damaged bucket.json: file and field not named"; }

echo "report and merge behave"
