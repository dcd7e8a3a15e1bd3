"""python -m ddpsim.plot: the same as the ddpsim-plot console script."""
import sys

from ddpsim.plot.cli import main

sys.exit(main(sys.argv[1:]))
