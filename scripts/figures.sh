#!/usr/bin/env bash
# Regenerates every figure and table docs/getting-started.md and docs/testbed.md show: runs each experiment spec (real jobs,
# then predictions), plots it, and copies the PNGs and the CSVs behind them to docs/figures/.
# Resumable: a spec whose results already exist only runs its missing points.
#   scripts/figures.sh [SPEC_NAME...]      (default: all four)
#   scripts/figures.sh testbed             (root: the testbed's what-if sweep and calibration,
#                                           ~30 min measuring; docs/figures/testbed-*)
#   scripts/figures.sh whatif              (root: the nine what-if specs, ~17 min measuring;
#                                           docs/figures/whatif-errors.*: every what-if spec's errors;
#                                           whatif-{testbed,loopback}.txt: each machine's tables and targets)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
bin=build/release/bin
plot=.venv/bin/ddpsim-plot  # scripts/setup.sh installs it
results=results
docs=docs/figures
mkdir -p "$docs"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(bucket-sweep straggler-sweep timeout-whatif scaling)

if [ "${specs[*]}" = testbed ]; then
  # Communication-bound what-ifs on 2 testbed hosts at 200 Mbit/s (ddpsim.bench.validate_whatif
  # --testbed: predictions from each repetition's baseline), and the fitted network bandwidth
  # against the rates the testbed was told.
  .venv/bin/python -m ddpsim.bench.validate_whatif --testbed 200mbit --reps 5 --resume --out "$results/whatif-testbed"
  bash scripts/testbed_calibration.sh --rates 100,200,400,800 --caps 1,25 --out "$results/testbed-calibration"
  $plot whatif "$results/whatif-testbed/whatif.csv" --family bucket --mode per-iteration/trace \
    --out "$results/whatif-testbed/figures" --name testbed-bucket-sweep
  $plot calibration "$results/testbed-calibration/calibration.csv" \
    --out "$results/testbed-calibration/figures" --name testbed-calibration
  cp "$results"/whatif-testbed/figures/testbed-bucket-sweep.{png,csv} \
     "$results"/testbed-calibration/figures/testbed-calibration.{png,csv} "$docs/"
  echo "figures in $docs/"
  exit 0
fi

if [ "${specs[*]}" = whatif ]; then
  # Every what-if predicted from its repetition's baseline, against measured runs of it.
  whatifs=()
  for f in testbed-bucket testbed-slowdown testbed-world testbed-delay bucket slowdown delay world world-3; do
    "$bin/ddp-experiment" run "experiments/whatif-$f.toml" --out "$results" --bin-dir "$bin" || [ $? -eq 1 ]
    whatifs+=("$results/whatif-$f/summary.csv")
  done
  $plot errors "${whatifs[@]}" --out "$results/whatif-errors" --name whatif-errors | tee "$docs/whatif-errors.txt"
  # Issue 16's targets hold per machine: the testbed's four specs apart from loopback's five.
  $plot errors "${whatifs[@]:0:4}" --out "$results/whatif-errors" --name whatif-testbed > "$docs/whatif-testbed.txt"
  $plot errors "${whatifs[@]:4}" --out "$results/whatif-errors" --name whatif-loopback > "$docs/whatif-loopback.txt"
  cp "$results"/whatif-errors/whatif-errors-pairs.png "$docs/whatif-errors.png"
  cp "$results"/whatif-errors/whatif-errors-pairs.csv "$docs/whatif-errors.csv"
  echo "figures in $docs/"
  exit 0
fi

for spec in "${specs[@]}"; do
  echo "== $spec"
  # Exit 1 means some runs failed; their rows say why and the figures still show the rest.
  "$bin/ddp-experiment" run "experiments/$spec.toml" --out "$results" --bin-dir "$bin" || [ $? -eq 1 ]
  summary="$results/$spec/summary.csv"
  figs="$results/$spec/figures"
  case "$spec" in
    timeout-whatif) $plot timeout-curve "$summary" --out "$figs" --name "$spec"
                    $plot timeouts "$summary" --out "$figs" ;;  # die/survive and time to failure
    scaling)        $plot scaling "$summary" --out "$figs" --name "$spec" ;;
    *)              $plot predicted-vs-measured "$summary" --out "$figs" --name "$spec" ;;
  esac
  cp "$figs/$spec.png" "$figs/$spec.csv" "$docs/"
done

# One measured-above-predicted timeline, from the first bucket-sweep trace that has both.
if [ -d "$results/bucket-sweep/traces" ]; then
  trace=$(ls -d "$results"/bucket-sweep/traces/*-rep0 | head -n 1)
  pred="$results/bucket-sweep/predictions/$(basename "$trace")"
  if [ -d "$pred" ]; then
    $plot timeline "$trace" --predicted "$pred" --out "$results/bucket-sweep/figures" --name timeline
    cp "$results/bucket-sweep/figures/timeline.png" "$results/bucket-sweep/figures/timeline.csv" "$docs/"
  fi
fi

summaries=()
for spec in "${specs[@]}"; do summaries+=("$results/$spec/summary.csv"); done
$plot errors "${summaries[@]}" --out "$results/errors" --name errors | tee "$docs/errors.txt"
echo "figures in $docs/"
