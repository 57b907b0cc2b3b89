#!/usr/bin/env bash
# scripts/k8s/campaign-job.yaml without a cluster (there is none here): the manifest is an
# Indexed Job whose completions, parallelism and WEFT_SHARD_COUNT agree, and `weft fuzz` run with
# the environment such a pod gets (JOB_COMPLETION_INDEX) writes that shard under the root.
# Usage: campaign_job_test.sh WEFT SOURCE_DIR
set -u
weft="$1"
manifest="$2/scripts/k8s/campaign-job.yaml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

/usr/bin/python3 - "$manifest" > "$work/shards" << 'PY' || fail "the manifest is not a consistent Indexed Job"
import sys, yaml
job = yaml.safe_load(open(sys.argv[1]))
assert job["kind"] == "Job" and job["apiVersion"] == "batch/v1", job["kind"]
spec = job["spec"]
assert spec["completionMode"] == "Indexed", spec
container = spec["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in container.get("env", [])}
assert int(env["WEFT_SHARD_COUNT"]) == spec["completions"] == spec["parallelism"], (env, spec)
assert container["command"] == ["weft", "fuzz"], container["command"]
assert "--out" in container["args"], container["args"]
assert spec["template"]["spec"]["restartPolicy"] == "Never"
print(spec["completions"])
PY
count=$(cat "$work/shards")

JOB_COMPLETION_INDEX=1 WEFT_SHARD_COUNT="$count" timeout 120 "$weft" fuzz \
  --backends fault:nan@tanh --ops tanh,relu,add --nodes 3 --cases 40 --jobs 1 --out "$work/root" \
  > "$work/pod.txt" 2>&1 || { cat "$work/pod.txt"; fail "weft fuzz as pod 1"; }
dir="$work/root/shard-1-of-$count"
[ -f "$dir/campaign.json" ] || { ls -R "$work/root"; fail "no $dir"; }
/usr/bin/python3 - "$dir" "$count" << 'PY' || fail "the pod's shard is wrong"
import json, os, sys
d, count = sys.argv[1], int(sys.argv[2])
options = json.load(open(os.path.join(d, "campaign.json")))["options"]
assert options["shard"] == [1, count], options
assert options["shard_from"]["scheduler"] == "kubernetes-indexed-job", options
assert options["shard_from"]["environment"]["JOB_COMPLETION_INDEX"] == "1", options
progress = json.load(open(os.path.join(d, "progress.json")))
# Indices below 40 of shard 1/count: 1, 1 + count, ...
assert progress["cases"] == len(range(1, 40, count)), progress
assert progress["state"] == "finished", progress
PY
# Without WEFT_SHARD_COUNT the pod says what is missing and writes nothing.
JOB_COMPLETION_INDEX=1 "$weft" fuzz --backends fault:nan@tanh --cases 4 --out "$work/bad" \
  > "$work/bad.txt" 2>&1 && fail "ran without WEFT_SHARD_COUNT"
grep -q "WEFT_SHARD_COUNT" "$work/bad.txt" || { cat "$work/bad.txt"; fail "no message naming WEFT_SHARD_COUNT"; }
[ ! -e "$work/bad" ] || fail "wrote $work/bad without a shard"
echo "the kubernetes job manifest behaves"
