#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, for one command: Debian's munged, slurmctld and
# slurmd started as plain daemons (no systemd) with a generated slurm.conf, their key, state,
# spool, logs and sockets in a fresh temporary directory; COMMAND runs with SLURM_CONF pointing
# there, so sbatch/srun/squeue talk to this cluster; everything is stopped and removed on exit,
# failure or interruption. The same sbatch/srun commands then run unchanged on a real cluster.
#
#   scripts/slurm-local.sh [run] [--timeout S] [--keep DIR] [--quiet] -- COMMAND [ARGS...]
#   scripts/slurm-local.sh --check     # can a cluster be made here? exit 0, or 2 and why
#   scripts/slurm-local.sh leftovers   # processes of any slurm-local run still alive; nothing when clean
#
#   --timeout S   stop COMMAND after S seconds (exit 124), then tear down
#   --keep DIR    copy the cluster's logs and slurm.conf to DIR before removing them
#   --quiet       no setup lines on stderr
#
# The cluster: one node named `hostname -s` (address 127.0.0.1) with the CPUs `slurmd -C`
# finds, one partition `ddpsim` (default), SlurmUser=root, proctrack/linuxproc and task/none
# (no cgroups needed), select/cons_tres with CR_Core (a task gets a core), no accounting, free
# ports picked at start. Missing packages (munge, slurmctld, slurmd, slurm-client: their
# paragraph in scripts/deps.txt) are installed with apt-get first.
#
# Every daemon and job process carries DDPSIM_SLURM_RUN=<its run directory> in its environment;
# teardown cancels the jobs, stops the daemons by their pid files, then ends any process still
# carrying this run's mark (a job step's slurmstepd outlives slurmd), by pid.
#
# Exit status: COMMAND's; 124 on --timeout; 130/143 when interrupted; 2 when no cluster can
# be made here (not root, no apt-get to install SLURM, a daemon that does not come up: one line
# says which, with the daemon's last log lines).
set -uo pipefail

# The Debian packages: the paragraph of scripts/deps.txt headed "# scripts/slurm-local.sh".
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mapfile -t packages < <(awk '/^# scripts\/slurm-local.sh/ {on = 1; next} on && /^[[:space:]]*$/ {exit} on && !/^#/ {print $1}' "$here/deps.txt")
timeout_s=""
keep=""
quiet=0
check_only=0

refuse() {  # one line, exit 2: no cluster can be made here
  echo "slurm-local: $*" >&2
  exit 2
}
usage_error() {
  echo "slurm-local: $*" >&2
  echo "usage: scripts/slurm-local.sh [run] [--timeout S] [--keep DIR] [--quiet] -- COMMAND [ARGS...] | --check | leftovers" >&2
  exit 64
}
say() { [ "$quiet" = 1 ] || echo "slurm-local: $*" >&2; }

# Pids of live processes whose environment carries DDPSIM_SLURM_RUN (=VALUE when given).
marked_pids() {  # [value]
  local want="DDPSIM_SLURM_RUN=${1:-}" environ pid stat state ppid rest
  for environ in /proc/[0-9]*/environ; do
    pid="${environ#/proc/}"; pid="${pid%/environ}"
    if [ -n "${1:-}" ]; then
      grep -qzxF -- "$want" "$environ" 2>/dev/null || continue
    else
      grep -qz '^DDPSIM_SLURM_RUN=' "$environ" 2>/dev/null || continue
    fi
    # /proc/PID/stat is "PID (COMM) STATE PPID ...", COMM possibly with spaces ("slurmstepd: [1.0]").
    stat="$( { cat "/proc/$pid/stat"; } 2>/dev/null)" || continue
    read -r state ppid rest <<< "${stat##*) }"
    # A zombie has ended; it only waits for its parent.
    case "$state" in Z | X | "") continue ;; esac
    # `leftovers` run by COMMAND inherits the mark: not itself nor its subshells.
    [ -z "${1:-}" ] && { [ "$pid" = $$ ] || [ "$ppid" = $$ ]; } && continue
    echo "$pid"
  done
}

if [ "${1:-}" = leftovers ]; then
  for pid in $(marked_pids); do
    echo "process $pid $( { tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null)"
  done
  exit 0
fi
[ "${1:-}" = run ] && shift
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) [ $# -ge 2 ] || usage_error "--timeout: expected seconds"; timeout_s="$2"; shift 2 ;;
    --keep) [ $# -ge 2 ] || usage_error "--keep: expected a directory"; keep="$2"; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --check) check_only=1; shift ;;
    --) shift; break ;;
    *) usage_error "expected an option or --, got '$1'" ;;
  esac
done
if [ -n "$timeout_s" ] && ! [[ "$timeout_s" =~ ^[1-9][0-9]*$ ]]; then
  usage_error "--timeout: expected whole seconds >= 1, got '$timeout_s'"
