# Sourced by the allreduce_bench.py tests (allreduce_bench_*.sh PYTHON BENCH): checks the two
# arguments, skips (exit 77) when PYTHON has no torch.distributed, and sets python, bench and
# scratch (a temporary folder removed on exit).
[ $# -eq 2 ] || { echo "usage: $0 PYTHON BENCH" >&2; exit 64; }
python="$1" bench="$2"
"$python" -c "import torch.distributed" 2>/dev/null || { echo "SKIP: $python has no torch.distributed" >&2; exit 77; }
scratch="$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-bench-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
