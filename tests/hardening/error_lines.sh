#!/usr/bin/env bash
# Every one-line error of ddp-sim, ddp-trace, ddp-train and ddp-experiment has a reason: no
# line ends in a colon or has nothing after its last colon (issue 59: `ddp-sim: simgrid: `).
# The error paths: bad flags and values, missing files, unwritable outputs, memory refusals
# (--max-memory and ulimit -v, small limits: nothing here uses much memory) and an out-of-memory
# forced by ulimit -v just above what the tool needs to start. Also: an unwritable output is
# refused before a slow request starts, and a refused request leaves an existing output as it was.
#
#   tests/hardening/error_lines.sh BIN_DIR SOURCE_DIR
set -uo pipefail

bin=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
trace=$source_dir/traces/examples/convnet-2rank
kineto=$source_dir/traces/examples/kineto-h100/gloo-cuda-2ranks/rank-0.json.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
checked=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A stderr line breaks the rule when it ends in ':' (a space after it or not), or when its text
# after the last ': ' is blank.
bad_line() {
  local line=$1
  [[ $line =~ :[[:space:]]*$ ]] && return 0
  return 1
}

# run NAME ULIMIT_KB TOOL ARGS...: run a tool that must fail (ULIMIT_KB "-": no limit) and
# check every line of its stderr.
run() {
  local name=$1 limit=$2 tool=$3
  shift 3
  last_error=SKIPPED
  [[ -x $bin/$tool ]] || return 0
  local err=$work/err
  if [[ $limit == - ]]; then
    (cd "$work" && timeout 60 "$bin/$tool" "$@") >/dev/null 2>"$err"
  else
    (cd "$work" && ulimit -v "$limit" && timeout 60 "$bin/$tool" "$@") >/dev/null 2>"$err"
  fi
  local status=$?
  checked=$((checked + 1))
  if [[ $status -eq 0 ]]; then
    [[ ${may_pass:-0} == 1 ]] || fail "$name: expected an error, got status 0"
    return
  fi
  if [[ ! -s $err ]]; then
    fail "$name: status $status and no error line"
    return
  fi
  while IFS= read -r line; do
    if bad_line "$line"; then fail "$name: an error line without a reason: '$line'"; fi
  done <"$err"
  last_error=$(tail -1 "$err")
}

