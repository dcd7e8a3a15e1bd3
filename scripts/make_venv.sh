#!/usr/bin/env bash
# make_venv.sh VENV REQUIREMENTS: makes (or reuses) a Python venv holding exactly the pinned
# packages in REQUIREMENTS. Reuses it when it was made from the same file (a stamp inside it).
# The venv's Python is the first python3 on PATH unless DDPSIM_PYTHON names another; the pinned
# torch wheels are for CPython 3.11, and pip says so in one line for any other.
set -euo pipefail
venv="$1"
requirements="$2"
stamp="$venv/.ddpsim-requirements"
pins="$(grep -v '^#' "$requirements" | tr '\n' ' ')"
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  echo "setup: $(basename "$venv") has $pins"
  exit 0
fi
python="${DDPSIM_PYTHON:-python3}"
echo "setup: making $(basename "$venv") with $("$python" --version 2>&1) and $pins"
"$python" -m venv "$venv"
# --no-compile: pip would byte-compile every module of torch up front (a third of the CUDA wheel's
# install: 67 -> 40 s measured 2026-11-26); Python compiles the ones a process imports instead.
"$venv/bin/python" -m pip install -q --no-compile --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
