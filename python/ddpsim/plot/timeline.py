"""Gantt chart of one iteration per rank: compute phases and per-bucket all-reduces,
measured above predicted."""
import pandas as pd
from matplotlib.patches import Patch

from ddpsim.plot import output
from ddpsim.plot import style
from ddpsim.input_error import InputError
from ddpsim.trace import read_metas_and_events

PHASES = ["forward", "backward", "optimizer"]


def complete_iterations(events):
    """Iterations whose end is recorded on every rank."""
    ranks = events["rank"].nunique()
    ended = events[events["event"] == "iteration_end"].groupby("iteration")["rank"].nunique()
    return sorted(int(i) for i in ended[ended == ranks].index)


def iteration_times(events):
    """Job iteration time (slowest rank) of every complete iteration, in seconds."""
    times = {}
    for iteration in complete_iterations(events):
        it = events[events["iteration"] == iteration]
        begin = it[it["event"] == "iteration_begin"].groupby("rank")["t_ns"].min()
        end = it[it["event"] == "iteration_end"].groupby("rank")["t_ns"].max()
        times[iteration] = float((end - begin).max()) / 1e9
    return times


def pick_iteration(events, path, wanted=None):
    """`wanted`, else the complete iteration >= 1 whose time is the median (a typical one)."""
    times = iteration_times(events)
    if wanted is not None:
        if wanted not in times:
            raise InputError(path, f"iteration {wanted} complete on every rank",
                             "complete iterations " + (f"{min(times)}..{max(times)}" if times else "none"))
        return wanted
    candidates = {i: t for i, t in times.items() if i >= 1} or times
    if not candidates:
        raise InputError(path, "at least one iteration complete on every rank", "none")
    ordered = sorted(candidates, key=lambda i: (candidates[i], i))
    return ordered[(len(ordered) - 1) // 2]


def spans(events, iteration, source):
    """Every bar of the iteration: (source, rank, lane, phase, bucket, start_ms, end_ms),
    times relative to the earliest iteration_begin of any rank (so rank skew shows)."""
    it = events[events["iteration"] == iteration].sort_values(["rank", "t_ns"], kind="stable")
    t0 = it[it["event"] == "iteration_begin"]["t_ns"].min()
    rows = []

    def ms(t_ns):
        return (t_ns - t0) / 1e6

    for rank, rank_events in it.groupby("rank"):
        for phase in PHASES:
            begins = rank_events[rank_events["event"] == f"{phase}_begin"]["t_ns"].tolist()
            ends = rank_events[rank_events["event"] == f"{phase}_end"]["t_ns"].tolist()
            for begin, end in zip(begins, ends):
                rows.append((source, int(rank), "compute", phase, "", ms(begin), ms(end)))
        for _, delay in rank_events[rank_events["event"] == "delay"].iterrows():
            duration = float(delay["dur_ns"]) if delay["dur_ns"] == delay["dur_ns"] else 0.0
            rows.append((source, int(rank), "compute", "delay", "", ms(delay["t_ns"]),
                         ms(delay["t_ns"] + duration)))
        # Each allreduce_begin is matched to the next allreduce_end of the same bucket.
        open_begin = {}
        for _, event in rank_events.iterrows():
            if event["event"] == "allreduce_begin":
                open_begin[int(event["bucket"])] = event["t_ns"]
            elif event["event"] == "allreduce_end" and int(event["bucket"]) in open_begin:
                bucket = int(event["bucket"])
                rows.append((source, int(rank), "comm", "allreduce", bucket,
                             ms(open_begin.pop(bucket)), ms(event["t_ns"])))
    return pd.DataFrame(rows, columns=["source", "rank", "lane", "phase", "bucket", "start_ms",
                                       "end_ms"])


def _draw(ax, bars, title, world_size):
    lane_height = 0.36
    for _, bar in bars.iterrows():
        # Rank 0 on top; per rank the compute lane above the communication lane.
        base = (world_size - 1 - bar["rank"]) * 1.0
        y = base + (0.5 if bar["lane"] == "compute" else 0.08)
        if bar["phase"] == "allreduce":
            colour = style.BUCKET_COLOURS[int(bar["bucket"]) % len(style.BUCKET_COLOURS)]
        else:
            colour = style.PHASE_COLOURS[bar["phase"]]
        ax.broken_barh([(bar["start_ms"], max(bar["end_ms"] - bar["start_ms"], 1e-3))],
                       (y, lane_height), facecolors=colour, edgecolor="white", linewidth=0.3,
                       hatch="////" if bar["phase"] == "delay" else None)
    ticks, labels = [], []
    for rank in range(world_size):
        base = (world_size - 1 - rank) * 1.0
        ticks += [base + 0.08 + lane_height / 2, base + 0.5 + lane_height / 2]
        labels += [f"rank {rank} comm", f"rank {rank} compute"]
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels)
    ax.set_ylim(-0.05, world_size - 0.05)
    ax.tick_params(axis="y", length=0)
    ax.grid(axis="y", visible=False)
    ax.set_title(title, loc="left", pad=3)


def legend_handles(bars):
    """The legend of what `bars` draws: the phases, one entry per bucket colour drawn (a one-bucket
    job shows no odd buckets), and injected delays where there are any."""
    legend = [Patch(facecolor=style.PHASE_COLOURS[p], label=p) for p in PHASES]
    drawn = bars.loc[bars["phase"] == "allreduce", "bucket"].astype(int)
    if (drawn % 2 == 0).any():
        legend.append(Patch(facecolor=style.BUCKET_COLOURS[0], label="all-reduce (bucket 0, 2, …)"))
    if (drawn % 2 == 1).any():
        legend.append(Patch(facecolor=style.BUCKET_COLOURS[1], label="all-reduce (bucket 1, 3, …)"))
    if (bars["phase"] == "delay").any():
        legend.append(Patch(facecolor=style.PHASE_COLOURS["delay"], hatch="////", label="injected delay"))
    return legend


def plot(trace_dir, out_dir, name="timeline", predicted_dir=None, iteration=None):
    metas, events = read_metas_and_events(trace_dir)
    chosen = pick_iteration(events, trace_dir, iteration)
    panels = [("measured" if metas[min(metas)].get("source") != "simulated" else "simulated",
               trace_dir, events, chosen, len(metas))]
    if predicted_dir is not None:
        predicted_metas, predicted_events = read_metas_and_events(predicted_dir)
        predicted_iteration = (chosen if chosen in complete_iterations(predicted_events)
                               else pick_iteration(predicted_events, predicted_dir))
        panels.append(("predicted", predicted_dir, predicted_events, predicted_iteration,
                       len(predicted_metas)))

    bars = pd.concat([spans(ev, it, source) for source, _, ev, it, _ in panels], ignore_index=True)
    heights = [max(w, 1) for *_, w in panels]
    fig, axes = style.figure(width=style.TEXT_WIDTH,
                             height=0.45 + 0.42 * sum(heights) + 0.25 * len(panels),
                             nrows=len(panels), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (source, _, _, it, world_size) in zip(axes[:, 0], panels):
        _draw(ax, bars[bars["source"] == source], f"{source.capitalize()}, iteration {it}",
              world_size)
    axes[-1, 0].set_xlabel("Time since iteration start (ms)")
    legend = legend_handles(bars)
    axes[0, 0].legend(handles=legend, ncol=len(legend), loc="lower left",
                      bbox_to_anchor=(0, 1.12), borderaxespad=0, handlelength=1.2,
                      columnspacing=1.0)
    fig.tight_layout(h_pad=0.4)
    return output.save(fig, bars, out_dir, name)
