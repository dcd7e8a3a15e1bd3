#!/usr/bin/env bash
# Regenerates every figure and table the README shows: runs each experiment spec (real jobs,
# then predictions), plots it, and copies the PNGs and the CSVs behind them to docs/figures/.
# Resumable: a spec whose results already exist only runs its missing points.
#   scripts/figures.sh [SPEC_NAME...]      (default: all four)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh
bin=build/release/bin
plot="/usr/bin/python3 analysis/ddpsim-plot"
results=results
docs=docs/figures
mkdir -p "$docs"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(bucket-sweep straggler-sweep timeout-whatif scaling)

for spec in "${specs[@]}"; do
  echo "== $spec"
  # Exit 1 means some runs failed; their rows say why and the figures still show the rest.
  "$bin/ddp-experiment" run "experiments/$spec.toml" --out "$results" --bin-dir "$bin" || [ $? -eq 1 ]
  summary="$results/$spec/summary.csv"
  figs="$results/$spec/figures"
  case "$spec" in
    timeout-whatif) $plot timeout-curve "$summary" --out "$figs" --name "$spec" ;;
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
