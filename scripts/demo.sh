#!/usr/bin/env bash
# README command (a): set up, build, then measure a real 2-rank DDP job and predict it.
#  1. ddp-launch starts 2 ddp-train workers (Gloo over loopback) training a small CNN on the
#     real Fashion-MNIST; each rank writes its trace to demo-out/measured.
#  2. ddp-machine-profile, launched the same way, measures the machine the job ran on: all-reduce
#     times over 8 sizes (4 KiB to 64 MiB), one and two in flight, how the 2 ranks slow each
#     other's compute, how an all-reduce and compute slow each other, and what resuming after a
#     sleep costs (traces/MACHINE.md); a few seconds.
#  3. ddp-trace validates and summarises the trace and exports it for Perfetto.
#  4. ddp-sim replays the run in SimGrid on that machine profile (--machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
bin=build/release/bin
out="${DEMO_OUT:-demo-out}"  # python -m ddpsim.bench.demo_replay repeats the demo in other folders
rm -rf "$out" && mkdir -p "$out"

echo "== 1. measure: 2 ranks, convnet on Fashion-MNIST, Gloo"
"$bin/ddp-launch" --nproc-per-node 2 -- \
  "$bin/ddp-train" --model convnet --iterations 60 --batch-size 64 --trace-dir "$out/measured"

echo "== 2. the machine: all-reduce ladder, co-located compute, overlap and sleep resume, launched like the job"
"$bin/ddp-launch" --nproc-per-node 2 -- "$bin/ddp-machine-profile" --out "$out/machine.json"

echo "== 3. the trace"
"$bin/ddp-trace" validate "$out/measured"
"$bin/ddp-trace" summary "$out/measured"
"$bin/ddp-trace" export --chrome "$out/measured.chrome.json" "$out/measured"
echo "(open $out/measured.chrome.json in https://ui.perfetto.dev)"

if [ -x "$bin/ddp-sim" ]; then
  echo "== 4. predict: SimGrid replay on the machine profile"
  "$bin/ddp-sim" replay "$out/measured" --machine "$out/machine.json" --out "$out/predicted" --json "$out/predicted.json"
  echo "== what if rank 1 computed 2x slower (a straggler)? (21 runs resampling the trace's iterations: an interval)"
  "$bin/ddp-sim" replay "$out/measured" --machine "$out/machine.json" --slowdown 1=2  # a what-if: 21 runs, a 90 % interval
fi
