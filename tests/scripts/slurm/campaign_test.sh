#!/usr/bin/env bash
# scripts/slurm/campaign.sbatch on a real Slurm. The test starts a one-machine cluster of its
# own (munged, slurmctld and slurmd on loopback ports, config, keys and state in a temporary
# directory), submits the script as a 2-task array of short fault campaigns, kills one task
# mid-run with `scancel --signal=KILL`, requeues it, and follows both with `weft merge --watch`.
# The merged campaign must equal one unsharded campaign of the same seed and case count: the
# same buckets, counts and stored case indices, every index judged once. Exits 77 (CTest:
# skipped), saying why, where the daemons cannot start.
# Usage: campaign_test.sh WEFT SOURCE_DIR
set -u
weft="$1"
source_dir="$2"
skip() {
  echo "SKIP: $*"
  exit 77
}

for tool in munged slurmctld slurmd sbatch scontrol squeue scancel sinfo; do
  command -v "$tool" > /dev/null ||
    skip "$tool is not installed (scripts/setup installs slurmctld, slurmd, slurm-client, munge)"
done
[ "$(id -u)" -eq 0 ] || skip "slurmd starts jobs as their user and must run as root (this is $(id -un))"

work="$(mktemp -d /tmp/weft-slurm.XXXXXX)"
chmod 755 "$work"
mkdir -p "$work/munge-key" "$work/munge" "$work/state" "$work/spool" "$work/log"
chmod 700 "$work/munge-key"
export SLURM_CONF="$work/slurm.conf"

