#!/usr/bin/env bash
# `weft issue BUCKET` on a campaign's bucket (a planted fault, so that it needs no real bug):
# the Markdown has the issue template's sections, the repro that `weft export` writes, that
# repro's output showing the bug (exit status 1), and an ablation naming the faulty path.
set -u
weft="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

timeout 300 "$weft" fuzz --backends fault:perturb-large@relu --ops relu,linear,add --nodes 3-5 \
  --cases 20 --jobs 1 --seed 3 --out "$work/camp" >/dev/null 2>&1 || fail "the campaign failed"
bucket=$(ls -d "$work"/camp/bugs/*/ | head -n 1)
[ -n "$bucket" ] || fail "the campaign filed no bucket"
timeout 300 "$weft" issue "$bucket" -o "$work/issue.md" 2>"$work/err" || fail "weft issue: $(cat "$work/err")"
issue="$work/issue.md"
grep -q '^# .* gives wrong results for relu' "$issue" || fail "no title naming the symptom and op"
grep -q '^### 🐛 Describe the bug' "$issue" || fail "no bug section"
grep -q '^### Versions' "$issue" || fail "no versions section"
grep -q '^class Model(torch.nn.Module):' "$issue" || fail "no repro model"
grep -q 'exit status 1)' "$issue" || fail "the repro did not show the bug: $(grep -A3 'Its output' "$issue")"
grep -q 'BUG: fault:perturb-large@relu differs' "$issue" || fail "no BUG line from the repro"
grep -q '| `fault:perturb-large@relu` | \*\*shows the bug\*\*' "$issue" || fail "ablation misses the faulty path"
# A bucket directory without bucket.json is refused with the file named.
mkdir -p "$work/empty"
"$weft" issue "$work/empty" >/dev/null 2>"$work/err" && fail "an empty directory was accepted"
grep -q 'bucket.json' "$work/err" || fail "the error does not name bucket.json: $(cat "$work/err")"
echo "issue behaves"
