"""NSGA-II over the tilings of several designs at once, with Pareto local search, as an
ask/tell strategy.

Deb et al.'s NSGA-II (2002), with the operators of Odyssey's single-objective search, and
an elitist archive whose members' neighbourhoods are searched systematically:

* An individual is a design (an index into ``spaces``) and a legal genome of it.
* Ranking: feasible points by non-domination rank, ties by crowding distance (larger
  first); every point over the resource budget ranks below every feasible one, by its
  violation ``sum_r max(0, used_r / budget_r - 1)`` (Deb's constrained domination).
* Survival: the ``population_size`` best of the population and the children of a
  generation (``mu + lambda``), duplicates removed.
* Archive: every non-dominated feasible point told so far (the population keeps only
  ``population_size`` of them; the archive keeps the whole front found).
* A generation of ``offspring`` candidates: a share ``local_share`` goes to *Pareto
  local search*: the next archive member not yet explored proposes its neighbours
  (:func:`~odyssey.tune.pareto.enumeration.neighbours`: one factor moved to any other
  value that keeps the tiling legal; and the same factors in every other design with the
  same parameters), a random subset when they do not fit, the rest on a later generation.
  On MM 64^3 (18 designs) this share at 0.5 found the exact front in 200,000 evaluations
  for seeds 0-2, where the plain NSGA-II (share 0) still missed 2-6 of its 82 points at
  100,000 and the one-loop neighbourhood (any other legal pair ``(T_1, T_2)``) did worse.
  The other candidates are children: parent ``a`` by binary tournament on the ranking,
  or with probability ``archive_rate`` uniformly from the archive; with probability
  ``crossover_rate`` crossed with a second tournament parent of a design with the same
  parameters (:class:`PerLoopCrossover`); with probability ``mutation_rate`` mutated
  (:class:`HybridMutation`); with probability ``switch_rate`` moved to another design
  (keeping its factors when the parameters match); then repaired.
* No (design, genome) pair is proposed twice (while fewer than ``max_seen`` are
  remembered); a child already proposed is mutated again (up to 8 times) and otherwise
  replaced by a random legal point of a random design.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.tune.base import check_int, check_rng, check_unit
from odyssey.tune.pareto.dominance import crowding_distance, dominance_ranks, nondominated
from odyssey.tune.pareto.enumeration import TilingGrid, neighbours
from odyssey.tune.search.operators import (
    BaseCrossover,
    BaseMutation,
    HybridMutation,
    PerLoopCrossover,
)
from odyssey.tune.space import Genome, SearchSpace

Candidate = tuple[int, Genome]  # (design index, genome)
_Take = Callable[[Candidate], bool]  # adds a candidate to the batch unless already proposed
_IsNew = Callable[[Candidate], bool]  # neither proposed before nor in this batch

POPULATION_SIZE = 200
OFFSPRING = 1000
CROSSOVER_RATE = 0.9
MUTATION_RATE = 0.9
SWITCH_RATE = 0.05
ARCHIVE_RATE = 0.5
LOCAL_SHARE = 0.5
_RETRIES = 8
#: remembered candidates before the duplicate filter is reset (bounds memory on long runs)
MAX_SEEN = 2_000_000


class NSGA2:
    """Multi-objective evolutionary search; see the module docstring for the algorithm.

    Options (validated, messages name the argument and the value): ``population_size >=
    4`` (200), ``offspring >= 1`` candidates per generation (1000); ``crossover_rate``,
    ``mutation_rate``, ``switch_rate``, ``archive_rate``, ``local_share`` in ``[0, 1]``
    (0.9, 0.9, 0.05, 0.5, 0.5). ``rng`` is required: a run is reproducible from it when its
    budget is a number of evaluations.
    """

    def __init__(
        self, spaces: Sequence[SearchSpace], *, rng: np.random.Generator,
        population_size: int = POPULATION_SIZE, offspring: int = OFFSPRING,
        crossover_rate: float = CROSSOVER_RATE, mutation_rate: float = MUTATION_RATE,
        switch_rate: float = SWITCH_RATE, archive_rate: float = ARCHIVE_RATE,
        local_share: float = LOCAL_SHARE, mutation: BaseMutation | None = None,
        crossover: BaseCrossover | None = None, max_seen: int = MAX_SEEN,
    ) -> None:
        if not spaces:
            raise TunerError("NSGA2 needs at least one design's search space")
        self.spaces = tuple(spaces)
        self.rng = check_rng(rng)
        self.population_size = check_int("population_size", population_size, minimum=4)
        self.offspring = check_int("offspring", offspring, minimum=1)
        self.crossover_rate = check_unit("crossover_rate", crossover_rate)
        self.mutation_rate = check_unit("mutation_rate", mutation_rate)
        self.switch_rate = check_unit("switch_rate", switch_rate)
        self.archive_rate = check_unit("archive_rate", archive_rate)
        self.local_share = check_unit("local_share", local_share)
        self.max_seen = check_int("max_seen", max_seen, minimum=1)
        self.mutation = mutation or HybridMutation()
        self.crossover = crossover or PerLoopCrossover()
        self.generations = 0
        self._grids: dict[int, TilingGrid] = {}
        self._seen: set[int] = set()  # hashes of proposed candidates
        self._pop: list[Candidate] = []
        self._pop_f = np.zeros((0, 0))
        self._pop_v = np.zeros(0)
        self._archive: list[Candidate] = []
        self._archive_f = np.zeros((0, 0))
        self._unexplored: deque[Candidate] = deque()

    # ------------------------------------------------------------------ ask/tell

    def ask(self, n: int) -> list[Candidate]:
        """Up to ``n`` new candidates (fewer only when no new legal point turns up)."""
        n = check_int("n", n, minimum=0)
        batch: list[Candidate] = []
        taken: set[int] = set()

        def is_new(c: Candidate) -> bool:
            h = hash(c)
            return h not in self._seen and h not in taken

        def take(c: Candidate) -> bool:
            if not is_new(c):
                return False
            batch.append(c)
            taken.add(hash(c))
            return True

        self._local_search(int(self.local_share * n), take, is_new)
        if self._pop:
            for _ in range(4 * n):
                if len(batch) >= n:
                    break
                self._breed(take)
        for _ in range(16):
            if len(batch) >= n:
                break
            self._fill_random(n - len(batch), take)
        if len(self._seen) + len(batch) > self.max_seen:
            self._seen.clear()
        self._seen.update(taken)
        return batch

    def tell(self, candidates: Sequence[Candidate], objectives: np.ndarray,
             violation: np.ndarray) -> None:
        """Objective rows (minimised) and budget violations (0 when feasible) of ``candidates``."""
        f = np.asarray(objectives, dtype=np.float64)
        v = np.asarray(violation, dtype=np.float64)
        if f.ndim != 2 or len(f) != len(candidates) or v.shape != (len(candidates),):
            raise TunerError(f"tell: {len(candidates)} candidates but objectives of shape "
                             f"{f.shape} and violations of shape {v.shape}")
        if not candidates:
            return
        self._seen.update(hash(c) for c in candidates)
        self._update_archive(candidates, f, v)
        pool = list(self._pop) + list(candidates)
        pool_f = np.vstack([self._pop_f.reshape(-1, f.shape[1]), f])
        pool_v = np.concatenate([self._pop_v, v])
        unique: dict[Candidate, int] = {}
        for k, c in enumerate(pool):
            unique.setdefault(c, k)
        idx = np.fromiter(unique.values(), dtype=np.int64)
        keep = idx[_ranking(pool_f[idx], pool_v[idx], self.population_size)]
        self._pop = [pool[k] for k in keep.tolist()]  # best first
        self._pop_f, self._pop_v = pool_f[keep], pool_v[keep]
        self.generations += 1

    @property
    def archive(self) -> list[Candidate]:
        """Every non-dominated feasible candidate told so far (distinct objective vectors)."""
        return list(self._archive)

    @property
    def population(self) -> list[Candidate]:
        """The current population, best first."""
        return list(self._pop)

    # ------------------------------------------------------------------ internals

    def _update_archive(self, cands: Sequence[Candidate], f: np.ndarray, v: np.ndarray) -> None:
        ok = np.flatnonzero(v <= 0)
        if len(ok) == 0:
            return
        old = len(self._archive)
        merged = self._archive + [cands[k] for k in ok.tolist()]
        mf = np.vstack([self._archive_f.reshape(-1, f.shape[1]), f[ok]])
        keep = nondominated(mf)  # archive rows come first: an old vector keeps its point
        self._archive = [merged[k] for k in keep.tolist()]
        self._archive_f = mf[keep]
        self._unexplored.extend(merged[k] for k in keep.tolist() if k >= old)

    def _grid(self, d: int) -> TilingGrid:
        if d not in self._grids:
            self._grids[d] = TilingGrid(self.spaces[d])
        return self._grids[d]

    def _local_search(self, budget: int, take: _Take, is_new: _IsNew) -> None:
        """Propose up to ``budget`` neighbours of unexplored archive members."""
        members = set(self._archive)
        while budget > 0 and self._unexplored:
            d, g = c = self._unexplored.popleft()
            if c not in members:
                continue  # dominated since it was archived
            space = self.spaces[d]
            near = [(d, tuple(row)) for row in neighbours(self._grid(d), g).tolist()]
            near += [(e, s.repair_genome(g)) for e, s in enumerate(self.spaces)
                     if e != d and s.names == space.names]
            fresh = [x for x in near if is_new(x)]
            if len(fresh) > budget:
                pick = self.rng.choice(len(fresh), size=budget, replace=False)
                fresh = [fresh[k] for k in np.sort(pick).tolist()]
                self._unexplored.appendleft(c)  # the rest on a later generation
            for x in fresh:
                budget -= take(x)

    def _tournament(self) -> Candidate:
        n = len(self._pop)
        i, j = int(self.rng.integers(n)), int(self.rng.integers(n))
        return self._pop[min(i, j)]  # members are stored best first

    def _breed(self, take: _Take) -> None:
        rng = self.rng
        if self._archive and rng.random() < self.archive_rate:
            d, a = self._archive[int(rng.integers(len(self._archive)))]
        else:
            d, a = self._tournament()
        space = self.spaces[d]
        child = list(a)
        if rng.random() < self.crossover_rate:
            db, b = self._tournament()
            if self.spaces[db].names == space.names:
                child = self.crossover.crossover(a, b, space, rng)
        if rng.random() < self.mutation_rate:
            child = self.mutation.mutate(child, space, rng)
        if len(self.spaces) > 1 and rng.random() < self.switch_rate:
            d2 = int(rng.integers(len(self.spaces)))
            if self.spaces[d2].names != space.names:
                child = [int(x) for x in self.spaces[d2].sample(rng, 1)[0]]
            d, space = d2, self.spaces[d2]
        g = space.repair_genome(child)
        for _ in range(_RETRIES):
            if take((d, g)):
                return
            g = space.repair_genome(self.mutation.mutate(list(g), space, rng))

    def _fill_random(self, need: int, take: _Take) -> None:
        designs = self.rng.integers(len(self.spaces), size=need)
        for d in np.unique(designs).tolist():
            count = int((designs == d).sum())
            for row in self.spaces[d].sample(self.rng, count).tolist():
                take((d, tuple(row)))


def _ranking(f: np.ndarray, violation: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` best rows, best first: feasible rows by (rank, -crowding),
    then the infeasible ones by violation."""
    feasible = np.flatnonzero(violation <= 0)
    infeasible = np.flatnonzero(violation > 0)
    parts: list[np.ndarray] = []
    if len(feasible):
        ff = f[feasible]
        ranks = dominance_ranks(ff, enough=keep)
        crowd = np.zeros(len(feasible))
        for r in np.unique(ranks[ranks < np.iinfo(np.int64).max]).tolist():
            members = np.flatnonzero(ranks == r)
            crowd[members] = crowding_distance(ff[members])
        parts.append(feasible[np.lexsort((-crowd, ranks))])
    if len(infeasible):
        parts.append(infeasible[np.argsort(violation[infeasible], kind="stable")])
    return np.concatenate(parts)[:keep] if parts else np.zeros(0, dtype=np.int64)
