"""Issue 16's first targets for what-if accuracy, checked on ddp-experiment summaries, each beside
what a perfect model scores on the same runs.

The targets, over the 2-rank what-ifs (predictions whose measured run and whose baseline both ran
2 ranks on as many hosts; the world-size what-ifs are apart): at least 30 pairs, median |error|
<= 3 %, p90 |error| <= 8 %; the straggler what-ifs (points with a slowdown) median |error| <= 5 %;
the stall distributions (points with delay_dist) median KS distance <= 0.15.

A perfect model still scores the repeat floor (errors.floor_rows: one run of a configuration as the
prediction of another) over the same configurations, and the KS floor of runs that long
(errors.ks_floor). Where the floor misses a target too, the machine's noise, not the model, is
short of it. The targets are per machine (testbed, loopback): give one machine's summaries.

The issue compares each what-if with measured runs of the changed configuration "interleaved, >= 5
repetitions each, medians": configuration_table checks the same targets with a configuration's
medians as the pair (configurations.py: the median of its predictions over the repetitions against
the median of its measured runs; configurations of at least 5 repetitions). Each summary's
configurations count apart, so several sittings of a spec (one summary each) give 30 pairs."""
import pandas as pd

from ddpsim.plot import configurations
from ddpsim.stats import quantile

MIN_PAIRS = 30
MIN_REPETITIONS = 5
# (name, what it is over, limit)
TARGETS = [("median |err| %", "2-rank", 3.0), ("p90 |err| %", "2-rank", 8.0),
           ("stragglers median |err| %", "slowdown", 5.0), ("stall KS", "delay", 0.15)]


def _two_rank_predictions(summaries):
    """The 2-rank prediction rows of every summary, with an `is_slowdown` column: measured run and
    baseline (its replayed_trace, looked up among the summary's runs) both of 2 ranks on as many
    hosts."""
    frames = []
    for path, frame in summaries:
        needed = {"kind", "point", "world_size", "trace_dir", "replayed_trace"}
        if not needed <= set(frame.columns):
            continue
        runs = frame.drop_duplicates("trace_dir").set_index("trace_dir")
        hosts = frame["hosts"] if "hosts" in frame.columns else pd.Series("", index=frame.index)
        run_hosts = runs["hosts"] if "hosts" in runs.columns else pd.Series("", index=runs.index)
        rows = frame[(frame["kind"] == "prediction") & (frame["status"] == "ok")].dropna(
            subset=["measured_iter_s", "predicted_iter_s"])
        baseline_size = rows["replayed_trace"].map(runs["world_size"])
        baseline_hosts = rows["replayed_trace"].map(run_hosts)
        two_rank = ((rows["world_size"].astype(float) == 2) & (baseline_size.astype(float) == 2) &
                    (hosts[rows.index].astype(str) == baseline_hosts.astype(str)))
        rows = rows[two_rank]
        slowdown = rows["slowdown"].astype(str).str.strip() if "slowdown" in rows.columns else ""
        frames.append(rows.assign(is_slowdown=(slowdown != "") & (slowdown != "nan"), source=path))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def table(summaries, floor_pairs, distributions):
    """One row per target: limit, value, the perfect model's value here (floor), pairs, met. An
    empty frame when the summaries hold no 2-rank prediction. `floor_pairs`: errors.floor_rows;
    `distributions`: errors.distribution_table (its prediction rows' KS and KS floor)."""
    rows = _two_rank_predictions(summaries)
    if rows.empty:
        return pd.DataFrame()
    compared = set(zip(rows["experiment"], rows["point"]))
    floor = floor_pairs[[key in compared for key in zip(floor_pairs["experiment"], floor_pairs["point"])]]
    slowed = set(zip(rows.loc[rows["is_slowdown"], "experiment"], rows.loc[rows["is_slowdown"], "point"]))
    slowed_floor = floor[[key in slowed for key in zip(floor["experiment"], floor["point"])]]
    errors = rows["error_pct"].astype(float).abs()
    return _table({
        "median |err| %": (quantile(errors, 0.5), quantile(floor["error_pct"].abs(), 0.5), len(rows)),
        "p90 |err| %": (quantile(errors, 0.9), quantile(floor["error_pct"].abs(), 0.9), len(rows)),
        "stragglers median |err| %": (quantile(errors[rows["is_slowdown"]], 0.5),
                                      quantile(slowed_floor["error_pct"].abs(), 0.5), int(rows["is_slowdown"].sum())),
        "stall KS": _stall_ks(distributions),
    })


