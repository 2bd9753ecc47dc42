"""Figures of the tuner benchmark (:mod:`odyssey.studies.tuner_bench`), as matplotlib
:class:`~matplotlib.figure.Figure` objects (no pyplot state; the caller saves them).

* :func:`quality_figure`: best throughput normalised to the optimum, per design and
  method, median over seeds (the paper's Figure 7);
* :func:`convergence_figure`: median best-so-far (normalised) against samples (log
  scale, Figure 8) or seconds, on one design;
* :func:`time_figure`: one method's result per design at each time checkpoint
  (Figure 9: Odyssey within 5 s).
"""

from __future__ import annotations

import statistics
from typing import Literal

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure

from odyssey.studies.tuner_bench import BenchResult

_GRID = 120


def _medians(result: BenchResult) -> dict[tuple[str, str, str], float]:
    """Median fraction of the optimum over seeds, by (method, design, budget)."""
    got: dict[tuple[str, str, str], list[float]] = {}
    for r in result.records():
        if r.fraction is not None:
            got.setdefault((r.method, r.design, r.budget), []).append(r.fraction)
    return {k: statistics.median(v) for k, v in got.items()}


def quality_figure(result: BenchResult, budget: str) -> Figure:
    """Grouped bars: x = design, one bar per method, height = median fraction of optimum."""
    cfg = result.config
    designs = list(result.optima)
    methods = list(cfg.methods)
    fig = Figure(figsize=(max(8.0, 0.9 * len(designs) + 3), 4.8), layout="constrained")
    ax = fig.add_subplot()
    width = 0.85 / len(methods)
    cmap = _colours(len(methods))
    x = np.arange(len(designs))
    med = _medians(result)
    for k, m in enumerate(methods):
        vals = [med.get((m, d, budget), np.nan) for d in designs]
        ax.bar(x + (k - (len(methods) - 1) / 2) * width, vals, width, label=m, color=cmap[k])
    ax.axhline(1.0, color="black", lw=0.8, ls="--")
    ax.set_xticks(x, designs, rotation=45, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("design (dataflow-ordering)")
    ax.set_ylabel("best throughput / optimum")
    ax.set_title(f"Best design found within {budget} "
                 f"(median of {len(cfg.seeds)} seeds, {cfg.kernel.stem} {cfg.size_label})")
    fig.legend(ncols=min(6, len(methods)), fontsize="small", loc="outside lower center")
    return fig


def convergence_figure(result: BenchResult, design: str,
                       axis: Literal["samples", "seconds"]) -> Figure:
    """Median (over seeds) best-so-far / optimum against samples or seconds, log x; a
    method's curve ends where its first seed's run ended (by its time budget)."""
    cfg = result.config
    opt = result.optima[design]
    runs = [r for m in cfg.methods for r in result.trace_runs(m, design, axis)]
    if axis == "samples":
        top = max((r.samples for r in runs), default=1)
        grid = np.unique(np.geomspace(1, max(top, 2), _GRID).round())
    else:
        grid = np.geomspace(1e-3, cfg.time_s, _GRID)
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    ax = fig.add_subplot()
    cmap = _colours(len(cfg.methods))
    for k, m in enumerate(cfg.methods):
        curve = []
        for x in grid:
            vals = [r.best_at(samples=int(x)) if axis == "samples" else r.best_at(seconds=x)
                    for r in runs if r.method == m]
            reached = [v for v in vals if v is not None]
            # drawn while every seed's run lasts (a median over fewer seeds would jump)
            full = bool(reached) and len(reached) == len(vals)
            curve.append(statistics.median(reached) / opt if full else np.nan)
        ax.plot(grid, curve, label=m, color=cmap[k], lw=1.4)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("samples evaluated" if axis == "samples" else "search time (s)")
    ax.set_ylabel("best throughput so far / optimum")
    ax.set_title(f"{design} (optimum {opt:.1f} GOP/s), median of {len(cfg.seeds)} seeds")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", ncols=2, loc="lower right")
    return fig


def time_figure(result: BenchResult, method: str) -> Figure:
    """Bars per design: ``method``'s median fraction of the optimum at each time checkpoint."""
    cfg = result.config
    designs = list(result.optima)
    fig = Figure(figsize=(max(8.0, 0.6 * len(designs) + 3), 4.5), layout="constrained")
    ax = fig.add_subplot()
    x = np.arange(len(designs))
    budgets = [f"{s:g}s" for s in cfg.at_seconds]
    width = 0.8 / len(budgets)
    med = _medians(result)
    for k, b in enumerate(budgets):
        vals = [med.get((method, d, b), np.nan) for d in designs]
        ax.bar(x + (k - (len(budgets) - 1) / 2) * width, vals, width, label=f"within {b}")
    for level in (0.9, 0.99):
        ax.axhline(level, color="grey", lw=0.8, ls=":")
    ax.set_xticks(x, designs, rotation=45, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("design (dataflow-ordering)")
    ax.set_ylabel("best throughput / optimum")
    ax.set_title(f"{method}: best design found per time budget (median of {len(cfg.seeds)} "
                 "seeds; dotted: 90% and 99%)")
    ax.legend(fontsize="small", loc="lower left")
    return fig


def _colours(n: int) -> list[tuple[float, float, float, float]]:
    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(k % cmap.N) for k in range(n)]
