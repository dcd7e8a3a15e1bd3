#!/usr/bin/env bash
# The replay's memory and time estimate (simulator/src/replay/resource_estimate.cpp) beside the
# measured peak resident set (/usr/bin/time -f %M: the largest process of the replay) and wall
# time, one row per request. Re-measure after changing what the replay builds per rank or class.
#
#   scripts/replay-resources.sh [BIN_DIR] [TRACE_DIR]   (default: build/release/bin, traces/examples/convnet-2rank)
#
# The estimate is read from a refusal: each request is asked once with --max-memory 1 (refused
# before it starts, naming the estimate), then run for real. Needs about 2 GB of free memory
# and a few minutes.
set -euo pipefail

bin=${1:-build/release/bin}
trace=${2:-traces/examples/convnet-2rank}
[[ -x /usr/bin/time ]] || { echo "replay-resources.sh: expected GNU time at /usr/bin/time" >&2; exit 2; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=$scratch/predicted  # --out requests write every rank's trace here

requests=(
  "--world-size 65536 --iterations 1"
  "--world-size 1048576 --iterations 1"
  "--world-size 1048576 --iterations 1 --cluster dgx-a100"
  "--world-size 16777216 --iterations 1"
  "--world-size 16777216 --iterations 3"
  "--world-size 4194304 --iterations 3 --json /dev/null"
  "--world-size 4096 --iterations 1 --out $out"
  "--world-size 65536 --iterations 1 --out $out"
  "--world-size 65536 --iterations 3 --out $out"
  "--world-size 16384 --iterations 1 --independent-copies"
  "--world-size 16384 --iterations 3 --independent-copies"
  "--world-size 256 --iterations 1 --allreduce ring"
)

printf '| request | estimate | measured peak RSS | estimated time | measured time |\n|---|---:|---:|---:|---:|\n'
for request in "${requests[@]}"; do
  # shellcheck disable=SC2086  # a request is several flags
  refusal=$("$bin/ddp-sim" replay "$trace" $request --max-memory 1 2>&1 >/dev/null || true)
  estimate=$(sed -n 's/.*needs about \([0-9.]* [KMGTPE]*i*B\).*/\1/p' <<<"$refusal")
  # shellcheck disable=SC2086
  rm -rf "$out"
  measured=$(/usr/bin/time -f '%M %e' "$bin/ddp-sim" replay "$trace" $request 2>&1 >/dev/null | tail -1)
  read -r kb seconds <<<"$measured"
  wall=$(sed -n "s/.*; about \([^)]*\) of replay).*/\1/p" <<<"$refusal")
  printf '| `%s` | %s | %s MiB | %s | %s s |\n' "${request//$out/DIR}" "${estimate:-?}" "$((kb / 1024))" "${wall:--}" "$seconds"
done
