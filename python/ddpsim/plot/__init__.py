"""The paper figures of ddpsim-plot, one module per figure (plot(...) writes PDF, PNG and CSV).

Importing the package selects matplotlib's Agg backend (ddpsim.plot.style) before anything
imports pyplot, so figures render without a display and identically everywhere.
"""
from ddpsim.plot import style  # noqa: F401
