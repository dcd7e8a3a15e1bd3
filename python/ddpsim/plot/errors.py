"""Error tables of ddp-experiment summaries, what-if predictions first and reconstructions apart.

A *prediction* (summary.csv kind = prediction) replays a baseline trace at a configuration that
trace did not run ([predict] baseline) and is compared with the measured run of that
configuration. A *reconstruction* replays a trace at its own configuration: it checks the model,
it predicts nothing, and is never reported as a prediction. Summaries written before the kind
column existed hold only reconstructions (rows of the measured configuration, variant "").

Per kind, per experiment and variant, then over all: runs, median / p90 / max |error| of the
predicted median iteration time, the median signed error, and the fraction of runs whose
measured median lies in the prediction's bootstrap interval (where the replays had one), and in
that interval widened by the baseline's run-to-run spread (summary column inside_run_to_run:
ddp-experiment replays each baseline with --repeats naming its other repetitions; summaries
written before that column have none). Then the predictions per configuration
(configurations.py: the median of its predictions against the median of its measured runs). Rows
of points with delay_dist add a distribution table (KS distance with a perfect model's KS floor, p50/p90/p99 errors). Then the
repeat floor: one measured run of a configuration taken as the "prediction" of another run of
that configuration, the error a perfect model would still show on this machine. Then the bias
(bias.py): the median signed error over repetitions with an exact interval, which says whether
the model errs one way beyond the machine's noise where |error| cannot. Plus issue 16's targets
checked on the 2-rank what-ifs beside a perfect model's score, per pair and per configuration (targets.py). Plus the CDF of
the absolute errors, predictions solid, reconstructions dashed, and every prediction's signed
error against the repeat floor's band (error_pairs.py)."""
import numpy as np
import pandas as pd

from ddpsim.plot import bias
from ddpsim.plot import configurations
from ddpsim.plot import error_pairs
from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.plot import targets
from ddpsim.inputs import InputError, read_summary
from ddpsim.stats import per_experiment_and_all, quantile

REQUIRED = ["experiment", "variant", "status", "measured_iter_s", "predicted_iter_s", "error_pct"]
KINDS = ["prediction", "reconstruction"]
TITLES = {
    "prediction": "What-if predictions (each configuration predicted from its repetition's baseline trace)",
    "reconstruction": "Reconstruction (each trace replayed at its own configuration; not a prediction)",
}
# Columns this table reads that inputs.NUMERIC_COLUMNS does not convert.
EXTRA_NUMERIC = ["predicted_lo_s", "predicted_hi_s", "inside", "ks_distance", "p50_error_pct",
                 "p90_error_pct", "p99_error_pct", "measured_iterations", "inside_run_to_run"]


def _numbers(frame, column, path):
    if column not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    text = frame[column].astype(str).str.strip()
    values = pd.to_numeric(text.where(text != ""), errors="coerce")
    bad = values.isna() & (text != "") & (text != "nan")
    if bad.any():
        raise InputError(path, f"a number in column '{column}'", repr(text[bad].iloc[0]))
    return values


def read_summaries(paths):
    """Every summary read once (validated): [(path, frame)], for error_rows and floor_rows."""
    return [(path, read_summary(path, REQUIRED)) for path in paths]


