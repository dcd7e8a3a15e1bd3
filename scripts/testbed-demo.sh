#!/usr/bin/env bash
# A small cluster on one machine, as root: build if needed, bring up 2 hosts (network
# namespaces) behind RATE links (default 200mbit), run a real 2-host DDP job (ddp-launch
# --nnodes 2 in each host), tear everything down, then check that ddp-sim calibrate recovers
# the link rate from the trace. Leaves the trace in demo-out/testbed.
#   scripts/testbed-demo.sh [RATE]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rate="${1:-200mbit}"
bin=build/release/bin
scripts/testbed.sh --check --rate "$rate" || exit 2
[ -x "$bin/ddp-train" ] && [ -x "$bin/ddp-sim" ] || bash scripts/build.sh
out=demo-out/testbed
rm -rf "$out" && mkdir -p demo-out
name="ddpsim-demo-$$"

echo "== 2 hosts at $rate: ddp-launch --nnodes 2 + ddp-train (MLP, 4.2 MB of gradients, one bucket)"
scripts/testbed.sh --name "$name" --hosts 2 --rate "$rate" -- \
  "$bin/ddp-launch" --nnodes {hosts} --node-rank {host} --master-addr {master} --master-port 29500 -- \
  "$bin/ddp-train" --model mlp --width 512 --depth 4 --batch-size 32 --iterations 20 \
  --bucket-cap-mb 25 --first-bucket-cap-mb 25 --threads 1 --seed 1 --trace-dir "$out"
left="$(ip netns list | grep -F "$name-" || true)"
[ -z "$left" ] || { echo "testbed-demo: left behind: $left" >&2; exit 1; }
echo "== torn down: no $name-* namespace left"

echo "== the trace"
"$bin/ddp-trace" validate "$out"
"$bin/ddp-trace" summary "$out"
echo "== the network, calibrated from the trace"
"$bin/ddp-sim" calibrate "$out" --json "$out.calibration.json"
python3 -c "
import json, re
told = int(re.fullmatch(r'(\d+)mbit', '$rate')[1]) * 1e6 / 8 if '$rate'.endswith('mbit') else None
beta = json.load(open('$out.calibration.json'))['beta_bytes_per_s']
print(f'calibrated beta {beta/1e6:.2f} MB/s' + (f' = {100*beta/told:.1f} % of the {told/1e6:.2f} MB/s the link was given (TCP/IP headers take ~4.5 %)' if told else ''))"
