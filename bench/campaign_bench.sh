#!/usr/bin/env bash
# Campaign throughput: a 10-node campaign on the default backends (every available path, with
# gradients) with 1 and 2 jobs, each for SECONDS (default 30); prints cases/s and the share of
# time in generation, execution, judging, localization and I/O (from weft fuzz's summary).
#   bench/campaign_bench.sh [path/to/weft] [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
weft="${1:-$root/build/default/cli/weft}"
seconds="${2:-30}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf '%-5s %9s  %s\n' jobs cases/s "time shares"
for jobs in 1 2; do
  summary=$("$weft" fuzz --time "$seconds" --nodes 10 --jobs "$jobs" --seed 1 \
    --out "$work/c$jobs" 2>/dev/null | head -1)
  cases=$(echo "$summary" | sed -E 's/.*: ([0-9]+) cases in this run.*/\1/')
  shares=$(echo "$summary" | sed -E 's/.*time: //')
  rate=$(/usr/bin/python3 -c "print('%.1f' % ($cases / $seconds))")
  printf '%-5s %9s  %s\n' "$jobs" "$rate" "$shares"
done