stop_cluster() {
  [ -n "${watcher:-}" ] && kill "$watcher" 2> /dev/null
  # Jobs first: a job's slurmstepd outlives slurmd (by design), and would linger.
  if [ -n "${job:-}" ]; then
    scancel "$job" > /dev/null 2>&1
    for _ in $(seq 1 100); do
      [ -z "$(squeue -h 2> /dev/null)" ] && break
      sleep 0.1
    done
  fi
  scontrol shutdown > /dev/null 2>&1
  for pidfile in "$work/slurmd.pid" "$work/slurmctld.pid" "$work/munge/munged.pid"; do
    [ -s "$pidfile" ] && kill "$(cat "$pidfile")" 2> /dev/null
  done
  sleep 1
  # Whatever of this cluster is left (a step daemon runs in a directory of $work).
  for pid in $(pgrep -x slurmstepd); do
    case "$(readlink "/proc/$pid/cwd" 2> /dev/null)" in "$work"*) kill -9 "$pid" 2> /dev/null ;; esac
  done
  rm -rf "$work"
}
trap stop_cluster EXIT
logs() {
  for log in "$work"/log/*.log "$work"/task-*.out "$work/watch.txt"; do
    [ -f "$log" ] && { echo "--- $log"; tail -n 25 "$log"; }
  done
}
fail() {
  echo "FAIL: $*"
  logs
  exit 1
}

# Two free loopback ports for the controller and the node daemon.
read -r ctld_port slurmd_port < <(/usr/bin/python3 -c '
import socket
ports = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); s.close()
print(*ports)')
host="$(hostname -s)"
cpus="$(nproc)"

dd if=/dev/urandom of="$work/munge-key/munge.key" bs=1024 count=1 2> /dev/null
chmod 400 "$work/munge-key/munge.key"
munged --force --key-file="$work/munge-key/munge.key" --socket="$work/munge/socket" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/seed" \
  --log-file="$work/log/munged.log" > "$work/log/munged-start.log" 2>&1 ||
  skip "munged does not start here: $(tail -n 3 "$work/log/munged-start.log" "$work/log/munged.log" 2> /dev/null)"

cat > "$SLURM_CONF" << EOF
ClusterName=weft-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits this long before it starts again (Slurm's default, 120 s,
# would make the test wait two minutes).
AuthInfo=socket=$work/munge/socket,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobRequeue=1
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
PlugStackConfig=/dev/null
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=weft Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
slurmctld -f "$SLURM_CONF" > "$work/log/slurmctld-start.log" 2>&1 ||
  skip "slurmctld does not start here: $(tail -n 3 "$work/log/slurmctld-start.log" "$work/log/slurmctld.log" 2> /dev/null)"
slurmd -f "$SLURM_CONF" -N "$host" > "$work/log/slurmd-start.log" 2>&1 ||
  skip "slurmd does not start here: $(tail -n 3 "$work/log/slurmd-start.log" "$work/log/slurmd.log" 2> /dev/null)"
for _ in $(seq 1 60); do
  [ "$(sinfo -h -o %t 2> /dev/null)" = idle ] && break
  sleep 0.5
done
[ "$(sinfo -h -o %t 2> /dev/null)" = idle ] ||
  skip "the one-node cluster did not come up (sinfo: $(sinfo -h 2>&1 | head -n 1)); $(tail -n 3 "$work/log/slurmd.log" 2> /dev/null)"
started=$(date +%s)

faults="fault:perturb-large@relu,fault:nan@tanh,fault:throw@sigmoid"
fuzz_args=(--backends "$faults" --ops relu,tanh,sigmoid,linear,add,mul --nodes 4-6
  --time-limit 10 --interval 1 --cases 2400 --seed 11)

# The campaign as one unsharded run, for comparison.
timeout 300 "$weft" fuzz "${fuzz_args[@]}" --jobs 2 --out "$work/one" > "$work/one.txt" 2>&1 ||
  { cat "$work/one.txt"; fail "the unsharded campaign"; }
reference=$(($(date +%s) - started))

# The same campaign as a 2-task array job, watched as it runs.
job=$(WEFT="$weft" WEFT_ROOT="$work/root" sbatch --parsable --array=0-1 --cpus-per-task=1 \
  --output="$work/task-%a.out" "$source_dir/scripts/slurm/campaign.sbatch" \
  "${fuzz_args[@]}" 2> "$work/sbatch.txt") ||
  fail "sbatch: $(cat "$work/sbatch.txt")"
"$weft" merge --watch --interval 0.5 --stale 4 "$work/root" -o "$work/all" > "$work/watch.txt" 2>&1 &
watcher=$!

# Once both tasks have judged some of their cases, stop them both mid-run, the two ways a task
# dies on a cluster: task 0 by SIGKILL to every process of it at once (as when a node is lost:
# no handler runs), task 1 by `scancel --signal=KILL`, which Slurm turns into its cancel (SIGTERM
# to every process of the job, SIGKILL after KillWait), as preemption does.
cases_of() {
  /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["cases"], d["state"])' \
    "$work/root/shard-$1-of-2/progress.json" 2> /dev/null
}
for _ in $(seq 1 600); do
  zero=$(cases_of 0)
  one=$(cases_of 1)
  [ -n "$zero" ] && [ -n "$one" ] && [ "${zero% *}" -ge 100 ] && [ "${one% *}" -ge 100 ] && break
  sleep 0.1
done
[ -n "$zero" ] && [ -n "$one" ] && [ "${zero% *}" -ge 100 ] && [ "${one% *}" -ge 100 ] ||
  fail "the tasks never judged 100 cases each ($zero; $one)"
# (`scancel --signal=KILL` never sends SIGKILL first in Slurm 22.05: it cancels, see task 1.)
task0_id=$(squeue -h -j "${job}_0" -o %A)
task0_pids=$(scontrol listpids "$task0_id" 2> /dev/null | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}')
[ -n "$task0_pids" ] || fail "scontrol listpids found no process of task 0 (job $task0_id)"
# shellcheck disable=SC2086
kill -9 $task0_pids 2> /dev/null
scancel --signal=KILL "${job}_1" || fail "scancel --signal=KILL"
for task in 0 1; do
  for _ in $(seq 1 300); do
    state=$(squeue -h -j "${job}_$task" -o %T 2> /dev/null)
    case "$state" in RUNNING | COMPLETING) sleep 0.1 ;; *) break ;; esac
  done
done
killed=$(($(date +%s) - started))
zero=$(cases_of 0)
one=$(cases_of 1)
[ "${zero#* }" = running ] || fail "task 0's progress says '$zero' after SIGKILL (no handler: 'running')"
[ "${one#* }" = stopped ] || fail "task 1's progress says '$one' after Slurm's cancel ('stopped')"
[ "${zero% *}" -lt 1200 ] && [ "${one% *}" -lt 1200 ] ||
  fail "a task had finished before it was killed ($zero; $one)"
scontrol requeue "${job}_0" "${job}_1" > "$work/requeue.txt" 2>&1 ||
  { scontrol requeue "${job}_0" && scontrol requeue "${job}_1"; } ||
  fail "scontrol requeue: $(cat "$work/requeue.txt")"

# The watcher ends by itself once both shards have finished.
for _ in $(seq 1 600); do
  kill -0 "$watcher" 2> /dev/null || break
  sleep 0.5
done
kill -0 "$watcher" 2> /dev/null && fail "weft merge --watch did not end within 300 s"
wait "$watcher" || fail "weft merge --watch exited with $?"
watcher=""
done_at=$(($(date +%s) - started))

grep -q "every shard finished" "$work/watch.txt" || fail "the watcher never saw every shard finish"
grep -q "shard 0/2  stale" "$work/watch.txt" ||
  fail "the watcher never showed the shard killed by SIGKILL as stale"
grep -q "shard 1/2  stopped" "$work/watch.txt" ||
  fail "the watcher never showed the cancelled shard as stopped"
for task in 0 1; do
  grep -q "resuming" "$work/task-$task.out" || fail "requeued task $task did not resume its shard"
  [ "$(grep -c "weft-campaign: task $task" "$work/task-$task.out")" -eq 2 ] ||
    fail "task $task did not start twice"
done

/usr/bin/python3 - "$work" << 'PY' || fail "the merged array job differs from one campaign"
import json, os, sys
work = sys.argv[1]

def load(path):
    with open(path) as f:
        return json.load(f)

def buckets(root):
    found = {}
    for name in sorted(os.listdir(os.path.join(root, "bugs"))):
        bucket = load(os.path.join(root, "bugs", name, "bucket.json"))
        stored = sorted(c for c in os.listdir(os.path.join(root, "bugs", name))
                        if c.startswith("case-"))
        assert stored == bucket["cases"], (name, stored, bucket["cases"])
        for case in stored:
            load(os.path.join(root, "bugs", name, case, "verdict.json"))
        found[name] = (bucket["count"], bucket["cases"])
    return found

def done(progress):
    # A shard's progress counts positions: its k-th case index is I + k * N.
    index, count = progress.get("shard", [0, 1])
    positions = list(range(progress["done_below"])) + progress["done_above"]
    return [index + p * count for p in positions]

one, merged = buckets(os.path.join(work, "one")), buckets(os.path.join(work, "all"))
assert one == merged, ("buckets differ", one, merged)
# The three planted faults, each in its bucket; a planted fault can also show as a wrong
# gradient localized elsewhere (a bfloat16 case whose perturbed forward saturates in sigmoid).
for planted in ("wrong-output-fault_perturb-large_relu-relu-", "nan-inf-mismatch-fault_nan_tanh-tanh-",
                "exception-mismatch-fault_throw_sigmoid-any-op-"):
    assert any(name.startswith(planted) for name in one), (planted, one)
assert all("fault_" in name for name in one), one

judged = []
for shard in load(os.path.join(work, "all", "progress.json"))["inputs"]:
    judged += done(shard)
assert sorted(judged) == list(range(2400)), "case indices lost or judged twice"
assert done(load(os.path.join(work, "one", "progress.json"))) == list(range(2400))
progress = load(os.path.join(work, "all", "progress.json"))
assert progress["cases"] == 2400 and progress["done_below"] == 2400, progress

for i in (0, 1):
    campaign = load(os.path.join(work, "root", "shard-%d-of-2" % i, "campaign.json"))
    assert campaign["options"]["shard"] == [i, 2], campaign["options"]
    assert campaign["options"]["shard_from"]["scheduler"] == "slurm-array", campaign["options"]
    assert load(os.path.join(work, "root", "shard-%d-of-2" % i, "progress.json"))["state"] == \
        "finished"
shards = load(os.path.join(work, "all", "shards.json"))
assert [s["state"] for s in shards] == ["finished", "finished"], shards
PY

echo "timings: cluster up and one campaign of 2400 cases ${reference} s; tasks killed after $killed s (task 0: ${zero% *}, task 1: ${one% *} of 1200 cases judged); requeued, resumed, merged and finished after $done_at s"
echo "the slurm array campaign behaves"
