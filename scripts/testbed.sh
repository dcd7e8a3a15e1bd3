#!/usr/bin/env bash
# A small cluster on one machine: N hosts as network namespaces on one private switch, each
# host's link shaped to a given rate, one command run in every host, everything torn down on
# exit, failure or interruption.
#
#   scripts/testbed.sh [run] [OPTIONS] -- COMMAND [ARGS...]
#   scripts/testbed.sh leftovers [PREFIX]
#
# `leftovers` prints, one a line, every network namespace named PREFIX-* (default ddpsim) and
# every interface of the caller's namespace whose name starts with PREFIX, and every
# /etc/netns/PREFIX-* (the hosts' /etc/hosts); nothing when clean.
#
#   --hosts N            hosts (default 2)
#   --ranks-per-host N   ranks each host should run, passed to COMMAND as {ranks} (default 1);
#                        ranks on one host talk over that host's loopback, unshaped
#   --rate RATE          each host's link rate, tc units: 200mbit, 1gbit, 500kbit (default: unshaped)
#   --qdisc tbf|htb      shaper (default tbf)
#   --burst SIZE         shaper burst, tc units (default: 4 ms at RATE, at least 64kb; a smaller burst
#                        than the kernel timer tick (HZ=250 on Debian) passes at ~3/4 of 500mbit)
#   --queue-latency T    tbf: longest a packet may wait in the shaper's queue (default 50ms)
#   --direction both|up  shape host->switch and switch->host (both, the default) or only host->switch
#   --subnet A.B.C       host i gets A.B.C.(i+1)/24 (default 10.213.0); private to this testbed
#   --name PREFIX        prefix of the namespaces (default ddpsim-<pid>): PREFIX-h0.., PREFIX-sw
#   --timeout S          stop the commands after S seconds (exit 124), then tear down
#   --check              only check that a testbed can be made here (exit 0, or 2 with the reason)
#   --quiet              no setup lines on stderr
#
# Topology: host namespace PREFIX-hI has lo and eth0 (its address); eth0 is one end of a veth
# pair whose other end, pI, is a port of bridge br0 in the switch namespace PREFIX-sw. Nothing is
# created in the caller's namespace, so nothing can leak there; the shapers are the root qdiscs
# of eth0 (uplink) and pI (downlink). Each host's /etc/hosts (/etc/netns/PREFIX-hI/hosts while
# up) names the hosts h0..hN-1. A flow between two hosts is limited to RATE in each
# direction (full duplex), as on a switched network with one RATE NIC per host.
#
# COMMAND runs once in each host (ip netns exec) with these words replaced in its arguments:
#   {host} (0..N-1)  {hosts} (N)  {ranks} (--ranks-per-host)  {addr} (this host's address)
#   {master} (host 0's address)  {ifname} (eth0)
# and with TESTBED_HOST, TESTBED_HOSTS, TESTBED_RANKS_PER_HOST, TESTBED_ADDR, TESTBED_MASTER_ADDR,
# TESTBED_IFNAME, TESTBED_RATE, TESTBED_RATE_BITS (bit/s, 0 when unshaped), TESTBED_PREFIX set, and
# GLOO_SOCKET_IFNAME=eth0 so Gloo binds to the host's shaped interface (ddp-train would otherwise
# pick the default device). Its output is prefixed "[hI] ". When one host's command fails the
# others get SIGTERM. Exit status: the first failing host's, 0 when all succeed, 124 on --timeout,
# 130/143 when interrupted, 2 when the testbed cannot be made (one line names what is missing).
#
# Example, a real 2-host DDP job at 200 Mbit/s:
#   B=build/release/bin
#   scripts/testbed.sh --hosts 2 --rate 200mbit -- $B/ddp-launch --nnodes {hosts} --node-rank {host} \
#     --nproc-per-node {ranks} --master-addr {master} --master-port 29500 -- \
#     $B/ddp-train --model mlp --trace-dir run-tb
set -uo pipefail

hosts=2
ranks_per_host=1
rate=""
qdisc=tbf
burst=""
queue_latency=50ms
direction=both
subnet=10.213.0
prefix="ddpsim-$$"
timeout_s=""
check_only=0
quiet=0

