#!/usr/bin/env bash
# Peer validation: a plain Python DDP job (not ddpsim's runtime) is profiled with torch.profiler,
# imported with `ddp-trace import --kineto`, replayed with `ddp-sim replay`, and the predicted
# median iteration time is compared with the measured one, for two models x two bucket caps.
#
# Usage: experiments/peer/run.sh [OUT_DIR]        (default: results/peer)
# Environment:
#   BUILD_DIR   where bin/ddp-trace and bin/ddp-sim are (default: build/release)
#   DDP_TRACE, DDP_SIM   the binaries themselves, overriding BUILD_DIR
#   REPEATS (2), ITERATIONS (5 profiled), TIMED (10 unprofiled), BATCH_SIZE (32),
#   MODELS ("mlp convnet"), CAPS_MB ("0.25 25"; DDP caps bucket 0 at 1 MiB regardless)
# Runs are interleaved (A B C D A B C D ...): CPU speed on these machines drifts, so every
# configuration sees the same conditions. Each trace is replayed twice: with the network model
# of a Gloo all-reduce benchmark run in the same round (allreduce_bench.py: independent of
# the trace), and with ddp-sim's default calibration from the trace itself.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/results/peer}"
build="${BUILD_DIR:-$root/build/release}"
ddp_trace="${DDP_TRACE:-$build/bin/ddp-trace}"
ddp_sim="${DDP_SIM:-$build/bin/ddp-sim}"
python="${DDPSIM_TORCH_PYTHON:-$root/.venv/bin/python}"  # the project's torch (scripts/setup.sh)
repeats="${REPEATS:-2}"
iterations="${ITERATIONS:-5}"
timed="${TIMED:-10}"
batch_size="${BATCH_SIZE:-32}"
models="${MODELS:-mlp convnet}"
caps="${CAPS_MB:-0.25 25}"

if ! "$python" -c "import torch" 2>/dev/null; then
  echo "run.sh: expected PyTorch in $python (scripts/setup.sh makes .venv with it), got none" >&2
  exit 2
fi
if [[ ! -x "$ddp_trace" ]]; then
  echo "run.sh: expected ddp-trace at $ddp_trace (build it, or set BUILD_DIR / DDP_TRACE)" >&2
  exit 2
fi
have_sim=1
if [[ ! -x "$ddp_sim" ]]; then
  echo "run.sh: ddp-sim not found at $ddp_sim: measuring and importing only, no prediction" >&2
  have_sim=0
fi

mkdir -p "$out"
for ((rep = 0; rep < repeats; ++rep)); do
  bench="$out/allreduce-bench-rep$rep.json"
  "$python" "$here/allreduce_bench.py" --out "$bench"
  read -r alpha beta < <("$python" -c \
    'import json,sys; b=json.load(open(sys.argv[1])); print(b["alpha_s"], b["beta_bytes_per_s"])' \
    "$bench")
  for model in $models; do
    for cap in $caps; do
      run="$out/$model-cap$cap-rep$rep"
      rm -rf "$run"
      "$python" "$here/python_ddp_profiled.py" --model "$model" --bucket-cap-mb "$cap" \
        --iterations "$iterations" --timed "$timed" --batch-size "$batch_size" \
        --out-dir "$run/profiler"
      "$ddp_trace" import --kineto "$run/trace" "$run"/profiler/rank-*.kineto.json
      "$ddp_trace" validate "$run/trace" >/dev/null
      "$ddp_trace" summary --json "$run/trace" >"$run/summary.json"
      if ((have_sim)); then
        "$ddp_sim" replay "$run/trace" --latency "$alpha" --bandwidth "$beta" \
          --out "$run/predicted-bench" --json "$run/replay-bench.json" >"$run/replay-bench.txt"
        # Self-calibration needs bucket sizes that differ enough to fit a line; say so if not.
        "$ddp_sim" replay "$run/trace" --out "$run/predicted-self" \
          --json "$run/replay-self.json" >"$run/replay-self.txt" 2>&1 ||
          echo "run.sh: $run: self-calibrated replay failed: $(tail -1 "$run/replay-self.txt")" >&2
      fi
    done
  done
done

"$python" "$here/table.py" "$out"
