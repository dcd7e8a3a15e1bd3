#!/usr/bin/env bash
# Two ddp-sim binaries on the same replays (W = 2..4096; ring-agg, tree, analytic on the star and
# two two-level shapes; the explicit ring, --cfg flows, stalls with slowdowns, a timeout): the
# predicted traces (events, every rank) and the JSON reports (wall time aside) must be identical.
# Usage: simulator/bench/replay_before_after.sh BEFORE_BIN AFTER_BIN   (exit 1 if any differs)
set -u
before=$1; after=$2; work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
synthetic=("$(dirname "$0")/../../.venv/bin/python" -m ddpsim.bench.make_synthetic_trace)  # scripts/setup.sh
"${synthetic[@]}" $work/trace --buckets 25 >/dev/null
"${synthetic[@]}" $work/trace3 --buckets 5 --ranks 3 --iterations 4 >/dev/null
n=0; same=0
run() { # label args...
  local label=$1; shift
  for b in before after; do
    bin=$before; [ $b = after ] && bin=$after
    $bin replay "$@" --bandwidth 1.25e9 --latency 20e-6 --json $work/$b.json --out $work/$b-out >/dev/null 2>$work/$b.err; echo $? >$work/$b.rc
  done
  n=$((n+1))
  if cmp -s $work/before.rc $work/after.rc && python3 - $work <<'PY'
import json, sys, os, glob, filecmp
w = sys.argv[1]
def load(p):
    d = json.load(open(p)); s = d.get("simulation", {}); s.pop("wall_s", None); d.pop("wall_s", None)
    return d
a, b = load(w + "/before.json"), load(w + "/after.json")
if a != b: sys.exit(1)
fa = sorted(os.path.relpath(p, w + "/before-out") for p in glob.glob(w + "/before-out/**", recursive=True) if os.path.isfile(p))
for f in fa:
    if f.endswith("meta.json"): continue
    if not filecmp.cmp(w + "/before-out/" + f, w + "/after-out/" + f, shallow=False): sys.exit(2)
PY
  then same=$((same+1)); echo "same      $label"; else echo "DIFFERENT $label"; fi
  rm -rf $work/before-out $work/after-out
}
TL="--platform two-level --gpus-per-node 8 --intra-bandwidth 100e9 --intra-latency 2.3e-6 --inter-bandwidth 12.5e9 --inter-latency 5.7e-6"
TL4="--platform two-level --gpus-per-node 4 --intra-bandwidth 3e9 --intra-latency 1e-6 --inter-bandwidth 20e9 --inter-latency 7e-6"
for W in 2 3 8 17 64 256 1024 4096; do
  for m in ring-agg tree analytic; do
    run "W=$W $m star" $work/trace --world-size $W --iterations 1 --allreduce $m
    run "W=$W $m two-level/8" $work/trace --world-size $W --iterations 1 --allreduce $m $TL
    run "W=$W $m two-level/4" $work/trace --world-size $W --iterations 1 --allreduce $m $TL4
  done
done
for W in 2 8 17 64; do
  run "W=$W ring two-level/8" $work/trace --world-size $W --iterations 1 --allreduce ring $TL
  run "W=$W tree two-level/8 cfg" $work/trace --world-size $W --iterations 1 --allreduce tree $TL --cfg network/model:CM02
  run "W=$W ring-agg two-level/4 stalls" $work/trace3 --world-size $W --allreduce ring-agg $TL4 --delay-dist all=exp:1 --seed 3 --slowdown 1=2
  run "W=$W tree star timeout" $work/trace3 --world-size $W --allreduce tree --delay 1=50@1 --timeout 0.02
done
echo "$same of $n identical"
[ "$same" -eq "$n" ]
