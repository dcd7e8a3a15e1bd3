#!/usr/bin/env bash
# README command (a): set up, build, and run the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
bin=build/release/bin
echo "== ddp-trace summary of the sample trace"
"$bin/ddp-trace" summary traces/examples/sample
