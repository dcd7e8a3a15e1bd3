"""Issue #19: ddpsim-plot's bad-input table. One row: arguments -> exit status and a substring of
the one-line error on stderr; nothing is written into --out. Every subcommand, every numeric flag
with 0, a negative, NaN/inf, a huge and a non-numeric value, every input missing, a folder where
a file is expected and the reverse, and an --out that cannot be a folder. We run as root, for
whom permission bits stop nothing: "unwritable" is a path under a regular file or under /proc.

The rows call ddpsim-plot's main() in this process: a process of its own spends ~1 s importing
matplotlib and pandas, which made this table 90 s of CI. A few rows also run as a process, to
show the script's entry point answers exactly as main() does."""
import os
import subprocess
import sys
import tempfile
import unittest

import fixtures


SUBCOMMANDS = ["predicted-vs-measured", "timeline", "timeout-curve", "timeouts", "scaling", "errors", "advise",
               "whatif", "calibration", "machine"]
# A numeric flag, its subcommand and input, and its accepted values among the bad ones tried.
# A huge --iteration is an integer: "expected iteration N complete on every rank" (row below).
NUMERIC_FLAGS = [("timeline", "{trace}", "--iteration", ["0", "99999999999999999999"]),
                 ("timeout-curve", "{summary}", "--from-timeout", []),
                 ("timeouts", "{summary}", "--from-timeout", []),
                 ("scaling", "{summary}", "--from-world-size", [])]
BAD_NUMBERS = ["0", "-3", "nan", "inf", "-inf", "99999999999999999999", "1e300", "abc", ""]


def rows():
    """(args, status, substring of the error, output that must not exist)."""
    table = [
        ([], 2, "ddpsim-plot: the following arguments are required: COMMAND", None),
        (["frobnicate", "{file}"], 2, "invalid choice: 'frobnicate'", None),
    ]
    for sub in SUBCOMMANDS:
        table += [
            ([sub], 2, "the following arguments are required: input", None),
            ([sub, "{summary}", "--bogus", "--out", "{out}"], 2, "unrecognized arguments: --bogus", "{out}"),
            ([sub, "{none}", "--out", "{out}"], 2, "{none}: expected", "{out}"),
            ([sub, "{file}/x", "--out", "{out}"], 2, "{file}/x: expected", "{out}"),
        ]
        if sub == "timeline":  # wants a folder: a file is the wrong kind
            table.append(([sub, "{file}", "--out", "{out}"], 2, "{file}: expected a trace directory", "{out}"))
        else:  # wants a file: a folder is the wrong kind
            table.append(([sub, "{dir}", "--out", "{out}"], 2, "{dir}: expected", "{out}"))
    for sub, given, flag, valid in NUMERIC_FLAGS:
        for value in BAD_NUMBERS:
            if value in valid:
                continue
            table.append(([sub, given, flag, value, "--out", "{out}"], 2, flag, "{out}"))
    # Valid numbers that are not in the data.
    table += [
        (["timeline", "{trace}", "--iteration", "99", "--out", "{out}"], 2, "expected iteration 99 complete", "{out}"),
        (["timeout-curve", "{summary}", "--from-timeout", "7", "--out", "{out}"], 2,
         "expected --from-timeout among the measured timeouts", "{out}"),
        (["timeouts", "{summary}", "--from-timeout", "7", "--out", "{out}"], 2,
         "expected --from-timeout among the measured timeouts", "{out}"),
        (["scaling", "{summary}", "--from-world-size", "7", "--out", "{out}"], 2,
         "expected --from-world-size among the measured world sizes", "{out}"),
        (["timeline", "{trace}", "--predicted", "{none}", "--out", "{out}"], 2, "{none}: expected a trace directory", "{out}"),
        (["timeline", "{trace}", "--predicted", "{file}", "--out", "{out}"], 2, "{file}: expected a trace directory", "{out}"),
        (["timeline", "{trace}", "--predicted", "{dir}", "--out", "{out}"], 2, "{dir}: expected rank-R.meta.json", "{out}"),
        (["errors", "{summary}", "{none}", "--out", "{out}"], 2, "{none}: expected", "{out}"),
        (["predicted-vs-measured", "{summary}", "--x", "color", "--out", "{out}"], 2, "expected a sweep column", "{out}"),
        (["whatif", "{summary}", "--out", "{out}"], 2, "{summary}: expected columns", "{out}"),
        (["calibration", "{summary}", "--out", "{out}"], 2, "{summary}: expected columns", "{out}"),
        (["advise", "{summary}", "--out", "{out}"], 2, "{summary}: expected JSON", "{out}"),
        (["advise", "{deep}", "--out", "{out}"], 2, "{deep}: expected JSON", "{out}"),
        (["machine", "{summary}", "--out", "{out}"], 2, "{summary}: expected a JSON machine profile", "{out}"),
        (["machine", "{deep}", "--out", "{out}"], 2, "{deep}: expected a JSON machine profile", "{out}"),
        # --out that cannot be a folder: a file, under a file, under /proc.
        (["timeline", "{trace}", "--out", "{file}"], 2, "{file}: expected a readable input file and a writable --out folder", None),
        (["timeline", "{trace}", "--out", "{file}/figs"], 2, "{file}/figs: expected a readable input file and a writable --out folder", "{file}/figs"),
        (["errors", "{summary}", "--out", "/proc/version/figs"], 2, "/proc/version/figs: expected a readable input file", None),
    ]
    return table