fi
[ "$check_only" = 1 ] || [ $# -gt 0 ] || usage_error "expected -- COMMAND"

[ ${#packages[@]} -gt 0 ] || refuse "found no '# scripts/slurm-local.sh' packages in $here/deps.txt"
[ "$(id -u)" = 0 ] || refuse "needs root (the daemons run as SlurmUser=root); run it with sudo"
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get > /dev/null 2>&1 || refuse "needs ${missing[*]} and has no apt-get to install them"
  if [ "$check_only" = 1 ]; then
    echo "slurm-local: ok (will install ${missing[*]})" >&2
    exit 0
  fi
  say "installing ${missing[*]}"
  # Debian's postinst scripts try to start the services; where systemd runs they fail without a
  # slurm.conf, harmlessly: this cluster uses its own config, key, sockets and ports.
  { DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } > /dev/null ||
    refuse "apt-get install ${missing[*]} failed"
fi
for tool in munged munge slurmctld slurmd sinfo scontrol squeue scancel; do
  command -v "$tool" > /dev/null 2>&1 || refuse "needs '$tool' (apt-get install ${packages[*]})"
done
command -v python3 > /dev/null 2>&1 || refuse "needs python3 (to pick free ports)"
if [ "$check_only" = 1 ]; then
  echo "slurm-local: ok" >&2
  exit 0
fi

# munged checks that every directory above its socket is searchable by all, and that its key
# directory is not writable by others: a 0755 run directory with a 0700 key directory inside.
dir="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-slurm-XXXXXX")" || refuse "mktemp failed"
chmod 0755 "$dir"
mkdir -m 0700 "$dir/munge" && mkdir -m 0755 "$dir/run" "$dir/log" "$dir/state" "$dir/spool"
# The mark goes to the daemons and COMMAND (so to the jobs it submits), not to this shell: its
# own subshells must not look like leftovers.
mark=(env DDPSIM_SLURM_RUN="$dir")

teardown() {
  local code=$? pid tries
  trap - EXIT INT TERM
  # Only this run's cluster: a SLURM_CONF inherited from a real cluster's login shell is not ours.
  if [ "${SLURM_CONF:-}" = "$dir/slurm.conf" ] && [ -f "$SLURM_CONF" ]; then
    # Jobs first, while slurmd can still end their steps; KillWait=2 bounds how long that takes.
    scancel --quiet --full --user=root > /dev/null 2>&1
    for tries in $(seq 50); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for daemon in slurmd slurmctld munged; do
    pid="$(cat "$dir/run/$daemon.pid" 2>/dev/null)" || continue
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  # Whatever else this run started and is still alive (COMMAND when interrupted, a step's
  # slurmstepd or task), by pid: TERM, then KILL what ignores it.
  for pid in $(marked_pids "$dir"); do kill -TERM "$pid" 2>/dev/null; done
  for tries in $(seq 50); do
    [ -z "$(marked_pids "$dir")" ] && break
    sleep 0.2
  done
  for pid in $(marked_pids "$dir"); do kill -KILL "$pid" 2>/dev/null; done
  if [ -n "$keep" ]; then
    mkdir -p "$keep" && cp -r "$dir/log" "$dir/slurm.conf" "$keep/" 2>/dev/null
  fi
  rm -rf "$dir"
  say "torn down"
  exit "$code"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log_tail() {  # file: its last lines, on one line
  tail -n 3 "$1" 2>/dev/null | tr '\n' ' '
}
wait_for() {  # seconds, command...: true once the command succeeds
  local deadline=$((SECONDS + $1))
  shift
  until "$@" > /dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# munge: a fresh key, its own socket (a system munged, if any, is left alone).
head -c 1024 /dev/urandom > "$dir/munge/munge.key" && chmod 0400 "$dir/munge/munge.key"
socket="$dir/run/munge.socket"
"${mark[@]}" munged --key-file="$dir/munge/munge.key" --socket="$socket" --pid-file="$dir/run/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" ||
  refuse "munged did not start: $(log_tail "$dir/log/munged.log")"
munge_works() { munge -S "$socket" -n | unmunge -S "$socket"; }
wait_for 10 munge_works || refuse "munged does not answer on $socket: $(log_tail "$dir/log/munged.log")"

node="$(hostname -s)"
# The node as slurmd itself sees it (sockets, cores, threads), so slurmctld never drains it for
# a mismatch; RealMemory is left out (memory is not a resource here).
hardware="$(slurmd -C 2>/dev/null | head -n 1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' | tr '\n' ' ')"
[ -n "$hardware" ] || refuse "slurmd -C printed no node configuration"
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cat > "$dir/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh for one run; removed with it.
ClusterName=ddpsim
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=ddpsim Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$dir/slurm.conf"

"${mark[@]}" slurmctld -f "$SLURM_CONF" -i || refuse "slurmctld did not start: $(log_tail "$dir/log/slurmctld.log")"
wait_for 20 scontrol ping || refuse "slurmctld does not answer: $(log_tail "$dir/log/slurmctld.log")"
"${mark[@]}" slurmd -f "$SLURM_CONF" || refuse "slurmd did not start: $(log_tail "$dir/log/slurmd.log")"
node_idle() { [ "$(sinfo -h -n "$node" -o %T)" = idle ]; }
wait_for 30 node_idle ||
  refuse "node $node is not idle ($(sinfo -h -n "$node" -o '%T %E')): $(log_tail "$dir/log/slurmd.log")"
say "node $node idle ($hardware); SLURM_CONF=$SLURM_CONF"

# COMMAND in the background, so a signal reaches the traps at once.
if [ -n "$timeout_s" ]; then
  "${mark[@]}" timeout "$timeout_s" "$@" &
else
  "${mark[@]}" "$@" &
fi
wait $!
