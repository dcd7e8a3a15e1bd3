#!/usr/bin/env bash
# The jobs of the ctest slurm.ddp_and_sweep, run inside scripts/slurm-local.sh's one-node SLURM
# (SLURM_CONF set), through the example job scripts a cluster user submits:
#  1. runtime/examples/slurm-ddp.sbatch on 1 node x 2 tasks: srun starts both ddp-train ranks,
#     which find rank, world size and master from SLURM's variables; both ranks' traces must
#     validate, say launcher_env slurm, and hold every iteration;
#  2. runtime/examples/slurm-sweep.sbatch as a 3-task job array sweeping that trace (one shard
#     a task), then again without --array, after the array, to merge: the merged CSV must equal
#     an unsharded `ddp-sim sweep --jobs 1` of the same grid, every column but wall_s.
# Exits 0 or 1 (never 2, which slurm-local.sh keeps for "no cluster here").
# Usage: slurm_jobs.sh EXAMPLES_DIR BIN_DIR SCRATCH_DIR
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: $0 EXAMPLES_DIR BIN_DIR SCRATCH_DIR" >&2; exit 1; }
examples="$(realpath "$1")" bin="$(realpath "$2")" scratch="$(realpath "$3")"
fail() { echo "FAIL: $*" >&2; exit 1; }
show() { for f in "$@"; do [ -f "$f" ] && { echo "== $f"; cat "$f"; }; done; }
cd "$scratch" || fail "cd $scratch"
iterations=10

# 1. DDP under srun. A free port, so the job does not depend on 20000 + job id being free here.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
start=$SECONDS
DDPSIM_BIN="$bin" TRACE_DIR="$scratch/trace" MASTER_PORT="$port" \
  DDPSIM_TRAIN_ARGS="--model mlp --width 256 --depth 2 --iterations $iterations --batch-size 16 --quiet" \
  sbatch --wait --quiet --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=5 --output="$scratch/ddp-%j.out" \
  "$examples/slurm-ddp.sbatch"
code=$?
show "$scratch"/ddp-*.out
[ "$code" = 0 ] || fail "sbatch slurm-ddp.sbatch: the job exited $code"
echo "ddp job (sbatch --wait, 2 srun tasks) took $((SECONDS - start)) s"
"$bin/ddp-trace" validate "$scratch/trace" || fail "ddp-trace validate $scratch/trace"
"$bin/ddp-trace" summary --json "$scratch/trace" > "$scratch/summary.json" || fail "ddp-trace summary"
python3 - "$scratch/summary.json" "$scratch/trace" "$iterations" <<'PY' || fail "expected 2 SLURM-launched ranks with $iterations complete iterations"
import json, sys
summary = json.load(open(sys.argv[1]))
launchers = [json.load(open(f"{sys.argv[2]}/rank-{r}.meta.json"))["settings"]["launcher_env"] for r in range(2)]
print(f"world_size {summary['world_size']}, complete iterations {summary['num_complete_iterations']}, launcher_env {launchers}")
sys.exit(0 if summary["world_size"] == 2 and summary["num_complete_iterations"] == int(sys.argv[3])
         and launchers == ["slurm", "slurm"] else 1)
PY

# 2. The sweep of that trace as a job array of 3 shards, then the merge job after it
#    (--kill-on-invalid-dep: if a shard fails, the merge is cancelled instead of pending forever).
grid=(--bucket-caps 0,1,5 --slowdowns 1,2 --world-sizes 0,8)
start=$SECONDS
jid="$(DDPSIM_BIN="$bin" sbatch --parsable --array=0-2 --cpus-per-task=1 --time=5 --output="$scratch/shard-%a.out" \
  "$examples/slurm-sweep.sbatch" "$scratch/trace" "$scratch/sweep" "${grid[@]}")" || fail "sbatch --array=0-2 slurm-sweep.sbatch"
DDPSIM_BIN="$bin" sbatch --wait --quiet --dependency="afterok:$jid" --kill-on-invalid-dep=yes --cpus-per-task=1 \
  --time=5 --output="$scratch/merge.out" "$examples/slurm-sweep.sbatch" "$scratch/trace" "$scratch/sweep" "${grid[@]}"
code=$?
show "$scratch"/shard-*.out "$scratch/merge.out"
[ "$code" = 0 ] || fail "the merge job exited $code"
echo "sweep array of 3 shards + merge job took $((SECONDS - start)) s"
for i in 0 1 2; do
  rows=$(($(wc -l < "$scratch/sweep/shard-$i.csv") - 1))
  [ "$rows" = 4 ] || fail "shard $i: expected 4 of the 12 points, got $rows rows"
done

"$bin/ddp-sim" sweep "$scratch/trace" "${grid[@]}" --jobs 1 --out "$scratch/whole.csv" > /dev/null ||
  fail "the unsharded sweep"
# wall_s is a measured time; every other column must match, row for row.
wall_s=$(head -1 "$scratch/whole.csv" | tr , '\n' | grep -nx wall_s | cut -d: -f1)
[ -n "$wall_s" ] || fail "the unsharded sweep: expected a wall_s column"
cut -d, --complement -f"$wall_s" "$scratch/whole.csv" > "$scratch/whole.cut"
cut -d, --complement -f"$wall_s" "$scratch/sweep/sweep.csv" > "$scratch/merged.cut"
[ "$(wc -l < "$scratch/whole.cut")" = 13 ] || fail "the unsharded sweep: expected 12 rows"
diff -u "$scratch/whole.cut" "$scratch/merged.cut" || fail "the merged shards differ from the unsharded sweep"
echo "merged CSV = unsharded sweep (12 rows, every column but wall_s)"
