#!/usr/bin/env bash
# CI's sanitizer leg: builds the asan preset (g++ Debug, -fsanitize=address,undefined,
# float-cast-overflow, every report fatal; no runtime/, whose LibTorch is not built with ASan;
# no libFuzzer targets, which the main leg already builds and runs with ASan + UBSan) and runs
# its ctest suite, the bad-input tables included, so LeakSanitizer checks every CLI process those
# tables start on its error path. The asan test preset leaves out the tests labelled "script"
# (Python and bash that run nothing this project compiles; the main leg runs them).
# Every ASan, LSan and UBSan report goes to a file under build/asan/sanitizer-reports: a report
# from a process whose exit status a test does not look at still fails the leg (UBSan reports are
# also fatal, exit 23). UBSan's log_path needs the preset's -static-libubsan: with g++'s shared
# libubsan, its call to __sanitizer_set_report_path binds to libasan's copy, so its own reports
# stayed on stderr. The simulator runs SimGrid's actors as threads in this build
# (simulator/src/engine/replay.cpp). Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS
bash scripts/setup.sh
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$(nproc)"
echo "test-asan: build took $((SECONDS - start)) s"

reports="$PWD/build/asan/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
# detect_stack_use_after_return: a reference to a returned frame's local; check/strict init
# order: a global read before its initializer ran in another file.
export ASAN_OPTIONS="detect_leaks=1:exitcode=23:log_path=$reports/asan:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=23:log_path=$reports/ubsan"
status=0
ctest --preset asan -j "$(nproc)" "$@" || status=$?
if [ -n "$(ls -A "$reports")" ]; then
  echo "test-asan: sanitizer reports (from $reports):"
  for report in "$reports"/*; do
    echo "--- $report"
    cat "$report"
  done
  status=1
fi
echo "test-asan: build and tests took $((SECONDS - start)) s"
exit "$status"
