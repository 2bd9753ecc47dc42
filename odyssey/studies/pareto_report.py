"""A Pareto front as files: CSV rows, a JSON document and a two-panel figure, and back
(pure: the functions return or read text, data or bytes; the command line writes them).

The figure plots latency (cycles, log scale) against DSP slices and against BRAM18K
blocks, one colour per dataflow, with the platform's usable budget as a dashed line and
the points that are non-dominated in each panel's two objectives joined by a staircase.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from odyssey.plots import MARKERS
from odyssey.tune.pareto import ParetoResult, nondominated

#: CSV columns, in order
CSV_COLUMNS = ("design", "dataflow", "ordering", "tiling", "latency_cycles", "throughput_gops",
               "dsp", "bram18k", "uram", "offchip_bytes", "feasible")
_PANELS = (("dsp", "DSP slices"), ("bram18k", "BRAM18K blocks"))


def front_csv(result: ParetoResult) -> str:
    """One row per front point; the tiling as ``T_i1=64 T_j1=32 ...`` in one column."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for p in result.points:
        w.writerow([p.design_id, p.dataflow, p.ordering,
                    " ".join(f"{k}={v}" for k, v in p.tiling.items()),
                    _exact(p.latency_cycles), f"{p.throughput_gops:.3f}", _exact(p.dsp),
                    _exact(p.bram18k), _exact(p.uram), _exact(p.offchip_bytes),
                    str(p.feasible).lower()])
    return buf.getvalue()


def _exact(x: float) -> str:
    """A model value that reads back exactly: an integer as one, else the shortest round trip
    (latencies can be fractional: a reader's time per visit)."""
    return f"{x:.0f}" if float(x).is_integer() else repr(float(x))


def front_json(result: ParetoResult, meta: Mapping[str, Any]) -> dict[str, Any]:
    """``meta`` (kernel, sizes, command ...) followed by :meth:`ParetoResult.to_json`."""
    return {**meta, **result.to_json()}


def front_title(result: ParetoResult, meta: Mapping[str, Any]) -> str:
    """The figure's title: kernel, sizes, platform, front size, method, hypervolume."""
    size = " x ".join(f"{k}={v}" for k, v in meta["sizes"].items())
    return (f"{Path(meta['kernel']).name} {size} on {result.platform}: {len(result.points)} "
            f"non-dominated points ({result.method}, "
            f"{'exact' if result.exact else f'{result.evaluations:,} evaluations'}), "
            f"hypervolume {result.hypervolume:.4f}")


def plot_front(result: ParetoResult, *, title: str) -> Figure:
    """Latency against DSP and against BRAM18K, coloured by dataflow (see the module doc)."""
    fig = Figure(figsize=(12, 5), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    dataflows = sorted({p.dataflow for p in result.points}, key=lambda d: (d.count(","), d))
    orderings = sorted({p.ordering for p in result.points})
    colours = {d: f"C{k % 10}" for k, d in enumerate(dataflows)}
    markers = {o: MARKERS[k % len(MARKERS)] for k, o in enumerate(orderings)}
    lat = np.array([p.latency_cycles for p in result.points])
    for ax, (res, label) in zip(axes, _PANELS, strict=True):
        x = np.array([getattr(p, res) for p in result.points])
        for d in dataflows:
            for o in orderings:
                sel = [k for k, p in enumerate(result.points) if p.dataflow == d and p.ordering == o]
                if sel:
                    ax.scatter(x[sel], lat[sel], s=10 if len(lat) > 300 else 18, c=colours[d],
                               marker=markers[o], alpha=0.7, linewidths=0)
        if len(x):
            stair = nondominated(np.stack([x, lat], axis=1))
            stair = stair[np.argsort(x[stair])]
            ax.step(x[stair], lat[stair], where="post", color="0.3", linewidth=0.8)
        cap = result.budget.get(res)
        if cap:
            ax.axvline(cap, color="0.5", linestyle="--", linewidth=0.8)
            ax.text(cap, 1.0, " usable budget", transform=ax.get_xaxis_transform(),
                    rotation=90, va="top", ha="right", fontsize=8, color="0.4")
        ax.set_xscale("symlog", linthresh=1.0)  # log scale that keeps 0 (no BRAM) visible
        right = max([float(cap or 0), *x.tolist(), 1.0])
        ax.set_xlim(-0.2, right * 1.4)
        ax.set_yscale("log")
        ax.set_xlabel(f"{label} (count)")
        ax.grid(True, which="major", linewidth=0.3)
    axes[0].set_ylabel("latency (cycles)")
    axes[1].tick_params(labelleft=True)
    handles = [axes[0].scatter([], [], c=colours[d], marker="o", s=20, label=f"dataflow {d}")
               for d in dataflows]
    handles += [axes[0].scatter([], [], c="0.4", marker=markers[o], s=20, label=f"ordering {o}")
                for o in orderings]
    handles += axes[0].plot([], [], color="0.3", linewidth=0.8, label="2-D front of the panel")
    fig.legend(handles=handles, loc="outside right center", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


def figure_png(fig: Figure, *, dpi: int = 130) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
