"""ddpsim's Python side: traces as pandas DataFrames, the figures, comparisons and benchmarks.

    import ddpsim
    trace = ddpsim.read_trace("traces/examples/convnet-2rank")
    trace.iterations.groupby("rank").duration_ms.median()
    machine = ddpsim.read_machine_profile("machine.json")   # ddp-machine-profile --out
    machine.ladder.set_index("bytes").one_median_s

Modules: ddpsim.trace (read_trace), ddpsim.machine (read_machine_profile), ddpsim.inputs
(ddp-experiment summaries), ddpsim.stats, ddpsim.compare (ddpsim-compare), ddpsim.plot
(ddpsim-plot) and ddpsim.bench (benchmarks, each `python -m ddpsim.bench.NAME`). Only
ddpsim.trace, ddpsim.machine, ddpsim.inputs and ddpsim.plot need pandas (and matplotlib); the
rest is standard library, so `import ddpsim` works under any python3.
"""
from ddpsim.input_error import InputError

__all__ = ["InputError", "MachineProfile", "Trace", "read_machine_profile", "read_trace"]


def __getattr__(name):
    # read_trace, read_machine_profile and their classes import pandas: only when asked for, so that the standard-library
    # modules (compare, stats, the benchmarks) run under a python3 without it.
    if name in ("read_trace", "Trace"):
        from ddpsim import trace
        return getattr(trace, name)
    if name in ("read_machine_profile", "MachineProfile"):
        from ddpsim import machine
        return getattr(machine, name)
    raise AttributeError(f"module 'ddpsim' has no attribute {name!r}")
