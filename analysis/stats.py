"""The statistics every figure quotes: medians and interquartile ranges over repetitions."""
import numpy as np


def quantile(values, q):
    """Linear-interpolated quantile (numpy's default), NaN for no values."""
    values = np.asarray([v for v in values if v == v], dtype=float)
    return float(np.quantile(values, q)) if values.size else float("nan")


def median_iqr(values):
    """(median, 25th percentile, 75th percentile, count) of the non-NaN values."""
    clean = [v for v in values if v == v]
    return quantile(clean, 0.5), quantile(clean, 0.25), quantile(clean, 0.75), len(clean)
