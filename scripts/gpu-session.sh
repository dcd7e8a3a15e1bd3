#!/usr/bin/env bash
# Everything a session lent a GPU runs there, as one prepared command (the lent time is short and
# counts every start and wait: run this once, then hand the machine back). In the order owed:
#   0. one build of every tool the steps use, against the machine's torch (gpu_common.sh), so
#      that the steps' own builds find nothing to do;
#   1. scripts/gpu-machine-profile.sh: the machine profile on the GPU (Gloo with CUDA tensors,
#      NCCL with 2 GPUs or more, a one-line refusal), each profile checked;
#   2. scripts/gpu-check.sh with GPU_CHECK_REPS=3: the runtime, C++ against Python, AMP;
#   3. scripts/gpu-whatif.sh steps 1 and 3: Gloo's CUDA all-reduce benchmark, C++ against Python;
#   4. scripts/gpu-whatif.sh step 2: the what-if specs, last as they take longest.
# A step starts only while GPU_SESSION_BUDGET_S (default 540) leaves it the time it is allowed
# (GPU_SESSION_STEP_S: "build profile check whatif-bench whatif-specs" seconds, default
# "300 90 240 180 400"), and is stopped at that time: OUT/session.txt lists each step, its exit
# status (124: stopped) and seconds, so a later session knows what is still owed. The headers the
# machine lacks come from DDPSIM_DEPS_PREFIX (scripts/gpu-deps.sh makes .devdeps/root here, to
# carry there).
# Usage: DDPSIM_DEPS_PREFIX=$PWD/.devdeps/root scripts/gpu-session.sh OUT
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[[ $# -eq 1 ]] || { echo "usage: $0 OUT" >&2; exit 2; }
out=$(realpath -m "$1")
mkdir -p "$out"
budget=${GPU_SESSION_BUDGET_S:-540}
read -r -a allowed <<<"${GPU_SESSION_STEP_S:-300 90 240 180 400}"
(( ${#allowed[@]} == 5 )) || { echo "$0: GPU_SESSION_STEP_S: expected 5 numbers of seconds" >&2; exit 2; }
start=$SECONDS
: >"$out/session.txt"

run_step() {  # NAME ALLOWED_S COMMAND...
  local name=$1 allowed_s=$2 status
  shift 2
  local left=$(( budget - (SECONDS - start) ))
  if (( left < allowed_s )); then
    echo "$name skipped: ${left} s of the budget left, it is allowed ${allowed_s} s" | tee -a "$out/session.txt"
    return
  fi
  local began=$SECONDS
  echo "== gpu-session: $name (at most ${allowed_s} s)"
  timeout --kill-after=10 "$allowed_s" "$@" >"$out/$name.log" 2>&1
  status=$?
  tail -n 5 "$out/$name.log"
  echo "$name status $status in $(( SECONDS - began )) s" | tee -a "$out/session.txt"
}

run_step build "${allowed[0]}" bash -c 'py=$(command -v "${DDPSIM_TORCH_PYTHON:-python3}"); source scripts/gpu_common.sh &&
  gpu_env "$1" && gpu_build ddp-train ddp-launch ddp-trace ddp-experiment ddp-machine-profile' _ "$out"
run_step profile "${allowed[1]}" scripts/gpu-machine-profile.sh "$out/machine-profile"
run_step check "${allowed[2]}" env GPU_CHECK_REPS=3 scripts/gpu-check.sh "$out/check"
run_step whatif-bench "${allowed[3]}" env GPU_WHATIF_STEPS="1 3" GPU_WHATIF_REPS=3 scripts/gpu-whatif.sh "$out/whatif"
run_step whatif-specs "${allowed[4]}" env GPU_WHATIF_STEPS=2 scripts/gpu-whatif.sh "$out/whatif-specs"
cat "$out/session.txt"
