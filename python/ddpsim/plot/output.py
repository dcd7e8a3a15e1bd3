"""Writing a figure: PDF (for the paper), PNG (for a quick look) and the CSV of exactly the
numbers it plots (so every number in the paper can be traced back)."""
import os

import matplotlib.pyplot as plt


def _write_all(out_dir, name, writers):
    """Each (ext, write(path)) goes to a hidden temporary file first; only when every one is
    written are they renamed into place, so a failure (a full disk) leaves no partial figure."""
    os.makedirs(out_dir, exist_ok=True)
    paths, temps = [], []
    try:
        for ext, write in writers:
            path = os.path.join(out_dir, f"{name}.{ext}")
            temp = os.path.join(out_dir, f".{name}.{ext}.tmp")
            temps.append(temp)
            write(temp)
            paths.append(path)
        for temp, path in zip(temps, paths):
            os.replace(temp, path)
    finally:
        for temp in temps:
            if os.path.exists(temp):
                os.remove(temp)
    return paths


def save(fig, plotted, out_dir, name):
    """Writes OUT_DIR/NAME.{pdf,png,csv}; returns the three paths."""
    try:
        return _write_all(out_dir, name, [
            ("pdf", lambda path: fig.savefig(path, format="pdf")),
            ("png", lambda path: fig.savefig(path, format="png")),
            ("csv", lambda path: plotted.to_csv(path, index=False)),
        ])
    finally:
        plt.close(fig)


def save_table(table, out_dir, name):
    return _write_all(out_dir, name, [("csv", lambda path: table.to_csv(path, index=False))])[0]