def configuration_table(summaries, distributions):
    """As table(), a configuration's medians over its repetitions (at least MIN_REPETITIONS) as
    the pair; no perfect model's score (NaN). An empty frame when no 2-rank configuration has as
    many repetitions."""
    rows = _two_rank_predictions(summaries)
    if rows.empty:
        return pd.DataFrame()
    # _two_rank_predictions keeps prediction rows that have a point; configuration_rows groups on
    # variant and point, which a groupby drops where they are NaN (empty in the CSV).
    rows = rows.assign(variant=rows["variant"].fillna("").astype(str), point=rows["point"].fillna("").astype(str))
    per = configurations.configuration_rows(rows)
    per = per[per["repetitions"] >= MIN_REPETITIONS]
    if per.empty:
        return pd.DataFrame()
    keys = ["source", "experiment", "variant", "point"]
    slowed = set(map(tuple, rows.loc[rows["is_slowdown"], keys].drop_duplicates().itertuples(index=False)))
    is_slowed = pd.Series([tuple(key) in slowed for key in per[keys].itertuples(index=False)], index=per.index)
    errors = per["error_pct"].abs()
    nan = float("nan")
    return _table({
        "median |err| %": (quantile(errors, 0.5), nan, len(per)),
        "p90 |err| %": (quantile(errors, 0.9), nan, len(per)),
        "stragglers median |err| %": (quantile(errors[is_slowed], 0.5) if is_slowed.any() else nan, nan,
                                      int(is_slowed.sum())),
        "stall KS": _stall_ks(distributions),
    })


def _stall_ks(distributions):
    """(median KS distance of the stall predictions, its floor's median, runs)."""
    stalls = distributions[distributions["kind"] == "prediction"] if not distributions.empty else distributions
    if not len(stalls):
        return float("nan"), float("nan"), 0
    return quantile(stalls["median_ks_distance"], 0.5), quantile(stalls["ks_floor"], 0.5), int(stalls["runs"].sum())


def _table(values):
    """The rows of a targets table from {target: (value, perfect model's value, pairs)}."""
    out = []
    for name, over, limit in TARGETS:
        value, floor_value, pairs = values[name]
        out.append({"target": name, "over": over, "limit": limit, "value": value, "perfect_model": floor_value,
                    "pairs": pairs, "met": bool(value == value and value <= limit and
                                                (over != "2-rank" or pairs >= MIN_PAIRS))})
    return pd.DataFrame(out)


def verdict(row):
    """In words: met, or missed and whether a perfect model would miss it here too."""
    if row["value"] != row["value"]:
        return "none in these summaries"
    if row["over"] == "2-rank" and row["pairs"] < MIN_PAIRS and row["value"] <= row["limit"]:
        return f"met, but fewer than {MIN_PAIRS} pairs"
    if row["met"]:
        return "met"
    floor = row["perfect_model"]
    return "missed; a perfect model would too" if floor == floor and floor > row["limit"] else "missed"


PER_PAIR_TITLE = ("Against issue 16's first targets (2-rank what-ifs; world-size what-ifs apart; a perfect model: "
                  "the repeat floor of the same configurations, the KS floor of runs that long):")
PER_CONFIGURATION_TITLE = (f"Against issue 16's first targets, per configuration (each 2-rank configuration of "
                           f">= {MIN_REPETITIONS} interleaved repetitions, in each summary: the median of its "
                           f"predictions against the median of its measured runs; the stall KS as above):")


def format_table(frame, title=PER_PAIR_TITLE):
    def number(value, target):
        if value != value:
            return "-"
        return f"{value:.3f}" if target == "stall KS" else f"{value:.1f}"
    lines = [title,
             f"{'target':<27} {'pairs':>5} {'limit':>6} {'value':>7} {'perfect model':>14}  verdict"]
    for _, row in frame.iterrows():
        lines.append(f"{row['target']:<27} {row['pairs']:>5d} {number(row['limit'], row['target']):>6} "
                     f"{number(row['value'], row['target']):>7} {number(row['perfect_model'], row['target']):>14}  "
                     f"{verdict(row)}")
    return "\n".join(lines)
