"""Benchmarks that need Python, each run as `python -m ddpsim.bench.NAME` (see its --help).

allreduce_bench imports nothing of ddpsim, so a CUDA machine's torch can also run it by path.
"""
