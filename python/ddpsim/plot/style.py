"""One paper style for every ddpsim figure: serif text, one-column width, Okabe-Ito colours.

Import this module before pyplot: it selects the Agg backend, so figures render without a
display (CI, ssh) and identically everywhere.
"""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg") on purpose)

# Widths of a two-column paper (ACM/IEEE/USENIX templates), in inches.
COLUMN_WIDTH = 3.33
TEXT_WIDTH = 6.9

# Okabe & Ito (2008): distinguishable with every common colour-vision deficiency and in grey.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}
# The two roles every comparison figure has.
MEASURED = OKABE_ITO["blue"]
PREDICTED = OKABE_ITO["vermillion"]
# Series colours in order (no yellow: too light on white for thin lines).
CYCLE = [OKABE_ITO[k] for k in ("blue", "vermillion", "green", "orange", "purple", "sky_blue", "black")]

# Training phases in timelines.
PHASE_COLOURS = {
    "forward": OKABE_ITO["sky_blue"],
    "backward": OKABE_ITO["blue"],
    "optimizer": OKABE_ITO["green"],
    "delay": "#BBBBBB",
}
# All-reduces alternate between two colours so that neighbouring buckets stay distinguishable.
BUCKET_COLOURS = [OKABE_ITO["vermillion"], OKABE_ITO["orange"]]

RC = {
    "font.family": "serif",
    "font.serif": ["STIXGeneral", "DejaVu Serif", "Times New Roman", "Times"],
    "mathtext.fontset": "stix",
    "font.size": 8,
    "axes.labelsize": 8,
    "axes.titlesize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.linewidth": 0.4,
    "grid.color": "#DDDDDD",
    "axes.axisbelow": True,
    "axes.prop_cycle": matplotlib.cycler(color=CYCLE),
    "lines.linewidth": 1.1,
    "lines.markersize": 3.5,
    "errorbar.capsize": 2,
    "legend.frameon": False,
    "legend.handlelength": 1.6,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    "savefig.dpi": 300,
    "savefig.bbox": "tight",
    "savefig.pad_inches": 0.02,
    # Embed TrueType (Type 42) fonts: venues reject PDFs with Type 3 fonts.
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
}


def apply():
    """Sets the paper style for every figure made after the call."""
    plt.rcParams.update(RC)


def figure(width=COLUMN_WIDTH, height=None, nrows=1, ncols=1, **kwargs):
    """A figure of paper width (golden-ratio height unless given) with the style applied."""
    apply()
    if height is None:
        height = width / 1.618
    return plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)
