"""One design's search run in stretches, and the race that schedules them (:mod:`.transfer`).

Tuned one after another, the designs of a shape reach a quality target only when the search
comes to the first design able to reach it; a wrong design order costs whole searches. The
race spends a little of every design's budget first and the rest in the order of what that
bought (successive halving, Jamieson & Talwalkar 2016; Li et al., Hyperband, 2018):

* **Field**: the designs the prediction puts near the best race (in the transfer, those
  predicted at :data:`~odyssey.network.transfer.FIELD_SCORE` of the best or better); the
  others are searched after the race, one after another in the predicted order.
* **Probe**: every design of the field, in the predicted order (best first), searches
  ``RUNGS[0]`` of its budget, its transferred seeds first.
* **Halving**: the best ``ceil(KEEP n)`` of the ``n`` designs (by their best throughput so
  far, ties in the predicted order) go on to ``RUNGS[1]`` of their budget, the best
  ``ceil(KEEP^2 n)`` of those to ``RUNGS[2]``, and so on (``n`` counts every design, in the
  field or not: a smaller field leaves the rungs as they are).
* **Completion**: every design of the field searches on to its whole budget, in the order
  of the better of its two ranks: by best throughput so far and in the predicted order
  (ties: the better throughput first). The probe is short and some designs start slowly; a design cut at the
  first halving that the sources ranked high is finished early, not after every design that
  probed better (the two orders interleave; the top of either comes first). Without a
  prediction (``predicted=False``: the designs' order means nothing), best so far first.

So every design gets the budget it has without the race, searched by the same tuner (it is
resumed, not restarted): the race changes when work is done, not how much, and a shape's
final result is as good as the sequential search's. Every evaluation of every stretch counts
in the time to a target (:class:`Slice`), and so does each model build (on a design's first
stretch).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from odyssey.errors import OdysseyError
from odyssey.mapping.space import Design, KernelSpace
from odyssey.model import build_model
from odyssey.model.design_model import DesignModel, ParamSpec
from odyssey.platforms import Platform
from odyssey.tune import Point, TracePoint, Tuner, make_tuner, run_tuner
from odyssey.tune.space import SearchSpace

Tiling = tuple[tuple[str, int], ...]
#: best distinct tilings kept per design and shape for transfer
N_TILINGS = 3
#: cumulative share of a design's budget at each rung of the race (the first is the probe)
RUNGS = (1 / 40, 1 / 10, 2 / 5)
#: share of a rung's designs that go on to the next
KEEP = 1 / 4

#: seeds for a design, given the search space of its model on the new shape
SeedFn = Callable[[Design, SearchSpace], list[Point]]


@dataclass(frozen=True, slots=True)
class DesignRun:
    """One design tuned on one shape: its best tilings (best first), the search trace
    (``samples`` and ``seconds`` since the design's model was built, over all its stretches),
    the seeds it was given."""

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
class Slice:
    """A stretch of one design's search: ``design`` indexes the shape's designs; ``samples``
    and ``seconds`` are the design's totals at the end of the stretch (its start is the end
    of the design's previous stretch, or 0)."""

    design: int
    samples: int
    seconds: float


class DesignSearch:
    """One design's search on one shape, resumable: :meth:`run` searches on until the design
    has spent the given totals, within its whole budget (``samples``/``time_s``: the tuner is
    told it once, so a tuner that adapts to its budget searches in stretches as in one run).
    The model build and the seeds count in its seconds.

    Raises :class:`OdysseyError` if the design's model cannot be built.
    """

    def __init__(self, ks: KernelSpace, design: Design, platform: Platform, *, method: str,
                 seed: int, samples: int | None, time_s: float | None,
                 seeds: SeedFn | None = None) -> None:
        begin = time.perf_counter()
        self.design = design
        self.model: DesignModel = build_model(ks, design, platform=platform, variant="accurate")
        self.tuner: Tuner = make_tuner(method, self.model, seed=seed)
        points = seeds(design, SearchSpace(self.model.params)) if seeds is not None else []
        if points:
            self.tuner.seed_points(points)
        self.tuner.begin(time_s=time_s, samples=samples)
        self.seeds = len(points)
        self.samples = 0
        self.search_seconds = 0.0  # in the tuner, the budget ``time_s`` is held to
        self.seconds = time.perf_counter() - begin
        self.finished = False  # the tuner converged or ran out of points
        self._trace: list[TracePoint] = []
        self._top: dict[Tiling, float] = {}

    @property
    def best_gops(self) -> float | None:
        return self._trace[-1].throughput_gops if self._trace else None

    def run(self, *, samples: int | None, time_s: float | None) -> bool:
        """Search on until ``samples`` evaluations and/or ``time_s`` seconds of search in all;
        whether anything was evaluated. A KeyboardInterrupt during the search is re-raised
        (the tuner's driver catches it)."""
        more = None if samples is None else samples - self.samples
        secs = None if time_s is None else time_s - self.search_seconds
        if self.finished or (more is not None and more < 1) or (secs is not None and secs <= 0):
            return False
        result = run_tuner(self.tuner, self.model, samples=more, time_s=secs, resume=True)
        for p in result.trace:
            if self.best_gops is None or p.throughput_gops > self.best_gops:
                self._trace.append(TracePoint(self.samples + p.samples, self.seconds + p.seconds,
                                              p.throughput_gops))
        ranked = sorted((t for t in result.trials if t.feasible), key=lambda t: -t.throughput_gops)
        fresh: dict[Tiling, float] = {}
        for t in ranked:
            fresh.setdefault(tuple((k, int(v)) for k, v in t.tiling.items()), t.throughput_gops)
            if len(fresh) >= N_TILINGS:
                break
        merged = sorted({**fresh, **self._top}.items(), key=lambda kv: -kv[1])  # stable: older first
        self._top = dict(merged[:N_TILINGS])
        self.samples += result.samples
        self.search_seconds += result.seconds
        self.seconds += result.seconds
        self.finished = result.stop_reason in ("converged", "exhausted")
        if result.stop_reason == "interrupted":
            raise KeyboardInterrupt
        return result.samples > 0

    def record(self) -> DesignRun:
        return DesignRun(self.design.id, self.best_gops, tuple(self._top),
                         tuple(self._top.values()), _extents(self.model.params),
                         tuple(self._trace), self.samples, self.seconds, self.seeds)


def race(
    designs: Sequence[Design], start: Callable[[Design], DesignSearch | None], *,
    samples: int | None, time_s: float | None, rungs: Sequence[float] = RUNGS,
    keep: float = KEEP, predicted: bool = True, field: int | None = None,
    progress: Callable[[int, str, float], None] | None = None,
) -> tuple[list[DesignSearch], list[Slice]]:
    """Search ``designs`` (in their predicted order, best first) by successive halving (see
    the module docstring), each to ``samples`` evaluations and/or ``time_s`` seconds in the
    end; with no ``rungs``, one after another, each to its whole budget at once.
    ``predicted``: ``designs`` is a predicted order, which the completion blends with the
    race's ranking (see the module docstring); else the completion goes by the ranking.
    ``field``: only the first ``field`` designs race; the others (predicted to be far
    behind) are searched after them, one after another, each to its whole budget (their
    models are not even built unless the race's designs miss the target).
    ``start(design)`` builds a design's search when it is first needed (None: skip the
    design); ``progress(k, design_id, best)`` is called before each stretch (``k`` indexes
    ``designs``, ``best`` is the best GOP/s of every design so far, 0 before any). Returns the searches (in ``designs`` order, skipped ones left out) and the
    stretches in the order they ran."""
    assert all(0 < r < 1 for r in rungs) and list(rungs) == sorted(rungs) and 0 < keep <= 1
    n_field = len(designs) if field is None or not rungs else max(1, min(field, len(designs)))
    searches: list[DesignSearch] = []
    where: list[int] = []  # position in ``designs`` of each search
    slices: list[Slice] = []

    def stretch(k: int, share: float, *, first: bool = False) -> None:
        s = searches[k]
        if progress is not None:
            progress(where[k], s.design.id, max((x.best_gops or 0.0 for x in searches),
                                                default=0.0))
        ran = s.run(samples=None if samples is None else max(1, math.ceil(share * samples)),
                    time_s=None if time_s is None else share * time_s)
        if ran or first:  # a design's first stretch carries its model build
            slices.append(Slice(k, s.samples, s.seconds))

    def ranked(pool: Sequence[int]) -> list[int]:  # stable: ties keep the predicted order
        return sorted(pool, key=lambda k: -(searches[k].best_gops or 0.0))

    def enter(j: int, share: float) -> None:
        s = start(designs[j])
        if s is not None:
            searches.append(s)
            where.append(j)
            stretch(len(searches) - 1, share, first=True)

    for j in range(n_field):
        enter(j, rungs[0] if rungs else 1.0)
    pool = list(range(len(searches)))
    size = float(len(designs))  # rungs keep their sizes whatever the field's
    for share in rungs[1:]:
        size *= keep
        pool = ranked(pool)[: max(1, math.ceil(size))]
        for k in pool:
            stretch(k, share)
    if rungs:
        for k in completion(ranked(range(len(searches))), predicted=predicted):
            stretch(k, 1.0)
    for j in range(n_field, len(designs)):
        enter(j, 1.0)
    return searches, slices


def completion(ranking: Sequence[int], *, predicted: bool = True) -> list[int]:
    """The order the race completes its designs in, from their ``ranking`` by best
    throughput (best first; a design is its index in the predicted order): by the better of
    a design's rank there and its predicted rank (its index), ties by ``ranking``; with no
    prediction, ``ranking`` itself."""
    if not predicted:
        return list(ranking)
    rank = {k: r for r, k in enumerate(ranking)}
    return sorted(ranking, key=lambda k: (min(rank[k], k), rank[k]))


def start_search(ks: KernelSpace, platform: Platform, *, method: str, seed: int,
                 seeds: SeedFn | None, samples: int | None, time_s: float | None,
                 ) -> Callable[[Design], DesignSearch | None]:
    """``start`` for :func:`race`: a design's search with the whole budget ``samples`` /
    ``time_s``, or None if its model cannot be built."""
    def start(design: Design) -> DesignSearch | None:
        try:
            return DesignSearch(ks, design, platform, method=method, seed=seed,
                                samples=samples, time_s=time_s, seeds=seeds)
        except OdysseyError:
            return None
    return start


def _extents(params: Sequence[ParamSpec]) -> tuple[tuple[str, int], ...]:
    return tuple((p.loop, p.upper) for p in params if p.divides is None)
