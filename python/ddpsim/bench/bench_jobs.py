"""What the benchmarks share: the checkout they run in, the check of --bin-dir and --out before
anything runs (one line naming the flag), the folder the traces go to, one job under ddp-launch
whose output goes to a log beside its trace, and the start time of the traces they make up."""
import os
import subprocess
import sys
import tempfile
import time

from ddpsim.input_error import InputError

# The checkout this package is installed from (pip install -e .): python/ddpsim/bench/ is three
# folders below it. Defaults such as build/release/bin and results/ are relative to it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

# start_time_utc of a made-up trace (traces/FORMAT.md): the Unix epoch, so the output is the same
# on every run.
SYNTHETIC_START_UTC = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(0))


def setup_error(script, bin_dir, tools, out):
    """The one-line refusal of --bin-dir (a tool missing) or --out (not a file in a folder), or None."""
    for tool in tools:
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            return f"{script}: --bin-dir: expected {tool} in {bin_dir}"
    if os.path.isdir(out) or not os.path.isdir(os.path.dirname(os.path.abspath(out))):
        return f"{script}: --out: expected a file in an existing folder, got {out}"
    return None


def run(script, cmd, **kwargs):
    """A tool's stdout; when it fails, exits with one line: SCRIPT, the command's start, its exit
    status and the last line it printed."""
    process = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if process.returncode != 0:
        last = (process.stderr or process.stdout).strip().splitlines()[-1:]
        raise SystemExit(f"{script}: {' '.join(cmd[:3])}...: exit {process.returncode}: {' '.join(last)}")
    return process.stdout


def trace_root(keep, prefix):
    """--keep's folder (made if missing), or a new temporary one."""
    root = keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(root, exist_ok=True)
    return root


def default_launcher(bin_dir, world_size):
    """ddp-launch of world_size ranks on this machine, a free port: the command a job follows."""
    return [os.path.join(bin_dir, "ddp-launch"), "--nproc-per-node", str(world_size), "--master-port", "0", "--"]


def run_logged(command, log):
    """Runs command with its output in log. Raises RuntimeError naming the log when it fails."""
    with open(log, "w") as handle:
        code = subprocess.call(command, stdout=handle, stderr=subprocess.STDOUT)
    if code != 0:
        raise RuntimeError(f"{log}: the run exited {code}")


def launch(bin_dir, trace_dir, train_args, world_size=1, launcher=None):
    """One ddp-train job tracing into trace_dir, started by launcher (default: default_launcher
    with world_size ranks); its output in trace_dir.log. Raises RuntimeError naming the log when
    the job fails."""
    run_logged((launcher or default_launcher(bin_dir, world_size)) +
               [os.path.join(bin_dir, "ddp-train"), "--trace-dir", trace_dir, *train_args], trace_dir + ".log")


def add_run_counts(parser, repetitions, iterations, each):
    """--repetitions (of `each`) and --iterations (per run), with these defaults."""
    parser.add_argument("--repetitions", type=int, default=repetitions, help=f"{each} (default {repetitions})")
    parser.add_argument("--iterations", type=int, default=iterations, help=f"iterations per run (default {iterations})")


def run_counts_error(script, args, fewest_iterations):
    """The one-line refusal of --repetitions below 1 or --iterations below fewest_iterations, or None."""
    if args.repetitions < 1 or args.iterations < fewest_iterations:
        return f"{script}: --repetitions: expected >= 1 and --iterations >= {fewest_iterations}"
    return None


def failure_status(script, body):
    """Runs body(): None when it returns; when it raises, one line on stderr and the exit status,
    2 for bad input (InputError), 1 for a failed run (RuntimeError)."""
    try:
        body()
    except InputError as error:
        print(f"{script}: {error}", file=sys.stderr)
        return 2
    except RuntimeError as error:
        print(f"{script}: {error}", file=sys.stderr)
        return 1
    return None


def add_job_arguments(parser, tools):
    """--out, --bin-dir, --keep and ddp-train's flags after --, as every such benchmark takes them."""
    parser.add_argument("--out", required=True, help="the JSON to write")
    parser.add_argument("--bin-dir", default="build/release/bin", help=f"where {tools} are")
    parser.add_argument("--keep", help="keep the traces in this folder (default: a temporary one)")
    parser.add_argument("train_args", nargs="*", help="ddp-train's workload flags, after --")