refuse() {  # one line, exit 2: the testbed cannot be made here
  echo "testbed: $*" >&2
  exit 2
}
usage_error() {
  echo "testbed: $*" >&2
  echo "usage: scripts/testbed.sh [--hosts N] [--ranks-per-host N] [--rate RATE] [--qdisc tbf|htb] [--burst SIZE] [--queue-latency T] [--direction both|up] [--subnet A.B.C] [--name PREFIX] [--timeout S] [--check] [--quiet] -- COMMAND [ARGS...]" >&2
  exit 64
}
say() { [ "$quiet" = 1 ] || echo "testbed: $*" >&2; }

leftovers() {  # prefix
  local prefix="${1:-ddpsim}"
  { ip netns list 2>/dev/null | awk '{print $1}'; ls /run/netns 2>/dev/null; } | grep -F -- "$prefix-" | sort -u |
    sed 's/^/netns /'
  ip -o link show 2>/dev/null | sed -E 's/^[0-9]+: ([^:@]+).*/\1/' | grep -F -- "$prefix" | sed 's/^/link /'
  ls /etc/netns 2>/dev/null | grep -F -- "$prefix-" | sed 's|^|file /etc/netns/|'
  return 0
}
case "${1:-}" in
  run) shift ;;
  leftovers) leftovers "${2:-}"; exit 0 ;;
esac

while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts="${2:-}"; shift 2 ;;
    --ranks-per-host) ranks_per_host="${2:-}"; shift 2 ;;
    --rate) rate="${2:-}"; shift 2 ;;
    --qdisc) qdisc="${2:-}"; shift 2 ;;
    --burst) burst="${2:-}"; shift 2 ;;
    --queue-latency) queue_latency="${2:-}"; shift 2 ;;
    --direction) direction="${2:-}"; shift 2 ;;
    --subnet) subnet="${2:-}"; shift 2 ;;
    --name) prefix="${2:-}"; shift 2 ;;
    --timeout) timeout_s="${2:-}"; shift 2 ;;
    --check) check_only=1; shift ;;
    --quiet) quiet=1; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) usage_error "unknown option '$1'" ;;
  esac
done
command_args=("$@")

[[ "$hosts" =~ ^[1-9][0-9]*$ ]] && [ "$hosts" -le 200 ] || usage_error "--hosts '$hosts': expected 1..200"
[[ "$ranks_per_host" =~ ^[1-9][0-9]*$ ]] || usage_error "--ranks-per-host '$ranks_per_host': expected a positive integer"
[[ "$subnet" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || usage_error "--subnet '$subnet': expected A.B.C"
[[ "$qdisc" = tbf || "$qdisc" = htb ]] || usage_error "--qdisc '$qdisc': expected tbf or htb"
[[ "$direction" = both || "$direction" = up ]] || usage_error "--direction '$direction': expected both or up"
[[ "$prefix" =~ ^[A-Za-z0-9_.-]{1,40}$ ]] || usage_error "--name '$prefix': expected 1-40 of [A-Za-z0-9_.-]"
[ -z "$timeout_s" ] || [[ "$timeout_s" =~ ^[0-9]+$ ]] || usage_error "--timeout '$timeout_s': expected whole seconds"
rate_bits=0
if [ -n "$rate" ]; then
  [[ "$rate" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || usage_error "--rate '$rate': expected a number and bit|kbit|mbit|gbit, e.g. 200mbit"
  case "${BASH_REMATCH[2]}" in
    bit) rate_bits=${BASH_REMATCH[1]} ;;
    kbit) rate_bits=$((BASH_REMATCH[1] * 1000)) ;;
    mbit) rate_bits=$((BASH_REMATCH[1] * 1000000)) ;;
    gbit) rate_bits=$((BASH_REMATCH[1] * 1000000000)) ;;
  esac
  if [ -z "$burst" ]; then
    burst_bytes=$((rate_bits / 8 * 4 / 1000))
    [ "$burst_bytes" -ge 65536 ] || burst_bytes=65536
    burst="${burst_bytes}b"
  fi
