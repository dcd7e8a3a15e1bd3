#!/usr/bin/env bash
# Effective cores: how much of a machine's compute K co-located ranks get, for ddp-sim's
# --cores N, or --effective-cores K=C with the value of each --copies K run. Ranks that each have a core still slow each other down (shared memory bandwidth and
# caches, a clock that drops when every core is busy), so going from 1 rank to 2 on 2 cores
# stretches compute although no core is shared. This runs the workload as 1-rank jobs (no
# all-reduce partner, so no communication): one alone, then K at once, interleaved over ROUNDS
# (A B A B ...: CPU speed drifts here), and reports
#
#     effective_cores = K * median(alone) / median(together)
#
# (K when co-running costs nothing, 1 when K ranks take K times as long). Medians are of each
# run's median iteration time (`ddp-trace summary --json`); every round's ratio is kept, with
# its spread.
#
# Usage: experiments/peer/corun_bench.sh --out FILE.json [--copies K] [--rounds N] [--bin-dir DIR] -- DDP_TRAIN_ARGS...
# --bin-dir: where ddp-launch, ddp-train, ddp-trace are (default: $BUILD_DIR/bin, BUILD_DIR
# defaulting to build/release). ddp-experiment runs one round a repetition of specs with
# [predict] corun_profile.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${BUILD_DIR:-$root/build/release}/bin"
out="" copies=2 rounds=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) out="${2:?--out: expected a file}"; shift 2 ;;
    --copies) copies="${2:-}"; shift 2 ;;
    --rounds) rounds="${2:-}"; shift 2 ;;
    --bin-dir) bin="${2:?--bin-dir: expected a directory}"; shift 2 ;;
    --) shift; break ;;
    *) echo "corun_bench.sh: expected --out, --copies, --rounds, --bin-dir or --, got '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$out" ]] || { echo "corun_bench.sh: --out: expected a file, got none" >&2; exit 2; }
[[ "$copies" =~ ^[1-9][0-9]?$ ]] || { echo "corun_bench.sh: --copies: expected an integer in [1, 99], got '$copies'" >&2; exit 2; }
[[ "$rounds" =~ ^[1-9][0-9]{0,2}$ ]] || { echo "corun_bench.sh: --rounds: expected an integer in [1, 999], got '$rounds'" >&2; exit 2; }
for tool in ddp-launch ddp-train ddp-trace; do
  [[ -x "$bin/$tool" ]] || { echo "corun_bench.sh: expected $bin/$tool (build it, or pass --bin-dir)" >&2; exit 2; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

one_run() {  # DIR: a 1-rank job whose trace goes to DIR
  "$bin/ddp-launch" --nproc-per-node 1 --master-port 0 -- "$bin/ddp-train" --trace-dir "$1" "${@:2}" >"$1.log" 2>&1 ||
    { echo "corun_bench.sh: a 1-rank run failed (log: $1.log):" >&2; tail -3 "$1.log" >&2; exit 1; }
}
median_of() { "$bin/ddp-trace" summary --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["median_iteration_s"])'; }

rows=()
for ((round = 0; round < rounds; ++round)); do
  one_run "$work/alone-$round" "$@"
  alone="$(median_of "$work/alone-$round")"
  pids=()
  for ((k = 0; k < copies; ++k)); do
    one_run "$work/together-$round-$k" "$@" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
  together=()
  for ((k = 0; k < copies; ++k)); do together+=("$(median_of "$work/together-$round-$k")"); done
  rows+=("$alone ${together[*]}")
  echo "round $round: alone ${alone}s, together ${together[*]} s" >&2
done

printf '%s\n' "${rows[@]}" | python3 -c '
import json, statistics, sys
copies, out, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
rounds = [[float(x) for x in line.split()] for line in sys.stdin if line.strip()]
alone = [r[0] for r in rounds]
together = [statistics.median(r[1:]) for r in rounds]  # the round'"'"'s copies: their median
per_round = [copies * a / t for a, t in zip(alone, together)]
report = {
    "copies": copies,
    "ddp_train_args": args,
    "rounds": [{"alone_s": a, "together_s": r[1:]} for a, r in zip(alone, rounds)],
    "median_alone_s": statistics.median(alone),
    "median_together_s": statistics.median(together),
    "effective_cores": copies * statistics.median(alone) / statistics.median(together),
    "effective_cores_per_round": per_round,
    "effective_cores_range": [min(per_round), max(per_round)],
}
json.dump(report, open(out, "w"), indent=1)
cores, low, high = report["effective_cores"], min(per_round), max(per_round)
alone_ms, together_ms = 1e3 * report["median_alone_s"], 1e3 * report["median_together_s"]
print(f"{copies} co-located ranks: {cores:.3f} effective cores (rounds {low:.3f}..{high:.3f}; "
      f"alone {alone_ms:.2f} ms, together {together_ms:.2f} ms)")
' "$copies" "$out" "$@"
