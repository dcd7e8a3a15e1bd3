"""The statistics every figure, ddpsim.compare and the benchmarks quote: medians, quantiles and
interquartile ranges over repetitions. Standard library only, so that ddpsim.compare and the
benchmarks run under a python3 without pandas."""
import math


def quantile(values, q):
    """Linear-interpolated quantile (numpy's default, 'linear'), NaN for no values."""
    clean = sorted(float(v) for v in values if v == v)
    if not clean:
        return float("nan")
    position = (len(clean) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(clean) - 1)
    return clean[low] + (clean[high] - clean[low]) * (position - low)


def median_iqr(values):
    """(median, 25th percentile, 75th percentile, count) of the non-NaN values."""
    clean = [v for v in values if v == v]
    return quantile(clean, 0.5), quantile(clean, 0.25), quantile(clean, 0.75), len(clean)


def relative_error(predicted, measured):
    """(predicted - measured) / measured, NaN when measured is 0: the Python twin of
    trace::relative_error (traces/include/ddpsim/trace/stats.hpp), for comparisons that no
    ddp-experiment summary holds (nccl-tests figures, the bench scripts' own runs)."""
    if measured == 0:
        return float("nan")
    return (predicted - measured) / measured


def per_experiment_and_all(frame):
    """The groups of a per-family table: (experiment, its rows) for each experiment of a pandas
    DataFrame, in name order, then ("all", every row); no empty group."""
    groups = list(frame.groupby("experiment", sort=True)) + [("all", frame)]
    return [(name, group) for name, group in groups if not group.empty]
