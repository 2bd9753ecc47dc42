"""Transfer across the layers of a network: a layer's search starts from what similar
layers found (after the thesis' chapter 4: tune layer by layer, reuse the history of
the same layer type).

* Similarity (:func:`shape_distance`): shapes of the same kind only (conv, pointwise,
  depthwise have distinct computation patterns), Euclidean distance of their log2 sizes.
* Order (:func:`tuning_order`): the unique shapes, grouped by kind, in a greedy
  nearest-neighbour chain from the medoid of each kind, so similar shapes follow each
  other and every shape but the first of its kind has tuned neighbours.
* Seeds (:func:`transfer_seeds`): for each design, the best tilings the ``n_sources``
  nearest tuned shapes found with that design, rescaled to the new sizes
  (:func:`rescale_tiling`) and repaired to legal points, are the tuner's
  ``seed_points`` (proposed before anything else).
* Design order: with ``order_designs``, the designs are tuned in the order of their
  relative throughput on the nearest source shapes (best first); without, in the
  design space's order.

:func:`tune_layers` runs either the transfer search or the from-scratch one and keeps,
per shape and design, the search trace; :mod:`.transfer_report` compares the two.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from odyssey.errors import NetworkError, OdysseyError
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, KernelSpace, analyse
from odyssey.model import build_model
from odyssey.model.design_model import ParamSpec
from odyssey.platforms import Platform
from odyssey.studies.networks import Network, ShapeGroup, unique_shapes
from odyssey.tune import TracePoint, make_tuner, run_tuner
from odyssey.tune.space import SearchSpace

Tiling = tuple[tuple[str, int], ...]
#: nearest tuned shapes a new shape takes seeds and the design order from
N_SOURCES = 2
#: best distinct tilings kept per design and shape for transfer
N_TILINGS = 3


@dataclass(frozen=True, slots=True)
class DesignRun:
    """One design tuned on one shape: its best tilings (best first), the search trace
    (``seconds`` since the design's model was built), the seeds it was given."""

    design: str
    best_gops: float | None
    top_tilings: tuple[Tiling, ...]
    top_gops: tuple[float, ...]
    extents: tuple[tuple[str, int], ...]  # loop -> extent, from the model's root factors
    trace: tuple[TracePoint, ...]
    samples: int
    seconds: float
    seeds: int


@dataclass(frozen=True, slots=True)
class ShapeRun:
    """A unique shape: the designs in the order they were tuned, the source shapes."""

    index: int  # position in unique_shapes(network)
    group: ShapeGroup
    designs: tuple[DesignRun, ...]
    sources: tuple[int, ...]

    @property
    def best_gops(self) -> float:
        return max((d.best_gops or 0.0 for d in self.designs), default=0.0)

    @property
    def best_design(self) -> DesignRun | None:
        runs = [d for d in self.designs if d.best_gops]
        return max(runs, key=lambda d: d.best_gops or 0.0) if runs else None

    @property
    def samples(self) -> int:
        return sum(d.samples for d in self.designs)

    @property
    def seconds(self) -> float:
        return sum(d.seconds for d in self.designs)

    def time_to(self, target: float) -> tuple[int, float] | None:
        """Samples and seconds until the shape's best first reached ``target`` GOP/s, the
        designs searched one after another in run order (None if never)."""
        samples, seconds = 0, 0.0
        for d in self.designs:
            hit = next((p for p in d.trace if p.throughput_gops >= target), None)
            if hit is not None:
                return samples + hit.samples, seconds + hit.seconds
            samples += d.samples
            seconds += d.seconds
        return None


@dataclass(frozen=True, slots=True)
class TransferRun:
    """Every unique shape of ``network`` tuned in ``order`` (indices of unique shapes)."""

    network: Network
    transfer: bool
    order_designs: bool
    method: str
    seed: int
    samples: int | None
    time_s: float | None
    shapes: tuple[ShapeRun, ...]
    interrupted: bool
    seconds: float


def shape_distance(a: ShapeGroup, b: ShapeGroup) -> float:
    """``||log2 sizes(a) - log2 sizes(b)||`` for shapes of the same kind, else infinity."""
    if a.kind != b.kind:
        return math.inf
    return math.dist([math.log2(v) for _, v in a.sizes], [math.log2(v) for _, v in b.sizes])


def tuning_order(groups: Sequence[ShapeGroup]) -> list[int]:
    """Indices of ``groups``: kind by kind (in order of first appearance), each kind a greedy
    nearest-neighbour chain starting from its medoid (the shape of least total distance to
    the others: the most representative one, tuned without history, then each shape after
    its nearest neighbours; outliers such as a 3-channel first layer come last)."""
    order: list[int] = []
    kinds = list(dict.fromkeys(g.kind for g in groups))
    for kind in kinds:
        left = [k for k, g in enumerate(groups) if g.kind == kind]
        cur = min(left, key=lambda k: (sum(shape_distance(groups[k], groups[j]) for j in left),
                                       k))
        while True:
            order.append(cur)
            left.remove(cur)
            if not left:
                break
            tuned = order[-1]
            cur = min(left, key=lambda k: (shape_distance(groups[tuned], groups[k]), k))
    return order


def rescale_tiling(
    tiling: Mapping[str, int], *, source_extents: Mapping[str, int], space: SearchSpace,
    space_loops: Sequence[str], proportional: bool = False,
) -> dict[str, int]:
    """A tiling found on one problem size, moved to ``space`` (same design, other sizes).

    Per loop of extent ``N -> N'`` (ratio ``r = N'/N``): a space loop keeps its PE count
    ``T1/T2`` and scales the per-PE factor, ``T2' = round(r T2)``, ``T1' = PEs T2'``; any
    other loop keeps its inner factor (SIMD lanes or latency hiding) and scales the
    array-partitioning factor to the nearest multiple of it, ``T1' = T2 round(r T1/T2)``.
    ``proportional`` instead scales every factor by ``r``. Factors the source lacks start
    untiled (root = extent, inner = 1). The result is repaired to the nearest legal point
    (:meth:`SearchSpace.repair`), so it is always legal.
    """
    g = [1] * space.dim
    for ch in space.chains:
        g[ch.columns[0]] = ch.extent
        src = [tiling.get(space.names[c]) for c in ch.columns]
        n_old = source_extents.get(ch.loop)
        if any(v is None for v in src) or not n_old:
            continue
        r = ch.extent / n_old
        vals = [int(v) for v in src]  # type: ignore[arg-type]
        if proportional or len(vals) != 2:
            new = [max(1, round(v * r)) for v in vals]
        elif ch.loop in space_loops:
            pes = max(1, vals[0] // vals[1])
            inner = max(1, round(vals[1] * r))
            if pes * inner > ch.extent:
                pes = min(pes, ch.extent)
                inner = max(1, ch.extent // pes)
            new = [pes * inner, inner]
        else:
            inner = vals[1]
            new = [inner * max(1, round(vals[0] * r / inner)), inner]
        for col, v in zip(ch.columns, new, strict=True):
            g[col] = v
    return space.repair(space.to_point(g))


def transfer_seeds(
    design: Design, space: SearchSpace, sources: Sequence[ShapeRun], *,
    n_tilings: int = N_TILINGS,
) -> list[dict[str, int]]:
    """Seeds for ``design`` on a new shape: each source's best tilings of that design,
    rescaled both ways (:func:`rescale_tiling`), deduplicated, nearest source first."""
    out: list[dict[str, int]] = []
    seen: set[tuple[int, ...]] = set()
    for src in sources:
        run = next((d for d in src.designs if d.design == design.id), None)
        if run is None:
            continue
        for tiling in run.top_tilings[:n_tilings]:
            for proportional in (False, True):
                p = rescale_tiling(dict(tiling), source_extents=dict(run.extents), space=space,
                                   space_loops=design.space_loops, proportional=proportional)
                key = space.genome(p)
                if key not in seen:
                    seen.add(key)
                    out.append(p)
    return out


def design_order(designs: Sequence[Design], sources: Sequence[ShapeRun]) -> list[Design]:
    """``designs`` by their mean throughput relative to each source's best (best first;
    averaging over the sources damps one search's luck); designs no source tuned keep
    their order, after the others."""
    scores: dict[str, list[float]] = {}
    for src in sources:
        top = src.best_gops
        for d in src.designs:
            if top > 0:
                scores.setdefault(d.design, []).append((d.best_gops or 0.0) / top)
    score = {k: sum(v) / len(v) for k, v in scores.items()}
    known = sorted((d for d in designs if d.id in score), key=lambda d: -score[d.id])
    return known + [d for d in designs if d.id not in score]


ProgressFn = Callable[[int, int, str, int, int, str], None]


def tune_layers(
    network: Network, *, kernel: str | Path, platform: Platform, dw_kernel: str | Path | None = None,
    design: str = "all", samples: int | None = None, time_s: float | None = None, seed: int = 0,
    method: str = "evolutionary", transfer: bool = True, seed_tilings: bool = True,
    order_designs: bool = True, n_sources: int = N_SOURCES, progress: ProgressFn | None = None,
) -> TransferRun:
    """Tune every unique shape of ``network`` in :func:`tuning_order`, from scratch
    (``transfer=False``: designs in the design space's order, no seeds) or with transfer
    from the ``n_sources`` nearest tuned shapes: ``order_designs`` tunes the designs in
    :func:`design_order`, ``seed_tilings`` gives each design its :func:`transfer_seeds`.

    ``samples``/``time_s`` are per design and shape. ``progress(shape, shapes, layers,
    design, designs, design_id)`` is called before each design. A KeyboardInterrupt ends
    the run with the shapes finished so far.
    """
    if samples is None and time_s is None:
        raise NetworkError("tune_layers needs a budget: samples, time_s, or both")
    dw = Path(dw_kernel) if dw_kernel is not None else Path(kernel).with_name("dwconv.c")
    groups = unique_shapes(network)
    order = tuning_order(groups)
    done: dict[int, ShapeRun] = {}
    runs: list[ShapeRun] = []
    start = time.perf_counter()
    interrupted = False
    try:
        for n, k in enumerate(order, 1):
            group = groups[k]
            path = dw if group.kind == "depthwise" else Path(kernel)
            ks = analyse(load_scop(path, group.first.defines()), max_dim=2)
            designs = ([d for d in ks.designs if len(d.space_loops) <= 2] if design == "all"
                       else [ks.design(design)])
            near = sorted((j for j in done if math.isfinite(shape_distance(groups[j], group))),
                          key=lambda j: (shape_distance(groups[j], group), j))[:n_sources]
            sources = [done[j] for j in near] if transfer else []
            if sources and order_designs:
                designs = design_order(designs, sources)
            results = []
            for j, d in enumerate(designs, 1):
                if progress is not None:
                    progress(n, len(order), ",".join(group.names), j, len(designs), d.id)
                got = _tune_design(ks, d, platform, sources if seed_tilings else [],
                                   method=method, seed=seed, samples=samples, time_s=time_s)
                if got is not None:
                    results.append(got)
            run = ShapeRun(k, group, tuple(results), tuple(near) if sources else ())
            done[k] = run
            runs.append(run)
    except KeyboardInterrupt:
        interrupted = True
    return TransferRun(network, transfer, transfer and order_designs, method, seed, samples,
                       time_s, tuple(runs), interrupted, time.perf_counter() - start)


def _tune_design(
    ks: KernelSpace, design: Design, platform: Platform, sources: Sequence[ShapeRun], *,
    method: str, seed: int, samples: int | None, time_s: float | None,
) -> DesignRun | None:
    """Tune one design, seeded from ``sources``; None if its model cannot be built. The
    model build and the seeds' rescaling count in the run's seconds."""
    begin = time.perf_counter()
    try:
        model = build_model(ks, design, platform=platform, variant="accurate")
        tuner = make_tuner(method, model, seed=seed)
    except OdysseyError:
        return None
    seeds = transfer_seeds(design, SearchSpace(model.params), sources) if sources else []
    if seeds:
        tuner.seed_points(seeds)
    built = time.perf_counter() - begin
    result = run_tuner(tuner, model, samples=samples, time_s=time_s)
    best: dict[Tiling, float] = {}
    for t in sorted((t for t in result.trials if t.feasible), key=lambda t: -t.throughput_gops):
        best.setdefault(tuple((k, int(v)) for k, v in t.tiling.items()), t.throughput_gops)
        if len(best) >= N_TILINGS:
            break
    trace = tuple(TracePoint(p.samples, built + p.seconds, p.throughput_gops)
                  for p in result.trace)
    return DesignRun(design.id, result.best.throughput_gops if result.best else None,
                     tuple(best), tuple(best.values()), _extents(model.params), trace,
                     result.samples, built + result.seconds, len(seeds))


def _extents(params: Sequence[ParamSpec]) -> tuple[tuple[str, int], ...]:
    return tuple((p.loop, p.upper) for p in params if p.divides is None)
