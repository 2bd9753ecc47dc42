"""Plot specifications of the studies (plain data) and their drawing with matplotlib.

A :class:`Plot` is a file name, a title and panels stacked vertically; a panel is
:class:`Bars` (grouped bars over categories), :class:`Lines` (curves with optional
bands) or :class:`Heatmap`. Reference values (the paper's) are :class:`RefLine`
horizontal lines with a label in the legend. :func:`draw` builds a matplotlib
``Figure`` (object API, no pyplot state); the writer saves it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported when a figure is drawn, not with the studies' list
    from matplotlib.figure import Figure

_COLORS = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb",
           "#000000")
#: marker shapes of a scatter's groups, so that shape, not colour only, tells them apart
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


@dataclass(frozen=True, slots=True)
class RefLine:
    """A horizontal line at ``y`` (e.g. the paper's value), labelled in the legend."""

    y: float
    label: str
    style: str = "--"
    color: str = "#222222"


@dataclass(frozen=True, slots=True)
class Series:
    """Bar heights over the panel's categories (NaN: no bar); ``labels`` annotate bars."""

    label: str
    values: tuple[float, ...]
    annotate: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Bars:
    categories: tuple[str, ...]
    series: tuple[Series, ...]
    ylabel: str
    xlabel: str = ""
    refs: tuple[RefLine, ...] = ()
    ylim: tuple[float, float] | None = None
    title: str = ""
    groups: tuple[str, ...] | None = None  # one per category: colours a single series by group
    ylog: bool = False


@dataclass(frozen=True, slots=True)
class Curve:
    """A line over ``x``; ``lo``/``hi`` (same length) shade a band around it."""

    label: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    lo: tuple[float, ...] | None = None
    hi: tuple[float, ...] | None = None
    style: str = "-"


@dataclass(frozen=True, slots=True)
class Lines:
    curves: tuple[Curve, ...]
    xlabel: str
    ylabel: str
    refs: tuple[RefLine, ...] = ()
    xlog: bool = False
    ylim: tuple[float, float] | None = None
    title: str = ""


@dataclass(frozen=True, slots=True)
class Heatmap:
    """``values[r][c]`` coloured from ``vmin`` to ``vmax``, each cell printed with ``fmt``."""

    rows: tuple[str, ...]
    cols: tuple[str, ...]
    values: tuple[tuple[float, ...], ...]
    label: str  # colour bar
    xlabel: str = ""
    ylabel: str = ""
    fmt: str = "{:.2f}"
    vmin: float = 0.0
    vmax: float = 1.0
    title: str = ""


Panel = Bars | Lines | Heatmap


@dataclass(frozen=True, slots=True)
class Plot:
    filename: str  # e.g. "throughput.png"
    title: str
    panels: tuple[Panel, ...]
    width: float = 11.0
    panel_height: float = 3.6


def draw(plot: Plot) -> Figure:
    """The figure of ``plot``: one axes per panel, stacked vertically."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(plot.width, plot.panel_height * len(plot.panels) + 0.6),
                 layout="constrained")
    axes = fig.subplots(len(plot.panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, plot.panels, strict=True):
        if isinstance(panel, Bars):
            _bars(ax, panel)
        elif isinstance(panel, Lines):
            _lines(ax, panel)
        else:
            _heatmap(fig, ax, panel)
    fig.suptitle(plot.title, fontsize=12)
    return fig


def _refs(ax: Any, refs: tuple[RefLine, ...]) -> None:
    for r in refs:
        ax.axhline(r.y, linestyle=r.style, color=r.color, linewidth=1.2, label=r.label)


def _bars(ax: Any, p: Bars) -> None:
    n, k = len(p.categories), len(p.series)
    width = 0.8 / max(k, 1)
    for j, s in enumerate(p.series):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(n)]
        vals = [v if v is not None and math.isfinite(v) else 0.0 for v in s.values]
        if p.groups is not None and k == 1:
            names = list(dict.fromkeys(p.groups))
            colors = [_COLORS[names.index(g) % len(_COLORS)] for g in p.groups]
            bars = ax.bar(xs, vals, width=width * 0.95, color=colors)
            for g in names:  # one legend entry per group
                ax.bar([0], [0], width=0, color=_COLORS[names.index(g) % len(_COLORS)], label=g)
        else:
            bars = ax.bar(xs, vals, width=width * 0.95, label=s.label,
                          color=_COLORS[j % len(_COLORS)])
        if s.annotate is not None:
            for b, text in zip(bars, s.annotate, strict=True):
                if text:
                    ax.annotate(text, (b.get_x() + b.get_width() / 2, b.get_height()),
                                ha="center", va="bottom", fontsize=6, rotation=90,
                                xytext=(0, 2), textcoords="offset points")
    _refs(ax, p.refs)
    ax.set_xticks(range(n))
    ax.set_xticklabels(p.categories, rotation=60 if n > 8 else 0, ha="right" if n > 8 else "center",
                       fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)
    if p.ylog:
        ax.set_yscale("log")
    ax.set_ylabel(p.ylabel)
    if p.xlabel:
        ax.set_xlabel(p.xlabel)
    if p.ylim is not None:
        ax.set_ylim(*p.ylim)
    if p.title:
        ax.set_title(p.title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    if k > 1 or p.refs or p.groups is not None:
        _legend(ax)


def _lines(ax: Any, p: Lines) -> None:
    for j, c in enumerate(p.curves):
        color = _COLORS[j % len(_COLORS)]
        ax.plot(c.x, c.y, c.style, color=color, label=c.label, linewidth=1.5)
        if c.lo is not None and c.hi is not None:
            ax.fill_between(c.x, c.lo, c.hi, color=color, alpha=0.15, linewidth=0)
    _refs(ax, p.refs)
    if p.xlog:
        ax.set_xscale("log")
    elif all(float(x).is_integer() for c in p.curves for x in c.x):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no 2.5 ticks
    ax.set_xlabel(p.xlabel)
    ax.set_ylabel(p.ylabel)
    if p.ylim is not None:
        ax.set_ylim(*p.ylim)
    if p.title:
        ax.set_title(p.title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")


def _legend(ax: Any) -> None:
    """One row of entries above the bars (the panels leave head room over 1.0)."""
    n = len(ax.get_legend_handles_labels()[0])
    ax.legend(fontsize=8, loc="upper left", ncol=min(n, 4), framealpha=0.9)


def _heatmap(fig: Figure, ax: Any, p: Heatmap) -> None:
    data = [[v if math.isfinite(v) else math.nan for v in row] for row in p.values]
    im = ax.imshow(data, aspect="auto", cmap="viridis", vmin=p.vmin, vmax=p.vmax)
    ax.set_xticks(range(len(p.cols)))
    ax.set_xticklabels(p.cols, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(p.rows)))
    ax.set_yticklabels(p.rows, fontsize=7)
    mid = (p.vmin + p.vmax) / 2
    for r, row in enumerate(data):
        for c, v in enumerate(row):
            if math.isfinite(v):
                ax.text(c, r, p.fmt.format(v), ha="center", va="center", fontsize=6,
                        color="black" if v > mid else "white")
    fig.colorbar(im, ax=ax, label=p.label)
    if p.xlabel:
        ax.set_xlabel(p.xlabel)
    if p.ylabel:
        ax.set_ylabel(p.ylabel)
    if p.title:
        ax.set_title(p.title, fontsize=10)