class BadInput(unittest.TestCase):
    def test_every_row_is_one_line_with_its_status_and_writes_nothing(self):
        table = rows()
        with tempfile.TemporaryDirectory(prefix="ddpsim-plot-bad-") as tmp:
            names = {"{file}": os.path.join(tmp, "afile"), "{dir}": os.path.join(tmp, "adir"),
                     "{none}": os.path.join(tmp, "missing"), "{trace}": os.path.join(tmp, "trace"),
                     "{summary}": os.path.join(tmp, "summary.csv"), "{out}": os.path.join(tmp, "out"),
                     "{deep}": os.path.join(tmp, "deep.json")}
            with open(names["{file}"], "w") as handle:
                handle.write("not what any subcommand reads\n")
            with open(names["{deep}"], "w") as handle:  # past Python's recursion limit
                handle.write("[" * 100000 + "]" * 100000)
            os.mkdir(names["{dir}"])
            fixtures.write_trace(names["{trace}"], world_size=2, iterations=5)
            fixtures.write_summary(names["{summary}"], [
                fixtures.summary_row(point=f"p{w}", world_size=w, timeout_s=2, bucket_cap_mb=c,
                                     measured_iter_s=0.1, predicted_iter_s=0.11,
                                     predicted_timeout_s=2)
                for w in (1, 2) for c in (1, 5)])

            def expand(text):
                for name, value in names.items():
                    text = text.replace(name, value)
                return text

            plot = fixtures.load_plot()
            as_process = {0, 2, len(table) - 1}  # argparse's refusal, an input's, an --out's
            for index, (args, status, error, must_not_exist) in enumerate(table):
                argv = [expand(a) for a in args]
                with self.subTest(argv=argv):
                    result = fixtures.run_plot(plot, argv)
                    self.assertEqual(result.returncode, status, result.stderr)
                    self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                    self.assertIn(expand(error), result.stderr)
                    if must_not_exist:
                        self.assertFalse(os.path.exists(expand(must_not_exist)), expand(must_not_exist))
                    if index in as_process:
                        process = subprocess.run([sys.executable, *fixtures.PLOT, *argv], capture_output=True,
                                                 text=True, timeout=120)
                        self.assertEqual((process.returncode, process.stderr), (result.returncode, result.stderr))
        print(f"ddpsim-plot: {len(table)} bad inputs tested", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