def error_rows(summaries):
    """Per compared row of every summary: its source (the summary's path) and rep (NaN where the
    summary has none), experiment, kind, variant, point, signed and absolute error in %, the
    measured and predicted iteration times, inside (1/0/NaN) and the distribution columns."""
    frames = []
    for path, frame in summaries:
        if "kind" in frame.columns:
            kind = frame["kind"].astype(str)
        else:  # before kinds: the measured configuration's replay is a reconstruction
            kind = pd.Series(np.where(frame["variant"] == "", "reconstruction", "whatif"), index=frame.index)
        frame = frame.assign(kind=kind)
        frame = frame[frame["kind"].isin(KINDS)].dropna(subset=["measured_iter_s", "predicted_iter_s"])
        frame = frame[frame["measured_iter_s"] > 0]
        if frame.empty:
            raise InputError(path, "rows with both measured_iter_s and predicted_iter_s", "none")
        # The runner's error_pct (trace::relative_error, ddpsim/trace/stats.hpp, from the two
        # columns as written): read, not recomputed, so there is one definition of the error.
        error = frame["error_pct"]
        rows = pd.DataFrame({"source": path, "rep": _numbers(frame, "rep", path),
                             "experiment": frame["experiment"], "kind": frame["kind"],
                             "variant": frame["variant"],
                             "point": frame["point"] if "point" in frame.columns else "",
                             "error_pct": error, "abs_error_pct": error.abs(),
                             "measured_iter_s": frame["measured_iter_s"],
                             "predicted_iter_s": frame["predicted_iter_s"]})
        for column in EXTRA_NUMERIC:
            rows[column] = _numbers(frame, column, path)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)


def floor_rows(summaries):
    """The repeat floor: per experiment, for every configuration (point) measured in two or more
    repetitions, the error of run s as the prediction of run r (r != s, ordered pairs) in %:
    100 (m_s - m_r) / m_r, as trace::relative_error writes a prediction's. A prediction from one
    run's trace is compared with another run, so the machine's run-to-run drift limits it to this
    (for a perfect model). Summaries without a point or rep column give none."""
    frames = []
    for _, frame in summaries:
        if "point" not in frame.columns or "rep" not in frame.columns:
            continue
        frame = frame[(frame["status"] == "ok") & (frame["measured_iter_s"] > 0)]
        runs = frame.drop_duplicates(["experiment", "point", "rep"])
        rows = []
        for (experiment, point), group in runs.groupby(["experiment", "point"], sort=False):
            measured = [float(m) for m in group["measured_iter_s"]]
            rows += [{"experiment": experiment, "point": point,
                      "error_pct": 100 * (m_s - m_r) / m_r}
                     for r, m_r in enumerate(measured) for s, m_s in enumerate(measured) if r != s]
        frames.append(pd.DataFrame(rows, columns=["experiment", "point", "error_pct"]))
    if not frames:
        return pd.DataFrame(columns=["experiment", "point", "error_pct"])
    return pd.concat(frames, ignore_index=True)


def floor_table(floor):
    """Per experiment, then "all": pairs, median and p90 |error| of the repeat floor."""
    rows = []
    for experiment, group in per_experiment_and_all(floor):
        errors = group["error_pct"].abs()
        rows.append({"experiment": experiment, "pairs": len(group),
                     "configurations": group["point"].nunique() if experiment != "all" else
                     len(group.drop_duplicates(["experiment", "point"])),
                     "median_abs_error_pct": quantile(errors, 0.5),
                     "p90_abs_error_pct": quantile(errors, 0.9)})
    return pd.DataFrame(rows)


def format_floor(frame):
    lines = ["Repeat floor (a run of a configuration as the prediction of another run of it: what a "
             "perfect model would score here):",
             f"{'experiment':<24} {'configurations':>14} {'pairs':>6} {'median |err| %':>15} {'p90 |err| %':>12}"]
    for _, row in frame.iterrows():
        lines.append(f"{row['experiment']:<24} {row['configurations']:>14d} {row['pairs']:>6d} "
                     f"{_percent(row['median_abs_error_pct']):>15} {_percent(row['p90_abs_error_pct']):>12}")
    return "\n".join(lines)


def _stats(kind, experiment, variant, group):
    inside = group["inside"].dropna()
    widened = group["inside_run_to_run"].dropna()
    return {"kind": kind, "experiment": experiment, "variant": variant, "runs": len(group),
            "median_abs_error_pct": quantile(group["abs_error_pct"], 0.5),
            "p90_abs_error_pct": quantile(group["abs_error_pct"], 0.9),
            "max_abs_error_pct": float(group["abs_error_pct"].max()),
            "median_error_pct": quantile(group["error_pct"], 0.5),
            "inside_fraction": float(inside.mean()) if len(inside) else float("nan"),
            "runs_with_interval": len(inside),
            "inside_run_to_run_fraction": float(widened.mean()) if len(widened) else float("nan"),
            "runs_with_run_to_run": len(widened)}


