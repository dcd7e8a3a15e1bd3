#!/usr/bin/env bash
# Without root the testbed refuses in one line naming what is missing, exit 2.
source "$(dirname "$0")/common.sh" "$1"
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) missing to drop root" >&2; exit $SKIP; }
  run_unprivileged=(setpriv --reuid=65534 --regid=65534 --clear-groups)
else
  run_unprivileged=()
fi
chmod o+rx "$scratch"
"${run_unprivileged[@]}" "$TESTBED" --hosts 2 -- true > "$scratch/out" 2>&1
code=$?
cat "$scratch/out"
[ "$code" = 2 ] || fail "expected exit 2 without root, got $code"
[ "$(wc -l < "$scratch/out")" = 1 ] || fail "expected one line, got $(wc -l < "$scratch/out")"
grep -q "needs root" "$scratch/out" || fail "expected the line to name root"
pass "refused without root: $(cat "$scratch/out")"
