# Shared by the netns tests (sourced). Usage: source common.sh TESTBED_SCRIPT
# A test that cannot make a testbed here (not root, no namespaces, no tc shaper) exits 77,
# which CMake registers as SKIP_RETURN_CODE, after printing the testbed's one-line reason.
set -uo pipefail
TESTBED="$1"
SKIP=77

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "PASS: $*"; }

skip_unless_testbed() {
  local reason
  if ! reason="$("$TESTBED" --check 2>&1)"; then
    echo "SKIP: ${reason}" >&2
    exit $SKIP
  fi
}

scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-netns-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT

# True while PID runs (a zombie waiting for its reaper has ended: it holds no namespace).
alive() {
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# What a testbed could leave in the caller's namespace and in the namespace registry.
# Namespaces are compared by this test's own prefix; links and qdiscs of the caller's
# namespace must match exactly (the testbed never creates anything there).
root_state() {
  echo "== links"; ip -o link show | sed -E 's/^[0-9]+: ([^:@]+).*/\1/' | sort
  echo "== qdiscs"; tc qdisc show | sed -E 's/qdisc ([a-z_]+) [0-9a-f]+:/qdisc \1/' | sort
}
# Fails unless no namespace named PREFIX-* remains and the caller's namespace is as before.
check_nothing_left() {  # prefix, before-file
  local prefix="$1" before="$2"
  local left
  left="$(ip netns list | awk '{print $1}' | grep -F -- "$prefix-" || true)"
  [ -z "$left" ] || fail "namespaces left behind: $left"
  ! ls /run/netns/ 2>/dev/null | grep -qF -- "$prefix-" || fail "namespace files left in /run/netns: $(ls /run/netns | grep -F -- "$prefix-")"
  ! ls /etc/netns/ 2>/dev/null | grep -qF -- "$prefix-" || fail "hosts files left in /etc/netns: $(ls /etc/netns | grep -F -- "$prefix-")"
  root_state > "$scratch/after.state"
  diff -u "$before" "$scratch/after.state" >&2 || fail "the caller's network namespace changed (links/qdiscs above)"
}
