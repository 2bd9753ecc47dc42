"""The pictures of a report, as inline SVG text: charts drawn with matplotlib (the studies'
plot specifications, :mod:`odyssey.plots`, and a roofline), and the array drawn from its
shape. Each chart has axis titles with units; bars carry their value as text, so colour is
never the only carrier of meaning. Nothing is fetched: fonts are drawn as paths.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from odyssey.plots import MARKERS, Bars, Curve, Lines, Plot, Series, draw

_LABEL = {"dsp": "DSP", "lut": "LUT", "ff": "FF", "bram18k": "BRAM18K", "uram": "URAM"}


def svg_of(fig: Any) -> str:
    """A matplotlib figure as SVG text without the XML prologue (text drawn as paths)."""
    from matplotlib import rc_context

    buf = io.StringIO()
    settings: Any = {"svg.fonttype": "path", "svg.hashsalt": "odyssey"}  # deterministic ids, no font files
    with rc_context(settings):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    # the RDF metadata block names namespaces by URL; nothing on the page needs it
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text[text.index("<svg"):], flags=re.S)


def resource_bars(resources: Sequence[Mapping[str, Any]]) -> str:
    """One bar per resource: its share of the usable budget, the value printed on it."""
    cats = tuple(_LABEL[r["resource"]] for r in resources)
    shares = tuple(100.0 * r["used"] / r["usable"] if r["usable"] else 0.0 for r in resources)
    notes = tuple(f"{r['used']:,.0f} of {r['usable']:,.0f}" for r in resources)
    top = max(110.0, max(shares, default=0.0) * 1.15)
    plot = Plot("resources.svg", "Resources against the usable budget",
                (Bars(cats, (Series("used", shares, notes),), "share of the usable budget (%)",
                      xlabel="resource", ylim=(0.0, top)),), width=7.0, panel_height=3.4)
    fig = draw(plot)
    fig.axes[0].axhline(100.0, color="#222222", linestyle="--", linewidth=1.0)
    fig.axes[0].text(len(cats) - 0.5, 101.0, "budget", ha="right", va="bottom", fontsize=8)
    return svg_of(fig)


def module_bars(modules: Sequence[Mapping[str, Any]]) -> str:
    """Every module's latency; the bottleneck's bar says so in its label."""
    mods = sorted(modules, key=lambda m: -m["latency_cycles"])
    cats = tuple(m["name"] + (" (bottleneck)" if m["bottleneck"] else "") for m in mods)
    vals = tuple(float(m["latency_cycles"]) for m in mods)
    plot = Plot("modules.svg", "Latency of each module", (Bars(cats, (Series("latency", vals, tuple(
        f"{v:,.0f}" for v in vals)),), "latency (cycles)", xlabel="module", ylim=(0.0, max(vals, default=1.0) * 1.3)),),
        width=8.0, panel_height=3.8)
    return svg_of(draw(plot))


def roofline(point: Mapping[str, float]) -> str:
    """The design's GOP/s against its arithmetic intensity, under the compute roof (every
    usable DSP in a lane) and the DRAM roof (every channel at peak)."""
    from matplotlib.figure import Figure

    ai, gops = point["intensity_ops_per_byte"], point["throughput_gops"]
    roof_c, roof_m = point["compute_roof_gops"], point["dram_roof_gbs"]
    fig = Figure(figsize=(6.5, 3.8), layout="constrained")
    ax = fig.subplots()
    lo = min(ai / 10, roof_c / roof_m / 10 if roof_m else ai / 10) if ai > 0 else 0.1
    hi = max(ai * 10, roof_c / roof_m * 10 if roof_m else ai * 10, lo * 100)
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    if roof_m and roof_c:
        ax.plot(xs, [min(roof_c, roof_m * x) for x in xs], "-", color="#4477aa",
                label=f"roofs: {roof_c:,.0f} GOP/s compute, {roof_m:,.1f} GB/s DRAM")
    if ai > 0 and gops > 0:
        ax.plot([ai], [gops], "o", color="#ee6677", markersize=7, label=f"this design: {gops:,.1f} GOP/s")
        ax.annotate(f"{gops:,.1f} GOP/s at {ai:,.1f} op/B", (ai, gops), xytext=(8, -4),
                    textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (operations per off-chip byte)")
    ax.set_ylabel("throughput (GOP/s)")
    ax.set_title("Roofline", fontsize=11)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left")
    return svg_of(fig)


#: each stall kind's fill and hatch: the hatch tells them apart without colour
_STALL_STYLE = {"r": ("#4477aa", "//"), "w": ("#ee6677", "xx"), "b": ("#ccbb44", ".."), "d": ("#228833", "\\\\")}


def timeline(processes: Sequence[Mapping[str, Any]]) -> str:
    """One row per process of a timed simulation: running (grey) from its start to its end, and
    its stalls hatched by what it waited for (an empty FIFO, a full FIFO, a block, DRAM)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    from odyssey.codegen.timedsim import STALL_KINDS

    n = len(processes)
    fig = Figure(figsize=(9.0, 1.2 + 0.22 * n), layout="constrained")
    ax = fig.subplots()
    for row, p in enumerate(processes):
        y = n - 1 - row
        ax.broken_barh([(p["start"], p["end"] - p["start"])], (y - 0.4, 0.8), facecolors="#dddddd")
        for kind, (colour, hatch) in _STALL_STYLE.items():
            spans = [(a, b - a) for a, b, k in p["spans"] if k == kind]
            if spans:
                ax.broken_barh(spans, (y - 0.4, 0.8), facecolors=colour, hatch=hatch, edgecolor="#222222",
                               linewidth=0.0)
    ax.set_yticks(range(n), [p["name"] for p in reversed(processes)], fontsize=7)
    ax.set_xlabel("simulated cycle")
    ax.set_title("Timed simulation: each process running and stalled", fontsize=11)
    handles = [Patch(facecolor="#dddddd", label="running")]
    handles += [Patch(facecolor=c, hatch=h, label=f"stalled: {STALL_KINDS[k]}") for k, (c, h) in _STALL_STYLE.items()]
    ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.06 - 0.4 / max(n, 1)),
              ncol=5, frameon=False)
    return svg_of(fig)


