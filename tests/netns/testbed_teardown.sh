#!/usr/bin/env bash
# The testbed leaves nothing behind (no namespace, interface, qdisc or process) whether its
# commands succeed, one host fails, a process escapes into the background, it times out, or
# it is interrupted; and while up, every host has its own address and shaper; two testbeds at
# once stay apart.
source "$(dirname "$0")/common.sh" "$1"
skip_unless_testbed
set -m  # background jobs get SIGINT like a foreground one would from ^C
root_state > "$scratch/before.state"
chmod 755 "$scratch"

# 1. Success, 3 hosts with 2 ranks each, htb: what each host sees while up.
p="ddpsim-t$$-ok"
"$TESTBED" --name "$p" --hosts 3 --ranks-per-host 2 --rate 100mbit --qdisc htb -- bash -c \
  "{ ip netns identify; echo host={host}/{hosts} ranks={ranks} addr={addr} master={master} if=\$GLOO_SOCKET_IFNAME;
     ip -o -4 addr show dev eth0; tc qdisc show dev eth0; getent ahostsv4 h2 | head -1; } > $scratch/seen-{host}" || fail "3-host run exited $?"
for h in 0 1 2; do
  f="$scratch/seen-$h"
  [ -s "$f" ] || fail "host $h's command did not run"
  grep -qx "$p-h$h" "$f" || fail "host $h ran outside its namespace: $(head -1 "$f")"
  grep -qx "host=$h/3 ranks=2 addr=10.213.0.$((h + 1)) master=10.213.0.1 if=eth0" "$f" || fail "host $h placeholders: $(sed -n 2p "$f")"
  grep -q "inet 10.213.0.$((h + 1))/24" "$f" || fail "host $h has no address"
  grep -q "qdisc htb" "$f" || fail "host $h's uplink is not shaped"
  grep -qE "^10\.213\.0\.3 .*h2$" "$f" || fail "host $h cannot resolve h2: $(tail -1 "$f")"
done
check_nothing_left "$p" "$scratch/before.state"
pass "3 hosts up with their own namespace, address, shaper and host names; nothing left after"

# 2. One host fails: the others are stopped, the failing status is returned.
p="ddpsim-t$$-fail"
start=$SECONDS
"$TESTBED" --name "$p" --quiet -- bash -c '[ {host} = 1 ] && exit 3; exec sleep 300'
code=$?
[ "$code" = 3 ] || fail "expected host 1's exit status 3, got $code"
[ $((SECONDS - start)) -lt 30 ] || fail "host 0 was not stopped when host 1 failed"
check_nothing_left "$p" "$scratch/before.state"
pass "a failing host stops the others (exit 3); nothing left"

# 3. A process that escapes into the background (its own session) does not outlive the testbed.
p="ddpsim-t$$-escape"
"$TESTBED" --name "$p" --quiet -- bash -c "setsid sleep 300 < /dev/null > /dev/null 2>&1 & echo \$! > $scratch/escaped-{host}" ||
  fail "escape run exited $?"
for h in 0 1; do
  pid="$(cat "$scratch/escaped-$h")"
  ! alive "$pid" || { kill "$pid"; fail "background process $pid of host $h outlived the testbed"; }
done
check_nothing_left "$p" "$scratch/before.state"
pass "background processes are ended; nothing left"

# 4. --timeout.
p="ddpsim-t$$-timeout"
"$TESTBED" --name "$p" --quiet --timeout 2 -- sleep 300
code=$?
[ "$code" = 124 ] || fail "expected exit 124 on --timeout, got $code"
check_nothing_left "$p" "$scratch/before.state"
pass "--timeout stops the run (exit 124); nothing left"

# 4b. --timeout on a run that ends first: the caller reading our output to EOF (as a pipe or
#     Python's subprocess.run do) gets it at once, not when the watchdog's sleep would end.
#     The timeout is a number of seconds nothing else on the machine sleeps for, as pgrep looks
#     system-wide (a `sleep 120` of another job once failed this test).
p="ddpsim-t$$-quick"
start=$SECONDS
out="$("$TESTBED" --name "$p" --quiet --timeout 1187 -- echo done 2>&1 | cat)"
[ $((SECONDS - start)) -lt 30 ] || fail "--timeout 1187 held the output open for $((SECONDS - start)) s after the run ended"
grep -q "done" <<< "$out" || fail "the quick run's output: $out"
pgrep -fx "sleep 1187" > /dev/null && fail "the watchdog's sleep outlived the testbed"
check_nothing_left "$p" "$scratch/before.state"
pass "--timeout: a run that ends first returns at once, its output closed; nothing left"

# 5. Interrupted (SIGINT, as ^C) and terminated (SIGTERM) while the commands run.
for sig in INT TERM; do
  p="ddpsim-t$$-$sig"
  rm -f "$scratch"/pid-*
  "$TESTBED" --name "$p" --quiet --rate 50mbit -- bash -c "echo \$\$ > $scratch/pid-{host}; exec sleep 300" &
  tb=$!
  for _ in $(seq 1 100); do [ -s "$scratch/pid-0" ] && [ -s "$scratch/pid-1" ] && break; sleep 0.1; done
  [ -s "$scratch/pid-1" ] || fail "the hosts' commands did not start"
  kill -"$sig" "$tb"
  wait "$tb"
  code=$?
  want=$([ "$sig" = INT ] && echo 130 || echo 143)
  [ "$code" = "$want" ] || fail "expected exit $want on SIG$sig, got $code"
  for h in 0 1; do
    ! alive "$(cat "$scratch/pid-$h")" || fail "host $h's command outlived SIG$sig"
  done
  check_nothing_left "$p" "$scratch/before.state"
  pass "SIG$sig tears down (exit $code); nothing left"
done

# 6. Two testbeds at once (same default subnet, separate switches): each host pair exchanges a
#    message over TCP inside its own testbed.
cat > "$scratch/ping.py" <<'PY'
import os, socket, sys, time
host, master = int(os.environ["TESTBED_HOST"]), os.environ["TESTBED_MASTER_ADDR"]
if host == 0:
    server = socket.create_server((master, 5555))
    conn, _ = server.accept()
    conn.sendall(conn.recv(64) + b" back")
else:
    for _ in range(100):
        try:
            conn = socket.create_connection((master, 5555)); break
        except OSError:
            time.sleep(0.05)
    conn.sendall(sys.argv[1].encode())
    print(conn.recv(64).decode(), flush=True)
PY
for k in a b; do
  "$TESTBED" --name "ddpsim-t$$-par$k" --quiet --rate 100mbit --timeout 30 -- python3 "$scratch/ping.py" "hello $k" > "$scratch/par-$k.log" 2>&1 &
  eval "par_$k=\$!"
done
wait "$par_a" || fail "testbed a of two at once exited $?: $(cat "$scratch/par-a.log")"
wait "$par_b" || fail "testbed b of two at once exited $?: $(cat "$scratch/par-b.log")"
grep -qx "\[h1\] hello a back" "$scratch/par-a.log" || fail "testbed a: $(cat "$scratch/par-a.log")"
grep -qx "\[h1\] hello b back" "$scratch/par-b.log" || fail "testbed b: $(cat "$scratch/par-b.log")"
check_nothing_left "ddpsim-t$$-para" "$scratch/before.state"
check_nothing_left "ddpsim-t$$-parb" "$scratch/before.state"
pass "two testbeds at once work side by side on the same addresses and port; nothing left"
