"""Study `cnn-dataflows`: one dataflow for every layer of a network.

The paper's Figures 13 and 14 (section 5.4): every CNN dataflow, with the loop ordering
``<[o,h,w],[i,p,q]>``, on every convolution layer of VGG16 and ResNet-50. Per layer and
dataflow the tiling is the exact optimum of the accurate model, or the best found in the
time limit per (layer, dataflow) (the unit of ``--time``); identical shapes are solved
once. Two normalisations:

* Figure 13: throughput over the highest throughput of any dataflow on any layer of the
  network;
* Figure 14: the geometric mean over the layers (every layer counts, repeated shapes as
  often as they occur) of the throughput over the layer's peak (its best dataflow). The
  paper finds 77% (VGG16) and 57% (ResNet-50) for the best single dataflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from odyssey.model import build_model
from odyssey.network.networks import load_network, unique_shapes
from odyssey.plots import Bars, Heatmap, Plot, RefLine, Series
from odyssey.studies._common import (
    Point,
    bottleneck_summary,
    designs_of,
    geomean,
    kernel_space,
    optimum_point,
    ratio,
)
from odyssey.studies.study import (
    Headline,
    PaperValue,
    Preset,
    Study,
    StudyContext,
    StudyResult,
    Table,
    result,
)

NAME = "cnn-dataflows"
ORDERING_SUFFIX = "-ohw.ipq"  # <[o,h,w],[i,p,q]>
PAPER_BEST = {"vgg16": 0.77, "resnet50": 0.57}

Shape = tuple[str, Mapping[str, int], int]  # label, sizes, layers with this shape


def network_shapes(entry: str | tuple[str, Sequence[Shape]]) -> tuple[str, list[Shape]]:
    """``(name, [(label, sizes, count), ...])`` of a bundled network (its conv and pointwise
    layers, identical shapes once; depthwise and matmul layers have other kernels) or of an
    explicit list."""
    if not isinstance(entry, str):
        return entry[0], list(entry[1])
    net = load_network(entry)
    out: list[Shape] = []
    for g in unique_shapes(net):
        if g.first.kernel != "cnn":
            continue
        out.append((g.first.name if len(g.layers) == 1 else f"{g.first.name} (x{len(g.layers)})",
                    g.first.dims, len(g.layers)))
    return net.name, out


def run(ctx: StudyContext) -> StudyResult:
    p = ctx.preset
    limit = ctx.budget(p.option("time_limit_s"))
    rows: list[tuple[Any, ...]] = []
    heads: list[Headline] = []
    panels: list[Bars | Heatmap] = []
    geo_series: dict[str, dict[str, float]] = {}
    for entry in p.option("networks"):
        net, shapes = network_shapes(entry)
        grid: dict[str, dict[str, Point]] = {}  # layer -> dataflow -> point
        flows: list[str] = []
        for n, (label, sizes, _count) in enumerate(shapes, 1):
            ks = kernel_space(ctx, "cnn.c", {k: str(v) for k, v in sizes.items()})
            designs = [d for d in designs_of(ks, p.designs) if d.id.endswith(ORDERING_SUFFIX)]
            grid[label] = {}
            for d in designs:
                model = build_model(ks, d, platform=ctx.platform)
                pt, _ = optimum_point(d, model, time_limit_s=limit, seed=ctx.seed)
                grid[label][d.dataflow] = pt
                if d.dataflow not in flows:
                    flows.append(d.dataflow)
            best_here = max(grid[label].values(), key=lambda q: q.gops if math.isfinite(q.gops) else -1)
            ctx.say(f"{net} shape {n}/{len(shapes)} {label}: best {best_here.dataflow} "
                    f"{best_here.gops:.1f} GOP/s")
        peak_net = max(q.gops for row in grid.values() for q in row.values() if math.isfinite(q.gops))
        geo: dict[str, float] = {}
        for fl in flows:
            vals, weights = [], []
            for label, _sizes, count in shapes:
                peak = max(q.gops for q in grid[label].values() if math.isfinite(q.gops))
                vals.append(ratio(grid[label][fl].gops, peak))
                weights.append(count)
            geo[fl] = geomean(vals, weights)
        for label, sizes, count in shapes:
            peak = max(q.gops for q in grid[label].values() if math.isfinite(q.gops))
            for fl in flows:
                q = grid[label][fl]
                rows.append((net, label, _describe(sizes), count, fl, q.design, q.gops,
                             ratio(q.gops, peak), ratio(q.gops, peak_net), q.dsp_use, q.bottleneck,
                             q.status, round(q.seconds, 2), q.tiling_text))
        top = max(geo, key=lambda k: geo[k] if math.isfinite(geo[k]) else -1)
        geo_series[net] = geo
        heads.append(Headline(f"best_{net}", f"{net}: best single dataflow {top}, geo. mean of "
                              "throughput / layer peak", geo[top], "%"))
        ranked = sorted(geo, key=lambda k: -geo[k] if math.isfinite(geo[k]) else 0)
        heads.append(Headline(f"rank_{net}", f"{net}: top three dataflows "
                              f"{', '.join(ranked[:3])}; third's geo. mean", geo[ranked[min(2, len(ranked) - 1)]], "%"))
        panels.append(Heatmap(
            tuple(label for label, _, _ in shapes), tuple(flows),
            tuple(tuple(ratio(grid[label][fl].gops, peak_net) for fl in flows)
                  for label, _, _ in shapes),
            "throughput / network's best", xlabel="dataflow (ordering <[o,h,w],[i,p,q]>)",
            ylabel="layer", title=f"{net}: throughput of each dataflow (Figure 13), "
                                  f"best {peak_net:.0f} GOP/s"))
    flows_all = list(dict.fromkeys(fl for g in geo_series.values() for fl in g))
    fig14 = Bars(tuple(flows_all), tuple(Series(net, tuple(g.get(fl, math.nan) for fl in flows_all))
                                         for net, g in geo_series.items()),
                 "geo. mean of throughput / layer peak", xlabel="dataflow", ylim=(0, 1.35),
                 refs=tuple(RefLine(v, f"paper: best single dataflow on {k}, {v:.0%}",
                                    style=("--" if k == "vgg16" else ":"))
                            for k, v in PAPER_BEST.items() if k in geo_series),
                 title="Figure 14: one dataflow for the whole network")
    table = Table("", ("network", "layer", "shape", "layers", "dataflow", "design",
                       "throughput_gops", "vs_layer_peak", "vs_network_best", "dsp_use",
                       "bottleneck", "status", "search_s", "tiling"), tuple(rows))
    geo_table = Table("geomean", ("network", "dataflow", "geomean_vs_layer_peak"), tuple(
        (net, fl, v) for net, g in geo_series.items() for fl, v in g.items()))
    unproven = sum(1 for r in rows if r[11] != "optimal")
    bound: dict[str, int] = {}
    for r in rows:
        bound[str(r[10])] = bound.get(str(r[10]), 0) + 1
    notes = [
        f"{len(rows)} (layer, dataflow) optima; {unproven} hit the {limit:g} s time limit: "
        "they keep the better of the best tiling found and a 20,000-sample tuner run, and "
        "their status gives the remaining gap to the proven lower bound.",
        "Bottlenecks: " + bottleneck_summary(str(r[10]) for r in rows) + ".",
        f"{sum(v for k, v in bound.items() if k.endswith('_in'))} of {len(rows)} optima are bound "
        f"by an input's L3 reader, {bound.get('PE', 0)} by the PEs.",
    ]
    return result(ctx, NAME, table, heads,
                  plots=(Plot("dataflows_heatmap.png", "Every dataflow on every layer (Figure 13)",
                              tuple(pa for pa in panels if isinstance(pa, Heatmap)),
                              panel_height=4.5, width=10.0),
                         Plot("dataflows_geomean.png", "Best single dataflow per network "
                              "(Figure 14)", (fig14,), width=9.0, panel_height=4.0)),
                  tables=(geo_table,), notes=notes, settings={"time_limit_s": limit})


def _describe(s: Mapping[str, int]) -> str:
    return f"I{s['I']} O{s['O']} {s['H']}x{s['W']} k{s['P']}x{s['Q']}"


STUDY = Study(
    name=NAME,
    title="CNN: one dataflow for a whole network (Figures 13 and 14)",
    paper="Figures 13 and 14 (section 5.4)",
    kernel="kernels/cnn.c; every conv and pointwise layer of VGG16 and ResNet-50",
    designs="the 10 dataflows with ordering <[o,h,w],[i,p,q]>",
    method="exact optimum per (layer shape, dataflow), 3 s time limit each (the unit of --time)",
    full=Preset("full", {}, None, {"networks": ("vgg16", "resnet50"), "time_limit_s": 3.0}),
    quick=Preset("quick", {}, ("o-ohw.ipq", "oh-ohw.ipq"), {
        "networks": (("tiny", (
            ("c1", {"O": 8, "I": 3, "H": 8, "W": 8, "P": 3, "Q": 3}, 1),
            ("p2", {"O": 16, "I": 8, "H": 4, "W": 4, "P": 1, "Q": 1}, 2))),),
        "time_limit_s": 3.0}),
    run=run,
    paper_values=(PaperValue("best_vgg16", 0.77, "Figure 14a"),
                  PaperValue("best_resnet50", 0.57, "Figure 14b")),
)