def front(points: Sequence[Mapping[str, Any]], top: int = 7) -> str:
    """A Pareto front: each point's GOP/s against its DSP and against its BRAM18K, the ``top``
    designs with most points each with a marker shape of its own (the rest as "other")."""
    from matplotlib.figure import Figure

    count: dict[str, int] = {}
    for p in points:
        count[p["design"]] = count.get(p["design"], 0) + 1
    named = sorted(count, key=lambda d: -count[d])[:top]
    fig = Figure(figsize=(9.0, 3.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, (key, label) in zip(axes, (("dsp", "DSP slices"), ("bram18k", "BRAM18K blocks")), strict=True):
        for k, name in enumerate([*named, "other"]):
            sel = [p for p in points if (p["design"] == name if name != "other" else p["design"] not in named)]
            if sel:
                ax.plot([p[key] for p in sel], [p["throughput_gops"] for p in sel], MARKERS[k % len(MARKERS)],
                        markersize=3.5, alpha=0.8, label=f"{name} ({len(sel)})")
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("throughput (GOP/s)")
    axes[1].legend(fontsize=7, loc="lower right")
    fig.suptitle("Pareto front: throughput against resources", fontsize=11)
    return svg_of(fig)


def convergence(designs: Sequence[Mapping[str, Any]], *, by: str = "samples", top: int = 6) -> str | None:
    """Best-so-far GOP/s against samples (or seconds) of the ``top`` best designs that have a
    trace, each curve named at its end (so colour is not what tells them apart)."""
    traced = sorted((d for d in designs if d.get("trace")), key=lambda d: -d["throughput_gops"])[:top]
    curves = [Curve(d["design"], tuple(float(t[by]) for t in d["trace"]),
                    tuple(float(t["throughput_gops"]) for t in d["trace"]), style="-o" if len(d["trace"]) < 3 else "-")
              for d in traced]
    if not curves:
        return None
    unit = "samples (model evaluations)" if by == "samples" else "seconds"
    fig = draw(Plot("convergence.svg", f"Best throughput so far against {by} (the {len(curves)} best designs)",
                    (Lines(tuple(curves), unit, "best throughput (GOP/s)", xlog=True),), width=8.0))
    ax = fig.axes[0]
    for c in curves:
        ax.annotate(c.label, (c.x[-1], c.y[-1]), xytext=(4, 0), textcoords="offset points", fontsize=7,
                    va="center")
    return svg_of(fig)


def design_bars(designs: Sequence[Mapping[str, Any]]) -> str:
    """Every design's best GOP/s, labelled with its status."""
    ds = sorted(designs, key=lambda d: -d["throughput_gops"])
    cats = tuple(d["design"] for d in ds)
    vals = tuple(d["throughput_gops"] for d in ds)
    notes = tuple(f"{v:,.1f} ({'proven' if d['status'] == 'optimal' else 'not proven'})" for v, d in zip(vals, ds, strict=True))
    return svg_of(draw(Plot("designs.svg", "Best throughput of each design", (Bars(
        cats, (Series("best", vals, notes),), "throughput (GOP/s)", xlabel="design",
        ylim=(0.0, max(vals, default=1.0) * 1.45)),), width=9.0, panel_height=4.0)))


def layer_bars(layers: Sequence[Mapping[str, Any]]) -> str:
    """Each layer's GOP/s (bars) and its share of the network's time (printed on the bar)."""
    cats = tuple(lay["name"] for lay in layers)
    vals = tuple(lay["throughput_gops"] for lay in layers)
    notes = tuple(f"{v:,.0f}, {100 * lay['share_of_time']:.1f}% of time" for v, lay in zip(vals, layers, strict=True))
    width = min(20.0, max(8.0, 0.28 * len(cats)))
    return svg_of(draw(Plot("layers.svg", "Throughput of each layer", (Bars(
        cats, (Series("GOP/s", vals, notes),), "throughput (GOP/s)", xlabel="layer",
        groups=tuple(lay["kind"] or "layer" for lay in layers), ylim=(0.0, max(vals, default=1.0) * 1.6)),),
        width=width, panel_height=4.2)))


def array_picture(array: Mapping[str, Any]) -> str:
    """The PE grid (rows and columns of the space loops), the operands that enter it and the
    loop each moves along, and the DRAM ports on their channels: plain SVG."""
    dims = array["dims"]
    rows = dims[0]["pes"] if dims else 1
    cols = dims[1]["pes"] if len(dims) > 1 else 1
    shown_r, shown_c = min(rows, 8), min(cols, 8)
    cell, gap, x0, y0 = 34, 8, 20, 40
    lines = len(array["operands"])
    w = max(x0 + shown_c * (cell + gap) + 300, 560)
    h = y0 + shown_r * (cell + gap) + 24 + 18 * lines
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" role="img" '
           f'aria-label="systolic array of {rows} x {cols} PEs" data-pes="{array.get("num_pes", rows * cols)}">',
           '<title>The systolic array</title>',
           f'<text x="10" y="20" font-size="14" font-family="sans-serif">{rows} x {cols} PEs '
           f'(space loops {escape(", ".join(array["space_loops"]))})'
           + (", first 8 of each drawn" if rows > 8 or cols > 8 else "") + '</text>']
    for r in range(shown_r):
        for c in range(shown_c):
            x, y = x0 + c * (cell + gap), y0 + r * (cell + gap)
            out.append(f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#dde8f3" stroke="#4477aa"/>')
            out.append(f'<text x="{x + cell / 2}" y="{y + cell / 2 + 4}" font-size="9" text-anchor="middle" '
                       f'font-family="sans-serif">PE</text>')
    y = y0 + shown_r * (cell + gap) + 6
    loops = [d["loop"] for d in dims]
    for k, op in enumerate(array["operands"]):
        chain = op.get("chain")
        if chain in loops:  # an arrow between neighbours along the chain, in each shown line
            vertical = loops.index(chain) == 0
            colour = ("#ee6677", "#228833", "#aa3377")[k % 3]
            off = 6 + 8 * k
            for r in range(shown_r if not vertical else shown_r - 1):
                for c in range(shown_c - 1 if not vertical else shown_c):
                    lx, ly = x0 + c * (cell + gap), y0 + r * (cell + gap)
                    if vertical:
                        out.append(f'<line x1="{lx + off}" y1="{ly + cell}" x2="{lx + off}" y2="{ly + cell + gap}" '
                                   f'stroke="{colour}" stroke-width="2"/>')
                    else:
                        out.append(f'<line x1="{lx + cell}" y1="{ly + off}" x2="{lx + cell + gap}" y2="{ly + off}" '
                                   f'stroke="{colour}" stroke-width="2"/>')
        what = (f"{op['name']} ({op['role']}): "
                + (f"moves along {chain}: {op.get('chains', 0)} chains of {op.get('chain_pes', 0)} PEs"
                   + (f" ({'vertical' if loops.index(chain) == 0 else 'horizontal'} links)" if chain in loops else "")
                   if chain else "stays in its PE / broadcast"))
        out.append(f'<text x="10" y="{y + 12}" font-size="11" font-family="sans-serif">{escape(what)}</text>')
        y += 18
    px = x0 + shown_c * (cell + gap) + 10
    py = y0 + 14
    out.append(f'<text x="{px}" y="{py - 10}" font-size="11" font-family="sans-serif">DRAM ports</text>')
    for p in array["ports"]:
        arrow = "&#8594;" if p["direction"] == "write" else "&#8592;"
        out.append(f'<text x="{px}" y="{py + 12}" font-size="11" font-family="sans-serif">{arrow} '
                   f'{escape(str(p["name"]))} ({escape(str(p["direction"]))}) on {escape(str(p["memory"]))}'
                   f'[{escape(str(p["channel"]))}]</text>')
        py += 18
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["array_picture", "convergence", "design_bars", "layer_bars", "module_bars", "resource_bars",
           "roofline", "svg_of"]
