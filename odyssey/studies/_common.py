"""Helpers the studies share: design spaces, exact optima per design, per-tiling metrics.

A :class:`Point` is one design at one tiling with what the studies tabulate: throughput,
latency, resources (also as fractions of the platform's usable budget), PE count, SIMD
lanes, off-chip traffic, the bottleneck module, and how the tiling was found.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from odyssey.codegen.tiling import make_tiling
from odyssey.errors import StudyError
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, KernelSpace, analyse
from odyssey.model import DesignModel, build_model
from odyssey.model.report import model_record
from odyssey.platforms import Platform
from odyssey.runtime import deferred_interrupt
from odyssey.studies.study import StudyContext
from odyssey.tune.engine import Engine, Task, run_tasks
from odyssey.tune.exact.best import FALLBACK_SAMPLES, best_tiling
from odyssey.tune.exact.optimum import OptimumProgress, OptimumResult
from odyssey.tune.tasks import KernelSource, design_model
from odyssey.tune.tasks import kernel_space as kernel_source_space


@dataclass(frozen=True, slots=True)
class Point:
    """A design at a tiling, evaluated with the accurate model (``tiling`` None: nothing
    feasible was found, every metric NaN)."""

    design: str
    dataflow: str
    ordering: str
    tiling: Mapping[str, int] | None
    gops: float
    latency_cycles: float
    dsp: float
    bram18k: float
    dsp_use: float  # dsp / usable DSP
    bram_use: float
    pes: int
    simd: int
    offchip_bytes: float
    bottleneck: str
    status: str = ""  # how it was found: "optimal", "time_limit", "enumerated", ...
    seconds: float = 0.0

    @property
    def tiling_text(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.tiling.items()) if self.tiling else "-"


def kernel_space(ctx: StudyContext, kernel: str, defines: Mapping[str, str], *,
                 max_dim: int = 2) -> KernelSpace:
    """The design space of bundled kernel ``kernel`` (``mm.c``...) at ``defines``."""
    return analyse(load_scop(ctx.kernel(kernel), dict(defines)), max_dim=max_dim)


def designs_of(ks: KernelSpace, ids: Sequence[str] | None) -> list[Design]:
    """The designs ``ids`` (in that order), or every design of the space."""
    if ids is None:
        return list(ks.designs)
    return [ks.design(i) for i in ids]


def preset_designs(ctx: StudyContext, kernel: str = "mm.c") -> tuple[KernelSpace, list[Design]]:
    """The design space of bundled kernel ``kernel`` at the preset's sizes, and the preset's
    designs in it (every design when the preset names none)."""
    ks = kernel_space(ctx, kernel, ctx.preset.defines)
    return ks, designs_of(ks, ctx.preset.designs)


def evaluate_point(design: Design, model: DesignModel, tiling: Mapping[str, int] | None, *,
                   status: str = "", seconds: float = 0.0,
                   accurate: DesignModel | None = None) -> Point:
    """``tiling`` of ``design`` under ``accurate`` (default ``model``) with every metric."""
    m = accurate if accurate is not None else model
    if tiling is None:
        nan = math.nan
        return Point(design.id, design.dataflow, design.ordering, None, nan, nan, nan, nan, nan,
                     nan, 0, 0, nan, "-", status, seconds)
    rec = model_record(m, tiling)
    geo = make_tiling(design, tiling)
    simd = geo.loop(design.simd_loop).t2 if design.simd_loop is not None else 1
    return Point(
        design=design.id, dataflow=design.dataflow, ordering=design.ordering, tiling=dict(tiling),
        gops=float(rec["throughput_gops"]) if rec["feasible"] else math.nan,
        latency_cycles=float(rec["latency_cycles"]), dsp=float(rec["dsp"]),
        bram18k=float(rec["bram18k"]), dsp_use=float(rec["dsp"]) / m.budget["dsp"],
        bram_use=float(rec["bram18k"]) / m.budget["bram18k"], pes=geo.num_pes, simd=simd,
        offchip_bytes=float(rec["offchip_bytes_total"]), bottleneck=str(rec["bottleneck"]),
        status=status, seconds=seconds)


def optimum_point(design: Design, model: DesignModel, *, time_limit_s: float | None,
                  seed: int = 0, accurate: DesignModel | None = None,
                  fallback_samples: int = FALLBACK_SAMPLES,
                  progress: Callable[[OptimumProgress], None] | None = None,
                  ) -> tuple[Point, OptimumResult]:
    """The exact optimum of ``model``, evaluated with ``accurate`` (default ``model``).

    When the branch and bound stops at ``time_limit_s``, the Odyssey tuner also runs
    (``fallback_samples`` samples) and the faster of the two tilings is kept; the status
    then reads ``time_limit, gap G%`` with ``G`` the distance of the kept latency to the
    proven lower bound (``+tuner`` when the tuner's tiling is kept)."""
    start = time.perf_counter()
    tiling, _latency, status, opt = best_tiling(model, time_limit_s=time_limit_s, seed=seed,
                                                fallback_samples=fallback_samples,
                                                progress=progress)
    return evaluate_point(design, model, tiling, status=status,
                          seconds=time.perf_counter() - start, accurate=accurate), opt


Optimum = tuple[Design, DesignModel, Point, OptimumResult]


def iter_optima(ctx: StudyContext, ks: KernelSpace, designs: Iterable[Design], *,
                platform: Platform, variant: str = "accurate",
                time_limit_s: float | None = None) -> Iterator[Optimum]:
    """Per design, in order and one at a time: its model (``variant``) and the exact optimum
    of that model (:func:`optimum_point`, seed ``ctx.seed``) with accurate-model metrics.
    Lazy, so a study can do its own work and report progress after each design. Ctrl-C
    ends the iteration (setting ``ctx.stop``) with the designs finished: during a search at
    once, during the caller's work on a design once that work is done. On a
    distributed ``ctx.engine`` every design's optimum is a task (:func:`optimum_task`), all
    of them run first, then the designs come in order with their models built here."""
    if ctx.engine is not None and ctx.engine.distributed:
        yield from _optima_on_engine(ctx, ctx.engine, ks, list(designs), platform=platform,
                                     variant=variant, time_limit_s=time_limit_s)
        return
    try:
        for d in designs:
            if ctx.stop.is_set():
                return
            model = build_model(ks, d, platform=platform, variant=variant)
            accurate = model if variant == "accurate" else build_model(ks, d, platform=platform)
            point, opt = optimum_point(d, model, time_limit_s=time_limit_s, seed=ctx.seed,
                                       accurate=accurate, progress=_every(ctx, d.id))
            with deferred_interrupt(ctx.stop):  # the caller's work on this design finishes
                yield d, model, point, opt
    except KeyboardInterrupt:
        # in a search (the designs before it make the study's result), or a Ctrl-C during the
        # caller's work that Python delivers only once the default handler is back
        ctx.stop.set()


#: seconds between two progress messages of one design's optimum search in a study
_SAY_EVERY_S = 5.0


def _every(ctx: StudyContext, design_id: str) -> Callable[[OptimumProgress], None]:
    """A progress callback of one optimum search that tells ``ctx.say`` every
    ``_SAY_EVERY_S`` seconds (a design can take minutes)."""
    last = [0.0]

    def say(p: OptimumProgress) -> None:
        if p.seconds - last[0] >= _SAY_EVERY_S:
            last[0] = p.seconds
            best = f"{p.best_latency:,.0f} cycles" if math.isfinite(p.best_latency) else "none yet"
            ctx.say(f"{design_id}: optimum search {p.seconds:.0f} s ({p.phase}), best {best}")
    return say


def optimum_task(src: KernelSource, design_id: str, platform: Platform, variant: str,
                 time_limit_s: float | None, seed: int) -> tuple[Point, OptimumResult]:
    """One design's optimum on a worker of :mod:`odyssey.tune.engine`, as
    :func:`iter_optima` computes it here (the models rebuilt from the kernel source)."""
    model = design_model(src, design_id, platform, variant=variant)
    accurate = model if variant == "accurate" else design_model(src, design_id, platform)
    return optimum_point(kernel_source_space(src).design(design_id), model,
                         time_limit_s=time_limit_s, seed=seed, accurate=accurate)


def _optima_on_engine(ctx: StudyContext, engine: Engine, ks: KernelSpace, designs: list[Design],
                      *, platform: Platform, variant: str,
                      time_limit_s: float | None) -> Iterator[Optimum]:
    src = KernelSource.of(ks)
    tasks = [Task(d.id, optimum_task, (src, d.id, platform, variant, time_limit_s, ctx.seed))
             for d in designs]

    def done(key: str, value: tuple[Point, OptimumResult], n: int, total: int) -> None:
        ctx.say(f"optimum {n}/{total} {key}: {value[0].gops:.1f} GOP/s ({value[1].status}, "
                f"{value[1].seconds:.1f} s) {engine.describe()}")

    run = run_tasks(tasks, engine, on_done=done, on_notice=ctx.say)
    if run.interrupted:
        raise KeyboardInterrupt
    if run.failed:
        raise StudyError("the cluster failed design(s) " + "; ".join(
            f"{key}: {error}" for key, error in run.failed.items()))
    for d in designs:
        point, opt = run.results[d.id]
        yield d, build_model(ks, d, platform=platform, variant=variant), point, opt


def optima(ctx: StudyContext, ks: KernelSpace, designs: Iterable[Design], *, platform: Platform,
           variant: str = "accurate", time_limit_s: float | None = None,
           label: str = "optimum") -> list[Optimum]:
    """:func:`iter_optima` of every design, reporting progress."""
    out = []
    todo = list(designs)
    runs = iter_optima(ctx, ks, todo, platform=platform, variant=variant,
                       time_limit_s=time_limit_s)
    for k, (d, model, point, opt) in enumerate(runs, 1):
        ctx.say(f"{label} {k}/{len(todo)} {d.id}: {point.gops:.1f} GOP/s ({opt.status}, "
                f"{opt.seconds:.1f} s)")
        out.append((d, model, point, opt))
    return out


def best(points: Iterable[Point]) -> Point:
    """The point of highest throughput (NaN counts as nothing)."""
    pts = [p for p in points if math.isfinite(p.gops)]
    return max(pts, key=lambda p: p.gops)


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 and math.isfinite(a) and math.isfinite(b) else math.nan


def geomean(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """Weighted geometric mean of positive values (NaN if any is not positive)."""
    w = list(weights) if weights is not None else [1.0] * len(values)
    if not values or any(not (v > 0) for v in values):
        return math.nan
    return math.exp(sum(wi * math.log(v) for v, wi in zip(values, w, strict=True)) / sum(w))


POINT_COLUMNS = ("design", "dataflow", "ordering", "throughput_gops", "latency_cycles", "dsp",
                 "dsp_use", "bram18k", "bram_use", "pes", "simd", "offchip_mb", "bottleneck",
                 "status", "search_s", "tiling")


def point_row(p: Point) -> tuple[str | int | float | None, ...]:
    """The cells of :data:`POINT_COLUMNS`."""
    return (p.design, p.dataflow, p.ordering, p.gops, p.latency_cycles, p.dsp, p.dsp_use,
            p.bram18k, p.bram_use, p.pes, p.simd, p.offchip_bytes / 1e6, p.bottleneck, p.status,
            round(p.seconds, 2), p.tiling_text)


def bottleneck_summary(names: Iterable[str]) -> str:
    """``"PE 8, C_drain_IO_L3_out 4"``: how many optima each module bounds, most first (ties:
    in the order first met)."""
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))
