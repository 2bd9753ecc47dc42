"""Study `cnn-conv12`: the 30 CNN designs on VGG16's first two convolution layers.

The paper's Figure 11 (throughput of every design on CONV1 and CONV2, normalised to the
layer's best) and Table 7 (dataflows ``[h,i]`` and ``[o,h]``: SIMD loop, latency, PE and
output I/O latency, DSP, DSP efficiency, ``T_i1`` and the bottleneck). Every design's
tiling is the exact optimum of the accurate model, or the best found within the time
limit per design (the status column says which).

DSP efficiency is :func:`odyssey.network.network_tuning.dsp_efficiency`: MACs over
``#PE * SIMD * cycles``, the fraction of the array's peak the layer achieves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from odyssey.mapping.space import Design
from odyssey.model import DesignModel
from odyssey.network.network_tuning import dsp_efficiency
from odyssey.plots import Bars, Plot, Series
from odyssey.studies._common import (
    POINT_COLUMNS,
    Point,
    best,
    bottleneck_summary,
    designs_of,
    kernel_space,
    optima,
    point_row,
    ratio,
)
from odyssey.studies.study import (
    Cell,
    Headline,
    PaperValue,
    Preset,
    Study,
    StudyContext,
    StudyResult,
    Table,
    result,
)

NAME = "cnn-conv12"
BEST_ORDERING = "<[o,h,w],[i,p,q]>"
#: the designs of Table 7, and the paper's DSP efficiency of each on CONV1 and CONV2
TABLE7 = ("hi-ohw.ipq", "oh-ohw.ipq")
_VGG16_CONV12 = (
    ("CONV1", {"O": 64, "I": 3, "H": 224, "W": 224, "P": 3, "Q": 3}),
    ("CONV2", {"O": 64, "I": 64, "H": 224, "W": 224, "P": 3, "Q": 3}),
)


def _macs(sizes: Mapping[str, int]) -> int:
    return math.prod(sizes.values())


@dataclass(frozen=True, slots=True)
class _Detail:
    """Table 7's columns of one optimum."""

    simd_loop: str | None
    pe_latency: float  # slowest PE module (cycles)
    out_module: str  # slowest module of the output fo
    out_latency: float
    dsp_eff: float
    t_i1: int | None


def _detail(design: Design, model: DesignModel, pt: Point, sizes: Mapping[str, int]) -> _Detail:
    assert pt.tiling is not None
    r = model.evaluate_one(pt.tiling)
    mods = {k[len("module:"):]: float(v) for k, v in r.items() if k.startswith("module:")}
    pe = max(v for k, v in mods.items() if k.startswith("PE") and "drain" not in k)
    out_name, out_lat = max(((k, v) for k, v in mods.items() if k.startswith("fo_")),
                            key=lambda kv: kv[1])
    return _Detail(design.simd_loop, pe, out_name, out_lat,
                   dsp_efficiency(_macs(sizes), pt.pes * pt.simd, pt.latency_cycles),
                   pt.tiling.get("T_i1"))