sim=ddp-sim
# ddp-sim: the command line.
run "ddp-sim no subcommand" - $sim
run "ddp-sim unknown subcommand" - $sim bogus
run "ddp-sim replay no trace" - $sim replay
run "ddp-sim replay unknown flag" - $sim replay "$trace" --bogus
run "ddp-sim replay empty argument" - $sim replay "$trace" ""
run "ddp-sim replay missing trace" - $sim replay "$work/missing"
run "ddp-sim replay a file for a trace" - $sim replay "$trace/rank-0.meta.json"
run "ddp-sim --world-size 0" - $sim replay "$trace" --world-size 0
run "ddp-sim --world-size 1e99" - $sim replay "$trace" --world-size 1e99
run "ddp-sim --iterations x" - $sim replay "$trace" --iterations x
run "ddp-sim --bandwidth nan" - $sim replay "$trace" --bandwidth nan
run "ddp-sim --platform nope" - $sim replay "$trace" --platform nope
run "ddp-sim --cluster nope" - $sim replay "$trace" --cluster nope
run "ddp-sim --cfg unknown" - $sim replay "$trace" --cfg bogus/key:1
run "ddp-sim --calibration missing" - $sim replay "$trace" --calibration "$work/missing.json"
run "ddp-sim --machine missing" - $sim replay "$trace" --machine "$work/missing.json"
run "ddp-sim --slowdown bad" - $sim replay "$trace" --slowdown 9=2
run "ddp-sim --max-memory bad" - $sim replay "$trace" --max-memory 12x
run "ddp-sim --max-memory 0" - $sim replay "$trace" --max-memory 0
run "ddp-sim timeout-curve --timeouts -1" - $sim timeout-curve "$trace" --timeouts -1
run "ddp-sim sweep no --out" - $sim sweep "$trace"
run "ddp-sim sweep --world-sizes x" - $sim sweep "$trace" --world-sizes x --out "$work/s.csv"
run "ddp-sim advise --runs 3" - $sim advise "$trace" --runs 3
run "ddp-sim calibrate missing" - $sim calibrate "$work/missing"
# ddp-sim: outputs.
run "ddp-sim replay --json under /proc" - $sim replay "$trace" --json /proc/x/y.json
run "ddp-sim replay --out under /proc" - $sim replay "$trace" --out /proc/x
run "ddp-sim replay --json a directory" - $sim replay "$trace" --json "$work"
run "ddp-sim sweep --out under /proc" - $sim sweep "$trace" --out /proc/x.csv
run "ddp-sim timeout-curve --csv under /proc" - $sim timeout-curve "$trace" --timeouts 1 --csv /proc/x.csv
run "ddp-sim advise --json under /proc" - $sim advise "$trace" --json /proc/x.json
# ddp-sim: memory refusals, each naming the estimate and the limit.
expect_refusal() {
  local name=$1 source=$2
  [[ $last_error == SKIPPED ]] && return
  if [[ $last_error != *"needs about "*" and this process may use "*"($source)"* ]]; then
    fail "$name: expected a refusal naming the estimate and $source, got '$last_error'"
  fi
}
run "ddp-sim replay 10^9 ranks, --max-memory" - $sim replay "$trace" --world-size 1000000000 --iterations 1 --max-memory 1G
expect_refusal "ddp-sim replay 10^9 ranks, --max-memory" "--max-memory"
run "ddp-sim replay 10^9 ranks, ulimit -v" 1048576 $sim replay "$trace" --world-size 1000000000 --iterations 1
expect_refusal "ddp-sim replay 10^9 ranks, ulimit -v" "ulimit -v"
run "ddp-sim replay --out of 10^6 ranks, --max-memory" - $sim replay "$trace" --world-size 1000000 --iterations 1 --out "$work/predicted" --max-memory 1G
expect_refusal "ddp-sim replay --out of 10^6 ranks, --max-memory" "--max-memory"
[[ -e $work/predicted ]] && fail "ddp-sim replay --out of 10^6 ranks: a refused replay wrote $work/predicted"
run "ddp-sim replay ring stacks, ulimit -v" 1048576 $sim replay "$trace" --world-size 256 --iterations 1 --allreduce ring
expect_refusal "ddp-sim replay ring stacks, ulimit -v" "ulimit -v"
run "ddp-sim timeout-curve, --max-memory" - $sim timeout-curve "$trace" --timeouts 1 --world-size 100000000 --max-memory 1G
expect_refusal "ddp-sim timeout-curve, --max-memory" "--max-memory"
run "ddp-sim sweep, --max-memory" - $sim sweep "$trace" --world-sizes 4,20000000 --iterations 1 --jobs 2 --out "$work/s.csv" --max-memory 1G
expect_refusal "ddp-sim sweep, --max-memory" "--max-memory"
[[ -e $work/s.csv ]] && fail "ddp-sim sweep, --max-memory: a refused sweep wrote $work/s.csv"
run "ddp-sim advise, --max-memory" - $sim advise "$trace" --max-memory 1M
expect_refusal "ddp-sim advise, --max-memory" "--max-memory"

# ddp-trace.
tr=ddp-trace
run "ddp-trace no subcommand" - $tr
run "ddp-trace validate missing" - $tr validate "$work/missing"
run "ddp-trace summary a file" - $tr summary "$trace/rank-0.meta.json"
run "ddp-trace export --chrome under /proc" - $tr export --chrome /proc/x.json "$trace"
run "ddp-trace import --kineto under /proc" - $tr import --kineto /proc/x/y "$kineto"
run "ddp-trace import missing profile" - $tr import --kineto "$work/imported" "$work/missing.json"
run "ddp-trace import a trace for a profile" - $tr import --kineto "$work/imported" "$trace/rank-0.meta.json"
run "ddp-trace import --max-memory bad" - $tr import --kineto "$work/imported" "$kineto" --max-memory x
run "ddp-trace import, --max-memory" - $tr import --kineto "$work/imported" "$kineto" --max-memory 4M
expect_refusal "ddp-trace import, --max-memory" "--max-memory"
[[ -e $work/imported ]] && fail "ddp-trace import, --max-memory: a refused import wrote $work/imported"

