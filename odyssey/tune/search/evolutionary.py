"""Evolutionary search over tilings (Odyssey section 4.1), as an ask/tell tuner.

* Genome: the tiling factors, one integer per tuning parameter.
* Fitness: :func:`odyssey.tune.base.fitness`, the throughput of feasible points;
  points over budget rank below every feasible one by how far over they are.
* Start: ``initial_samples`` random legal points (after any seeds), evaluated in
  one batch; a wide first look is cheap with vectorized evaluation.
* Generation: ``population_size`` children. Each child copies a parent drawn
  uniformly from the ``n_parents`` fittest individuals, or with probability
  ``crossover_rate`` crosses two of them (:class:`PerLoopCrossover`); then with
  probability ``mutation_rate`` it is mutated (:class:`HybridMutation`,
  ``alpha=0.4``), and finally repaired to the nearest legal point.
* Survival: the population is the ``population_size`` fittest points ever told
  (elitist, ``mu + lambda``), so the best point is never lost.
* No point is proposed twice: a child that was already asked is mutated again
  (up to 8 times) and otherwise replaced by a random legal point.
* Local search (``local_search=True``, a memetic step): whenever the best point
  improves, its whole :func:`~odyssey.tune.search.local.neighbourhood` (every level,
  factorization and pair move, nearest first) is queued and proposed before any
  new child, in batches that start at ``LOCAL_BATCH`` points and double after
  every batch without improvement (up to ``MAX_LOCAL_BATCH``); an improvement
  re-centres the queue on the new best. The neighbours are drawn at random,
  weighted towards near moves. Under a sample budget ``N`` at most
  ``max(LOCAL_BATCH, N * LOCAL_SHARE)`` neighbours of one centre are proposed
  (and batches stay below that), so polishing a poor basin cannot eat the
  budget; under a time budget alone the whole neighbourhood is, since building
  and evaluating it in bulk costs far less time than breeding children. So every best point is polished to a
  local optimum of the moves, cheaply: the neighbourhood is built in bulk with
  numpy, not child by child. Of a local batch only its best point may join the
  population, which keeps the population diverse.
* Restarts: after ``patience * min(r + 1, 4)`` generations (``r`` restarts so far)
  without progress, the population is dropped and the search starts again from
  random points (the best ever found stays the result; points already proposed
  are still never proposed again). Progress is a best more than ``min_gain`` (1%)
  above the best at the last progress: a population that creeps up a poor basin
  in steps of a fraction of a percent, resetting the clock each time, would
  otherwise keep the budget. Under a sample budget a generation is
  ``population_size`` samples, local-search batches included, so a population that
  spends its samples polishing a basin without improving is dropped like one that
  breeds in vain; under a time budget it is one tell of bred children. The search has
  converged after ``restarts`` restarts in a row that did not improve the best.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, check_unit, fitness
from odyssey.tune.search.local import neighbourhood
from odyssey.tune.search.operators import (
    BaseCrossover,
    BaseMutation,
    HybridMutation,
    PerLoopCrossover,
)
from odyssey.tune.space import Genome, SearchSpace

#: defaults, chosen on the synthetic 1024^3 MM model (3000-sample budget)
POPULATION_SIZE = 64
N_PARENTS = 16
CROSSOVER_RATE = 0.5
MUTATION_RATE = 0.9
ALPHA = 0.4
PATIENCE = 8
RESTARTS = 200
INITIAL_SAMPLES = 64
#: remembered genomes before the duplicate filter is reset (bounds memory on long runs)
MAX_SEEN = 2_000_000
_RETRIES = 8
#: first and largest batch of local-search points
LOCAL_BATCH = 64
MAX_LOCAL_BATCH = 2048
#: with a sample budget, the share of it one centre's neighbourhood may take
LOCAL_SHARE = 1 / 12
#: a better best resets the restart clock only if it gains at least this fraction
MIN_GAIN = 0.01

_Take = Callable[[Genome], bool]  # adds a genome to the batch unless already proposed


class Evolutionary(Tuner):
    """Odyssey's evolutionary search; see the module docstring for the algorithm.

    Options (validated here, messages name the argument and the value):
    ``population_size >= 2`` (64), ``n_parents`` in ``[1, population_size]`` (16),
    ``crossover_rate`` and ``mutation_rate`` in ``[0, 1]`` (0.5, 0.9), ``alpha`` in
    ``[0, 1]`` (0.4, the probability of factorization mutation; only without an
    explicit ``mutation``), ``patience >= 1`` generations or ``None`` to never
    restart (8), ``restarts >= 0`` fruitless restarts before convergence, or ``None``
    to never converge (200), ``local_search`` (True), ``initial_samples >= 1`` random
    points of the first generation and of every restart (64), ``min_gain`` in ``[0, 1]``
    (0.01, the relative gain of the best that resets the restart clock). ``rng`` is
    required: the search is reproducible from it.
    """

    name = "evolutionary"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        population_size: int = POPULATION_SIZE,
        n_parents: int = N_PARENTS,
        crossover_rate: float = CROSSOVER_RATE,
        mutation_rate: float = MUTATION_RATE,
        alpha: float | None = None,
        patience: int | None = PATIENCE,
        mutation: BaseMutation | None = None,
        crossover: BaseCrossover | None = None,
        max_seen: int = MAX_SEEN,
        local_search: bool = True,
        restarts: int | None = RESTARTS,
        initial_samples: int = INITIAL_SAMPLES,
        min_gain: float = MIN_GAIN,
    ) -> None:
        self.rng = check_rng(rng)
        self.population_size = check_int("population_size", population_size, minimum=2)
        self.n_parents = check_int("n_parents", n_parents, minimum=1, maximum=self.population_size)
        self.crossover_rate = check_unit("crossover_rate", crossover_rate)
        self.mutation_rate = check_unit("mutation_rate", mutation_rate)
        self.patience = None if patience is None else check_int("patience", patience, minimum=1)
        self.restarts = None if restarts is None else check_int("restarts", restarts, minimum=0)
        self.initial_samples = check_int("initial_samples", initial_samples, minimum=1)
        self.min_gain = check_unit("min_gain", min_gain)
        self._local_cap: int | None = None  # neighbours per centre; set by a sample budget
        self._by_samples = False  # a sample budget: stalls are counted in samples
        self._max_local_batch = MAX_LOCAL_BATCH
        self._fruitless = 0
        self.restarts_done = 0
        self.max_seen = check_int("max_seen", max_seen, minimum=1)
        if mutation is not None and alpha is not None:
            raise TunerError("pass either `mutation` or `alpha`, not both (alpha configures the "
                             "default HybridMutation).")
        if mutation is not None and not isinstance(mutation, BaseMutation):
            raise TunerError(f"`mutation` must be a BaseMutation, got {mutation!r}.")
        if crossover is not None and not isinstance(crossover, BaseCrossover):
            raise TunerError(f"`crossover` must be a BaseCrossover, got {crossover!r}.")
        self.mutation = mutation or HybridMutation(ALPHA if alpha is None else alpha)
        self.crossover = crossover or PerLoopCrossover()
        if not isinstance(local_search, bool):
            raise TunerError(f"`local_search` must be True or False, got {local_search!r}.")
        self.local_search = local_search
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self._local = np.empty((0, self.space.dim), dtype=np.int64)
        self._local_batch = LOCAL_BATCH
        self._asked_local: set[Genome] = set()
        self._seen: set[Genome] = set()
        self._pending: list[Genome] = []
        self._pop = np.empty((0, self.space.dim), dtype=np.int64)
        self._fit = np.empty(0)
        self._best = -np.inf
        self._stall_ref = -np.inf  # the best when the restart clock was last reset
        self._stale = 0.0  # generations (or samples / population_size) without a better best
        self.generations = 0

    @property
    def batch_size(self) -> int:  # type: ignore[override]
        """A generation, or the next local-search batch while one is queued."""
        if len(self._local):
            return min(len(self._local), self._local_batch)
        if not len(self._fit) and not self._pending:
            return max(self.population_size, self.initial_samples)
        return self.population_size

    def begin(self, *, time_s: float | None, samples: int | None) -> None:
        self._by_samples = samples is not None
        if samples is not None:
            self._local_cap = max(LOCAL_BATCH, int(samples * LOCAL_SHARE))
            self._max_local_batch = min(MAX_LOCAL_BATCH, self._local_cap)

    # ------------------------------------------------------------------ ask/tell

    def seed_points(self, points: Sequence[Point]) -> None:
        """Repair ``points`` and propose them (in order) before anything else."""
        for p in points:
            g = self.space.repair_genome(self.space.genome(p))
            if g not in self._pending:
                self._pending.append(g)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        taken: set[Genome] = set()

        def take(g: Genome) -> bool:
            if g in self._seen or g in taken:
                return False
            batch.append(g)
            taken.add(g)
            return True

        while self._pending and len(batch) < n:
            take(self._pending.pop(0))
        self._asked_local = set()
        while len(self._local) and len(batch) < n:
            head, self._local = self._local[: n - len(batch)], self._local[n - len(batch):]
            for row in head.tolist():
                g = tuple(row)
                if take(g):
                    self._asked_local.add(g)
        if len(self._fit) and len(batch) < n:
            parents = [tuple(int(v) for v in row) for row in self._pop[: self.n_parents].tolist()]
            for _ in range(4 * (n - len(batch))):
                if len(batch) >= n:
                    break
                self._breed(parents, take)
        self._fill_random(n, batch, take)
        if len(self._seen) + len(batch) > self.max_seen:
            self._seen.clear()
        self._seen.update(batch)
        return self.space.to_points(batch)

    @property
    def pending(self) -> int:
        """Seeded points not yet proposed."""
        return len(self._pending)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        self._merge(points, evaluation, bred=True)

    def absorb(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        """Points another search evaluated: they join the population like children and
        are never proposed again, and a new best is polished by the local search, but
        no generation is counted (so they do not advance the restart clock)."""
        self._merge(points, evaluation, bred=False)

    def _merge(self, points: Sequence[Point], evaluation: Evaluation, *, bred: bool) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        if not points:
            return
        genomes = self.space.matrix(points)
        fit = fitness(evaluation, self.budget)
        told = [tuple(g) for g in genomes.tolist()]
        self._seen.update(told)
        local = np.array([bred and g in self._asked_local for g in told], dtype=bool)
        joins = ~local
        if local.any():  # of a local batch only its best point may join the population
            k = int(np.flatnonzero(local)[np.argmax(fit[local])])
            joins[k] = True
        pop = np.vstack([self._pop, genomes[joins]])
        allfit = np.concatenate([self._fit, fit[joins]])
        order = np.argsort(-allfit, kind="stable")
        keep: list[int] = []
        rows: set[Genome] = set()
        for k in order.tolist():
            if len(keep) >= self.population_size or not np.isfinite(allfit[k]):
                break
            g = tuple(pop[k].tolist())
            if g not in rows:
                rows.add(g)
                keep.append(k)
        self._pop, self._fit = pop[keep], allfit[keep]
        top = float(fit.max())
        margin = 1e-9 * abs(self._best) if np.isfinite(self._best) else 0.0
        improved = top > self._best + margin
        if improved:
            self._best = top
            self._fruitless = 0
        if bred:
            local_only = bool(local.all())
            if local_only:
                self._local_batch = LOCAL_BATCH if improved else min(
                    2 * self._local_batch, self._max_local_batch)
            else:
                self.generations += 1
            if self._progressed(top):
                self._stale, self._stall_ref = 0.0, top
            else:
                self._stale += self._stall_step(len(told), local_only)
            if self.patience is not None and self._stale >= self._patience_now() and not self.converged:
                self._restart()
                return
        if improved and self.local_search and len(self._fit):
            self._queue_neighbourhood(self._pop[0])

    @property
    def converged(self) -> bool:
        return self.restarts is not None and self._fruitless > self.restarts

    def _progressed(self, top: float) -> bool:
        """Whether ``top`` resets the restart clock: a best better by more than ``min_gain``
        (relative) than the best when the clock was last reset; while no feasible point is
        known (fitness <= 0), any better best. ``top`` above that mark is always a better
        best, since every best past it moves the mark."""
        ref = self._stall_ref
        if not np.isfinite(ref) or ref <= 0:
            return top > ref
        return top > ref * (1 + max(self.min_gain, 1e-9))

    def _stall_step(self, told: int, local_only: bool) -> float:
        """Generations a fruitless batch of ``told`` points adds to the restart clock.

        Under a sample budget every sample counts, ``population_size`` to a generation,
        local-search batches included: a population that spends its samples polishing a
        basin without improving has stalled as surely as one that breeds in vain. (When
        only bred generations counted, 29 of 90 MP-seeded runs on MM 1024^3, 3000
        samples each, never restarted, before the packed drain path: more than half of
        their samples went to local batches, and a population held in a poor seed's
        basin kept them.) Under a time
        budget only bred batches count, one each: a local batch is built and evaluated
        in bulk and costs far less time than a generation.
        """
        if self._by_samples:
            return told / self.population_size
        return 0.0 if local_only else 1.0

    def _patience_now(self) -> int:
        """``patience`` times one more than the restarts so far, at most four times it:
        the first populations are cut short, later ones get time to mature."""
        assert self.patience is not None
        return self.patience * min(1 + self.restarts_done, 4)

    def _restart(self) -> None:
        """Drop the population (the best point is kept by the driver) and start afresh."""
        self._fruitless += 1
        if self.converged:
            return
        self.restarts_done += 1
        self._pop = np.empty((0, self.space.dim), dtype=np.int64)
        self._fit = np.empty(0)
        self._local = self._local[:0]
        self._stale = 0.0

    @property
    def population(self) -> list[tuple[Point, float]]:
        """The current population with fitness, fittest first."""
        return [(self.space.to_point(g), float(f)) for g, f in zip(self._pop.tolist(), self._fit,
                                                                   strict=True)]

    # ------------------------------------------------------------------ internals

    def _queue_neighbourhood(self, centre: np.ndarray) -> None:
        nb = neighbourhood(self.space, centre.tolist(), self.rng)  # seen points skipped in ask
        self._local = nb if self._local_cap is None else nb[: self._local_cap]
        self._local_batch = LOCAL_BATCH

    def _breed(self, parents: list[Genome], take: _Take) -> None:
        rng, space = self.rng, self.space
        a = parents[int(rng.random() * len(parents))]
        if rng.random() < self.crossover_rate:
            b = parents[int(rng.random() * len(parents))]
            child = self.crossover.crossover(a, b, space, rng)
        else:
            child = list(a)
        if rng.random() < self.mutation_rate:
            child = self.mutation.mutate(child, space, rng)
        g = space.repair_genome(child)
        for _ in range(_RETRIES):
            if take(g):
                return
            g = space.repair_genome(self.mutation.mutate(list(g), space, rng))

    def _fill_random(self, n: int, batch: list[Genome], take: _Take) -> None:
        for _ in range(16):
            need = n - len(batch)
            if need <= 0:
                return
            for row in self.space.sample(self.rng, max(need, 8)).tolist():
                if len(batch) >= n:
                    return
                take(tuple(row))
