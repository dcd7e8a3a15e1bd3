"""ddpsim-plot: paper figures from ddp-experiment summaries and ddpsim traces.

  ddpsim-plot predicted-vs-measured SUMMARY.csv [--x COLUMN]
  ddpsim-plot timeline TRACE_DIR [--predicted PRED_DIR] [--iteration N]
  ddpsim-plot timeout-curve SUMMARY.csv [--from-timeout S]
  ddpsim-plot timeouts SUMMARY.csv [--from-timeout S]      (a table: die/survive, time to failure)
  ddpsim-plot scaling SUMMARY.csv [--from-world-size W]
  ddpsim-plot cluster-scaling REPLAYS.csv --nccl-tests CHECK.csv
  ddpsim-plot errors SUMMARY.csv [SUMMARY.csv ...]
  ddpsim-plot models A/SUMMARY.csv B/SUMMARY.csv          (two models on the same runs: tables)
  ddpsim-plot advise ADVICE.json
  ddpsim-plot whatif WHATIF.csv [--family bucket] [--mode per-iteration/trace]
  ddpsim-plot calibration CALIBRATION.csv
  ddpsim-plot machine MACHINE.json [MACHINE.json ...]      (machine profiles side by side)

Each writes NAME.pdf, NAME.png and NAME.csv (exactly the plotted numbers) into --out
(default: a figures/ folder next to the input). Bad input: one line on stderr, exit 2.
Installed as the ddpsim-plot console script (pip install -e .); also python -m ddpsim.plot.
"""
import argparse
import math
import os
import sys

from ddpsim.input_error import InputError


def default_out(path):
    """figures/ beside the input; for a trace in results/NAME/traces/, results/NAME/figures/."""
    parent = os.path.dirname(os.path.abspath(path.rstrip("/")))
    if os.path.basename(parent) == "traces":
        parent = os.path.dirname(parent)
    return os.path.join(parent, "figures")


class Parser(argparse.ArgumentParser):
    """argparse with every usage error on one line (exit 2), as the other ddpsim tools."""

    def error(self, message):
        print(f"{self.prog}: {message} (see ddpsim-plot --help)", file=sys.stderr)
        sys.exit(2)