def family_table(errors, summarise):
    """Predictions first, then reconstructions: summarise(kind, experiment, variant, rows) per
    experiment and variant, and over "all"."""
    rows = []
    for kind in KINDS:
        selected = errors[errors["kind"] == kind]
        if selected.empty:
            continue
        for (experiment, variant), group in selected.groupby(["experiment", "variant"], sort=True):
            rows.append(summarise(kind, experiment, variant, group))
        rows.append(summarise(kind, "all", "", selected))
    return pd.DataFrame(rows)


def table(errors):
    """The error table: runs, |error| quantiles, signed median, interval hits per family."""
    return family_table(errors, _stats)


def ks_floor(n, draws=2000, seed=0):
    """The median Kolmogorov-Smirnov distance of n independent draws from a continuous
    distribution against that distribution: what a perfect model scores against one run of n
    iterations. Distribution-free, so drawn from the uniform (Monte Carlo, fixed seed)."""
    n = int(n)
    if n < 1:
        return float("nan")
    u = np.sort(np.random.default_rng(seed).random((draws, n)), axis=1)
    i = np.arange(1, n + 1)
    d = np.maximum((i / n - u).max(axis=1), (u - (i - 1) / n).max(axis=1))
    return float(np.median(d))


def distribution_table(errors):
    """Rows with a distribution comparison (delay_dist points): medians per kind and experiment,
    and the KS floor of the runs' length (the runner compares iterations >= 1, so n is
    measured_iterations - 1)."""
    with_ks = errors.dropna(subset=["ks_distance"])
    rows = []
    for (kind, experiment), group in with_ks.groupby(["kind", "experiment"], sort=False):
        lengths = group["measured_iterations"].dropna()
        rows.append({"kind": kind, "experiment": experiment, "runs": len(group),
                     **{f"median_{c}": quantile(group[c], 0.5)
                        for c in ("ks_distance", "p50_error_pct", "p90_error_pct", "p99_error_pct")},
                     # A reconstruction replays its run's own stalls: no draws, no floor.
                     "ks_floor": ks_floor(quantile(lengths, 0.5) - 1)
                     if len(lengths) and kind == "prediction" else float("nan")})
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame["order"] = frame["kind"].map(KINDS.index)
        frame = frame.sort_values(["order", "experiment"], kind="stable").drop(columns="order")
    return frame


