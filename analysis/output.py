"""Writing a figure: PDF (for the paper), PNG (for a quick look) and the CSV of exactly the
numbers it plots (so every number in the paper can be traced back)."""
import os

import matplotlib.pyplot as plt


def save(fig, plotted, out_dir, name):
    """Writes OUT_DIR/NAME.{pdf,png,csv}; returns the three paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = [os.path.join(out_dir, f"{name}.{ext}") for ext in ("pdf", "png", "csv")]
    fig.savefig(paths[0])
    fig.savefig(paths[1])
    plt.close(fig)
    plotted.to_csv(paths[2], index=False)
    return paths


def save_table(table, out_dir, name):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.csv")
    table.to_csv(path, index=False)
    return path
