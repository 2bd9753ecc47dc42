"""Greedy best-first search over the tiling graph (G-BFS, seed 002), as an ask/tell tuner.

The paper's Algorithm 1: a priority queue of evaluated tilings ordered by cost; pop
the best, sample ``rho`` of its unvisited neighbours (one move away, see
:mod:`odyssey.tune.baselines.moves`), evaluate them and push every legal one. Here:

* the queue is ordered by :func:`odyssey.tune.base.fitness` (throughput when
  feasible; over-budget tilings after every feasible one), ties by age;
* a batch pops nodes best first until it holds ``batch_size`` new tilings (so a
  batch expands the few best nodes, not just one);
* the search starts from ``n_starts`` random legal tilings (the paper starts from one
  hand-picked or random state); when the queue runs dry it restarts from fresh
  random tilings instead of stopping, so it keeps using the budget;
* ``rho`` is 5, the paper's setting; ``rho=0`` evaluates every neighbour.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from odyssey.errors import TunerError
from odyssey.model.design_model import DesignModel, Evaluation
from odyssey.tune.base import Point, Tuner, check_int, check_rng, fitness
from odyssey.tune.baselines.moves import all_moves, neighbours
from odyssey.tune.space import Genome, SearchSpace

RHO = 5
N_STARTS = 8
BATCH_SIZE = 64
MAX_VISITED = 2_000_000


class GreedyBestFirst(Tuner):
    """G-BFS; see the module docstring.

    Options: ``rho >= 0`` neighbours sampled per expanded node (5; 0 for all of them),
    ``n_starts >= 1`` (8), ``batch_size >= 1`` (64).
    """

    name = "gbfs"

    def __init__(
        self,
        model: DesignModel,
        *,
        rng: np.random.Generator,
        rho: int = RHO,
        n_starts: int = N_STARTS,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.rng = check_rng(rng)
        self.rho = check_int("rho", rho, minimum=0)
        self.n_starts = check_int("n_starts", n_starts, minimum=1)
        self.batch_size = check_int("batch_size", batch_size, minimum=1)
        self.space = SearchSpace(model.params)
        self.budget = dict(model.budget)
        self.moves = all_moves(self.space)
        self._queue: list[tuple[float, int, Genome]] = []
        self._visited: set[Genome] = set()
        self._seeds: list[Genome] = []
        self._serial = 0
        self._started = False
        self.expanded = 0

    def seed_points(self, points: Sequence[Point]) -> None:
        self._seeds.extend(self.space.repair_genome(self.space.genome(p)) for p in points)

    def ask(self, n: int) -> list[Point]:
        n = check_int("n", n, minimum=0)
        batch: list[Genome] = []
        while self._seeds and len(batch) < n:
            self._take(self._seeds.pop(0), batch)
        if not self._started and n:
            self._started = True
            self._random(min(n - len(batch), self.n_starts), batch)
        while self._queue and len(batch) < n:
            node = heapq.heappop(self._queue)
            self.expanded += 1
            fresh = [h for h in neighbours(self.space, node[2], self.moves)
                     if h not in self._visited]
            if self.rho and len(fresh) > self.rho:
                pick = self.rng.choice(len(fresh), size=self.rho, replace=False)
                fresh = [fresh[int(k)] for k in sorted(pick)]
            room = n - len(batch)
            if len(fresh) > room:  # the batch is full: expand this node again next time
                heapq.heappush(self._queue, node)
            for h in fresh[:room]:
                self._take(h, batch)
        self._random(n - len(batch), batch)  # the queue ran dry: restart
        return self.space.to_points(batch)

    def tell(self, points: Sequence[Point], evaluation: Evaluation) -> None:
        if len(points) != len(evaluation):
            raise TunerError(f"tell: {len(points)} points but {len(evaluation)} evaluations")
        fit = fitness(evaluation, self.budget)
        for g, f in zip((tuple(r) for r in self.space.matrix(points).tolist()), fit.tolist(),
                        strict=True):
            self._visited.add(g)
            if np.isfinite(f):
                heapq.heappush(self._queue, (-f, self._serial, g))
                self._serial += 1

    def _take(self, g: Genome, batch: list[Genome]) -> None:
        if g not in self._visited:
            if len(self._visited) >= MAX_VISITED:
                self._visited.clear()
            self._visited.add(g)
            batch.append(g)

    def _random(self, count: int, batch: list[Genome]) -> None:
        for _ in range(8):
            if count <= 0:
                return
            before = len(batch)
            for row in self.space.sample(self.rng, count).tolist():
                self._take(tuple(row), batch)
            count -= len(batch) - before