fi
[ "$check_only" = 1 ] || [ ${#command_args[@]} -gt 0 ] || usage_error "expected a COMMAND after --"

# ---- can a testbed be made here? -----------------------------------------------------------
[ "$(id -u)" = 0 ] || refuse "needs root to create network namespaces (running as uid $(id -u))"
command -v ip >/dev/null 2>&1 || refuse "needs 'ip' from iproute2 (apt-get install iproute2)"
command -v tc >/dev/null 2>&1 || refuse "needs 'tc' from iproute2 (apt-get install iproute2)"

created=()       # namespaces made by this run, in creation order
made_etc_netns=0 # whether this run made /etc/netns (for the hosts' /etc/hosts)
pids=()          # the host commands
watchdog=""
torn_down=0

teardown() {
  [ "$torn_down" = 1 ] && return
  torn_down=1
  [ -z "$watchdog" ] || kill "$watchdog" 2>/dev/null
  local ns pid left i
  # Processes still inside our namespaces (a worker that outlived its launcher) go first: a
  # namespace with a process in it outlives `ip netns del`, and so would its interfaces.
  for ns in "${created[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null; done
  done
  for i in $(seq 1 30); do
    left=""
    for ns in "${created[@]}"; do left+="$(ip netns pids "$ns" 2>/dev/null)"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  for ns in "${created[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
  for ns in "${created[@]}"; do ip netns del "$ns" 2>/dev/null; done
  for ns in "${created[@]}"; do rm -rf "/etc/netns/$ns"; done
  [ "$made_etc_netns" = 0 ] || rmdir /etc/netns 2>/dev/null
  [ ${#created[@]} -eq 0 ] || say "torn down ${created[*]}"
}
on_signal() {  # $1: exit status
  trap - INT TERM HUP
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  teardown
  exit "$1"
}
trap teardown EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

make_ns() {
  local out
  out="$(ip netns add "$1" 2>&1)" || refuse "cannot create network namespaces: ip netns add $1: ${out:-failed}"
  created+=("$1")
  ip -n "$1" link set lo up 2>/dev/null || refuse "cannot bring up loopback in namespace $1"
}
shape() {  # namespace, device
  local out
  if [ "$qdisc" = tbf ]; then
    out="$(tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency "$queue_latency" 2>&1)" ||
      refuse "cannot shape with tc tbf (kernel module sch_tbf?): ${out:-failed}"
  else
    out="$(tc -n "$1" qdisc add dev "$2" root handle 1: htb default 10 2>&1 &&
           tc -n "$1" class add dev "$2" parent 1: classid 1:10 htb rate "$rate" ceil "$rate" burst "$burst" 2>&1)" ||
      refuse "cannot shape with tc htb (kernel module sch_htb?): ${out:-failed}"
  fi
}

sw="$prefix-sw"
if [ "$check_only" = 1 ]; then
  # The smallest testbed that exercises every kernel feature used: namespaces, bridge, veth, shaper.
  hosts=1
  quiet=1
  [ -n "$rate" ] || { rate=100mbit; burst=64kb; }
fi
make_ns "$sw"
out="$(ip -n "$sw" link add br0 type bridge forward_delay 0 2>&1)" || refuse "cannot create a bridge (kernel module bridge?): ${out:-failed}"
ip -n "$sw" link set br0 up
addrs=()
for ((i = 0; i < hosts; i++)); do
  ns="$prefix-h$i"
  make_ns "$ns"
  out="$(ip link add eth0 netns "$ns" type veth peer name "p$i" netns "$sw" 2>&1)" ||
    refuse "cannot create veth pairs (kernel module veth?): ${out:-failed}"
  ip -n "$sw" link set "p$i" master br0 up
  addrs+=("$subnet.$((i + 1))")
  ip -n "$ns" addr add "${addrs[$i]}/24" dev eth0
  ip -n "$ns" link set eth0 up
  if [ -n "$rate" ]; then
    shape "$ns" eth0
    [ "$direction" = up ] || shape "$sw" "p$i"
  fi
done
if [ "$check_only" = 1 ]; then
  echo "testbed: ok (root, network namespaces, bridge, veth, tc $qdisc)"
  exit 0
fi
master="${addrs[0]}"
# Each host's /etc/hosts names every host (h0.., PREFIX-h0..): `ip netns exec` mounts
# /etc/netns/NS/hosts over /etc/hosts, so names resolve both ways (c10d's reverse lookup of a
# peer no longer warns) and --master-addr h0 works.
[ -d /etc/netns ] || { mkdir -p /etc/netns && made_etc_netns=1; }
for ((i = 0; i < hosts; i++)); do
  mkdir -p "/etc/netns/$prefix-h$i"
  {
    printf '127.0.0.1\tlocalhost\n::1\tlocalhost\n'
    for ((j = 0; j < hosts; j++)); do printf '%s\th%s %s-h%s\n' "${addrs[$j]}" "$j" "$prefix" "$j"; done
    # c10d's sockets are dual-stack: a peer's address comes back IPv4-mapped
    for ((j = 0; j < hosts; j++)); do printf '::ffff:%s\th%s %s-h%s\n' "${addrs[$j]}" "$j" "$prefix" "$j"; done
  } > "/etc/netns/$prefix-h$i/hosts"
done
say "up: $hosts hosts ($prefix-h0..h$((hosts - 1)), $subnet.1..$hosts on bridge br0 in $sw)," \
    "${ranks_per_host} rank(s) per host, link ${rate:-unshaped}${rate:+ ($qdisc, $direction)}"

if [ -n "$timeout_s" ]; then
  trap 'on_signal 124' USR1
  # The sleep must neither outlive the watchdog nor hold our stdout/stderr: a caller that reads
  # them to EOF (subprocess.run with capture) would wait for the whole timeout after we exit.
  (trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
   sleep "$timeout_s" </dev/null >/dev/null 2>&1 & sleeper=$!
   wait "$sleeper" && echo "testbed: --timeout $timeout_s s reached, stopping" >&2 && kill -USR1 $$) &
  watchdog=$!
fi

for ((i = 0; i < hosts; i++)); do
  args=()
  for word in "${command_args[@]}"; do
    word="${word//\{host\}/$i}"
    word="${word//\{hosts\}/$hosts}"
    word="${word//\{ranks\}/$ranks_per_host}"
    word="${word//\{addr\}/${addrs[$i]}}"
    word="${word//\{master\}/$master}"
    word="${word//\{ifname\}/eth0}"
    args+=("$word")
  done
  ip netns exec "$prefix-h$i" env TESTBED_HOST="$i" TESTBED_HOSTS="$hosts" \
    TESTBED_RANKS_PER_HOST="$ranks_per_host" TESTBED_ADDR="${addrs[$i]}" TESTBED_MASTER_ADDR="$master" \
    TESTBED_IFNAME=eth0 TESTBED_RATE="$rate" TESTBED_RATE_BITS="$rate_bits" TESTBED_PREFIX="$prefix" \
    GLOO_SOCKET_IFNAME=eth0 "${args[@]}" > >(sed -u "s/^/[h$i] /") 2>&1 &
  pids+=($!)
done

status=0
running=("${pids[@]}")
while [ ${#running[@]} -gt 0 ]; do
  # wait -p unsets `finished` first and leaves it unset when it names no job: a trapped signal
  # interrupted it (wait again), or none of these is left to wait for (127: nothing more to take).
  wait -n -p finished "${running[@]}"
  code=$?
  if [ -z "${finished:-}" ]; then
    [ "$code" = 127 ] && break
    continue
  fi
  still=()
  for pid in "${running[@]}"; do [ "$pid" = "$finished" ] || still+=("$pid"); done
  running=("${still[@]}")
  if [ "$code" -ne 0 ] && [ "$status" = 0 ]; then
    status=$code
    for ((i = 0; i < hosts; i++)); do
      [ "${pids[$i]}" = "$finished" ] && say "host $i's command failed (exit $code); stopping the others"
    done
    for pid in "${running[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  fi
done
teardown
exit "$status"
