"""Study `tuners`: the tuner benchmark (section 5.2, Figures 7-9) as a study.

Runs :func:`odyssey.studies.tuner_bench.run_bench` (every method of
:data:`odyssey.tune.TUNERS` on every MM design, several seeds, one time budget each,
normalised by the exact optimum) and reports it in the study format. The full preset is
the benchmark's own ``FULL`` setting, the paper's (18 designs x 12 methods x 5 seeds x
5 s: about 90 minutes); ``scripts/bench_tuners.py`` runs the same benchmark and writes
``docs/results/tuners/``.
"""

from __future__ import annotations

import dataclasses
import statistics

from odyssey.plots import Bars, Curve, Lines, Plot, RefLine, Series
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
from odyssey.studies.tuner_bench import FULL, BenchConfig, BenchProgress, BenchResult, run_bench

NAME = "tuners"


def _config(ctx: StudyContext) -> BenchConfig:
    p = ctx.preset
    cfg: BenchConfig = p.option("config")
    cfg = dataclasses.replace(cfg, kernel=ctx.kernel("mm.c"), platform=ctx.platform.name)
    if ctx.time_s is not None:
        cfg = dataclasses.replace(cfg, time_s=ctx.time_s, at_seconds=tuple(
            sorted({s for s in cfg.at_seconds if s < ctx.time_s} | {ctx.time_s})))
    return cfg


def _convergence(res: BenchResult, design: str) -> tuple[Curve, ...]:
    """Median best-so-far fraction of the optimum against samples, per method."""
    opt = res.optima[design]
    shown = {m: res.trace_runs(m, design, "samples") for m in res.config.methods}
    top = max((r.samples for runs in shown.values() for r in runs), default=1)
    grid = sorted({int(round(top ** (k / 60))) for k in range(61)})
    curves = []
    for m, runs in shown.items():
        if not runs:
            continue
        med = [statistics.median((r.best_at(samples=n) or 0.0) / opt for r in runs) for n in grid]
        curves.append(Curve(m, tuple(map(float, grid)), tuple(med),
                            style="-" if m in ("odyssey", "evolutionary") else "--"))
    return tuple(curves)


def run(ctx: StudyContext) -> StudyResult:
    cfg = _config(ctx)

    def report(p: BenchProgress) -> None:
        ctx.say(f"[{p.done}/{p.total}] {p.design} {p.method} seed {p.seed}: {p.fraction:.1%} "
                "of the optimum")

    res = run_bench(cfg, progress=report, engine=ctx.engine, on_notice=ctx.say)
    records = res.records()
    table = Table("", ("method", "design", "seed", "budget", "best_gops", "fraction"), tuple(
        (r.method, r.design, r.seed, r.budget, r.best_gops, r.fraction) for r in records))
    budgets = list(dict.fromkeys(r.budget for r in records))
    summary: list[tuple[Cell, ...]] = [
        (m, *(res.median_fraction(m, b) for b in budgets)) for m in cfg.methods]
    last = f"{cfg.at_seconds[-1]:g}s"
    top = max(res.optima, key=lambda d: res.optima[d])
    per_design = list(res.per_design("odyssey", last).values())
    heads = [
        Headline("odyssey_median", f"Odyssey tuner, median over designs at {last}: fraction of "
                 "the optimum", res.median_fraction("odyssey", last) or 0.0, "%"),
        Headline("odyssey_worst", f"Odyssey tuner, worst design at {last}",
                 min((v for v in per_design if v is not None), default=0.0), "%"),
    ]
    samples = [b for b in budgets if b.endswith("samples")]
    others = [m for m in cfg.methods if m not in ("odyssey", "evolutionary")]
    if samples:
        mid = "3000 samples" if "3000 samples" in samples else samples[-1]
        heads.append(Headline("odyssey_top_samples", f"Odyssey tuner on {top} (highest optimum) "
                              f"at {mid}", res.per_design("odyssey", mid).get(top, 0.0), "%"))
        if others:
            rival = max(others, key=lambda m: res.per_design(m, mid).get(top, 0.0))
            heads.append(Headline("best_baseline", f"best baseline on {top} at {mid} ({rival})",
                                  res.per_design(rival, mid).get(top, 0.0), "%"))
    plots = (
        Plot("quality.png", f"Best design found within {last}, fraction of the exact optimum "
             "(Figure 7)", (Bars(tuple(cfg.methods), (Series(
                 "median over designs and seeds",
                 tuple(res.median_fraction(m, last) or 0.0 for m in cfg.methods)),),
                 "fraction of the optimum", xlabel="method", ylim=(0, 1.35),
                 refs=(RefLine(0.95, "paper: Odyssey > 95% of the optimum (5 min)"),
                       RefLine(0.90, "paper: Odyssey > 90% within 5 s", style=":"))),)),
        Plot("convergence.png", f"Best-so-far on {top} against samples (Figure 8)", (
            Lines(_convergence(res, top), "samples evaluated (log scale)",
                  "best / exact optimum (median over seeds)", xlog=True, ylim=(0, 1.05),
                  refs=(RefLine(0.93, "paper: Odyssey 93% after 3,000 samples"),)),)),
    )
    notes = [f"Benchmark setting: {len(res.optima)} designs of MM {cfg.size_label}, methods "
             f"{', '.join(cfg.methods)}, seeds {list(cfg.seeds)}, {cfg.time_s:g} s per run, "
             "single-threaded."]
    return result(ctx, NAME, table, heads, plots=plots,
                  tables=(Table("summary", ("method", *budgets), tuple(summary)),), notes=notes,
                  settings={"time_s": cfg.time_s, "seeds": list(cfg.seeds)})


STUDY = Study(
    name=NAME,
    title="Tuner benchmark: every search method on every MM design (Figures 7-9)",
    paper="Figures 7, 8 and 9 (section 5.2)",
    kernel="kernels/mm.c",
    designs="all 18 MM designs",
    method="odyssey.studies.tuner_bench.run_bench: every tuner x design x seed for a fixed "
           "time (full: 13 methods x 5 seeds x 5 s, about 90 min, plus a run per sample checkpoint "
           "of the methods that adapt to their budget; --time sets the seconds per run)",
    full=Preset("full", dict(FULL.sizes), FULL.designs, {"config": FULL}),
    quick=Preset("quick", {"I": 128, "J": 128, "K": 128}, ("ij-ij.k",), {"config": BenchConfig(
        sizes={"I": 128, "J": 128, "K": 128}, designs=("ij-ij.k",),
        methods=("random", "evolutionary", "odyssey"), seeds=(0,), time_s=0.3,
        at_seconds=(0.3,), at_samples=(300,))}),
    run=run,
    paper_values=(PaperValue("odyssey_worst", 0.90, "Figure 9 (5 s)"),
                  PaperValue("odyssey_top_samples", 0.93, "Figure 8"),
                  PaperValue("best_baseline", 0.66, "Figure 8 (simulated annealing, samples)")),
)
