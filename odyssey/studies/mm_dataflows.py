"""Study `mm-dataflows`: every MM dataflow and loop ordering at its exact optimum.

The paper's Figure 10 (normalised throughput and DSP use of the 18 MM 1024^3 designs)
and Table 6 (the three orderings of dataflow ``[i]``: latency, PE count and the BRAM of
each I/O module). Each design's tiling is the exact optimum of the accurate model
(:func:`odyssey.tune.exact.optimum.find_optimum`); throughput is normalised to the best design.
"""

from __future__ import annotations

from odyssey.plots import Bars, Plot, Series
from odyssey.studies._common import (
    POINT_COLUMNS,
    Optimum,
    Point,
    best,
    bottleneck_summary,
    optima,
    point_row,
    preset_designs,
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

NAME = "mm-dataflows"
#: the ordering the paper finds dominant, and the dataflow of Table 6
BEST_ORDERING = "<[i,j],[k]>"
TABLE6_DATAFLOW = "[i]"


def run(ctx: StudyContext) -> StudyResult:
    p = ctx.preset
    ks, designs = preset_designs(ctx)
    rows = optima(ctx, ks, designs, platform=ctx.platform,
                  time_limit_s=ctx.budget(p.option("time_limit_s")))
    points = [pt for _, _, pt, _ in rows]
    top = best(points)
    # the paper's order: grouped by loop ordering, dataflows within
    orderings = list(dict.fromkeys(pt.ordering for pt in points))
    shown = sorted(points, key=lambda pt: (orderings.index(pt.ordering), points.index(pt)))
    norm = {pt.design: ratio(pt.gops, top.gops) for pt in points}
    table = Table("", (*POINT_COLUMNS, "normalised"),
                  tuple((*point_row(pt), norm[pt.design]) for pt in shown))
    t6, t6_heads = _table6(rows)
    by_flow: dict[str, list[Point]] = {}
    for pt in points:
        by_flow.setdefault(pt.dataflow, []).append(pt)
    wins = [fl for fl, pts in by_flow.items() if best(pts).ordering == BEST_ORDERING]
    ij = [pt for pt in points if pt.ordering == BEST_ORDERING]
    heads = [
        Headline("best_gops", f"best design ({top.design}) throughput", top.gops, "GOP/s"),
        Headline("best_dsp_use", f"DSP use of the best design ({top.design})", top.dsp_use, "%"),
        Headline("ordering_wins", f"dataflows whose best ordering is {BEST_ORDERING}",
                 len(wins) / len(by_flow), "%"),
        Headline("ij_norm", "normalised throughput of ij-ij.k", norm.get("ij-ij.k", float("nan")), "x"),
        Headline("worst_norm", f"worst design ({min(points, key=lambda q: q.gops).design}), normalised",
                 min(norm.values()), "x"),
        *t6_heads,
    ]
    cats = tuple(pt.design for pt in shown)
    groups = tuple(f"ordering {pt.ordering}" for pt in shown)
    plot = Plot("throughput_dsp.png", f"MM {_size(ctx)}: every design at its exact optimum "
                f"(Figure 10)", (
                    Bars(cats, (Series("ours", tuple(norm[pt.design] for pt in shown),
                                       tuple(f"{pt.gops:.0f}" for pt in shown)),),
                         "throughput / best design", ylim=(0, 1.35), groups=groups,
                         title="(a) normalised throughput (bar labels: GOP/s), coloured by loop "
                         "ordering"),
                    Bars(cats, (Series("ours", tuple(pt.dsp_use for pt in shown)),),
                         "DSP used / usable DSP", ylim=(0, 1.35), xlabel="design", groups=groups,
                         title="(b) DSP use (usable = 70% of the device)"),
                ))
    notes = [
        f"{sum(o.status == 'optimal' for *_, o in rows)} of {len(points)} optima are proven "
        f"optimal; the search took {sum(o.seconds for *_, o in rows):.0f} s in all.",
        f"{len(wins)} of {len(by_flow)} dataflows have their best design with the ordering "
        f"{BEST_ORDERING} ({', '.join(sorted(wins)) or 'none'}); among those designs the best "
        f"is {best(ij).design if ij else '-'}.",
        f"{sum(is_output_bound(pt) for pt in points)} of {len(points)} optima are bound by the "
        "output path (the C drain chain, the L3 writer or the reader of partial sums); "
        f"bottlenecks: {bottleneck_summary(pt.bottleneck for pt in points)}.",
        "Designs within 3% of the best: "
        + ", ".join(f"{pt.design} ({pt.gops:.1f} GOP/s, {pt.pes} PEs x SIMD {pt.simd}, "
                    f"{pt.dsp_use:.0%} of the DSPs, {pt.bottleneck})"
                    for pt in sorted(shown, key=lambda q: -q.gops) if norm[pt.design] >= 0.97) + ".",
    ]
    return result(ctx, NAME, table, heads, plots=(plot,), tables=(t6,), notes=notes,
                  settings={"sizes": dict(p.sizes), "designs": len(points)})


def is_output_bound(pt: Point) -> bool:
    """Whether the point's bottleneck is on the output's path (drain, L3 writer, partial-sum reader)."""
    return pt.bottleneck.startswith(("C_drain", "C_IO_L3"))


def _table6(rows: list[Optimum]) -> tuple[Table, list[Headline]]:
    """Table 6: the orderings of dataflow [i] with the BRAM of each buffer."""
    sel = [(d, m, pt) for d, m, pt, _ in rows if pt.dataflow == TABLE6_DATAFLOW and pt.tiling]
    if not sel:
        return Table("table6", ("design",), ()), []
    fastest = min(pt.latency_cycles for _, _, pt in sel)
    fewest = min(pt.pes for _, _, pt in sel)
    out = []
    lat: dict[str, float] = {}
    pes: dict[str, float] = {}
    for _d, m, pt in sel:
        assert pt.tiling is not None
        r = m.evaluate_one(pt.tiling)
        bram = {k[len("bram:"):]: float(v) for k, v in r.items() if k.startswith("bram:")}
        total = max(pt.bram18k, 1.0)
        share = {
            "A": bram.get("A_block", 0.0), "B": bram.get("B_block", 0.0),
            "C": bram.get("C_partial_block", 0.0), "acc": bram.get("acc", 0.0),
        }
        lat[pt.ordering] = pt.latency_cycles / fastest
        pes[pt.ordering] = pt.pes / fewest
        out.append((pt.design, pt.ordering, pt.latency_cycles, lat[pt.ordering], pt.pes,
                    pes[pt.ordering], pt.bram18k, share["A"] / total, share["B"] / total,
                    share["C"] / total, share["acc"] / total, pt.bottleneck))
    table = Table("table6", ("design", "ordering", "latency_cycles", "latency_ratio", "pes",
                             "pe_ratio", "bram18k", "bram_A_io", "bram_B_io",
                             "bram_C_partial_io", "bram_pe_acc", "bottleneck"), tuple(out))
    heads = []
    for key, ordering in (("t6_lat_jk", "<[j,k],[i]>"), ("t6_lat_ik", "<[i,k],[j]>")):
        if ordering in lat:
            heads.append(Headline(key, f"Table 6: latency of [i] {ordering} / fastest [i]",
                                  lat[ordering], "x"))
    if BEST_ORDERING in pes:
        heads.append(Headline("t6_pe_ij", f"Table 6: PEs of [i] {BEST_ORDERING} / fewest",
                              pes[BEST_ORDERING], "x"))
    return table, heads


def _size(ctx: StudyContext) -> str:
    s = ctx.preset.sizes
    return "x".join(str(s[k]) for k in ("I", "J", "K"))


STUDY = Study(
    name=NAME,
    title="MM: dataflows and loop orderings at their optimum (Figure 10, Table 6)",
    paper="Figure 10 and Table 6 (section 5.3)",
    kernel="kernels/mm.c",
    designs="all 18 designs (6 dataflows x 3 loop orderings)",
    method="exact optimum of the accurate model per design (branch and bound, "
           "`odyssey.tune.exact.optimum`)",
    full=Preset("full", {"I": 1024, "J": 1024, "K": 1024}, None, {"time_limit_s": 120.0}),
    quick=Preset("quick", {"I": 64, "J": 64, "K": 64},
                 ("i-ij.k", "i-ik.j", "i-jk.i", "ij-ij.k"), {"time_limit_s": 60.0}),
    run=run,
    paper_values=(
        PaperValue("ij_norm", 1.0, "Figure 10"),
        PaperValue("best_dsp_use", 1.0, "Table 3 (Odyssey's design)"),
        PaperValue("ordering_wins", 1.0, "Figure 10, section 5.3"),
        PaperValue("t6_lat_jk", 1.65, "Table 6"),
        PaperValue("t6_lat_ik", 1.64, "Table 6"),
        PaperValue("t6_pe_ij", 1.66, "Table 6"),
    ),
)
