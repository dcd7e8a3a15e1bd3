#!/usr/bin/env bash
# make_venv.sh VENV REQUIREMENTS [--no-compile]: makes (or reuses) a Python venv holding exactly
# the pinned packages in REQUIREMENTS. Reuses it when it was made from the same file (a stamp
# inside it).
# The venv's Python is the first python3 on PATH unless DDPSIM_PYTHON names another; the pinned
# torch wheels are for CPython 3.11, and pip says so in one line for any other.
set -euo pipefail
venv="$1"
requirements="$2"
pip_option="${3:-}"
if [ -n "$pip_option" ] && [ "$pip_option" != "--no-compile" ]; then
  echo "make_venv.sh: expected --no-compile or nothing as the third argument, got '$pip_option'" >&2
  exit 2
fi
stamp="$venv/.ddpsim-requirements"
pins="$(grep -v '^#' "$requirements" | tr '\n' ' ')"
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  echo "setup: $(basename "$venv") has $pins"
  exit 0
fi
python="${DDPSIM_PYTHON:-python3}"
echo "setup: making $(basename "$venv") with $("$python" --version 2>&1) and $pins"
"$python" -m venv "$venv"
# --no-compile skips pip's byte-compiling of every module up front (a large share of the CUDA
# wheel's install time). Only for a venv whose Python seldom runs: each process then compiles
# what it imports, every time where PYTHONDONTWRITEBYTECODE is set (so for the CPU venv, whose
# torch-importing tests run often, it would cost more than the install saves).
"$venv/bin/python" -m pip install -q $pip_option --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
