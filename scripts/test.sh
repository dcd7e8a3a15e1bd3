#!/usr/bin/env bash
# README command (b): set up, build, and run every test through ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
ctest --preset release -j "$(nproc)" "$@"
