#!/usr/bin/env bash
# python -m ddpsim.bench.python_jobs end to end on a tiny job (one family, one cap, two rounds):
# every prediction and reconstruction row is written with positive times and the table prints
# the model beside "no change" and the repeat floor; --repredict gives the rounds back from their
# files; bad flags are one line, exit 2, and nothing already written is lost.
# Usage: python_jobs_check.sh PYTHON BIN_DIR SCRATCH (PYTHON: the project's venv, with torch and
# the ddpsim package)
set -u
python=$1 bin=$2 scratch=$3
rm -rf "$scratch" && mkdir -p "$scratch"
fail() { echo "python_jobs_check: $*"; exit 1; }
# A small machine profile of this machine (fewer sizes and repeats than a user takes), and a job
# whose unprofiled step (about 2 ms) stays above its baseline's all-reduces alone even on a noisy
# ladder (with 2 repeats one slow small rung lifts the line's latency above the step, and every
# round refuses --unprofiled-iteration-ms).
"$bin/ddp-launch" --nproc-per-node 2 --master-port 0 -- "$bin/ddp-machine-profile" --out "$scratch/machine.json" \
  --sizes 4K,64K,1M,4M --overlap-size 1M --repeats 5 --warmup 2 --quiet >"$scratch/machine.txt" 2>&1 \
  || { cat "$scratch/machine.txt"; fail "the machine profile failed"; }
"$python" -m ddpsim.bench.python_jobs --out "$scratch/r" --bin "$bin" --python "$python" --families mlp --caps 5 --repeats 2 \
  --iterations 6 --machine "$scratch/machine.json" --job-args "--width 128 --depth 2 --batch-size 256" >"$scratch/out.txt" 2>&1 \
  || { cat "$scratch/out.txt" "$scratch/r/log.txt"; fail "the small run failed"; }
cat "$scratch/out.txt"
rows=$(tail -n +2 "$scratch/r/pairs.csv" | wc -l)
[ "$rows" -eq 6 ] || fail "expected 6 rows (2 rounds x cap5, slowdown, reconstruction), got $rows"
awk -F, 'NR > 1 && !($5 > 0 && $6 > 0) {bad = 1} END {exit bad}' "$scratch/r/pairs.csv" || fail "a time is not positive"
# The baseline's replay as it ran is scaled to the profiled run's own unprofiled steps
# (--unprofiled-iteration-ms): each reconstruction takes that time, to the replay's 1 %.
awk -F, '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
  $col["kind"] == "reconstruction" && !$col["unprofiled_refused"] {n++; if ((r = $col["predicted_s"] / $col["unprofiled_baseline_s"]) < 0.99 || r > 1.01) bad = 1}
  END {exit bad || n < 1}' "$scratch/r/pairs.csv" || fail "no reconstruction at the unprofiled steps' time"
grep -q "^mlp .*%" "$scratch/r/table.txt" || fail "no table row for mlp"
# Every prediction is made again without each machine parameter, and the table weighs each.
awk -F, '{sub(/\r$/, "")} NR == 1 {for (i = 1; i <= NF; i++) if ($i ~ /^without_/) w[i] = 1; next}
  {for (i in w) {n++; if (!($i > 0)) bad = 1}} END {exit bad || n < 4 * 6}' "$scratch/r/pairs.csv" \
  || fail "expected a positive prediction without each of 4 machine parameters in every row"
for key in overlap_allreduce overlap_compute sleep_resume effective_cores; do
  grep -q "^$key .*with .*without" "$scratch/r/table.txt" || fail "no table row for $key"
done
grep -q "no change" "$scratch/r/table.txt" || fail "no 'no change' column"
for bad in "--caps 25" "--caps x" "--families foo" "--repeats 1" "--slowdown 1=0.5" "--machine /nonexistent"; do
  out=$("$python" -m ddpsim.bench.python_jobs --out "$scratch/bad" $bad 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "'$bad': expected exit 2, got $rc"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "'$bad': expected one line, got: $out"
done
# A folder with results is refused, and its pairs.csv is left as it was.
before=$(md5sum < "$scratch/r/pairs.csv")
"$python" -m ddpsim.bench.python_jobs --out "$scratch/r" >/dev/null 2>&1; [ $? -eq 2 ] || fail "an --out with results was not refused"
[ "$(md5sum < "$scratch/r/pairs.csv")" = "$before" ] || fail "pairs.csv changed"
# --repredict: the same rounds predicted again from their files, nothing run; the run's own
# pairs.csv untouched, the same measured times, the same predictions from the same binary.
"$python" -m ddpsim.bench.python_jobs --out "$scratch/r" --repredict --bin "$bin" --python "$python" --families mlp \
  --caps 5 --repeats 2 --iterations 6 --machine "$scratch/machine.json" --without none >"$scratch/re.txt" 2>&1 || { cat "$scratch/re.txt"; fail "--repredict failed"; }
[ "$(md5sum < "$scratch/r/pairs.csv")" = "$before" ] || fail "--repredict changed pairs.csv"
cut -d, -f1-6 "$scratch/r/pairs.csv" > "$scratch/a.csv"; cut -d, -f1-6 "$scratch/r/pairs-repredicted.csv" > "$scratch/b.csv"
cmp -s "$scratch/a.csv" "$scratch/b.csv" || fail "--repredict did not give back the run's rows: $(diff "$scratch/a.csv" "$scratch/b.csv" | head -4)"
grep -q "^mlp .*%" "$scratch/r/table-repredicted.txt" || fail "no repredicted table"
for bad in "--caps 2" "--without foo"; do
  out=$("$python" -m ddpsim.bench.python_jobs --out "$scratch/r" --repredict --bin "$bin" --families mlp --repeats 2 \
        --iterations 6 $bad 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "--repredict '$bad': expected exit 2, got $rc"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "--repredict '$bad': expected one line, got: $out"
done
out=$("$python" -m ddpsim.bench.python_jobs --out "$scratch/bad" --repredict 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "--repredict of a folder without a run: expected one line, exit 2"
echo "python_jobs_check: ok"
