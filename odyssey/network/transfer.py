"""Transfer across the layers of a network: a layer's search starts from what similar
layers found (after the thesis' chapter 4: tune layer by layer, reuse the history of
the same layer type).

* Similarity (:func:`shape_distance`): shapes of the same kind only (conv, pointwise,
  depthwise have distinct computation patterns), Euclidean distance of their log2 sizes.
* Order (:func:`tuning_order`): the unique shapes, grouped by kind, in a greedy
  nearest-neighbour chain from the medoid of each kind, so similar shapes follow each
  other and every shape but the first of its kind has tuned neighbours.
* Seeds (:func:`transfer_seeds`): for each design, the best tilings the ``n_sources``
  nearest tuned shapes found with that design, rescaled to the new sizes in three ways
  (:func:`rescale_tiling`: with the size ratio, proportionally, and the same tiles) and
  repaired to legal points, are the tuner's ``seed_points`` (proposed before anything
  else).
* Predicted design order (:func:`design_order`): with ``order_designs``, the designs by
  their relative throughput on the nearest source shapes (best first); without, the
  design space's order.
* Race (``racing``, :func:`.transfer_race.race`): the designs predicted at
  :data:`FIELD_SCORE` of the best or better (:func:`field_size`) race, the others are
  searched after them; every racing design is probed for a small share
  of its budget (its seeds first) in the predicted order, the best go on by successive
  halving, then every design completes its budget, in the order of the better of its rank
  by best throughput so far and its predicted rank (:func:`.transfer_race.completion`). The
  sources' ranking says where to look first and which cut designs to finish first; the
  probe, on the new shape itself, decides who goes on.

:func:`tune_layers` runs either the transfer search or the from-scratch one and keeps,
per shape and design, the search trace and the order the stretches of search ran in;
:mod:`.transfer_report` compares the two.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from odyssey.errors import NetworkError
from odyssey.frontend import load_scop
from odyssey.mapping.space import Design, analyse
from odyssey.network.networks import Network, ShapeGroup, kernel_for, unique_shapes
from odyssey.network.transfer_race import (
    N_TILINGS,
    RUNGS,
    DesignRun,
    Slice,
    Tiling,
    race,
    start_search,
)
from odyssey.platforms import Platform
from odyssey.tune import Point
from odyssey.tune.space import SearchSpace

__all__ = [
    "FIELD_SCORE", "N_SOURCES", "N_TILINGS", "RESCALINGS", "SCRATCH", "DesignRun", "Mode",
    "ShapeRun", "Slice", "Tiling", "TransferProgress", "TransferRun", "design_order", "design_scores", "field_size",
    "rescale_tiling", "shape_distance", "transfer_seeds",
    "tune_layers", "tune_together", "tuning_order",
]

#: nearest tuned shapes a new shape takes seeds and the design order from
N_SOURCES = 2
#: designs predicted at this share of the best score or better race; the others (on the
#: VGG16 and ResNet-50 shapes where a single design reaches 99% of the best, that design
#: was predicted at 0.95 or better) are searched after the race
FIELD_SCORE = 0.8


@dataclass(frozen=True, slots=True)
class ShapeRun:
    """A unique shape: its designs (in the order they were first searched), the source
    shapes, and the stretches of search in the order they ran (empty: each design searched
    whole, one after another)."""

    index: int  # position in unique_shapes(network)
    group: ShapeGroup
    designs: tuple[DesignRun, ...]
    sources: tuple[int, ...]
    schedule: tuple[Slice, ...] = ()

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

    @property
    def slices(self) -> tuple[Slice, ...]:
        return self.schedule or tuple(Slice(k, d.samples, d.seconds)
                                      for k, d in enumerate(self.designs))

    def time_to(self, target: float) -> tuple[int, float] | None:
        """Samples and seconds until the shape's best first reached ``target`` GOP/s, every
        stretch of search counted in the order it ran (None if never)."""
        hit = self._first_to(target)
        return None if hit is None else hit[:2]

    def first_to(self, target: float) -> DesignRun | None:
        """The design whose search first reached ``target`` GOP/s (None if none did)."""
        hit = self._first_to(target)
        return None if hit is None else self.designs[hit[2]]

    def _first_to(self, target: float) -> tuple[int, float, int] | None:
        samples, seconds = 0, 0.0
        at: dict[int, tuple[int, float]] = {}  # each design's totals so far
        for sl in self.slices:
            s0, t0 = at.get(sl.design, (0, 0.0))
            at[sl.design] = (sl.samples, sl.seconds)
            # the trace only rises, so its first point at the target is the one that counts
            hit = next((p for p in self.designs[sl.design].trace if p.throughput_gops >= target),
                       None)
            if hit is not None and hit.samples <= sl.samples:
                return samples + hit.samples - s0, seconds + hit.seconds - t0, sl.design
            samples += sl.samples - s0
            seconds += sl.seconds - t0
        return None


@dataclass(frozen=True, slots=True)
class TransferRun:
    """Every unique shape of ``network`` tuned in ``order`` (indices of unique shapes)."""

    network: Network
    transfer: bool
    order_designs: bool
    racing: bool
    method: str
    seed: int
    samples: int | None
    time_s: float | None
    shapes: tuple[ShapeRun, ...]
    interrupted: bool
    seconds: float
    history: tuple[ShapeRun, ...] = ()  # shapes of earlier runs it could take sources from


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


#: how :func:`rescale_tiling` moves a tiling to other sizes
Rescale = Literal["ratio", "proportional", "same"]
RESCALINGS: tuple[Rescale, ...] = ("ratio", "proportional", "same")


def rescale_tiling(
    tiling: Mapping[str, int], *, source_extents: Mapping[str, int], space: SearchSpace,
    space_loops: Sequence[str], how: Rescale = "ratio",
) -> dict[str, int]:
    """A tiling found on one problem size, moved to ``space`` (same design, other sizes).

    Per loop of extent ``N -> N'`` (ratio ``r = N'/N``), ``how``:

    * ``"ratio"``: a space loop keeps its PE count ``T1/T2`` and scales the per-PE factor,
      ``T2' = round(r T2)``, ``T1' = PEs T2'``; any other loop keeps its inner factor (SIMD
      lanes or latency hiding) and scales the array-partitioning factor to the nearest
      multiple of it, ``T1' = T2 round(r T1/T2)``;
    * ``"proportional"``: every factor scaled by ``r``;
    * ``"same"``: every factor kept (the same tiles, so about the same on-chip buffers and
      PEs: on a larger layer the scaled tilings can outgrow the BRAM, these cannot).

    Factors the source lacks start untiled (root = extent, inner = 1). The result is
    repaired to the nearest legal point (:meth:`SearchSpace.repair`; factors above the new
    extent are cut to it), so it is always legal.
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
        if how == "same":
            new = [min(v, ch.extent) for v in vals]
        elif how == "proportional" or len(vals) != 2:
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
    rescaled each way of :data:`RESCALINGS` (:func:`rescale_tiling`), deduplicated, nearest
    source first."""
    out: list[dict[str, int]] = []
    seen: set[tuple[int, ...]] = set()
    for src in sources:
        run = next((d for d in src.designs if d.design == design.id), None)
        if run is None:
            continue
        for tiling in run.top_tilings[:n_tilings]:
            for how in RESCALINGS:
                p = rescale_tiling(dict(tiling), source_extents=dict(run.extents), space=space,
                                   space_loops=design.space_loops, how=how)
                key = space.genome(p)
                if key not in seen:
                    seen.add(key)
                    out.append(p)
    return out


def design_scores(sources: Sequence[ShapeRun]) -> dict[str, float]:
    """Each design's mean throughput relative to each source's best (averaging over the
    sources damps one search's luck), for the designs some source tuned."""
    scores: dict[str, list[float]] = {}
    for src in sources:
        top = src.best_gops
        for d in src.designs:
            if top > 0:
                scores.setdefault(d.design, []).append((d.best_gops or 0.0) / top)
    return {k: sum(v) / len(v) for k, v in scores.items()}


def design_order(designs: Sequence[Design], sources: Sequence[ShapeRun]) -> list[Design]:
    """``designs`` by :func:`design_scores` (best first); designs no source tuned keep
    their order, after the others."""
    score = design_scores(sources)
    known = sorted((d for d in designs if d.id in score), key=lambda d: -score[d.id])
    return known + [d for d in designs if d.id not in score]


def field_size(designs: Sequence[Design], sources: Sequence[ShapeRun], *,
               floor: float = FIELD_SCORE) -> int:
    """How many of ``designs`` (in :func:`design_order`) are predicted at ``floor`` of the
    best score or better: the race's field (:func:`.transfer_race.race`)."""
    score = design_scores(sources)
    top = max((score[d.id] for d in designs if d.id in score), default=0.0)
    return sum(1 for d in designs if d.id in score and score[d.id] >= floor * top)


@dataclass(frozen=True, slots=True)
class TransferProgress:
    """Where a run is: shape ``shape`` of ``shapes`` (1-based; ``layers`` its layer names),
    design ``design`` of ``designs`` on it, the shape's best GOP/s so far and the seconds
    since the run started (its own turns only)."""

    shape: int
    shapes: int
    layers: str
    design: int
    designs: int
    design_id: str
    best_gops: float
    seconds: float


ProgressFn = Callable[[TransferProgress], None]


@dataclass(frozen=True, slots=True)
class Mode:
    """How a run tunes the shapes: from scratch (``transfer=False``: the designs one after
    another in the design space's order, no seeds) or with transfer from the nearest tuned
    shapes, where ``order_designs`` predicts the designs' order (:func:`design_order`),
    ``seed_tilings`` gives each design its :func:`transfer_seeds` and ``racing`` searches
    the designs by successive halving from the predicted order (:func:`.transfer_race.race`)
    instead of one after another; with ``field``, only the designs predicted near the best
    race (:func:`field_size`). ``seed`` seeds the tuner."""

    transfer: bool = True
    seed_tilings: bool = True
    order_designs: bool = True
    racing: bool = True
    seed: int = 0
    field: bool = True  # race only the designs predicted near the best (:func:`field_size`)


SCRATCH = Mode(transfer=False)


def tune_layers(
    network: Network, *, kernel: str | Path, platform: Platform, dw_kernel: str | Path | None = None,
    design: str = "all", samples: int | None = None, time_s: float | None = None, seed: int = 0,
    method: str = "evolutionary", transfer: bool = True, seed_tilings: bool = True,
    order_designs: bool = True, racing: bool = True, n_sources: int = N_SOURCES,
    history: Sequence[ShapeRun] = (), progress: ProgressFn | None = None,
) -> TransferRun:
    """Tune every unique shape of ``network`` in :func:`tuning_order` in one :class:`Mode`
    (the keyword arguments of the same names); see :func:`tune_together`."""
    mode = Mode(transfer, seed_tilings, order_designs, racing, seed)
    (run,) = tune_together(network, [mode], kernel=kernel, platform=platform,
                           dw_kernel=dw_kernel, design=design, samples=samples, time_s=time_s,
                           method=method, n_sources=n_sources, history=history,
                           progress=[progress])
    return run


def tune_together(
    network: Network, modes: Sequence[Mode], *, kernel: str | Path, platform: Platform,
    dw_kernel: str | Path | None = None, design: str = "all", samples: int | None = None,
    time_s: float | None = None, method: str = "evolutionary", n_sources: int = N_SOURCES,
    history: Sequence[ShapeRun] = (), progress: Sequence[ProgressFn | None] | None = None,
) -> list[TransferRun]:
    """One run per mode of every unique shape of ``network`` in :func:`tuning_order`, the
    runs taking turns shape by shape (so their wall times, on a shared machine, are measured
    under about the same load). With transfer, a shape takes its seeds and predicted design
    order from the ``n_sources`` nearest shapes its own run has tuned or ``history`` holds
    (shapes of earlier runs, :mod:`.transfer_history`); a shape without one (the first of its
    kind, without a history) is tuned as from scratch.

    ``samples``/``time_s`` are per design and shape. ``progress[k]`` is called with a
    :class:`TransferProgress` before each stretch of search of run ``k``. A
    KeyboardInterrupt ends the runs, each with the shapes it finished (the run whose turn it
    was has one fewer than those before it; a comparison takes the shapes in both).
    """
    if samples is None and time_s is None:
        raise NetworkError("tune_layers needs a budget: samples, time_s, or both")
    shows = list(progress) if progress is not None else [None] * len(modes)
    gens = [_tune_shapes(network, m, kernel=kernel, platform=platform, dw_kernel=dw_kernel,
                         design=design, samples=samples, time_s=time_s, method=method,
                         n_sources=n_sources, history=tuple(history) if m.transfer else (),
                         progress=show)
            for m, show in zip(modes, shows, strict=True)]
    runs: list[list[ShapeRun]] = [[] for _ in modes]
    spent = [0.0] * len(modes)
    interrupted = False
    try:
        for _ in unique_shapes(network):
            for k, gen in enumerate(gens):
                begin = time.perf_counter()
                runs[k].append(next(gen))
                spent[k] += time.perf_counter() - begin
    except KeyboardInterrupt:
        interrupted = True
    return [TransferRun(network, m.transfer, m.transfer and m.order_designs,
                        m.transfer and m.racing, method, m.seed, samples, time_s,
                        tuple(r), interrupted, t, tuple(history) if m.transfer else ())
            for m, r, t in zip(modes, runs, spent, strict=True)]


def _tune_shapes(
    network: Network, mode: Mode, *, kernel: str | Path, platform: Platform,
    dw_kernel: str | Path | None, design: str, samples: int | None, time_s: float | None,
    method: str, n_sources: int, history: tuple[ShapeRun, ...], progress: ProgressFn | None,
) -> Iterator[ShapeRun]:
    """The shapes of one run, tuned one at a time as they are asked for."""
    groups = unique_shapes(network)
    order = tuning_order(groups)
    done: dict[int, ShapeRun] = {h.index: h for h in history}  # history: negative indices
    spent = 0.0  # seconds of the finished shapes
    for n, k in enumerate(order, 1):
        begun = time.perf_counter()
        group = groups[k]
        path = kernel_for(group.kind, kernel, dw_kernel=dw_kernel, stride=group.stride)
        ks = analyse(load_scop(path, group.first.defines()), max_dim=2)
        designs = ([d for d in ks.designs if len(d.space_loops) <= 2] if design == "all"
                   else [ks.design(design)])
        near = sorted((j for j in done if math.isfinite(shape_distance(done[j].group, group))),
                      key=lambda j: (shape_distance(done[j].group, group), j < 0, abs(j))
                      )[:n_sources]  # ties: the run's own shapes, then the history's
        sources = [done[j] for j in near] if mode.transfer else []
        field = None
        if sources and mode.order_designs:
            designs = design_order(designs, sources)
            field = field_size(designs, sources) if mode.field else None
        seeds = _seeder(sources) if sources and mode.seed_tilings else None
        raced = bool(sources) and mode.racing
        names = ",".join(group.names)

        def show(j: int, design_id: str, best: float, n: int = n, names: str = names,
                 total: int = len(designs), begun: float = begun, spent: float = spent) -> None:
            if progress is not None:
                progress(TransferProgress(n, len(order), names, j + 1, total, design_id, best,
                                          spent + time.perf_counter() - begun))

        searches, slices = race(
            designs, start_search(ks, platform, method=method, seed=mode.seed, seeds=seeds,
                                  samples=samples, time_s=time_s),
            samples=samples, time_s=time_s, rungs=RUNGS if raced else (),
            predicted=mode.order_designs, field=field, progress=show)
        done[k] = ShapeRun(k, group, tuple(s.record() for s in searches), tuple(near) if
                           sources else (), tuple(slices) if raced else ())
        spent += time.perf_counter() - begun
        yield done[k]


def _seeder(sources: Sequence[ShapeRun]) -> Callable[[Design, SearchSpace], list[Point]]:
    def seeds(design: Design, space: SearchSpace) -> list[Point]:
        return transfer_seeds(design, space, sources)
    return seeds
