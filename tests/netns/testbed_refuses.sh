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
# The unprivileged user may not reach the checkout (a clone under a 0700 `mktemp -d` folder:
# "Permission denied", exit 126): it runs the same script, copied into the scratch folder.
cp "$TESTBED" "$scratch/testbed.sh" && chmod 755 "$scratch/testbed.sh"
"${run_unprivileged[@]}" "$scratch/testbed.sh" --hosts 2 -- true > "$scratch/out" 2>&1
code=$?
cat "$scratch/out"
[ "$code" = 2 ] || fail "expected exit 2 without root, got $code"
[ "$(wc -l < "$scratch/out")" = 1 ] || fail "expected one line, got $(wc -l < "$scratch/out")"
grep -q "needs root" "$scratch/out" || fail "expected the line to name root"
pass "refused without root: $(cat "$scratch/out")"

# Root in name only (a user namespace): namespaces cannot be made; the refusal names that.
if unshare -Ur true 2>/dev/null; then
  unshare -Ur "$TESTBED" --hosts 2 -- true > "$scratch/out2" 2>&1
  code=$?
  cat "$scratch/out2"
  [ "$code" = 2 ] || fail "expected exit 2 without the right to make namespaces, got $code"
  [ "$(wc -l < "$scratch/out2")" = 1 ] || fail "expected one line, got $(wc -l < "$scratch/out2")"
  grep -q "cannot create network namespaces" "$scratch/out2" || fail "expected the line to name network namespaces"
  pass "refused without the right to make namespaces: $(cat "$scratch/out2")"
else
  echo "(user namespaces unavailable here: the no-namespaces refusal is not exercised)"
fi