def run(ctx: StudyContext) -> StudyResult:
    p = ctx.preset
    rows: list[tuple[Cell, ...]] = []
    t7: list[tuple[Cell, ...]] = []
    plots_panels: list[Bars] = []
    heads: list[Headline] = []
    wins_all: list[bool] = []
    everything: list[Point] = []
    ties: list[str] = []
    for label, sizes in p.option("layers"):
        ks = kernel_space(ctx, "cnn.c", {k: str(v) for k, v in sizes.items()})
        res = optima(ctx, ks, designs_of(ks, p.designs), platform=ctx.platform,
                     time_limit_s=ctx.budget(p.option("time_limit_s")), label=label)
        points = [pt for _, _, pt, _ in res]
        everything += points
        top = best(points)
        near = sum(1 for q in points if q.gops >= 0.98 * top.gops)
        ties.append(f"{label}: {near} of {len(points)} designs within 2% of the best")
        for d, m, pt, _ in res:
            det = _detail(d, m, pt, sizes) if pt.tiling else None
            rows.append((label, *point_row(pt), ratio(pt.gops, top.gops),
                         det.dsp_eff if det else None))
            if d.id in TABLE7 and det is not None:
                t7.append((label, d.id, pt.dataflow, det.simd_loop, pt.latency_cycles,
                           ratio(pt.latency_cycles, top.latency_cycles), det.pe_latency,
                           det.out_module, det.out_latency, pt.dsp, det.dsp_eff,
                           det.t_i1, pt.bottleneck, ratio(pt.gops, top.gops)))
                key = f"{label.lower()}_{pt.dataflow.strip('[]').replace(',', '')}"
                heads.append(Headline(f"eff_{key}", f"{label}: DSP efficiency of {pt.dataflow} "
                                      f"({d.id})", det.dsp_eff, "%"))
                heads.append(Headline(f"norm_{key}", f"{label}: {pt.dataflow} ({d.id}) / best "
                                      "design of the layer", ratio(pt.gops, top.gops), "x"))
        flows: dict[str, list[Point]] = {}
        for pt in points:
            flows.setdefault(pt.dataflow, []).append(pt)
        wins_all += [best(v).ordering == BEST_ORDERING for v in flows.values()]
        heads.append(Headline(f"best_{label.lower()}", f"{label}: best design {top.design} "
                              f"({top.bottleneck}-bound)", top.gops, "GOP/s"))
        orderings = list(dict.fromkeys(pt.ordering for pt in points))
        shown = sorted(points, key=lambda q: (orderings.index(q.ordering), points.index(q)))
        plots_panels.append(Bars(
            tuple(q.design for q in shown), (Series("ours", tuple(ratio(q.gops, top.gops) for q in shown),
                                                   tuple(f"{q.gops:.0f}" for q in shown)),),
            "throughput / best design", ylim=(0, 1.35),
            groups=tuple(f"ordering {q.ordering}" for q in shown),
            title=f"{label} ({_describe(sizes)}): best {top.design}, {top.gops:.1f} GOP/s "
                  "(bar labels: GOP/s)"))
    heads.append(Headline("ordering_wins", f"dataflows whose best ordering is {BEST_ORDERING}",
                          sum(wins_all) / max(len(wins_all), 1), "%"))
    table = Table("", ("layer", *POINT_COLUMNS, "normalised", "dsp_efficiency"), tuple(rows))
    table7 = Table("table7", ("layer", "design", "dataflow", "simd_loop", "latency_cycles",
                              "latency_vs_best", "pe_latency", "out_module", "out_latency", "dsp",
                              "dsp_efficiency", "T_i1", "bottleneck", "normalised"), tuple(t7))
    plot = Plot("conv12.png", "VGG16 CONV1 and CONV2: every design at its optimum (Figure 11)",
                tuple(plots_panels))
    notes = [
        "Bottlenecks of the optima: " + bottleneck_summary(q.bottleneck for q in everything) + ".",
        "; ".join(ties) + ".",
    ]
    return result(ctx, NAME, table, heads, plots=(plot,), tables=(table7,), notes=notes,
                  settings={"layers": [label for label, _ in p.option("layers")]})


def _describe(s: Mapping[str, int]) -> str:
    return f"I{s['I']} O{s['O']} {s['H']}x{s['W']} k{s['P']}x{s['Q']}"


STUDY = Study(
    name=NAME,
    title="CNN: 30 designs on VGG16 CONV1 and CONV2 (Figure 11, Table 7)",
    paper="Figure 11 and Table 7 (section 5.4)",
    kernel="kernels/cnn.c, VGG16 conv1-1 and conv1-2",
    designs="all 30 CNN designs (10 dataflows x 3 loop orderings)",
    method="exact optimum of the accurate model per design and layer (branch and bound; the "
           "time limit per design is the unit of --time)",
    full=Preset("full", {}, None, {"layers": _VGG16_CONV12, "time_limit_s": 15.0}),
    quick=Preset("quick", {}, ("hi-ohw.ipq", "oh-ohw.ipq", "oh-hwipq.o"),
                 {"layers": (("CONV1", {"O": 8, "I": 3, "H": 8, "W": 8, "P": 3, "Q": 3}),
                             ("CONV2", {"O": 8, "I": 8, "H": 8, "W": 8, "P": 3, "Q": 3})),
                  "time_limit_s": 5.0}),
    run=run,
    paper_values=(
        PaperValue("eff_conv1_hi", 0.67, "Table 7"),
        PaperValue("eff_conv1_oh", 0.48, "Table 7"),
        PaperValue("eff_conv2_hi", 0.84, "Table 7"),
        PaperValue("eff_conv2_oh", 0.94, "Table 7"),
        PaperValue("norm_conv1_hi", 1.0, "Figure 11 ([h,i] best on CONV1)"),
        PaperValue("norm_conv2_oh", 1.0, "Figure 11 ([o,h] best on CONV2)"),
        PaperValue("ordering_wins", 1.0, "Figure 11, section 5.4"),
    ),
)
