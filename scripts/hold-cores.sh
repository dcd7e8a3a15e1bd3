#!/usr/bin/env bash
# hold-cores.sh CMD [ARGS...]: run CMD while one busy loop per allowed CPU, at idle priority
# (SCHED_IDLE), keeps the CPUs from going idle; exits with CMD's status.
#
# Why: on this project's 2-vCPU VM the guest halts an idle vCPU at once (the kernel is booted
# with haltpoll.guest_halt_poll_ns=0), and the DDP jobs idle often: a rank waiting for its peer,
# a slowed rank's injected sleeps, so their speed changes from run to run on halted vCPUs.
# A SCHED_IDLE task gets the CPU only when nothing else wants it,
# and a waking rank preempts it at once, so the ranks' own work is not slowed; it is the same
# idea as booting with idle=poll for a benchmark, applied from user space to this run only.
# See Note [held cores] in docs/model.md.
# Needs chrt and taskset (util-linux). Each loop also ends when this script is gone.
set -uo pipefail
if (( $# == 0 )); then
  echo "hold-cores.sh: expected a command to run while the cores are held, got none" >&2
  exit 2
fi
cpus=()
for part in $(taskset -cp $$ | sed 's/.*: //; s/,/ /g'); do
  if [[ $part == *-* ]]; then cpus+=($(seq "${part%-*}" "${part#*-}")); else cpus+=("$part"); fi
done
loops=()
release() {
  if (( ${#loops[@]} )); then kill "${loops[@]}" 2>/dev/null; wait "${loops[@]}" 2>/dev/null; fi
  return 0
}
trap release EXIT
for cpu in "${cpus[@]}"; do
  chrt --idle 0 taskset -c "$cpu" bash -c 'while kill -0 "$1" 2>/dev/null; do :; done' hold-cores "$$" &
  loops+=($!)
done
# In the background, so that a TERM or INT sent to this script is handled at once (bash runs a
# trap only after its foreground command ends) and passed on to the command. Without job control
# bash starts a background command with INT and QUIT ignored, so the subshell restores them first:
# else the INT passed on would leave the command running.
( trap - INT QUIT; exec "$@" ) <&0 &
command_pid=$!
trap 'kill -TERM "$command_pid" 2>/dev/null; exit 143' TERM
trap 'kill -INT "$command_pid" 2>/dev/null; exit 130' INT
wait "$command_pid"
exit $?