def _percent(value, signed=False):
    if value != value:
        return "-"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def format_table(frame):
    lines = []
    for kind in KINDS:
        lines.append(TITLES[kind] + ":")
        selected = frame[frame["kind"] == kind] if not frame.empty else frame
        if selected.empty:
            lines.append("  none in these summaries" +
                         (" (a spec needs [predict] baseline)" if kind == "prediction" else ""))
            lines.append("")
            continue
        lines.append(f"{'experiment':<24} {'variant':<22} {'runs':>5} {'median |err| %':>15} "
                     f"{'p90 |err| %':>12} {'max |err| %':>12} {'median err %':>13} {'in interval':>12} "
                     f"{'+ run-to-run':>13}")
        for _, row in selected.iterrows():
            interval = ("-" if row["runs_with_interval"] == 0 else
                        f"{row['inside_fraction'] * 100:.0f} % of {row['runs_with_interval']}")
            widened = ("-" if row["runs_with_run_to_run"] == 0 else
                       f"{row['inside_run_to_run_fraction'] * 100:.0f} % of {row['runs_with_run_to_run']}")
            lines.append(f"{row['experiment']:<24} {row['variant']:<22} {row['runs']:>5d} "
                         f"{_percent(row['median_abs_error_pct']):>15} {_percent(row['p90_abs_error_pct']):>12} "
                         f"{_percent(row['max_abs_error_pct']):>12} {_percent(row['median_error_pct'], True):>13} "
                         f"{interval:>12} {widened:>13}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def format_distribution(frame):
    lines = ["Iteration-time distributions (delay_dist points; iterations >= 1, medians over runs; KS floor: "
             "a perfect model's median KS against one run that long):",
             f"{'kind':<15} {'experiment':<24} {'runs':>5} {'KS':>6} {'KS floor':>9} {'p50 err %':>10} {'p90 err %':>10} "
             f"{'p99 err %':>10}"]
    for _, row in frame.iterrows():
        lines.append(f"{row['kind']:<15} {row['experiment']:<24} {row['runs']:>5d} {row['median_ks_distance']:>6.3f} "
                     f"{'-' if row['ks_floor'] != row['ks_floor'] else format(row['ks_floor'], '.3f'):>9} "
                     f"{_percent(row['median_p50_error_pct'], True):>10} {_percent(row['median_p90_error_pct'], True):>10} "
                     f"{_percent(row['median_p99_error_pct'], True):>10}")
    return "\n".join(lines)


def plot(paths, out_dir, name="errors"):
    summaries = read_summaries(paths)
    errors = error_rows(summaries)
    summary = table(errors)
    print(format_table(summary))
    table_path = output.save_table(summary, out_dir, name)
    written = [table_path]
    per_configuration = configurations.table(configurations.configuration_rows(errors))
    if not per_configuration.empty:
        print()
        print(configurations.format_table(per_configuration))
        written.append(output.save_table(per_configuration, out_dir, name + "-configurations"))
    distributions = distribution_table(errors)
    if not distributions.empty:
        print()
        print(format_distribution(distributions))
        written.append(output.save_table(distributions, out_dir, name + "-distribution"))
    pairs = floor_rows(summaries)
    floor = floor_table(pairs)
    if not floor.empty:
        print()
        print(format_floor(floor))
        written.append(output.save_table(floor, out_dir, name + "-floor"))
    # Rows without a repetition number (summaries before the rep column) have no bias.
    biases = family_table(errors.dropna(subset=["rep"]), bias.summarise)
    if not biases.empty:
        print()
        print(bias.format_table(biases))
        written.append(output.save_table(biases, out_dir, name + "-bias"))
    goals = targets.table(summaries, pairs, distributions)
    if not goals.empty:
        print()
        print(targets.format_table(goals))
        written.append(output.save_table(goals, out_dir, name + "-targets"))
    goals = targets.configuration_table(summaries, distributions)
    if not goals.empty:
        print()
        print(targets.format_table(goals, targets.PER_CONFIGURATION_TITLE))
        written.append(output.save_table(goals, out_dir, name + "-targets-configurations"))
    # CDF of |error| per experiment and kind: the figure's CSV holds its exact steps.
    fig, ax = style.figure()
    steps = []
    for index, ((experiment, kind), group) in enumerate(
            errors.groupby(["experiment", "kind"], sort=True)):
        values = np.sort(group["abs_error_pct"].to_numpy())
        fraction = np.arange(1, len(values) + 1) / len(values)
        ax.step(np.concatenate([[0], values]), np.concatenate([[0], fraction]), where="post",
                color=style.CYCLE[index % len(style.CYCLE)],
                linestyle="-" if kind == "prediction" else "--", label=f"{experiment} ({kind})")
        steps += [{"experiment": experiment, "kind": kind, "abs_error_pct": v, "cumulative_fraction": f}
                  for v, f in zip(values, fraction)]
    ax.set_xlabel("Absolute error of predicted iteration time (%)")
    ax.set_ylabel("Fraction of runs")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.legend(loc="lower right")
    paths_out = output.save(fig, pd.DataFrame(steps), out_dir, name + "-cdf")
    # Every prediction's signed error against the repeat floor's band (error_pairs.py).
    return written + paths_out + error_pairs.plot(errors, pairs, out_dir, name + "-pairs")
