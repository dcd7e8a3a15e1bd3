"""What the bench scripts that read ddp-experiment results folders (results/NAME) share: their
command line, with --json checked before minutes of work, and summary.csv read with one-line
errors (stall_phases.InputError, which each script prints as `SCRIPT: message`, exit 2)."""
import argparse
import csv
import json
import os

from stall_phases import InputError  # noqa: F401  (re-exported: the scripts' one error type)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def arguments(doc, argv=None, json_help="also write the results here as JSON", bin_dir=False, options=()):
    """Parsed `RESULTS/NAME... [--json OUT.json] [--bin-dir DIR]` and the script's own
    `options` ((flag, add_argument keywords), ...); InputError for a --json that is a folder or
    lies in a folder that does not exist."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    for flag, keywords in options:
        parser.add_argument(flag, **keywords)
    parser.add_argument("folders", nargs="+", metavar="RESULTS/NAME", help="ddp-experiment results folders")
    parser.add_argument("--json", metavar="OUT.json", help=json_help)
    if bin_dir:
        parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "release", "bin"),
                            help="where ddp-sim and ddp-trace are (default build/release/bin)")
    args = parser.parse_args(argv)
    if args.json and (os.path.isdir(args.json) or not os.path.isdir(os.path.dirname(os.path.abspath(args.json)))):
        raise InputError(f"--json: expected a file in an existing folder, got {args.json}")
    return args


def read_summary(folder, needed):
    """summary.csv's rows; InputError when it is missing or lacks a column of `needed`."""
    path = os.path.join(folder, "summary.csv")
    try:
        with open(path, newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise InputError(f"{path}: expected a ddp-experiment summary, got {error.strerror}") from None
    if rows and not set(needed) <= set(rows[0]):
        raise InputError(f"{path}: expected columns {', '.join(sorted(needed))}, got {', '.join(rows[0])}")
    return rows


def write_json(path, document):
    """Writes `document` to --json's file (indent 1, as every bench script's); nothing without one."""
    if path:
        with open(path, "w") as handle:
            json.dump(document, handle, indent=1)
