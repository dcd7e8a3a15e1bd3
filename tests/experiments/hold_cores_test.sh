#!/usr/bin/env bash
# scripts/hold-cores.sh: while CMD runs, one SCHED_IDLE busy loop per allowed CPU; none left
# after, also after TERM or INT (passed on to CMD); CMD's exit status passed on; no command:
# one line on stderr, exit 2.
# Usage: hold_cores_test.sh SCRIPT
set -uo pipefail
script="$1"
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
held_loops() {  # the SCHED_IDLE "hold-cores" loops now running
  ps -eo cls=,args= | awk '$1 == "IDL" && $0 ~ /hold-cores/' | wc -l
}
want=$(nproc)
inside=$(bash "$script" bash -c "sleep 0.5; $(declare -f held_loops); held_loops")
[ "$inside" = "$want" ] && echo "ok: $inside loops held while the command ran" || fail "expected $want SCHED_IDLE loops while held, saw '$inside'"
sleep 0.3
after=$(held_loops)
[ "$after" = 0 ] && echo "ok: no loop left after" || fail "expected no loop left after the command, saw $after"
bash "$script" bash -c 'exit 7'; code=$?
[ "$code" = 7 ] && echo "ok: exit status 7 passed on" || fail "expected the command's exit status 7, got $code"
err=$(bash "$script" 2>&1 >/dev/null); code=$?
expected="hold-cores.sh: expected a command to run while the cores are held, got none"
[ "$code" = 2 ] && [ "$err" = "$expected" ] && echo "ok: no command refused" || fail "no command: exit $code, stderr '$err'"
# Killed from outside (TERM or INT), it passes the signal on to the command (which must end: a
# sleep that ignored it would still be there) and lets the loops go at once.
for signal in TERM:143 INT:130; do
  name=${signal%:*} want_code=${signal#*:} start=$SECONDS
  # (In a subshell that restores INT: this script's own background jobs start with it ignored.)
  ( trap - INT; exec bash "$script" sleep 30 ) & holder=$!
  sleep 0.5; command_pid=$(pgrep -P "$holder" -x sleep)
  kill -"$name" "$holder"; wait "$holder"; code=$?; sleep 0.5
  left=$(held_loops)
  [ "$left" = 0 ] && echo "ok: no loop left after $name" || fail "expected no loop left after $name, saw $left"
  [ "$code" = "$want_code" ] && (( SECONDS - start < 10 )) && echo "ok: $name ended it at once (exit $code)" \
    || fail "$name: expected exit $want_code within 10 s, got $code after $((SECONDS - start)) s"
  if [ -z "$command_pid" ]; then
    fail "$name: found no command (sleep 30) under the script"
  elif kill -0 "$command_pid" 2>/dev/null; then
    fail "$name: the command (sleep 30, pid $command_pid) still runs"; kill "$command_pid"
  else
    echo "ok: $name passed on, the command ended"
  fi
done
exit "$failed"