def _number(kind, text, low, strict):
    """A finite `kind` (int/float) above `low` (strictly with `strict`); argparse names the flag."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < low or (strict and value == low):
        what = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {what} {'>' if strict else '>='} {low}, got {text!r}")
    return value


def positive_float(text):
    return _number(float, text, 0, True)


def positive_int(text):
    return _number(int, text, 0, True)


def non_negative_int(text):
    return _number(int, text, 0, False)


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    parser = Parser(prog="ddpsim-plot", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, help_text, input_help):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("input", nargs={"errors": "+", "models": 2, "machine": "+"}.get(name), help=input_help)
        sub.add_argument("--out", help="output folder (default: figures/ next to the input)")
        default_name = name + ("-TRACE (the trace folder's name)" if name == "timeline" else "")
        sub.add_argument("--name", help=f"output file stem (default: {default_name})")
        return sub

    pvm = command("predicted-vs-measured", "throughput per sweep point, measured vs predicted",
                  "summary.csv from ddp-experiment")
    pvm.add_argument("--x", help="sweep column on x (default: the one that varies)")
    timeline = command("timeline", "one iteration per rank: compute phases and all-reduces",
                       "measured trace directory")
    timeline.add_argument("--predicted", help="predicted trace directory, drawn below")
    timeline.add_argument("--iteration", type=non_negative_int, help="iteration (default: the median one)")
    curve = command("timeout-curve", "failure probability vs process-group timeout",
                    "summary.csv from ddp-experiment (timeout-whatif)")
    curve.add_argument("--from-timeout", type=positive_float,
                       help="plot predictions replayed from runs measured at this timeout "
                            "(default: the largest measured)")
    timeouts = command("timeouts", "timeout what-ifs vs measured runs: die/survive, where, time to failure",
                       "summary.csv from ddp-experiment (timeout-whatif)")
    timeouts.add_argument("--from-timeout", type=positive_float,
                          help="predict from the runs measured at this timeout (default: the largest)")
    scaling = command("scaling", "throughput vs world size, measured and predicted",
                      "summary.csv from ddp-experiment (scaling)")
    scaling.add_argument("--from-world-size", type=positive_int,
                         help="plot predictions made from traces of this world size "
                              "(default: the largest measured)")
    cluster = command("cluster-scaling", "a GPU job scaled out on a --cluster preset, and the all-reduce "
                      "model against published nccl-tests runs",
                      "CSV from python -m ddpsim.bench.cluster_scaling")
    cluster.add_argument("--nccl-tests", required=True,
                         help="CSV from python -m ddpsim.bench.nccl_tests_check")
    command("errors", "error tables: what-if predictions (kind = prediction), then reconstructions apart, the "
            "predictions per configuration (medians over repetitions), the repeat floor, each family's bias "
            "with an exact interval, and issue 16's targets beside a perfect model's score (+ CDF figure)",
            "summary.csv file(s) from ddp-experiment")
    command("models", "two models' predictions of the same measured runs (ddp-experiment run --repredict), "
            "pair by pair, with paired tests", "A/summary.csv B/summary.csv")
    command("advise", "bucket cap search and per-rank straggler cost, with intervals",
            "JSON from ddp-sim advise --json")
    whatif = command("whatif", "one what-if family: measured vs predicted from the baseline, per configuration",
                     "whatif.csv from python -m ddpsim.bench.validate_whatif")
    whatif.add_argument("--family", default="bucket", help="family to plot (default: bucket)")
    whatif.add_argument("--mode", default="per-iteration/trace",
                        help="compute mode/network method to plot (default: per-iteration/trace)")
    command("calibration", "fitted network bandwidth vs the link rate the testbed was told",
            "calibration.csv from scripts/testbed_calibration.sh")
    command("machine", "machine profiles side by side: the all-reduce ladder, and the all-reduce alone and while "
            "the ranks compute, against the message size", "JSON file(s) from ddp-machine-profile --out")

    args = parser.parse_args(argv)
    first_input = args.input[0] if isinstance(args.input, list) else args.input
    out = args.out or default_out(first_input)
    if args.name is None:
        args.name = args.command
        if args.command == "timeline":
            args.name += "-" + os.path.basename(os.path.abspath(first_input.rstrip("/")))
    try:
        if args.command == "predicted-vs-measured":
            from ddpsim.plot import predicted_vs_measured
            paths = predicted_vs_measured.plot(args.input, out, args.name, args.x)
        elif args.command == "timeline":
            from ddpsim.plot import timeline as timeline_module
            paths = timeline_module.plot(args.input, out, args.name, args.predicted, args.iteration)
        elif args.command == "timeout-curve":
            from ddpsim.plot import timeout_curve
            paths = timeout_curve.plot(args.input, out, args.name, args.from_timeout)
        elif args.command == "timeouts":
            from ddpsim.plot import timeouts as timeouts_module
            paths = timeouts_module.plot(args.input, out, args.name, args.from_timeout)
        elif args.command == "scaling":
            from ddpsim.plot import scaling as scaling_module
            paths = scaling_module.plot(args.input, out, args.name, args.from_world_size)
        elif args.command == "cluster-scaling":
            from ddpsim.plot import cluster_scaling
            paths = cluster_scaling.plot(args.input, args.nccl_tests, out, args.name)
        elif args.command == "advise":
            from ddpsim.plot import advise
            paths = advise.plot(args.input, out, args.name)
        elif args.command == "whatif":
            from ddpsim.plot import whatif as whatif_module
            paths = whatif_module.plot(args.input, out, args.name, args.family, args.mode)
        elif args.command == "models":
            from ddpsim.plot import models
            paths = models.plot(args.input[0], args.input[1], out, args.name)
        elif args.command == "calibration":
            from ddpsim.plot import calibration
            paths = calibration.plot(args.input, out, args.name)
        elif args.command == "machine":
            from ddpsim.plot import machine
            paths = machine.plot(args.input, out, args.name)
        else:
            from ddpsim.plot import errors
            paths = errors.plot(args.input, out, args.name)
    except InputError as error:
        print(f"ddpsim-plot: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        # An input that is a folder (or under a file), an --out that cannot be a folder: the
        # path and why, on one line; output.save leaves no partial figure.
        where = error.filename if error.filename is not None else out
        print(f"ddpsim-plot: {where}: expected a readable input file and a writable --out folder, "
              f"got {error.strerror or error}", file=sys.stderr)
        return 2
    for path in paths:
        print(path, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
