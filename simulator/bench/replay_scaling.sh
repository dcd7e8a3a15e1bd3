#!/usr/bin/env bash
# Wall time and peak RSS of `ddp-sim replay` for one iteration of a 25-bucket model at
# growing world sizes, per all-reduce model and platform (issue #18: W = 65,536 in <= 30 s
# and <= 4 GB, linear in W). Each (W, model, platform) runs REPS times, interleaved
# (noisy machine); the JSON has every repetition and the medians.
# Usage: simulator/bench/replay_scaling.sh [BUILD_DIR] [WORLD_SIZES...]
#   env: REPS (3), MODELS ("ring-agg tree"), PLATFORMS ("star two-level"; also dgx-v100,
#        dgx-a100, dgx-h100: the --cluster presets), OUT (JSON file,
#        default replay_scaling.json)
# Peak RSS is /usr/bin/time's "Maximum resident set size": the largest single process, here
# the replay's forked child or the parent that expands its result to W ranks (never both at
# their peaks: the parent grows after the child has exited).
set -euo pipefail
build="${1:-build/release}"
shift || true
worlds=("${@:-1024 4096 16384 65536}")
read -r -a worlds <<<"${worlds[*]}"
read -r -a models <<<"${MODELS:-ring-agg tree}"
read -r -a platforms <<<"${PLATFORMS:-star two-level}"
reps="${REPS:-3}"
out="${OUT:-replay_scaling.json}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$(dirname "$0")/../../.venv/bin/python" -m ddpsim.bench.make_synthetic_trace "$work/trace" --buckets 25

# star: 10 Gbit/s, 20 us per rank pair. two-level: 8 ranks per node on 100 GB/s, 2 us
# links; each node's uplink 100 Gbit/s (12.5 GB/s), 5 us. dgx-*: ddp-sim's named clusters.
platform_flags() {
  case "$1" in
    star) echo "--platform star" ;;
    two-level) echo "--platform two-level --gpus-per-node 8 --intra-bandwidth 100e9 --intra-latency 2e-6 \
      --inter-bandwidth 12.5e9 --inter-latency 5e-6" ;;
    dgx-*) echo "--cluster $1" ;;
  esac
}

: >"$work/rows"
printf "%-6s %-9s %-9s %4s %10s %12s %14s %10s\n" W model platform rep wall_s messages iteration_s rss_mb
for world in "${worlds[@]}"; do
  for rep in $(seq 1 "$reps"); do
    for platform in "${platforms[@]}"; do
      for model in "${models[@]}"; do
        json="$work/$model-$platform-$world-$rep.json"
        # shellcheck disable=SC2046
        /usr/bin/time -v -o "$work/time" "$build/bin/ddp-sim" replay "$work/trace" --world-size "$world" \
          --iterations 1 --allreduce "$model" --bandwidth 1.25e9 --latency 20e-6 $(platform_flags "$platform") \
          --json "$json" >/dev/null
        /usr/bin/python3 - "$json" "$work/time" "$world" "$model" "$platform" "$rep" >>"$work/rows" <<'PY'
import json, re, sys
report = json.load(open(sys.argv[1]))
timing = open(sys.argv[2]).read()
clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", timing).group(1)
wall = sum(float(part) * 60 ** i for i, part in enumerate(reversed(clock.split(":"))))
rss_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", timing).group(1))
print(json.dumps({"world_size": int(sys.argv[3]), "allreduce": sys.argv[4], "platform": sys.argv[5],
                  "rep": int(sys.argv[6]), "wall_s": wall, "peak_rss_mb": rss_kb / 1024,
                  "messages": report["simulation"]["messages"],
                  "iteration_s": report["predicted"]["median_iteration_s"]}))
PY
        tail -n 1 "$work/rows" | /usr/bin/python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
print("%-6d %-9s %-9s %4d %10.2f %12d %14.6f %10.0f" % (r["world_size"], r["allreduce"], r["platform"], r["rep"],
      r["wall_s"], r["messages"], r["iteration_s"], r["peak_rss_mb"]))'
      done
    done
  done
done

/usr/bin/python3 - "$work/rows" "$out" "$reps" <<'PY'
import json, statistics, subprocess, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
groups = {}
for row in rows:
    groups.setdefault((row["world_size"], row["allreduce"], row["platform"]), []).append(row)
summary = []
for (world, model, platform), runs in sorted(groups.items()):
    summary.append({"world_size": world, "allreduce": model, "platform": platform, "reps": len(runs),
                    "median_wall_s": statistics.median(r["wall_s"] for r in runs),
                    "median_peak_rss_mb": statistics.median(r["peak_rss_mb"] for r in runs),
                    "iteration_s": runs[0]["iteration_s"], "messages": runs[0]["messages"]})
try:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
except OSError:
    sha = ""
json.dump({"benchmark": "replay_scaling", "git_sha": sha, "buckets": 25, "iterations": 1,
           "summary": summary, "runs": rows}, open(sys.argv[2], "w"), indent=1)
print(f"wrote {sys.argv[2]}")
for s in summary:
    print(f"W={s['world_size']:<6} {s['allreduce']:<9} {s['platform']:<9} median wall {s['median_wall_s']:.2f} s, "
          f"peak RSS {s['median_peak_rss_mb']:.0f} MB, iteration {s['iteration_s']:.6f} s")
PY
