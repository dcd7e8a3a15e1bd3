#!/usr/bin/env bash
# ctest slurm.ddp_and_sweep: a one-node SLURM on this machine (scripts/slurm-local.sh), the
# example job scripts of runtime/examples submitted to it (slurm_jobs.sh), then nothing of the
# cluster left running. Exits 77 (skipped) where no cluster can be made: not root, SLURM not
# installable, a daemon that does not start (the reason is printed).
# Usage: slurm_test.sh SLURM_LOCAL EXAMPLES_DIR BIN_DIR
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SLURM_LOCAL EXAMPLES_DIR BIN_DIR" >&2; exit 64; }
slurm_local="$1" examples="$2" bin="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! reason="$("$slurm_local" --check 2>&1)"; then echo "SKIP: $reason" >&2; exit 77; fi
[ -z "$("$slurm_local" leftovers)" ] || fail "a slurm-local cluster is already running: $("$slurm_local" leftovers)"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-slurm-test-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
start=$SECONDS
"$slurm_local" --timeout 240 --keep "$scratch/cluster" -- bash "$here/slurm_jobs.sh" "$examples" "$bin" "$scratch"
code=$?
if [ "$code" = 2 ]; then  # slurm_jobs.sh never exits 2: the cluster could not be made
  echo "SKIP: no SLURM cluster could be started here (slurm-local exit 2, reason above)" >&2
  exit 77
fi
if [ "$code" != 0 ]; then
  for log in "$scratch"/cluster/log/*.log; do echo "== $log (last lines)"; tail -n 15 "$log"; done
  fail "the jobs exited $code"
fi
echo "cluster up, jobs, teardown: $((SECONDS - start)) s"
left="$("$slurm_local" leftovers)"
[ -z "$left" ] || fail "left running after teardown: $left"
echo "PASS: srun started 2 ddp-train ranks from SLURM's variables; a 3-shard sweep array merged into the unsharded sweep's CSV; nothing left running"
