"""The Pareto front of one or several designs under their models: exact or evolutionary.

``pareto_front(models, objectives, method=...)``:

* ``exact``: every legal tiling of every design is evaluated (:class:`TilingGrid`, chunks
  of 2^18 tilings). A chunk's feasible points are first compared with up to 32 points
  of the front found so far (a point one of them weakly dominates cannot add a new
  objective vector), then reduced to their own non-dominated set and merged into the front.
* ``nsga2``: :class:`~odyssey.tune.pareto.nsga2.NSGA2` over all designs at once, within a
  time or evaluation budget; the front is every non-dominated feasible point it evaluated.
* ``auto``: ``exact`` when the designs hold at most ``exact_limit`` legal tilings in total
  (and, with a time budget, at most ``time_s`` x 10^6 of them), ``nsga2`` otherwise.

Only feasible points (legal, every resource within the platform's usable budget) are
candidates. A KeyboardInterrupt ends the search with ``status="interrupted"`` and the
front found so far.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import RESOURCES, DesignModel, Evaluation
from odyssey.platforms import Platform
from odyssey.tune.base import check_int
from odyssey.tune.engine import Engine, OnDone, OnNotice, Task, run_tasks
from odyssey.tune.pareto.dominance import nondominated
from odyssey.tune.pareto.enumeration import TilingGrid
from odyssey.tune.pareto.nsga2 import NSGA2, POPULATION_SIZE, Candidate
from odyssey.tune.pareto.result import (
    FIELDS,
    OBJECTIVES,
    DesignStats,
    ParetoPoint,
    ParetoResult,
    Status,
    normalised_hypervolume,
    parse_objectives,
    reference_point,
)
from odyssey.tune.space import SearchSpace
from odyssey.tune.tasks import KernelSource, design_model

MethodChoice = Literal["auto", "exact", "nsga2"]
#: ``auto`` enumerates at most this many legal tilings (a few minutes at ~3M tilings/s)
EXACT_LIMIT = 500_000_000
_AUTO_RATE = 1_000_000  # tilings/s assumed when a time budget decides between the methods
_CHUNK = 1 << 18
_KILLERS = 32
_PROGRESS_S = 0.2


@dataclass(frozen=True, slots=True)
class ParetoProgress:
    """What :func:`pareto_front` reports while it runs. ``fraction`` is the share of the
    tilings enumerated (exact) or of the budget used (nsga2)."""

    method: str
    design_id: str
    evaluations: int
    front_size: int
    seconds: float
    fraction: float


class _Front:
    """The non-dominated feasible points found so far, over every design. Rows keep the
    design index, the genome (padded with -1 to the longest) and :data:`FIELDS`."""

    def __init__(self, cols: Sequence[int], width: int) -> None:
        self.cols = list(cols)
        self.width = width
        self.design = np.zeros(0, dtype=np.int64)
        self.genome = np.zeros((0, width), dtype=np.int64)
        self.fields = np.zeros((0, len(FIELDS)))
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, d: int, genomes: np.ndarray, fields: np.ndarray) -> None:
        if len(genomes):
            pad = np.full((len(genomes), self.width), -1, dtype=np.int64)
            pad[:, :genomes.shape[1]] = genomes
            self._pending.append((np.full(len(genomes), d, dtype=np.int64), pad, fields))

    def reduce(self) -> None:
        """Merge what was added; existing rows come first, so a vector keeps its first point."""
        if not self._pending:
            return
        design = np.concatenate([self.design, *(p[0] for p in self._pending)])
        genome = np.vstack([self.genome, *(p[1] for p in self._pending)])
        fields = np.vstack([self.fields, *(p[2] for p in self._pending)])
        keep = nondominated(fields[:, self.cols])
        self.design, self.genome, self.fields = design[keep], genome[keep], fields[keep]
        self._pending = []

    def killers(self) -> np.ndarray:
        """Up to :data:`_KILLERS` front rows spread along the first objective."""
        f = self.fields[:, self.cols]
        if len(f) <= _KILLERS:
            return f
        order = np.argsort(f[:, 0], kind="stable")
        return f[order[np.linspace(0, len(f) - 1, _KILLERS).astype(np.int64)]]


def _fields(ev: Evaluation) -> np.ndarray:
    return np.stack([np.asarray(getattr(ev, name), dtype=np.float64) for name in FIELDS], axis=1)


def _violation(ev: Evaluation, budget: dict[str, float]) -> np.ndarray:
    """``sum_r max(0, used_r / budget_r - 1)`` over the resources (0 when within budget)."""
    out = np.zeros(len(ev))
    for r in RESOURCES:
        used = np.asarray(getattr(ev, r), dtype=np.float64)
        b = budget[r]
        out += np.maximum(used / b - 1.0, 0.0) if b > 0 else np.where(used > 0, 1.0, 0.0)
    return out


def _evaluate(model: DesignModel, space: SearchSpace, genomes: np.ndarray) -> Evaluation:
    return model.evaluate({n: genomes[:, i] for i, n in enumerate(space.names)})


def _not_covered(f: np.ndarray, killers: np.ndarray) -> np.ndarray:
    """Rows of ``f`` that no killer row is ``<=`` in every objective."""
    cols = [np.ascontiguousarray(f[:, j]) for j in range(f.shape[1])]
    alive = np.ones(len(f), dtype=bool)
    for k in killers:
        hit = cols[0] >= k[0]
        for j in range(1, len(cols)):
            hit &= cols[j] >= k[j]
        alive &= ~hit
    return alive


def pareto_front(
    models: Sequence[DesignModel],
    objectives: str | Sequence[str] = ("latency", "dsp", "bram18k"),
    *,
    method: MethodChoice = "auto",
    time_s: float | None = None,
    samples: int | None = None,
    seed: int = 0,
    population_size: int = POPULATION_SIZE,
    exact_limit: int = EXACT_LIMIT,
    reference: Sequence[float] | None = None,
    progress: Callable[[ParetoProgress], None] | None = None,
    engine: Engine | None = None,
    source: KernelSource | None = None,
    on_done: OnDone | None = None,
    on_notice: OnNotice | None = None,
) -> ParetoResult:
    """Non-dominated feasible points of ``models`` (see the module docstring).

    With a distributed ``engine`` and the kernel ``source`` of the models (accurate models
    of its designs), an ``exact`` search without a budget enumerates each design's own
    front as a task (:func:`design_front_task`) and merges them here in the designs' order:
    the same front (of identical vectors, the first design's point), the same counts;
    ``on_done``/``on_notice`` hear of finished tasks and worker deaths. An interrupted
    merge keeps the designs that finished.

    ``time_s`` (seconds) and ``samples`` (model evaluations) bound the search, whichever
    ends first; ``nsga2`` needs one of them, ``exact`` stops early (not exact then) when
    one runs out. ``seed`` makes an ``nsga2`` run reproducible when its budget is
    ``samples``. ``reference`` overrides the hypervolume's reference point.
    """
    names = parse_objectives(objectives)
    if not models:
        raise TunerError("pareto_front: no design models given")
    if method not in ("auto", "exact", "nsga2"):
        raise TunerError(f"`method` must be auto, exact or nsga2, got {method!r}.")
    if time_s is not None and not time_s > 0:
        raise TunerError(f"`time_s` must be a positive number of seconds, got {time_s!r}.")
    if samples is not None:
        check_int("samples", samples, minimum=1)
    check_int("exact_limit", exact_limit, minimum=0)
    budget = dict(models[0].budget)
    for m in models[1:]:
        if dict(m.budget) != budget:
            raise TunerError(f"design {m.design_id} has the budget {dict(m.budget)}, not "
                             f"{budget}: every model must target one platform")
    spaces = [SearchSpace(m.params) for m in models]
    grids = [TilingGrid(s) for s in spaces]
    total = sum(g.size for g in grids)
    if method == "auto":
        fits = (total <= exact_limit and all(g.listed for g in grids)
                and (time_s is None or total <= time_s * _AUTO_RATE))
        method = "exact" if fits else "nsga2"
    if method == "nsga2" and time_s is None and samples is None:
        raise TunerError("the nsga2 search needs a budget: give `time_s` or `samples`")
    cols = [FIELDS.index(OBJECTIVES[o][0]) for o in names]
    front = _Front(cols, max(s.dim for s in spaces))
    run = _Run(models, spaces, front, budget, time_s, samples, progress)
    if method == "exact" and engine is not None and engine.distributed and source is not None \
            and time_s is None and samples is None:
        status = _exact_on_engine(run, engine, source, on_done, on_notice)
    elif method == "exact":
        status = run.exact(grids)
    else:
        status = run.nsga2(NSGA2(spaces, rng=np.random.default_rng(seed),
                                 population_size=population_size))
    return _result(run, names, "exact" if method == "exact" else "nsga2", status, grids,
                   seed, reference)


class _Run:
    """Budget, counters and progress shared by the two search methods."""

    def __init__(self, models: Sequence[DesignModel], spaces: Sequence[SearchSpace], front: _Front,
                 budget: dict[str, float], time_s: float | None, samples: int | None,
                 progress: Callable[[ParetoProgress], None] | None) -> None:
        self.models, self.spaces, self.front, self.budget = models, spaces, front, budget
        self.time_s, self.samples, self.progress = time_s, samples, progress
        self.evaluated = [0] * len(models)
        self.start = time.perf_counter()
        self._last_report = -math.inf

    @property
    def evaluations(self) -> int:
        return sum(self.evaluated)

    def out_of_budget(self) -> Status | None:
        if self.samples is not None and self.evaluations >= self.samples:
            return "samples"
        if self.time_s is not None and time.perf_counter() - self.start >= self.time_s:
            return "time"
        return None

    def report(self, method: str, d: int, fraction: float) -> None:
        now = time.perf_counter()
        if self.progress is not None and now - self._last_report >= _PROGRESS_S:
            self._last_report = now
            self.progress(ParetoProgress(method, self.models[d].design_id, self.evaluations,
                                         len(self.front.design), now - self.start, fraction))

    def exact(self, grids: Sequence[TilingGrid]) -> Status:
        total = max(sum(g.size for g in grids), 1)
        try:
            for d, (model, space, grid) in enumerate(zip(self.models, self.spaces, grids,
                                                         strict=True)):
                for start in range(0, grid.size, _CHUNK):
                    stop = grid.size if self.samples is None else min(
                        grid.size, start + self.samples - self.evaluations)
                    genomes = grid.block(start, min(start + _CHUNK, stop))
                    ev = _evaluate(model, space, genomes)
                    self.evaluated[d] += len(genomes)
                    fields = _fields(ev)[ev.feasible]
                    genomes = genomes[ev.feasible]
                    if len(self.front.design) and len(fields):
                        alive = _not_covered(fields[:, self.front.cols], self.front.killers())
                        fields, genomes = fields[alive], genomes[alive]
                    keep = nondominated(fields[:, self.front.cols])
                    self.front.add(d, genomes[keep], fields[keep])
                    self.front.reduce()
                    self.report("exact", d, self.evaluations / total)
                    stopped = self.out_of_budget()
                    if stopped is not None:
                        return stopped
        except KeyboardInterrupt:
            self.front.reduce()
            return "interrupted"
        return "complete"

    def nsga2(self, search: NSGA2) -> Status:
        m = len(self.front.cols)
        try:
            while (stopped := self.out_of_budget()) is None:
                n = search.offspring
                if self.samples is not None:
                    n = min(n, self.samples - self.evaluations)
                batch = search.ask(n)
                if not batch:
                    return "exhausted"
                obj, viol = self._evaluate_batch(batch)
                search.tell(batch, obj.reshape(-1, m), viol)
                self.front.reduce()
                used = [(time.perf_counter() - self.start) / self.time_s if self.time_s else 0.0,
                        self.evaluations / self.samples if self.samples else 0.0]
                self.report("nsga2", batch[-1][0], min(max(used), 1.0))
        except KeyboardInterrupt:
            self.front.reduce()
            return "interrupted"
        return stopped

    def _evaluate_batch(self, batch: Sequence[Candidate]) -> tuple[np.ndarray, np.ndarray]:
        """Objectives and violations of ``batch`` (in its order); feasible rows go to the front."""
        m = len(self.front.cols)
        obj = np.zeros((len(batch), m))
        viol = np.zeros(len(batch))
        designs = np.array([c[0] for c in batch], dtype=np.int64)
        for d in np.unique(designs).tolist():
            rows = np.flatnonzero(designs == d)
            genomes = np.array([batch[k][1] for k in rows.tolist()], dtype=np.int64)
            ev = _evaluate(self.models[d], self.spaces[d], genomes)
            assert ev.legal.all(), "the search proposes legal tilings only"
            fields = _fields(ev)
            obj[rows] = fields[:, self.front.cols]
            viol[rows] = _violation(ev, self.budget)
            self.evaluated[d] += len(rows)
            self.front.add(d, genomes[ev.feasible], fields[ev.feasible])
        return obj, viol


def design_front_task(src: KernelSource, design_id: str, platform: Platform,
                      cols: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int, Status]:
    """One design's exact front on a worker (its accurate model rebuilt from the source):
    the front's genomes and :data:`FIELDS` rows, the tilings evaluated, the status."""
    model = design_model(src, design_id, platform)
    space = SearchSpace(model.params)
    front = _Front(cols, space.dim)
    run = _Run([model], [space], front, dict(model.budget), None, None, None)
    status = run.exact([TilingGrid(space)])
    return front.genome, front.fields, run.evaluated[0], status


def _exact_on_engine(run: _Run, engine: Engine, source: KernelSource, on_done: OnDone | None,
                     on_notice: OnNotice | None) -> Status:
    """Every design's front as a task of ``engine``, merged into ``run.front`` in order."""
    platform = run.models[0].platform
    cols = tuple(run.front.cols)
    tasks = [Task(m.design_id, design_front_task, (source, m.design_id, platform, cols))
             for m in run.models]
    done = run_tasks(tasks, engine, on_done=on_done, on_notice=on_notice)
    complete = True
    for d, task in enumerate(tasks):
        if task.key not in done.results:
            complete = False
            continue
        genomes, fields, evaluated, status = done.results[task.key]
        complete &= status == "complete"
        run.front.add(d, genomes, fields)
        run.evaluated[d] = evaluated
    run.front.reduce()
    if done.failed:
        raise TunerError("the cluster failed design(s) " + "; ".join(
            f"{key}: {error}" for key, error in done.failed.items()))
    return "complete" if complete else "interrupted"


def _result(run: _Run, names: tuple[str, ...], method: Literal["exact", "nsga2"], status: Status,
            grids: Sequence[TilingGrid], seed: int, reference: Sequence[float] | None) -> ParetoResult:
    front = run.front
    points: list[ParetoPoint] = []
    order = np.lexsort([front.fields[:, c] for c in reversed(front.cols)])
    for k in order.tolist():
        d = int(front.design[k])
        model, space = run.models[d], run.spaces[d]
        tiling = {n: int(v) for n, v in zip(space.names, front.genome[k, :space.dim], strict=True)}
        lat, gops, dsp, bram, uram, offchip = (float(x) for x in front.fields[k])
        points.append(ParetoPoint(model.design_id, str(model.info.get("dataflow", "")),
                                  str(model.info.get("ordering", "")), tiling, lat, gops, dsp,
                                  bram, uram, offchip))
    ref = tuple(float(r) for r in reference) if reference is not None else reference_point(
        names, points, run.budget)
    if len(ref) != len(names):
        raise TunerError(f"`reference` has {len(ref)} values for {len(names)} objectives {list(names)}")
    on_front = np.bincount(front.design, minlength=len(run.models))
    stats = tuple(DesignStats(m.design_id, str(m.info.get("dataflow", "")),
                              str(m.info.get("ordering", "")), g.size, run.evaluated[d],
                              int(on_front[d]))
                  for d, (m, g) in enumerate(zip(run.models, grids, strict=True)))
    matrix = np.array([[p.value(o) for o in names] for p in points]).reshape(len(points), len(names))
    return ParetoResult(names, method, status, tuple(points), ref,
                        normalised_hypervolume(matrix, ref), run.evaluations,
                        time.perf_counter() - run.start, seed if method == "nsga2" else None,
                        dict(run.budget), run.models[0].platform.name, stats)
