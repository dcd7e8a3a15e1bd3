"""Two models' predictions of the same measured runs, compared pair by pair.

  ddpsim-plot models A/summary.csv B/summary.csv [--out DIR] [--name NAME]

B is A's results predicted again with another [predict] (ddp-experiment run --repredict on a
copy), so every prediction of A (experiment, point, rep, variant) has its twin in B, compared
with the same measured run. The difference |err_B| - |err_A| is then the models' alone: the
run-to-run drift that separates two experiments' runs (the repeat floor, errors.py) cancels.

Per experiment and over all: pairs, the median |err| of A and of B, the median of
|err_B| - |err_A|, how many pairs B predicts closer and farther, and the exact two-sided
Wilcoxon signed-rank and sign tests of "equally accurate" (compare.py). Writes NAME.csv (the
table) and NAME-pairs.csv (one row per pair). A prediction without its twin, or a twin compared with another measurement, is
bad input (one line naming the file)."""
import pandas as pd

from ddpsim.plot import output
from ddpsim.compare import sign_test_p, wilcoxon_p
from ddpsim.inputs import InputError, read_summary

KEY = ["experiment", "point", "rep", "variant"]
REQUIRED = KEY + ["kind", "status", "measured_iter_s", "predicted_iter_s", "error_pct"]


def predictions(path):
    """The compared prediction rows of one summary: KEY, measured_iter_s, error_pct."""
    frame = read_summary(path, REQUIRED)
    frame = frame[(frame["kind"] == "prediction") & (frame["status"] == "ok")]
    frame = frame.dropna(subset=["measured_iter_s", "error_pct"])
    if frame.empty:
        raise InputError(path, "prediction rows (kind = prediction) with an error_pct", "none")
    frame = frame.assign(rep=frame["rep"].astype(str))
    duplicated = frame.duplicated(KEY)
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise InputError(path, "one row per experiment, point, rep and variant",
                         "two for " + "/".join(str(row[k]) for k in KEY))
    return frame[KEY + ["measured_iter_s", "error_pct"]]


def pairs(path_a, path_b):
    """One row per prediction in both: KEY, measured_iter_s, error_a_pct, error_b_pct."""
    a, b = predictions(path_a), predictions(path_b)
    joined = a.merge(b, on=KEY, how="outer", suffixes=("_a", "_b"), indicator=True)
    for side, path, other in (("left_only", path_b, path_a), ("right_only", path_a, path_b)):
        missing = joined[joined["_merge"] == side]
        if not missing.empty:
            row = missing.iloc[0]
            raise InputError(path, f"the twin of every prediction in {other}",
                             f"none for {'/'.join(str(row[k]) for k in KEY)} "
                             f"({len(missing)} missing)")
    measured_a, measured_b = joined["measured_iter_s_a"], joined["measured_iter_s_b"]
    different = (measured_a - measured_b).abs() > 1e-9 * measured_a.abs()
    if different.any():
        row = joined[different].iloc[0]
        raise InputError(path_b, f"the measurements of {path_a} (ddp-experiment run --repredict)",
                         f"{row['measured_iter_s_b']} s/it for {'/'.join(str(row[k]) for k in KEY)}, "
                         f"not {row['measured_iter_s_a']}")
    return pd.DataFrame({**{k: joined[k] for k in KEY}, "measured_iter_s": measured_a,
                         "error_a_pct": joined["error_pct_a"], "error_b_pct": joined["error_pct_b"]})


def _stats(experiment, group):
    abs_a, abs_b = group["error_a_pct"].abs(), group["error_b_pct"].abs()
    differences = list(abs_b - abs_a)
    unequal = sum(1 for d in differences if d != 0)
    return {"experiment": experiment, "pairs": len(group),
            "median_abs_a_pct": abs_a.median(), "median_abs_b_pct": abs_b.median(),
            "median_difference_pct": float(pd.Series(differences).median()),
            "b_closer": sum(1 for d in differences if d < 0),
            "b_farther": sum(1 for d in differences if d > 0),
            "wilcoxon_p": wilcoxon_p(differences),
            "sign_test_p": sign_test_p(differences),
            "min_attainable_p": min(1.0, 2 * 0.5 ** unequal)}


def table(paired):
    rows = [_stats(experiment, group) for experiment, group in paired.groupby("experiment", sort=True)]
    if paired["experiment"].nunique() > 1:
        rows.append(_stats("all", paired))
    return pd.DataFrame(rows)


def format_table(summary, name_a, name_b):
    lines = [f"Two models on the same measured runs: A = {name_a}, B = {name_b}",
             f"{'experiment':24s} {'pairs':>5s}  {'A median |err| %':>16s}  {'B median |err| %':>16s}"
             f"  {'median B-A':>10s}  {'B closer':>8s}  {'wilcoxon p':>10s}  {'sign p':>7s}"]
    for _, row in summary.iterrows():
        note = "" if row["min_attainable_p"] < 0.05 else "  (too few pairs for p < 0.05)"
        lines.append(f"{row['experiment']:24s} {row['pairs']:5d}  {row['median_abs_a_pct']:16.2f}"
                     f"  {row['median_abs_b_pct']:16.2f}  {row['median_difference_pct']:+10.2f}"
                     f"  {row['b_closer']:3d}/{row['pairs']:<4d}  {row['wilcoxon_p']:10.3g}"
                     f"  {row['sign_test_p']:7.3g}{note}")
    return "\n".join(lines)


def plot(path_a, path_b, out_dir, name="models"):
    paired = pairs(path_a, path_b)
    summary = table(paired)
    print(format_table(summary, path_a, path_b))
    return [output.save_table(summary, out_dir, name), output.save_table(paired, out_dir, name + "-pairs")]
