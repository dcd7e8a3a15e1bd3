"""The what-if error of every pair, per experiment, against the machine's repeat floor: one dot
per prediction (signed error of the predicted median iteration time), the experiment's
reconstructions beside it in grey, and behind both the band a perfect model's errors would fill
(± the p90 |error| of one run of a configuration as the prediction of another, errors.floor_rows).
Dots outside the band are what the model gets wrong beyond the machine's noise."""
import numpy as np
import pandas as pd

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.stats import quantile


def _short(experiment):
    return experiment[len("whatif-"):] if experiment.startswith("whatif-") else experiment


def plot(errors, floor, out_dir, name):
    """errors: errors.error_rows; floor: errors.floor_rows. Writes NAME.{pdf,png,csv}."""
    predictions = errors[errors["kind"] == "prediction"]
    experiments = sorted(set(predictions["experiment"]))
    if not experiments:
        return []
    fig, ax = style.figure(width=max(style.COLUMN_WIDTH, 0.55 * len(experiments) + 1))
    plotted = []
    for x, experiment in enumerate(experiments):
        spread = floor.loc[floor["experiment"] == experiment, "error_pct"].abs()
        if len(spread):
            band = quantile(spread, 0.9)
            ax.fill_between([x - 0.3, x + 0.45], -band, band, color="#E4E4E4", linewidth=0,
                            label="repeat floor (p90 |err|)" if x == 0 else None, zorder=0)
            plotted += [{"experiment": experiment, "kind": "floor_p90", "point": "", "x": x, "error_pct": s * band}
                        for s in (-1, 1)]
        for kind, offset, colour, size in (("prediction", 0.0, style.PREDICTED, 9),
                                           ("reconstruction", 0.3, "#9A9A9A", 5)):
            group = errors[(errors["experiment"] == experiment) & (errors["kind"] == kind)]
            if group.empty:
                continue
            # Spread the dots over a fixed width in row order (deterministic, no random jitter).
            xs = x + offset + np.linspace(-0.12, 0.12, len(group)) * (kind == "prediction")
            ax.scatter(xs, group["error_pct"], s=size, color=colour, linewidths=0, zorder=2,
                       label=kind if x == 0 else None)
            plotted += [{"experiment": experiment, "kind": kind, "point": p, "x": float(px), "error_pct": e}
                        for p, px, e in zip(group["point"], xs, group["error_pct"])]
    ax.axhline(0, color="black", linewidth=0.5, zorder=1)
    ax.set_xticks(range(len(experiments)))
    ax.set_xticklabels([_short(e) for e in experiments], rotation=30, ha="right")
    ax.set_ylabel("Error of predicted median iteration (%)")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3)
    return output.save(fig, pd.DataFrame(plotted), out_dir, name)
