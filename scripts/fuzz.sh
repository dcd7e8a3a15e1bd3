#!/usr/bin/env bash
# Long fuzzing runs of every parser with a libFuzzer target (ctest runs each for 10 s only):
# the trace reader (tests/traces/fuzz_trace_reader.cpp), the profiler importer
# (tests/kineto/fuzz_kineto_import.cpp), the skew flag parsers (tests/traces/fuzz_skew.cpp),
# ddp-experiment's spec parser (tests/experiments/fuzz_experiment_spec.cpp), ddp-sim's numeric
# (platform) flag parsers (tests/simulator/fuzz_numeric_flags.cpp), the machine profile with the
# replay settings made of it (tests/simulator/fuzz_machine_profile.cpp) and the calibration file
# (tests/simulator/fuzz_calibration_json.cpp), under ASan+UBSan, from their committed seed corpora.
#
# Usage: scripts/fuzz.sh [RUNS] [OUT] [NAME...]   (default 1000000 executions each, OUT
# results/fuzz, every fuzzer). Writes OUT/NAME.log and OUT/summary.json ({name: {runs, seconds,
# crashes}}); exits 1 if any fuzzer found a crash (its input is saved as OUT/NAME-crash-*).
# Needs a build with clang++ (scripts/build.sh installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-1000000}"
out="$(realpath -m "${2:-results/fuzz}")"
build=build/release
mkdir -p "$out"
declare -A corpus=(
  [fuzz_trace_reader]="tests/traces/fuzz_corpus tests/traces/fuzz_trace_reader.dict"
  [fuzz_kineto_import]="tests/kineto/fuzz_corpus tests/kineto/fuzz_kineto_import.dict"
  [fuzz_skew]="tests/traces/fuzz_skew_corpus tests/traces/fuzz_skew.dict"
  [fuzz_experiment_spec]="tests/experiments/fuzz_experiment_spec_corpus tests/experiments/fuzz_experiment_spec.dict"
  [fuzz_numeric_flags]="tests/simulator/fuzz_numeric_flags_corpus tests/simulator/fuzz_numeric_flags.dict"
  [fuzz_machine_profile]="tests/simulator/fuzz_machine_profile_corpus tests/simulator/fuzz_machine_profile.dict"
  [fuzz_calibration_json]="tests/simulator/fuzz_calibration_json_corpus tests/simulator/fuzz_calibration_json.dict"
)
declare -A binary=(
  [fuzz_trace_reader]="$build/tests/traces/fuzz/fuzz_trace_reader"
  [fuzz_kineto_import]="$build/tests/kineto/fuzz/fuzz_kineto_import"
  [fuzz_skew]="$build/tests/traces/fuzz/fuzz_skew"
  [fuzz_experiment_spec]="$build/tests/experiments/fuzz/fuzz_experiment_spec"
  [fuzz_numeric_flags]="$build/tests/simulator/fuzz/fuzz_numeric_flags"
  [fuzz_machine_profile]="$build/tests/simulator/fuzz/fuzz_machine_profile"
  [fuzz_calibration_json]="$build/tests/simulator/fuzz/fuzz_calibration_json"
)
names=("${@:3}")
((${#names[@]})) || names=(fuzz_trace_reader fuzz_kineto_import fuzz_skew fuzz_experiment_spec fuzz_numeric_flags fuzz_machine_profile
                                  fuzz_calibration_json)
status=0
summary="{"
for name in "${names[@]}"; do
  if [[ -z "${binary[$name]:-}" ]]; then
    echo "fuzz.sh: expected a fuzzer name (${!binary[*]}), got $name" >&2
    exit 2
  fi
  bin="${binary[$name]}"
  if [[ ! -x "$bin" ]]; then
    echo "fuzz.sh: expected $bin (built when clang++ with libFuzzer is installed), got none" >&2
    exit 2
  fi
  read -r seeds dict <<<"${corpus[$name]}"
  work="$out/$name-corpus"
  mkdir -p "$work"
  start=$SECONDS
  rc=0
  "$bin" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -dict="$dict" \
    -artifact_prefix="$out/$name-" "$work" "$seeds" >"$out/$name.log" 2>&1 || rc=$?
  seconds=$((SECONDS - start))
  done_runs=$(grep -oE '^Done [0-9]+ runs' "$out/$name.log" | grep -oE '[0-9]+' || echo 0)
  crashes=$( (ls "$out/$name"-crash-* "$out/$name"-timeout-* "$out/$name"-oom-* 2>/dev/null || true) | wc -l)
  echo "$name: $done_runs executions in $seconds s, $crashes crash(es), exit $rc"
  ((rc == 0 && crashes == 0)) || status=1
  summary+="\"$name\": {\"runs\": $done_runs, \"seconds\": $seconds, \"crashes\": $crashes},"
done
echo "${summary%,}}" >"$out/summary.json"
exit $status