# ddp-train and ddp-experiment: flags and files (a job is not started).
run "ddp-train unknown flag" - ddp-train --bogus
run "ddp-train --lr nan" - ddp-train --lr nan
run "ddp-train --trace-dir under /proc" - ddp-train --trace-dir /proc/x/y --iterations 1
ex=ddp-experiment
run "ddp-experiment no subcommand" - $ex
run "ddp-experiment missing spec" - $ex run "$work/missing.toml"
printf 'name = \n' >"$work/broken.toml"
run "ddp-experiment broken spec" - $ex run "$work/broken.toml"
run "ddp-experiment --out under /proc" - $ex run "$source_dir/experiments/bucket-sweep.toml" --out /proc/x

# Out of memory: ulimit -v from just above what the tool needs to start, upwards, reading a
# 256-rank trace. Every line keeps its reason; one of them must be the out-of-memory one.
if [[ -x $bin/ddp-sim && -x $bin/ddp-trace ]]; then
  "$bin/ddp-sim" replay "$trace" --world-size 256 --iterations 20 --out "$work/big" >/dev/null 2>&1 ||
    fail "could not write the 256-rank trace"
  for tool_args in "ddp-trace summary $work/big" "ddp-sim replay $work/big --iterations 1"; do
    read -r tool args <<<"$tool_args"
    start=8192
    while ((start < 262144)) && ! (ulimit -v $start && "$bin/$tool" --help >/dev/null 2>&1); do start=$((start + 4096)); done
    saw_out_of_memory=0
    may_pass=1  # until the limit is high enough to read the trace
    for ((limit = start; limit < start + 65536; limit += 4096)); do
      last_error=
      # shellcheck disable=SC2086  # args is several words
      run "$tool under ulimit -v $limit" $limit $tool $args
      [[ $last_error == *"out of memory while "* ]] && saw_out_of_memory=1
    done
    may_pass=0
    ((saw_out_of_memory)) || fail "$tool: no ulimit -v in [$start, $((start + 65536))) KiB gave the out-of-memory line"
  done
fi

# An unwritable output is refused before a slow request starts (the explicit ring at 1024
# ranks replays for half a minute in little memory).
seconds_of() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>"$work/slow.err"
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }'
}
if [[ -x $bin/ddp-sim ]]; then
  slow=(--world-size 1024 --iterations 1 --allreduce ring)
  for output in "replay $trace --json /proc/x/y.json" "replay $trace --out /proc/x" \
                "timeout-curve $trace --timeouts 1 --json /proc/x.json" "sweep $trace --out /proc/x.csv"; do
    # shellcheck disable=SC2086
    took=$(seconds_of timeout 120 "$bin/ddp-sim" $output "${slow[@]}")
    awk -v t="$took" 'BEGIN { exit !(t < 3) }' || fail "ddp-sim $output: took $took s to refuse the output (expected < 3 s)"
    flag=$(grep -o -- '--[a-z]* /proc' <<<"$output" | cut -d' ' -f1)
    grep -q "^ddp-sim: $flag /proc/" "$work/slow.err" || fail "ddp-sim $output: expected one line naming $flag, got '$(cat "$work/slow.err")'"
  done
  # A refused request leaves what was there.
  echo '{"kept": true}' >"$work/kept.json"
  "$bin/ddp-sim" replay "$trace" --world-size 0 --json "$work/kept.json" >/dev/null 2>&1
  "$bin/ddp-sim" replay "$trace" --world-size 1000000000 --max-memory 1G --json "$work/kept.json" >/dev/null 2>&1
  [[ $(cat "$work/kept.json") == '{"kept": true}' ]] || fail "a refused replay changed its --json file"
fi

echo "error_lines: $checked error paths checked, $failures failures"
((checked > 0)) || exit 77
((failures == 0))
