#!/usr/bin/env bash
# scripts/hold-cores.sh: while CMD runs, one SCHED_IDLE busy loop per allowed CPU; none left
# after; CMD's exit status passed on; no command: one line on stderr, exit 2.
# Usage: hold_cores_test.sh SCRIPT
set -uo pipefail
script="$1"
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
held_loops() {  # the SCHED_IDLE "hold-cores" loops now running
  ps -eo cls=,args= | awk '$1 == "IDL" && $0 ~ /hold-cores/' | wc -l
}
want=$(nproc)
inside=$(bash "$script" bash -c "sleep 0.5; ps -eo cls=,args= | awk '\$1 == \"IDL\" && \$0 ~ /hold-cores/' | wc -l")
[ "$inside" = "$want" ] && echo "ok: $inside loops held while the command ran" || fail "expected $want SCHED_IDLE loops while held, saw '$inside'"
sleep 0.3
after=$(held_loops)
[ "$after" = 0 ] && echo "ok: no loop left after" || fail "expected no loop left after the command, saw $after"
bash "$script" bash -c 'exit 7'; code=$?
[ "$code" = 7 ] && echo "ok: exit status 7 passed on" || fail "expected the command's exit status 7, got $code"
err=$(bash "$script" 2>&1 >/dev/null); code=$?
expected="hold-cores.sh: expected a command to run while the cores are held, got none"
[ "$code" = 2 ] && [ "$err" = "$expected" ] && echo "ok: no command refused" || fail "no command: exit $code, stderr '$err'"
# Killed from outside (TERM), it passes TERM on to the command and lets the loops go at once.
start=$SECONDS
bash "$script" sleep 30 & holder=$!
sleep 0.5; kill -TERM "$holder"; wait "$holder"; code=$?; sleep 0.5
left=$(held_loops)
[ "$left" = 0 ] && echo "ok: no loop left after TERM" || fail "expected no loop left after TERM, saw $left"
[ "$code" = 143 ] && (( SECONDS - start < 10 )) && echo "ok: TERM ended it at once (exit 143)" \
  || fail "TERM: expected exit 143 within 10 s, got $code after $((SECONDS - start)) s"
exit "$failed"
