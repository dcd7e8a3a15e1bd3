"""How fast, and in how much memory, does `ddp-trace import --kineto` read a large profile?

Writes a synthetic standard torch.profiler trace of about --mb megabytes (a Gloo DDP rank:
ProfilerStep#N, 4 all-reduce launches and their gloo:all_reduce worker spans per step, and
filler cpu_ops as a real profile is mostly made of), imports it under /usr/bin/time and writes
{"file_mb", "events", "steps", "seconds", "max_rss_mb"} to --out (and prints it).

    python -m ddpsim.bench.kineto_import_scale --mb 100 --out results/bench/kineto-import-100mb.json
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from ddpsim.bench.bench_jobs import ROOT


def write_trace(path, target_bytes):
    events = 0
    steps = 0
    with open(path, "w") as f:
        f.write('{"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": 0, '
                '"world_size": 2}, "traceEvents": [\n')
        first = True
        while f.tell() < target_bytes:
            t0 = 10000.0 + 100000.0 * steps
            lines = [{"ph": "X", "name": f"ProfilerStep#{steps + 1}", "cat": "user_annotation",
                      "pid": 1, "tid": 1, "ts": t0, "dur": 99000.0}]
            for k in range(400):  # forward/backward/optimizer operators
                lines.append({"ph": "X", "name": "aten::addmm", "cat": "cpu_op", "pid": 1, "tid": 1,
                              "ts": t0 + 10 + 200 * k, "dur": 150.0,
                              "args": {"External id": events + k, "Input Dims": [[32, 1024], [1024, 1024]],
                                       "Input type": ["float", "float"]}})
            for b in range(4):
                t = t0 + 50000 + 5000 * b
                lines.append({"ph": "X", "name": "c10d::allreduce_", "cat": "cpu_op", "pid": 1,
                              "tid": 1, "ts": t, "dur": 20.0,
                              "args": {"Input Dims": [[[1048576]], []], "Input type": ["TensorList", ""]}})
                lines.append({"ph": "X", "name": "gloo:all_reduce", "cat": "user_annotation", "pid": 1,
                              "tid": 2, "ts": t + 30, "dur": 3000.0,
                              "args": {"Input Dims": [[1048576]], "Input type": ["float"]}})
            for line in lines:
                f.write(("" if first else ",\n") + json.dumps(line))
                first = False
            events += len(lines)
            steps += 1
        f.write("\n]}\n")
    return events, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ddp-trace", default=os.path.join(ROOT, "build", "release", "bin", "ddp-trace"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rank-0.json")
        events, steps = write_trace(path, int(args.mb * 1e6))
        size = os.path.getsize(path)
        p = subprocess.run(["/usr/bin/time", "-v", args.ddp_trace, "import", "--kineto",
                            os.path.join(tmp, "out"), path], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"kineto_import_scale.py: ddp-trace import failed: {p.stderr.strip()[-300:]}")
        wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+(?:\.\d+)?)$", p.stderr, re.M)
        rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
        seconds = (float(wall.group(1) or 0) * 60 + float(wall.group(2))) if wall else None
        result = {"file_mb": size / 1e6, "events": events, "steps": steps, "seconds": seconds,
                  "max_rss_mb": int(rss.group(1)) / 1024 if rss else None}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
