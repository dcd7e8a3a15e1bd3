#!/usr/bin/env bash
# The replay's memory and time estimate (simulator/src/replay/resource_estimate.cpp) beside the
# measured peak resident set (/usr/bin/time -f %M: the largest process of the replay) and wall
# time, one row per request. Re-measure after changing what the replay builds per rank or class.
#
#   scripts/replay-resources.sh [BIN_DIR] [TRACE_DIR]   (default: build/release/bin, traces/examples/convnet-2rank)
#
# The estimate is read from a refusal: each request is asked once with --max-memory 1 (refused
# before it starts, naming the estimate), then run for real. Needs about 3 GB of free memory.
set -euo pipefail

bin=${1:-build/release/bin}
trace=${2:-traces/examples/convnet-2rank}
[[ -x /usr/bin/time ]] || { echo "replay-resources.sh: expected GNU time at /usr/bin/time" >&2; exit 2; }

requests=(
  "--world-size 1024 --iterations 1"
  "--world-size 16384 --iterations 1"
  "--world-size 16384 --iterations 3"
  "--world-size 65536 --iterations 1"
  "--world-size 65536 --iterations 3"
  "--world-size 131072 --iterations 1"
  "--world-size 65536 --iterations 1 --cluster dgx-a100"
  "--world-size 16384 --iterations 1 --independent-copies"
  "--world-size 256 --iterations 1 --allreduce ring"
)

printf '| request | estimate | measured peak RSS | estimated time | measured time |\n|---|---:|---:|---:|---:|\n'
for request in "${requests[@]}"; do
  # shellcheck disable=SC2086  # a request is several flags
  refusal=$("$bin/ddp-sim" replay "$trace" $request --max-memory 1 2>&1 >/dev/null || true)
  estimate=$(sed -n 's/.*needs about \([0-9.]* [KMGTPE]*i*B\).*/\1/p' <<<"$refusal")
  # shellcheck disable=SC2086
  measured=$(/usr/bin/time -f '%M %e' "$bin/ddp-sim" replay "$trace" $request --json /dev/null 2>&1 >/dev/null | tail -1)
  read -r kb seconds <<<"$measured"
  wall=$(sed -n "s/.*; about \([^)]*\) of replay).*/\1/p" <<<"$refusal")
  printf '| `%s` | %s | %s MiB | %s | %s s |\n' "$request" "${estimate:-?}" "$((kb / 1024))" "${wall:--}" "$seconds"
done
